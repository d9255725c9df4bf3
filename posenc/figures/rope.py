"""Figures for the RoPE chapters: RoPE, the RoPE animator and RoPE today (context extension's are
in `posenc.figures.context_extension`)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from matplotlib.animation import FuncAnimation
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from posenc.figures import figure
from posenc.figures._layout import narrow
from posenc.figures._style import new_figure, palette
from posenc.rope import (
    apply_rope,
    layout_permutation,
    rope_inverse_frequencies,
    rope_long_term_decay,
)
from posenc.toy import sentence_embeddings

_SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def _unit_circle(ax: Any, colour: str) -> None:
    t = np.linspace(0, 2 * np.pi, 200)
    ax.plot(np.cos(t), np.sin(t), color=colour, lw=0.8)
    ax.set_aspect("equal")
    ax.set_xlim(-1.3, 1.3)
    ax.set_ylim(-1.3, 1.3)


def _arrow(ax: Any, xy: np.ndarray, colour: str, alpha: float = 1.0, width: float = 0.025) -> None:
    ax.arrow(0, 0, float(xy[0]), float(xy[1]), color=colour, alpha=alpha,
             width=width, head_width=4 * width, head_length=4 * width, length_includes_head=True)


# ------------------------------------------------------------------------------------------ RoPE
@figure(
    "rope-rotation-2d",
    alt=("Left: one two-dimensional query vector drawn at positions 0 to 5, turned by one more "
         "step of 0.6 radians at each position. Right: a query at position 5 and a key at position 2, "
         "and the same query and key at positions 9 and 6; the angle between them is the same."),
)
def rotation_2d() -> Figure:
    colours = palette()
    theta = 0.6  # a 2-dimensional head has one pair with theta_0 = 1, so position m is given as m * 0.6
    fig, (left, right) = new_figure(1, 2, height=3.6)
    q = torch.tensor([[0.9, 0.25]], dtype=torch.float64)
    for m in range(6):
        rotated = apply_rope(q, torch.tensor([m * theta], dtype=torch.float64))[0].numpy()
        _arrow(left, rotated, colours.cycle[0], alpha=0.35 + 0.13 * m)
        left.annotate(f"m={m}", rotated * 1.3, ha="center", va="center", fontsize=9.5, color=colours.foreground)
    _unit_circle(left, colours.grid)
    left.set_xlim(-1.45, 1.45)
    left.set_ylim(-1.45, 1.45)
    left.set_title("one pair, turned by m·θ\n(θ = 0.6 rad per position)")
    left.set_xlabel("dimension 2i")
    left.set_ylabel("dimension 2i + 1")
    k = torch.tensor([[0.3, 0.85]], dtype=torch.float64)
    scores: list[float] = []
    for (m, n), style in (((5, 2), 1.0), ((9, 6), 0.55)):
        qm = apply_rope(q, torch.tensor([m * theta], dtype=torch.float64))[0].numpy()
        kn = apply_rope(k, torch.tensor([n * theta], dtype=torch.float64))[0].numpy()
        _arrow(right, qm, colours.cycle[0], alpha=style)
        _arrow(right, kn, colours.cycle[1], alpha=style)
        right.annotate(f"q@{m}", qm * 1.3, ha="center", va="center", fontsize=9.5, color=colours.cycle[0])
        right.annotate(f"k@{n}", kn * 1.3, ha="center", va="center", fontsize=9.5, color=colours.cycle[1])
        scores.append(float(qm @ kn))
    _unit_circle(right, colours.grid)
    right.set_xlim(-1.45, 1.45)
    right.set_ylim(-1.45, 1.45)
    score = scores[0] if math.isclose(scores[0], scores[1], abs_tol=1e-9) else float("nan")
    right.set_title(f"same offset m − n = 3\nq·k = {score:.3f} both times")
    right.set_xlabel("dimension 2i")
    right.set_ylabel("dimension 2i + 1")
    return fig


@figure(
    "rope-layouts",
    alt=("Two rows of eight numbered boxes, one per dimension of a head of width 8, coloured by the "
         "rotation pair they belong to. Half layout: pairs (0,4), (1,5), (2,6), (3,7). Interleaved "
         "layout: pairs (0,1), (2,3), (4,5), (6,7)."),
)
def layouts() -> Figure:
    colours = palette()
    dim = 8
    fig, ax = new_figure(1, 1, height=2.6)
    perm = layout_permutation(dim).tolist()  # interleaved slot j holds half-layout dimension perm[j]
    half_pair = [d % (dim // 2) for d in range(dim)]
    rows = {"half\n(GPT-NeoX, HF)": half_pair,
            "interleaved\n(RoFormer, Meta)": [half_pair[perm[j]] for j in range(dim)]}
    for r, (label, pairs) in enumerate(rows.items()):
        y = 1 - r
        for d, pair in enumerate(pairs):
            ax.add_patch(Rectangle((d - 0.45, y - 0.3), 0.9, 0.6, color=colours.cycle[pair], alpha=0.85))
            ax.text(d, y, str(d), ha="center", va="center", fontsize=11, color="#000000")
        ax.text(-0.7, y, label, ha="right", va="center", fontsize=10, color=colours.foreground)
    for pair in range(dim // 2):
        ax.plot([], [], "s", color=colours.cycle[pair], label=f"pair {pair}: θ{str(pair).translate(_SUBSCRIPTS)}")
    ax.set_xlim(-3.2, dim)
    ax.set_ylim(-0.55, 1.55)
    ax.axis("off")
    fig.suptitle("Which dimensions rotate together (box = dimension index, colour = pair)")
    ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False)
    return fig


@figure(
    "rope-long-term-decay",
    alt=("Line plot of RoFormer's relative upper bound on the query-key score against the relative "
         "distance from 0 to 1000 tokens, for head widths 64 and 128: it falls quickly from its value at "
         "distance 0 and then oscillates at a lower level."),
)
def long_term_decay() -> Figure:
    fig, ax = new_figure(1, 1, height=3.4)
    distances = torch.arange(0, 1001)
    for dim in (64, 128):
        ax.plot(distances.numpy(), rope_long_term_decay(distances, dim).numpy(), label=f"head dim {dim}", lw=1.2)
    ax.set_xlabel("relative distance m − n (tokens)")
    ax.set_ylabel("relative upper bound, mean |S_j|")
    ax.set_title("RoFormer §3.4.3: the bound on |q·k| shrinks with distance (base 10000)")
    ax.legend()
    return fig


@figure(
    "rope-attention-map",
    alt=("Two 12-by-12 heatmaps of query-key scores for a sequence of twelve copies of the same token. "
         "Without RoPE every score is the same. With RoPE the scores are constant along each diagonal, "
         "so they depend only on the distance between query and key."),
)
def attention_map() -> Figure:
    colours = palette()
    torch.manual_seed(0)
    seq, dim = 12, 16
    token = sentence_embeddings("dog", dim)[0, 0]
    w_q, w_k = torch.randn(2, dim, dim) / math.sqrt(dim)
    x = token.expand(seq, dim)  # the same word at every position
    q, k = x @ w_q.T, x @ w_k.T
    plain = q @ k.T
    rotated = apply_rope(q[None], base=100.0)[0] @ apply_rope(k[None], base=100.0)[0].T
    limit = float(max(plain.abs().max(), rotated.abs().max()))
    fig, axes = new_figure(1, 2, height=3.6)
    for ax, scores, title in ((axes[0], plain, "no position: all scores equal"),
                              (axes[1], rotated, "RoPE: constant along diagonals")):
        image = ax.imshow(scores.numpy(), cmap=colours.diverging, vmin=-limit, vmax=limit)
        ax.set_title(title)
        ax.set_xlabel("key position n")
        ax.set_ylabel("query position m")
        ax.set_xticks(range(0, seq, 2))
        ax.set_yticks(range(0, seq, 2))
        ax.grid(False)
    # on a phone the panels stack, and a bar at the side would meet the lower panel's title
    fig.colorbar(image, ax=axes, shrink=0.8, label="q·k (same token everywhere)",
                 location="bottom" if narrow() else "right")
    return fig


# ------------------------------------------------------------------------------------ animation
ANIMATION_DIM, ANIMATION_BASE, ANIMATION_FRAMES, ANIMATION_OFFSET = 8, 10000.0, 48, 3


@figure(
    "rope-animator",
    alt=("Animation of four circles, one per rotation pair of an 8-dimensional head. In each, a query "
         "at position m and a key at position m − 3 turn together as m runs from 3 to 50: pair 0 turns "
         "one radian per position, pair 3 barely moves, and each pair's q·k stays the same."),
    animated=True,
)
def animator() -> FuncAnimation:
    colours = palette()
    fig, axes = new_figure(1, 4, height=2.4)
    fig.set_layout_engine("none")  # fixed boxes: every circle the same size in every frame
    for i, ax in enumerate(axes):
        ax.set_position((0.01 + 0.25 * i, 0.02, 0.23, 0.72))
    theta = rope_inverse_frequencies(ANIMATION_DIM, base=ANIMATION_BASE)
    q = torch.tensor([[0.95, 0.1, 0.95, 0.1, 0.95, 0.1, 0.95, 0.1]], dtype=torch.float64)
    k = torch.tensor([[0.2, 0.9, 0.2, 0.9, 0.2, 0.9, 0.2, 0.9]], dtype=torch.float64)

    def pairs_at(x: torch.Tensor, position: int) -> np.ndarray:
        rotated = apply_rope(x, torch.tensor([float(position)]), base=ANIMATION_BASE, layout="interleaved")
        return rotated[0].reshape(-1, 2).numpy()

    artists: list[Any] = []

    def draw(frame: int) -> list[Any]:
        for artist in artists:
            artist.remove()
        artists.clear()
        m, n = frame + ANIMATION_OFFSET, frame  # the key from position 0, never before it
        qs, ks = pairs_at(q, m), pairs_at(k, n)
        for i, ax in enumerate(axes):
            _arrow(ax, qs[i], colours.cycle[0], width=0.035)
            _arrow(ax, ks[i], colours.cycle[1], width=0.035)
            ax.set_title(f"pair {i}: θ = {theta[i]:.3g} rad\nq·k = {qs[i] @ ks[i]:+.3f}", fontsize=10)
            artists.extend(list(ax.patches)[-2:])
        fig.suptitle(f"query at m = {m} (blue), key at n = m − {ANIMATION_OFFSET} = {n} (orange)",
                     fontsize=11, color=colours.foreground)
        return artists

    for ax in axes:
        _unit_circle(ax, colours.muted)
        ax.set_axis_off()
    draw(0)
    animation = FuncAnimation(fig, draw, frames=ANIMATION_FRAMES, interval=125, blit=False)
    animation.posenc_fps = 8  # type: ignore[attr-defined]
    fig.set_dpi(100)
    return animation


# ------------------------------------------------------------------------------- RoPE today
def _base_wavelengths(ax: Axes, x_label: float) -> None:
    """Wavelength of each pair of a 128-wide head for three bases, with two text lengths marked."""
    colours = palette()
    pairs = np.arange(64)
    for colour, base in zip(colours.cycle, (1e4, 5e5, 1e6), strict=False):
        theta = rope_inverse_frequencies(128, base=base)
        ax.plot(pairs, (2 * math.pi / theta).numpy(), color=colour, label=f"base {base:,.0f}")
    _length_lines(ax, x_label)
    ax.set_ylabel("wavelength 2π/θᵢ (positions)")
    ax.set_title("A larger base stretches the slow pairs")
    ax.legend(loc="lower right")


def _length_lines(ax: Axes, x_label: float) -> None:
    """Log wavelength axis with 8192 and 131072 positions marked: a pair above a line does not
    come full circle within that many positions."""
    colours = palette()
    ax.set_yscale("log")
    for length, style in ((8192, "--"), (131072, ":")):
        ax.axhline(length, color=colours.muted, ls=style, lw=1.1)
        ax.text(x_label, length * 1.3, f"{length} positions", color=colours.foreground, fontsize=10)
    ax.set_xlabel("rotation pair i (fast → slow)")


@figure(
    "rope-base-wavelengths",
    alt=("Log-scale plot of the wavelength of each rotation pair of a 128-wide head for bases 10000, "
         "500000 and one million: the fast pairs coincide and the slow pairs stretch with the base, so "
         "fewer pairs complete a turn within 8192 or 131072 positions."),
)
def base_wavelengths() -> Figure:
    fig, ax = new_figure(height=3.6)
    _base_wavelengths(ax, 1)
    return fig


@figure(
    "rope-today-wavelengths",
    alt=("Two log-scale plots of the wavelength of each rotation pair of a 128-wide head. Left: bases "
         "10000, 500000 and one million; the fast pairs coincide and the slow pairs stretch with the base, "
         "so fewer pairs complete a turn within 8192 or 131072 positions. Right: a quarter of the head "
         "rotated, once with frequencies over the rotated width (partial rotary, 16 pairs reaching a "
         "wavelength near 2 pi times the base) and once with the full-width exponent of p-RoPE (16 fast "
         "pairs, the other 48 not rotating at all)."),
)
def today_wavelengths() -> Figure:
    colours = palette()
    fig, (left, right) = new_figure(1, 2, height=3.6)
    _base_wavelengths(left, 1)
    _length_lines(right, 24)
    partial = rope_inverse_frequencies(128, rotary_dim=32)
    p_rope = rope_inverse_frequencies(128, scaling={"type": "proportional", "partial_rotary_factor": 0.25})
    turning = int((p_rope > 0).sum())
    right.plot(np.arange(16), (2 * math.pi / partial).numpy(), color=colours.cycle[0], marker="o", ms=3,
               label="partial rotary: b^(-2i/32)")
    right.plot(np.arange(turning), (2 * math.pi / p_rope[:turning]).numpy(), color=colours.cycle[1],
               marker="s", ms=3, label="p-RoPE: b^(-2i/128)")
    right.axvspan(turning - 0.5, 63.5, color=colours.cycle[1], alpha=0.12, lw=0)
    right.text(turning + 2, 30, "p-RoPE: θ = 0,\nno rotation", color=colours.foreground, fontsize=10)
    right.set_xlim(-1, 64)
    right.set_ylim(3, 1e9)  # room for the legend above the 131072 line
    right.set_title("A quarter of the head rotates")
    right.legend(loc="upper right")
    return fig
