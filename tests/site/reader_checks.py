"""The reader's checks of ``check_site``: what fits, what reads, what copies (issues 12 and 27).

`IN_PAGE_READER` measures the page as shown (run by `tests.site.check_site` on every page, at
1280 and at 390 px, in both palettes); the functions below judge the measurements, so the same
judgement runs on the site and on the small planted-defect pages of
``tests/site/test_reader_checks.py``, which prove that each check fails when it should.

* **Code lines never wrap** (`code_problems`): a code block (``pre > code``, notebook cells) taller
  than its lines fails; one wider than its column must scroll with the edge cue of ``posenc.css``
  (a gradient background), else it fails too.
* **Tables fit a phone** (`table_problems`): at 390 px no cell of a result table
  (``figure.posenc-table``) or of an API parameter table lies outside the text column, and their
  boxes do not scroll.
* **Figure text as displayed** (`figure_text_problems`): the smallest ``font-size`` in the SVG
  the browser chose (``currentSrc``: the narrow layout on a phone) times the scale at which the
  page shows it; below `MIN_FIGURE_TEXT_PX` fails, at 1280 and at 390 px.
* **Notebook plots** (`notebook_plot_problems`): a notebook's plot is its own matplotlib output,
  drawn once at one width and scaled to the column (6.3 px text at 390 px in the RoPE lab); it
  fails if its text is below `MIN_FIGURE_TEXT_PX` at its natural size (what "Enlarge the plot"
  shows), or if it is shown below that without the button.
* **The copy button covers no code** (`copy_button_problems`): its box may not meet a line of
  text of its block, nor the scrolling part of a block that scrolls sideways.
* **Prose measure** (`prose_problems`): paragraphs and list items of two lines or more hold at
  most `MAX_PROSE_CHARACTERS` characters a line (full lines, from the element's width and its
  text's average character width), checked at 1280 and 1920 px.
* **Exercises and solutions** (`exercise_problems`): under an "Exercises" heading, as many
  numbered exercises as numbered solutions.
* **Display math** wider than its column (`overflow_problems`): fails, at both widths.
* **Copy text parses** (`copy_parses`), **notebook plots in the dark palette**, **TeX in the
  search index** (`search_index_problems`), as before.

Method colours (one per method, both palettes) and line contrast are checked where the figures
are drawn, in ``tests/test_figures.py``: there each line's method and colour are known exactly.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

MIN_FIGURE_TEXT_PX = 11.0
MAX_PROSE_CHARACTERS = 100
PHONE = {"width": 390, "height": 844}
WIDE = {"width": 1920, "height": 1080}

# page label -> {"math" | "math@390": reason}: display math that may overflow, with the reason.
OVERFLOW_EXCEPTIONS: dict[str, dict[str, str]] = {}

IN_PAGE_READER = r"""() => {
  const out = {overflow: {math: [], code: []}, code: [], tables: [], figures: [], copies: [], buttons: [],
               prose: [], exercises: [], notebookImages: [], notebookPlots: []};
  const short = (text) => text.replace(/\s+/g, " ").trim().slice(0, 60);
  const visible = (el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== "hidden"
    && getComputedStyle(el).display !== "none";
  const content = document.querySelector(".md-content__inner") || document.body;
  const column = content.getBoundingClientRect();
  for (const el of document.querySelectorAll(".md-content div.arithmatex")) {
    if (visible(el) && el.scrollWidth > el.clientWidth + 1) {
      out.overflow.math.push(`${el.scrollWidth - el.clientWidth} px: ${short(el.textContent)}`);
    }
  }
  // code: wrapped lines (taller than its lines) and sideways scrolling without the edge cue
  for (const el of document.querySelectorAll(".md-content pre > code, .md-content .highlight-ipynb pre, .md-content .jp-OutputArea-output pre")) {
    if (!visible(el)) continue;
    const style = getComputedStyle(el);
    const lines = el.textContent.replace(/\n$/, "").split("\n");
    const fontSize = parseFloat(style.fontSize);
    const lineHeight = style.lineHeight === "normal" ? 1.2 * fontSize : parseFloat(style.lineHeight);
    const height = el.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom);
    const scrolls = el.scrollWidth > el.clientWidth + 1;
    const longest = lines.reduce((a, b) => (b.length > a.length ? b : a), "");
    if (scrolls) out.overflow.code.push(`${el.scrollWidth - el.clientWidth} px: ${short(longest)}`);
    out.code.push({first: short(longest), lines: lines.length, height, lineHeight, scrolls,
                   cue: /gradient/.test(style.backgroundImage)});
  }
  // tables that must fit a phone: result tables and API parameter tables
  const tables = [...document.querySelectorAll(".md-content figure.posenc-table table, .md-content table")]
    .filter((t, i, all) => all.indexOf(t) === i && (t.closest("figure.posenc-table") || t.querySelector("tr.doc-section-item")));
  for (const table of tables) {
    if (!visible(table)) continue;
    const name = (table.closest("figure.posenc-table") || {}).id || short(table.querySelector("tr").textContent);
    let outside = 0;
    let first = "";
    for (const cell of table.querySelectorAll("th, td")) {
      if (!visible(cell)) continue;
      const rect = cell.getBoundingClientRect();
      if (rect.width > 0 && (rect.right > column.right + 1 || rect.left < column.left - 1)) {
        outside += 1;
        first = first || short(cell.textContent);
      }
    }
    const box = table.closest(".posenc-table__scroll, .md-typeset__table, .md-typeset__scrollwrap") || table;
    out.tables.push({name, outside, first, scrolls: box.scrollWidth > box.clientWidth + 1 || table.scrollWidth > table.clientWidth + 1});
  }
  for (const img of document.querySelectorAll("figure.posenc-figure img")) {
    const rect = img.getBoundingClientRect();
    if (visible(img) && rect.width > 0) out.figures.push({src: img.currentSrc || img.src, width: rect.width});
  }
  // What Material's copy button copies (its bundle: the closest [data-copy] attribute, else the
  // element's innerText, trimmed at the end); buttons are added lazily, so every block is read
  for (const code of document.querySelectorAll(".md-content pre > code")) {
    if (code.closest(".doc-signature")) continue; // an API signature is read, not run
    const block = code.closest("[class*='language-']");
    const language = block ? ([...block.classList].find((c) => c.startsWith("language-")) || "").slice(9) : "";
    const holder = code.closest("[data-copy]");
    const text = (holder ? holder.getAttribute("data-copy") : code.innerText).trimEnd();
    out.copies.push({language, text, first: short(code.textContent)});
  }
  // copy buttons: their box against the lines of text of their block and its scrolling part
  for (const nav of document.querySelectorAll(".md-content .md-code__nav, .md-content .md-clipboard, .md-content .zeroclipboard-container")) {
    const pre = nav.closest("pre");  // Material's button sits in the pre; a notebook's beside it
    const code = pre ? pre.querySelector("code") : nav.parentElement.querySelector(".highlight-ipynb pre, pre");
    if (!code || !visible(nav)) continue;
    const button = nav.getBoundingClientRect();
    const port = code.getBoundingClientRect();
    const meets = (r) => r.left < button.right - 0.5 && r.right > button.left + 0.5 && r.top < button.bottom - 0.5 && r.bottom > button.top + 0.5;
    const range = document.createRange();
    range.selectNodeContents(code);
    // a line's box runs on past the scrolling part: only what the block shows counts
    const clip = (r) => ({left: Math.max(r.left, port.left), right: Math.min(r.right, port.right),
                          top: Math.max(r.top, port.top), bottom: Math.min(r.bottom, port.bottom)});
    const textHit = [...range.getClientRects()].map(clip).some((r) => r.right > r.left && r.bottom > r.top && meets(r));
    const scrolls = code.scrollWidth > code.clientWidth + 1;
    if (textHit || (scrolls && meets(port))) out.buttons.push({first: short(code.textContent), text: textHit, scrolls});
  }
  // prose: characters in a full line, from the element's width and its text's average width
  const canvas = document.createElement("canvas").getContext("2d");
  for (const el of document.querySelectorAll(".md-content .md-typeset p, .md-content .md-typeset li")) {
    if (!visible(el) || el.closest("table, pre, figure, .md-nav, .posenc-explorer, .jp-OutputArea")) continue;
    if (el.tagName === "LI" && el.querySelector("p, pre, table, ul, ol")) continue; // its paragraphs count
    const text = el.textContent.replace(/\s+/g, " ").trim();
    const style = getComputedStyle(el);
    const lineHeight = style.lineHeight === "normal" ? 1.2 * parseFloat(style.fontSize) : parseFloat(style.lineHeight);
    if (text.length < 40 || el.getBoundingClientRect().height < 1.8 * lineHeight) continue;
    canvas.font = `${style.fontStyle} ${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
    const perCharacter = canvas.measureText(text).width / text.length;
    const width = el.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    out.prose.push({characters: Math.round(width / perCharacter), first: short(text)});
  }
  // exercises: numbered exercises under an "Exercises" heading against the numbered solutions
  for (const heading of document.querySelectorAll(".md-content h2[id^='exercises']")) {
    let exercises = null;
    const solutions = [];
    for (let el = heading.nextElementSibling; el && el.tagName !== "H2"; el = el.nextElementSibling) {
      if (el.tagName === "OL" && exercises === null) exercises = el.querySelectorAll(":scope > li").length;
      if (el.tagName === "DETAILS") solutions.push(el);
    }
    const numbered = solutions.map((d) => d.querySelector(":scope > ol"));
    const answers = solutions.length === 1 && numbered[0] ? numbered[0].querySelectorAll(":scope > li").length : solutions.length;
    out.exercises.push({heading: heading.id, exercises: exercises || 0, solutions: answers});
  }
  const opaque = (fill) => {
    const match = (fill || "").match(/rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)(?:,\s*([\d.]+))?\)/);
    if (match) return (match[4] === undefined || Number(match[4]) > 0.1) && Number(match[1]) + Number(match[2]) + Number(match[3]) > 600;
    return /^#(f{3}|f{6})$|^white$/i.test((fill || "").trim());
  };
  for (const svg of document.querySelectorAll(".jp-OutputArea-output svg.posenc-plot")) {
    const shownWidth = svg.getBoundingClientRect().width;
    const sizes = [...svg.querySelectorAll("text")].map((text) => {
      const matrix = text.getScreenCTM();
      return matrix ? Math.hypot(matrix.a, matrix.b) * parseFloat(getComputedStyle(text).fontSize) : 0;
    }).filter((size) => size > 0);
    if (!visible(svg) || !shownWidth || !sizes.length) continue;
    const next = svg.nextElementSibling;
    out.notebookPlots.push({label: short(svg.getAttribute("aria-label") || "plot"), shown: Math.min(...sizes),
      enlarged: Math.min(...sizes) * svg.width.baseVal.value / shownWidth,  // at its width attribute's size
      button: Boolean(next && next.matches("button.posenc-enlarge"))});
  }
  for (const area of document.querySelectorAll(".jp-OutputArea-output")) {
    for (const img of area.querySelectorAll("img")) {
      const src = img.getAttribute("src") || "";
      if (!src.startsWith("data:image/svg+xml")) {
        out.notebookImages.push(`raster image output (${src.slice(0, 22)}...): draw it as SVG on a transparent background`);
        continue;
      }
      const body = src.split(",", 2)[1] || "";
      const svgText = src.includes(";base64,") ? atob(body) : decodeURIComponent(body);
      const fill = (svgText.match(/<g id="patch_1">\s*<path d="[^"]*"\s*style="fill:\s*([^;"]+)/) || [])[1];
      if (fill && opaque(fill)) out.notebookImages.push(`SVG plot with an opaque light background (${fill})`);
    }
    for (const svg of area.querySelectorAll("svg")) {
      const patch = svg.querySelector("g[id^='figure'] > g[id^='patch'] path");
      const fill = patch ? getComputedStyle(patch).fill : "none";
      if (opaque(fill)) out.notebookImages.push(`SVG output with an opaque light background (${fill})`);
    }
  }
  return out;
}"""

# When the header is parsed, only the inline scripts above it have run (Material's bundle comes at
# the end of the page): the colour scheme then is the one the first paint shows.
FIRST_PAINT_SCHEME = """(() => {
  const record = () => {
    if (window.__posencFirstScheme === undefined && document.querySelector(".md-header")) {
      window.__posencFirstScheme = document.body.getAttribute("data-md-color-scheme");
      return true;
    }
    return false;
  };
  const observer = new MutationObserver(() => { if (record()) observer.disconnect(); });
  observer.observe(document, {childList: true, subtree: true});
})();"""

_FONT_SIZE = re.compile(r"font-size:\s*([\d.]+)px|font:\s*(?:[a-z]+\s+)*([\d.]+)px")
_VIEWBOX = re.compile(r'viewBox="[\d.\-]+ [\d.\-]+ ([\d.]+) [\d.]+"')


def svg_text_scale(path: Path) -> tuple[float, float] | None:
    """(smallest font size, viewBox width) of a matplotlib SVG, in its user units; None if it has no text."""
    text = path.read_text(encoding="utf-8", errors="replace")
    sizes = [float(a or b) for a, b in _FONT_SIZE.findall(text)]
    box = _VIEWBOX.search(text)
    if not sizes or box is None:
        return None
    return min(sizes), float(box[1])


def copy_parses(language: str, text: str) -> str | None:
    """None if ``text`` copied from a ``language`` block is valid Python (or not Python); else why not."""
    if language not in ("python", "py", "pycon"):
        return None
    try:
        ast.parse(text)
    except SyntaxError as error:
        return f"{error.msg} (line {error.lineno})"
    return None


def overflow_problems(page: str, width: int, overflow: dict[str, list[str]]) -> tuple[list[str], list[str]]:
    """(failures, tolerated) lines for display math wider than its column at one width. Code
    may be wider than its column: it scrolls, with a cue (see `code_problems`)."""
    failures: list[str] = []
    tolerated: list[str] = []
    reason = OVERFLOW_EXCEPTIONS.get(page, {}).get("math" if width > 400 else "math@390")
    for block in overflow.get("math", []):
        line = f"math block wider than its column at {width} px by {block}"
        (tolerated if reason else failures).append(line + (f" [exception: {reason}]" if reason else ""))
    return failures, tolerated


def code_problems(blocks: list[dict[str, Any]], width: int) -> list[str]:
    """Code blocks whose lines wrap, and blocks that scroll sideways with no cue."""
    problems = []
    for block in blocks:
        if block["height"] > (block["lines"] + 0.5) * block["lineHeight"]:
            shown = round(block["height"] / block["lineHeight"])
            problems.append(f"code lines wrap at {width} px: {block['lines']} lines shown on {shown} "
                            f"(longest: {block['first']!r})")
        if block["scrolls"] and not block["cue"]:
            problems.append(f"code block scrolls sideways at {width} px with no edge cue: {block['first']!r}")
    return problems


def table_problems(tables: list[dict[str, Any]], width: int) -> list[str]:
    """Result and API tables with cells outside the text column, or that scroll, on a phone."""
    if width > 400:
        return []
    problems = []
    for table in tables:
        if table["outside"]:
            problems.append(f"table {table['name']!r} at {width} px: {table['outside']} cell(s) outside the column "
                            f"(first: {table['first']!r})")
        elif table["scrolls"]:
            problems.append(f"table {table['name']!r} at {width} px scrolls sideways")
    return problems


def copy_button_problems(buttons: list[dict[str, Any]], width: int) -> list[str]:
    return [f"copy button at {width} px covers {'a line of code' if b['text'] else 'the scrolling code'} "
            f"of the block {b['first']!r}" for b in buttons]


def prose_problems(prose: list[dict[str, Any]], width: int) -> tuple[list[str], int | None]:
    """Paragraphs longer than `MAX_PROSE_CHARACTERS` a line; and the page's longest line."""
    longest = max((p["characters"] for p in prose), default=None)
    problems = [f"prose at {width} px runs {p['characters']} characters a line (at most {MAX_PROSE_CHARACTERS}): "
                f"{p['first']!r}" for p in prose if p["characters"] > MAX_PROSE_CHARACTERS]
    return problems[:3], longest


def exercise_problems(sections: list[dict[str, Any]]) -> list[str]:
    return [f"#{s['heading']}: {s['exercises']} exercises but {s['solutions']} solutions"
            for s in sections if s["exercises"] != s["solutions"]]


def figure_text_problems(site_dir: Path, page_url: str, figures: list[dict[str, Any]],
                         width: int = 1280) -> tuple[list[str], float | None]:
    """Figures whose smallest text is below `MIN_FIGURE_TEXT_PX` as displayed; and the page's
    smallest. ``src`` is the URL the browser shows (an absolute URL or one relative to the page)."""
    problems: list[str] = []
    smallest: float | None = None
    for figure in figures:
        src = unquote(urlsplit(figure["src"]).path)
        if not src.endswith(".svg"):
            continue
        file = _site_file(site_dir, page_url, src)
        measured = svg_text_scale(file) if file is not None else None
        if measured is None:
            continue
        font, box_width = measured
        shown = font * figure["width"] / box_width
        smallest = shown if smallest is None else min(smallest, shown)
        if shown < MIN_FIGURE_TEXT_PX - 0.05:
            problems.append(f"{Path(src).name} at {width} px: smallest text {shown:.1f} px as displayed "
                            f"(font {font:g} at {figure['width']:.0f} px of {box_width:g}), minimum {MIN_FIGURE_TEXT_PX:g} px")
    return problems, smallest


def notebook_plot_problems(plots: list[dict[str, Any]], width: int) -> list[str]:
    """Notebook plots whose smallest text is below `MIN_FIGURE_TEXT_PX` at their natural size, or
    shown below it at ``width`` px with no "Enlarge the plot" button under them."""
    problems = []
    for plot in plots:
        if plot["enlarged"] < MIN_FIGURE_TEXT_PX - 0.05:
            problems.append(f"{plot['label']}: smallest text {plot['enlarged']:.1f} px even at its natural size, "
                            f"minimum {MIN_FIGURE_TEXT_PX:g} px")
        elif plot["shown"] < MIN_FIGURE_TEXT_PX - 0.05 and not plot["button"]:
            problems.append(f"{plot['label']}: smallest text {plot['shown']:.1f} px at {width} px, and no "
                            "'Enlarge the plot' button")
    return problems


def _site_file(site_dir: Path, page_url: str, src: str) -> Path | None:
    """The file under ``site_dir`` that a URL path (absolute on the server, or relative) names."""
    if src.startswith("/"):
        parts = src.strip("/").split("/")
        for start in range(len(parts)):  # the site may be served under a base path
            candidate = site_dir.joinpath(*parts[start:])
            if candidate.is_file():
                return candidate
        return None
    candidate = (site_dir / page_url / src).resolve()
    return candidate if candidate.is_file() else None


def search_index_problems(site_dir: Path) -> list[str]:
    """Entries of the search index whose text (outside code) still holds a TeX command."""
    index = site_dir / "search" / "search_index.json"
    if not index.is_file():
        return [f"{index} is missing"]
    problems = []
    for entry in json.loads(index.read_text(encoding="utf-8")).get("docs", []):
        prose = re.sub(r"<pre>.*?</pre>|<code>.*?</code>", " ", f"{entry.get('title', '')} {entry.get('text', '')}", flags=re.DOTALL)
        commands = sorted(set(re.findall(r"\\[A-Za-z]{2,}", prose)))
        if commands:
            problems.append(f"{entry.get('location')}: TeX in the search excerpt: {', '.join(commands[:6])}")
    return problems


def reading_problems(found: dict[str, Any], width: int) -> list[tuple[str, str]]:
    """Every (check, detail) problem of one page's measurements at one width, except figure text
    (which needs the site's files: `figure_text_problems`) and copy parsing."""
    problems = [("code", line) for line in code_problems(found["code"], width)]
    problems += [("table", line) for line in table_problems(found["tables"], width)]
    problems += [("copy button", line) for line in copy_button_problems(found["buttons"], width)]
    if width > 1000:
        problems += [("prose measure", line) for line in prose_problems(found["prose"], width)[0]]
    problems += [("exercises", line) for line in exercise_problems(found["exercises"])]
    problems += [("notebook plot", line) for line in notebook_plot_problems(found["notebookPlots"], width)]
    return problems
