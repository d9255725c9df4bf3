"""Figures for "Positions for images and video": FLUX's ids, a video grid's axes, DINOv3's
coordinates, and RIFLEx's slowed intrinsic frequency."""

from __future__ import annotations

import math

import numpy as np
import torch
from matplotlib.axes import Axes
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from posenc.figures import figure
from posenc.figures._layout import narrow
from posenc.figures._style import cell_text_colour, new_figure, palette
from posenc.rope_images import augment_patch_coordinates, patch_center_coordinates
from posenc.rope_nd import grid_positions
from posenc.rope_video import (
    axes_frequencies,
    flux_position_ids,
    riflex_frequencies,
    riflex_intrinsic_index,
)

TEXT, ROWS, COLS = 4, 2, 3  # the FLUX sequence drawn: 4 text tokens, then a 2 x 3 latent grid
AXIS_NAMES = ("axis 0 (index / time)", "axis 1 (row)", "axis 2 (column)")


def _id_strip(ax: Axes, ids: np.ndarray, kinds: np.ndarray, labels: list[str], title: str) -> None:
    """Three rows of ids over the tokens, text cells grey, grid cells coloured."""
    colours = palette()
    cmap = ListedColormap([colours.grid, colours.cycle[4]])
    ax.imshow(np.broadcast_to(kinds, ids.shape), cmap=cmap, vmin=0, vmax=1, aspect="auto", interpolation="nearest")
    # on the grid cells, whichever of dark and white ink stands out more (white on the light
    # palette's ochre: dark ink there was 3.3:1, under the 4.5:1 small text needs)
    grid_ink = cell_text_colour(colours.cycle[4], dark="#1f2328")
    for (row, col), value in np.ndenumerate(ids):
        ink = grid_ink if kinds[col] else colours.foreground
        ax.text(col, row, str(value), ha="center", va="center", fontsize=11, color=ink)
    ax.set_yticks(range(3), AXIS_NAMES if not narrow() else ("axis 0", "axis 1", "axis 2"))
    ax.set_xticks(range(ids.shape[1]), labels, rotation=90 if narrow() else 0, fontsize=9.5)
    ax.set_xticks(np.arange(-0.5, ids.shape[1]), minor=True)
    ax.set_yticks(np.arange(-0.5, 3), minor=True)
    ax.grid(False)
    ax.grid(which="minor", color=colours.background, lw=2)
    ax.tick_params(which="minor", length=0)
    ax.set_title(title, fontsize=11)


@figure(
    "flux-position-ids",
    alt=("The three position ids of a FLUX sequence of four text tokens followed by a two by three "
         "grid of image patches. Every text token has the ids 0, 0, 0; the image patches have 0 on "
         "the first axis, their row 0 or 1 on the second and their column 0 to 2 on the third."),
)
def flux_ids_figure() -> Figure:
    ids = flux_position_ids(TEXT, ROWS, COLS).T.numpy()  # [3, tokens]
    kinds = np.array([0] * TEXT + [1] * (ROWS * COLS))
    labels = ["text"] * TEXT + [f"({r},{c})" for r in range(ROWS) for c in range(COLS)]
    fig, ax = new_figure(1, 1, height=2.3)
    _id_strip(ax, ids, kinds, labels, "FLUX position ids: 4 text tokens, then a 2 x 3 grid of patches")
    return fig


@figure(
    "video-grid-axes",
    alt=("Left: the time, row and column ids of the twelve tokens of a video of two frames of a two "
         "by three grid, in the order the model reads them; the time id changes slowest, the column "
         "fastest. Right: the period in positions of every rotation pair of a 128-wide head, coloured "
         "by the axis that owns it, for Wan's split (44, 42, 42 features, base 10000) and "
         "HunyuanVideo's (16, 56, 56, base 256); each axis has its own ladder from about 6 positions up."),
)
def video_grid_axes() -> Figure:
    colours = palette()
    fig, (left, right) = new_figure(1, 2, height=3.2, width_ratios=[1.25, 1], wspace=0.06)
    ids = grid_positions(2, 2, 3).T.numpy()
    _id_strip(left, ids, np.ones(ids.shape[1], dtype=int), [str(i) for i in range(ids.shape[1])],
              "a 2-frame 2 x 3 video, in reading order")
    left.set_yticks(range(3), ("time", "row", "column"))
    left.set_xlabel("token")
    for y, (name, dims, base) in enumerate((("Wan 2.1", (44, 42, 42), 10000.0),
                                            ("HunyuanVideo", (16, 56, 56), 256.0))):
        periods = (2 * math.pi / axes_frequencies(dims, base=base)).numpy()
        owner = np.repeat(np.arange(3), np.asarray(dims) // 2)
        for axis in range(3):
            chosen = owner == axis
            right.scatter(periods[chosen], np.full(chosen.sum(), y) + (axis - 1) * 0.18, s=12,
                          color=colours.cycle[axis], label=("time", "row", "column")[axis] if y == 0 else None)
    right.set_xscale("log")
    right.set_yticks([0, 1], ["Wan 2.1", "HunyuanVideo"])
    right.set_ylim(-0.5, 2.1)
    right.set_xlabel("period of a pair (positions)")
    right.set_title("a ladder per axis", fontsize=11)
    right.legend(loc="upper center", fontsize=9.5, ncol=3, handletextpad=0.1, columnspacing=0.8)
    return fig


@figure(
    "dinov3-coordinates",
    alt=("Patch-centre coordinates of DINOv3 in the square from -1 to 1. Left: a 4 by 4 grid and an "
         "8 by 8 grid of the same image span the same square, the finer grid with more points. "
         "Right: the 4 by 4 grid and three training-time draws of shift, per-axis jitter and "
         "rescale: each draw moves, stretches or shrinks the whole grid, differently along each axis."),
)
def dinov3_coordinates() -> Figure:
    colours = palette()
    fig, (left, right) = new_figure(1, 2, height=4.3)
    for size, marker, colour in ((8, "o", colours.muted), (4, "s", colours.cycle[0])):
        c = patch_center_coordinates(size, size).numpy()
        left.scatter(c[:, 1], c[:, 0], marker=marker, s=14 if size == 8 else 30, color=colour,
                     label=f"{size} x {size} patches")
    base = patch_center_coordinates(4, 4)
    right.scatter(base[:, 1], base[:, 0], marker="s", s=30, color=colours.cycle[0], label="as computed")
    for i, seed in enumerate((1, 2, 3)):
        drawn = augment_patch_coordinates(base, shift=0.2, jitter=1.5, rescale=2.0,
                                          generator=torch.Generator().manual_seed(seed)).numpy()
        right.scatter(drawn[:, 1], drawn[:, 0], s=12, color=colours.cycle[i + 1], label=f"training draw {i + 1}")
    for ax, title in ((left, "any resolution spans [-1, 1]"), (right, "shift, jitter, rescale (4 x 4)")):
        ax.add_patch(Rectangle((-1, -1), 2, 2, fill=False, ls=":", color=colours.foreground))
        ax.set_aspect("equal")
        ax.invert_yaxis()  # row 0 at the top, as in the image
        ax.set_xlabel("column coordinate")
        ax.set_ylabel("row coordinate")
        ax.set_title(title, fontsize=11)
        ax.legend(fontsize=9.5, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)
    limit = 2.3
    right.set_xlim(-limit, limit)
    right.set_ylim(limit, -limit)
    return fig


TRAINED, EXTENDED = 33, 66  # HunyuanVideo's 129 frames in latent frames ((129 - 1) / 4 + 1), and twice that
REPEATS = 48  # where the authors see HunyuanVideo repeat (identify_k's example, thu-ml/RIFLEx riflex_utils.py)


@figure(
    "riflex-intrinsic",
    alt=("The cosine of the angle of the intrinsic temporal rotation pair of HunyuanVideo (pair 3 of "
         "16 features, base 256) over 80 latent frames. At its trained speed it completes a period "
         "every 50 frames: within the trained 33 frames it never returns, but a video extended to 66 "
         "frames meets its start again near frame 50. RIFLEx slows this one pair so that one period, "
         "73 frames, covers the extended 66."),
)
def riflex_intrinsic() -> Figure:
    colours = palette()
    theta = axes_frequencies((16,), base=256.0)
    index = riflex_intrinsic_index(theta, REPEATS)
    slowed = riflex_frequencies(theta, index=index, length=EXTENDED)
    frames = np.arange(81)
    fig, ax = new_figure(1, 1, height=3.1)
    for speed, colour, label in ((float(theta[index]), colours.cycle[1], "trained speed"),
                                 (float(slowed[index]), colours.cycle[0], "RIFLEx")):
        ax.plot(frames, np.cos(frames * speed), color=colour, lw=1.8,
                label=f"{label}: period {2 * math.pi / speed:.0f} frames")
    for x, text in ((TRAINED, "trained: 33"), (EXTENDED, "extended: 66")):
        ax.axvline(x, color=colours.muted, ls=":", lw=1.2)
        ax.text(x + 1, -1.22, text, fontsize=9.5, color=colours.muted)
    ax.set_ylim(-1.35, 1.35)
    ax.set_xlabel("latent frame")
    ax.set_ylabel(f"cos(angle) of pair {index}")
    # below the axes: inside, the box hid the trained curve's trough and the crossing near frame 30
    ax.legend(fontsize=9.5, loc="upper center", bbox_to_anchor=(0.5, -0.3 if narrow() else -0.22),
              ncol=1 if narrow() else 2, frameon=False)
    return fig


VIT_LABELS = {"learned": "learned 2-D, resampled", "rope": "axial RoPE", "rope-rescaled": "axial, rescaled",
              "rope-ntk": "axial, per-axis NTK", "rope-riflex": "axial, RIFLEx", "rope-mixed": "RoPE-Mixed",
              "rope-normalized": "DINOv3 coordinates", "rope-dinov3": "DINOv3 coordinates + rescale draws",
              "rope-dinov3-jitter": "DINOv3 coordinates + rescale and jitter draws"}
VIT_MARKERS = {"learned": "D", "rope": "^", "rope-rescaled": "v", "rope-ntk": "<", "rope-riflex": ">",
               "rope-mixed": "P", "rope-normalized": "o", "rope-dinov3": "s", "rope-dinov3-jitter": "X"}


@figure(
    "vit-images",
    alt=("Test accuracy of the tiny ViT on the digits against the grid it is tested on, 4 by 4 "
         "(trained), 6 by 6 and 8 by 8, for nine position schemes, each point the mean of three "
         "seeds with the range as a bar. Axial RoPE at patch indices falls towards chance on the "
         "larger grids, and so does it with per-axis NTK; RIFLEx helps a little at 8 by 8. Rescaled "
         "indices and DINOv3's normalised coordinates, with or without the rescale (and jitter) draws, keep the "
         "most, about as much as the resampled learned grid; RoPE-Mixed lies in between at 6 by 6."),
)
def vit_images_figure() -> Figure:
    from posenc.experiments.vit_images import load_results
    from posenc.figures.multiaxis import grid_accuracy_figure

    results = load_results()
    colours = palette()
    lines = [*colours.cycle, colours.muted]  # the seven categorical hues and grey; the ninth scheme, the
    # jitter draws, shares the hue of the rescale draws it adds to, with its own marker and dash-dots
    methods = list(results["methods"])
    styles = {}
    for i, method in enumerate(methods):
        jitter = method == "rope-dinov3-jitter"
        styles[method] = {"color": lines[methods.index("rope-dinov3")] if jitter else lines[i],
                          "ls": "-." if jitter else "--" if method in ("rope-rescaled", "rope-ntk", "rope-riflex") else "-",
                          "marker": VIT_MARKERS[method], "label": VIT_LABELS[method]}
    # on a phone the nine legend rows stack under the plot: a taller figure keeps the plot readable
    return grid_accuracy_figure(results, styles, height=4.4, spread=0.05, ncols=2, legend_size=10,
                                narrow_height=6.4)
