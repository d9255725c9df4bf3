"""References: the bibliography ``docs/_references.yml`` and the citation macros.

With a bibliography (key: authors, year, title, venue, and arxiv/doi/url, code), ``[[cite KEY]]``
or ``[[cite A, B]]`` in text becomes author-year links ("(Su et al. 2021)"; ``[[citet KEY]]``:
"Su et al. (2021)", as the subject of a sentence; ``[[cite KEY | section 3]]`` adds a locator)
to the generated page ``references.md``, and a line ``[[references]]`` lists what the page
cites. Cites inside snippet includes (``docs/_errata/*.md``) are linked in the HTML by
`cite_html`, after the includes are expanded. An entry may set ``short`` (``Gemma Team``) when
the first author's surname is not how the text names it.
"""

from __future__ import annotations

import posixpath
import re
from html import escape
from pathlib import Path
from typing import Any

__all__ = ["CITE", "REFERENCES", "cite_html", "cite_references", "load_references", "narrative_citation",
           "reference_html", "references_page", "short_citation"]

ROOT = Path(__file__).resolve().parents[1]
REFERENCES = ROOT / "docs" / "_references.yml"
CITE = re.compile(r"\[\[cite(?P<narrative>t)?\s+(?P<keys>[\w.:-]+(?:\s*,\s*[\w.:-]+)*)\s*"
                  r"(?:\|\s*(?P<locator>[^\]|]+?)\s*)?\]\]")
REFERENCES_LINE = re.compile(r"^\[\[references\]\]\s*$", re.MULTILINE)


def load_references(path: Path = REFERENCES) -> dict[str, dict[str, Any]]:
    """The bibliography: ``{key: {authors, year, title, venue?, arxiv?, doi?, url?, url_label?, code?}}``."""
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
    >>> print(reference_html("b", {"authors": "b", "year": 2023, "title": "A post", "url": "u", "url_label": "post"}))
    <li id="ref-b">b (2023). <em>A post</em>. <a href="u">post</a></li>
    """
    links = []
    if "arxiv" in entry:
        links.append(f'<a href="https://arxiv.org/abs/{entry["arxiv"]}">arXiv:{entry["arxiv"]}</a>')
    if "doi" in entry:
        links.append(f'<a href="https://doi.org/{entry["doi"]}">doi:{entry["doi"]}</a>')
    if "url" in entry:  # a paper's PDF unless the entry says what it is (software: code; a forum post)
        label = entry.get("url_label", "code" if entry.get("venue") == "software" else "paper")
        links.append(f'<a href="{entry["url"]}">{label}</a>')
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
