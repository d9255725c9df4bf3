"""Figures for "Positions in two and three dimensions": the 2-D table, axial RoPE, M-RoPE, the ViT experiment."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure

from posenc.experiments.vit_resolution import load_results
from posenc.figures import figure
from posenc.figures._layout import narrow
from posenc.figures._style import cell_text_colour, method_colour, new_figure, palette
from posenc.rope_nd import (
    apply_rope_nd,
    grid_positions,
    mrope_positions,
    rope_axis_assignment,
)
from posenc.vision import sinusoidal_encoding_2d

GRID, DIM = 8, 32  # the 2-D table shown: an 8 x 8 grid of patches, width 32


@figure(
    "sincos-2d-table",
    alt=("Left: the 2-D sine-cosine table of an 8 by 8 grid of patches with 32 features, one row per "
         "patch in reading order; the first 16 features change with the column and repeat every 8 "
         "rows, the last 16 change with the row in steps of 8. Right: the dot product of every "
         "patch's row with the row of patch (row 2, column 5), drawn on the grid; it is largest at "
         "that patch and falls off in both directions."),
)
def sincos_2d_table() -> Figure:
    table = sinusoidal_encoding_2d(GRID, GRID, DIM)
    colours = palette()
    fig, (left, right) = new_figure(1, 2, height=3.9, width_ratios=[1.35, 1], wspace=0.08)
    image = left.imshow(table.numpy(), cmap=colours.diverging, vmin=-1, vmax=1, aspect="auto",
                        interpolation="nearest")
    left.axvline(DIM / 2 - 0.5, color=colours.foreground, lw=1.2)
    for x, label in ((DIM / 4, "column c"), (3 * DIM / 4, "row r")):
        left.text(x - 0.5, -1.2, label, ha="center", va="bottom", fontsize=11, color=colours.foreground)
    left.set_xticks([0, DIM // 4, DIM // 2, 3 * DIM // 4], ["sin", "cos", "sin", "cos"])
    left.set_yticks(range(0, GRID * GRID, GRID), [str(i) for i in range(0, GRID * GRID, GRID)])
    left.set_ylabel("patch r * 8 + c (reading order)")
    left.set_xlabel("feature")
    left.grid(False)
    fig.colorbar(image, ax=left, fraction=0.05, pad=0.02)
    query = 2 * GRID + 5
    similarity = (table @ table[query]).view(GRID, GRID).numpy()
    shown = right.imshow(similarity, cmap=colours.sequential, interpolation="nearest")
    right.plot(5, 2, marker="x", color=colours.background, markersize=10, mew=2.5)
    right.set_xlabel("column c")
    right.set_ylabel("row r")
    right.set_title("dot product with patch (2, 5)")
    right.grid(False)
    fig.colorbar(shown, ax=right, fraction=0.046, pad=0.03)
    return fig


@figure(
    "axial-rope-scores",
    alt=("Three 9 by 9 grids of attention scores under axial 2-D RoPE, for one query vector and one "
         "key vector: the query placed at the centre, the query placed near the top left corner, "
         "and the second map moved by the offset between the two queries, (3, 2). The first and third grids are "
         "identical on the cells they share: the score depends only on the offset between query and key."),
)
def axial_rope_scores() -> Figure:
    size = 9
    generator = torch.Generator().manual_seed(3)
    query, key = torch.randn(2, 1, 16, generator=generator, dtype=torch.float64).unbind(0)
    cells = grid_positions(size, size).double()
    keys = apply_rope_nd(key.expand(size * size, 16), cells, sections=[4, 4], base=100.0, frequencies="per_axis")

    def scores(row: int, col: int) -> np.ndarray:
        q = apply_rope_nd(query, torch.tensor([[row, col]], dtype=torch.float64), sections=[4, 4], base=100.0,
                          frequencies="per_axis")
        return (keys @ q[0]).view(size, size).numpy()

    centre, corner = scores(4, 4), scores(1, 2)
    shifted = np.full((size, size), np.nan)
    shifted[3:, 2:] = corner[:size - 3, :size - 2]  # move the corner map by the offset (3, 2)
    colours = palette()
    fig, axes = new_figure(1, 3, height=3.0)
    if narrow():  # stacked on a phone: room between a panel's column label and the next title
        fig.set_layout_engine("constrained", hspace=0.06)
    limit = float(np.nanmax(np.abs(centre)))
    titles = ("query at (4, 4)", "query at (1, 2)", "(1, 2) map moved by (3, 2)")
    for ax, data, title, mark in zip(axes, (centre, corner, shifted), titles, ((4, 4), (1, 2), (4, 4))):
        ax.imshow(data, cmap=colours.diverging, vmin=-limit, vmax=limit, interpolation="nearest")
        ax.plot(mark[1], mark[0], marker="x", color=colours.foreground, markersize=9, mew=2)
        ax.set_title(title, fontsize=11)
        ax.set_xticks([0, 4, 8])
        ax.set_yticks([0, 4, 8])
        ax.set_xlabel("key column")
        ax.grid(False)
    axes[0].set_ylabel("key row")
    return fig


AXES = ("time", "height", "width")


@figure(
    "mrope-sections",
    alt=("Which of the 64 rotation pairs of a 128-wide head each axis owns. Top: the frequency of "
         "pair j falls from 1 to about 0.0001 radians per position. Middle strip: Qwen2-VL's "
         "blocks, pairs 0 to 15 for time, 16 to 39 for height, 40 to 63 for width, so width gets "
         "only the slowest frequencies. Bottom strip: Qwen3-VL's interleaving, time, height, width "
         "in turn, so every axis gets fast and slow pairs."),
)
def mrope_sections() -> Figure:
    colours = palette()
    axis_colours = [colours.cycle[0], colours.cycle[1], colours.cycle[2]]
    pairs = np.arange(64)
    theta = 10000.0 ** (-pairs / 64)
    fig, (top, strips) = new_figure(2, 1, height=3.9, height_ratios=[1.1, 1], sharex=True, narrow_height=4.8)
    top.semilogy(pairs, theta, color=colours.foreground, marker=".", lw=1)
    top.set_ylabel("radians per\nposition")
    top.set_title("frequency of pair j, base 10000, head width 128")
    rows = [rope_axis_assignment([16, 24, 24]).numpy(),
            rope_axis_assignment([24, 20, 20], assignment="interleaved").numpy()]
    strips.imshow(np.stack(rows), cmap=ListedColormap(axis_colours), vmin=-0.5, vmax=2.5, aspect="auto",
                  interpolation="nearest", extent=(-0.5, 63.5, 1.5, -0.5))
    strips.set_yticks([0, 1], ["Qwen2-VL\nblocks\n16/24/24", "Qwen3-VL\ninterleaved\n24/20/20"])
    strips.axhline(0.5, color=colours.background, lw=3)
    strips.set_xlabel("rotation pair j")
    strips.grid(False)
    handles = [strips.scatter([], [], marker="s", s=80, color=c, label=name) for c, name in zip(axis_colours, AXES)]
    strips.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.45), ncols=3, frameon=False,
                  fontsize=11)
    return fig


# 3 text tokens, an image of 4 x 6 patches (2 x 3 tokens after merging), 2 text tokens
SEQUENCE: list[int | tuple[int, int, int]] = [3, (1, 4, 6), 2]


@figure(
    "mrope-positions",
    alt=("The three position ids, time, height and width, of a sequence of three text tokens, an "
         "image of two by three merged patches, and two more text tokens. Text tokens carry the "
         "same id on all three rows, 0 1 2; the image tokens have time 3 and height 3 or 4 and "
         "width 3 to 5; the text after the image continues at 6 and 7."),
)
def mrope_positions_figure() -> Figure:
    ids = mrope_positions(SEQUENCE).numpy()
    colours = palette()
    kinds = np.array([0] * 3 + [1] * 6 + [0] * 2)
    fig, ax = new_figure(1, 1, height=2.3)
    cmap = ListedColormap([colours.grid, colours.cycle[4]])
    ax.imshow(np.broadcast_to(kinds, ids.shape), cmap=cmap, vmin=0, vmax=1, aspect="auto", interpolation="nearest")
    # on the image cells, the ink that stands out more (white on the light palette's ochre)
    image_ink = cell_text_colour(colours.cycle[4], dark="#1f2328")
    for (row, col), value in np.ndenumerate(ids):
        ink = image_ink if kinds[col] else colours.foreground
        ax.text(col, row, str(value), ha="center", va="center", fontsize=12, color=ink)
    ax.set_yticks(range(3), AXES)
    ax.set_xticks(range(ids.shape[1]), ["text"] * 3 + ["image"] * 6 + ["text"] * 2, rotation=90 if narrow() else 0,
                  fontsize=10)
    ax.set_xticks(np.arange(-0.5, ids.shape[1]), minor=True)
    ax.set_yticks(np.arange(-0.5, 3), minor=True)
    ax.grid(False)
    ax.grid(which="minor", color=colours.background, lw=2)
    ax.tick_params(which="minor", length=0)
    ax.set_title("M-RoPE position ids: 3 text tokens, a 2 x 3 image, 2 text tokens", fontsize=11)
    return fig


LABELS = {"none": "none (NoPE)", "learned": "learned 2-D, resampled", "sinusoidal": "sinusoidal 2-D",
          "rope": "axial RoPE", "rope-rescaled": "axial RoPE, rescaled"}
MARKERS = {"none": "o", "learned": "D", "sinusoidal": "s", "rope": "^", "rope-rescaled": "v"}


@figure(
    "vit-resolution",
    alt=("Test accuracy of the tiny ViT on the digits against the grid of patches it is tested on, "
         "4 by 4 (trained), 6 by 6 and 8 by 8, one line per position method, each point the mean of "
         "five seeds with the range as a bar; read from the committed results file."),
)
def vit_resolution() -> Figure:
    results = load_results()
    styles = {method: {"color": method_colour("rope" if method == "rope-rescaled" else method),
                       "ls": "--" if method == "rope-rescaled" else "-", "marker": MARKERS.get(method, "o"),
                       "label": LABELS.get(method, method)} for method in results["methods"]}
    # legend below the plot: inside it, any corner hides an error bar of some method
    return grid_accuracy_figure(results, styles, height=3.8, spread=0.06, ncols=3, legend_size=10.5)


def grid_accuracy_figure(results: dict[str, Any], styles: dict[str, dict[str, Any]], *, height: float,
                         spread: float, ncols: int, legend_size: float,
                         narrow_height: float | None = None) -> Figure:
    """Test accuracy (mean, min-max over seeds) of each method per test grid of a ViT study's
    results (`posenc.experiments.vit_resolution` and `vit_images` share the format), the methods
    shifted ``spread`` apart on the x axis so that their error bars do not hide each other.
    ``narrow_height``: the phone layout's height (`new_figure`), where the legend stacks in one
    column under the plot and needs room of its own."""
    grids = results["grids"]
    colours = palette()
    fig, ax = new_figure(1, 1, height=height, narrow_height=narrow_height)
    centre = (len(results["methods"]) - 1) / 2
    for i, (method, entry) in enumerate(results["methods"].items()):
        means = 100 * np.asarray(entry["mean"])
        low = means - 100 * np.asarray([min(v) for v in entry["accuracy"]])
        high = 100 * np.asarray([max(v) for v in entry["accuracy"]]) - means
        ax.errorbar(np.asarray(grids) + (i - centre) * spread, means, yerr=[low, high], capsize=3, markersize=6,
                    **styles[method])
    ax.axhline(10, color=colours.muted, lw=1, ls=":")
    ax.text(grids[0] - 0.2, 11, "chance", ha="left", va="bottom", fontsize=10.5, color=colours.muted)
    patch = results["config"]["patch_size"]
    ax.set_xticks(grids, [f"{g} x {g}\n({g * patch} x {g * patch} px)" for g in grids])
    ax.set_xlabel("test grid of patches (trained at the first)")
    ax.set_ylabel("test accuracy (%)")
    ax.set_ylim(0, 100)
    fig.legend(fontsize=legend_size, loc="outside lower center", ncols=ncols, frameon=False)
    return fig
