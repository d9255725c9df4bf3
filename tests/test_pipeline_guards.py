"""Guards of the docs pipeline: no example silently skipped, every figure registered and used."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sybil import Sybil

from tests.doc_examples import PythonFenceParser, ReasonedSkipParser, python_fences, resolve_snippet

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
FIGURE_REFERENCE = re.compile(r"^\[\[figure\s+([a-z0-9-]+)", re.MULTILINE)


def _collected_fence_lines(page: Path) -> set[int]:
    """Line numbers of the fences that produced at least one Sybil example."""
    sybil = Sybil(parsers=[PythonFenceParser(), ReasonedSkipParser()], path=str(DOCS), patterns=["**/*.md"])
    document = sybil.parse(page)
    text = page.read_text()
    fence_starts = python_fences(text)
    collected = set()
    for example in document.examples():
        line = text.count("\n", 0, example.start) + 1
        # the fence whose opening line is the closest one at or above the example
        opening = max((start for start in fence_starts if start <= line), default=None)
        if opening is not None:
            collected.add(opening)
    return collected


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(DOCS)) for p in PAGES])
def test_every_python_fence_is_collected(page: Path) -> None:
    fences = python_fences(page.read_text())
    assert _collected_fence_lines(page) == set(fences), (
        f"{page.name}: Python fences at lines {fences} but Sybil collected examples from "
        f"{sorted(_collected_fence_lines(page))}"
    )


def test_fence_counter_sees_every_spelling(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "```python\nx = 1\n```\n\n```py\nx = 2\n```\n\n``` python\nx = 3\n```\n\n"
        '```python title="t.py"\nx = 4\n```\n\n```{.python .numberLines}\nx = 5\n```\n\n'
        "```pycon\n>>> 1 + 1\n2\n```\n\n=== \"Tab\"\n\n    ```python3\n    x = 6\n    ```\n\n"
        "```bash\necho no\n```\n\n````markdown\n```python\nnot a real fence\n```\n````\n"
    )
    assert len(python_fences(page.read_text())) == 7
    sybil = Sybil(parsers=[PythonFenceParser()], path=str(tmp_path), patterns=["*.md"])
    examples = list(sybil.parse(page).examples())
    assert len(examples) == 7
    for example in examples:
        example.evaluate()


def test_skip_without_reason_is_refused(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("<!-- skip: next -->\n\n```python\nraise SystemExit\n```\n")
    sybil = Sybil(parsers=[PythonFenceParser(), ReasonedSkipParser()], path=str(tmp_path), patterns=["*.md"])
    with pytest.raises(ValueError, match="written reason"):
        list(sybil.parse(page).examples())


def test_snippet_sections_resolve() -> None:
    body = resolve_snippet("posenc/sinusoidal.py:encoding")
    assert "def sinusoidal_encoding" in body
    with pytest.raises(AssertionError, match="not found"):
        resolve_snippet("posenc/sinusoidal.py:no-such-section")


def _registered() -> set[str]:
    from posenc.figures import load_all

    return set(load_all())


def _referenced() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for page in PAGES:
        for name in FIGURE_REFERENCE.findall(page.read_text()):
            found.setdefault(name, []).append(str(page.relative_to(DOCS)))
    return found


def test_every_referenced_figure_is_registered() -> None:
    missing = {name: pages for name, pages in _referenced().items() if name not in _registered()}
    assert not missing, f"pages refer to figures that posenc.figures does not register: {missing}"


def test_every_registered_figure_is_used() -> None:
    unused = _registered() - set(_referenced())
    assert not unused, f"figures registered but shown on no page: {sorted(unused)}"


def test_no_placeholder_pages() -> None:
    stubs = [str(p.relative_to(DOCS)) for p in PAGES if "PLACEHOLDER" in p.read_text()]
    assert not stubs, f"pages still marked as placeholders: {stubs}"


def _docstrings() -> list[tuple[str, str]]:
    import ast

    found = []
    for path in sorted((ROOT / "posenc").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                text = ast.get_docstring(node, clean=True)
                if text:
                    found.append((f"{path.relative_to(ROOT)}:{getattr(node, 'name', 'module')}", text))
    return found


def test_docstrings_render_in_the_api_reference() -> None:
    """The API page renders docstrings as Google-style Markdown: a ``>>>`` example outside an
    ``Examples:`` section becomes a nested blockquote, and Sphinx roles (:func:`x`) show raw."""
    problems = []
    for where, text in _docstrings():
        lines = text.splitlines()
        first_example = next((i for i, line in enumerate(lines) if line.lstrip().startswith(">>>")), None)
        if first_example is not None and not any(line.strip() in ("Examples:", "Example:") for line in lines[:first_example]):
            problems.append(f"{where}: '>>>' example outside an 'Examples:' section")
        if re.search(r":(?:func|class|mod|meth|attr):`", text):
            problems.append(f"{where}: Sphinx role in a Markdown docstring")
    assert not problems, "\n".join(problems)


def _docstring_literals() -> list[tuple[str, str, str]]:
    """(where, source literal, value) of every docstring in posenc."""
    import ast

    found = []
    for path in sorted((ROOT / "posenc").rglob("*.py")):
        source = path.read_text()
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
                first = node.body[0]
                if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                        and isinstance(first.value.value, str)):
                    literal = ast.get_source_segment(source, first.value) or ""
                    found.append((f"{path.relative_to(ROOT)}:{first.lineno}", literal, first.value.value))
    return found


def test_docstring_math_is_raw_tex() -> None:
    """Math in a docstring is TeX between \\( \\) or \\[ \\] (typeset on the API page), in a raw string:
    in a plain one, ``\\theta`` would hold a tab and ``\\frac`` a form feed."""
    problems = []
    for where, literal, value in _docstring_literals():
        if "\\" in value and not literal.lower().startswith("r"):
            problems.append(f"{where}: a backslash in a docstring that is not a raw string (r\"\"\")")
        if re.search(r"[\x00-\x09\x0b-\x1f]", value):
            problems.append(f"{where}: a control character in a docstring (an escape such as \\t in \\theta)")
    assert not problems, "\n".join(problems)


SNIPPET_MARKER = re.compile(r"--8<-- \[start:(?P<name>[A-Za-z0-9_-]+)\]")
SNIPPET_INCLUDE = re.compile(r'--8<-- "(?P<path>posenc/[^":]+):(?P<name>[A-Za-z0-9_-]+)"')


def test_every_snippet_marker_is_included_and_every_include_has_its_marker() -> None:
    """A ``--8<-- [start:NAME]`` marker in posenc marks code a page shows; one that no page includes
    only misleads the next editor (issue 31 found 21 of 77; the last 18, never included, were removed
    in the fourth edition's fourth session), and an include needs its marker."""
    defined = {f"{path.relative_to(ROOT).as_posix()}:{match['name']}"
               for path in sorted((ROOT / "posenc").rglob("*.py")) for match in SNIPPET_MARKER.finditer(path.read_text())}
    included = {f"{match['path']}:{match['name']}" for page in PAGES for match in SNIPPET_INCLUDE.finditer(page.read_text())}
    assert sorted(defined - included) == [], "markers no page includes: include them or remove them"
    assert sorted(included - defined) == [], "pages include markers that do not exist"
