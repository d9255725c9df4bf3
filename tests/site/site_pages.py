"""The built site's pages, the base path it is published under, and a local server for it.

Shared by the site checks (``check_site``, ``site_links``, ``site_browser``, ``site_audits``) and
the explorer's (``check_explorer``); :class:`Problem` is what every check reports.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

__all__ = ["Problem", "base_path", "page_label", "page_url_path", "serve", "site_pages"]


@dataclass
class Problem:
    page: str
    check: str
    detail: str


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
