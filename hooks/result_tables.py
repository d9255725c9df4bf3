"""Result tables computed at build time: ``[[table posenc.module:function | caption]]``.

A line ``[[table posenc.module:function | caption]]`` on a page becomes a Markdown table of what
``function()`` returns, ``(header, rows)``, in a ``<figure id="table-function">`` with the
caption. Self-contained (the standard library only): ``reader.py`` calls `expand_tables` from its
Markdown handler and turns a `ValueError` into MkDocs's build error.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

__all__ = ["TABLE_LINE", "expand_tables", "render_table", "table_markdown"]

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
    module_name, _, function_name = target.partition(":")
    function = getattr(importlib.import_module(module_name), function_name, None)
    if not callable(function):
        raise ValueError(f"[[table {target}]]: {module_name} has no function {function_name!r}")
    header, rows = function()
    return table_markdown(list(header), [list(row) for row in rows], caption, function_name.replace("_", "-"))


def expand_tables(markdown: str, page_src: str = "") -> str:
    """Every ``[[table ...]]`` line of ``markdown`` as its table; any failure is a `ValueError`
    naming the page and the table."""
    def replace(match: re.Match[str]) -> str:
        try:
            return render_table(match["target"], match["caption"])
        except Exception as error:  # any failure: name the page and the table
            raise ValueError(f"{page_src}: {error}") from error

    return TABLE_LINE.sub(replace, markdown)
