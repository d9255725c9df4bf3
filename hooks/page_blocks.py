"""Blocks the hooks add to a page: figure numbers and the "Cite this page" block.

* **Numbered figures**: each figure's caption starts "Figure N." (in page order), and
  ``[[ref NAME]]`` in the text becomes a link "Figure N" to the figure ``NAME`` on the same page.
* **Stacked tables**: a Markdown table inside ``<div class="posenc-stack" markdown>`` (long
  cells, code in them) becomes one block per row on a phone (``posenc.css``), each cell under its
  column's name: `label_stacked_cells` gives every ``<td>`` that name as ``data-label``.
* **Cite this page**: every chapter (a Markdown page other than the home page) ends with a
  collapsed block holding a plain-text citation and a BibTeX ``@misc`` entry, from ``site_name``,
  ``site_author`` (else "The <site_name> authors"), ``site_url`` and the page title; its date is
  the page's last commit date, never the build date, and it is kept out of the search index.
"""

from __future__ import annotations

import re
from html import escape

from mkdocs.structure.pages import Page
from search_text import strip_math  # hooks/search_text.py (MkDocs puts hooks/ on the path)

__all__ = ["FIGURE_BLOCK", "FIGURE_REF", "STACKED_TABLE", "cite_this_page", "is_chapter", "label_stacked_cells",
           "number_figures", "page_title"]

FIGURE_BLOCK = re.compile(r'<figure class="posenc-figure" id="figure-(?P<name>[a-z0-9-]+)"(?P<rest>.*?)</figure>', re.DOTALL)
FIGURE_REF = re.compile(r"\[\[ref\s+(?P<name>[a-z0-9-]+)\s*\]\]")
STACKED_TABLE = re.compile(r'(<div class="posenc-stack">\s*<table>)(?P<table>.*?)(</table>)', re.DOTALL)
_TAG = re.compile(r"<[^>]+>")


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


_BIBTEX_SPECIAL = re.compile(r"([&%$#_{}])")


def _bibtex(text: str) -> str:
    return _BIBTEX_SPECIAL.sub(r"\\\1", text.replace("\\", "/"))


def label_stacked_cells(html: str, page_src: str = "") -> str:
    """Give each ``<td>`` of a table in ``<div class="posenc-stack">`` its column's name
    (``data-label``, the header's text), for the one-block-per-row layout on a phone.

    >>> html = ('<div class="posenc-stack">\\n<table>\\n<thead>\\n<tr>\\n<th>Model</th>\\n'
    ...         '<th>From the <em>config</em></th>\\n</tr>\\n</thead>\\n<tbody>\\n<tr>\\n'
    ...         '<td>FLUX.1</td>\\n<td><code>axes_dims_rope</code></td>\\n</tr>\\n</tbody>\\n</table>')
    >>> print(label_stacked_cells(html).split("<tbody>")[1].split("</tbody>")[0].strip())
    <tr>
    <td data-label="Model">FLUX.1</td>
    <td data-label="From the config"><code>axes_dims_rope</code></td>
    </tr>
    """
    def label(match: re.Match[str]) -> str:
        table = match["table"]
        names = [_TAG.sub("", name).strip() for name in re.findall(r"<th[^>]*>(.*?)</th>", table, re.DOTALL)]
        head, end, body = table.partition("</thead>")

        def row(cells: re.Match[str]) -> str:
            columns = iter(names)
            text = re.sub(r"<td(?=[ >])", lambda _: f'<td data-label="{escape(next(columns, ""), quote=True)}"',
                          cells[0])
            if next(columns, None) is not None or text.count("<td") > len(names):
                raise ValueError(f"{page_src}: a posenc-stack table row has another number of cells "
                                 f"than its {len(names)} columns")
            return text

        return match[1] + head + end + re.sub(r"<tr>.*?</tr>", row, body, flags=re.DOTALL) + match[3]

    return STACKED_TABLE.sub(label, html)


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
