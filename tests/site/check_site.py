"""Check the built site the way a reader meets it: in a browser, in both palettes.

Run after ``mkdocs build`` (``make check-site`` does both)::

    python -m tests.site.check_site --site-dir site --screenshots site-screenshots

What it does, in order:

1. **Links and anchors** (no browser): parses every ``*.html`` under the site with
   ``html.parser`` and checks that each internal ``href``/``src``/``srcset`` points to a file that
   exists and, when it carries ``#fragment``, that the target page has an element with that id.
   Links that start with ``/`` are refused (they break when the site is published under a
   sub-path, as on GitHub Pages), except on ``404.html``, which MkDocs writes with root-relative
   links on purpose. External links are never fetched.
2. **Browser** (Debian's ``/usr/bin/chromium`` driven by Playwright, headless, a fresh profile
   and a fresh browser context per page, so every page is loaded cold): serves the site on
   ``127.0.0.1`` from a thread and opens every ``index.html`` and ``404.html``. It fails on:
   a console error or uncaught page error; a failed request or an HTTP status >= 400; a
   request to any host but the local server (such requests are blocked and reported); an
   ``<img>`` that did not load; math left as raw TeX (an ``.arithmatex`` element without
   rendered KaTeX, a KaTeX error, or ``\\(``, ``\\[``, ``$$``, ``\\command`` in visible text
   outside code); a figure (``figure.posenc-figure``) without both a ``#only-light`` and a
   ``#only-dark`` image, or with alt text shorter than 8 words; the wrong variant showing in a
   palette. The page is checked in the light palette, then Material's palette toggle is
   clicked and everything is checked again in the dark palette.
3. **Accessibility**: axe-core (``node_modules/axe-core``, installed by ``npm ci``) runs on every
   page in both palettes; any violation of impact "serious" or "critical" fails, with the rule,
   its help text and the offending elements.
4. **First-view weight**: the bytes of every file a plain cold visit requested (light palette,
   until the network is idle, before this script forces lazy images in): HTML, images (the
   hidden variant of a figure too, unless its ``<img>`` has ``loading="lazy"``), CSS, JS, fonts,
   and the search index if it was asked for (the site asks for it only when the reader opens
   search), counted uncompressed from the files on disk; a page over ``--budget-mb`` (1 MB)
   fails. The gzip size (what GitHub Pages and most static hosts send) is printed beside it.
5. **Screenshots**: a full-page PNG of every page in each palette under ``--screenshots``, at
   1280 px and (``*-390.png``) at 390 px, the width of a phone.
6. **Reading** (``tests/site/reader_checks.py``), at 1280 and 390 px in both palettes: code
   lines that wrap, code that scrolls with no cue, result and API tables that do not fit a
   phone, figure text below 11 px as displayed (the narrow layout on a phone), copy buttons over
   code, prose lines over 100 characters (also at 1920 px), exercises without as many solutions,
   display math wider than its column; copy-button text that does not parse as Python, notebook
   plots that would show as white boxes in the dark palette, TeX left in the search index; and
   (``tests/site/reader_states.py``) buttons under 4.5:1 when focused or pressed (at 1280 px),
   collapsible and admonition bars short of their box, code under 11 px, TeX in listed docstrings.
7. **No palette flash**: the 390-px visit comes from a reader whose system prefers dark; the
   colour scheme when the page header is parsed (before the theme's script runs) must be dark.
8. **Search**: on the home page, opening the search box and typing a word must give results (the
   index is fetched on demand).

Prints a table with one row per page and then every problem found; exits 1 if any.
The same browser pass, without the audits, gives ``benchmarks/bench_site.py`` its page sizes
(:func:`measure_transfer`).

The steps live beside this module: ``site_pages`` (the pages, the base path, the local server),
``site_links`` (1), ``site_browser`` (a cold visit of one page in Chromium and the weight counted
from it, 4), ``site_audits`` (2, 3 and 5 to 8 on one page) and ``reader_checks`` (6); this module
runs them and prints the report.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

from tests.site import reader_checks
from tests.site.site_audits import check_page, check_search
from tests.site.site_browser import AXE, CHROMIUM, SEARCH_INDEX, PageResult, _launch, gzip_bytes, measure_transfer
from tests.site.site_links import check_links
from tests.site.site_pages import Problem, base_path, page_label, serve, site_pages

# CHROMIUM and measure_transfer: benchmarks/bench_site.py imports them from here, with BUDGET_MB.
__all__ = ["BUDGET_MB", "CHROMIUM", "main", "measure_transfer"]

BUDGET_MB = 1.0


# ----------------------------------------------------------------------------------------------
# report


def _table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    numeric = [all(re.fullmatch(r"[\d.,]+", str(row[i])) for row in rows) for i in range(len(header))]
    lines = []
    for row in [header, ["-" * w for w in widths], *rows]:
        cells = [str(cell).rjust(w) if num else str(cell).ljust(w) for cell, w, num in zip(row, widths, numeric)]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site-dir", type=Path, default=Path("site"))
    parser.add_argument("--screenshots", type=Path, default=Path("site-screenshots"), help="folder for the PNGs")
    parser.add_argument("--no-screenshots", action="store_true")
    parser.add_argument("--budget-mb", type=float, default=BUDGET_MB, help="largest allowed page weight, MB (10^6 bytes)")
    parser.add_argument("--page", action="append", default=[], metavar="LABEL", help="check only these pages (e.g. index, why-position, 404)")
    args = parser.parse_args(argv)

    site_dir: Path = args.site_dir.resolve()
    if not (site_dir / "index.html").is_file():
        print(f"{site_dir} has no index.html: build the site first (make build)", file=sys.stderr)
        return 2
    if not AXE.is_file():
        print(f"{AXE} is missing: run `npm ci` (make install)", file=sys.stderr)
        return 2
    screenshots: Path | None = None if args.no_screenshots else args.screenshots
    if screenshots is not None:
        screenshots.mkdir(parents=True, exist_ok=True)
        for old in screenshots.glob("*.png"):
            old.unlink()

    from playwright.sync_api import sync_playwright

    started = time.perf_counter()
    base = base_path(site_dir)
    link_problems, links_checked = check_links(site_dir, base)
    link_problems += [Problem("search", "search index", line) for line in reader_checks.search_index_problems(site_dir)]
    pages = [p for p in site_pages(site_dir) if not args.page or page_label(p) in args.page]
    if args.page and len(pages) != len(set(args.page)):
        print(f"unknown page label in {args.page}; known: {[page_label(p) for p in site_pages(site_dir)]}", file=sys.stderr)
        return 2
    results: list[PageResult] = []
    with serve(site_dir, base) as origin, sync_playwright() as playwright:
        browser = _launch(playwright)
        try:
            print(f"checking {len(pages)} pages served at {origin}{base} with Chromium {browser.version}", flush=True)
            link_problems += [Problem("index", "search", line) for line in check_search(browser, origin, base)]
            for page in pages:
                result = check_page(browser, origin, base, site_dir, page, screenshots, args.budget_mb)
                results.append(result)
                print(f"  {result.page:<28} {'ok' if not result.problems else f'{len(result.problems)} problem(s)'} ({result.seconds:.1f} s)", flush=True)
        finally:
            browser.close()

    links_by_page: dict[str, int] = {}
    for problem in link_problems:
        links_by_page[problem.page] = links_by_page.get(problem.page, 0) + 1
    rows = []
    for r in results:
        a11y = sum(1 for p in r.problems if p.check.startswith("a11y"))
        rows.append([
            r.page,
            r.schemes.get("light", "-"),
            r.schemes.get("dark", "-"),
            str(r.requests),
            f"{r.page_bytes / 1e3:,.0f}",
            f"{r.loaded.get(SEARCH_INDEX, 0) / 1e3:,.0f}",
            f"{gzip_bytes(site_dir, r.loaded) / 1e3:,.0f}",
            str(a11y),
            str(sum(r.minor_axe.values())),
            str(links_by_page.get(r.page, 0)),
            str(len(r.problems) + links_by_page.get(r.page, 0)),
        ])
    print()
    print(_table(rows, ["page", "light", "dark", "requests", "page kB", "search kB", "gzip kB (all)", "a11y serious+", "a11y other nodes", "bad links", "problems"]))
    heaviest = max(results, key=lambda r: r.page_bytes, default=None)
    if heaviest is not None:
        print(f"\nheaviest first view: {heaviest.page}, {heaviest.page_bytes / 1e6:.2f} MB uncompressed "
              f"(budget {args.budget_mb} MB), {gzip_bytes(site_dir, heaviest.loaded) / 1e6:.2f} MB gzip")
    print("\nreading: display math wider than its column, code blocks that scroll sideways (with a cue), at 1280 and "
          "390 px; smallest figure text as displayed; longest prose line (characters) at 1280 and 1920 px; copy "
          "buttons whose text parses")
    keys = ["math@1280", "code@1280", "math@390", "code@390", "figure px@1280", "figure px@390", "prose@1280", "prose@1920", "copies"]
    print(_table([[r.page, *(r.reading.get(key, "-") for key in keys)] for r in results],
                 ["page", "math 1280", "code 1280", "math 390", "code 390", "fig px 1280", "fig px 390", "prose 1280",
                  "prose 1920", "copies ok"]))
    tolerated = [f"  {r.page}: {line}" for r in results for line in r.tolerated]
    if tolerated:
        print(f"\n{len(tolerated)} overflowing block(s) tolerated by OVERFLOW_EXCEPTIONS (to fix):")
        print("\n".join(tolerated))
    minor: dict[str, int] = {}
    for r in results:
        for rule, nodes in r.minor_axe.items():
            minor[rule] = minor.get(rule, 0) + nodes
    if minor:
        print("axe findings below 'serious' (not failures): " + ", ".join(f"{rule}: {n} nodes" for rule, n in sorted(minor.items())))
    print(f"internal links and anchors checked: {links_checked} distinct (page, link) pairs")
    if screenshots is not None:
        print(f"screenshots: {screenshots}/ ({len(list(screenshots.glob('*.png')))} PNGs)")

    problems = link_problems + [p for r in results for p in r.problems]
    if problems:
        print(f"\n{len(problems)} problem(s):")
        for problem in problems:
            print(f"  {problem.page}: {problem.check}: {problem.detail}")
    print(f"\nsite check {'FAILED' if problems else 'passed'}: {len(results)} pages, both palettes, "
          f"{len(problems)} problem(s), {time.perf_counter() - started:.0f} s")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
