"""Each reading check of ``make check-site`` fails on a planted defect (issue 27).

Every test writes a small page that imitates the site's markup, once with one defect planted and
once without, opens it in headless Chromium at the width the check runs at, measures it with the
same in-page script as the site check (`reader_checks.IN_PAGE_READER`) and judges it with the
same functions; the defect must be reported and the clean page must not be. Run by
``make check-site`` (and by ``pytest`` where Chromium is installed).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.site import reader_checks, reader_states
from tests.site.site_audits import weight_problems
from tests.site.site_browser import CHROMIUM, CHROMIUM_ARGS, PageResult

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "hooks"))
from site_fonts import TEXT_FAMILY, font_css  # noqa: E402  (hooks/site_fonts.py)

# The prose measure, read from the site's stylesheet so that this test judges the site's value.
_MEASURE = re.search(r"/\* Measure on wide screens.*?li:not\([^{]*\{\s*max-width: (?P<value>[0-9.]+(?:em|ch));",
                     (ROOT / "docs" / "stylesheets" / "posenc.css").read_text(encoding="utf-8"), re.DOTALL)
assert _MEASURE, "docs/stylesheets/posenc.css: the prose measure rule (after 'Measure on wide screens') moved"
PROSE_MEASURE = _MEASURE["value"]

pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists(),
    reason=f"{CHROMIUM} is not installed (tools/install_chromium.sh; make check-site installs it and runs these)",
)

# The site's markup, reduced: Material's content column, its code blocks and copy button, and
# the rules of posenc.css that the checks are about (code never wraps and shows a scroll cue, the
# copy button has a gutter, prose keeps a measure, result tables become cards on a phone). Text is
# set in the site's own font (inlined, from node_modules), so the pages measure the same on any
# machine, whatever fonts it has installed (issue 31).
BASE_CSS = font_css(inline=True) + f"""
body {{ margin: 0; font: 16px/1.6 "{TEXT_FAMILY}"; }}
.md-content__inner {{ margin: 0 16px; }}
pre {{ position: relative; margin: 1em 0; font: 13px/1.4 monospace; }}
pre > code {{ display: block; overflow: auto; white-space: pre; padding: 0.8em 1em;
  background: linear-gradient(to left, #eee 50%, transparent) right / 2em 100% no-repeat local,
              radial-gradient(farthest-side at 100% 50%, rgba(0,0,0,.4), transparent) right / 1em 100% no-repeat scroll, #eee; }}
.md-code__nav {{ position: absolute; top: 0.2em; right: 0.2em; width: 1.6em; height: 1.6em; }}
.gutter pre {{ padding-right: 2.3em; background: #eee; }}
p {{ max-width: {PROSE_MEASURE}; }}
.posenc-table table {{ border-collapse: collapse; font-size: 12.8px; }}
.posenc-table :is(th, td) {{ padding: 0.4em; white-space: nowrap; }}
@media (max-width: 44.9375em) {{
  .posenc-table--cards :is(table, tbody, tr, th, td) {{ display: block; }}
  .posenc-table--cards thead {{ display: none; }}
}}
"""


def page(body: str, css: str = "") -> str:
    return (f"<!doctype html><html><head><meta charset='utf-8'><style>{BASE_CSS}{css}</style></head>"
            f'<body><div class="md-content"><article class="md-content__inner md-typeset">{body}</article></div>'
            "</body></html>")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


def measure(browser: Any, html: str, width: int, tmp_path: Path, color_scheme: str = "light",
            init_script: str | None = None, script: str = reader_checks.IN_PAGE_READER) -> tuple[Any, Any]:
    """(``script``'s measurements, IN_PAGE_READER by default; the first-paint scheme) of ``html`` at ``width`` px."""
    file = tmp_path / f"page-{width}-{abs(hash(html)) % 10**8}.html"
    file.write_text(html, encoding="utf-8")
    context = browser.new_context(viewport={"width": width, "height": 800}, color_scheme=color_scheme)
    context.add_init_script(init_script or reader_checks.FIRST_PAINT_SCHEME)
    try:
        tab = context.new_page()
        tab.goto(file.as_uri(), wait_until="load")
        tab.evaluate("async () => { await document.fonts.ready; }")
        first = tab.evaluate("() => window.__posencFirstScheme === undefined ? null : window.__posencFirstScheme")
        return tab.evaluate(script), first
    finally:
        context.close()


LONG_LINE = ">>> " + "x = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0])  # a long line"


def test_code_lines_that_wrap_are_reported(browser: Any, tmp_path: Path) -> None:
    block = f"<pre><code>{LONG_LINE}\n>>> y = 1</code></pre>"
    wrapped, _ = measure(browser, page(block, "pre > code { white-space: pre-wrap; }"), 390, tmp_path)
    assert any("wrap" in line for line in reader_checks.code_problems(wrapped["code"], 390))
    clean, _ = measure(browser, page(block), 390, tmp_path)
    assert clean["code"][0]["scrolls"] and reader_checks.code_problems(clean["code"], 390) == []


def test_code_that_scrolls_without_a_cue_is_reported(browser: Any, tmp_path: Path) -> None:
    block = f"<pre><code>{LONG_LINE}</code></pre>"
    bare, _ = measure(browser, page(block, "pre > code { background: #eee; }"), 390, tmp_path)
    assert any("no edge cue" in line for line in reader_checks.code_problems(bare["code"], 390))


def test_tables_wider_than_a_phone_are_reported(browser: Any, tmp_path: Path) -> None:
    header = "".join(f"<th>recall@{n}</th>" for n in (64, 128, 256, 512, 1024, 2048))
    cells = "".join(f'<td data-label="recall@{n}">0.55<small>0.29–0.74</small></td>' for n in (64, 128, 256, 512, 1024, 2048))
    table = (f'<figure class="posenc-table posenc-table--{{}}" id="table-x"><div class="posenc-table__scroll" style="overflow-x:auto">'
             f"<table><thead><tr><th>method</th>{header}</tr></thead><tbody><tr><th>rope-randomized</th>{cells}</tr></tbody>"
             "</table></div></figure>")
    wide, _ = measure(browser, page(table.format("compact")), 390, tmp_path)
    assert reader_checks.table_problems(wide["tables"], 390)
    cards, _ = measure(browser, page(table.format("cards")), 390, tmp_path)
    assert reader_checks.table_problems(cards["tables"], 390) == []
    api = ('<table><tbody><tr class="doc-section-item"><td><code>base</code></td><td><code>float</code></td>'
           f'<td><p>{"the RoPE base, " * 12}</p></td><td style="white-space:nowrap"><code>10000.0</code></td></tr></tbody></table>')
    hidden_default, _ = measure(browser, page(api, "table { width: 900px; }"), 390, tmp_path)
    assert reader_checks.table_problems(hidden_default["tables"], 390)


def test_small_figure_text_is_reported_as_displayed(browser: Any, tmp_path: Path) -> None:
    svg = ('<svg xmlns="http://www.w3.org/2000/svg" width="518pt" height="200pt" viewBox="0 0 518 200">'
           '<text x="10" y="100" style="font-size: 10.5px; font-family: sans-serif">axis label</text></svg>')
    (tmp_path / "figure.svg").write_text(svg)
    html = '<figure class="posenc-figure"><img src="figure.svg" style="width:{}px"><figcaption>A</figcaption></figure>'
    shrunk, _ = measure(browser, page(html.format(358)), 390, tmp_path)  # a wide figure squeezed into a phone
    problems, smallest = reader_checks.figure_text_problems(tmp_path, "", shrunk["figures"], 390)
    assert problems and smallest is not None and smallest < 11
    natural, _ = measure(browser, page(html.format(691)), 1280, tmp_path)
    assert reader_checks.figure_text_problems(tmp_path, "", natural["figures"], 1280)[0] == []


def test_notebook_plots_too_small_even_enlarged_or_without_the_button_are_reported(browser: Any, tmp_path: Path) -> None:
    """A notebook's inline SVG plot scaled into a phone's column: reported without the button,
    not with it (the button opens it at its natural size), and reported at any width when its
    text is below the minimum at its natural size."""
    svg = ('<svg class="posenc-plot" xmlns="http://www.w3.org/2000/svg" width="{0}pt" height="200pt" '
           'viewBox="0 0 {0} 200" style="max-width:100%;height:auto" aria-label="Plot: x">'
           '<text x="10" y="100" style="font: {1}px sans-serif">axis label</text></svg>{2}')
    button = '<button type="button" class="posenc-enlarge md-button">Enlarge the plot</button>'
    cell = '<div class="jupyter-wrapper"><div class="jp-OutputArea-output">{}</div></div>'
    bare, _ = measure(browser, page(cell.format(svg.format(526, 10.5, ""))), 390, tmp_path)
    assert bare["notebookPlots"][0]["shown"] < 8 and bare["notebookPlots"][0]["enlarged"] > 13
    assert any("no 'Enlarge the plot' button" in line for line in reader_checks.notebook_plot_problems(bare["notebookPlots"], 390))
    with_button, _ = measure(browser, page(cell.format(svg.format(526, 10.5, button))), 390, tmp_path)
    assert reader_checks.notebook_plot_problems(with_button["notebookPlots"], 390) == []
    tiny, _ = measure(browser, page(cell.format(svg.format(526, 7, button))), 1280, tmp_path)
    assert any("natural size" in line for line in reader_checks.notebook_plot_problems(tiny["notebookPlots"], 1280))


def test_a_copy_button_over_code_is_reported(browser: Any, tmp_path: Path) -> None:
    block = f'<div class="highlight"><pre><nav class="md-code__nav"></nav><code>{LONG_LINE}</code></pre></div>'
    covered, _ = measure(browser, page(block), 390, tmp_path)
    assert reader_checks.copy_button_problems(covered["buttons"], 390)
    gutter, _ = measure(browser, page(f'<div class="gutter">{block}</div>'), 390, tmp_path)
    assert reader_checks.copy_button_problems(gutter["buttons"], 390) == []


def test_prose_wider_than_100_characters_is_reported(browser: Any, tmp_path: Path) -> None:
    text = "<p>" + "A rotation by an angle proportional to the position turns each pair of coordinates. " * 6 + "</p>"
    unbounded, _ = measure(browser, page(text, "p { max-width: none; }"), 1280, tmp_path)
    problems, longest = reader_checks.prose_problems(unbounded["prose"], 1280)
    assert problems and longest is not None and longest > 100
    measured, _ = measure(browser, page(text), 1280, tmp_path)
    assert reader_checks.prose_problems(measured["prose"], 1280)[0] == []


def test_exercises_without_as_many_solutions_are_reported(browser: Any, tmp_path: Path) -> None:
    section = ('<h2 id="exercises">Exercises</h2><ol><li>One</li><li>Two</li>{}<li>Three</li></ol>'
               '<details class="success"><summary>Solution</summary><ol><li>a</li><li>b</li><li>c</li></ol></details>')
    split, _ = measure(browser, page(section.format("<li>40. a line that became an item</li>")), 1280, tmp_path)
    assert reader_checks.exercise_problems(split["exercises"]) == ["#exercises: 4 exercises but 3 solutions"]
    whole, _ = measure(browser, page(section.format("")), 1280, tmp_path)
    assert reader_checks.exercise_problems(whole["exercises"]) == []


def test_display_math_wider_than_its_column_is_reported(browser: Any, tmp_path: Path) -> None:
    math = '<div class="arithmatex" style="overflow:auto"><span style="display:inline-block;width:900px">x</span></div>'
    wide, _ = measure(browser, page(math), 390, tmp_path)
    failures, _ = reader_checks.overflow_problems("page", 390, wide["overflow"])
    assert failures


def test_the_light_palette_flashing_for_a_dark_reader_is_reported(browser: Any, tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "hooks"))
    from site_weight import palette_script

    palettes = [{"media": "(prefers-color-scheme: light)", "scheme": "default"},
                {"media": "(prefers-color-scheme: dark)", "scheme": "slate"}]
    body = '<header class="md-header">posenc</header><p>text</p>'
    html = "<!doctype html><html><head></head><body data-md-color-scheme=\"default\">{}" + body + "</body></html>"
    flash, first = measure(browser, html.format(""), 390, tmp_path, color_scheme="dark")
    assert first == "default"  # what the check reports as a palette flash
    fixed, first = measure(browser, html.format(palette_script(palettes)), 390, tmp_path, color_scheme="dark")
    assert first == "slate"


def test_a_first_view_over_budget_is_reported() -> None:
    heavy = PageResult("page", loaded={"page/index.html": 400_000, "assets/katex/katex.min.js": 700_000})
    assert weight_problems(heavy, 1.0) and "1.10 MB" in weight_problems(heavy, 1.0)[0]
    assert weight_problems(PageResult("page", loaded={"page/index.html": 400_000}), 1.0) == []


# Issue 32's polish: states and sizes (tests/site/reader_states.py).
BUTTON = '<p><button class="md-button" aria-pressed="false">Pause</button></p>'
BUTTON_CSS = ".md-button {{ color: #4051b5; background: #fff; border: 1px solid; }} .md-button:{state} {{ {fill} }}"


@pytest.mark.parametrize("state", ["focus", "is([aria-pressed=true])"])
def test_a_button_unreadable_in_its_active_state_is_reported(browser: Any, tmp_path: Path, state: str) -> None:
    accent = BUTTON_CSS.format(state=state, fill="background: #ff6e42; transition: background 1s;")  # the old Pause
    states, _ = measure(browser, page(BUTTON, accent), 1280, tmp_path, script=reader_states.BUTTON_STATES)
    problems = reader_states.button_problems(states, 1280)
    assert problems and all("Pause" in line for line in problems) and "rest" not in " ".join(problems)
    filled = BUTTON_CSS.format(state=state, fill="background: #4051b5; color: #fff;")
    states, _ = measure(browser, page(BUTTON, filled), 1280, tmp_path, script=reader_states.BUTTON_STATES)
    assert len(states) == 3 and reader_states.button_problems(states, 1280) == []


DETAILS = ('<div style="width: 900px"><details class="note" style="border: 1px solid; padding: 0 12px">'
           '<summary style="display: block; margin: 0 -12px; padding: 4px 12px; background: #eee">Check it</summary>'
           "<p>x</p></details></div>")


def test_a_bar_short_of_its_box_is_reported(browser: Any, tmp_path: Path) -> None:
    short, _ = measure(browser, page(DETAILS, "summary { max-width: 563px; }"), 1280, tmp_path, script=reader_states.IN_PAGE_STATES)
    assert reader_states.bar_problems(short["bars"], 1280)
    full, _ = measure(browser, page(DETAILS), 1280, tmp_path, script=reader_states.IN_PAGE_STATES)
    assert reader_states.bar_problems(full["bars"], 1280) == []


def test_code_under_11_px_on_a_phone_is_reported(browser: Any, tmp_path: Path) -> None:
    block = '<div class="admonition" style="font-size: 12.8px"><p>Call <code>apply_rope</code>.</p></div>'
    small, _ = measure(browser, page(block, "code { font-size: 0.85em; }"), 390, tmp_path, script=reader_states.IN_PAGE_STATES)
    assert reader_states.code_size_problems(small["code"], 390)
    fixed, _ = measure(browser, page(block, "code { font-size: max(0.85em, 11px); }"), 390, tmp_path,
                       script=reader_states.IN_PAGE_STATES)
    assert reader_states.code_size_problems(fixed["code"], 390) == []


def test_tex_in_a_listed_docstring_is_reported(browser: Any, tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "hooks"))
    from listing_math import plain_listing_math

    listing = ('<pre><code><span class="k">def</span> <span class="nf">init</span>():\n    '
               '<span class="sd">&quot;&quot;&quot;Weights from \\(\\mathcal{N}(0, 0.1^2)\\).&quot;&quot;&quot;</span></code></pre>')
    raw, _ = measure(browser, page(listing), 1280, tmp_path, script=reader_states.IN_PAGE_STATES)
    assert reader_states.listing_problems(raw["listings"])
    plain, _ = measure(browser, page(plain_listing_math(listing)), 1280, tmp_path, script=reader_states.IN_PAGE_STATES)
    assert reader_states.listing_problems(plain["listings"]) == []


def test_a_result_table_scrolling_on_a_desktop_is_reported(browser: Any, tmp_path: Path) -> None:
    cells = "".join(f"<td>{'a setting in words ' * 3}</td>" for _ in range(8))
    table = ('<figure class="posenc-table"><div class="posenc-table__scroll" aria-label="zoo table" style="overflow-x: auto">'
             f"<table><tbody><tr>{cells}</tr></tbody></table></div></figure>")
    wide, _ = measure(browser, page(table), 1280, tmp_path, script=reader_states.IN_PAGE_STATES)  # cells never wrap
    assert reader_states.desktop_table_problems(wide["tables"], 1280)
    wrapped, _ = measure(browser, page(table, ".posenc-table :is(th, td) { white-space: normal; }"), 1280, tmp_path,
                         script=reader_states.IN_PAGE_STATES)
    assert reader_states.desktop_table_problems(wrapped["tables"], 1280) == []
