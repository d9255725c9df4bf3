"""One cold visit of one page in Chromium (Playwright), recording what it asked for and what went
wrong, and the page weight counted from it: the browser side of ``check_site`` and of
``benchmarks/bench_site.py`` (:func:`measure_transfer`).
"""

from __future__ import annotations

import functools
import gzip
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from tests.site import reader_checks
from tests.site.site_pages import Problem, base_path, page_label, page_url_path, serve, site_pages

__all__ = ["AXE", "AXE_RUN", "BLOCKING_IMPACTS", "CHROMIUM", "CHROMIUM_ARGS", "SEARCH_INDEX", "PageResult", "gzip_bytes",
           "kind_of", "measure_transfer"]

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("POSENC_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
BLOCKING_IMPACTS = ("serious", "critical")
SEARCH_INDEX = "search/search_index.json"  # fetched by the search worker, shared by every page
COMPRESSIBLE = {".html", ".css", ".js", ".json", ".svg", ".xml", ".txt", ".map", ".ipynb"}

PAGE_SETTLED = """async () => {
  if (window.posencTypesetAll) await window.posencTypesetAll().catch(() => null);  // math loads when near: all of it now
  for (const img of document.images) img.loading = "eager";
  await Promise.all([...document.images].map((img) => img.complete ? null :
    new Promise((done) => { img.addEventListener("load", done); img.addEventListener("error", done); })));
  await document.fonts.ready;
}"""

MATH_RENDERED = """() => [...document.querySelectorAll('.arithmatex')].every((e) => e.querySelector('.katex'))"""

AXE_RUN = """async () => {
  const result = await axe.run(document, {resultTypes: ["violations"]});
  return result.violations.map((v) => ({id: v.id, impact: v.impact, help: v.help, helpUrl: v.helpUrl,
    nodes: v.nodes.map((n) => ({target: n.target.join(" "), summary: n.failureSummary || ""}))}));
}"""


@dataclass
class PageResult:
    page: str
    problems: list[Problem] = field(default_factory=list)
    schemes: dict[str, str] = field(default_factory=dict)  # variant -> "ok" / "FAIL"
    requests: int = 0
    files: dict[str, int] = field(default_factory=dict)  # site-relative file -> bytes, everything fetched
    loaded: dict[str, int] = field(default_factory=dict)  # what the plain visit fetched (before our checks)
    minor_axe: dict[str, int] = field(default_factory=dict)  # rule -> nodes, impacts below serious
    seconds: float = 0.0
    reading: dict[str, str] = field(default_factory=dict)  # overflow counts, smallest figure text, copies
    tolerated: list[str] = field(default_factory=list)  # overflow listed in OVERFLOW_EXCEPTIONS

    @property
    def raw_bytes(self) -> int:
        """Everything a plain cold visit loaded (light palette), uncompressed."""
        return sum(self.loaded.values())

    @property
    def page_bytes(self) -> int:
        """What the budget applies to: the first view, everything the cold visit loaded (the
        search index too, if it loaded: the site asks for it only when the reader opens search)."""
        return self.raw_bytes


@functools.cache
def _gzip_size(path: Path) -> int:
    data = path.read_bytes()
    return len(gzip.compress(data, 6, mtime=0)) if path.suffix in COMPRESSIBLE else len(data)


def gzip_bytes(site_dir: Path, files: dict[str, int]) -> int:
    return sum(_gzip_size(site_dir / name) for name in files)


def kind_of(name: str) -> str:
    suffix = Path(name).suffix
    if name.endswith(".html") or suffix == "":
        return "html"
    if suffix in {".svg", ".png", ".gif", ".jpg", ".jpeg", ".webp", ".avif", ".ico"}:
        return "images"
    if suffix in {".woff2", ".woff", ".ttf", ".otf"}:
        return "fonts"
    return {".css": "css", ".js": "js"}.get(suffix, "other")


def _launch(playwright: Any) -> Any:
    if not Path(CHROMIUM).exists():
        raise SystemExit(f"{CHROMIUM} not found: run tools/install_chromium.sh (Debian's chromium package)")
    # Playwright gives every launch a fresh temporary profile (--user-data-dir) and removes it at close.
    return playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)


class _PageVisit:
    """One cold visit of one page in its own browser context, recording what it asked for."""

    def __init__(self, browser: Any, origin: str, base: str, site_dir: Path, page: str, result: PageResult,
                 viewport: dict[str, int] | None = None, color_scheme: str = "light") -> None:
        self.origin, self.base, self.site_dir, self.result = origin, base, site_dir, result
        self.width = (viewport or {"width": 1280})["width"]
        self.context = browser.new_context(
            viewport=viewport or {"width": 1280, "height": 900},
            color_scheme=color_scheme,
            reduced_motion="reduce",
            service_workers="block",
        )
        self.context.add_init_script(reader_checks.FIRST_PAINT_SCHEME)
        self.context.route("**/*", self._route)
        self.shooting = False  # True while screenshot() runs
        self.shot_requests: set[Any] = set()  # the requests made while it ran (not the reader's)
        self.context.on("request", lambda request: self.shot_requests.add(request) if self.shooting else None)
        self.context.on("requestfailed", self._failed)
        self.context.on("response", self._response)
        self.page = self.context.new_page()
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda error: self._problem("page error", str(error)))
        self.url = f"{origin}{base}{page_url_path(page)}"
        self.page_path = page_url_path(page)

    def _problem(self, check: str, detail: str) -> None:
        self.result.problems.append(Problem(self.result.page, check, detail))

    def _route(self, route: Any) -> None:
        url = route.request.url
        if url.startswith(self.origin + "/") or url.startswith(("data:", "blob:")):
            route.continue_()
        else:
            self._problem("external request", f"{route.request.resource_type} {url} (blocked)")
            route.abort("blockedbyclient")

    def _failed(self, request: Any) -> None:
        if request.failure == "net::ERR_ABORTED" and request in self.shot_requests:
            return  # asked for by a full-page screenshot and cancelled when it ended: see screenshot()
        if request.url.startswith(self.origin + "/"):
            self._problem("failed request", f"{request.url}: {request.failure}")

    def _response(self, response: Any) -> None:
        url = response.url
        if not url.startswith(self.origin + "/"):
            return
        self.result.requests += 1
        if response.status >= 400:
            self._problem("HTTP error", f"{response.status} {url}")
            return
        path = unquote(urlsplit(url).path)
        if not path.startswith(self.base):
            return
        local = path[len(self.base):]
        file = self.site_dir / local
        if not local or local.endswith("/") or file.is_dir():
            file = file / "index.html"
        if file.is_file() and response.status < 300:
            self.result.files[file.relative_to(self.site_dir).as_posix()] = file.stat().st_size

    def _console(self, message: Any) -> None:
        if message.type == "error":
            location = message.location or {}
            where = f" ({location.get('url', '')}:{location.get('lineNumber', '')})" if location.get("url") else ""
            self._problem("console error", message.text + where)

    def open(self) -> None:
        self.page.goto(self.url, wait_until="networkidle", timeout=60_000)
        # the page weight is what a reader's visit loads; settle() then forces lazy images in
        self.result.loaded = dict(self.result.files)
        self.settle()

    def settle(self) -> None:
        self.page.evaluate(PAGE_SETTLED)
        try:
            self.page.wait_for_function(MATH_RENDERED, timeout=5_000)
        except Exception:  # noqa: BLE001 - reported by the in-page math check
            pass

    def scheme(self) -> str:
        return str(self.page.evaluate("() => document.body.getAttribute('data-md-color-scheme')"))

    def toggle_palette(self) -> str | None:
        """Click Material's visible palette toggle; return the new scheme, or None if there is none."""
        before = self.scheme()
        toggle = self.page.locator('form[data-md-component="palette"] label:not([hidden])')
        if toggle.count() != 1:
            return None
        toggle.click()
        self.page.wait_for_function(
            "(before) => document.body.getAttribute('data-md-color-scheme') !== before", arg=before, timeout=5_000
        )
        self.page.wait_for_timeout(300)  # let Material's colour transitions finish before contrast checks
        self.settle()
        return self.scheme()

    def screenshot(self, path: Path) -> None:
        """A full-page PNG. While Chromium lays out the whole page for it, the narrow layout's
        ``<source>`` of a figure can match even at 1280 px: the browser then asks for the narrow
        images and cancels what has not arrived when the screenshot ends (net::ERR_ABORTED, seen
        on a loaded machine). Those requests are the screenshot's, not a reader's."""
        self.shooting = True
        try:
            self.page.screenshot(path=str(path), full_page=True, animations="disabled")
        finally:
            self.shooting = False

    def close(self) -> None:
        self.context.close()


def measure_transfer(site_dir: Path) -> dict[str, dict[str, int]]:
    """Bytes each page loads on a cold visit (light palette), by kind, plus ``search`` (the
    search index), ``page`` (all but the search index: what the budget applies to), ``total`` and
    ``gzip`` (of everything).

    Used by ``benchmarks/bench_site.py``; the gate itself is ``check_site.main``.
    """
    from playwright.sync_api import sync_playwright

    site_dir = site_dir.resolve()
    base = base_path(site_dir)
    sizes: dict[str, dict[str, int]] = {}
    with serve(site_dir, base) as origin, sync_playwright() as playwright:
        browser = _launch(playwright)
        try:
            for page in site_pages(site_dir):
                result = PageResult(page_label(page))
                visit = _PageVisit(browser, origin, base, site_dir, page, result)
                try:
                    visit.open()
                finally:
                    visit.close()
                row = {kind: 0 for kind in ("html", "images", "css", "js", "fonts", "other")}
                for name, size in result.loaded.items():
                    if name != SEARCH_INDEX:
                        row[kind_of(name)] += size
                row["search"] = result.loaded.get(SEARCH_INDEX, 0)
                row["page"] = result.page_bytes
                row["total"] = result.raw_bytes
                row["gzip"] = gzip_bytes(site_dir, result.loaded)
                row["requests"] = result.requests
                sizes[result.page] = row
        finally:
            browser.close()
    return sizes
