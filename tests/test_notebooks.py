"""Execute every notebook under docs/notebooks, as the site build does, and fail on any error.

Also what a reader of the site needs from a notebook: it uses posenc's public API only (no
private modules), says how to install posenc, and draws its plots as SVG on a transparent
background (a PNG, or an opaque white figure, shows as a white box in the dark palette).
"""

from __future__ import annotations

import re
from pathlib import Path

import jupytext
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "docs" / "notebooks").glob("*.py"))
PRIVATE_IMPORT = re.compile(r"^\s*(?:from|import)\s+posenc(?:\.\w+)*\._\w+", re.MULTILINE)
FIGURE_BACKGROUND = re.compile(r'<g id="patch_1">\s*<path d="[^"]*"\s*style="fill:\s*([^;"]+)', re.DOTALL)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs_without_errors(path: Path) -> None:
    notebook = jupytext.read(path)
    NotebookClient(notebook, timeout=600, kernel_name="python3", allow_errors=False,
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    outputs = [out for cell in notebook.cells if cell.cell_type == "code" for out in cell.get("outputs", [])]
    assert outputs, f"{path.name} printed nothing: a notebook on the site should show results"
    assert not [out for out in outputs if out.get("output_type") == "error"]
    for out in outputs:
        data = out.get("data", {})
        assert "image/png" not in data, f"{path.name}: a PNG plot shows as a white box in the dark palette; use SVG"
        if "image/svg+xml" in data:
            background = FIGURE_BACKGROUND.search(str(data["image/svg+xml"]))
            assert background is None or background[1].strip() == "none", (
                f"{path.name}: a plot with an opaque background ({background[1] if background else ''})")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_uses_public_api_and_says_how_to_install(path: Path) -> None:
    source = path.read_text()
    assert not PRIVATE_IMPORT.search(source), f"{path.name} imports a private posenc module"
    assert "pip install" in source, f"{path.name} does not say how to install posenc"
