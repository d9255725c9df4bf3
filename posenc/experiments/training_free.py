"""Training-free extension beyond scaling: re-mapped relative positions on the trained RoPE models.

The RoPE models of the language-modelling and retrieval studies (the same configuration and
seeds, reused from the model cache) are scored at 1, 2, 4 and 8 times their training length L
with each method of `posenc.experiments._remapped.REMAPS`, none of which trains anything:

* ``rerope``: offsets clipped at L/4 (ReRoPE), queries scaled by log-n as in the authors' patch;
* ``leaky-rerope``: the same, offsets past the window growing s = n / L times slower;
* ``self-extend``: neighbour window L/4, offsets beyond it from positions grouped by the smallest
  group size its authors' rule of thumb allows at that length;
* ``dual-chunk``: Dual Chunk Attention with chunks of 3L/4 and a local window of L/8;
* ``string``: offsets from 0.33 L on shifted down to a local window of L/16, with its attention factor;

and ``rope``, the model as trained. The scaling rules (linear, NTK, YaRN, ...) applied to the same
models, on the same texts and test sequences, are in `posenc.experiments.context_extension`.

Run it with ``python -m posenc.experiments training-free --config full``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from posenc._checks import check_int
from posenc.experiments._remapped import REMAPS, remapped
from posenc.experiments._results import read_json, run_jobs, spread, spread_cells, versions
from posenc.experiments.config import LATER_CONFIGS as CONFIGS
from posenc.experiments.config import Config, check_device
from posenc.experiments.context_extension import METRICS, score, trained_rope

__all__ = ["CONFIGS", "METHODS", "RESULTS_PATH", "load_results", "run", "summary_lines"]

#: The committed results of the full configuration.
RESULTS_PATH = Path(__file__).resolve().parent / "results" / "training_free.json"
#: The rows: the model as trained, then each training-free method.
METHODS = ("rope", *REMAPS)


def _job(task: str, seed: int, config: Config, device: str, progress: bool, position: int) -> dict[str, Any]:
    model, _ = trained_rope(task, config, seed, device, progress, position)
    started = time.process_time()
    scores: dict[str, list[float]] = {}
    for method in METHODS:
        scores[method] = [score(task, model if method == "rope" else remapped(model, method, n, config.train_length),
                                config, n) for n in config.eval_lengths]
    return {"seed": seed, "scores": scores, "cpu_seconds": round(time.process_time() - started, 1)}


def run(config: Config, *, workers: int = 2, device: str = "cpu", progress: bool = False) -> dict[str, Any]:
    """Score the RoPE models of ``config`` with every training-free method at every length."""
    workers = check_int("workers", workers, minimum=1)
    device = check_device(device)
    started = time.perf_counter()
    jobs = [(task, seed) for task in METRICS for seed in config.seeds]
    runs = run_jobs(_job, jobs, config, device=device, workers=workers, progress=progress)
    tasks: dict[str, Any] = {}
    for task, metric in METRICS.items():
        task_runs = [runs[(task, seed)] for seed in config.seeds]
        tasks[task] = {"metric": metric,
                       "methods": {m: spread(metric, [r["scores"][m] for r in task_runs]) for m in METHODS},
                       "runs": task_runs}
    L = config.train_length
    return {
        "experiment": "training_free",
        "config": config.as_dict(),
        "eval_lengths": config.eval_lengths,
        "settings": {m: {str(n): REMAPS[m].settings(n, L) for n in config.eval_lengths} for m in REMAPS},
        "tasks": tasks,
        "versions": versions("tqdm"),
        "device": device,
        "wall_seconds": round(time.perf_counter() - started, 1),
        "workers": workers,
    }


def load_results(path: str | Path = RESULTS_PATH) -> dict[str, Any]:
    """Read a results file (by default the committed one)."""
    return read_json(path)


def summary_lines(results: dict[str, Any]) -> list[str]:
    """Plain-text tables: each task's mean score (min to max over seeds) per method and length."""
    lines = []
    for task, entry in results["tasks"].items():
        metric = entry["metric"]
        lines.append(f"{task} ({metric})".ljust(16) + "".join(f"{'@' + str(n):>20}" for n in results["eval_lengths"]))
        for method, scores in entry["methods"].items():
            lines.append(f"{method:<16}" + spread_cells(scores, metric))
    return lines
