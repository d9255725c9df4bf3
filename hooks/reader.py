"""MkDocs hooks for the reader's affordances (registered in ``mkdocs.yml`` after ``posenc_site``).

* **Math without flashes**: a one-line script in ``<head>`` marks the document ``posenc-js``, so
  ``posenc.css`` can hide ``.arithmatex`` until ``katex-init.js`` has typeset it (without
  JavaScript the TeX stays visible).
* **Search without TeX**: Material's search index holds each page's text with its math as TeX
  source (``\\(r_i = L/\\lambda_i\\)``); after the build the index is rewritten with every
  ``\\( \\)`` and ``\\[ \\]`` span turned into plain text (``r_i = L/λ_i``), see `tex_to_text`.
* **Repository link, "edit this page"**: ``repo_url`` comes from ``POSENC_REPO_URL`` (mkdocs.yml);
  when it is unset, from the git remote ``origin`` if that is a GitHub or GitLab address; else
  the site has no repository link. Generated pages (the API reference) get no edit link. The
  link is plain: Material's widget would fetch star counts from api.github.com on every visit.
* **References**: with a bibliography ``docs/_references.yml`` (key: authors, year, title, venue,
  and arxiv/doi/url, code), ``[[cite KEY]]`` or ``[[cite A, B]]`` in text becomes author-year
  links ("(Su et al. 2021)"; ``[[citet KEY]]``: "Su et al. (2021)", as the subject of a
  sentence) to the generated page ``references.md`` (add it to the nav), and a line
  ``[[references]]`` lists what the page cites. Cites inside snippet includes
  (``docs/_errata/*.md``) are linked in the HTML, after the includes are expanded. An entry may
  set ``short`` (``Gemma Team``) when the first author's surname is not how the text names it.
* **Cite this page**: every chapter (a Markdown page other than the home page) ends with a
  collapsed block holding a plain-text citation and a BibTeX ``@misc`` entry, from ``site_name``,
  ``site_author`` (else "The <site_name> authors"), ``site_url`` and the page title; its date is
  the page's last commit date (below), never the build date, and it is kept out of the search index.
* **Numbered figures**: each figure's caption starts "Figure N." (in page order), and
  ``[[ref NAME]]`` in the text becomes a link "Figure N" to the figure ``NAME`` on the same page.
* **Tables from code**: a line ``[[table posenc.module:function | caption]]`` becomes a Markdown
  table of what ``function()`` returns, ``(header, rows)``, computed at build time.
* **Last updated**: each page ends with the date of the last commit that changed its source
  (``git log``), so two builds of one commit give the same bytes; uncommitted pages show none.
"""

from __future__ import annotations

import json
import logging
import os
import posixpath
import re
import subprocess
from html import escape
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

log = logging.getLogger("mkdocs.hooks.reader")
ROOT = Path(__file__).resolve().parents[1]
JS_MARKER = '<script>document.documentElement.classList.add("posenc-js")</script>'

# ---------------------------------------------------------------------------------------------
# TeX -> plain text, for the search index

_SYMBOLS = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε", "zeta": "ζ",
    "eta": "η", "theta": "θ", "vartheta": "θ", "iota": "ι", "kappa": "κ", "lambda": "λ", "mu": "μ",
    "nu": "ν", "xi": "ξ", "pi": "π", "rho": "ρ", "sigma": "σ", "tau": "τ", "phi": "φ", "varphi": "φ",
    "chi": "χ", "psi": "ψ", "omega": "ω", "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ",
    "Pi": "Π", "Sigma": "Σ", "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω",
    "cdot": "·", "times": "×", "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "neq": "≠", "ne": "≠",
    "approx": "≈", "sim": "∼", "equiv": "≡", "infty": "∞", "sum": "Σ", "prod": "Π", "to": "→",
    "rightarrow": "→", "mapsto": "↦", "in": "∈", "pm": "±", "mp": "∓", "ldots": "…", "dots": "…",
    "cdots": "⋯", "lVert": "‖", "rVert": "‖", "Vert": "‖", "lvert": "|", "rvert": "|", "mid": "|",
    "langle": "⟨", "rangle": "⟩", "sqrt": "√", "partial": "∂", "nabla": "∇", "odot": "⊙",
    "otimes": "⊗", "oplus": "⊕", "top": "ᵀ", "lfloor": "⌊", "rfloor": "⌋", "lceil": "⌈",
    "rceil": "⌉", "circ": "∘", "forall": "∀", "exists": "∃", "quad": " ", "qquad": " ",
    "{": "{", "}": "}", "%": "%", "_": "_", "#": "#", "&": "&", ",": " ", ";": " ", ":": " ", "!": "",
    " ": " ",
}
_DROPPED = {"left", "right", "big", "Big", "bigg", "Bigg", "bigl", "bigr", "Bigl", "Bigr", "displaystyle",
            "textstyle", "nonumber", "notag", "limits", "underbrace", "overbrace", "tag"}
_WRAPPERS = re.compile(r"\\(?:text|textrm|textit|textbf|mathrm|mathbf|mathit|mathsf|mathtt|mathcal|mathbb|"
                       r"boldsymbol|bm|operatorname|hat|tilde|bar|vec|overline|underline)\s*\{([^{}]*)\}")
_ROOT = re.compile(r"\\sqrt\s*\{([^{}]*)\}")
_FRACTION = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
_ENVIRONMENT = re.compile(r"\\(?:begin|end)\s*\{[^{}]*\}(?:\{[^{}]*\})?")
_COMMAND = re.compile(r"\\([A-Za-z]+|.)")
_MATH = re.compile(r"\\\((.+?)\\\)|\\\[(.+?)\\\]", re.DOTALL)
_DOLLAR_MATH = re.compile(r"\$\$(.+?)\$\$|\$([^$\s][^$]*?)\$", re.DOTALL)  # notebook cells


def tex_to_text(tex: str) -> str:
    """A readable plain-text rendering of a TeX formula, with no backslash commands left.

    >>> tex_to_text(r"r_i = L/\\lambda_i")
    'r_i = L/λ_i'
    >>> tex_to_text(r"\\frac{\\sin(m\\theta)}{\\sqrt{d}} \\le \\text{base}^{2i/d}")
    '(sin(mθ))/(√(d)) ≤ base^2i/d'
    """
    text = _ENVIRONMENT.sub(" ", tex).replace("\\\\", " ").replace("&", " ")
    for _ in range(8):  # innermost first: nested fractions and wrappers
        new = _FRACTION.sub(r"(\1)/(\2)", _ROOT.sub(r"√(\1)", _WRAPPERS.sub(r"\1", text)))
        if new == text:
            break
        text = new

    def command(match: re.Match[str]) -> str:
        name = match[1]
        if name in _DROPPED:
            return ""
        return _SYMBOLS.get(name, name)

    text = _COMMAND.sub(command, text)
    text = re.sub(r"[{}]", "", text)
    return re.sub(r"\s+", " ", text).strip()


def strip_math(text: str, *, dollars: bool = False) -> str:
    """Every ``\\( \\)`` / ``\\[ \\]`` span of ``text`` (and ``$ $``, ``$$ $$`` if ``dollars``, as
    in notebooks) as plain text (see `tex_to_text`).

    >>> strip_math(r"wavelength \\(2\\pi\\) and $m\\theta_i$", dollars=True)
    'wavelength 2π and mθ_i'
    """
    def plain(match: re.Match[str]) -> str:
        return tex_to_text(match[1] if match[1] is not None else match[2])

    text = _MATH.sub(plain, text)
    return _DOLLAR_MATH.sub(plain, text) if dollars else text


def clean_search_index(path: Path) -> int:
    """Rewrite Material's search index without TeX; return how many entries changed."""
    data = json.loads(path.read_text(encoding="utf-8"))
    changed = 0
    for entry in data.get("docs", []):
        for key in ("title", "text"):
            value = entry.get(key)
            notebook = str(entry.get("location", "")).startswith("notebooks/")
            if isinstance(value, str) and ("\\(" in value or "\\[" in value or (notebook and "$" in value)):
                entry[key] = strip_math(value, dollars=notebook)
                changed += 1
    path.write_text(json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":")), encoding="utf-8")
    return changed


# ---------------------------------------------------------------------------------------------
# [[table posenc.module:function | caption]]: a table computed at build time

TABLE_LINE = re.compile(r"^\[\[table\s+(?P<target>posenc(?:\.\w+)*:\w+)\s*(?:\|\s*(?P<caption>.+?))?\s*\]\]\s*$", re.MULTILINE)
_NUMBER = re.compile(r"^[-+−]?[\d,]*\.?\d+(?:e[-+]?\d+)?%?$")


def table_markdown(header: list[str], rows: list[list[Any]], caption: str | None = None, name: str = "") -> str:
    """A Markdown table (numeric columns right-aligned) in a ``<figure>``, with an optional caption.

    >>> print(table_markdown(["method", "ppl"], [["RoPE", "3.9"], ["ALiBi", "12"]]))
    <figure class="posenc-table" markdown="block">
    <BLANKLINE>
    | method | ppl |
    | --- | ---: |
    | RoPE | 3.9 |
    | ALiBi | 12 |
    <BLANKLINE>
    </figure>
    """
    def cell(value: Any) -> str:
        return str(value).replace("|", "\\|").replace("\n", " ")

    cells = [[cell(value) for value in row] for row in rows]
    if any(len(row) != len(header) for row in cells):
        raise ValueError(f"table {name!r}: every row must have {len(header)} cells")
    align = ["---:" if cells and all(_NUMBER.match(row[i].replace(" ", "")) for row in cells) else "---"
             for i in range(len(header))]
    lines = ["| " + " | ".join(cell(h) for h in header) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in cells]
    ident = f' id="table-{name}"' if name else ""
    caption_html = f"<figcaption>{caption}</figcaption>\n" if caption else ""
    return f'<figure class="posenc-table"{ident} markdown="block">\n\n' + "\n".join(lines) + f"\n\n{caption_html}</figure>"


def render_table(target: str, caption: str | None = None) -> str:
    """Call ``posenc.module:function`` (no arguments), which returns ``(header, rows)``, and
    render its table. The page can show the same function's code (a snippet include), so the
    numbers in the table and the code that makes them are one."""
    import importlib

    module_name, _, function_name = target.partition(":")
    function = getattr(importlib.import_module(module_name), function_name, None)
    if not callable(function):
        raise ValueError(f"[[table {target}]]: {module_name} has no function {function_name!r}")
    header, rows = function()
    return table_markdown(list(header), [list(row) for row in rows], caption, function_name.replace("_", "-"))


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, **_: Any) -> str:
    from mkdocs.exceptions import PluginError

    def replace(match: re.Match[str]) -> str:
        try:
            return render_table(match["target"], match["caption"])
        except Exception as error:  # any failure: name the page and the table
            raise PluginError(f"{page.file.src_uri}: {error}") from error

    if "[[table" in markdown:
        markdown = TABLE_LINE.sub(replace, markdown)
    if 'class="posenc-figure"' in markdown:
        try:
            markdown = number_figures(markdown, page.file.src_uri)
        except ValueError as error:
            raise PluginError(str(error)) from error
    if "[[cite" in markdown or "[[references]]" in markdown:
        try:
            markdown = cite_references(markdown, page.file.src_uri, _references)
        except ValueError as error:
            raise PluginError(str(error)) from error
    if is_chapter(page):
        title = page_title(markdown, str(page.title or page.file.name))
        markdown = markdown.rstrip("\n") + "\n\n" + cite_this_page(
            title, page.url, str(config.site_name), config.site_url, page_date(page), config.site_author)
    return markdown


# ---------------------------------------------------------------------------------------------
# numbered figures: "Figure 2." before each caption, [[ref NAME]] in text -> "Figure 2" link

FIGURE_BLOCK = re.compile(r'<figure class="posenc-figure" id="figure-(?P<name>[a-z0-9-]+)"(?P<rest>.*?)</figure>', re.DOTALL)
FIGURE_REF = re.compile(r"\[\[ref\s+(?P<name>[a-z0-9-]+)\s*\]\]")


def number_figures(markdown: str, page_src: str = "") -> str:
    """Number the page's figures in order (after ``posenc_site`` has embedded them) and turn
    ``[[ref NAME]]`` into a link "Figure N" to the figure of that name on the same page.

    >>> text = ('See [[ref b]].\\n<figure class="posenc-figure" id="figure-a" markdown="span">'
    ...         '\\n<figcaption>First</figcaption>\\n</figure>\\n<figure class="posenc-figure" '
    ...         'id="figure-b" markdown="span">\\n<figcaption>Second</figcaption>\\n</figure>')
    >>> out = number_figures(text)
    >>> out.split("\\n")[0], "<figcaption>Figure 2. Second</figcaption>" in out
    ('See [Figure 2](#figure-b).', True)
    """
    numbers: dict[str, int] = {}

    def number(match: re.Match[str]) -> str:
        numbers[match["name"]] = len(numbers) + 1
        rest = match["rest"].replace("<figcaption>", f"<figcaption>Figure {numbers[match['name']]}. ", 1)
        return f'<figure class="posenc-figure" id="figure-{match["name"]}"{rest}</figure>'

    markdown = FIGURE_BLOCK.sub(number, markdown)

    def reference(match: re.Match[str]) -> str:
        if match["name"] not in numbers:
            raise ValueError(f"{page_src}: [[ref {match['name']}]]: no figure of that name on this page")
        return f"[Figure {numbers[match['name']]}](#figure-{match['name']})"

    return FIGURE_REF.sub(reference, markdown)


# ---------------------------------------------------------------------------------------------
# references: docs/_references.yml, [[cite KEY]] in text, [[references]] on a page, references.md

REFERENCES = ROOT / "docs" / "_references.yml"
CITE = re.compile(r"\[\[cite(?P<narrative>t)?\s+(?P<keys>[\w.:-]+(?:\s*,\s*[\w.:-]+)*)\s*"
                  r"(?:\|\s*(?P<locator>[^\]|]+?)\s*)?\]\]")
REFERENCES_LINE = re.compile(r"^\[\[references\]\]\s*$", re.MULTILINE)


def load_references(path: Path = REFERENCES) -> dict[str, dict[str, Any]]:
    """The bibliography: ``{key: {authors, year, title, venue?, arxiv?, doi?, url?, code?}}``."""
    if not path.is_file():
        return {}
    import yaml  # type: ignore[import-untyped]

    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    for key, entry in data.items():
        missing = [field for field in ("authors", "year", "title") if field not in entry]
        if missing or not any(field in entry for field in ("arxiv", "doi", "url")):
            raise ValueError(f"{path.name}: reference {key!r} needs authors, year, title and a link "
                             f"(arxiv, doi or url); missing {missing or ['a link']}")
    return dict(data)


def short_citation(entry: dict[str, Any]) -> str:
    """``Su et al. 2021``, ``Press and Smith 2022``, ``Vaswani 2017``; ``short`` overrides the names.

    >>> short_citation({"authors": "Gemma Team", "short": "Gemma Team", "year": 2025})
    'Gemma Team 2025'
    >>> short_citation({"authors": "Ashish Vaswani, et al.", "year": 2018})
    'Vaswani et al. 2018'
    """
    if entry.get("short"):
        return f"{entry['short']} {entry['year']}"
    authors = [a.strip() for a in str(entry["authors"]).split(",") if a.strip()]
    more = any(a.rstrip(".").lower() in ("et al", "and others") for a in authors)  # a list cut short
    authors = [a for a in authors if a.rstrip(".").lower() not in ("et al", "and others")]
    surname = authors[0].split()[-1]
    rest = ("" if len(authors) == 1 and not more else f" and {authors[1].split()[-1]}" if len(authors) == 2 and not more
            else " et al.")
    return f"{surname}{rest} {entry['year']}"


def narrative_citation(entry: dict[str, Any], locator: str | None = None) -> str:
    """``Su et al. (2021)``, ``Su et al. (2021, eq. 34)``: the authors as a subject of the
    sentence (``[[citet KEY]]``, ``[[citet KEY | eq. 34]]``)."""
    short = short_citation(entry)
    return f"{short[: -len(str(entry['year']))].rstrip()} ({entry['year']}{f', {locator}' if locator else ''})"


def reference_html(key: str, entry: dict[str, Any]) -> str:
    """One bibliography entry, with every link it has (arXiv, DOI, official code, page).

    >>> print(reference_html("su2021", {"authors": "Jianlin Su, Yu Lu", "year": 2021,
    ...     "title": "RoFormer", "arxiv": "2104.09864"}))
    <li id="ref-su2021">Jianlin Su, Yu Lu (2021). <em>RoFormer</em>. <a href="https://arxiv.org/abs/2104.09864">arXiv:2104.09864</a></li>
    """
    links = []
    if "arxiv" in entry:
        links.append(f'<a href="https://arxiv.org/abs/{entry["arxiv"]}">arXiv:{entry["arxiv"]}</a>')
    if "doi" in entry:
        links.append(f'<a href="https://doi.org/{entry["doi"]}">doi:{entry["doi"]}</a>')
    if "url" in entry:
        links.append(f'<a href="{entry["url"]}">paper</a>')
    if "code" in entry:
        links.append(f'<a href="{entry["code"]}">official code</a>')
    venue = f' {entry["venue"]}.' if entry.get("venue") else ""
    stop = "" if str(entry["title"]).endswith(("?", "!", ".")) else "."  # "useful?" takes no second stop
    return (f'<li id="ref-{key}">{entry["authors"]} ({entry["year"]}). <em>{entry["title"]}</em>{stop}{venue} '
            + " · ".join(links) + "</li>")


def references_page(references: dict[str, dict[str, Any]]) -> str:
    """The site's bibliography page (``references.md``), sorted by first author and year."""
    ordered = sorted(references.items(), key=lambda item: (short_citation(item[1]).lower(), item[0]))
    items = "\n".join(reference_html(key, entry) for key, entry in ordered)
    return ("# References\n\nEvery source the chapters cite, with a link to the paper (arXiv or DOI) "
            "and, where there is one, to the official code.\n\n"
            f'<ol class="posenc-references">\n{items}\n</ol>\n')


def _citation_text(match: re.Match[str], key: str, keys: list[str], references: dict[str, dict[str, Any]]) -> str:
    if not match["narrative"]:
        return short_citation(references[key])
    return narrative_citation(references[key], match["locator"] if key == keys[-1] else None)


def _join_citation(links: list[str], narrative: bool, locator: str | None) -> str:
    """``(A 2021; B 2022, section 3)`` or, narrative, ``A (2021); B (2022, section 3)``: the
    locator (``[[cite KEY | section 3]]``) goes after the last citation, inside its parentheses."""
    if narrative:  # the locator is inside the last link's text already
        return "; ".join(links)
    return "(" + "; ".join(links) + (f", {locator}" if locator else "") + ")"


def _cited_keys(match: re.Match[str], references: dict[str, dict[str, Any]], page_src: str) -> list[str]:
    """The keys of one ``[[cite a, b]]``, each checked against the bibliography."""
    keys = [k.strip() for k in match["keys"].split(",")]
    for key in keys:
        if key not in references:
            raise ValueError(f"{page_src}: [[cite {key}]]: no such key in {REFERENCES.name}")
    return keys


def cite_references(markdown: str, page_src: str, references: dict[str, dict[str, Any]]) -> str:
    """Replace ``[[cite a, b]]`` by author-year links to the references page (``[[citet a]]``:
    "Su et al. (2021)", the authors as part of the sentence; ``[[cite a | section 3]]`` adds a
    locator), and a line
    ``[[references]]`` by the list of what this page cites, in order of first citation."""
    target = posixpath.relpath("references.md", posixpath.dirname(page_src) or ".")
    cited: list[str] = []

    def cite(match: re.Match[str]) -> str:
        keys = _cited_keys(match, references, page_src)
        cited.extend(key for key in keys if key not in cited)
        links = [f"[{_citation_text(match, key, keys, references)}]({target}#ref-{key})" for key in keys]
        return _join_citation(links, bool(match["narrative"]), match["locator"])

    markdown = CITE.sub(cite, markdown)
    items = "\n".join(reference_html(key, references[key]).replace(f' id="ref-{key}"', "") for key in cited)
    return REFERENCES_LINE.sub(lambda _: f'<ul class="posenc-references">\n{items}\n</ul>', markdown)


def cite_html(html: str, page_url: str, references_url: str, references: dict[str, dict[str, Any]],
              page_src: str = "") -> str:
    """``[[cite KEY]]`` left in a page's HTML (from a snippet include, expanded after the Markdown
    hook ran) as the same author-year links, relative to the page's URL.

    >>> refs = {"su2021": {"authors": "Jianlin Su, Yu Lu, Shengfeng Pan", "year": 2021, "title": "T"}}
    >>> cite_html("<p>RoPE [[cite su2021]]</p>", "errata/", "references/", refs)
    '<p>RoPE (<a href="../references/#ref-su2021">Su et al. 2021</a>)</p>'
    """
    from mkdocs.utils import get_relative_url

    target = get_relative_url(references_url, page_url)

    def cite(match: re.Match[str]) -> str:
        keys = _cited_keys(match, references, page_src)
        links = [f'<a href="{target}#ref-{key}">{escape(_citation_text(match, key, keys, references))}</a>'
                 for key in keys]
        return _join_citation(links, bool(match["narrative"]), match["locator"] and escape(match["locator"]))

    return CITE.sub(cite, html)


# ---------------------------------------------------------------------------------------------
# "Cite this page": a plain-text citation and a BibTeX @misc entry at the end of each chapter

_BIBTEX_SPECIAL = re.compile(r"([&%$#_{}])")


def _bibtex(text: str) -> str:
    return _BIBTEX_SPECIAL.sub(r"\\\1", text.replace("\\", "/"))


def page_title(markdown: str, fallback: str) -> str:
    """The page's first-level heading as plain text (attribute lists and Markdown marks removed)."""
    match = re.search(r"^#\s+(.+?)\s*(?:\{[^}]*\})?\s*$", markdown, re.MULTILINE)
    title = match[1] if match else fallback
    return re.sub(r"[*`]", "", strip_math(title)).strip()


def cite_this_page(title: str, path: str, site_name: str, site_url: str | None = None,
                   date: str | None = None, author: str | None = None) -> str:
    """Markdown for a collapsed "Cite this page" block: a plain-text citation and a BibTeX entry.

    ``path`` is the page's URL inside the site (``rope/``); ``date`` the last commit to the page
    (``YYYY-MM-DD``), or None (then the citation carries no date: never the build date).

    >>> block = cite_this_page("RoPE", "rope/", "posenc", "https://example.org/posenc/", "2026-11-20")
    >>> print(block.split("```bibtex")[1].split("```")[0].strip())
    @misc{posenc:rope,
      author       = {{The posenc authors}},
      title        = {{RoPE}},
      howpublished = {posenc},
      year         = {2026},
      note         = {Last updated 2026-11-20},
      url          = {https://example.org/posenc/rope/}
    }
    """
    author = author or f"The {site_name} authors"
    url = site_url.rstrip("/") + "/" + path.lstrip("/") if site_url else None
    slug = re.sub(r"[^a-z0-9]+", "-", path.lower()).strip("-") or "index"
    plain = f"{escape(author)}{f' ({date[:4]})' if date else ''}. “{escape(title)}”. <em>{escape(site_name)}</em>"
    plain += f", last updated {date}." if date else "."
    if url:
        plain += f' <a href="{escape(url)}">{escape(url)}</a>'
    fields = [("author", f"{{{_bibtex(author)}}}"), ("title", f"{{{_bibtex(title)}}}"),
              ("howpublished", _bibtex(site_name))]
    if date:
        fields += [("year", date[:4]), ("note", f"Last updated {date}")]
    if url:
        fields.append(("url", url))
    bibtex = f"@misc{{{site_name}:{slug},\n" + ",\n".join(f"  {name:<12} = {{{value}}}" for name, value in fields) + "\n}"
    return ('<details class="quote posenc-cite" data-search-exclude="" markdown="block">\n'
            "<summary>Cite this page</summary>\n\n"
            f'<p class="posenc-cite-text">{plain}</p>\n\n'
            f"```bibtex\n{bibtex}\n```\n\n</details>\n")


def is_chapter(page: Page) -> bool:
    """A hand-written Markdown page other than the home page (no generated or notebook page)."""
    src, file = page.file.src_uri, page.file
    written = bool(getattr(file, "abs_src_path", None)) and not getattr(file, "generated_by", None)
    return written and src.endswith(".md") and src != "index.md"


# ---------------------------------------------------------------------------------------------
# repository and git dates


def _git(*args: str) -> str:
    try:
        result = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return result.stdout if result.returncode == 0 else ""


def repository_from_remote(remote: str) -> str | None:
    """``https://host/owner/name`` for a GitHub or GitLab remote (https or ssh form), else None.

    >>> repository_from_remote("git@github.com:someone/posenc.git")
    'https://github.com/someone/posenc'
    >>> repository_from_remote("/srv/git/posenc") is None
    True
    """
    match = re.match(r"^(?:https://|git@|ssh://git@)(github\.com|gitlab\.com)[:/]([\w.-]+/[\w.-]+?)(?:\.git)?/?$", remote.strip())
    return f"https://{match[1]}/{match[2]}" if match else None


def last_commit_dates(*folders: str) -> dict[str, str]:
    """``{path: YYYY-MM-DD}`` of the newest commit touching each file under ``folders`` (one git call)."""
    dates: dict[str, str] = {}
    current = ""
    for line in _git("log", "--format=%x00%cs", "--name-only", "--", *folders).splitlines():
        if line.startswith("\0"):
            current = line[1:]
        elif line and current:
            dates.setdefault(line, current)
    return dates


_dates: dict[str, str] = {}
_references: dict[str, dict[str, Any]] = {}
_references_url = "references/"


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    global _dates
    if not config.repo_url:
        derived = repository_from_remote(_git("remote", "get-url", "origin"))
        if derived:
            config.repo_url = derived
            config.repo_name = derived.split("/", 3)[-1]
    # MkDocs guesses edit/master/docs/ for a GitHub address; this repository's branch is main
    explicit = os.environ.get("POSENC_EDIT_URI")
    config.edit_uri = explicit or ("edit/main/docs/" if config.repo_url else None)
    _dates = last_commit_dates("docs", "posenc")
    global _references
    _references = load_references()
    return config


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """With a bibliography (docs/_references.yml): publish it as the page references.md, not as data."""
    if _references:
        data = files.get_file_from_path(REFERENCES.name)
        if data is not None:
            files.remove(data)
        generated = File.generated(config, "references.md", content=references_page(_references))
        files.append(generated)
        global _references_url
        _references_url = generated.url
    return files


def page_date(page: Page) -> str | None:
    src = page.file.src_uri
    if page.file.generated_by or not page.file.abs_src_path:  # the API reference: its sources
        return max((d for path, d in _dates.items() if path.startswith("posenc/")), default=None)
    return _dates.get(f"docs/{src}")


def on_page_content(html: str, page: Page, config: MkDocsConfig, **_: Any) -> str:
    if "[[cite" in html:  # from a snippet include, expanded after on_page_markdown
        from mkdocs.exceptions import PluginError

        try:
            html = cite_html(html, page.url, _references_url, _references, page.file.src_uri)
        except ValueError as error:
            raise PluginError(str(error)) from error
    date = page_date(page)
    if date is None:
        return html
    return html + f'\n<p class="posenc-page-meta">Last updated {date} (date of the last commit to this page).</p>\n'


def on_page_context(context: dict[str, Any], page: Page, config: MkDocsConfig, **_: Any) -> dict[str, Any]:
    if page.file.generated_by or not page.file.abs_src_path:
        page.edit_url = None  # generated: there is no file to edit
    return context


def _head_and_source(output: str) -> str:
    # Material's repository widget asks api.github.com for stars and forks on every page view: the
    # site requests nothing from other hosts, so the link stays and the request goes
    output = output.replace('class="md-source" data-md-component="source"', 'class="md-source"')
    return output.replace("</head>", JS_MARKER + "</head>", 1)


def on_post_page(output: str, page: Page, config: MkDocsConfig) -> str:
    return _head_and_source(output)


def on_post_template(output: str, template_name: str, config: MkDocsConfig) -> str:
    return _head_and_source(output) if template_name == "404.html" else output


def on_post_build(config: MkDocsConfig) -> None:
    index = Path(config.site_dir) / "search" / "search_index.json"
    if index.is_file():
        log.debug("search index: TeX turned into text in %d entries", clean_search_index(index))
