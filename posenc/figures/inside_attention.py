"""Figures for the chapter "Position inside attention": FoX, stick-breaking, PaTH and PoPE on one sentence.

Each pattern is computed by posenc from a small hand-made setting in which every token has the
same content, so that what the picture shows is the method's own position behaviour:

* FoX: a forget gate of 0.9 on a word and 0.1 on a full stop (a gate that "learned" to forget
  at sentence ends), every q . k equal;
* stick-breaking: every logit 0, so each key takes half of what the nearer keys left;
* PaTH: q = k = e1 for every token, H = I on a word and the reflection of e1 on a full stop
  (beta = 2, w = e1), so a logit is +1 or -1 by the parity of the full stops in between;
* PoPE: the same content vector at every position, so the pattern depends on the offset alone.
"""

from __future__ import annotations

import numpy as np
import torch
from matplotlib.figure import Figure

from posenc.figures import figure
from posenc.figures._style import new_figure, show_matrix
from posenc.forgetting import forgetting_bias
from posenc.path_attention import path_logits
from posenc.pope import PolarEmbedding
from posenc.stick_breaking import stick_breaking_weights

__all__ = ["SENTENCE", "example_patterns"]

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
         "offset alone."),
)
def inside_attention_patterns() -> Figure:
    patterns = example_patterns()
    fig, axes = new_figure(2, 2, height=7.6)
    n = len(SENTENCE)
    mask = np.triu(np.ones((n, n)), 1) > 0
    for ax, (name, weights) in zip(np.asarray(axes).ravel(), patterns.items()):
        show_matrix(ax, np.ma.masked_where(mask, weights.numpy()), title=name, xlabel="key", vmin=0.0, vmax=1.0)
        ax.set_xticks(range(n), SENTENCE, rotation=90, fontsize=9)
        ax.set_yticks(range(n), SENTENCE, fontsize=9)
    axes[0][0].set_ylabel("query")
    axes[1][0].set_ylabel("query")
    return fig
