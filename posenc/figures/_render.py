"""Render registered figures into a content-addressed cache, and say which files to publish.

A figure's cache key hashes everything that can change its pixels: the source of its own module
and of every posenc module it imports (found by reading ``import`` statements, transitively),
this renderer, the palette, and the versions of matplotlib, numpy and torch. An unchanged key
means the cached file is reused; editing a posenc module redraws exactly the figures that
import it.

Every figure has four variants: the wide layout in the light and dark palettes (``light``,
``dark``) and the narrow layout for phones in both (``narrow-light``, ``narrow-dark``; see
``posenc.figures._layout.use_layout``).

Run as ``python -m posenc.figures._render --cache-dir DIR``: renders what is missing and prints
a JSON manifest ``{name: {"alt": ..., "files": {"light": path, "dark": path, "narrow-light": path,
"narrow-dark": path}}}``.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import random
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

PACKAGE_ROOT = Path(__file__).resolve().parents[1]  # .../posenc
VARIANTS = ("light", "dark", "narrow-light", "narrow-dark")


def split_variant(variant: str) -> tuple[str, str]:
    """``"narrow-dark"`` -> ``("narrow", "dark")``; ``"light"`` -> ``("wide", "light")``."""
    layout, _, palette_name = variant.rpartition("-")
    return layout or "wide", palette_name


def _module_path(module: str) -> Path | None:
    relative = Path(*module.split("."))
    for candidate in (PACKAGE_ROOT.parent / relative.with_suffix(".py"), PACKAGE_ROOT.parent / relative / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _exports() -> dict[str, str]:
    """posenc's public-name table (importing ``posenc`` is cheap: it loads no submodule)."""
    return dict(importlib.import_module("posenc")._EXPORTS)


def _imports_of(module: str) -> set[str]:
    """posenc modules imported by ``module`` (absolute and relative imports, public names resolved)."""
    path = _module_path(module)
    if path is None:
        return set()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = importlib.util.resolve_name("." * node.level + (node.module or ""), package) if node.level else node.module or ""
            found.add(base)
            for alias in node.names:
                # `from posenc import name`: a public name maps to its module; else a submodule
                public = base == "posenc" and alias.name in _exports()
                found.add(_exports()[alias.name] if public else f"{base}.{alias.name}")
    return {name for name in found if name and name.split(".")[0] == "posenc" and _module_path(name)}


def dependencies(module: str) -> list[str]:
    """``module`` and every posenc module it imports, directly or not, sorted."""
    seen: set[str] = set()
    todo = [module]
    while todo:
        current = todo.pop()
        if current not in seen:
            seen.add(current)
            todo.extend(_imports_of(current) - seen)
    return sorted(seen)


def cache_key(spec: Any, variant: str) -> str:
    digest = hashlib.sha256()
    for part in (spec.name, variant, spec.extension):
        digest.update(part.encode() + b"\0")
    for dist in ("matplotlib", "numpy", "torch"):
        digest.update(f"{dist}={importlib.metadata.version(dist)}".encode() + b"\0")
    modules = dependencies(spec.module)
    for module in modules + ["posenc.figures._render", "posenc.figures._style", "posenc.figures._layout"]:
        path = _module_path(module)
        assert path is not None
        digest.update(module.encode() + b"\0" + path.read_bytes())
    for data in _data_files(modules):
        digest.update(str(data.relative_to(PACKAGE_ROOT)).encode() + b"\0" + data.read_bytes())
    return digest.hexdigest()[:20]


def _data_files(modules: list[str]) -> list[Path]:
    """Data a figure may read: the JSON files shipped in the packages of its dependencies
    (e.g. the committed experiment results), so that new results redraw their figures."""
    folders = {path.parent for module in modules if (path := _module_path(module)) is not None}
    folders.discard(PACKAGE_ROOT)  # posenc/ itself holds no data; its subpackages may
    return sorted(data for folder in folders for data in folder.rglob("*.json"))


def cache_path(cache_dir: Path, spec: Any, variant: str) -> Path:
    return cache_dir / f"{spec.name}-{variant}-{cache_key(spec, variant)}.{spec.extension}"


def render(name: str, variant: str, target: str, *, preview: bool = False) -> str:
    """Draw one figure in one palette and write it to ``target`` (atomically).

    The figure is drawn *and saved* under the palette: matplotlib reads some settings (SVG ids,
    font handling, background) only when saving. Every random generator is seeded first.
    """
    import matplotlib

    matplotlib.use("Agg")  # no display: the renderer only ever writes files
    import matplotlib.pyplot as plt
    import numpy as np
    import torch
    from matplotlib.animation import Animation, PillowWriter

    from posenc.figures import load_all
    from posenc.figures._layout import fit_to_width, use_layout
    from posenc.figures._style import use_palette

    torch.set_num_threads(1)
    spec = load_all()[name]
    path = Path(target)
    partial = path.with_name(path.stem + ".partial" + path.suffix)
    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    layout, palette_name = split_variant(variant)
    with use_palette(palette_name), use_layout(layout):
        result = spec.function()
        if layout == "narrow" and not isinstance(result, Animation):
            fit_to_width(result)
        if isinstance(result, Animation):
            result.save(partial, writer=PillowWriter(fps=getattr(result, "posenc_fps", 12)))
            plt.close(result._fig)  # type: ignore[attr-defined]
        elif preview:  # a PNG for authors to look at; the site uses the SVG
            result.savefig(partial, format="png", dpi=110)
        else:
            result.savefig(partial, format="svg", metadata={"Date": None, "Creator": "posenc"})
            plt.close(result)
    os.replace(partial, path)
    return target


def build(cache_dir: Path, workers: int | None = None) -> dict[str, dict[str, Any]]:
    """Render every figure missing from the cache; return the manifest of all of them."""
    from posenc.figures import load_all

    cache_dir.mkdir(parents=True, exist_ok=True)
    manifest: dict[str, dict[str, Any]] = {}
    missing: list[tuple[str, str, str]] = []
    for name, spec in load_all().items():
        files = {variant: str(cache_path(cache_dir, spec, variant)) for variant in VARIANTS}
        manifest[name] = {"alt": spec.alt, "extension": spec.extension, "files": files}
        missing += [(name, variant, path) for variant, path in files.items() if not Path(path).exists()]
    workers = workers or min(len(missing), os.cpu_count() or 1)
    if workers > 1:
        with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
            list(pool.map(render, *zip(*missing)))
    else:
        for job in missing:
            render(*job)
    return manifest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache-dir", type=Path, required=True)
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--preview", nargs="+", metavar="NAME", help="write PNGs of these figures (both palettes) to the cache dir and exit")
    args = parser.parse_args()
    if args.preview:
        args.cache_dir.mkdir(parents=True, exist_ok=True)
        for name in args.preview:
            for variant in VARIANTS:
                print(render(name, variant, str(args.cache_dir / f"{name}-{variant}.png"), preview=True))
        return
    print(json.dumps(build(args.cache_dir, args.workers), indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
