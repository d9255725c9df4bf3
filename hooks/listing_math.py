r"""Docstring math in source listings, as plain text.

posenc's docstrings write math as TeX between ``\(`` and ``\)`` (the API pages render it with
KaTeX). A chapter that lists a function's source (a ``--8<--`` snippet in a code block) shows the
docstring as code, where KaTeX does not run: the reader saw ``\(\mathcal{N}(0, 0.1^2)\)``. In
listings, `plain_listing_math` rewrites each such span as the text a reader would write:
Greek letters and operators as Unicode, ``\text{base}`` as ``base``, ``^2`` as ``²``, the
delimiters gone. Only docstrings (Pygments' ``sd`` spans) change; the code itself never does.
tests/site/reader_states.py checks every page for TeX left in listings.

>>> print(plain_tex(r"\mathcal{N}(0, 0.1^2)"))
𝒩(0, 0.1²)
>>> print(plain_tex(r"q_i \cdot (k_j + a^K_{ij}) / \sqrt{d}"))
q_i · (k_j + a^K_ij) / √d
>>> print(plain_tex(r"\text{base}^{-2i/d}"))
base^(-2i/d)
>>> print(plain_tex(r"\sum_j w_{ij} (v_j + a^V_{ij})"))
Σ_j w_ij (v_j + a^V_ij)
>>> print(plain_tex(r"(q_i + u) \cdot k_j + (q_i + v) \cdot r_{i-j}"))
(q_i + u) · k_j + (q_i + v) · r_(i-j)
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["plain_listing_math", "plain_tex"]

_SYMBOLS = {"cdot": "·", "dots": "…", "ldots": "…", "cdots": "⋯", "sum": "Σ", "prod": "Π", "times": "×",
            "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "ne": "≠", "neq": "≠", "infty": "∞", "pm": "±",
            "to": "→", "approx": "≈", "in": "∈", "lfloor": "⌊", "rfloor": "⌋", "lceil": "⌈", "rceil": "⌉",
            "quad": " ", "qquad": "  ", ",": " ", ";": " ", "!": "", "{": "{", "}": "}", "|": "‖"}
_SUPERSCRIPTS = str.maketrans("0123456789+-=()n", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿ")
_GROUP = r"\{(?P<body>[^{}]*)\}"


def _greek(name: str) -> str | None:
    case = "CAPITAL" if name[0].isupper() else "SMALL"
    try:
        return unicodedata.lookup(f"GREEK {case} LETTER {name.upper()}")
    except KeyError:
        return None


def _script(letter: str) -> str:
    for name in (f"MATHEMATICAL SCRIPT CAPITAL {letter}", f"SCRIPT CAPITAL {letter}"):
        try:
            return unicodedata.lookup(name)
        except KeyError:
            continue
    return letter


def _power(body: str) -> str:
    if body.translate(_SUPERSCRIPTS) != body and all(ch in "0123456789+-=()n" for ch in body):
        return body.translate(_SUPERSCRIPTS)
    return f"^{body}" if len(body) == 1 else f"^({body})"


def plain_tex(tex: str) -> str:
    """Inline TeX as plain Unicode text (the commands posenc's docstrings use; others lose the backslash)."""
    text = re.sub(r"\\mathcal" + _GROUP, lambda m: "".join(_script(ch) for ch in m["body"]), tex)
    text = re.sub(r"\\(?:text|mathrm|operatorname|mathbf|mathit)" + _GROUP, lambda m: m["body"], text)
    text = re.sub(r"\\sqrt" + _GROUP, lambda m: "√" + (m["body"] if len(m["body"]) == 1 else f"({m['body']})"), text)
    text = re.sub(r"\\frac" + _GROUP + r"\{(?P<under>[^{}]*)\}", lambda m: f"({m['body']})/({m['under']})", text)
    text = re.sub(r"\^" + _GROUP, lambda m: _power(m["body"]), text)
    text = re.sub(r"\^(?P<body>[0-9])", lambda m: _power(m["body"]), text)
    text = re.sub(r"_" + _GROUP, lambda m: "_" + (m["body"] if m["body"].isalnum() else f"({m['body']})"), text)
    text = re.sub(r"(?<!\\)[{}]", "", text)  # grouping braces left over; \{ and \} stay as braces

    def command(match: re.Match[str]) -> str:
        name = match[1]
        return _SYMBOLS.get(name) or _greek(name) or name

    return re.sub(r"\\([A-Za-z]+|[,;!{}|])", command, text)


_DOCSTRING = re.compile(r'<span class="sd">(?P<body>.*?)</span>', re.DOTALL)
_INLINE = re.compile(r"\\\((?P<tex>.*?)\\\)|\\\[(?P<display>.*?)\\\]", re.DOTALL)


def plain_listing_math(html: str) -> str:
    """``html`` with the TeX in its docstring spans (``<span class="sd">``) as plain text."""
    def docstring(match: re.Match[str]) -> str:
        body = _INLINE.sub(lambda m: plain_tex(m["tex"] if m["tex"] is not None else m["display"]), match["body"])
        return f'<span class="sd">{body}</span>'

    return _DOCSTRING.sub(docstring, html)
