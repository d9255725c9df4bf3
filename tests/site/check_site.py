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
   plots that would show as white boxes in the dark palette, TeX left in the search index.
7. **No palette flash**: the 390-px visit comes from a reader whose system prefers dark; the
   colour scheme when the page header is parsed (before the theme's script runs) must be dark.
8. **Search**: on the home page, opening the search box and typing a word must give results (the
   index is fetched on demand).

Prints a table with one row per page and then every problem found; exits 1 if any.
The same browser pass, without the audits, gives ``benchmarks/bench_site.py`` its page sizes
(:func:`measure_transfer`).
"""

from __future__ import annotations

import argparse
import functools
import gzip
import os
import re
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit

from tests.site import reader_checks

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
BUDGET_MB = 1.0
BLOCKING_IMPACTS = ("serious", "critical")
MIN_ALT_WORDS = 8
SCHEMES = {"default": "light", "slate": "dark"}  # Material's scheme names -> our variant names
SEARCH_INDEX = "search/search_index.json"  # fetched by the search worker, shared by every page
COMPRESSIBLE = {".html", ".css", ".js", ".json", ".svg", ".xml", ".txt", ".map", ".ipynb"}

# ----------------------------------------------------------------------------------------------
# pages, base path, local server


def site_pages(site_dir: Path) -> list[str]:
    """Site-relative paths of the pages to open: every ``index.html`` and ``404.html``."""
    pages = sorted(p.relative_to(site_dir).as_posix() for p in site_dir.rglob("index.html"))
    if (site_dir / "404.html").is_file():
        pages.append("404.html")
    return pages


def page_label(page: str) -> str:
    """``notebooks/rope_lab/index.html`` -> ``notebooks/rope_lab``; ``index.html`` -> ``index``; ``404.html`` -> ``404``."""
    label = page.removesuffix("index.html").removesuffix(".html").rstrip("/")
    return label or "index"


def page_url_path(page: str) -> str:
    """The path a browser asks for: directory URLs end in ``/`` (``use_directory_urls``)."""
    return page.removesuffix("index.html")


class _CanonicalFinder(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.href: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "link" and values.get("rel") == "canonical" and values.get("href"):
            self.href = values["href"]


def base_path(site_dir: Path) -> str:
    """The URL path the site is published under (``/`` unless ``site_url`` has a path)."""
    finder = _CanonicalFinder()
    index = site_dir / "index.html"
    if index.is_file():
        finder.feed(index.read_text(encoding="utf-8"))
    path = urlsplit(finder.href).path if finder.href else "/"
    return path if path.endswith("/") else path + "/"


class _SiteHandler(SimpleHTTPRequestHandler):
    base = "/"
    extensions_map = {
        **SimpleHTTPRequestHandler.extensions_map,
        ".js": "text/javascript",
        ".mjs": "text/javascript",
        ".json": "application/json",
        ".svg": "image/svg+xml",
        ".woff2": "font/woff2",
        ".woff": "font/woff",
        ".ttf": "font/ttf",
        ".gz": "application/gzip",
        ".ipynb": "application/x-ipynb+json",
    }

    def translate_path(self, path: str) -> str:
        url_path = urlsplit(path).path
        if not url_path.startswith(self.base):
            return str(Path(self.directory) / "\0not-under-base")  # a path that never exists
        return super().translate_path("/" + url_path[len(self.base):])

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass


@contextmanager
def serve(site_dir: Path, base: str = "/") -> Iterator[str]:
    """Serve ``site_dir`` under ``base`` on 127.0.0.1 (a free port) from a thread; yield the origin."""
    handler = functools.partial(type("Handler", (_SiteHandler,), {"base": base}), directory=str(site_dir))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="site-server", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


# ----------------------------------------------------------------------------------------------
# links and anchors in the built HTML

LINK_ATTRIBUTES = {
    "a": ("href",),
    "area": ("href",),
    "link": ("href",),
    "script": ("src",),
    "img": ("src", "srcset"),
    "source": ("src", "srcset"),
    "iframe": ("src",),
    "video": ("src", "poster"),
    "audio": ("src",),
    "track": ("src",),
    "embed": ("src",),
    "object": ("data",),
}
SKIPPED_SCHEMES = ("mailto:", "tel:", "javascript:", "data:", "blob:")


class _HtmlIndex(HTMLParser):
    """Ids (``id=`` anywhere, ``name=`` on ``<a>``) and outgoing links of one HTML file."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[tuple[int, str, str]] = []  # (line, tag.attr, value)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value is None:
                continue
            if name == "id" or (name == "name" and tag == "a"):
                self.ids.add(value)
            if name in LINK_ATTRIBUTES.get(tag, ()):
                urls = [part.strip().split()[0] for part in value.split(",") if part.strip()] if name == "srcset" else [value]
                self.links += [(self.getpos()[0], f"{tag}.{name}", url) for url in urls]

    handle_startendtag = handle_starttag


@dataclass
class Problem:
    page: str
    check: str
    detail: str


def check_links(site_dir: Path, base: str = "/") -> tuple[list[Problem], int]:
    """Every internal link and anchor of every HTML file; returns (problems, links checked)."""
    index: dict[Path, _HtmlIndex] = {}
    for path in sorted(site_dir.rglob("*.html")):
        parsed = _HtmlIndex()
        parsed.feed(path.read_text(encoding="utf-8"))
        parsed.close()
        index[path.resolve()] = parsed
    problems: list[Problem] = []
    checked = 0
    seen: set[tuple[str, str]] = set()
    for path, parsed in index.items():
        relative = path.relative_to(site_dir.resolve()).as_posix()
        label = page_label(relative) if relative.endswith("index.html") or relative == "404.html" else relative
        here = "http://site" + base + relative
        for line, where, raw in parsed.links:
            value = raw.strip()
            if not value or value.lower().startswith(SKIPPED_SCHEMES):
                continue
            parts = urlsplit(value)
            if parts.scheme or parts.netloc:
                continue  # external: never fetched (the browser check blocks any such request)
            if (label, value) in seen:
                continue
            seen.add((label, value))
            checked += 1

            def report(message: str) -> None:
                problems.append(Problem(label, "link", f"line {line} {where}={value!r}: {message}"))  # noqa: B023

            if value.startswith("/") and relative != "404.html":
                report("root-relative link: breaks when the site is served from a sub-path")
                continue
            target = urlsplit(urljoin(here, value))
            target_path = unquote(target.path)
            if not target_path.startswith(base):
                report(f"points outside the site (base {base})")
                continue
            local = target_path[len(base):]
            file = site_dir / local
            if not local or local.endswith("/") or file.is_dir():
                file = file / "index.html"
            if not file.is_file():
                report(f"target {file.relative_to(site_dir).as_posix()} does not exist")
                continue
            fragment = unquote(target.fragment)
            if fragment and file.suffix == ".html":
                ids = index[file.resolve()].ids
                if fragment not in ids:
                    report(f"no element with id {fragment!r} in {file.relative_to(site_dir).as_posix()}")
    return problems, checked


# ----------------------------------------------------------------------------------------------
# browser

PAGE_SETTLED = """async () => {
  if (window.posencTypesetAll) await window.posencTypesetAll().catch(() => null);  // math loads when near: all of it now
  for (const img of document.images) img.loading = "eager";
  await Promise.all([...document.images].map((img) => img.complete ? null :
    new Promise((done) => { img.addEventListener("load", done); img.addEventListener("error", done); })));
  await document.fonts.ready;
}"""

MATH_RENDERED = """() => [...document.querySelectorAll('.arithmatex')].every((e) => e.querySelector('.katex'))"""

# Everything checked inside the page, for the palette currently shown. Returns lists of strings.
IN_PAGE_CHECKS = r"""(variant) => {
  const out = {images: [], math: [], rawTex: [], figures: [], palette: [], alt: []};
  const shown = (el) => {
    const style = getComputedStyle(el);
    return style.display !== "none" && style.visibility !== "hidden" && el.getClientRects().length > 0
      && el.getBoundingClientRect().width > 0;
  };
  const short = (text) => text.replace(/\s+/g, " ").trim().slice(0, 100);
  for (const img of document.images) {
    if (!img.complete || img.naturalWidth === 0) out.images.push(img.getAttribute("src"));
  }
  for (const el of document.querySelectorAll(".arithmatex")) {
    if (!el.querySelector(".katex")) out.math.push("unrendered: " + short(el.textContent));
  }
  for (const el of document.querySelectorAll(".katex-error")) {
    out.math.push("KaTeX error: " + short(el.getAttribute("title") || el.textContent));
  }
  // code, and KaTeX's own markup (its MathML keeps the TeX source); notebook Markdown cells sit
  // inside .jp-InputArea too, so only the code editor parts of a notebook are skipped
  const skip = "script, style, pre, code, kbd, samp, textarea, noscript, .katex, .highlight, .highlight-ipynb, .jp-CodeMirrorEditor";
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT, {
    acceptNode: (node) => node.parentElement && !node.parentElement.closest(skip)
      ? NodeFilter.FILTER_ACCEPT : NodeFilter.FILTER_REJECT,
  });
  const tex = /\\\(|\\\)|\\\[|\\\]|\$\$|\\[A-Za-z]{2,}/;
  const notebookDollar = /\$[^\s$][^$]*\$/;
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = node.textContent;
    const inNotebookMarkdown = node.parentElement.closest(".jp-RenderedMarkdown");
    if (tex.test(text) || (inNotebookMarkdown && notebookDollar.test(text))) {
      if (shown(node.parentElement)) out.rawTex.push(short(text));
    }
  }
  for (const fig of document.querySelectorAll("figure.posenc-figure")) {
    const name = fig.id || "(figure without id)";
    const light = [...fig.querySelectorAll("img")].filter((i) => (i.getAttribute("src") || "").endsWith("#only-light"));
    const dark = [...fig.querySelectorAll("img")].filter((i) => (i.getAttribute("src") || "").endsWith("#only-dark"));
    if (light.length !== 1) out.figures.push(`${name}: ${light.length} light (#only-light) images, expected 1`);
    if (dark.length !== 1) out.figures.push(`${name}: ${dark.length} dark (#only-dark) images, expected 1`);
    if (light.length === 1 && dark.length === 1 && light[0].getAttribute("src").split("#")[0] === dark[0].getAttribute("src").split("#")[0]) {
      out.figures.push(`${name}: light and dark variants are the same file`);
    }
    if (!fig.querySelector("figcaption")) out.figures.push(`${name}: no caption`);
    for (const img of [...light, ...dark]) {
      const alt = (img.getAttribute("alt") || "").trim();
      const words = alt.split(/\s+/).filter(Boolean).length;
      if (words < __MIN_ALT_WORDS__ || /\.(svg|png|gif|jpe?g)\b/i.test(alt)) {
        out.alt.push(`${name}: alt text ${JSON.stringify(alt)} does not describe the figure (${words} words)`);
      }
    }
  }
  for (const img of document.querySelectorAll('img[src$="#only-light"], img[src$="#only-dark"]')) {
    const own = img.getAttribute("src").endsWith("#only-" + variant);
    if (own && !shown(img)) out.palette.push(`${img.getAttribute("src")} is hidden in the ${variant} palette`);
    if (!own && shown(img)) out.palette.push(`${img.getAttribute("src")} is visible in the ${variant} palette`);
  }
  return out;
}""".replace("__MIN_ALT_WORDS__", str(MIN_ALT_WORDS))

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

    def close(self) -> None:
        self.context.close()


def _check_in_palette(visit: _PageVisit, variant: str, axe: bool) -> bool:
    before = len(visit.result.problems)
    found = visit.page.evaluate(IN_PAGE_CHECKS, variant)
    for src in found["images"]:
        visit._problem("image not loaded", f"[{variant}] {src}")
    for key, check in (("math", "math"), ("rawTex", "raw TeX"), ("figures", "figure"), ("palette", "palette"), ("alt", "alt text")):
        for detail in found[key]:
            visit._problem(check, f"[{variant}] {detail}")
    if axe:
        visit.page.add_script_tag(path=str(AXE))  # inline: adds no request
        for violation in visit.page.evaluate(AXE_RUN):
            if violation["impact"] in BLOCKING_IMPACTS:
                nodes = "; ".join(f"{n['target']}: {n['summary'].splitlines()[-1].strip() if n['summary'] else ''}" for n in violation["nodes"][:4])
                more = f" (+{len(violation['nodes']) - 4} more)" if len(violation["nodes"]) > 4 else ""
                visit._problem(
                    f"a11y {violation['impact']}",
                    f"[{variant}] {violation['id']}: {violation['help']} ({violation['helpUrl']}) -- {nodes}{more}",
                )
            else:
                key = f"{violation['id']} ({violation['impact']})"
                visit.result.minor_axe[key] = visit.result.minor_axe.get(key, 0) + len(violation["nodes"])
    return len(visit.result.problems) == before


def _check_reading(visit: _PageVisit, variant: str) -> bool:
    """The reader's checks (tests/site/reader_checks.py) on the page as shown now, at the visit's width."""
    result, before, width = visit.result, len(visit.result.problems), visit.width
    found = visit.page.evaluate(reader_checks.IN_PAGE_READER)
    if variant == "light":
        failures, tolerated = reader_checks.overflow_problems(result.page, width, found["overflow"])
        for line in failures:
            visit._problem("overflow", line)
        result.tolerated += tolerated
        result.reading[f"math@{width}"] = str(len(found["overflow"]["math"]))
        result.reading[f"code@{width}"] = str(len(found["overflow"]["code"]))
    for check, line in reader_checks.reading_problems(found, width):
        visit._problem(check, f"[{variant}] {line}")
    problems, smallest = reader_checks.figure_text_problems(visit.site_dir, visit.page_path, found["figures"], width)
    for line in problems:
        visit._problem("figure text", f"[{variant}] {line}")
    if smallest is not None:
        key = f"figure px@{width}"
        result.reading[key] = f"{min(smallest, float(result.reading.get(key, smallest))):.1f}"
    if width > 1000:
        result.reading[f"prose@{width}"] = str(reader_checks.prose_problems(found["prose"], width)[1] or "-")
    if width == 1280 and variant == "light":
        bad_copies = 0
        for copy in found["copies"]:
            why = reader_checks.copy_parses(copy["language"], copy["text"])
            if why is not None:
                bad_copies += 1
                visit._problem("copy button", f"{copy['language']} block starting {copy['first']!r}: copied text is not Python: {why}")
        result.reading["copies"] = f"{len(found['copies']) - bad_copies}/{len(found['copies'])}"
    if variant == "dark":
        for line in found["notebookImages"]:
            visit._problem("notebook dark", line)
    return len(result.problems) == before


def _phone_visit(browser: Any, origin: str, base: str, site_dir: Path, page: str, screenshots: Path | None,
                 result: PageResult) -> None:
    """The page at 390 px: overflow counts and a screenshot in each palette."""
    scratch = PageResult(result.page)  # its requests must not count in the desktop page weight
    # a reader whose system prefers dark: the first paint must be dark already (no palette flash)
    visit = _PageVisit(browser, origin, base, site_dir, page, scratch, viewport=reader_checks.PHONE, color_scheme="dark")
    try:
        visit.open()
        first = visit.page.evaluate("() => window.__posencFirstScheme === undefined ? null : window.__posencFirstScheme")
        if first is not None and first != "slate":
            visit._problem("palette flash", f"a reader who prefers dark sees the {first!r} palette first")
        for step in range(2):
            variant = SCHEMES.get(visit.scheme(), "light")
            _check_reading(visit, variant)
            if screenshots is not None:
                shot = screenshots / f"{result.page.replace('/', '__')}-{variant}-390.png"
                visit.page.screenshot(path=str(shot), full_page=True, animations="disabled")
            if step == 0 and visit.toggle_palette() is None:
                break
    except Exception as error:  # noqa: BLE001 - reported like any other problem
        visit._problem("browser", f"at 390 px: {type(error).__name__}: {error}".splitlines()[0])
    finally:
        visit.close()
    seen = {(p.check, p.detail) for p in result.problems}  # console errors etc. repeat at 390 px: once is enough
    result.problems += [p for p in scratch.problems if (p.check, p.detail) not in seen]
    result.reading.update({k: v for k, v in scratch.reading.items()})
    result.tolerated += scratch.tolerated


def weight_problems(result: PageResult, budget: float) -> list[str]:
    """The first view over ``budget`` MB (10^6 bytes), with its three largest files."""
    if result.page_bytes <= budget * 1_000_000:
        return []
    top = sorted(result.loaded.items(), key=lambda item: -item[1])[:3]
    return [f"first view {result.page_bytes / 1e6:.2f} MB > {budget} MB budget (largest: "
            + ", ".join(f"{name} {size / 1e3:.0f} kB" for name, size in top) + ")"]


def _wide_visit(browser: Any, origin: str, base: str, site_dir: Path, page: str, result: PageResult) -> None:
    """The page at 1920 px (light): the prose measure, where the column is widest."""
    scratch = PageResult(result.page)
    visit = _PageVisit(browser, origin, base, site_dir, page, scratch, viewport=reader_checks.WIDE)
    try:
        visit.open()
        found = visit.page.evaluate(reader_checks.IN_PAGE_READER)
        problems, longest = reader_checks.prose_problems(found["prose"], visit.width)
        for line in problems:
            visit._problem("prose measure", line)
        result.reading[f"prose@{visit.width}"] = str(longest or "-")
    except Exception as error:  # noqa: BLE001 - reported like any other problem
        visit._problem("browser", f"at {visit.width} px: {type(error).__name__}: {error}".splitlines()[0])
    finally:
        visit.close()
    seen = {(p.check, p.detail) for p in result.problems}
    result.problems += [p for p in scratch.problems if (p.check, p.detail) not in seen]


def check_page(browser: Any, origin: str, base: str, site_dir: Path, page: str, screenshots: Path | None, budget: float) -> PageResult:
    started = time.perf_counter()
    result = PageResult(page_label(page))
    visit = _PageVisit(browser, origin, base, site_dir, page, result)
    try:
        visit.open()
        order = [visit.scheme()]
        for step in range(2):
            scheme = order[-1]
            variant = SCHEMES.get(scheme)
            if variant is None:
                visit._problem("palette", f"unknown colour scheme {scheme!r} on the page")
                break
            ok = _check_in_palette(visit, variant, axe=True)
            ok = _check_reading(visit, variant) and ok
            result.schemes[variant] = "ok" if ok else "FAIL"
            if screenshots is not None:
                shot = screenshots / f"{result.page.replace('/', '__')}-{variant}.png"
                visit.page.screenshot(path=str(shot), full_page=True, animations="disabled")
            if step == 0:
                new = visit.toggle_palette()
                if new is None or new == scheme:
                    visit._problem("palette", "no working palette toggle: cannot check the other palette")
                    break
                order.append(new)
        if set(result.schemes) != {"light", "dark"}:
            visit._problem("palette", f"checked palettes {sorted(result.schemes)}, expected light and dark")
    except Exception as error:  # noqa: BLE001 - a page that cannot be checked is a failure, not a crash
        visit._problem("browser", f"{type(error).__name__}: {error}".splitlines()[0])
    finally:
        visit.close()
    _phone_visit(browser, origin, base, site_dir, page, screenshots, result)
    _wide_visit(browser, origin, base, site_dir, page, result)
    for line in weight_problems(result, budget):
        visit._problem("page weight", line)
    result.seconds = time.perf_counter() - started
    return result


SEARCH_WORD = "rotary"


def check_search(browser: Any, origin: str, base: str) -> list[str]:
    """Open the home page, focus the search box, type `SEARCH_WORD`: results must appear (the
    search index loads only now) and the index must not have loaded before."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, service_workers="block")
    asked: list[str] = []
    context.on("request", lambda request: asked.append(request.url) if request.url.endswith(SEARCH_INDEX) else None)
    try:
        page = context.new_page()
        page.goto(f"{origin}{base}", wait_until="networkidle", timeout=60_000)
        if asked:
            return ["the search index loaded with the page, before the reader opened search"]
        page.locator(".md-search__input").click()
        page.keyboard.type(SEARCH_WORD, delay=30)
        try:
            page.wait_for_selector(".md-search-result__item", timeout=15_000)
        except Exception:  # noqa: BLE001 - reported as the problem
            return [f"typing {SEARCH_WORD!r} in the search box gave no results within 15 s"]
        return [] if asked else ["search gave results without loading the search index (?)"]
    finally:
        context.close()


def measure_transfer(site_dir: Path) -> dict[str, dict[str, int]]:
    """Bytes each page loads on a cold visit (light palette), by kind, plus ``search`` (the
    search index), ``page`` (all but the search index: what the budget applies to), ``total`` and
    ``gzip`` (of everything).

    Used by ``benchmarks/bench_site.py``; the gate itself is in :func:`main`.
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
