"""The reader hooks (hooks/reader.py and the modules it calls) and the site's reading checks
(tests/site/reader_checks.py)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hooks"))

import citations
import page_blocks
import reader
import repository
import result_tables
import search_text
import values
from posenc_site import notebook_service_links
from repository import repository_from_remote
from search_text import clean_search_index, strip_math, tex_to_text

from tests.site import reader_checks


@pytest.mark.parametrize("module", [citations, page_blocks, repository, result_tables, search_text, values],
                         ids=lambda module: module.__name__)
def test_hook_docstring_examples(module: Any) -> None:
    """The hooks are not under Sybil's paths: their docstring examples run here."""
    import doctest

    failed, attempted = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert attempted > 0 and failed == 0


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


    module = types.ModuleType("posenc.example_tables")
    module.scores = lambda: (["method", "perplexity"], [["RoPE", "3.91"], ["ALiBi<x", "12.00"]])  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "posenc.example_tables", module)
    markdown = "Text\n\n[[table posenc.example_tables:scores | Perplexity at 8x]]\n\nMore"
    page = types.SimpleNamespace(file=types.SimpleNamespace(src_uri="page.md"))
    out = reader.on_page_markdown(markdown, page, None)  # type: ignore[arg-type]
    assert '<figure class="posenc-table posenc-table--compact" id="table-scores" markdown="block">' in out
    assert '<tr><th scope="row">ALiBi&lt;x</th><td class="posenc-num" data-label="perplexity">12.00' in out  # escaped, right-aligned
    assert '<figcaption markdown="span">Perplexity at 8x</figcaption>' in out and out.startswith("Text") and out.endswith("More")
    with pytest.raises(Exception, match="page.md: .*no function 'missing'"):
        reader.on_page_markdown("[[table posenc.example_tables:missing]]", page, None)  # type: ignore[arg-type]


def test_citations_link_to_the_references_page(tmp_path: Path) -> None:

    bib = tmp_path / "_references.yml"
    bib.write_text("su2021:\n  authors: Jianlin Su, Yu Lu, Shengfeng Pan\n  year: 2021\n  title: RoFormer\n"
                   "  arxiv: '2104.09864'\n  code: https://github.com/ZhuiyiTechnology/roformer\n"
                   "press2022:\n  authors: Ofir Press, Noah A. Smith\n  year: 2022\n  title: Train Short, Test Long\n"
                   "  arxiv: '2108.12409'\n")
    refs = citations.load_references(bib)
    out = citations.cite_references("RoPE [[cite su2021]] and ALiBi [[cite press2022, su2021]].\n\n[[references]]\n",
                                 "sub/page.md", refs)
    assert "([Su et al. 2021](../references.md#ref-su2021))" in out
    assert "([Press and Smith 2022](../references.md#ref-press2022); [Su et al. 2021](../references.md#ref-su2021))" in out
    listing = out.split('<ul class="posenc-references">')[1]
    assert listing.index("Jianlin Su") < listing.index("Ofir Press")  # order of first citation
    assert 'href="https://arxiv.org/abs/2104.09864"' in listing and "official code" in listing
    page = citations.references_page(refs)
    assert page.index('id="ref-press2022"') < page.index('id="ref-su2021"')  # sorted by author
    with pytest.raises(ValueError, match="no such key"):
        citations.cite_references("[[cite nobody2020]]", "page.md", refs)
    bib.write_text("bad:\n  authors: A\n  year: 2020\n  title: T\n")
    with pytest.raises(ValueError, match="needs authors, year, title and a link"):
        citations.load_references(bib)


def test_figures_are_numbered_and_referenced() -> None:

    figure = '<figure class="posenc-figure" id="figure-{0}" markdown="span">\n![alt](x.svg)\n<figcaption>{1}</figcaption>\n</figure>'
    text = "\n".join(["[[ref heat]] and [[ref curve]]", figure.format("curve", "A curve"), figure.format("heat", "A map")])
    out = page_blocks.number_figures(text, "page.md")
    assert out.startswith("[Figure 2](#figure-heat) and [Figure 1](#figure-curve)")
    assert "<figcaption>Figure 1. A curve</figcaption>" in out and "<figcaption>Figure 2. A map</figcaption>" in out
    with pytest.raises(ValueError, match=r"page.md: \[\[ref nothing\]\]"):
        page_blocks.number_figures("[[ref nothing]]", "page.md")


def test_stacked_tables_label_each_cell_with_its_column() -> None:
    import markdown

    page = ('<div class="posenc-stack" markdown>\n\n| Model | From the *config* |\n|:---|---:|\n'
            '| FLUX.1 | `axes_dims_rope` |\n| Wan 2.1 | the head, \\(d\\) |\n\n</div>\n\n| A | B |\n|---|---|\n| 1 | 2 |\n')
    html = markdown.markdown(page, extensions=["md_in_html", "tables"])  # what the site's Markdown gives
    out = page_blocks.label_stacked_cells(html, "page.md")
    stacked, plain = out.split("</div>")
    assert stacked.count('data-label="Model"') == 2 and stacked.count('data-label="From the config"') == 2
    assert stacked.count("<td") == 4 and "data-label" not in plain  # only the marked table
    short = re.sub(r"<td[^>]*>FLUX.1</td>", "", html)
    assert short != html
    with pytest.raises(ValueError, match="page.md: a posenc-stack table row has another number of cells than its 2"):
        page_blocks.label_stacked_cells(short, "page.md")


def test_citation_forms_locators_and_cut_short_author_lists() -> None:

    refs = {"su2021": {"authors": "Jianlin Su, Yu Lu, Shengfeng Pan", "year": 2021, "title": "RoFormer", "arxiv": "2104.09864"},
            "t5": {"authors": "Colin Raffel, et al.", "year": 2020, "title": "T5", "arxiv": "1910.10683"},
            "gemma": {"authors": "Gemma Team", "short": "Gemma Team", "year": 2025, "title": "Gemma 3", "arxiv": "2503.19786"},
            "pair": {"authors": "Ofir Press, Lior Wolf", "year": 2017, "title": "Tying", "arxiv": "1608.05859"}}
    assert [citations.short_citation(refs[k]) for k in refs] == ["Su et al. 2021", "Raffel et al. 2020", "Gemma Team 2025", "Press and Wolf 2017"]
    out = citations.cite_references("[[citet su2021 | eq. 34]] and [[cite t5, gemma | section 2.1]]; [[citet pair]].",
                                 "page.md", refs)
    assert out == ("[Su et al. (2021, eq. 34)](references.md#ref-su2021) and ([Raffel et al. 2020](references.md#ref-t5); "
                   "[Gemma Team 2025](references.md#ref-gemma), section 2.1); [Press and Wolf (2017)](references.md#ref-pair).")
    # cites that reach the page through a snippet include are linked in the HTML, relative to the page
    html = citations.cite_html("<p>[[cite su2021 | section 3]] and [[citet gemma]]</p>", "errata/", "references/", refs, "errata.md")
    assert html == ('<p>(<a href="../references/#ref-su2021">Su et al. 2021</a>, section 3) and '
                    '<a href="../references/#ref-gemma">Gemma Team (2025)</a></p>')
    with pytest.raises(ValueError, match=r"errata.md: \[\[cite nobody\]\]"):
        citations.cite_html("[[cite nobody]]", "errata/", "references/", refs, "errata.md")
    question = citations.reference_html("q", {"authors": "A B", "year": 2024, "title": "Why?", "arxiv": "2410.06205"})
    assert "<em>Why?</em> <a" in question  # no second full stop after a question mark


def test_cite_this_page_is_reproducible_and_escaped() -> None:

    block = page_blocks.cite_this_page("RoPE in today's models", "rope-today/", "posenc", "https://example.org/posenc/",
                                  "2026-11-20")
    assert block.startswith('<details class="quote posenc-cite" data-search-exclude="" markdown="block">')
    assert "<summary>Cite this page</summary>" in block
    assert ("The posenc authors (2026). “RoPE in today&#x27;s models”. <em>posenc</em>, last updated 2026-11-20. "
            '<a href="https://example.org/posenc/rope-today/">https://example.org/posenc/rope-today/</a>') in block
    bibtex = block.split("```bibtex\n")[1].split("\n```")[0]
    assert bibtex.splitlines()[0] == "@misc{posenc:rope-today,"
    assert "  title        = {{RoPE in today's models}}," in bibtex and "  year         = {2026}," in bibtex
    assert "  url          = {https://example.org/posenc/rope-today/}" in bibtex and bibtex.endswith("\n}")
    assert page_blocks.cite_this_page("RoPE", "rope/", "posenc", None, "2026-11-20") == \
        page_blocks.cite_this_page("RoPE", "rope/", "posenc", None, "2026-11-20")  # no clock, no network
    undated = page_blocks.cite_this_page("A & B_1 {x}", "p/", "posenc", None, None, author="Jane Doe")
    assert "year" not in undated and "url" not in undated and "last updated" not in undated
    assert r"title        = {{A \& B\_1 \{x\}}}" in undated and "author       = {{Jane Doe}}" in undated
    assert "Jane Doe. “A &amp; B_1 {x}”. <em>posenc</em>." in undated
    assert page_blocks.page_title("Intro\n# The formula, step by step { #top }\ntext", "x") == "The formula, step by step"
    assert page_blocks.page_title("# Angle \\(m\\theta\\) and `code`", "x") == "Angle mθ and code"


def test_chapters_end_with_cite_this_page(monkeypatch: pytest.MonkeyPatch) -> None:
    import types


    monkeypatch.setattr(reader.HOOKS, "dates", {"docs/rope.md": "2026-11-20"})
    config = types.SimpleNamespace(site_name="posenc", site_url="https://example.org/posenc/", site_author=None)

    def page(src: str, generated: str | None = None) -> Any:
        file = types.SimpleNamespace(src_uri=src, abs_src_path=None if generated else f"/docs/{src}", generated_by=generated,
                                     name=src.removesuffix(".md"))
        return types.SimpleNamespace(file=file, url=src.removesuffix(".md") + "/", title=None)

    out = reader.on_page_markdown("# RoPE: rotary position embedding\n\nText.\n", page("rope.md"), config)  # type: ignore[arg-type]
    assert out.startswith("# RoPE: rotary position embedding\n\nText.\n\n<details")
    assert "“RoPE: rotary position embedding”" in out and "last updated 2026-11-20" in out
    assert "url          = {https://example.org/posenc/rope/}" in out
    for other in (page("index.md"), page("references.md", generated="reader"), page("notebooks/lab.py")):
        assert "Cite this page" not in reader.on_page_markdown("# Title\n", other, config)  # type: ignore[arg-type]


def test_bibliography_and_pages_use_one_reference_style() -> None:
    """Every [[cite]] key on every page exists, every entry is cited somewhere, and no page keeps a
    hand-written reference list or a bare arXiv link in its prose."""
    import re


    docs = Path(citations.ROOT) / "docs"
    refs = citations.load_references()
    assert refs, "docs/_references.yml is missing or empty"
    pages = sorted(docs.glob("*.md")) + sorted((docs / "_errata").glob("*.md"))
    used: set[str] = set()
    for path in pages:
        text = path.read_text(encoding="utf-8")
        for match in citations.CITE.finditer(text):
            keys = {k.strip() for k in match["keys"].split(",")}
            assert keys <= refs.keys(), f"{path.name}: unknown keys {sorted(keys - refs.keys())}"
            used |= keys
        section = re.search(r"^## References.*?$(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
        if section:
            assert "[[references]]" in section[1], f"{path.name}: References section without [[references]]"
            assert "arxiv.org" not in section[1], f"{path.name}: a hand-written arXiv reference"
        prose = re.sub(r"^\[\w+\]: .*$", "", text, flags=re.MULTILINE)  # link definitions (code lines) stay
        assert "arxiv.org/abs" not in prose, f"{path.name}: an arXiv link outside the bibliography"
    assert set(refs) - used == set(), f"never cited: {sorted(set(refs) - used)}"
    for key, entry in refs.items():
        assert re.fullmatch(r"[a-z][a-z0-9]*\d{4}[a-z0-9]*", key), key
        assert str(entry["year"]) in key, f"{key}: year {entry['year']} not in the key"
