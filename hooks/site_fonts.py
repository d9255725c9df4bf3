"""The site's own text font, served from the site like KaTeX (no other host is asked).

Source Sans 3 comes from the npm registry as a Fontsource package (``package.json``, installed into
``node_modules`` by ``make``), under the SIL Open Font License, whose text is served beside it;
variable in weight, so one file covers Material's 300 to 700. Each subset is its own
``@font-face`` with the package's ``unicode-range``, so a browser fetches a file only when a page
shows one of its characters.

Kept small for the 1 MB first view (tests/site/check_site.py), 30 kB a page: the Latin and Greek
subsets only, no italic file (the browser slants the upright face for emphasis), no Latin Extended
(rare characters such as ``ℓ`` come from the reader's own fonts). Code keeps Material's system
monospace stack: Source Code Pro (12 kB more) put the two heaviest chapters over the budget, and
code never wraps, so its width moves no line of prose. The measure in
``docs/stylesheets/posenc.css`` is set in this font, so a line of prose holds the same characters
on every machine, whatever fonts it has installed.

`font_css` writes the ``@font-face`` rules from the package's own CSS; the site checks
(tests/site) load the same rules with the files inlined.
"""

from __future__ import annotations

import base64
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NODE_MODULES = ROOT / "node_modules"
FONT_DIR = "assets/fonts"
CSS_URI = f"{FONT_DIR}/fonts.css"  # listed in mkdocs.yml's extra_css
TEXT_FAMILY = "Source Sans 3 Variable"
# (npm package, its CSS file, the face's name in that CSS with {subset}, the subsets published)
FACES = (
    ("@fontsource-variable/source-sans-3", "index.css", "source-sans-3-{subset}-wght-normal", ("latin", "greek")),
)
_FACE = re.compile(r"/\* (?P<name>[a-z0-9-]+) \*/\s*(?P<rule>@font-face \{.*?\})", re.DOTALL)
_WOFF = re.compile(r", url\(\./files/[^)]+\.woff\) format\('woff'\)")  # woff2 only: every browser the site supports


class MissingFonts(FileNotFoundError):
    """node_modules lacks a font package: `make install` (npm ci) has not run."""


def _package(name: str) -> Path:
    path = NODE_MODULES / name
    if not (path / "files").is_dir():
        raise MissingFonts(f"node_modules/{name} is missing: run `make install` (npm ci) first")
    return path


def font_files() -> dict[str, Path]:
    """Site path -> file in node_modules, for every published font file and each licence."""
    found: dict[str, Path] = {}
    for package, _, face, subsets in FACES:
        folder = _package(package)
        found[f"{FONT_DIR}/{folder.name}-LICENSE.txt"] = folder / "LICENSE"
        for subset in subsets:
            file = folder / "files" / f"{face.format(subset=subset)}.woff2"
            found[f"{FONT_DIR}/{file.name}"] = file
    return found


def font_css(inline: bool = False) -> str:
    """The ``@font-face`` rules of the published files; ``inline`` embeds them as data URLs."""
    rules = []
    for package, css_file, face, subsets in FACES:
        folder = _package(package)
        wanted = {face.format(subset=subset) for subset in subsets}
        for match in _FACE.finditer((folder / css_file).read_text(encoding="utf-8")):
            if match["name"] in wanted:
                rules.append(_WOFF.sub("", match["rule"]))
    if len(rules) != sum(len(subsets) for *_, subsets in FACES):
        raise MissingFonts(f"expected one @font-face per published file in node_modules, found {len(rules)}")
    css = "\n".join(rules) + "\n"
    if inline:
        return re.sub(r"url\(\./files/([^)]+)\)", lambda m: _data_url(m[1]), css)
    return css.replace("url(./files/", "url(")  # fonts.css sits beside the font files


def _data_url(file_name: str) -> str:
    folder = next(_package(package) for package, _, face, _ in FACES if file_name.startswith(face.split("{")[0]))
    return f"url(data:font/woff2;base64,{base64.b64encode((folder / 'files' / file_name).read_bytes()).decode('ascii')})"
