"""Every registered figure renders, in both palettes, deterministically, with alt text."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.text import Text

from posenc.figures import load_all
from posenc.figures._render import VARIANTS, cache_key, dependencies, render, split_variant
from posenc.figures._layout import NARROW_WIDTH, fit_to_width, use_layout
from posenc.figures._style import (
    METHOD_COLOURS,
    METHOD_LABELS,
    MIN_FONT_PT,
    PALETTES,
    contrast,
    method_colour,
    use_palette,
)

FIGURES = load_all()


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_figure_renders_in_both_palettes_deterministically(name: str, tmp_path: Path) -> None:
    spec = FIGURES[name]
    outputs = {}
    for variant in (*VARIANTS, "light"):  # light twice: two draws must give the same bytes
        target = tmp_path / f"{name}-{variant}-{len(outputs)}.{spec.extension}"
        render(name, variant, str(target))
        data = target.read_bytes()
        assert len(data) > 1000, f"{name} ({variant}) is suspiciously small"
        if spec.extension == "svg":
            text = data.decode()
            assert "<svg" in text and "<dc:date>" not in text
        outputs[f"{variant}-{len(outputs)}"] = data
    light, dark, narrow_light, narrow_dark, light_again = outputs.values()
    assert light != dark, f"{name}: light and dark variants are identical"
    assert narrow_light != narrow_dark, f"{name}: the narrow layout's light and dark variants are identical"
    assert narrow_light != light, f"{name}: the narrow layout is the wide one"
    assert light == light_again, f"{name}: two draws of the same figure differ"


def test_alt_text_describes_the_figure() -> None:
    for spec in FIGURES.values():
        assert len(spec.alt.split()) >= 8, f"{spec.name}: alt text too short to describe the figure"


def test_cache_key_follows_dependencies() -> None:
    spec = FIGURES["attention-word-order"]
    deps = dependencies(spec.module)
    assert "posenc.attention" in deps and "posenc.sinusoidal" in deps and "posenc._checks" in deps
    assert "posenc.rope" not in deps
    assert cache_key(spec, "light") != cache_key(spec, "dark")


# ---------------------------------------------------------------------------------------------
# One colour per method, contrast, readable text (issue 12): checked on the drawn Figure objects.

_METHOD_BY_LABEL = {label.lower(): method for method, label in METHOD_LABELS.items()} | {m: m for m in METHOD_COLOURS}
# Figures owned by other engineers that do not follow the rules below yet, with what to change
# (issue 12 items 2 and 6): remove a name once its figure passes.
NOT_YET_ON_THE_STYLE: dict[str, str] = {}


def _method_of(label: str) -> str | None:
    """The method a legend label names ("RoPE", "learned, at initialisation", "T5 bias"), if any."""
    text = label.strip().lower()
    for name, method in sorted(_METHOD_BY_LABEL.items(), key=lambda item: -len(item[0])):
        if text == name or (text.startswith(name) and text[len(name)] in ",:( "):
            return method
    return None


def test_method_colours_are_distinct_and_have_contrast() -> None:
    for index, variant in enumerate(("light", "dark")):
        background = PALETTES[variant].background
        colours = [pair[index] for pair in METHOD_COLOURS.values()]
        assert len(set(colours)) == len(colours), f"two methods share a colour in the {variant} palette"
        for method, pair in METHOD_COLOURS.items():
            assert contrast(pair[index], background) >= 3.0, f"{method} ({variant}): {contrast(pair[index], background):.2f}:1"
            assert method_colour(method, variant) == pair[index]
        for colour in PALETTES[variant].cycle:
            assert contrast(colour, background) >= 3.0, f"cycle colour {colour} ({variant})"
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0)  # the WCAG formula's end points
    assert contrast("#767676", "#ffffff") == pytest.approx(4.54, abs=0.01)  # WCAG's own example grey


def _drawn(name: str, variant: str) -> Any:
    """The figure as the renderer draws it in ``variant`` (layout and palette), laid out."""
    import matplotlib

    matplotlib.use("Agg")
    layout, palette_name = split_variant(variant)
    with use_palette(palette_name), use_layout(layout):
        result = FIGURES[name].function()
        if not isinstance(result, Figure):
            return None
        if layout == "narrow":
            fit_to_width(result)
        result.canvas.draw()  # lays out tick labels, legends
    return result


def _layout_problems(fig: Figure, variant: str) -> list[str]:
    """Text the reader cannot read because of where it is: outside the figure (cut off when
    saved), or tick labels of one axis on top of each other."""
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    box = fig.bbox
    problems = []
    drawn_ticks: dict[int, list[Any]] = {}  # axis -> extents of the tick labels it draws (in view)
    tick_labels: set[int] = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            tick_labels.update(id(t) for t in axis.get_ticklabels(which="both"))
            drawn = [tick.label1 for tick in axis._update_ticks() if tick.label1.get_visible() and ax.axison]
            drawn_ticks[id(axis)] = [t.get_window_extent(renderer) for t in drawn if t.get_text().strip()]
    extents = [(text.get_text(), text.get_window_extent(renderer)) for text in fig.findobj(Text)
               if text.get_visible() and text.get_text().strip() and id(text) not in tick_labels]
    extents += [("tick label", e) for shown in drawn_ticks.values() for e in shown]
    for content, extent in extents:
        if extent.x0 < box.x0 - 2 or extent.x1 > box.x1 + 2 or extent.y0 < box.y0 - 2 or extent.y1 > box.y1 + 2:
            problems.append(f"{variant}: text {content[:40]!r} runs past the figure's edge")
    for shown in drawn_ticks.values():
        for first, second in zip(shown, shown[1:]):
            overlap = first.intersection(first, second)
            if overlap is not None and overlap.width > 1 and overlap.height > 1:
                problems.append(f"{variant}: tick labels overlap")
                break
    return problems


@pytest.mark.parametrize("name", sorted(n for n, spec in FIGURES.items() if not spec.animated))
def test_figure_colours_and_text(name: str) -> None:
    import matplotlib.pyplot as plt

    if name in NOT_YET_ON_THE_STYLE:
        pytest.skip(f"{name}: {NOT_YET_ON_THE_STYLE[name]}")
    problems = []
    for variant in VARIANTS:
        fig = _drawn(name, variant)
        if fig is None:
            continue
        layout, palette_name = split_variant(variant)
        try:
            if layout == "narrow":
                assert fig.get_figwidth() == NARROW_WIDTH
            problems += _layout_problems(fig, variant)
            background = PALETTES[palette_name].background
            furniture = {id(line) for ax in fig.axes for line in
                         [*ax.get_xgridlines(), *ax.get_ygridlines(), *ax.xaxis.get_ticklines(True), *ax.yaxis.get_ticklines(True),
                          *ax.xaxis.get_ticklines(), *ax.yaxis.get_ticklines()]}
            for line in fig.findobj(Line2D):
                label = str(line.get_label())
                if not line.get_visible() or id(line) in furniture:
                    continue
                method = _method_of(label) if not label.startswith("_") else None
                colour = to_hex(line.get_color())
                if method is not None and colour.lower() != method_colour(method, palette_name).lower():
                    problems.append(f"{variant}: line {label!r} is {colour}, the colour of {method} is "
                                    f"{method_colour(method, palette_name)}")
                # lines in the background colour separate cells, lines in the grid colour are guides:
                # neither carries data; every other line must stand out from the background
                guide = colour.lower() in (background.lower(), PALETTES[palette_name].grid.lower())
                visible_line = line.get_linestyle() not in ("None", "", " ") and line.get_linewidth() > 0 and not guide
                opaque = line.get_alpha() is None or line.get_alpha() >= 0.99
                if visible_line and opaque and contrast(colour, background) < 3.0:
                    problems.append(f"{variant}: line {label!r} {colour} has {contrast(colour, background):.2f}:1 against {background}")
            for text in fig.findobj(Text):
                content = text.get_text()
                if not content.strip() or not text.get_visible():
                    continue
                size = text.get_fontsize()
                if "$" in content and re.search(r"[\^_]", content):
                    size *= 0.7  # mathtext draws sub- and superscripts at 70 %
                if size < MIN_FONT_PT - 1e-9:
                    problems.append(f"{variant}: text {content[:30]!r} at {size:.2f} pt < {MIN_FONT_PT} pt")
        finally:
            plt.close(fig)
    assert not problems, f"{name}:\n" + "\n".join(sorted(set(problems)))
