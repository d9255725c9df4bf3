"""Every figure on the site: plain functions that return a matplotlib Figure.

A figure is registered with `figure` and referred to by name from a page, with the line
``[[figure NAME]]``. The MkDocs hook (``hooks/posenc_site.py``) draws each registered figure once per
palette (light and dark) into a cache keyed by everything the drawing depends on, and adds the
SVGs to the site. A figure function may also return an animation, which is written as a GIF.

Figure modules are imported lazily (`load_all`), so importing this package is cheap.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["FigureSpec", "figure", "load_all", "notebook_style"]

_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


@dataclass(frozen=True)
class FigureSpec:
    """What the site needs to know about one figure."""

    name: str
    alt: str
    function: Callable[..., Any]
    module: str
    animated: bool = False

    @property
    def extension(self) -> str:
        return "gif" if self.animated else "svg"


_REGISTRY: dict[str, FigureSpec] = {}


def figure(name: str, *, alt: str, animated: bool = False) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a figure function under ``name`` with its alt text (what the figure shows)."""
    if not _NAME.match(name):
        raise ValueError(f"figure name must be lowercase words joined by '-', got {name!r}")
    if len(alt.split()) < 4:
        raise ValueError(f"alt text for figure {name!r} must describe the figure, got {alt!r}")

    def register(function: Callable[..., Any]) -> Callable[..., Any]:
        existing = _REGISTRY.get(name)
        if existing is not None and existing.module != function.__module__:
            raise ValueError(f"figure {name!r} is registered twice ({existing.module}, {function.__module__})")
        _REGISTRY[name] = FigureSpec(name, alt, function, function.__module__, animated)
        return function

    return register


def notebook_style() -> None:
    """Draw a notebook's plots in the site's figure style, as SVG that follows the page's
    palette on the site (light and dark); call once after ``%matplotlib inline``."""
    from posenc.figures._notebook import notebook_style as apply

    apply()


def load_all() -> dict[str, FigureSpec]:
    """Import every figure module in this package and return the registry, sorted by name."""
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")
    return dict(sorted(_REGISTRY.items()))
