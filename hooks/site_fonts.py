"""The site's own text and code fonts, served from the site like KaTeX (no other host is asked).

Both come from the npm registry as ``@fontsource-variable`` packages (``package.json``, installed
into ``node_modules`` by ``make``): Source Sans 3 for the text and Source Code Pro for code, both
variable in weight (one file covers 300 to 700) and under the SIL Open Font License, whose text is
served beside them. Only the Latin, Latin Extended and Greek subsets are published; each is its own
``@font-face`` with a ``unicode-range``, so a browser fetches a subset only when a page shows one
of its characters. The measure in ``docs/stylesheets/posenc.css`` is set in this font, so a line
holds the same characters on every machine, whatever fonts it has installed.

`font_css` writes the ``@font-face`` rules from the package's own CSS (its ``unicode-range``
values included); the site checks (tests/site) load the same rules with the files inlined.
"""

from __future__ import annotations

import base64
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ROOT / "node_modules" / "@fontsource-variable"
# package -> the styles published (code is never set in italics on this site)
FONTS = {"source-sans-3": ("normal", "italic"), "source-code-pro": ("normal",)}
SUBSETS = ("latin", "latin-ext", "greek")
FONT_DIR = "assets/fonts"
CSS_URI = f"{FONT_DIR}/fonts.css"  # listed in mkdocs.yml's extra_css
TEXT_FAMILY = "Source Sans 3 Variable"
CODE_FAMILY = "Source Code Pro Variable"
_FACE = re.compile(r"/\* (?P<name>[a-z0-9-]+) \*/\s*(?P<rule>@font-face \{.*?\})", re.DOTALL)


class MissingFonts(FileNotFoundError):
    """node_modules lacks a font package: `make install` (npm ci) has not run."""


def _package(name: str) -> Path:
    path = PACKAGES / name
    if not (path / "files").is_dir():
        raise MissingFonts(f"node_modules/@fontsource-variable/{name} is missing: run `make install` (npm ci) first")
    return path


def font_files() -> dict[str, Path]:
    """Site path -> file in node_modules, for every published font file and each licence."""
    found: dict[str, Path] = {}
    for name, styles in FONTS.items():
        package = _package(name)
        found[f"{FONT_DIR}/{name}-LICENSE.txt"] = package / "LICENSE"
        for subset in SUBSETS:
            for style in styles:
                file = package / "files" / f"{name}-{subset}-wght-{style}.woff2"
                found[f"{FONT_DIR}/{file.name}"] = file
    return found


def font_css(inline: bool = False) -> str:
    """The ``@font-face`` rules of the published files; ``inline`` embeds them as data URLs."""
    rules = []
    for name, styles in FONTS.items():
        package = _package(name)
        for style in styles:
            source = (package / ("index.css" if style == "normal" else "wght-italic.css")).read_text(encoding="utf-8")
            for match in _FACE.finditer(source):
                if match["name"] in {f"{name}-{subset}-wght-{style}" for subset in SUBSETS}:
                    rules.append(match["rule"])
    css = "\n".join(rules) + "\n"
    if inline:
        css = re.sub(r"url\(\./files/([^)]+)\)", lambda m: _data_url(m[1]), css)
    else:  # fonts.css sits beside the font files
        css = css.replace("url(./files/", "url(")
    if len(rules) != sum(len(styles) for styles in FONTS.values()) * len(SUBSETS):
        raise MissingFonts(f"expected one @font-face per subset and style in node_modules/@fontsource-variable, found {len(rules)}")
    return css


def _data_url(file_name: str) -> str:
    package = next(name for name in FONTS if file_name.startswith(f"{name}-"))
    data = (PACKAGES / package / "files" / file_name).read_bytes()
    return f"url(data:font/woff2;base64,{base64.b64encode(data).decode('ascii')})"
