"""The API reference documents each object once: posenc.model's page holds TinyTransformer, and
the names posenc.model re-exports (Method, PositionalEmbedding, METHODS, ...) are documented on
their own modules' pages and linked from it (hooks/api_pages.py). The re-exports stay importable.

The last test reads the built site (``$POSENC_SITE_DIR``, else ``site/``) and is skipped without one.
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import os
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "hooks"))

import api_pages

SITE = Path(os.environ.get("POSENC_SITE_DIR", ROOT / "site"))


def test_hook_docstring_examples() -> None:
    failed, attempted = doctest.testmod(api_pages, optionflags=doctest.ELLIPSIS)
    assert attempted > 0 and failed == 0


def test_the_model_page_renders_tinytransformer_and_links_the_rest() -> None:
    import posenc.model

    names, imported = api_pages.exports("model")
    assert names == posenc.model.__all__  # the page reads the same list Python exports
    assert sorted(imported) == sorted(set(names) - {"TinyTransformer"})
    for name, home in imported.items():  # still importable from posenc.model: the same object
        assert getattr(posenc.model, name) is getattr(importlib.import_module(home), name), name
    page = api_pages.module_page("model")
    assert "::: posenc.model\n    options:\n      members: [TinyTransformer]\n" in page
    assert "[`Method`][posenc.methods.Method]" in page
    assert "[`PositionalEmbedding`][posenc.embedding.PositionalEmbedding]" in page
    assert all(f"`{name}`" in page for name in imported)


def test_every_class_and_function_is_rendered_on_one_page() -> None:
    """Over all module pages, the names rendered in full (``__all__`` less the re-exports) name
    each public class or function once."""
    pages: dict[int, list[str]] = {}
    for module in api_pages.api_modules():
        names, imported = api_pages.exports(module)
        live = importlib.import_module(f"posenc.{module}")
        for name in names:
            obj = getattr(live, name)
            if name not in imported and (inspect.isclass(obj) or inspect.isfunction(obj)):
                pages.setdefault(id(obj), []).append(f"{module}.{name}")
    twice = [where for where in pages.values() if len(where) > 1]
    assert twice == []


@pytest.mark.skipif(not (SITE / "api" / "model" / "index.html").is_file(),
                    reason=f"no built site at {SITE}: run `mkdocs build` first (or set POSENC_SITE_DIR)")
def test_the_built_model_page_has_one_object() -> None:
    html = (SITE / "api" / "model" / "index.html").read_text(encoding="utf-8")
    headings = re.findall(r'<h[23] id="(posenc\.[^"]+)"', html)
    assert headings == ["posenc.model", "posenc.model.TinyTransformer"]
    assert 'href="../methods/#posenc.methods.Method"' in html
    assert 'href="../embedding/#posenc.embedding.PositionalEmbedding"' in html
