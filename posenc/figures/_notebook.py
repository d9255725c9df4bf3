"""Notebook plots in the site's figure style: one SVG that reads in both palettes
(`notebook_style`, public as ``posenc.figures.notebook_style``)."""

from __future__ import annotations

import re
from typing import Any

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from posenc.figures._style import METHOD_COLOURS, PALETTES, rc_params

_SVG_COLOUR = re.compile(r"#[0-9a-f]{6}\b", re.IGNORECASE)


def _palette_variables() -> dict[str, tuple[str, str]]:
    """``{light colour: (variable name, dark colour)}`` for every colour that differs between the
    palettes: text, axes, grid, the categorical cycle and the method colours."""
    light, dark = PALETTES["light"], PALETTES["dark"]
    pairs = [("fg", light.foreground, dark.foreground), ("muted", light.muted, dark.muted),
             ("grid", light.grid, dark.grid)]
    pairs += [(f"c{i}", a, b) for i, (a, b) in enumerate(zip(light.cycle, dark.cycle))]
    pairs += [(f"m-{method}", a, b) for method, (a, b) in METHOD_COLOURS.items()]
    table: dict[str, tuple[str, str]] = {}
    for name, a, b in pairs:
        table.setdefault(a.lower(), (name, b.lower()))
    return table


def palette_svg(svg: str) -> str:
    """An SVG drawn in the light palette, made to follow the page's palette: each palette colour
    becomes ``var(--posenc-NAME, #light)``, and a ``<style>`` sets the dark values under the
    site's dark scheme (Material's ``data-md-color-scheme="slate"``). Shown inline on the site it
    switches with the reader's palette; anywhere else (Jupyter) it keeps its light colours.

    Examples:
        >>> out = palette_svg('<svg xmlns="http://www.w3.org/2000/svg"><text style="fill: #1f2328">a</text></svg>')
        >>> "fill: var(--posenc-fg, #1f2328)" in out, "--posenc-fg: #e6edf3" in out
        (True, True)
    """
    table = _palette_variables()
    used: dict[str, str] = {}

    def variable(match: re.Match[str]) -> str:
        colour = match[0].lower()
        if colour not in table:
            return match[0]
        name, dark = table[colour]
        used[name] = dark
        return f"var(--posenc-{name}, {colour})"

    body = _SVG_COLOUR.sub(variable, svg)
    rules = "".join(f"--posenc-{name}: {dark};" for name, dark in sorted(used.items()))
    style = f'<style>[data-md-color-scheme="slate"] svg.posenc-plot {{{rules}}}</style>'
    return re.sub(r"<svg\b([^>]*)>", lambda m: f'<svg class="posenc-plot"{m[1]}>{style}', body, count=1)


def notebook_style() -> None:
    """Draw this notebook's plots in the site's figure style (fonts, sizes, the light palette on
    a transparent background) and show them as SVG that follows the page's palette on the site
    (`palette_svg`). Call it once, after ``%matplotlib inline``."""
    params: Any = rc_params(PALETTES["light"])
    params.update({"figure.facecolor": "none", "axes.facecolor": "none", "savefig.facecolor": "none",
                   "savefig.transparent": True, "legend.facecolor": "none", "legend.framealpha": 0.0})
    plt.rcParams.update(params)
    try:
        from IPython import get_ipython
    except ImportError:  # plain Python: the style alone
        return
    shell = get_ipython()
    if shell is None:
        return
    formatters = shell.display_formatter.formatters

    def as_svg(fig: Figure) -> str:
        import io
        from html import escape

        buffer = io.StringIO()
        fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
        # what a screen reader says: the plot's titles
        suptitle = getattr(fig, "_suptitle", None)
        titles = [t for t in [suptitle.get_text() if suptitle else "", *(ax.get_title() for ax in fig.axes)] if t]
        label = escape("Plot: " + "; ".join(" ".join(t.split()) for t in titles) if titles else "Plot")
        return palette_svg(buffer.getvalue()).replace("<svg ", f'<svg role="img" aria-label="{label}" ', 1)

    formatters["image/png"].type_printers.pop(Figure, None)
    formatters["image/svg+xml"].for_type(Figure, as_svg)
