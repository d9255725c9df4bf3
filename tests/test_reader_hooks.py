"""The reader hooks (hooks/reader.py) and the site's reading checks (tests/site/reader_checks.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hooks"))

from posenc_site import notebook_service_links
from reader import clean_search_index, repository_from_remote, strip_math, tex_to_text

from tests.site import reader_checks


@pytest.mark.parametrize(
    ("tex", "text"),
    [
        (r"r_i = L/\lambda_i", "r_i = L/λ_i"),
        (r"\theta_i = b^{-2i/d}", "θ_i = b^-2i/d"),
        (r"\frac{1}{\sqrt{d}}", "(1)/(√(d))"),
        (r"\left\lVert x \right\rVert \le \text{max}", "‖ x ‖ ≤ max"),
        (r"\begin{aligned} a &= b \\ c &= d \end{aligned}", "a = b c = d"),
        (r"\mathrm{softmax}(q \cdot k)", "softmax(q · k)"),
        (r"\unknowncommand x", "unknowncommand x"),
    ],
)
def test_tex_to_text_leaves_no_command(tex: str, text: str) -> None:
    assert tex_to_text(tex) == text
    assert "\\" not in tex_to_text(tex)


def test_strip_math_only_touches_math() -> None:
    assert strip_math(r"cost \(O(n^2)\) and \[x = \alpha\] end") == "cost O(n^2) and x = α end"
    assert strip_math("price $5 and $6", dollars=False) == "price $5 and $6"
    assert strip_math(r"angle $m\theta$", dollars=True) == "angle mθ"


def test_clean_search_index_rewrites_entries(tmp_path: Path) -> None:
    index = tmp_path / "search_index.json"
    docs = [{"location": "rope/", "title": r"Angle \(m\theta\)", "text": r"<p>ratio \(r = L/\lambda\)</p><pre><code>x\n</code></pre>"},
            {"location": "notebooks/lab/", "title": "Lab", "text": r"holds $\sin(m)$"},
            {"location": "plain/", "title": "Plain", "text": "no math, $5"}]
    index.write_text(json.dumps({"config": {}, "docs": docs}))
    assert clean_search_index(index) == 3
    cleaned = json.loads(index.read_text())["docs"]
    assert cleaned[0]["title"] == "Angle mθ" and "r = L/λ" in cleaned[0]["text"]
    assert cleaned[1]["text"] == "holds sin(m)"
    assert cleaned[2]["text"] == "no math, $5"  # outside notebooks a dollar is a dollar
    assert reader_checks.search_index_problems(tmp_path / "nowhere") != []  # no index: a problem
    site = tmp_path / "site"
    (site / "search").mkdir(parents=True)
    (site / "search" / "search_index.json").write_text(json.dumps({"docs": cleaned}))
    assert reader_checks.search_index_problems(site) == []
    (site / "search" / "search_index.json").write_text(json.dumps({"docs": docs}))
    assert len(reader_checks.search_index_problems(site)) == 2


@pytest.mark.parametrize(
    ("remote", "url"),
    [
        ("https://github.com/someone/posenc.git", "https://github.com/someone/posenc"),
        ("git@github.com:someone/posenc.git", "https://github.com/someone/posenc"),
        ("ssh://git@gitlab.com/group/posenc", "https://gitlab.com/group/posenc"),
        ("/srv/git/posenc.git", None),
        ("", None),
    ],
)
def test_repository_from_remote(remote: str, url: str | None) -> None:
    assert repository_from_remote(remote) == url


def test_notebook_links_only_for_github() -> None:
    links = notebook_service_links("https://github.com/someone/posenc", "docs/notebooks/lab.py")
    assert links == [("Open in Binder", "https://mybinder.org/v2/gh/someone/posenc/main?urlpath=lab/tree/docs/notebooks/lab.py")]
    assert notebook_service_links(None, "docs/notebooks/lab.py") == []
    assert notebook_service_links("https://example.org/posenc", "docs/notebooks/lab.py") == []


def test_svg_text_scale_and_copy_rules(tmp_path: Path) -> None:
    svg = tmp_path / "f.svg"
    svg.write_text('<svg width="518.4pt" viewBox="0 0 518.4 302.4"><text style="font-size: 10.5px">a</text>'
                   '<text style="font-size: 7.35px">b</text></svg>')
    assert reader_checks.svg_text_scale(svg) == (7.35, 518.4)
    assert reader_checks.copy_parses("pycon", "x = 1\nprint(x)") is None
    assert reader_checks.copy_parses("pycon", ">>> x = 1") is not None  # a prompt is not Python
    assert reader_checks.copy_parses("text", ">>> anything") is None
    failures, tolerated = reader_checks.overflow_problems("some-page", 1280, {"math": ["3 px: x"], "code": []})
    assert len(failures) == 1 and not tolerated


def test_table_lines_render_a_function_result(monkeypatch: pytest.MonkeyPatch) -> None:
    import types

    import reader

    module = types.ModuleType("posenc.example_tables")
    module.scores = lambda: (["method", "perplexity"], [["RoPE", 3.91], ["ALiBi|x", 12]])  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "posenc.example_tables", module)
    markdown = "Text\n\n[[table posenc.example_tables:scores | Perplexity at 8x]]\n\nMore"
    page = types.SimpleNamespace(file=types.SimpleNamespace(src_uri="page.md"))
    out = reader.on_page_markdown(markdown, page, None)  # type: ignore[arg-type]
    assert '<figure class="posenc-table" id="table-scores" markdown="block">' in out
    assert "| method | perplexity |\n| --- | ---: |\n| RoPE | 3.91 |\n| ALiBi\\|x | 12 |" in out
    assert "<figcaption>Perplexity at 8x</figcaption>" in out and out.startswith("Text") and out.endswith("More")
    with pytest.raises(Exception, match="page.md: .*no function 'missing'"):
        reader.on_page_markdown("[[table posenc.example_tables:missing]]", page, None)  # type: ignore[arg-type]


def test_citations_link_to_the_references_page(tmp_path: Path) -> None:
    import reader

    bib = tmp_path / "_references.yml"
    bib.write_text("su2021:\n  authors: Jianlin Su, Yu Lu, Shengfeng Pan\n  year: 2021\n  title: RoFormer\n"
                   "  arxiv: '2104.09864'\n  code: https://github.com/ZhuiyiTechnology/roformer\n"
                   "press2022:\n  authors: Ofir Press, Noah A. Smith\n  year: 2022\n  title: Train Short, Test Long\n"
                   "  arxiv: '2108.12409'\n")
    refs = reader.load_references(bib)
    out = reader.cite_references("RoPE [[cite su2021]] and ALiBi [[cite press2022, su2021]].\n\n[[references]]\n",
                                 "sub/page.md", refs)
    assert "([Su et al. 2021](../references.md#ref-su2021))" in out
    assert "([Press and Smith 2022](../references.md#ref-press2022); [Su et al. 2021](../references.md#ref-su2021))" in out
    listing = out.split('<ul class="posenc-references">')[1]
    assert listing.index("Jianlin Su") < listing.index("Ofir Press")  # order of first citation
    assert 'href="https://arxiv.org/abs/2104.09864"' in listing and "official code" in listing
    page = reader.references_page(refs)
    assert page.index('id="ref-press2022"') < page.index('id="ref-su2021"')  # sorted by author
    with pytest.raises(ValueError, match="no such key"):
        reader.cite_references("[[cite nobody2020]]", "page.md", refs)
    bib.write_text("bad:\n  authors: A\n  year: 2020\n  title: T\n")
    with pytest.raises(ValueError, match="needs authors, year, title and a link"):
        reader.load_references(bib)


def test_figures_are_numbered_and_referenced() -> None:
    import reader

    figure = '<figure class="posenc-figure" id="figure-{0}" markdown="span">\n![alt](x.svg)\n<figcaption>{1}</figcaption>\n</figure>'
    text = "\n".join(["[[ref heat]] and [[ref curve]]", figure.format("curve", "A curve"), figure.format("heat", "A map")])
    out = reader.number_figures(text, "page.md")
    assert out.startswith("[Figure 2](#figure-heat) and [Figure 1](#figure-curve)")
    assert "<figcaption>Figure 1. A curve</figcaption>" in out and "<figcaption>Figure 2. A map</figcaption>" in out
    with pytest.raises(ValueError, match=r"page.md: \[\[ref nothing\]\]"):
        reader.number_figures("[[ref nothing]]", "page.md")
