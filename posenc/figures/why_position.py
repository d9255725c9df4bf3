"""Figures for chapter 1, "Why position matters"."""

from __future__ import annotations

import numpy as np
import torch
from matplotlib.figure import Figure

from posenc.attention import SelfAttention
from posenc.figures import figure
from posenc.figures._layout import narrow
from posenc.figures._style import FONT, cell_text_colour, new_figure, show_matrix
from posenc.sinusoidal import sinusoidal_encoding
from posenc.toy import sentence_embeddings

SENTENCES = ("dog bites man", "man bites dog")
DIM = 16


def attention_maps(sentence: str, *, with_positions: bool, seed: int = 0) -> torch.Tensor:
    """Attention weights ``[seq, seq]`` of one freshly seeded single-head layer on ``sentence``."""
    torch.manual_seed(seed)
    layer = SelfAttention(DIM, num_heads=1)
    x = sentence_embeddings(sentence, DIM)
    if with_positions:
        x = x + sinusoidal_encoding(x.shape[1], DIM)
    with torch.no_grad():
        _, weights = layer(x)
    return weights[0, 0]


@figure(
    "attention-word-order",
    alt=(
        "Four 3-by-3 attention-weight heatmaps. Top row, no positional encoding: the maps for "
        "'dog bites man' and 'man bites dog' hold the same numbers with rows and columns swapped. "
        "Bottom row, with sinusoidal encoding added: the numbers themselves differ."
    ),
)
def attention_word_order() -> Figure:
    fig, axes = new_figure(2, 2, height=6.8, narrow_grid=(2, 2), narrow_height=6.4)
    for row, with_positions in enumerate((False, True)):
        for col, sentence in enumerate(SENTENCES):
            ax = axes[row, col]
            weights = attention_maps(sentence, with_positions=with_positions).numpy()
            where = "+ sinusoidal positions" if with_positions else "no positions"
            image = show_matrix(ax, weights, vmin=0.0, vmax=1.0, title=f"“{sentence}”\n{where}",
                                xlabel="key (attended to)", ylabel="query")
            words = sentence.split()
            ax.set_xticks(range(3), words)
            ax.set_yticks(range(3), words)
            for (i, j), value in np.ndenumerate(weights):
                ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=FONT["small"] + 0.5,
                        color=cell_text_colour(image.to_rgba(value)))
    fig.colorbar(image, ax=axes, shrink=0.7, label="attention weight", location="bottom" if narrow() else "right")
    return fig
