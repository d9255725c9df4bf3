"""Check the interactive explorer (docs/explore.md) in a real browser, against posenc.

Run on a built site (``make check-site`` builds it first)::

    python -m tests.site.check_explorer --site-dir site --screenshots site-screenshots

It builds nothing. It serves ``--site-dir`` on 127.0.0.1 (the server of ``site_pages.py``), opens
the Explore page in Debian's ``/usr/bin/chromium`` through Playwright, and checks:

1. **Parity**: ``window.posencExplorer`` holds exactly the functions of ``FUNCTIONS``. Each is
   called over a grid of parameters (one ``page.evaluate`` per function) and compared with posenc
   in float64, in this process: relative error below 1e-9 (for the sinusoidal table, whose entries
   lie in [-1, 1], the error is taken relative to max(|value|, 1)); T5 buckets equal, except for
   an offset whose log-bucket position lies within float32 rounding of a bucket boundary, where
   the bucket depends on float32 rounding and on the float32 ``log`` used (posenc's float32 formula
   and exact arithmetic can disagree there, and so can PyTorch's float32 log and a correctly
   rounded one: see the T5 section of docs/relative.md): there either bucket next to the boundary
   is accepted, and such offsets are counted. ``ropeInverseFrequencies`` and
   ``ropeAttentionScaling`` are called for every scaling type posenc accepts, enumerated from posenc
   (``SCALING_TYPES`` and its table of required and optional keys), with and without a rotary
   width: a type the JavaScript lacks fails unless it is listed in ``PENDING_SCALING_TYPES``. Their
   arguments reach the page as JSON text read by the port of Python's JSON decoder (so that a float
   stays a float), and bad input must be refused by both with the same kind of error (the exception
   class and what the message is about: ``check_inspector.error_kind``; the wording is Python's). The config functions (``ropeReadConfig``, ``ropeFromConfig``, ``ropeWarnings``) are
   checked by ``check_inspector.py`` on the zoo, every model type and every kind of bad input.
2. **Keyboard**: every visible control of every widget is focused and moved with the keyboard
   (arrow keys for sliders and lists, Space for a checkbox, Enter for a button); the drawing, the
   live readout (``aria-live``) and, for sliders and lists, the announced value must change. Every
   scaling type's own controls are exercised. Each update's time (the widget's ``data-update-ms``,
   computing and drawing) is printed next to the 50 ms budget; a slow update is reported, not
   failed: timings depend on the machine's load, so the budget is judged by ``make bench``
   (``benchmarks/bench_site.py``), never by a test.
3. **Palettes and accessibility**: after Material's palette toggle the drawings must change
   (they follow the palette); axe-core (``node_modules/axe-core``) runs in both palettes and any
   violation of impact "serious" or "critical" fails.
4. **Progressive enhancement**: without JavaScript, and when printing (``beforeprint`` and print
   media), each placeholder shows its static figure and no widget.
5. Console errors, page errors, failed requests and requests to other hosts fail.
6. **The config inspector** (``check_inspector.py``): its numbers, warnings and kinds of error against
   posenc for every zoo config and each kind of bad input, the last good result kept, its
   keyboard use and the links of its findings.
7. **Screenshots** of the page and of the inspector alone at 1280 and 390 px wide, light and
   dark, under ``--screenshots``.

The checks live beside this module: ``explorer_parity`` and ``explorer_rope_parity`` (1),
``explorer_keyboard`` (2), ``explorer_page`` (3 to 5), ``check_inspector`` and ``inspector_widget``
(6); this module runs them and prints the report.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from tests.site import check_inspector, inspector_widget
from tests.site.explorer_keyboard import UPDATE_BUDGET_MS, check_keyboard
from tests.site.explorer_page import (WIDGETS, check_print, check_without_scripts, drawings, open_page, run_axe,
                                      toggle_palette)
from tests.site.explorer_parity import Checker, check_alibi, check_sinusoidal, check_t5
from tests.site.explorer_rope_parity import check_rope
from tests.site.site_browser import AXE, _launch
from tests.site.site_pages import base_path, serve

__all__ = ["FUNCTIONS", "check_parity", "main"]

PAGE = "explore/"
# slowestTurning is the scaling widget's readout helper, not a port of posenc: it is checked under
# node on posenc's frequencies (tests/test_explorer_scaling_readout.py)
FUNCTIONS = sorted(["alibiSlopes", "parseJSON", "ropeAttentionScaling", "ropeFromConfig", "ropeInverseFrequencies",
                    "ropeQueryTemperature", "ropeReadConfig", "ropeWarnings", "sinusoidalEncoding",
                    "slowestTurning", "t5RelativePositionBucket"])


def check_parity(page: Any, check: Checker) -> None:
    names = sorted(page.evaluate("() => Object.keys(window.posencExplorer)"))
    if names != FUNCTIONS:
        check.fail("window.posencExplorer", f"exposes {names}, expected exactly {FUNCTIONS}")
    for step in (check_sinusoidal, check_rope, check_alibi, check_t5, check_inspector.check_api):
        step(page, check)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site-dir", type=Path, default=Path("site"))
    parser.add_argument("--screenshots", type=Path, default=None, help="folder for the PNGs (none if not given)")
    args = parser.parse_args(argv)
    site_dir: Path = args.site_dir.resolve()
    if not (site_dir / PAGE / "index.html").is_file():
        print(f"{site_dir / PAGE / 'index.html'} is missing: build the site first (make build)", file=sys.stderr)
        return 2
    if not AXE.is_file():
        print(f"{AXE} is missing: run `npm ci` (make install)", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    started = time.perf_counter()
    check = Checker()
    base = base_path(site_dir)
    with serve(site_dir, base) as origin, sync_playwright() as playwright:
        browser = _launch(playwright)
        url = f"{origin}{base}{PAGE}"
        try:
            print(f"checking {url} with Chromium {browser.version}", flush=True)
            context, page = open_page(browser, url, origin, check, 1280, "light")
            hosts = page.evaluate("() => [...document.querySelectorAll('.posenc-explorer')].map((e) => e.dataset.widget)")
            if sorted(hosts) != sorted(WIDGETS):
                check.fail("page", f"widgets {hosts}, expected {WIDGETS}")
            print("parity with posenc (float64):", flush=True)
            check_parity(page, check)
            print("keyboard:", flush=True)
            timings = check_keyboard(page, check)
            print("config inspector (the widget against posenc):", flush=True)
            timings["rope-inspector"] = inspector_widget.check_widget(page, check, site_dir)
            for widget, times in timings.items():
                updates = times[1:] or [0.0]
                print(f"  {widget:<14} first drawing {times[0]:5.1f} ms; {len(times) - 1:3} keyboard updates: median "
                      f"{statistics.median(updates):5.1f} ms, max {max(updates):5.1f} ms (budget {UPDATE_BUDGET_MS:.0f} ms)")
                print("                 all: " + " ".join(f"{t:.1f}" for t in times))
            scheme = page.evaluate("() => document.body.getAttribute('data-md-color-scheme')")
            for step in range(2):
                variant = "dark" if scheme == "slate" else "light"
                run_axe(page, variant, check)
                if step == 0:
                    before = drawings(page)
                    scheme = toggle_palette(page)
                    if drawings(page) == before:
                        check.fail("palette", "the drawings did not change with the palette")
            check_print(page, check)
            context.close()
            check_without_scripts(browser, url, check)
            if args.screenshots is not None:
                args.screenshots.mkdir(parents=True, exist_ok=True)
                for width in (1280, 390):
                    for scheme_name, variant in (("light", "light"), ("dark", "dark")):
                        context, page = open_page(browser, url, origin, check, width, scheme_name)
                        shot = args.screenshots / f"explore-{width}px-{variant}.png"
                        page.screenshot(path=str(shot), full_page=True, animations="disabled")
                        context.close()
                inspector_widget.screenshots(browser, url, origin, check, args.screenshots, open_page)
                print(f"screenshots: {args.screenshots}/explore-{{1280,390}}px-{{light,dark}}.png, "
                      "inspector-{1280,390}px-{light,dark}.png")
        finally:
            browser.close()
    counts = ", ".join(f"{what}: {n}" for what, n in check.counts.items())
    print(f"checked {counts}")
    if check.problems:
        print(f"\n{len(check.problems)} problem(s):")
        for problem in check.problems[:60]:
            print(f"  {problem}")
    print(f"\nexplorer check {'FAILED' if check.problems else 'passed'}: {len(check.problems)} problem(s), "
          f"{time.perf_counter() - started:.0f} s")
    return 1 if check.problems else 0


if __name__ == "__main__":
    sys.exit(main())
