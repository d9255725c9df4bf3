"""The site's own fonts (hooks/site_fonts.py) and the plain-text math of source listings
(hooks/listing_math.py): what the build publishes, checked without building the site."""

from __future__ import annotations

import doctest
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "hooks"))

import listing_math  # noqa: E402
import site_fonts  # noqa: E402

needs_fonts = pytest.mark.skipif(not (site_fonts.NODE_MODULES / "@fontsource-variable" / "source-sans-3").is_dir(),
                                 reason="needs node_modules (npm ci, done by make install)")


def test_listing_math_examples() -> None:
    """The hooks are not under Sybil's paths: their docstring examples run here."""
    result = doctest.testmod(listing_math)
    assert result.attempted >= 4 and result.failed == 0


@pytest.mark.parametrize(("tex", "plain"), [
    (r"\delta(i, j)", "δ(i, j)"),
    (r"0, \dots, 2k - 1", "0, …, 2k - 1"),
    (r"2\pi \cdot \text{base}", "2π · base"),
    (r"W_{k,R} R_{i-j}", "W_(k,R) R_(i-j)"),
    (r"\frac{1}{\sqrt{d}}", "(1)/(√d)"),
])
def test_plain_tex(tex: str, plain: str) -> None:
    assert listing_math.plain_tex(tex) == plain


def test_only_docstrings_change() -> None:
    code = ('<pre><code><span class="n">pattern</span> <span class="o">=</span> <span class="sa">r</span>'
            '<span class="s2">&quot;\\(x\\)&quot;</span>\n<span class="sd">&quot;&quot;&quot;Scale by \\(\\sqrt{d}\\) '
            'and \\(\\alpha\\).&quot;&quot;&quot;</span></code></pre>')
    out = listing_math.plain_listing_math(code)
    assert '<span class="s2">&quot;\\(x\\)&quot;</span>' in out  # a string in the code keeps its text
    assert "Scale by √d and α." in out and "\\(" not in out.split('class="sd"')[1]


@needs_fonts
def test_fonts_published_with_their_faces() -> None:
    files = site_fonts.font_files()
    fonts = [uri for uri in files if uri.endswith(".woff2")]
    assert len(fonts) == sum(len(subsets) for *_, subsets in site_fonts.FACES)
    assert sum(path.stat().st_size for uri, path in files.items() if uri in fonts) < 50_000  # the 1 MB first view
    assert all(path.is_file() for path in files.values())
    css = site_fonts.font_css()
    sources = re.findall(r"src: url\(([^)]+)\)", css)
    assert sorted(sources) == sorted(Path(uri).name for uri in fonts)  # one face per file, each file used
    assert {site_fonts.TEXT_FAMILY} == set(re.findall(r"font-family: '([^']+)'", css))
    assert "http" not in css  # nothing from another host


@needs_fonts
def test_inline_faces_embed_the_files() -> None:
    css = site_fonts.font_css(inline=True)
    assert "url(./files/" not in css and css.count("url(data:font/woff2;base64,") == len(re.findall("@font-face", css))
