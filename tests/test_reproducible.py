"""Reproducible builds: two clean builds of the site give the same bytes, apart from dated files.

Three builds of the whole site, each into an empty temporary folder, with the project's own
``mkdocs.yml`` (``--no-strict``, so that this test reports only on reproducibility; the strict
build runs at the end of ``make test`` and in ``make build``):

* A and B with ``SOURCE_DATE_EPOCH`` set to the same value: every file must be byte-identical.
* C without it, built at another time: every file must equal A's, except the files in
  ``DATED``, which carry the build date, and those may differ only in the date itself.

Files that carry a date (found by building twice and diffing the trees):

* ``sitemap.xml.gz``: MkDocs writes the build time (seconds) into the gzip header, so it differs
  on every build; the XML inside is checked against ``sitemap.xml``.
* ``sitemap.xml``: a ``<lastmod>`` build day per page once ``site_url`` is set (with no
  ``site_url`` the sitemap lists no pages), so it differs between builds on different days.

Both follow ``SOURCE_DATE_EPOCH``, which is why A and B match completely. Nothing else in the
output may depend on the clock, the process (hash seeds, random ids) or the folder built into.
Found this way and fixed in ``hooks/posenc_site.py``: nbformat gives notebook cells random ids,
both in the downloadable ``.ipynb`` and in the notebook pages.

The builds share the figure cache and the executed-notebook cache under ``.cache`` (that is what
keeps this test to a few seconds once the cache is warm), so the figure files in A, B and C are
copies of the same cached renders. That a render itself is deterministic is checked elsewhere,
not repeated here: per figure by ``tests/test_figures.py::test_figure_is_deterministic``, and for
all figures across fresh processes by ``benchmarks/bench_site.py`` (its cold build renders every
figure into an empty cache and compares the bytes with the repository's cache).
"""

from __future__ import annotations

import difflib
import gzip
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATED = {"sitemap.xml", "sitemap.xml.gz"}
EPOCH = "1700000000"  # 2023-11-14; any fixed value does
LASTMOD = re.compile(rb"<lastmod>[^<]*</lastmod>")


def _build(site_dir: Path, source_date_epoch: str | None) -> dict[str, bytes]:
    env = {key: value for key, value in os.environ.items() if key != "SOURCE_DATE_EPOCH"}
    env["NO_MKDOCS_2_WARNING"] = "1"
    if source_date_epoch is not None:
        env["SOURCE_DATE_EPOCH"] = source_date_epoch
    command = [sys.executable, "-m", "mkdocs", "build", "--no-strict", "--clean", "--site-dir", str(site_dir)]
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    assert result.returncode == 0, f"mkdocs build failed:\n{result.stderr[-4000:]}"
    files = {path.relative_to(site_dir).as_posix(): path.read_bytes() for path in site_dir.rglob("*") if path.is_file()}
    assert "index.html" in files and len(files) > 20, f"the build wrote only {sorted(files)}"
    return files


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, bytes]]:
    root = tmp_path_factory.mktemp("reproducible")
    return {
        "A": _build(root / "a", EPOCH),
        "B": _build(root / "b", EPOCH),
        "C": _build(root / "c", None),
    }


def _differences(first: dict[str, bytes], second: dict[str, bytes]) -> list[str]:
    return sorted(name for name in first.keys() | second.keys() if first.get(name) != second.get(name))


def _explain(name: str, first: dict[str, bytes], second: dict[str, bytes]) -> str:
    if name not in first or name not in second:
        return f"{name}: only in build {'one' if name in first else 'two'}"
    try:
        a, b = first[name].decode().splitlines(), second[name].decode().splitlines()
    except UnicodeDecodeError:
        return f"{name}: binary files differ ({len(first[name])} and {len(second[name])} bytes)"
    diff = list(difflib.unified_diff(a, b, "one", "two", n=0, lineterm=""))
    return f"{name}:\n" + "\n".join(line[:200] for line in diff[:12])


def test_same_date_gives_byte_identical_site(builds: dict[str, dict[str, bytes]]) -> None:
    different = _differences(builds["A"], builds["B"])
    details = "\n\n".join(_explain(name, builds["A"], builds["B"]) for name in different[:5])
    assert not different, f"two builds with the same SOURCE_DATE_EPOCH differ in {len(different)} files:\n{details}"


def test_only_dated_files_change_with_the_build_date(builds: dict[str, dict[str, bytes]]) -> None:
    different = _differences(builds["A"], builds["C"])
    undated = [name for name in different if name not in DATED]
    details = "\n\n".join(_explain(name, builds["A"], builds["C"]) for name in undated[:5])
    assert not undated, f"files that do not carry a date differ between two builds:\n{details}"
    for build in builds.values():  # the gzip holds the same sitemap, whatever its header says
        assert gzip.decompress(build["sitemap.xml.gz"]) == build["sitemap.xml"]
    # the sitemaps may differ in their <lastmod> dates, nowhere else
    assert LASTMOD.sub(b"", builds["A"]["sitemap.xml"]) == LASTMOD.sub(b"", builds["C"]["sitemap.xml"])
