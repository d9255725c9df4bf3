"""How Sybil reads the docs: every Python fence, whatever its spelling, becomes an example.

Sybil's stock Markdown parser only sees a bare ```python fence. Pages here also use ```py,
```pycon, ``` python, ```python3, ```{.python ...} and fences with attributes such as
title="...", possibly indented inside content tabs or admonitions. All of them are collected:

* a block whose source starts with ``>>>`` is a doctest: its printed output is checked;
* a block that includes posenc source with a snippet line (``--8<-- "posenc/x.py:section"``)
  is checked by resolving the include and compiling what it shows, so a page can never show
  code that is not in the package;
* any other block is executed.

A block may be skipped only with ``<!-- skip: next "a written reason" -->``.
"""

from __future__ import annotations

import doctest
import re
import textwrap
from collections.abc import Iterable
from pathlib import Path

from sybil import Document, Example, Region
from sybil.evaluators.python import PythonEvaluator
from sybil.parsers.abstract.doctest import DocTestStringParser
from sybil.evaluators.doctest import DocTestEvaluator
from sybil.parsers.markdown.lexers import RawFencedCodeBlockLexer
from sybil.parsers.markdown.skip import SkipParser

ROOT = Path(__file__).resolve().parents[1]
PYTHON_LANGUAGES = ("python", "python3", "py", "pycon")
DOCTEST_FLAGS = doctest.NORMALIZE_WHITESPACE

# The info string: optional braces and dot (attribute-list style), a Python language name, then
# anything (attributes such as title="..." or hl_lines="2").
INFO = re.compile(r"[ \t]*\{?[ \t]*\.?(?P<language>" + "|".join(PYTHON_LANGUAGES) + r")(?=[\s}]|$)[^\n]*$\n", re.MULTILINE)
SNIPPET = re.compile(r'^\s*-{1,}8<-{1,}\s+"(?P<target>[^"]+)"\s*$', re.MULTILINE)
SKIP_REASON = re.compile(r'^(?:(?:next|start)\s+"[^"]{10,}"|end)$')


def resolve_snippet(target: str) -> str:
    """The text a ``--8<-- "path:section"`` line includes (pymdownx.snippets' section syntax)."""
    path_text, _, section = target.partition(":")
    path = ROOT / path_text
    if not path.is_file():
        raise AssertionError(f"snippet include names a missing file: {path_text}")
    text = path.read_text()
    if not section:
        return text
    pattern = re.compile(
        rf"^[^\n]*--8<-- \[start:{re.escape(section)}\][^\n]*\n(?P<body>.*?)^[^\n]*--8<-- \[end:{re.escape(section)}\]",
        re.MULTILINE | re.DOTALL,
    )
    match = pattern.search(text)
    if match is None:
        raise AssertionError(f"snippet section {section!r} not found in {path_text}")
    return match["body"]


def evaluate_snippet(example: Example) -> None:
    """Resolve each include of the block and check that what it shows is valid Python."""
    source = str(example.parsed)
    targets = SNIPPET.findall(source)
    for target in targets:
        # mkdocs shows sections dedented (dedent_subsections), so a method body compiles the same way
        compile(textwrap.dedent(resolve_snippet(target)), target, "exec")
    leftover = SNIPPET.sub("", source).strip()
    if leftover:
        raise AssertionError(f"a snippet block must hold only include lines, found: {leftover[:60]!r}")


class PythonFenceParser:
    """Yield one or more Sybil regions for every Python fence of a Markdown document."""

    def __init__(self) -> None:
        self.lexer = RawFencedCodeBlockLexer(info_pattern=INFO, mapping={"language": "language", "source": "source"})
        self.doctests = DocTestStringParser(DocTestEvaluator(DOCTEST_FLAGS))
        self.python = PythonEvaluator()

    def __call__(self, document: Document) -> Iterable[Region]:
        top_level = {line for line, _ in fences(document.text)}
        for region in self.lexer(document):
            if document.text.count("\n", 0, region.start) + 1 not in top_level:
                continue  # a fence shown inside another fence is text, not an example
            source = region.lexemes["source"]
            if source.lstrip().startswith(">>>"):
                for doctest_region in self.doctests(source, document.path):
                    doctest_region.adjust(region, source)
                    yield doctest_region
                continue
            if region.lexemes["language"] == "pycon":
                raise ValueError(f"{document.path}: a pycon block must start with '>>>' (line {document.line_column(region.start)})")
            region.parsed = source
            region.evaluator = evaluate_snippet if SNIPPET.search(source) else self.python
            yield region


class ReasonedSkipParser(SkipParser):
    """Sybil's skip directive, refusing any skip that does not say why."""

    def __call__(self, document: Document) -> Iterable[Region]:
        for region in super().__call__(document):
            action, argument = region.parsed
            text = action if argument is None else f"{action} {argument}"
            if not SKIP_REASON.match(text):
                raise ValueError(f'{document.path}: a skip needs a written reason, as in skip: next "why" (got {text!r})')
            yield region


def fences(text: str) -> list[tuple[int, str]]:
    """(line, language) of every top-level fence in ``text``, by a plain line scan (1-based lines).

    A fence nested inside a longer fence (say a ```python example inside a ````markdown block)
    is content, not a fence, and is not listed.
    """
    found: list[tuple[int, str]] = []
    fence: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        match = re.match(r"^\s*(?:>\s*)*(`{3,}|~{3,})(.*)$", line)
        if not match:
            continue
        marker, info = match.groups()
        if fence is None:
            fence = marker
            word = info.strip().lstrip("{").lstrip().lstrip(".")
            found.append((number, re.split(r"[\s}]", word, maxsplit=1)[0] if word else ""))
        elif marker[0] == fence[0] and len(marker) >= len(fence) and not info.strip():
            fence = None
    return found


def python_fences(text: str) -> list[int]:
    """Opening lines of the Python fences in ``text``.

    Independent of the Sybil lexer's info-string regex on purpose: the guard test compares the two.
    """
    return [line for line, language in fences(text) if language in PYTHON_LANGUAGES]
