"""Reading and writing the committed results files, and the library versions recorded in them."""

from __future__ import annotations

import importlib
import json
import multiprocessing
import platform
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import torch


def versions(*extra: str) -> dict[str, str]:
    """Python, torch, numpy and posenc versions, plus those of the ``extra`` distributions named
    by their import name (e.g. ``"sklearn"``, recorded as ``"scikit-learn"``)."""
    names = {"sklearn": "scikit-learn"}
    found = {"python": platform.python_version()}
    for module in ("torch", "numpy", *extra, "posenc"):
        found[names.get(module, module)] = str(importlib.import_module(module).__version__)
    return found


def large_path(path: str | Path) -> Path:
    """Where the larger (GPU) configuration keeps the results file that ``path`` is for the others."""
    path = Path(path)
    return path.parent / "large" / path.name


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


def spread(name: str, per_seed: list[list[float | None]]) -> dict[str, list[float | None]]:
    """Mean, min and max over seeds of each entry (None where a run has none), under ``name``,
    ``name_min`` and ``name_max``."""
    means: list[float | None] = []
    lows: list[float | None] = []
    highs: list[float | None] = []
    for values in zip(*per_seed):
        if any(v is None for v in values):
            for column in (means, lows, highs):
                column.append(None)
            continue
        numbers = [float(v) for v in values if v is not None]
        means.append(round(sum(numbers) / len(numbers), 4))
        lows.append(min(numbers))
        highs.append(max(numbers))
    return {name: means, f"{name}_min": lows, f"{name}_max": highs}


def spread_cells(entry: dict[str, Any], metric: str, width: int = 20) -> str:
    """``mean (min-max)`` of each length of one entry of `spread`, right-aligned in ``width``
    characters ("-" where not scored): the cells of a study's plain-text summary."""
    cells = []
    for mean, low, high in zip(entry[metric], entry[f"{metric}_min"], entry[f"{metric}_max"]):
        cells.append(f"{'-':>{width}}" if mean is None else f"{f'{mean:.2f} ({low:.2f}-{high:.2f})':>{width}}")
    return "".join(cells)


Job = tuple[str, int]


def _call(task: tuple[Callable[..., dict[str, Any]], Job, Any, str, bool, int]) -> tuple[Job, dict[str, Any]]:
    function, job, config, device, progress, position = task
    torch.set_num_threads(1)
    return job, function(*job, config, device, progress, position)


def run_jobs(function: Callable[..., dict[str, Any]], jobs: list[Job], config: Any, *, device: str,
             workers: int, progress: bool) -> dict[Job, dict[str, Any]]:
    """``function(method, seed, config, device, progress, bar_position)`` for every (method, seed)
    job, in ``workers`` processes of one thread each (or in this process when ``workers`` is 1)."""
    from tqdm import tqdm

    tasks = [(function, job, config, device, progress, i % workers) for i, job in enumerate(jobs)]
    # one bar over the jobs below the workers' own: scoring a cached model shows no training bar
    bar = tqdm(total=len(tasks), desc="jobs done", position=workers, disable=not progress)

    def counted(results: Iterable[tuple[Job, dict[str, Any]]]) -> Iterator[tuple[Job, dict[str, Any]]]:
        for result in results:
            bar.update(1)
            yield result

    with bar:
        if workers == 1:
            threads = torch.get_num_threads()
            try:
                return dict(counted(map(_call, tasks)))
            finally:
                torch.set_num_threads(threads)
        context = multiprocessing.get_context("spawn")
        with context.Pool(min(workers, len(tasks))) as pool:
            return dict(counted(pool.imap_unordered(_call, tasks)))
