"""Figure for the tiny-transformer chapter: where each position method acts, and what it adds."""

from __future__ import annotations

import torch
from matplotlib.figure import Figure

from posenc.experiments.config import FULL
from posenc.figures import figure
from posenc.figures._style import FONT, new_figure, palette
from posenc.methods import METHODS
from posenc.model import POSITION_METHODS, TinyTransformer

#: The places of `posenc.methods.PLACES` a reader can see in the model, in the order a token
#: meets them, and how the figure names each. "rotation" is also where FoX with RoPE turns q and k.
PLACES = (("embedding", "embeddings"), ("bias", "logit bias"), ("rotation", "turns q and k"),
          ("logits", "term from logits"), ("content", "tokens between"), ("weights", "replaces softmax"))


def _places(method: str) -> set[str]:
    spec = METHODS[method]
    return {spec.place} | ({"rotation"} if spec.rope else set())


def _added_parameters() -> dict[str, int]:
    """What each method adds to the model without positions, at the sizes of the study."""
    def size(method: str) -> int:
        torch.manual_seed(0)
        model = TinyTransformer(16, FULL.dim, FULL.num_heads, FULL.num_layers, position=method,
                                max_len=FULL.train_length)
        return sum(p.numel() for p in model.parameters())

    baseline = size("none")
    return {method: size(method) - baseline for method in POSITION_METHODS}


@figure(
    "tiny-transformer-places",
    alt=(
        "A grid with one row per position method of TinyTransformer and one column per place in "
        "the model: the embeddings, a bias on the attention logits, the rotation of queries and "
        "keys, a term computed from the logits, the tokens between key and query, and a "
        "replacement of the softmax. A dot marks where each method acts; the right-hand column "
        "gives the parameters it adds to the study's model."
    ),
)
def tiny_transformer_places() -> Figure:
    colours = palette()
    added = _added_parameters()
    methods = [m for m in POSITION_METHODS if m != "none"]
    fig, ax = new_figure(height=4.4, narrow_height=5.8)
    for row, method in enumerate(methods):
        for column, (place, _) in enumerate(PLACES):
            acts = place in _places(method)
            ax.plot(column, row, "o", markersize=9 if acts else 3,
                    color=colours.foreground if acts else colours.grid)
        ax.text(len(PLACES) + 0.6, row, f"{added[method]:,}", va="center", ha="center",
                fontsize=FONT["small"], color=colours.foreground)
    ax.set_xticks([*range(len(PLACES)), len(PLACES) + 0.6],
                  [label for _, label in PLACES] + ["parameters added"], rotation=90,
                  fontsize=FONT["small"])
    ax.xaxis.tick_top()
    ax.set_yticks(range(len(methods)), methods)
    ax.set_xlim(-0.6, len(PLACES) + 1.6)
    ax.set_ylim(len(methods) - 0.5, -0.6)
    for side in ("top", "right", "bottom", "left"):
        ax.spines[side].set_visible(False)
    ax.tick_params(length=0)
    ax.grid(False)
    return fig
