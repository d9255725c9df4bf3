"""Figures for the chapter "Beyond ALiBi": xPos, KERPLE, FIRE, CoPE and randomized positions.

The first, the chapter's measured answer, is drawn from the committed results of the
extrapolation study (`posenc.experiments.length_extrapolation` and `posenc.experiments.retrieval`):
a marker is the mean over the seeds and its bar spans the lowest to the highest seed.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from matplotlib import patheffects
from matplotlib.figure import Figure

from posenc.alibi import alibi_slopes
from posenc.cope import contextual_positions
from posenc.experiments import length_extrapolation, retrieval
from posenc.figures import figure
from posenc.figures._style import method_colour, method_style, new_figure, palette
from posenc.figures.experiments import StudyPanel, study_line, text_and_retrieval
from posenc.fire import FireBias
from posenc.kerple import KerpleBias
from posenc.randomized import randomized_positions
from posenc.xpos import XPos, xpos_zeta

#: The sentence of the CoPE example: tokens, and 1 on the last token of each word.
COPE_TOKENS = ["The", " ele", "phant", " ran", " a", "way", " from", " the", " mouse", "."]
COPE_WORD_END = [1, 0, 1, 1, 0, 1, 1, 1, 1, 1]


#: The chapter's five methods as the study names them, and the two they are set beside (dashed).
MEASURED = ("xpos", "kerple", "fire", "cope", "rope-randomized")
REFERENCES = ("rope", "alibi")


@figure(
    "beyond-alibi-measured",
    alt=("Two panels for models trained at 64 and tested at 64 to 512: left, perplexity on text (log "
         "scale); right, MQAR accuracy. One line each for xPos, KERPLE, FIRE, CoPE and RoPE trained on "
         "randomized positions, and dashed for RoPE and ALiBi. KERPLE's perplexity stays level and its "
         "accuracy stays near 1; FIRE rises a little, CoPE and randomized positions more, xPos most of "
         "the five, RoPE far more. Means over three seeds with bars from the lowest to the highest seed."),
)
def beyond_alibi_measured() -> Figure:
    return text_and_retrieval(_measured_panel(length_extrapolation.load_results()),
                              _measured_panel(retrieval.load_results()), height=4.6)


def _measured_panel(results: dict[str, Any]) -> StudyPanel:
    """The references, then the chapter's five methods, from one task's results of the study."""
    rows = [(results["methods"][m], study_line(method_style(m), reference=m in REFERENCES))
            for m in (*REFERENCES, *MEASURED)]
    return rows, results["eval_lengths"], results["config"]["train_length"]


def same_vector_scores(dim: int, distances: torch.Tensor, *, scale_base: float) -> torch.Tensor:
    """q . k for q = k = the all-ones vector, q at position d and k at position 0 (centre 0)."""
    xpos = XPos(dim, scale_base=scale_base)
    ones = torch.ones(len(distances), dim, dtype=torch.float64)
    q = xpos.queries(ones, distances, centre=0.0)
    k = xpos.keys(ones, torch.zeros_like(distances), centre=0.0)
    return (q * k).sum(-1)


@figure(
    "xpos-decay",
    alt=("Two line plots for a head of width 64, distance 0 to 3000 tokens. Left: the score of a query "
         "and a key holding the same all-ones vector. RoPE's score falls from 64 and then keeps "
         "oscillating widely, thin and pale; xPos's score, bold, decays with ripples that fade over the "
         "first thousand tokens and levels off above zero. "
         "Right: xPos's scale factor zeta_i to the power distance/512 for pairs 0, 8, 16 "
         "and 31: the fast pair 0 decays to almost nothing within 1000 tokens, the slow pair 31 barely."),
)
def xpos_decay(dim: int = 64, scale_base: float = 512.0) -> Figure:
    colours = palette()
    distances = torch.arange(0, 3001)
    rope = same_vector_scores(dim, distances, scale_base=math.inf)
    xpos = same_vector_scores(dim, distances, scale_base=scale_base)
    fig, (left, right) = new_figure(1, 2, height=3.5)
    # RoPE's green and xPos's teal are near in hue (each keeps its colour of every figure), so
    # they differ in weight too: RoPE thin and pale, xPos bold with a rim of the background
    left.plot(distances.numpy(), rope.numpy(), lw=0.6, alpha=0.45 if colours.name == "light" else 0.6, color=method_colour("rope"), label="RoPE (thin)")
    halo = [patheffects.withStroke(linewidth=5.0, foreground=colours.background)]
    left.plot(distances.numpy(), xpos.numpy(), lw=2.4, color=method_colour("xpos"), label="xPos (bold)",
              path_effects=halo)
    left.axhline(0, color=colours.muted, lw=0.8)
    left.set_xlabel("distance m − n (tokens)")
    left.set_ylabel("q · k, same vector")
    left.set_title("score")
    left.legend(loc="upper right")
    zeta = xpos_zeta(dim)
    for n, pair in enumerate((0, 8, 16, dim // 2 - 1)):
        factor = zeta[pair] ** (distances.to(torch.float64) / scale_base)
        right.plot(distances.numpy(), factor.numpy(), color=colours.cycle[n],
                   label=f"pair {pair}, ζ = {zeta[pair].item():.3f}")
    right.set_xlabel("distance m − n (tokens)")
    # mathtext draws the exponent at 70 %: 12.5 pt keeps it above the 8.5 pt floor
    right.set_ylabel(rf"$\zeta_i^{{(m - n) / {scale_base:g}}}$", fontsize=12.5)
    right.set_title("xPos factor per pair")
    right.legend(loc="center right", fontsize=9.5)  # pair 31 runs along the top
    return fig


@figure(
    "kerple-shapes",
    alt=("Two line plots of the KERPLE bias against the distance from 0 to 100 tokens. Left, the "
         "logarithmic kernel for three parameter pairs: curves that fall fast at first and then flatten. "
         "Right, the power kernel with exponents 0.5, 1 and 1.5: concave, straight and convex curves; the "
         "straight one, with exponent 1 and slope 1/16, is ALiBi's bias for head 4 of 8."),
)
def kerple_shapes() -> Figure:
    colours = palette()
    distance = torch.arange(0, 101)
    fig, (left, right) = new_figure(1, 2, height=3.5)
    log = KerpleBias(3, kind="log").double()
    power = KerpleBias(3, kind="power", eps=2.0**-8).double()
    slope = float(alibi_slopes(8, dtype=torch.float64)[3])
    with torch.no_grad():
        log.r1.copy_(torch.tensor([1.0, 2.0, 4.0]))
        log.r2.copy_(torch.tensor([1.0, 0.1, 0.01]))
        power.r1.copy_(torch.tensor([0.5, slope, 0.01]))
        power.r2.copy_(torch.tensor([0.5, 1.0, 1.5]))
    log_bias = log.bias(torch.tensor([0]), distance).detach()[:, 0]
    power_bias = power.bias(torch.tensor([0]), distance).detach()[:, 0]
    for h in range(3):
        r1, r2 = log.r1[h].item(), log.r2[h].item()
        left.plot(distance.numpy(), log_bias[h].numpy(), color=colours.cycle[h], label=f"r1={r1:g}, r2={r2:g}")
        r1, r2 = power.r1[h].item(), power.r2[h].item()
        label = f"r1={r1:.4g}, r2={r2:g}" + ("  (ALiBi)" if h == 1 else "")
        right.plot(distance.numpy(), power_bias[h].numpy(), color=colours.cycle[h], label=label)
    left.set_title("log: −r1 · log(1 + r2 · d)")
    right.set_title("power: −r1 · d^r2")
    for ax, corner in ((left, "upper right"), (right, "lower left")):  # the corners the curves leave free
        ax.set_xlabel("distance d = |i − j|")
        ax.legend(loc=corner, fontsize=9.5)
    left.set_ylabel("bias added to the logit")
    return fig


@figure(
    "fire-normalisation",
    alt=("Two line plots. Left: the log-transformed distance log(1 + c·d) against the distance up to "
         "4096 tokens; past the 512 tokens seen in training it keeps growing, into values never seen. "
         "Right: FIRE's normalised input against the key's relative place j / i, for queries at "
         "positions 128, 512 and 4096: every curve runs from 1 down to 0, inside the same interval."),
)
def fire_normalisation(trained: int = 512) -> Figure:
    colours = palette()
    fire = FireBias(1, max_len=64).double()
    c = abs(fire.c.item())
    fig, (left, right) = new_figure(1, 2, height=3.5)
    d = np.arange(0, 4097)
    raw = np.log1p(c * d)
    seen = d < trained
    left.plot(d[seen], raw[seen], color=colours.cycle[0], label="seen in training (< 512)")
    left.plot(d[~seen], raw[~seen], color=colours.cycle[1], label="beyond training")
    left.set_xlabel("distance i − j (tokens)")
    left.set_ylabel(f"log(1 + c · (i − j)), c = {c:g}")
    left.set_title("without normalisation")
    left.legend(loc="lower right", fontsize=9.5)
    for n, query in enumerate((128, 512, 4096)):
        keys = torch.arange(0, query + 1, dtype=torch.float64)
        x = fire.normalised_distance(torch.tensor([float(query)]), keys).detach()[0]
        right.plot((keys / query).numpy(), x.numpy(), color=colours.cycle[n], label=f"query at {query}")
    right.set_xlabel("key position / query position, j / i")
    right.set_ylabel("FIRE input to the MLP")
    right.set_title("normalised by log(1 + c · max(L, i))")
    right.legend(loc="lower left", fontsize=9.5)  # the curves fall from top left to bottom right
    return fig


@figure(
    "cope-positions",
    alt=("Two heatmaps over a ten-token sentence, 'The elephant ran away from the mouse.', split into "
         "tokens such as 'ele' and 'phant'. Left: token positions of each key relative to each query, "
         "i − j + 1, from 1 to 10. Right: CoPE positions with gates set to 1 on the last token of each "
         "word: they count words and the full stop, from 0 to 8, and the two halves of a word share one "
         "position."),
)
def cope_positions() -> Figure:
    colours = palette()
    n = len(COPE_TOKENS)
    gates = torch.tensor(COPE_WORD_END, dtype=torch.float64).expand(n, n)
    counted = contextual_positions(gates).numpy()
    tokens = contextual_positions(torch.ones(n, n, dtype=torch.float64)).numpy()
    fig, axes = new_figure(1, 2, height=4.2, wspace=0.08)
    labels = [t.strip() or "·" for t in COPE_TOKENS]
    vmax = float(tokens.max())
    for ax, values, title in ((axes[0], tokens, "token positions (every gate 1)"),
                              (axes[1], counted, "CoPE, gates at word ends")):
        masked = np.ma.masked_where(np.triu(np.ones((n, n)), 1) > 0, values)
        ax.imshow(masked, cmap=colours.sequential, vmin=0, vmax=vmax, interpolation="nearest")
        for i in range(n):
            for j in range(i + 1):
                ax.text(j, i, f"{values[i, j]:g}", ha="center", va="center", fontsize=9,
                        color="white" if values[i, j] < 0.55 * vmax else "black")
        ax.set_xticks(range(n), labels, rotation=90)
        ax.set_yticks(range(n), labels)
        ax.set_xlabel("key j")
        ax.set_title(title)
        ax.grid(False)
    axes[0].set_ylabel("query i")
    return fig


@figure(
    "randomized-positions",
    alt=("Dot plot of positions on a line from 0 to 255. The top rows show the positions 0 to 15 of "
         "ordinary training and 0 to 63 of a longer test sequence. Below, eight training sequences of 16 "
         "tokens each get a sorted random subset of 0 to 255: their dots spread over the whole range, "
         "covering every test position over the course of training."),
)
def randomized_positions_figure(seq_len: int = 16, max_len: int = 256, test_len: int = 64) -> Figure:
    colours = palette()
    generator = torch.Generator().manual_seed(0)
    fig, ax = new_figure(height=3.6)
    # short labels: on a phone the plot keeps most of its 360 px (the caption says what each row is)
    rows = [("train", torch.arange(seq_len), colours.cycle[0]),
            ("test", torch.arange(test_len), colours.cycle[1])]
    for n in range(8):
        rows.append((f"random {n + 1}", randomized_positions(seq_len, max_len, generator=generator),
                     colours.cycle[2]))
    for y, (_, positions, colour) in enumerate(rows):
        ax.scatter(positions.numpy(), np.full(len(positions), -y), s=10, color=colour)
    ax.set_yticks([-y for y in range(len(rows))], [label for label, _, _ in rows])
    ax.axvline(seq_len - 0.5, color=colours.muted, lw=0.8, ls=":")
    ax.axvline(test_len - 0.5, color=colours.muted, lw=0.8, ls=":")
    ax.set_xlim(-4, max_len + 3)
    ax.set_xlabel(f"position (max_len = {max_len})")
    ax.grid(axis="y", visible=False)
    return fig
