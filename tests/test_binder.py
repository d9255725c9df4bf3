"""The Binder environment (binder/) that the notebooks' "Open in Binder" links build: pinned like
requirements.lock, with everything posenc and the notebooks import."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _pins(path: Path) -> dict[str, str]:
    """``{normalised name: version}`` of the ``name==version`` lines of a requirements file."""
    pins = {}
    for line in path.read_text().splitlines():
        match = re.match(r"^([A-Za-z0-9_.-]+)==([^\s;#]+)", line.strip())
        if match:
            pins[re.sub(r"[-_.]+", "-", match[1]).lower()] = match[2]
    return pins


def test_binder_pins_are_the_lock_file_versions() -> None:
    binder, lock = _pins(ROOT / "binder" / "requirements.txt"), _pins(ROOT / "requirements.lock")
    assert binder, "binder/requirements.txt pins nothing"
    different = {name: (version, lock.get(name)) for name, version in binder.items() if lock.get(name) != version}
    assert not different, f"binder/requirements.txt differs from requirements.lock: {different}"


def test_binder_has_what_posenc_and_the_notebooks_need() -> None:
    binder = _pins(ROOT / "binder" / "requirements.txt")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    needed = {re.split(r"[<>=!~ ]", requirement)[0].lower() for requirement in project["dependencies"]}
    needed |= {"jupytext", "ipykernel"}  # the notebooks are jupytext .py files run by an IPython kernel
    assert needed <= set(binder), f"missing from binder/requirements.txt: {sorted(needed - set(binder))}"
    post_build = (ROOT / "binder" / "postBuild").read_text()
    assert "pip install --no-deps -e ." in post_build and "jupytext-config set-default-viewer" in post_build
