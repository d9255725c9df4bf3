"""Reading and writing the committed results files, and the library versions recorded in them."""

from __future__ import annotations

import importlib
import json
import platform
from pathlib import Path
from typing import Any


def versions(*extra: str) -> dict[str, str]:
    """Python, torch, numpy and posenc versions, plus those of the ``extra`` distributions named
    by their import name (e.g. ``"sklearn"``, recorded as ``"scikit-learn"``)."""
    names = {"sklearn": "scikit-learn"}
    found = {"python": platform.python_version()}
    for module in ("torch", "numpy", *extra, "posenc"):
        found[names.get(module, module)] = str(importlib.import_module(module).__version__)
    return found


def write_json(results: dict[str, Any], path: str | Path) -> Path:
    """Write ``results`` as indented JSON (creating the folder); returns the path written."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(results, indent=1) + "\n")
    return target


def read_json(path: str | Path) -> dict[str, Any]:
    """Read a results file."""
    data: dict[str, Any] = json.loads(Path(path).read_text())
    return data
