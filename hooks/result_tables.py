"""Result tables computed at build time: ``[[table posenc.module:function | caption]]``.

A line ``[[table posenc.module:function | caption]]`` on a page becomes an HTML table of what
``function()`` returns, ``(header, rows)``, in a ``<figure id="table-function">`` with the
caption. Self-contained (the standard library only): ``reader.py`` calls `expand_tables` from its
Markdown handler and turns a `ValueError` into MkDocs's build error.

How a table reads (``posenc.css`` styles it):

* Numbers are right-aligned, and every column keeps one precision (checked here: a column that
  mixes ``5.2`` and ``5.25`` stops the build). A cell ``mean (low–high)`` shows the mean, with the
  range on a smaller second line, without brackets (a caption that speaks of brackets stops the
  build: captions say "under each mean").
* Where `BETTER` knows which way a column improves (lower perplexity, higher accuracy), the best
  mean of the column is bold and marked ◆, and the caption says so.
* A cell that is one Markdown link, ``[text](https://...)``, is shown as that link (a row can
  name its source).
* The first column names each row (``<th scope="row">``). A table too wide for a phone (see
  `phone_width`) becomes one card per row there (``posenc-table--cards``): each cell carries its
  column's name (``data-label``), so every column is shown at 390 px without sideways
  scrolling; a narrower one stays a table, tightened to fit.
"""

from __future__ import annotations

import importlib
import re
from html import escape
from typing import Any

__all__ = ["BETTER", "PHONE_CHARACTERS", "TABLE_LINE", "TWO_UP_CHARACTERS", "card_width", "better_direction", "expand_tables", "render_table",
           "table_html"]

TABLE_LINE = re.compile(r"^\[\[table\s+(?P<target>posenc(?:\.\w+)*:\w+)\s*(?:\|\s*(?P<caption>.+?))?\s*\]\]\s*$", re.MULTILINE)
_NUMBER = re.compile(r"^[-+−]?[\d,]*\.?\d+(?:e[-+]?\d+)?%?$")
_SPREAD = re.compile(r"^(?P<mean>\S+) \((?P<low>[^()–]+)–(?P<high>[^()–]+)\)$")
_PLACEHOLDER = {"-", "–", "n/a", "not fine-tuned"}  # cells that hold no number
#: About how many characters of a table (0.64rem, tabular digits) fit the 358-px column of a
#: 390-px phone; a table that needs more (`phone_width`) becomes one card per row there.
PHONE_CHARACTERS = 48
#: Cards whose widest line (a column's name and value) needs at most this many characters go two
#: a row on a phone (each card about 170 px wide), half the scrolling of one a row.
TWO_UP_CHARACTERS = 19

#: Which way a column gets better, by table (``function name``) and column header: a list of
#: (header pattern, "lower" or "higher"); the first pattern that matches decides. Columns that
#: match none (costs, counts, settings) get no mark.
BETTER: dict[str, list[tuple[str, str]]] = {
    "perplexity_table": [(r"^ppl@", "lower")],
    "retrieval_table": [(r"^recall@", "higher")],
    "extrapolation_table": [(r"^ppl@", "lower"), (r"^recall@", "higher")],
    "extension_perplexity_table": [(r"@\d+$", "lower")],
    "extension_accuracy_table": [(r"@\d+$", "higher")],
    "windows_table": [(r".", "lower")],  # every column: perplexity at 8L under one attention setting
    "large_table": [(r"^ppl@|^8 texts", "lower"), (r"^recall@", "higher")],
    "training_free_perplexity_table": [(r"^ppl@", "lower")],
    "training_free_accuracy_table": [(r"^recall@", "higher")],
    "base_table": [(r"^ppl@", "lower"), (r"^recall@", "higher")],
    "depth_table": [(r"^ppl@", "lower"), (r"@\d+$", "higher")],  # "middle @512": MQAR accuracy
    "hybrid_table": [(r"^ppl@", "lower"), (r"^recall@", "higher")],
    "inside_table": [(r"^ppl@", "lower"), (r"^recall@", "higher")],
    "large_later_table": [(r"^ppl@", "lower")],  # recall at L: whether the task was learned, not a ranking
}
_WHAT = {"lower": "lowest", "higher": "highest"}
_KIND = {"lower": "perplexity", "higher": "accuracy"}  # what the marked columns of these tables measure


def better_direction(table: str, header: str) -> str | None:
    """``"lower"``, ``"higher"`` or None for one column of one table (see `BETTER`).

    >>> better_direction("extrapolation_table", "recall@512"), better_direction("extrapolation_table", "train s")
    ('higher', None)
    """
    for pattern, direction in BETTER.get(table, []):
        if re.search(pattern, header):
            return direction
    return None


def _number(text: str) -> float | None:
    """The value of a numeric cell (``32,768``, ``−0.5``, ``4.2%``), or None."""
    plain = text.replace(" ", "").replace(",", "").replace("−", "-").rstrip("%")
    return float(plain) if _NUMBER.match(text.replace(" ", "")) else None


def _parts(cell: str) -> tuple[str, str | None]:
    """(mean, "low–high" or None) of a cell."""
    match = _SPREAD.match(cell)
    return (match["mean"], f"{match['low']}–{match['high']}") if match else (cell, None)


def _decimals(text: str) -> int:
    return len(text.split(".")[1]) if "." in text else 0


def _column_checks(name: str, header: list[str], cells: list[list[str]]) -> tuple[list[bool], list[set[int]]]:
    """For each column: whether it is numeric (right-aligned), and the rows holding its best mean.
    Raises ValueError if a numeric column mixes precisions."""
    numeric, best = [], []
    for index, title in enumerate(header):
        means = [_parts(row[index])[0] for row in cells]
        values = [m for m in means if m not in _PLACEHOLDER]
        is_numeric = index > 0 and bool(values) and all(_number(v) is not None for v in values)
        numeric.append(is_numeric)
        if is_numeric and len({_decimals(v) for v in values}) > 1:
            raise ValueError(f"table {name!r}, column {title!r}: numbers with different precisions {sorted(set(values))[:4]}")
        direction = better_direction(name, title) if is_numeric else None
        rows: set[int] = set()
        if direction is not None and len(values) > 1:
            numbers = {row: _number(mean) for row, mean in enumerate(means) if mean not in _PLACEHOLDER}
            target = (min if direction == "lower" else max)(v for v in numbers.values() if v is not None)
            rows = {row for row, value in numbers.items() if value == target}
        best.append(rows)
    return numeric, best


def phone_width(header: list[str], cells: list[list[str]]) -> float:
    """About how many characters of the table's font a row of the compact table needs: per
    column, its widest mean or range (ranges are set at 82 %), its header's longest word (headers
    wrap at spaces), plus the padding (about 1.5 characters); row names in bold (10 % wider).

    >>> phone_width(["method", "ppl@64"], [["rope", "4.76 (4.69–4.81)"]])
    17.0
    """
    total = 0.0
    for index, title in enumerate(header):
        widths = [max(len(mean), 0.82 * len(spread or "")) for mean, spread in (_parts(row[index]) for row in cells)]
        longest = max([*widths, *(len(word) for word in title.split())])
        total += (1.1 * longest if index == 0 else longest) + 1.5
    return round(total, 1)


def card_width(header: list[str], cells: list[list[str]]) -> float:
    """Characters the widest line of a card needs: a column's name beside its widest value.

    >>> card_width(["method", "ppl@128"], [["rope", "12.98 (12.47–14.92)"]])
    16.0
    """
    return round(max((len(title) + max(len(mean), 0.82 * len(spread or ""))
                      for index, title in enumerate(header) if index
                      for mean, spread in (_parts(row[index]) for row in cells)), default=0.0), 1)


_LINK = re.compile(r"^\[(?P<text>[^\]]+)\]\((?P<url>https://[^\s()]+)\)$")


def _linked(text: str) -> str:
    """A cell that is one Markdown link ``[text](https://...)`` as a link, any other as text."""
    match = _LINK.match(text)
    return f'<a href="{escape(match["url"])}">{escape(match["text"])}</a>' if match else escape(text)


def _shown(text: str) -> str:
    """What a cell shows (a link's text), for the width estimate."""
    match = _LINK.match(text)
    return match["text"] if match else text


def _cell(text: str, label: str, numeric: bool, best: bool) -> str:
    """One ``<td>``: the mean, the range in a ``<small>`` (a second line), the best one bold and
    marked. Markup kept small: a table of 11 rows and 8 columns repeats it 88 times."""
    mean, spread = _parts(text)
    value = _linked(mean)
    if best:
        value = (f'<strong><span aria-hidden="true">◆</span>{value}'  # the mark left of the digits: they stay aligned
                 '<span class="posenc-visually-hidden"> (best)</span></strong>')
    if spread:
        value += f"<small>{escape(spread)}</small>"
    kind = ' class="posenc-num"' if numeric else ""
    return f'<td{kind} data-label="{escape(label)}">{value}</td>'


def table_html(header: list[str], rows: list[list[Any]], caption: str | None = None, name: str = "") -> str:
    """A result table (see the module docstring) in a ``<figure>``, with an optional caption.

    >>> html = table_html(["method", "ppl@64"], [["RoPE", "3.9 (3.8–4.0)"], ["ALiBi", "12.0"]], name="perplexity_table")
    >>> '<th scope="row">RoPE</th>' in html, '<small>3.8–4.0</small>' in html
    (True, True)
    >>> html.count("◆"), "lowest perplexity" in html  # RoPE's 3.9 is the best (lower) mean, and the key
    (2, True)
    >>> table_html(["m", "x"], [["a", "1.5"], ["b", "2"]])
    Traceback (most recent call last):
    ...
    ValueError: table '', column 'x': numbers with different precisions ['1.5', '2']
    >>> table_html(["m", "x"], [["a", "1.5 (1.4–1.6)"]], caption="Seeds in brackets.", name="t")
    Traceback (most recent call last):
    ...
    ValueError: table 't': the caption speaks of brackets, but each range is shown under its mean (say 'under each mean')
    """
    cells = [[str(value).replace("\n", " ") for value in row] for row in rows]
    if any(len(row) != len(header) for row in cells):
        raise ValueError(f"table {name!r}: every row must have {len(header)} cells")
    numeric, best = _column_checks(name, header, cells)
    if caption and "bracket" in caption and any(_parts(c)[1] for row in cells for c in row):
        # the range is drawn under the mean, never in brackets: a caption must say what is shown
        raise ValueError(f"table {name!r}: the caption speaks of brackets, but each range is shown under its "
                         "mean (say 'under each mean')")
    number = ' class="posenc-num"'
    head = "".join(f'<th scope="col"{number if numeric[i] else ""}>{escape(h)}</th>' for i, h in enumerate(header))
    body = "\n".join(
        f'<tr><th scope="row">{_linked(row[0])}</th>'
        + "".join(_cell(row[i], header[i], numeric[i], r in best[i]) for i in range(1, len(header))) + "</tr>"
        for r, row in enumerate(cells))
    shown = [[_shown(c) for c in row] for row in cells]
    layout = "compact" if phone_width(header, shown) <= PHONE_CHARACTERS else \
        "cards posenc-table--two-up" if card_width(header, shown) <= TWO_UP_CHARACTERS else "cards"
    directions = {better_direction(name, h) for i, h in enumerate(header) if best[i]} - {None}
    key = ""
    if directions:
        what = " and ".join(sorted((f"{_WHAT[d]} {_KIND[d]}" for d in directions), reverse=True))
        key = f' <span class="posenc-best-key"><strong>◆ Bold</strong>: the best mean in its column ({what}).</span>'
    ident = f' id="table-{name.replace("_", "-")}"' if name else ""
    caption_html = f'\n<figcaption markdown="span">{caption or ""}{key}</figcaption>' if caption or key else ""
    return (f'<figure class="posenc-table posenc-table--{layout}"{ident} markdown="block">\n'
            f'<div class="posenc-table__scroll" tabindex="0" role="region" aria-label="{escape(name.replace("_", " "))}">'
            f'<table class="posenc-results">\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody>\n</table></div>'
            f"{caption_html}\n</figure>")


def render_table(target: str, caption: str | None = None) -> str:
    """Call ``posenc.module:function`` (no arguments), which returns ``(header, rows)``, and
    render its table. The page can show the same function's code (a snippet include), so the
    numbers in the table and the code that makes them are one."""
    module_name, _, function_name = target.partition(":")
    function = getattr(importlib.import_module(module_name), function_name, None)
    if not callable(function):
        raise ValueError(f"[[table {target}]]: {module_name} has no function {function_name!r}")
    header, rows = function()
    return table_html(list(header), [list(row) for row in rows], caption, function_name)


def expand_tables(markdown: str, page_src: str = "") -> str:
    """Every ``[[table ...]]`` line of ``markdown`` as its table; any failure is a `ValueError`
    naming the page and the table."""
    def replace(match: re.Match[str]) -> str:
        try:
            return render_table(match["target"], match["caption"])
        except Exception as error:  # any failure: name the page and the table
            raise ValueError(f"{page_src}: {error}") from error

    return TABLE_LINE.sub(replace, markdown)
