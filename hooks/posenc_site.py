"""MkDocs hooks: build-time figures, local math assets, and notebook plumbing.

* Figures: every figure registered in ``posenc.figures`` is rendered (light and dark) into
  ``.cache/figures`` by ``python -m posenc.figures._render`` and added to the site as generated
  files under ``figures/``. A page embeds one with a line ``[[figure NAME]]`` (optionally
  ``[[figure NAME | caption]]``). Nothing generated is written into ``docs/``.
* Speed: the manifest is cached under a fingerprint of the posenc sources and library versions,
  so a rebuild with nothing changed starts no process and draws nothing; an edit to posenc
  re-runs the renderer, which redraws only the figures whose inputs changed.
* Math: KaTeX comes from ``node_modules`` (installed by ``make``) and is served from the site.
* Fonts: the text font comes from ``node_modules`` too (hooks/site_fonts.py).
* Notebooks: mkdocs-jupyter's cache is keyed by the notebook only, so we put it under a folder
  named by the posenc fingerprint (editing posenc re-executes the notebooks); its MathJax loader
  (a CDN script) is removed so the site's KaTeX renders notebook math; and each notebook is
  offered as a downloadable ``.ipynb``.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import itertools
import json
import logging
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

# hooks/*.py beside this one (MkDocs puts hooks/ on the path) and MkDocs'
from api_pages import api_reference
from css_prune import prune_inline_styles
from listing_math import plain_listing_math
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page
from site_fonts import CSS_URI, MissingFonts, font_css, font_files
from site_weight import (
    DEFER_SEARCH_INDEX,
    code_break_points,
    drop_math_assets,
    minify_css,
    noscript_fallbacks,
    palette_script,
    prune_search_index,
)

log = logging.getLogger("mkdocs.hooks.posenc_site")

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache"
FIGURE_LINE = re.compile(r"^\[\[figure\s+(?P<name>[a-z0-9-]+)\s*(?:\|\s*(?P<caption>.+?))?\s*\]\]\s*$", re.MULTILINE)
KATEX_FILES = ("katex.min.js", "katex.min.css", "contrib/auto-render.min.js")
# The explorer's charting library (docs/javascripts/explorer/), served from the site like KaTeX:
# only the D3 modules the widgets use (scales, axes, lines, colour maps, selections), joined in
# dependency order from their UMD builds, which all extend one global `d3` (143 kB, not 281 kB).
CHART_FILE = "assets/d3/d3.min.js"
CHART_MODULES = ("d3-array", "d3-color", "d3-interpolate", "d3-format", "d3-time", "d3-time-format", "d3-scale",
                 "d3-scale-chromatic", "d3-selection", "d3-axis", "d3-path", "d3-shape")
NOTEBOOK_MATHJAX = re.compile(r"<!-- Load mathjax -->.*?<!-- End of mathjax configuration -->", re.DOTALL)
NOTEBOOK_MERMAID = re.compile(r"<script type=\"module\">\s*import mermaid.*?</script>", re.DOTALL)
NOTEBOOK_CELL_ID = re.compile(r'id="cell-id=[0-9a-f]+"')
NOTEBOOK_SVG_IMAGE = re.compile(r'<img alt="(?P<alt>[^"]*)" src="data:image/svg\+xml;base64,(?P<data>[A-Za-z0-9+/=\s]+)"\s*/?>')
SEARCH_DIALOG = '<div class="md-search" data-md-component="search" role="dialog">'
# POSENC_FIGURES=0 leaves the figures out (figure elements keep their ids and captions, so links to
# them still resolve): benchmarks/bench_site.py builds the site this way to price the figure pipeline.
FIGURES_ON = os.environ.get("POSENC_FIGURES", "1") != "0"

_manifest: dict[str, Any] = {}
_fingerprint = ""


def fingerprint() -> str:
    """Hash of every posenc source and data file and the library versions figures depend on."""
    digest = hashlib.sha256()
    for path in sorted([*(ROOT / "posenc").rglob("*.py"), *(ROOT / "posenc").rglob("*.json")]):
        digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
    for dist in ("matplotlib", "numpy", "torch"):
        digest.update(f"{dist}={importlib.metadata.version(dist)}".encode())
    return digest.hexdigest()[:16]


def load_manifest() -> dict[str, Any]:
    """The figure manifest for the current sources; call once per build (from ``on_files``)."""
    global _manifest, _fingerprint
    current = fingerprint()
    if current == _fingerprint:
        return _manifest
    stored = CACHE / "figures" / f"manifest-{current}.json"
    if not stored.exists():
        log.info("posenc sources changed: drawing the figures whose inputs changed")
        command = [sys.executable, "-m", "posenc.figures._render", "--cache-dir", str(CACHE / "figures")]
        result = subprocess.run(command, check=False, cwd=ROOT, capture_output=True, text=True)
        if result.returncode:
            raise PluginError(f"drawing the figures failed:\n{result.stderr}")
        manifest = json.loads(result.stdout)  # refuse to store anything that is not a manifest
        for old in stored.parent.glob("manifest-*.json"):
            old.unlink(missing_ok=True)
        stored.write_text(result.stdout)
    else:
        manifest = json.loads(stored.read_text())
    _manifest, _fingerprint = manifest, current
    return _manifest


def figure_uri(name: str, variant: str, extension: str) -> str:
    return f"figures/{name}-{variant}.{extension}"


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    jupyter = config.plugins.get("mkdocs-jupyter")
    if jupyter is not None:
        # Executed and unexecuted renderings live apart, so a build with execution off (the
        # benchmark's baseline) does not evict the executed cache of normal builds.
        mode = "executed" if jupyter.config["execute"] else "unexecuted"
        jupyter.config["cache_dir"] = str(CACHE / "notebooks" / f"{fingerprint()}-{mode}")
    return config


def on_files(files: Files, config: MkDocsConfig) -> Files:
    for name, entry in (load_manifest() if FIGURES_ON else {}).items():
        for variant, path in entry["files"].items():
            files.append(File.generated(config, figure_uri(name, variant, entry["extension"]), abs_src_path=path))
    katex = ROOT / "node_modules" / "katex" / "dist"
    if not katex.is_dir():
        raise PluginError("node_modules/katex is missing: run `make install` (npm ci) first")
    for relative in KATEX_FILES:
        files.append(File.generated(config, f"assets/katex/{relative}", abs_src_path=str(katex / relative)))
    for font in sorted((katex / "fonts").glob("*.woff2")):
        files.append(File.generated(config, f"assets/katex/fonts/{font.name}", abs_src_path=str(font)))
    try:
        fonts = font_files()
        files.append(File.generated(config, CSS_URI, content=font_css()))
    except MissingFonts as error:
        raise PluginError(str(error)) from error
    for uri, path in fonts.items():
        files.append(File.generated(config, uri, abs_src_path=str(path)))
    files.append(File.generated(config, CHART_FILE, content=chart_library()))
    for uri, content in api_reference().items():
        files.append(File.generated(config, uri, content=content))
    for notebook in sorted(Path(config.docs_dir, "notebooks").glob("*.py")):
        files.append(File.generated(config, f"notebooks/{notebook.stem}.ipynb", content=_as_ipynb(notebook)))
    return files


def chart_library() -> str:
    """The D3 modules of `CHART_MODULES`, joined (each file keeps its own licence line)."""
    parts = []
    for module in CHART_MODULES:
        source = ROOT / "node_modules" / module / "dist" / f"{module}.min.js"
        if not source.is_file():
            raise PluginError(f"node_modules/{module} is missing: run `make install` (npm ci) first")
        parts.append(source.read_text(encoding="utf-8").rstrip() + ";\n")
    return "".join(parts)


def _as_ipynb(source: Path) -> str:
    import jupytext

    notebook = jupytext.read(source)
    for number, cell in enumerate(notebook.cells):
        cell.id = f"cell-{number}"  # nbformat draws random ids: fixed ones keep builds reproducible
    return str(jupytext.writes(notebook, fmt="ipynb"))


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    if not FIGURES_ON:
        return FIGURE_LINE.sub(
            lambda match: f'<figure class="posenc-figure" id="figure-{match["name"]}">'
            f'<figcaption>{match["caption"] or ""}</figcaption></figure>',
            markdown,
        )
    manifest = _manifest  # loaded by on_files for this build

    def embed(match: re.Match[str]) -> str:
        name, caption = match["name"], match["caption"]
        if name not in manifest:
            raise PluginError(f"{page.file.src_uri}: no figure named {name!r} is registered in posenc.figures")
        pictures = "\n".join(figure_picture(name, manifest[name], variant, page.file.url) for variant in ("light", "dark"))
        caption_html = f"\n<figcaption>{caption_math(stacked_caption(caption))}</figcaption>" if caption else ""
        return f'<figure class="posenc-figure" id="figure-{name}" markdown="span">\n{pictures}{caption_html}\n</figure>'

    return FIGURE_LINE.sub(embed, markdown)


# Screens narrower than this get the narrow layout of every figure (posenc.figures._style): the
# wide one (691 px) would be scaled below 11-px text in a column under ~688 px. Material's own
# breakpoint for phones and small tablets, so the figure changes where the page layout does.
NARROW_MEDIA = "(max-width: 44.9375em)"


_SIDE = re.compile(r"\b(Left|Right|Middle)(?=(?: and (?:left|right))?:)|(?<=\()(left|right)(?=[,):])|(?<=Middle and )(left|right)(?=:)")
_STACKED = {"left": "top", "right": "bottom", "middle": "middle"}


def stacked_caption(caption: str) -> str:
    """A caption whose panel words follow the layout shown: "Left:" reads "Top:" on a narrow
    screen, where the panels are stacked (both words are in the page; CSS shows one).

    >>> stacked_caption("Left: a. Middle and right: b (right, log).")  # doctest: +ELLIPSIS
    '<span class="posenc-wide-word">Left</span><span class="posenc-narrow-word">Top</span>: a. ...'
    >>> "Bottom" in stacked_caption("Right: b"), stacked_caption("left is better")
    (True, 'left is better')
    """
    def swap(match: re.Match[str]) -> str:
        word = match[0]
        narrow = _STACKED[word.lower()]
        narrow = narrow.capitalize() if word[0].isupper() else narrow
        return f'<span class="posenc-wide-word">{word}</span><span class="posenc-narrow-word">{narrow}</span>'

    return _SIDE.sub(swap, caption)


def caption_math(caption: str) -> str:
    """Math in a caption (``\\(...\\)``) marked as pymdownx.arithmatex marks it in text, so that
    the site typesets it (a figure's caption is raw HTML, which Markdown leaves alone).

    >>> print(caption_math(r"pair \\(j\\) turns at \\(b^{-2j/d}\\)"))
    pair <span class="arithmatex">\\(j\\)</span> turns at <span class="arithmatex">\\(b^{-2j/d}\\)</span>
    """
    from html import escape

    return re.sub(r"\\\((.+?)\\\)", lambda m: f'<span class="arithmatex">\\({escape(m[1], quote=False)}\\)</span>', caption)


def intrinsic_size(path: str) -> tuple[int, int] | None:
    """(width, height) in CSS pixels of a figure file: an SVG's pt size, a GIF's header."""
    data = Path(path).read_bytes()[:4096]
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return int.from_bytes(data[6:8], "little"), int.from_bytes(data[8:10], "little")
    match = re.search(rb'<svg[^>]*\bwidth="([\d.]+)pt"[^>]*\bheight="([\d.]+)pt"', data)
    return (round(float(match[1]) * 4 / 3), round(float(match[2]) * 4 / 3)) if match else None


def figure_picture(name: str, entry: dict[str, Any], palette_name: str, page_url: str) -> str:
    """One palette of a figure: a ``<picture>`` whose ``<img>`` is the wide layout (its
    ``#only-light``/``#only-dark`` suffix lets Material show the palette's image) and whose
    ``<source>`` serves the narrow layout to narrow screens; both lazy, both sized (no layout
    shift while they load)."""
    from html import escape

    from mkdocs.utils import get_relative_url

    def url(variant: str) -> str:
        return get_relative_url(figure_uri(name, variant, entry["extension"]), page_url)

    def size(variant: str) -> str:
        found = intrinsic_size(entry["files"][variant])
        return f' width="{found[0]}" height="{found[1]}"' if found else ""

    narrow = f"narrow-{palette_name}"
    source = (f'<source media="{NARROW_MEDIA}" srcset="{url(narrow)}"{size(narrow)}>'
              if narrow in entry["files"] else "")
    return (f"<picture>{source}<img src=\"{url(palette_name)}#only-{palette_name}\" alt=\"{escape(entry['alt'])}\""
            f'{size(palette_name)} loading="lazy"></picture>')


def _accessible(output: str) -> str:
    """Fixes for what axe-core finds in Material's templates (checked by ``make check-site``)."""
    # the search dialog has no accessible name (aria-dialog-name)
    output = output.replace(SEARCH_DIALOG, SEARCH_DIALOG[:-1] + ' aria-label="Search">', 1)
    # wide display math scrolls sideways: keyboard users must be able to reach it (scrollable-region-focusable)
    return output.replace('<div class="arithmatex">', '<div class="arithmatex" tabindex="0">')


def _first_view(output: str, config: MkDocsConfig) -> str:
    """What a first view downloads and paints (hooks/site_weight.py): KaTeX only with math, no
    fallback images under widgets, the search index on demand, the reader's palette at once."""
    output = code_break_points(noscript_fallbacks(drop_math_assets(output)))
    output = output.replace("</head>", DEFER_SEARCH_INDEX + "</head>", 1)
    palettes = config.theme.get("palette") or []
    body = re.search(r"<body\b[^>]*>", output)
    if body and isinstance(palettes, list):
        output = output[:body.end()] + palette_script(palettes) + output[body.end():]
    return output


def on_post_template(output: str, template_name: str, config: MkDocsConfig) -> str:
    return _first_view(_accessible(output), config) if template_name == "404.html" else output


def on_post_build(config: MkDocsConfig) -> None:
    for sheet in sorted((Path(config.site_dir) / "stylesheets").glob("*.css")):  # the site's own, from docs/
        sheet.write_text(minify_css(sheet.read_text(encoding="utf-8")), encoding="utf-8")
    index = Path(config.site_dir) / "search" / "search_index.json"
    if index.is_file():
        before, after = prune_search_index(index)
        log.info("search index: %d kB -> %d kB (outputs and listing bodies left out)", before // 1000, after // 1000)


def on_post_page(output: str, page: Page, config: MkDocsConfig) -> str:
    output = plain_listing_math(_first_view(_accessible(output), config))  # docstring TeX in listings
    if page.file.src_uri.startswith("notebooks/") and page.file.src_uri.endswith(".py"):
        output = NOTEBOOK_MERMAID.sub("", NOTEBOOK_MATHJAX.sub("", output))
        output = prune_inline_styles(output)  # JupyterLab's 575 kB stylesheet, cut to what the page uses
        # cell ids are random per conversion: number them so that two builds give the same bytes
        numbers = itertools.count()
        output = NOTEBOOK_CELL_ID.sub(lambda _: f'id="cell-id={next(numbers)}"', output)
        # code cells scroll sideways: let keyboard users reach them (axe-core: scrollable-region-focusable)
        output = output.replace('<div class="highlight-ipynb', '<div tabindex="0" class="highlight-ipynb')
        output = re.sub(r'(<div class="jp-RenderedText[^>]*>\s*)<pre>', r'\1<pre tabindex="0">', output)  # printed output scrolls too
        output = _notebook_links(output, page, config)
        output = NOTEBOOK_SVG_IMAGE.sub(_inline_svg, output)
    return output


def _inline_svg(match: re.Match[str]) -> str:
    """A notebook's SVG plot inline instead of a base64 ``<img>``: the page's CSS then reaches it
    (posenc.figures.notebook_style draws plots whose colours follow the page's palette), and it
    weighs a quarter less. Its description stays (the plot's own ``aria-label``, else the alt)."""
    import base64

    svg = base64.b64decode(match["data"]).decode("utf-8")
    svg = re.sub(r"^\s*<\?xml[^>]*\?>\s*(?:<!DOCTYPE[^>]*>\s*)?", "", svg)
    if "aria-label=" not in svg[:svg.find(">")]:
        svg = svg.replace("<svg", f'<svg role="img" aria-label="{match["alt"]}"', 1)
    return svg


def notebook_service_links(repo_url: str | None, source: str, branch: str = "main") -> list[tuple[str, str]]:
    """(label, URL) of services that open the notebook ``source`` (a repository path) from GitHub:
    links only, nothing is fetched by the page. Empty unless ``repo_url`` is a GitHub repository.

    Only Binder: the notebooks are jupytext ``.py`` files, which Binder's JupyterLab opens as
    notebooks when jupytext is installed there; Colab opens only ``.ipynb`` files kept in a repository.
    """
    match = re.match(r"^https://github\.com/([\w.-]+/[\w.-]+?)/?$", repo_url or "")
    if match is None:
        return []
    return [("Open in Binder", f"https://mybinder.org/v2/gh/{match[1]}/{branch}?urlpath=lab/tree/{source}")]


def _notebook_links(output: str, page: Page, config: MkDocsConfig) -> str:
    """The download link and the notebook-service links, right under the notebook's title."""
    name = Path(page.file.src_uri).stem
    links = [f'<a href="../{name}.ipynb" download>Download this notebook ({name}.ipynb)</a>']
    source = f"{Path(config.docs_dir).name}/{page.file.src_uri}"
    links += [f'<a href="{url}" rel="noopener">{label}</a>' for label, url in notebook_service_links(config.repo_url, source)]
    block = (f'<p class="posenc-download posenc-notebook-links">{" ".join(links)}<br>It runs as is once posenc '
             "is installed (<code>pip install -e .</code> in a checkout of the repository).</p>")
    article = '<article class="md-content__inner md-typeset">'
    start = output.find(article)
    title_end = output.find("</h1>", start) if start >= 0 else -1
    if title_end >= 0:
        return output[:title_end + 5] + block + output[title_end + 5:]
    return output.replace(article, article + block, 1)


def on_serve(server: Any, config: MkDocsConfig, builder: Any) -> Any:
    server.watch(str(ROOT / "posenc"))
    return server
