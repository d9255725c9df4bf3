"""Site budgets: build times, the cost of a rebuild, page weights, test-suite time. Prints tables.

Run by ``make bench`` (``python benchmarks/bench_site.py``); ``--help`` lists the options.
Everything is measured on a temporary copy of the repository with its own, initially empty,
``.cache``, so the repository's caches and ``site/`` are left alone:

1. **Cold build**: ``mkdocs build`` with empty caches (draws every figure, executes every
   notebook). Every figure it drew is then compared byte for byte with the repository's own
   figure cache (same content-addressed file name = same inputs): two renders in fresh
   processes must give the same bytes.
2. **Rebuild with nothing changed**, ``--runs`` times, median; then **the same pages with the
   figure pipeline and notebook execution switched off** (``POSENC_FIGURES=0``,
   ``POSENC_EXECUTE_NOTEBOOKS=false``: figures become empty captioned ``<figure>`` elements and
   notebooks are converted without running), after one untimed warm-up, median of ``--runs``.
   The ratio of the two says what the figure and notebook caches leave to pay on a rebuild;
   target <= 1.2x. The two series run one after the other, not interleaved: mkdocs-jupyter
   evicts from its cache folder what the current build did not use.
3. **First view**: every page opened once in headless Chromium (``tests/site/check_site.py``),
   the bytes of every file a cold visit loads before the reader scrolls or searches (HTML, CSS,
   scripts, fonts, the figures in view, KaTeX only when math is in view; the search index only
   once the reader opens search), per page and by kind; the largest against the 1 MB budget
   (uncompressed).
4. **Explorer widgets**: ``tests/site/check_explorer.py`` on the built site times every redraw of
   the five widgets while it moves their controls with the keyboard; the slowest update (first
   drawings included) against the 50 ms budget.
5. **Test suite**: wall time of ``pytest -q`` on the repository (``--skip-tests`` leaves it out).

Timings are wall-clock seconds of the whole command (interpreter start included).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RATIO_TARGET = 1.2
BUDGET_MB_DEFAULT = 1.0
OUTPUT_CELL = re.compile(r'<div class="[^"]*\bjp-OutputArea-output\b')  # an executed cell's output
SWITCHES_OFF = {"POSENC_FIGURES": "0", "POSENC_EXECUTE_NOTEBOOKS": "false"}
NOT_COPIED = {".git", ".venv", "node_modules", "site", "site-screenshots", ".cache", ".pytest_cache",
              ".mypy_cache", ".hypothesis", "__pycache__", "*.egg-info"}


def copy_repository(target: Path) -> Path:
    """The sources needed to build the site, without caches or build output; node_modules linked."""
    shutil.copytree(ROOT, target, ignore=shutil.ignore_patterns(*NOT_COPIED), symlinks=True)
    if (ROOT / "node_modules").is_dir():
        (target / "node_modules").symlink_to(ROOT / "node_modules", target_is_directory=True)
    return target


def build(repo: Path, site_dir: Path, extra_env: dict[str, str] | None = None) -> float:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", **(extra_env or {})}
    command = [sys.executable, "-m", "mkdocs", "build", "--no-strict", "--clean", "--site-dir", str(site_dir)]
    started = time.perf_counter()
    result = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if result.returncode:
        raise SystemExit(f"mkdocs build failed in {repo}:\n{result.stderr[-3000:]}")
    return elapsed


def switches_supported(repo: Path) -> bool:
    """Whether the hook and mkdocs.yml read the two environment variables of the baseline build."""
    hook = (repo / "hooks" / "posenc_site.py").read_text()
    config = (repo / "mkdocs.yml").read_text()
    return "POSENC_FIGURES" in hook and "POSENC_EXECUTE_NOTEBOOKS" in config


def compare_renders(fresh: Path, reference: Path) -> tuple[int, int, list[str]]:
    """(identical, compared, names that differ) for figure files present in both caches."""
    identical, compared, different = 0, 0, []
    for path in sorted(fresh.glob("*")):
        if path.suffix not in {".svg", ".gif", ".png"}:
            continue
        other = reference / path.name
        if other.is_file():
            compared += 1
            if path.read_bytes() == other.read_bytes():
                identical += 1
            else:
                different.append(path.name)
    return identical, compared, different


def table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip()
             for row in [header, ["-" * w for w in widths], *rows]]
    return "\n".join(lines)


def run_tests() -> tuple[float, str]:
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=ROOT,
                            capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    elapsed = time.perf_counter() - started
    summary = next((line.strip("= ") for line in reversed(result.stdout.splitlines())
                    if re.search(r"\d+ (passed|failed|error)", line)), f"exit code {result.returncode}")
    return elapsed, summary


WIDGET_LINE = re.compile(r"^\s+(?P<widget>[\w-]+)\s+first drawing\s+(?P<first>[\d.]+) ms;.*?max\s+(?P<max>[\d.]+) ms")
WIDGET_BUDGET_MS = 50.0


def explorer_row(site: Path) -> list[str]:
    """The explorer widgets' update times in the browser (tests/site/check_explorer.py drives every
    control with the keyboard and times each redraw): the slowest update of any widget."""
    command = [sys.executable, "-m", "tests.site.check_explorer", "--site-dir", str(site)]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    times = {m["widget"]: max(float(m["first"]), float(m["max"]))
             for m in map(WIDGET_LINE.match, result.stdout.splitlines()) if m}
    if not times:
        return ["explorer widget update", "n/a", f"< {WIDGET_BUDGET_MS:.0f} ms", "check_explorer printed no timings"]
    widget, slowest = max(times.items(), key=lambda item: item[1])
    verdict = "ok" if slowest < WIDGET_BUDGET_MS else "OVER"
    return ["explorer widget update (slowest, incl. first drawing)", f"{slowest:.1f} ms", f"< {WIDGET_BUDGET_MS:.0f} ms",
            f"{verdict}: {widget}; " + ", ".join(f"{w} {t:.1f}" for w, t in times.items())]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="timed rebuilds per series (median reported)")
    parser.add_argument("--skip-tests", action="store_true", help="do not time the test suite")
    parser.add_argument("--skip-transfer", action="store_true", help="do not open the pages in Chromium")
    parser.add_argument("--keep", action="store_true", help="keep the temporary copy and print where it is")
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="posenc-bench-"))
    rows: list[list[str]] = []
    failures: list[str] = []
    try:
        repo = copy_repository(workdir / "repo")
        site = workdir / "site"

        cold = build(repo, site)
        figures = len(list((repo / ".cache" / "figures").glob("*.svg"))) + len(list((repo / ".cache" / "figures").glob("*.gif")))
        notebooks = len(list((repo / "docs" / "notebooks").glob("*.py")))
        rows.append(["cold build (empty caches)", f"{cold:.1f} s", "", f"{figures} figure files drawn, {notebooks} notebooks run"])

        identical, compared, different = compare_renders(repo / ".cache" / "figures", ROOT / ".cache" / "figures")
        verdict = "ok" if not different else "FAIL"
        note = "same name = same inputs" if compared else "repository cache empty: run make build first"
        if different:
            note = "differ: " + ", ".join(different[:4]) + (" ..." if len(different) > 4 else "")
            failures.append("fresh figure renders differ from the repository's cache")
        rows.append(["fresh renders == repository cache", f"{identical}/{compared} files", "all", f"{verdict}; {note}"])

        warm: list[float] = []
        base: list[float] = []
        supported = switches_supported(repo)
        if supported:
            # its own copy, so its own caches: the two series can alternate (less drift from load)
            baseline_repo = copy_repository(workdir / "repo-baseline")
            baseline_site = workdir / "site-baseline"
            build(baseline_repo, baseline_site, SWITCHES_OFF)  # warm-up: converts the notebooks once, unexecuted
        for _ in range(args.runs):
            warm.append(build(repo, site))
            if supported:
                base.append(build(baseline_repo, baseline_site, SWITCHES_OFF))
        shown = len(list((site / "figures").glob("*"))) if (site / "figures").is_dir() else 0
        executed = sum(len(OUTPUT_CELL.findall(page.read_text())) for page in site.glob("notebooks/*/index.html"))
        rows.append([f"rebuild, nothing changed (median of {args.runs})", f"{statistics.median(warm):.2f} s", "",
                     "runs: " + ", ".join(f"{t:.2f}" for t in warm) + f"; {shown} figure files, {executed} notebook outputs"])
        if supported:
            drawn = list((baseline_site / "figures").glob("*")) if (baseline_site / "figures").is_dir() else []
            outputs = sum(len(OUTPUT_CELL.findall(page.read_text())) for page in baseline_site.glob("notebooks/*/index.html"))
            switched = "figures and notebook outputs absent" if not drawn and not outputs else f"NOT switched off ({len(drawn)} figure files, {outputs} outputs)"
            rows.append([f"same pages, figures + notebook execution off (median of {args.runs})", f"{statistics.median(base):.2f} s", "",
                         "runs: " + ", ".join(f"{t:.2f}" for t in base) + f"; {switched}"])
            ratio = statistics.median(warm) / statistics.median(base)
            ok = ratio <= RATIO_TARGET
            if not ok:
                failures.append(f"rebuild ratio {ratio:.2f}x over {RATIO_TARGET}x")
            rows.append(["rebuild ratio", f"{ratio:.2f}x", f"<= {RATIO_TARGET}x", "ok" if ok else "OVER"])
        else:
            rows.append(["rebuild ratio", "n/a", f"<= {RATIO_TARGET}x",
                         "hooks/posenc_site.py and mkdocs.yml do not read POSENC_FIGURES / POSENC_EXECUTE_NOTEBOOKS yet"])

        pages: dict[str, dict[str, int]] = {}
        if args.skip_transfer:
            rows.append(["largest first view", "skipped", f"< {BUDGET_MB_DEFAULT} MB", "--skip-transfer"])
        else:
            from tests.site.check_site import BUDGET_MB, CHROMIUM, measure_transfer

            if not Path(CHROMIUM).exists():
                rows.append(["largest first view", "n/a", f"< {BUDGET_MB} MB", f"{CHROMIUM} missing: tools/install_chromium.sh"])
            else:
                pages = measure_transfer(site)
                name, largest = max(pages.items(), key=lambda item: item[1]["page"])
                ok = largest["page"] < BUDGET_MB * 1e6
                if not ok:
                    failures.append(f"page {name} over {BUDGET_MB} MB")
                rows.append(["largest first view (uncompressed)", f"{largest['page'] / 1e6:.2f} MB", f"< {BUDGET_MB} MB",
                             f"{'ok' if ok else 'OVER'}: {name}; {largest['gzip'] / 1e6:.2f} MB gzip; "
                             f"search index loaded on first view: {largest['search'] / 1e3:.0f} kB"])

        if not args.skip_transfer and Path(CHROMIUM).exists():
            rows.append(explorer_row(site))

        if args.skip_tests:
            rows.append(["test suite (pytest -q)", "skipped", "", "--skip-tests"])
        else:
            elapsed, summary = run_tests()
            rows.append(["test suite (pytest -q)", f"{elapsed:.0f} s", "", summary])

        print(table(rows, ["measure", "value", "target", "notes"]))
        if pages:
            print("\nFirst view of every page, kB (a cold visit before scrolling or searching; uncompressed except gzip):")
            kinds = ["html", "images", "css", "js", "fonts", "other", "page", "search", "gzip", "requests"]
            page_rows = [[name] + [f"{row[k] / 1e3:,.0f}" if k != "requests" else str(row[k]) for k in kinds]
                         for name, row in sorted(pages.items(), key=lambda item: -item[1]["page"])]
            print(table(page_rows, ["page", *kinds]))
        if failures:
            print("\nover budget: " + "; ".join(failures))
    finally:
        if args.keep:
            print(f"\nkept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0  # a benchmark reports; the gates live in make test and make check-site


if __name__ == "__main__":
    sys.exit(main())
