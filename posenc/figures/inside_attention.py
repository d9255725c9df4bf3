"""Figures for the chapter "Position inside attention": FoX, stick-breaking, PaTH and PoPE on one sentence.

Each pattern is computed by posenc from a small hand-made setting in which every token has the
same content, so that what the picture shows is the method's own position behaviour:

* FoX: a forget gate of 0.9 on a word and 0.1 on a full stop (a gate that "learned" to forget
  at sentence ends), every q . k equal;
* stick-breaking: every logit 0, so each key takes half of what the nearer keys left;
* PaTH: q = k = e1 for every token, H = I on a word and the reflection of e1 on a full stop
  (beta = 2, w = e1), so a logit is +1 or -1 by the parity of the full stops in between;
* PoPE: the same content vector at every position, so the pattern depends on the offset alone.

The study figure is drawn from the committed results of `posenc.experiments.inside`, beside the
rows of RoPE, NoPE, ALiBi and RNoPE-SWA of `posenc.experiments.hybrid` (the same protocol, the
rows of the chapter's table): a marker is the mean over the seeds and its bar spans the lowest to
the highest seed.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from matplotlib.figure import Figure
from matplotlib.layout_engine import ConstrainedLayoutEngine

from posenc.experiments import hybrid, inside
from posenc.figures import figure
from posenc.figures._layout import narrow
from posenc.figures._style import method_colour, method_style, new_figure, palette, show_matrix
from posenc.figures.experiments import StudyPanel, study_line, text_and_retrieval
from posenc.forgetting import forgetting_bias
from posenc.path_attention import path_logits
from posenc.pope import PolarEmbedding
from posenc.stick_breaking import stick_breaking_weights

__all__ = ["SENTENCE", "STUDY_STYLES", "example_patterns"]

#: Twelve tokens, three sentences.
SENTENCE = ["the", "cat", "sat", ".", "a", "dog", "ran", ".", "it", "was", "fast", "."]


def _causal_softmax(logits: torch.Tensor) -> torch.Tensor:
    n = logits.shape[-1]
    future = torch.ones(n, n, dtype=torch.bool).triu(1)
    return torch.softmax(logits.masked_fill(future, float("-inf")), dim=-1)


def example_patterns() -> dict[str, torch.Tensor]:
    """The attention weights ``[12, 12]`` (float64) of each method on `SENTENCE`, as the module docstring sets them."""
    n = len(SENTENCE)
    stops = torch.tensor([token == "." for token in SENTENCE])
    gates = torch.where(stops, 0.1, 0.9).to(torch.float64)
    fox = _causal_softmax(forgetting_bias(gates))
    future = torch.ones(n, n, dtype=torch.bool).triu(1)
    stick = stick_breaking_weights(torch.zeros(n, n, dtype=torch.float64).masked_fill(future, float("-inf")))
    e1 = torch.tensor([1.0, 0.0], dtype=torch.float64)
    q = k = e1.expand(n, 2)
    path = _causal_softmax(2.0 * path_logits(q, k, e1.expand(n, 2), 2.0 * stops.to(torch.float64)))
    torch.manual_seed(0)
    pope = PolarEmbedding(8).double()
    content = torch.randn(1, 8, dtype=torch.float64).expand(n, 8)
    positions = torch.arange(n)
    with torch.no_grad():  # width 2d = 16: the model divides by sqrt(16)
        pope_logits = pope.rotate_queries(content, positions) @ pope.rotate_keys(content, positions).mT / 4.0
    return {"FoX": fox, "stick-breaking": stick, "PaTH": path, "PoPE": _causal_softmax(pope_logits)}


@figure(
    "inside-attention-patterns",
    alt=("Four heatmaps of attention weights, query down and key across, over the twelve tokens "
         "'the cat sat . a dog ran . it was fast .'. FoX with a gate of 0.1 on full stops: each query "
         "attends within its own sentence, the weight dropping sharply across a full stop. "
         "Stick-breaking with equal logits: half of the weight on the query's own token, a quarter on "
         "the one before, and so on. PaTH with a reflection at each full stop: keys an even number of "
         "full stops back get high weight, an odd number low, a checkerboard of sentences. PoPE with "
         "the same content everywhere: stripes parallel to the diagonal, the weight a function of the "
         "offset alone. A colour bar below the panels: weight from 0 to 1, the same scale in every panel."),
)
def inside_attention_patterns() -> Figure:
    patterns = example_patterns()
    fig, axes = new_figure(2, 2, height=8.2, narrow_height=12.3)
    engine = fig.get_layout_engine()
    if narrow() and isinstance(engine, ConstrainedLayoutEngine):  # new_figure's: constrained layout
        engine.set(h_pad=0.12)  # stacked: room between a panel's "key" label and the next panel's title
    n = len(SENTENCE)
    mask = np.triu(np.ones((n, n)), 1) > 0
    for ax, (name, weights) in zip(np.asarray(axes).ravel(), patterns.items()):
        image = show_matrix(ax, np.ma.masked_where(mask, weights.numpy()), title=name, xlabel="key",
                            vmin=0.0, vmax=1.0)
        ax.set_xticks(range(n), SENTENCE, rotation=90, fontsize=9)
        ax.set_yticks(range(n), SENTENCE, fontsize=9)
    axes[0][0].set_ylabel("query")
    axes[1][0].set_ylabel("query")
    # one scale for all four panels: a row's weights, from 0 to 1
    fig.colorbar(image, ax=np.asarray(axes).ravel().tolist(), location="bottom", shrink=0.6 if not narrow() else 0.9,
                 aspect=30, label="attention weight (same scale in every panel)")
    return fig


#: The five methods of the study, each with a label, a colour of the palette's cycle (by index,
#: skipping the green of RoPE and the ochre of ALiBi beside them) and a marker of its own.
STUDY_STYLES = {"fox": ("FoX", 0, "s"), "fox_rope": ("FoX + RoPE", 1, "D"), "stick_breaking": ("stick-breaking", 3, "P"),
                "path": ("PaTH", 5, "X"), "pope": ("PoPE", 6, "h")}
#: RNoPE-SWA, the one hybrid design among the references: crimson (FIRE's colour; FIRE is not in
#: this figure, and the palette's cycle is taken by the five methods, RoPE and ALiBi) and a marker
#: no other line here has.
RNOPE_SWA_COLOUR, RNOPE_SWA_MARKER = "fire", "p"


def _reference_style(method: str) -> dict[str, Any]:
    """A reference row of the hybrid study: its method's style (RNoPE-SWA's own), thinner and dashed."""
    if method == "rnope-swa":
        style = {"color": method_colour(RNOPE_SWA_COLOUR), "marker": RNOPE_SWA_MARKER, "label": "RNoPE-SWA"}
    else:
        style = method_style(method)
    return study_line(style, reference=True)


def _study_panel(task: str) -> StudyPanel:
    """The references of the hybrid study (the table's first rows,
    `posenc.experiments.inside.REFERENCE_ROWS`), then the rows of the inside study, for ``task``."""
    rows = []
    for method in inside.REFERENCE_ROWS:
        rows.append((hybrid.load_results(task)["methods"][method], _reference_style(method)))
    for method, entry in inside.load_results(task)["methods"].items():
        label, colour, marker = STUDY_STYLES[method]
        rows.append((entry, study_line({"color": palette().cycle[colour], "marker": marker, "label": label})))
    lengths = inside.load_results(task)["eval_lengths"]
    return rows, lengths, lengths[0]


@figure(
    "inside-attention-study",
    alt=("Two panels for four-layer models trained at 64 tokens and tested at 64 to 512: left, perplexity "
         "on text (log scale); right, MQAR accuracy. One line each for FoX, FoX with RoPE, stick-breaking, "
         "PaTH and PoPE, and dashed for RoPE, NoPE, ALiBi and RNoPE-SWA from the hybrid study (the same "
         "protocol); "
         "means over three seeds with bars from the lowest to the highest seed."),
)
def inside_attention_study() -> Figure:
    return text_and_retrieval(_study_panel("lm"), _study_panel("retrieval"), height=4.8,
                              title_suffix=", 4 layers", chance=inside.load_results("retrieval")["chance"])
