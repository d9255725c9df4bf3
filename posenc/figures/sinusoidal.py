"""Figures for chapters 2-5: first principles, the formula, properties, adding to embeddings."""

from __future__ import annotations

import math

import numpy as np
import torch
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from posenc.analysis import (
    binary_code,
    cosine_similarity_matrix,
    float32_angle_error,
    nearest_collision,
    similarity_to_position,
)
from posenc.figures import figure
from posenc.figures._layout import narrow
from posenc.figures._style import FONT, method_colour, new_figure, palette, show_matrix
from posenc.naive import sine_cosine_pairs
from posenc.sinusoidal import sinusoidal_encoding


@figure(
    "collision-vs-pairs",
    alt=(
        "Line chart of the smallest distance between any two of the first 1,000 position codes "
        "against the number of sine/cosine pairs, on a log scale. Harmonic frequencies stall near "
        "0.01; frequencies ten times apart rise to about 0.65."
    ),
)
def collision_vs_pairs(positions: int = 1000, max_pairs: int = 4) -> Figure:
    schemes = {
        "harmonic: 1, 1/2, 1/3, 1/4": [1.0 / (n + 1) for n in range(max_pairs)],
        "geometric: 1, 0.1, 0.01, 0.001": [10.0 ** -n for n in range(max_pairs)],
    }
    fig, ax = new_figure(height=3.4, narrow_height=4.6)
    counts = list(range(1, max_pairs + 1))
    for (label, freqs), marker in zip(schemes.items(), ("o", "s")):
        gaps = [nearest_collision(sine_cosine_pairs(positions, freqs[:n])).distance for n in counts]
        ax.plot(counts, gaps, marker=marker, label=label)
    ax.set_yscale("log")
    ax.set_xticks(counts)
    ax.set_xlabel("number of sine/cosine pairs")
    ax.set_ylabel("closest distance between two codes")
    ax.set_title(f"Closest pair among the first {positions:,} positions")
    if narrow():  # in a phone's column the legend would cover the lines: put it under the axes
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.25), frameon=False)
    else:
        ax.legend(loc="lower right")
    return fig


@figure(
    "sinusoidal-heatmap",
    alt=(
        "Two heatmaps of the sinusoidal encoding, positions down and dimensions across: 20 "
        "positions by 8 dimensions, and 100 positions by 128 dimensions. Low dimensions alternate "
        "colour quickly down the rows; high dimensions are almost constant."
    ),
)
def sinusoidal_heatmap() -> Figure:
    fig, axes = new_figure(1, 2, height=4.2, width_ratios=[1, 2.2])
    for ax, (length, dim) in zip(axes, [(20, 8), (100, 128)]):
        image = show_matrix(ax, sinusoidal_encoding(length, dim).numpy(), limit=1.0, aspect="auto",
                            title=f"{length} positions × d = {dim}", xlabel="dimension", ylabel="position",
                            xticks=range(0, dim, 1 if dim <= 8 else 32),
                            yticks=range(0, length, 5 if length <= 20 else 20))
    fig.colorbar(image, ax=axes, shrink=0.8, label="value")
    return fig


@figure(
    "sinusoidal-dimensions",
    alt=(
        "Line plots of five dimensions of the encoding with d = 128 over positions 0 to 100: "
        "dimension 0 oscillates every 6.3 positions, dimension 20 more slowly, dimension 40 "
        "slower still, dimension 126 stays near 0 and dimension 127 near 1."
    ),
)
def sinusoidal_dimensions(dim: int = 128, length: int = 101) -> Figure:
    table = sinusoidal_encoding(length, dim).numpy()
    chosen = [0, 20, 40, 126, 127]
    fig, ax = new_figure(height=3.8, narrow_height=5.2)
    for column in chosen:
        kind = "sin" if column % 2 == 0 else "cos"
        wavelength = 2 * math.pi * 10000 ** ((column - column % 2) / dim)
        # dim 0 has only ~6 samples per turn: mark the integer positions so the jagged line reads as samples
        style = {"marker": "o", "markersize": 2.5} if column == 0 else {}
        ax.plot(range(length), table[:, column], label=f"dim {column} ({kind}, wavelength {wavelength:,.1f})", **style)
    ax.set_xlabel("position")
    ax.set_ylabel("value")
    ax.set_ylim(-1.15, 1.15)
    ax.set_title(f"Chosen dimensions of the encoding, d = {dim}")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, frameon=False,
              title="wavelengths in positions")
    return fig


@figure(
    "similarity-matrices",
    alt=(
        "Three 64-by-64 cosine-similarity matrices of the sinusoidal codes for d = 8, 64 and "
        "512, each on its own colour scale from its smallest value to 1. Each is constant along its "
        "diagonals; d = 8 shows bands of high similarity far from the diagonal, the wider ones a "
        "bright diagonal fading to a middling level."
    ),
)
def similarity_matrices(length: int = 64) -> Figure:
    fig, axes = new_figure(1, 3, height=3.3, wspace=0.06)
    for ax, dim in zip(axes, (8, 64, 512)):
        sim = cosine_similarity_matrix(sinusoidal_encoding(length, dim, dtype=torch.float64)).numpy()
        # each panel its own scale, from its smallest similarity to 1: on one shared -1..1 scale
        # the wide models (all above about 0.2) would look flat
        image = show_matrix(ax, sim, vmin=float(sim.min()), vmax=1.0, title=f"d = {dim}", xlabel="position",
                            ylabel="position" if dim == 8 else None, xticks=range(0, length, 20),
                            yticks=range(0, length, 20))
        bar = fig.colorbar(image, ax=ax, location="bottom", shrink=0.9, pad=0.02, aspect=14)
        bar.ax.xaxis.set_major_locator(MaxNLocator(3))
    fig.supxlabel("cosine similarity (each panel on its own colour scale)", fontsize=FONT["label"])
    return fig


@figure(
    "similarity-vs-offset",
    alt=(
        "Cosine similarity between the code of position 0 and position k, k from 0 to 200, for "
        "d = 8, 64 and 512. All fall quickly at first; d = 8 then oscillates widely, the wider "
        "models drift down slowly with small ripples, so none decays monotonically."
    ),
)
def similarity_vs_offset(max_offset: int = 200) -> Figure:
    colours = palette()
    fig, ax = new_figure(height=3.6)
    offsets = np.arange(max_offset + 1)
    for dim in (8, 64, 512):
        sim = similarity_to_position(sinusoidal_encoding(max_offset + 1, dim, dtype=torch.float64)).numpy()
        ax.plot(offsets, sim, label=f"d = {dim}", linewidth=1.5)
    ax.axhline(0.0, color=colours.muted, linewidth=0.8)
    ax.set_xlabel("offset k (positions)")
    ax.set_ylabel("cos-sim(PE(0), PE(k))")
    ax.set_ylim(-1.05, 1.05)
    ax.set_title("Similarity against offset is not monotone")
    ax.legend(loc="lower right", ncol=3)
    return fig


@figure(
    "binary-counter",
    alt=(
        "Side by side: the six bits of positions 0 to 63 as black and white columns, lowest bit "
        "flipping every step; and the first 16 dimensions of the sinusoidal encoding with d = 64 "
        "over the same positions, changing more slowly from left to right."
    ),
)
def binary_counter(length: int = 64) -> Figure:
    colours = palette()
    fig, axes = new_figure(1, 2, height=4.4, width_ratios=[1, 2])
    show_matrix(axes[0], binary_code(length, 6).numpy(), cmap="gray_r" if colours.name == "light" else "gray",
                aspect="auto", title="binary: bit b flips\nevery 2ᵇ positions", xlabel="bit (lowest first)",
                ylabel="position", xticks=range(6))
    image = show_matrix(axes[1], sinusoidal_encoding(length, 64)[:, :16].numpy(), limit=1.0, aspect="auto",
                        title="sinusoidal, d = 64: first 16 dims\n(wavelength ×1.33 per pair)",
                        xlabel="dimension", ylabel="position", xticks=range(0, 16, 2))
    fig.colorbar(image, ax=axes[1], shrink=0.8, label="value")
    return fig


@figure(
    "float32-precision",
    alt=(
        "Log-log plot of the largest error of the encoding against a float64 reference, for "
        "positions from 1 to one million and d = 512: angles computed in float32 give errors "
        "growing with the position up to about 0.05; float64 angles stay below 1e-7."
    ),
)
def float32_precision(dim: int = 512) -> Figure:
    positions = torch.unique(torch.logspace(0, 6, 121, dtype=torch.float64).round())
    naive = float32_angle_error(positions, dim).numpy()
    exact = sinusoidal_encoding(positions, dim, dtype=torch.float64)
    ours = (sinusoidal_encoding(positions, dim, dtype=torch.float32).double() - exact).abs().amax(dim=1).numpy()
    fig, ax = new_figure(height=3.6, narrow_height=4.4)
    x = positions.numpy()
    ax.loglog(x, np.maximum(naive, 1e-10), label="angles in float32 (common recipe)")
    ax.loglog(x, np.maximum(ours, 1e-10), label="angles in float64, output cast to float32 (posenc)")
    ax.set_xlabel("position")
    ax.set_ylabel("largest error vs float64")
    ax.set_ylim(1e-10, 1)
    ax.set_title(f"Precision of the encoding at large positions, d = {dim}")
    ax.legend(loc="upper left")
    return fig


@figure(
    "magnitude-balance",
    alt=(
        "Horizontal bars, log scale: average length of a 512-dimensional token embedding under "
        "four initialisations, with a vertical line at 16, the length of every sinusoidal code. "
        "Unit variance times sqrt(d) reaches 512; 0.02 scale is 0.45."
    ),
)
def magnitude_balance(dim: int = 512) -> Figure:
    colours = palette()
    generator = torch.Generator().manual_seed(0)
    setups = [
        ("N(0, 1)", 1.0, 1.0),
        ("N(0, 1) × √d", 1.0, math.sqrt(dim)),
        ("N(0, 0.02²)", 0.02, 1.0),
        ("N(0, 1/d) × √d", dim ** -0.5, math.sqrt(dim)),
    ]
    lengths = [float((torch.randn(10000, dim, generator=generator) * std * scale).norm(dim=1).mean())
               for _, std, scale in setups]
    position_length = float(sinusoidal_encoding(1, dim).norm())
    fig, ax = new_figure(height=3.2)
    rows = np.arange(len(setups))
    ax.barh(rows, lengths, color=colours.muted)
    for row, value in zip(rows, lengths):
        ax.text(value * 1.1, row, f"{value:.2f}", va="center", color=colours.foreground, fontsize=FONT["small"])
    ax.axvline(position_length, color=method_colour("sinusoidal"), linewidth=2,
               label=f"sinusoidal code: √(d/2) = {position_length:.0f}")
    ax.set_yticks(rows, [name for name, _, _ in setups])
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlim(0.1, 3000)
    ax.set_xlabel("average length of a token embedding (log scale)")
    ax.set_title(f"Token embedding vs position code, d = {dim}")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.25), frameon=False)
    return fig
