"""The API reference's pages: an index (``api.md``) and one page per public module of posenc.

Each module page is one mkdocstrings section (``::: posenc.X``). A name that a module lists in
``__all__`` but imports from another public posenc module (posenc.model's ``Method``, from
posenc.methods; posenc.rope's ``rope_inverse_frequencies``, from posenc.rope_scaling) is documented
once, on the page of the module that defines it: mkdocstrings renders every name of ``__all__``,
so such a name would carry its whole docstring and source on both pages. The importing module's
page lists it in a line with a link instead. Everything is read from the sources with `ast`,
without importing posenc.
"""

from __future__ import annotations

import ast
from pathlib import Path

__all__ = ["api_modules", "api_reference", "exports", "module_page"]

ROOT = Path(__file__).resolve().parents[1]


def api_modules() -> list[str]:
    """The public posenc modules (file names without a leading underscore), the config reader's
    package, whose ``__init__`` is its public face (posenc.configs), and that package's public
    modules (``configs.sites``, ``configs.vision``, ...)."""
    modules = [path.stem for path in (ROOT / "posenc").glob("*.py") if not path.stem.startswith("_")]
    package = [f"configs.{path.stem}" for path in (ROOT / "posenc" / "configs").glob("*.py")
               if not path.stem.startswith("_")]
    return sorted([*modules, "configs", *package])


def _tree(module: str) -> ast.Module:
    """The parsed source of ``posenc.<module>`` (``module``: dotted below posenc)."""
    path = ROOT / "posenc" / Path(*module.split("."))
    path = path.with_suffix(".py") if path.with_suffix(".py").is_file() else path / "__init__.py"
    return ast.parse(path.read_text(encoding="utf-8"))


def _summary(module: str) -> str:
    """The first line of a module's docstring (``module``: dotted below posenc)."""
    docstring = ast.get_docstring(_tree(module)) or ""
    return docstring.strip().splitlines()[0] if docstring.strip() else ""


def _public(module: str) -> bool:
    return module.startswith("posenc") and not any(part.startswith("_") for part in module.split("."))


def exports(module: str) -> tuple[list[str], dict[str, str]]:
    """``module``'s ``__all__`` (empty if it is not a literal list) and, of those names, the ones it
    imports from another public posenc module, with that module (``{"Method": "posenc.methods"}``).

    >>> names, imported = exports("model")
    >>> "TinyTransformer" in names, imported["Method"], "TinyTransformer" in imported
    (True, 'posenc.methods', False)
    """
    tree = _tree(module)
    names: list[str] = []
    homes: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            if isinstance(node.value, (ast.List, ast.Tuple)):
                names = [e.value for e in node.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and _public(node.module):
            homes.update({alias.asname or alias.name: node.module for alias in node.names})
    return names, {name: homes[name] for name in names if name in homes}


def _documented(module: str, name: str) -> bool:
    """Whether ``posenc.<module>``'s page has a section for ``name``: a class or function with a
    docstring defined there, or imported there from a private module and listed in ``__all__``
    (posenc.configs' ``from_config``)."""
    tree = _tree(module)
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)) and node.name == name:
            return ast.get_docstring(node) is not None
    names, _ = exports(module)
    for node in tree.body:
        if (isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and name in names
                and not _public(node.module) and any((a.asname or a.name) == name for a in node.names)):
            return _documented(node.module.removeprefix("posenc."), name)
    return False


def module_page(module: str) -> str:
    """The Markdown of ``api/<module>.md``: the module's own names in full, and a line linking the
    names it re-exports to the pages that document them."""
    page = f"# posenc.{module}\n\n"
    names, imported = exports(module)
    if not imported:
        return page + f"::: posenc.{module}\n"
    by_home: dict[str, list[str]] = {}
    for name in names:
        if name in imported:
            by_home.setdefault(imported[name], []).append(name)
    parts = []
    for home, moved in by_home.items():
        short = home.removeprefix("posenc.")
        links = [f"[`{n}`][{home}.{n}]" if _documented(short, n) else f"`{n}`" for n in moved]
        parts.append(f"{', '.join(links)} from [`{home}`]({short}.md)")
    own = [name for name in names if name not in imported]
    return page + (f"`posenc.{module}` also exports these names, each documented on the page of its own "
                   f"module: {'; '.join(parts)}.\n\n"
                   f"::: posenc.{module}\n    options:\n      members: [{', '.join(own)}]\n")


def api_reference() -> dict[str, str]:
    """The API reference: an index page (``api.md``) and one page per public module
    (``api/<module>.md``, see `module_page`), so that no page carries the whole package's
    docstrings and source at once."""
    modules = api_modules()
    index = [
        "# API reference",
        "",
        "Generated from the docstrings of the `posenc` package, one page per module; every `>>>`",
        "example in them is run by the tests. The names listed in `posenc.__all__` can be imported",
        "from `posenc` directly.",
        "",
        "| module | what it holds |",
        "|---|---|",
    ]
    index += [f"| [`posenc.{name}`](api/{name}.md) | {_summary(name)} |" for name in modules]
    index += ["| [`posenc.figures`](api/figures.md) | The figure registry: `figure` and `FigureSpec`. |",
              ("| [`posenc.experiments`](api/experiments.md) | The measured studies: configuration, language "
               "modelling, retrieval, context extension, windows. |"), ""]
    pages = {"api.md": "\n".join(index)}
    for name in modules:
        pages[f"api/{name}.md"] = module_page(name)
    studies = ("config", "length_extrapolation", "retrieval", "context_extension", "inference_windows")
    pages["api/experiments.md"] = "# posenc.experiments\n\n" + "\n".join(
        f"::: posenc.experiments.{name}\n    options:\n      heading_level: 2\n" for name in studies)
    pages["api/figures.md"] = ("# posenc.figures\n\n::: posenc.figures\n    options:\n"
                               "      members: [figure, FigureSpec]\n")
    return pages
