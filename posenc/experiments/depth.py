"""Depth: does a method lose the facts in the middle? MQAR by where the pairs sit, and by length. Measured.

The needle-in-a-haystack and RULER tests put a fact at a chosen depth of a long context and ask
for it at the end. Here the MQAR models of the retrieval study (the same configuration and seeds,
reused from the model cache) get test sequences of 1, 2, 4 and 8 times their training length L
whose queries all fall in the last ``depth_query_span`` tokens and whose block of key-value
pairs starts at a chosen depth of the room before them (`retrieval.mqar_batch` with ``depth``):
0 at the very start (the farthest, at the positions the models were trained with), 0.5 in the
middle, 1 right before the queries (as near as in training, at positions far past L). So the
start measures distance, the end measures position, and the middle both.

Every row of `ROWS` is scored: each trained method, the RoPE model with each training-free
method of `posenc.experiments._remapped.REMAPS`, and the four-layer models of the hybrid study
(`posenc.experiments.hybrid`: today's designs, and RoPE, NoPE and ALiBi at the same depth; run
``hybrid-retrieval`` first to reuse them). A new design is one row: the name of the model to load
and, optionally, a method to apply to it.

Run it with ``python -m posenc.experiments depth --config full``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from posenc._checks import check_float, check_int
from posenc.experiments import hybrid, retrieval
from posenc.experiments._remapped import REMAPS, remapped
from posenc.experiments._results import read_json, run_jobs, spread, spread_cells, versions
from posenc.experiments.base_context import query_distances
from posenc.experiments.config import LATER_CONFIGS as CONFIGS
from posenc.experiments.config import SETTINGS, STUDIED_METHODS, Config, check_device, max_length
from posenc.model import TinyTransformer

__all__ = ["CONFIGS", "RESULTS_PATH", "ROWS", "depth_label", "load_results", "run", "summary_lines", "test_set"]

#: The committed results of the full configuration.
RESULTS_PATH = Path(__file__).resolve().parent / "results" / "depth.json"
#: The seed of the depth test sequences (offset by length and depth; the same for every row and seed).
TEST_SEED = 31337

#: Each row: the MQAR model to load (a method of the retrieval study, or ``hybrid:`` and a row of
#: the four-layer hybrid study) and the training-free method applied to it (None: as trained).
ROWS: dict[str, tuple[str, str | None]] = {
    **{method: (method, None) for method in STUDIED_METHODS},
    **{f"rope + {remap}": ("rope", remap) for remap in REMAPS},
    **{f"{method} (4 layers)": (f"hybrid:{method}", None) for method in hybrid.METHODS},
}


def _model(name: str, config: Config, seed: int, device: str, progress: bool,
           position: int) -> tuple[TinyTransformer, int | None]:
    """A row's trained model, and the longest input it accepts (None: any)."""
    if name.startswith("hybrid:"):
        method, deeper = name.removeprefix("hybrid:"), hybrid.CONFIGS[config.name]
        model, _ = hybrid.train_hybrid_model("retrieval", method, deeper, seed, device=device, progress=progress,
                                             bar_position=position)
        return model, None
    model, _ = retrieval.train_retrieval_model(name, config, seed, device=device, progress=progress,
                                               bar_position=position)
    return model, max_length(name, config)


def _rows(config: Config) -> list[str]:
    """The rows a configuration scores: those whose model its study (or the hybrid study) trains."""
    deeper = hybrid.CONFIGS[config.name].methods
    return [row for row, (name, _) in ROWS.items()
            if (name.removeprefix("hybrid:") in deeper if name.startswith("hybrid:") else name in config.methods)]


def depth_label(depth: float) -> str:
    """``"start"``, ``"middle"`` and ``"end"`` for 0, 0.5 and 1; else the depth in percent."""
    depth = check_float("depth", depth, minimum=0.0, maximum=1.0)
    return {0.0: "start", 0.5: "middle", 1.0: "end"}.get(depth, f"{depth:.0%}")


def test_set(config: Config, length: int, depth: float) -> tuple[Tensor, Tensor]:
    """The test sequences of one length and depth, seeded by `TEST_SEED`, the length and the depth."""
    settings = SETTINGS[config.name]
    length = check_int("length", length, minimum=1)
    generator = torch.Generator().manual_seed(TEST_SEED + 1000 * length + round(1000 * depth))
    return retrieval.mqar_batch(settings.depth_eval_sequences, length, pairs=config.retrieval_pairs,
                                queries=config.retrieval_queries, symbols=config.retrieval_symbols,
                                generator=generator, depth=depth, query_span=settings.depth_query_span)


def _job(row: str, seed: int, config: Config, device: str, progress: bool, position: int) -> dict[str, Any]:
    name, remap = ROWS[row]
    model, limit = _model(name, config, seed, device, progress, position)
    started = time.process_time()
    scores: dict[str, list[float | None]] = {}
    for depth in SETTINGS[config.name].depths:
        scores[depth_label(depth)] = []
        for n in config.eval_lengths:
            if limit is not None and n > limit:  # a learned table has no rows past L
                scores[depth_label(depth)].append(None)
                continue
            scorer = model if remap is None else remapped(model, remap, n, config.train_length)
            tokens, targets = test_set(config, n, depth)
            scores[depth_label(depth)].append(round(float(retrieval.accuracy(scorer, tokens, targets).double().mean()), 4))
    return {"seed": seed, "accuracy": scores, "cpu_seconds": round(time.process_time() - started, 1)}


def run(config: Config, *, workers: int = 2, device: str = "cpu", progress: bool = False) -> dict[str, Any]:
    """Score every row of `ROWS` and seed of ``config`` at every depth and length."""
    workers = check_int("workers", workers, minimum=1)
    device = check_device(device)
    settings = SETTINGS[config.name]
    started = time.perf_counter()
    rows = _rows(config)
    runs = run_jobs(_job, [(row, seed) for row in rows for seed in config.seeds], config, device=device,
                    workers=workers, progress=progress)
    labels = [depth_label(d) for d in settings.depths]
    distances = {}  # mean distance from a query to its key, per depth and length (the same for every row)
    for depth, label in zip(settings.depths, labels):
        distances[label] = [round(float(query_distances(*test_set(config, n, depth)).double().mean()), 1)
                            for n in config.eval_lengths]
    results_rows = {}
    for row in rows:
        row_runs = [runs[(row, seed)] for seed in config.seeds]
        name = ROWS[row][0]
        layers = hybrid.CONFIGS[config.name].num_layers if name.startswith("hybrid:") else config.num_layers
        results_rows[row] = {"model": name, "remap": ROWS[row][1], "layers": layers,
                             "accuracy": {label: spread("accuracy", [r["accuracy"][label] for r in row_runs])
                                          for label in labels},
                             "runs": row_runs}
    return {
        "experiment": "depth",
        "task": "multi-query associative recall, pairs at a depth, queries at the end",
        "config": config.as_dict(),
        "settings": settings.as_dict(),
        "eval_lengths": config.eval_lengths,
        "depths": {label: depth for label, depth in zip(labels, settings.depths)},
        "mean_distance": distances,
        "chance": round(1 / config.retrieval_symbols, 4),
        "test_seed": TEST_SEED,
        "rows": results_rows,
        "versions": versions("tqdm"),
        "device": device,
        "wall_seconds": round(time.perf_counter() - started, 1),
        "workers": workers,
    }


def load_results(path: str | Path = RESULTS_PATH) -> dict[str, Any]:
    """Read a results file (by default the committed one)."""
    return read_json(path)


def summary_lines(results: dict[str, Any]) -> list[str]:
    """Plain-text tables: per depth, mean accuracy (min to max over seeds) per row and length."""
    lines = []
    for label in results["depths"]:
        lines.append(f"pairs at the {label}".ljust(24) + "".join(f"{'acc@' + str(n):>20}" for n in results["eval_lengths"]))
        for row, entry in results["rows"].items():
            lines.append(f"{row:<24}" + spread_cells(entry["accuracy"][label], "accuracy"))
    return lines
