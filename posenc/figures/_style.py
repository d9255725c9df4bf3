"""The one place for figure colours, sizes and fonts, in a light and a dark palette.

Every figure is drawn twice, once per palette, and the page shows the one matching the reader's
theme. Colours are chosen to stay distinguishable on both backgrounds (and for colour-blind
readers: the categorical cycle is the Okabe-Ito palette).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import matplotlib
import matplotlib.pyplot as plt
from cycler import cycler
from matplotlib.figure import Figure


@dataclass(frozen=True)
class Palette:
    name: str
    background: str
    foreground: str
    muted: str
    grid: str
    cycle: tuple[str, ...]
    sequential: str  # colormap for magnitudes
    diverging: str  # colormap for signed values centred on zero


OKABE_ITO_LIGHT = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")
OKABE_ITO_DARK = ("#56B4E9", "#E69F00", "#009E73", "#CC79A7", "#F0E442", "#FF8C5A", "#FFFFFF")

PALETTES = {
    "light": Palette("light", "#ffffff", "#1f2328", "#57606a", "#d0d7de", OKABE_ITO_LIGHT, "viridis", "RdBu_r"),
    "dark": Palette("dark", "#1e2129", "#e6edf3", "#9aa5b1", "#3a404c", OKABE_ITO_DARK, "viridis", "RdBu_r"),
}

#: Figure width in inches; the content column of the site is about 700 px wide.
WIDTH = 7.2


def rc_params(palette: Palette) -> dict[str, Any]:
    return {
        "figure.facecolor": palette.background,
        "axes.facecolor": palette.background,
        "savefig.facecolor": palette.background,
        "text.color": palette.foreground,
        "axes.labelcolor": palette.foreground,
        "axes.edgecolor": palette.muted,
        "axes.titlecolor": palette.foreground,
        "xtick.color": palette.muted,
        "ytick.color": palette.muted,
        "xtick.labelcolor": palette.foreground,
        "ytick.labelcolor": palette.foreground,
        "grid.color": palette.grid,
        "legend.facecolor": palette.background,
        "legend.edgecolor": palette.grid,
        "legend.labelcolor": palette.foreground,
        "axes.prop_cycle": cycler(color=list(palette.cycle)),
        "axes.grid": True,
        "axes.axisbelow": True,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "font.family": "DejaVu Sans",
        "font.size": 10.5,
        "axes.titlesize": 11.5,
        "axes.labelsize": 10.5,
        "legend.fontsize": 9.5,
        "lines.linewidth": 1.8,
        "image.cmap": palette.sequential,
        # Deterministic SVG: fixed ids, no date, text kept as text (smaller, selectable).
        "svg.hashsalt": "posenc",
        "svg.fonttype": "none",
        "path.simplify": True,
    }


_current: Palette = PALETTES["light"]


@contextmanager
def use_palette(name: str) -> Iterator[Palette]:
    """Draw under a palette: sets matplotlib's rcParams and what `palette` returns."""
    global _current
    previous = _current
    _current = PALETTES[name]
    try:
        params: Any = rc_params(_current)
        with plt.rc_context(params):
            yield _current
    finally:
        _current = previous


def palette() -> Palette:
    """The palette being drawn under, for colours that rcParams cannot set (annotations, maps)."""
    return _current


def new_figure(nrows: int = 1, ncols: int = 1, *, height: float = 3.6, width: float = WIDTH,
               wspace: float | None = None, **subplot_kw: Any) -> tuple[Figure, Any]:
    """A figure sized for the content column, with constrained layout so nothing is clipped.

    ``wspace`` widens the gap between panels (a fraction of the figure width), e.g. so that a
    colour bar's label does not run into the next panel.
    """
    fig = plt.figure(figsize=(width, height))
    fig.set_layout_engine("constrained", **({} if wspace is None else {"wspace": wspace}))
    axes = fig.subplots(nrows, ncols, **subplot_kw)
    return fig, axes
