"""The one place for figure colours, sizes and fonts, in a light and a dark palette.

Every figure is drawn twice, once per palette, and the page shows the one matching the reader's
theme. Three rules hold for every figure (checked by ``tests/test_figures.py`` and, as displayed
in a browser, by ``tests/site/check_site.py``):

* **One colour per method.** A line, marker or bar that stands for a position method takes its
  colour from `METHOD_COLOURS` through `method_colour` (and its marker and label from
  `method_style`), so "RoPE" is the same green in every figure and in both palettes. The hues
  follow Okabe and Ito's colour-blind-safe set, darkened for the light page and lightened for the
  dark one; each method also has its own marker, so no reader has to rely on hue alone.
* **Contrast.** Every line colour is at least 3:1 against its background (WCAG 2 non-text
  contrast); `contrast` computes it, `line_colours` picks n colours from the sequential map that
  keep it (e.g. one line per ALiBi head).
* **Readable text.** Figures are `WIDTH` inches wide, which the site shows at its natural size
  on screens 720 px and wider (the text column is at least 688 px there); the smallest font is
  `MIN_FONT_PT`, i.e. at least 11 px as displayed. Log-axis labels are written ``10⁻⁶`` in the
  label's own font size rather than with matplotlib's smaller mathtext exponents.
* **A narrow layout for phones.** Every figure is also drawn `NARROW_WIDTH` inches wide (360 px,
  the column of a 390-px phone), which the site serves to screens narrower than 720 px: under
  `use_layout("narrow")` (``_layout.py``), `new_figure` stacks the panels of a row one above the other (the
  figure function indexes its axes as before), and `fit_to_width` then wraps titles and
  narrows legends that would not fit. Text keeps its size in points, so it reads at 11 px or
  more on a phone too. A figure function may ask `narrow()` to adapt what stacking cannot.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from cycler import cycler
from matplotlib import colormaps, scale, ticker
from matplotlib.colors import to_hex, to_rgb
from matplotlib.figure import Figure

from posenc.figures._layout import NARROW_WIDTH, narrow


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


# The categorical cycle, for lines that are not methods. Index i has the same hue in both
# palettes (blue, orange, green, pink, ochre, violet, black/white), each >= 3:1 on its background.
CYCLE_LIGHT = ("#0072B2", "#C84E00", "#007D5E", "#B03C86", "#9A6A00", "#5B3FB0", "#000000")
CYCLE_DARK = ("#56B4E9", "#F5803E", "#2FCB9B", "#EE8CC8", "#F0C419", "#AE9CF5", "#FFFFFF")

PALETTES = {
    "light": Palette("light", "#ffffff", "#1f2328", "#57606a", "#d0d7de", CYCLE_LIGHT, "viridis", "RdBu_r"),
    "dark": Palette("dark", "#1e2129", "#e6edf3", "#9aa5b1", "#3a404c", CYCLE_DARK, "viridis", "RdBu_r"),
}

#: One colour per position method, ``(light, dark)``: the same hue in both palettes, each at
#: least 3:1 against its background (tested). Figures of any chapter use `method_colour`.
METHOD_COLOURS: dict[str, tuple[str, str]] = {
    "none": ("#5F6368", "#AEB4BC"),  # grey: no position information
    "sinusoidal": ("#0072B2", "#56B4E9"),  # blue
    "learned": ("#C84E00", "#F5803E"),  # vermillion
    "rope": ("#007D5E", "#2FCB9B"),  # bluish green
    "alibi": ("#9A6A00", "#F0C419"),  # ochre / yellow
    "t5": ("#B03C86", "#EE8CC8"),  # reddish purple
    "shaw": ("#5B3FB0", "#AE9CF5"),  # violet
    "xpos": ("#00808C", "#5FD8E6"),  # teal
    "kerple": ("#6B7000", "#C9CC52"),  # olive
    "fire": ("#A3213A", "#FF7F93"),  # crimson
    "cope": ("#80502A", "#D9A877"),  # brown
    "randomized": ("#2A3F9E", "#8FA6FF"),  # indigo
}
#: A marker per method, so that lines differ by more than hue.
METHOD_MARKERS: dict[str, str] = {
    "none": "o", "sinusoidal": "s", "learned": "D", "rope": "^", "alibi": "v", "t5": "P",
    "shaw": "X", "xpos": "<", "kerple": ">", "fire": "*", "cope": "h", "randomized": "p",
}
#: How a method is named in legends.
METHOD_LABELS: dict[str, str] = {
    "none": "none (NoPE)", "sinusoidal": "sinusoidal", "learned": "learned", "rope": "RoPE",
    "alibi": "ALiBi", "t5": "T5 bias", "shaw": "Shaw et al.", "xpos": "xPos", "kerple": "KERPLE",
    "fire": "FIRE", "cope": "CoPE", "randomized": "randomized positions",
    "rope-randomized": "RoPE, randomized pos.",
}
#: Methods drawn in another method's colour and marker (the experiments' name for RoPE trained on
#: randomized positions is "rope-randomized").
METHOD_ALIASES = {"rope-randomized": "randomized"}

#: Figure width in inches. Saved as SVG it is 518 pt = 691 px wide, about the text column on
#: screens from 720 px up (688 px or more), so it is shown at its natural size there.
WIDTH = 7.2
#: Pixels per point as displayed, conservatively for a 688 px column (688 / (72 * WIDTH)).
DISPLAY_PX_PER_PT = 688 / (72 * WIDTH)
#: The smallest font size (points) any text in a figure may have: 11 px as displayed at 1280 px.
MIN_FONT_PT = 8.5
#: Font sizes, in points, for every kind of text (pass ``fontsize=FONT["small"]`` to annotations).
FONT = {"base": 11.0, "title": 12.0, "label": 11.0, "tick": 10.5, "legend": 10.5, "small": 10.0}


def method_colour(method: str, palette_name: str | None = None) -> str:
    """The colour of ``method`` (a key of `METHOD_COLOURS`) in the given or current palette.

    Examples:
        >>> method_colour("rope", "light"), method_colour("rope", "dark")
        ('#007D5E', '#2FCB9B')
    """
    method = METHOD_ALIASES.get(method, method)
    if method not in METHOD_COLOURS:
        raise ValueError(f"method must be one of {sorted(METHOD_COLOURS)}, got {method!r}")
    name = palette_name if palette_name is not None else _current.name
    if name not in PALETTES:
        raise ValueError(f"palette_name must be one of {sorted(PALETTES)}, got {name!r}")
    light, dark = METHOD_COLOURS[method]
    return light if name == "light" else dark


def method_style(method: str) -> dict[str, Any]:
    """Keyword arguments for ``ax.plot`` of one method's line: colour, marker and label."""
    return {"color": method_colour(method), "marker": METHOD_MARKERS.get(METHOD_ALIASES.get(method, method), "o"),
            "label": METHOD_LABELS.get(method, method)}


def _relative_luminance(colour: str) -> float:
    channels = np.asarray(to_rgb(colour))
    linear = np.where(channels <= 0.04045, channels / 12.92, ((channels + 0.055) / 1.055) ** 2.4)
    return float(linear @ np.array([0.2126, 0.7152, 0.0722]))


def contrast(colour: str, background: str) -> float:
    """WCAG 2 contrast ratio of two colours (1 to 21).

    Examples:
        >>> round(contrast("#000000", "#ffffff"), 1)
        21.0
    """
    high, low = sorted((_relative_luminance(colour), _relative_luminance(background)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def line_colours(count: int, minimum_contrast: float = 3.0) -> list[str]:
    """``count`` colours from the current palette's sequential map, in order, each at least
    ``minimum_contrast`` against the background (the map's ends that vanish are left out)."""
    current = _current
    cmap = colormaps[current.sequential]
    usable = [x for x in np.linspace(0.0, 1.0, 201)
              if contrast(to_hex(cmap(x)), current.background) >= minimum_contrast + 0.1]
    low, high = usable[0], usable[-1]
    steps = np.linspace(low, high, count) if count > 1 else np.array([low])
    return [to_hex(cmap(x)) for x in steps]


# ---------------------------------------------------------------------------------------------
# log axes whose labels are as large as the other tick labels

_SUPERSCRIPT = str.maketrans("-−0123456789", "⁻⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
_MATHTEXT_POWER = re.compile(r"^(?P<sign>[-−]?)(?:(?P<mantissa>[\d.]+)\\times\s*)?(?P<base>[\d.e]+)\^\{(?P<exponent>[-−\d]+)\}$")


class ReadableLogFormatter(ticker.LogFormatterSciNotation):
    """matplotlib's log-axis labels (``$10^{-6}$``) as plain text ``10⁻⁶``: mathtext would draw the
    exponent at 70 % of the label size, below the smallest readable size."""

    def __call__(self, x: float, pos: int | None = None) -> str:
        label = super().__call__(x, pos)
        inner = label.strip("$").replace("\\mathdefault{", "", 1)
        if inner.endswith("}") and label.startswith("$\\mathdefault{"):
            inner = inner[:-1]
        match = _MATHTEXT_POWER.match(inner.replace(" ", ""))
        if match is None:
            return inner.replace("\\times", "×").replace("\\", "")
        power = f"{match['base']}{match['exponent'].translate(_SUPERSCRIPT)}"
        sign = "−" if match["sign"] else ""
        return f"{sign}{match['mantissa']}×{power}" if match["mantissa"] else sign + power


class _ReadableLogScale(scale.LogScale):
    def __init__(self, **kwargs: Any) -> None:  # no `axis` argument: matplotlib >= 3.11 style
        super().__init__(None, **kwargs)

    def set_default_locators_and_formatters(self, axis: Any) -> None:
        super().set_default_locators_and_formatters(axis)
        axis.set_major_formatter(ReadableLogFormatter(self.base))
        axis.set_minor_formatter(ReadableLogFormatter(self.base, labelOnlyBase=(self.subs is not None)))


class _ReadableSymmetricalLogScale(scale.SymmetricalLogScale):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(None, **kwargs)

    def set_default_locators_and_formatters(self, axis: Any) -> None:
        super().set_default_locators_and_formatters(axis)
        axis.set_major_formatter(ReadableLogFormatter(self.base))


# Every figure module imports this one: from here on, "log" and "symlog" axes label like this.
scale.register_scale(_ReadableLogScale)
scale.register_scale(_ReadableSymmetricalLogScale)


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
        "font.size": FONT["base"],
        "axes.titlesize": FONT["title"],
        "figure.titlesize": FONT["title"],
        "axes.labelsize": FONT["label"],
        "xtick.labelsize": FONT["tick"],
        "ytick.labelsize": FONT["tick"],
        "legend.fontsize": FONT["legend"],
        "legend.title_fontsize": FONT["legend"],
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
               wspace: float | None = None, narrow_height: float | None = None,
               narrow_grid: tuple[int, int] | None = None, **subplot_kw: Any) -> tuple[Figure, Any]:
    """A figure sized for the content column, with constrained layout so nothing is clipped.

    ``wspace`` widens the gap between panels (a fraction of the figure width), e.g. so that a
    colour bar's label does not run into the next panel.

    In the narrow layout (`use_layout`) the figure is `NARROW_WIDTH` wide and its panels are
    stacked, row by row, in one column (``narrow_grid`` sets another grid, e.g. ``(2, 2)``); the
    axes come back in the shape the wide call gives, so ``axes[0][1]`` is the same panel in both.
    The height is ``narrow_height`` if given, else about ``height`` per original row of panels.
    """
    if not narrow():
        fig = plt.figure(figsize=(width, height))
        fig.set_layout_engine("constrained", **({} if wspace is None else {"wspace": wspace}))
        return fig, fig.subplots(nrows, ncols, **subplot_kw)
    rows, cols = narrow_grid or (nrows * ncols, 1)
    if rows * cols != nrows * ncols:
        raise ValueError(f"narrow_grid must hold {nrows * ncols} panels, got {narrow_grid}")
    if narrow_height is None:
        narrow_height = height / nrows * rows * (0.8 if cols == 1 and ncols > 1 else 0.9)
    kwargs = dict(subplot_kw)
    ratios = kwargs.pop("height_ratios", None)
    kwargs.pop("width_ratios", None)  # side-by-side proportions mean nothing in a stack
    if ratios is not None and (rows, cols) != (nrows, ncols):
        ratios = [ratio for ratio in ratios for _ in range(ncols)] if cols == 1 else None
    if ratios is not None:
        kwargs["height_ratios"] = ratios
    fig = plt.figure(figsize=(NARROW_WIDTH, narrow_height))
    fig.set_layout_engine("constrained")
    axes = fig.subplots(rows, cols, squeeze=False, **kwargs)
    if nrows == 1 and ncols == 1:
        return fig, axes[0, 0]
    flat = axes.reshape(nrows, ncols)  # same order as the wide grid: row by row
    return fig, flat[0] if nrows == 1 else flat[:, 0] if ncols == 1 else flat


def show_matrix(ax: Any, data: Any, *, title: str, xlabel: str, ylabel: str | None = None,
                cmap: str | None = None, limit: float | None = None, vmin: float | None = None,
                vmax: float | None = None, aspect: str | None = None,
                xticks: Sequence[int] | None = None, yticks: Sequence[int] | None = None) -> Any:
    """Draw a matrix as a heatmap, rows down and columns across, in the house style; return the image.

    ``limit`` makes a colour scale symmetric around zero (``-limit`` to ``limit``, in the
    diverging map unless ``cmap`` says otherwise); otherwise ``vmin``/``vmax`` (or the data's
    range) and the sequential map. Grid lines are off: they would cut through the cells.
    """
    current = _current
    if limit is not None:
        vmin, vmax = -limit, limit
        cmap = cmap or current.diverging
    image = ax.imshow(data, cmap=cmap or current.sequential, vmin=vmin, vmax=vmax, aspect=aspect,
                      interpolation="nearest")
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    if ylabel is not None:
        ax.set_ylabel(ylabel)
    if xticks is not None:
        ax.set_xticks(list(xticks))
    if yticks is not None:
        ax.set_yticks(list(yticks))
    ax.grid(False)
    return image


def cell_text_colour(rgba: str | Sequence[float], dark: str = "#000000") -> str:
    """``dark`` or white, whichever reads better on a cell of colour ``rgba`` (a heatmap's cell, or
    a colour of the palette given by name)."""
    cell = rgba if isinstance(rgba, str) else to_hex(tuple(float(c) for c in rgba[:3]))  # type: ignore[arg-type]
    return dark if contrast(cell, dark) >= contrast(cell, "#ffffff") else "#ffffff"
