"""The reader's checks of ``check_site``: what fits, what reads, what copies (issue 12).

Run inside `tests.site.check_site.check_page` on every page:

* **Overflow** at 1280 px (the desktop pass) and at 390 px (a phone, a second visit): display
  math (``div.arithmatex``) and code blocks (``pre > code``) wider than their column. Counted per
  page; any overflow fails unless `OVERFLOW_EXCEPTIONS` names the page and the kind of block,
  with the reason it is tolerated for now.
* **Figure text as displayed** at 1280 px: the smallest ``font-size`` in each figure's SVG times
  the scale at which the page shows it; below `MIN_FIGURE_TEXT_PX` fails.
* **Copy buttons**: the text Material's button copies (the code element's ``data-copy``
  attribute when it has one, else its rendered text: the rule in Material's bundle) must parse as
  Python for ``python`` and ``pycon`` blocks (API signatures, which are read and not run, aside).
* **Notebook plots in the dark palette**: output images must be SVG on a transparent background
  (a PNG or an opaque white figure shows as a white box on the dark page).
* **Search excerpts** (no browser): the search index holds no TeX command outside code.

Method colours (one per method, both palettes) and line contrast are checked where the figures
are drawn, in ``tests/test_figures.py``: there each line's method and colour are known exactly.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

MIN_FIGURE_TEXT_PX = 11.0
PHONE = {"width": 390, "height": 844}

# page label -> {"math" | "code" | "math@390" | "code@390": reason}. A page listed here reports its
# overflowing blocks of that kind without failing. None is tolerated today: with the table of
# contents in the left sidebar (mkdocs.yml: toc.integrate) the text column is about 940 px at
# 1280, and every block and equation fits it; on a phone, code wraps and equations are broken.
OVERFLOW_EXCEPTIONS: dict[str, dict[str, str]] = {}

IN_PAGE_READER = r"""() => {
  const out = {overflow: {math: [], code: []}, figures: [], copies: [], notebookImages: []};
  const short = (text) => text.replace(/\s+/g, " ").trim().slice(0, 60);
  const visible = (el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== "hidden";
  for (const el of document.querySelectorAll(".md-content div.arithmatex")) {
    if (visible(el) && el.scrollWidth > el.clientWidth + 1) {
      out.overflow.math.push(`${el.scrollWidth - el.clientWidth} px: ${short(el.textContent)}`);
    }
  }
  for (const el of document.querySelectorAll(".md-content pre > code, .md-content .highlight-ipynb pre")) {
    if (visible(el) && el.scrollWidth > el.clientWidth + 1) {
      const first = (el.textContent.split("\n").find((line) => line.length > 60) || el.textContent);
      out.overflow.code.push(`${el.scrollWidth - el.clientWidth} px: ${short(first)}`);
    }
  }
  for (const img of document.querySelectorAll("figure.posenc-figure img")) {
    const rect = img.getBoundingClientRect();
    if (visible(img) && rect.width > 0) out.figures.push({src: img.getAttribute("src"), width: rect.width});
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
  const opaque = (fill) => {
    const match = (fill || "").match(/rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)(?:,\s*([\d.]+))?\)/);
    if (match) return (match[4] === undefined || Number(match[4]) > 0.1) && Number(match[1]) + Number(match[2]) + Number(match[3]) > 600;
    return /^#(f{3}|f{6})$|^white$/i.test((fill || "").trim());
  };
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

_FONT_SIZE = re.compile(r"font-size:\s*([\d.]+)px")
_VIEWBOX = re.compile(r'viewBox="[\d.\-]+ [\d.\-]+ ([\d.]+) [\d.]+"')


def svg_text_scale(path: Path) -> tuple[float, float] | None:
    """(smallest font size, viewBox width) of a matplotlib SVG, in its user units; None if it has no text."""
    text = path.read_text(encoding="utf-8", errors="replace")
    sizes = [float(size) for size in _FONT_SIZE.findall(text)]
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
    """(failures, tolerated) lines for the overflowing blocks of one page at one width."""
    failures: list[str] = []
    tolerated: list[str] = []
    for kind, blocks in overflow.items():
        reason = OVERFLOW_EXCEPTIONS.get(page, {}).get(kind if width > 400 else f"{kind}@390")
        for block in blocks:
            line = f"{kind} block wider than its column at {width} px by {block}"
            (tolerated if reason else failures).append(line + (f" [exception: {reason}]" if reason else ""))
    return failures, tolerated


def figure_text_problems(site_dir: Path, page_url: str, figures: list[dict[str, Any]]) -> tuple[list[str], float | None]:
    """Figures whose smallest text is below `MIN_FIGURE_TEXT_PX` as displayed; and the page's smallest."""
    problems: list[str] = []
    smallest: float | None = None
    for figure in figures:
        src = figure["src"].split("#")[0]
        if not src.endswith(".svg"):
            continue
        file = (site_dir / page_url / src).resolve()
        measured = svg_text_scale(file) if file.is_file() else None
        if measured is None:
            continue
        font, box_width = measured
        shown = font * figure["width"] / box_width
        smallest = shown if smallest is None else min(smallest, shown)
        if shown < MIN_FIGURE_TEXT_PX - 0.05:
            problems.append(f"{Path(src).name}: smallest text {shown:.1f} px as displayed "
                            f"(font {font:g} at {figure['width']:.0f} px of {box_width:g}), minimum {MIN_FIGURE_TEXT_PX:g} px")
    return problems, smallest


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
