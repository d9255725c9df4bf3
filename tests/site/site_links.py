"""Links and anchors in the built HTML (no browser): step 1 of ``check_site``."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

from tests.site.site_pages import Problem, page_label

__all__ = ["check_links"]

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
