"""Position inside attention, measured: FoX, FoX with RoPE, stick-breaking, PaTH and PoPE.

The five methods of the chapter "Position inside attention" (`posenc.methods`: ``fox``,
``fox_rope``, ``stick_breaking``, ``path``, ``pope``), each a four-layer
`posenc.model.TinyTransformer`, trained and scored with the protocol of the hybrid study
(`posenc.experiments.hybrid`): the same configuration field for field (`CONFIGS`: the hybrid
study's, these methods), the same text, MQAR generator, batches, optimiser, seeds and lengths
(1 to 8 times L). So their rows stand beside the committed rows of RoPE, NoPE, ALiBi and the
hybrid designs in ``hybrid_lm.json`` and ``hybrid_retrieval.json``; `baseline` reads those files
and refuses a configuration that differs from theirs in any field but the methods.

The MQAR models are also scored by where the facts sit, as the depth study scores the hybrid
models (`posenc.experiments.depth`: the same test sequences and settings), and the results file
keeps those scores in the depth study's layout (``rows``), beside the committed ``depth.json``.

Run it with ``python -m posenc.experiments inside-lm --config full`` and ``inside-retrieval``.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch

from posenc._checks import check_choice, check_int
from posenc.experiments import depth, hybrid, retrieval
from posenc.experiments._results import (
    large_path,
    read_json,
    run_jobs,
    spread,
    spread_cells,
    versions,
)
from posenc.experiments._training import train_task_model
from posenc.experiments.base_context import query_distances
from posenc.experiments.config import SETTINGS, Config, check_device, checkpoint_path
from posenc.model import TinyTransformer

__all__ = ["CONFIGS", "METHODS", "RESULTS_PATHS", "baseline", "build_inside_model", "inside_table", "load_results",
           "run", "summary_lines", "train_inside_model"]

#: The rows of the study: the position methods of the chapter, as `posenc.model` names them.
METHODS = ("fox", "fox_rope", "stick_breaking", "path", "pope")
#: One configuration per run size: the hybrid study's own (four layers), with these methods.
CONFIGS = {name: replace(config, methods=METHODS) for name, config in hybrid.CONFIGS.items()}
RESULTS = Path(__file__).resolve().parent / "results"
#: The committed results of the full configuration, one file per task.
RESULTS_PATHS = {task: RESULTS / f"inside_{task}.json" for task in ("lm", "retrieval")}
#: The metric of each task.
METRICS = {"lm": "perplexity", "retrieval": "accuracy"}
#: PaTH's jobs go first (its training step loops over the distances between blocks of keys), so
#: that the last job to finish is a short one.
SLOW_FIRST = ("path",)


def baseline(task: str, config: Config, path: str | Path | None = None) -> dict[str, Any] | None:
    """How the rows of ``config`` compare with the committed hybrid results of ``task``.

    Returns the file's name, the configuration fields found equal (every field but ``methods``)
    and whether the library versions match; None when the file holds another configuration
    (``tiny``: nothing to stand beside). A ``ValueError`` names the fields that differ."""
    task = check_choice("task", task, tuple(METRICS))
    default = hybrid.RESULTS_PATHS[task]
    default = large_path(default) if config.name == "large" else default
    if path is None and not default.is_file():
        return None
    committed = read_json(default if path is None else path)
    theirs, ours = committed["config"], config.as_dict()
    if theirs["name"] != ours["name"]:
        return None
    fields = [name for name in ours if name != "methods"]
    differ = [name for name in fields if ours[name] != theirs.get(name)]
    if differ:
        raise ValueError(f"config {config.name!r} differs from the committed hybrid_{task} results in "
                         f"{differ}: its rows could not stand beside them")
    return {"file": Path(default if path is None else path).name, "fields_equal": fields,
            "versions_match": committed["versions"] == versions("tqdm")}


def _depth_baseline(config: Config) -> dict[str, Any] | None:
    """The same for the depth scores and the committed ``depth.json`` (its settings, its test sets)."""
    committed = depth.load_results()
    if committed["config"]["name"] != config.name:
        return None
    test_fields = ("train_length", "eval_multiples", "retrieval_pairs", "retrieval_queries", "retrieval_symbols")
    differ = [name for name in test_fields if committed["config"][name] != config.as_dict()[name]]
    if committed["settings"] != SETTINGS[config.name].as_dict() or differ:
        raise ValueError(f"the depth settings of {config.name!r} differ from the committed depth.json "
                         f"({differ or 'settings'})")
    return {"file": depth.RESULTS_PATH.name, "settings_equal": True, "fields_equal": list(test_fields),
            "test_seed": depth.TEST_SEED}


def build_inside_model(method: str, config: Config, vocab_size: int, seed: int = 0) -> TinyTransformer:
    """The model of one row of `METHODS`, initialised from ``seed`` as `posenc.experiments.config.build_model`
    initialises the other studies' models (the seed, then the model)."""
    method = check_choice("method", method, METHODS)
    seed = check_int("seed", seed, minimum=0)
    torch.manual_seed(seed)
    return TinyTransformer(vocab_size, config.dim, config.num_heads, config.num_layers, position=method)


def train_inside_model(task: str, method: str, config: Config, seed: int = 0, *, device: str = "cpu",
                       progress: bool = False, bar_position: int = 0) -> tuple[TinyTransformer, dict[str, Any]]:
    """Train (or load from the cache) the model of one task, row and seed, as the hybrid study trains its own."""
    task = check_choice("task", task, tuple(METRICS))
    model, stats = train_task_model(task, lambda vocab_size: build_inside_model(method, config, vocab_size, seed),
                                    config, seed, name=method, label=f"{task} {method} seed {seed}",
                                    device=check_device(device), progress=progress, bar_position=bar_position)
    assert isinstance(model, TinyTransformer)
    return model, stats


def _depth_scores(model: TinyTransformer, config: Config) -> dict[str, list[float]]:
    """MQAR accuracy with the pairs at each depth of the depth study, at every length."""
    scores: dict[str, list[float]] = {}
    for where in SETTINGS[config.name].depths:
        tests = [depth.test_set(config, n, where) for n in config.eval_lengths]
        scores[depth.depth_label(where)] = [round(float(retrieval.accuracy(model, *test).double().mean()), 4)
                                            for test in tests]
    return scores


def _job(label: str, seed: int, config: Config, device: str, progress: bool, position: int) -> dict[str, Any]:
    task, method = label.split(":")
    cached = checkpoint_path(task, method, seed, config, device).is_file()
    model, stats = train_inside_model(task, method, config, seed, device=device, progress=progress,
                                      bar_position=position)
    started = time.process_time()
    scores = hybrid.task_scores(task, model, config)
    if task != "lm":
        scores["depth_accuracy"] = _depth_scores(model, config)
    return {"seed": seed, **scores, **stats, "eval_cpu_seconds": round(time.process_time() - started, 1),
            "from_cache": cached}


def _depth_rows(config: Config, methods: dict[str, Any]) -> dict[str, Any]:
    """The depth scores in the depth study's layout: ``depths``, ``mean_distance`` and ``rows``."""
    labels = {depth.depth_label(where): where for where in SETTINGS[config.name].depths}
    distances = {label: [round(float(query_distances(*depth.test_set(config, n, where)).double().mean()), 1)
                         for n in config.eval_lengths] for label, where in labels.items()}
    rows = {}
    for method, entry in methods.items():
        runs = [{"seed": run["seed"], "accuracy": run["depth_accuracy"]} for run in entry["runs"]]
        rows[method] = {"model": method, "remap": None, "layers": config.num_layers,
                        "accuracy": {label: spread("accuracy", [run["accuracy"][label] for run in runs])
                                     for label in labels},
                        "runs": runs}
    return {"settings": SETTINGS[config.name].as_dict(), "depths": labels, "mean_distance": distances,
            "depth_test_seed": depth.TEST_SEED, "rows": rows}


def _ordered_jobs(task: str, config: Config) -> list[tuple[str, int]]:
    slow = [m for m in config.methods if m in SLOW_FIRST]
    return [(f"{task}:{method}", seed) for method in slow + [m for m in config.methods if m not in slow]
            for seed in config.seeds]


def run(config: Config, *, task: str = "lm", workers: int = 2, device: str = "cpu",
        progress: bool = False) -> dict[str, Any]:
    """Train and score every row of `METHODS` and seed of ``config`` on ``task`` (``"lm"`` or ``"retrieval"``)."""
    task = check_choice("task", task, tuple(METRICS))
    workers = check_int("workers", workers, minimum=1)
    device = check_device(device)
    unknown = [m for m in config.methods if m not in METHODS]
    if unknown:
        raise ValueError(f"config.methods must be among {METHODS}, got {unknown} (use inside.CONFIGS)")
    beside = baseline(task, config)  # refuses a configuration the committed rows were not made with
    depth_beside = _depth_baseline(config) if task == "retrieval" else None  # the same, before any training
    started = time.perf_counter()
    runs = run_jobs(_job, _ordered_jobs(task, config), config, device=device, workers=workers, progress=progress)
    by_depth = (lambda methods: {**_depth_rows(config, methods), "depth_baseline": depth_beside}) \
        if task == "retrieval" else None
    results = hybrid.study_results("inside", task, config, runs, build=build_inside_model, header={"baseline": beside},
                                   after=by_depth, device=device, workers=workers, started=started)
    cpu = sum(r["train_cpu_seconds"] + r["eval_cpu_seconds"] for r in runs.values())
    return {**results, "job_cpu_seconds": round(cpu, 1)}


def load_results(task: str = "lm", path: str | Path | None = None) -> dict[str, Any]:
    """Read a task's results file (by default the committed one)."""
    task = check_choice("task", task, tuple(METRICS))
    return read_json(RESULTS_PATHS[task] if path is None else path)


#: The hybrid study's rows shown beside the five (same protocol, `baseline` checks it).
REFERENCE_ROWS = ("rope", "none", "alibi", "rnope-swa")


def _cell(entry: dict[str, Any], metric: str, index: int) -> str:
    mean, low, high = (entry[key][index] for key in (metric, f"{metric}_min", f"{metric}_max"))
    return f"{mean:.2f} ({low:.2f}–{high:.2f})"


def inside_table() -> tuple[list[str], list[list[str]]]:
    """The five methods under the rows of RoPE, NoPE, ALiBi and RNoPE-SWA of the hybrid study (four
    layers each, one protocol): perplexity and MQAR accuracy at L and 8L, mean over seeds (min–max),
    and the CPU seconds of training one language model (the page's ``[[table]]``)."""
    text = {**{m: hybrid.load_results("lm")["methods"][m] for m in REFERENCE_ROWS}, **load_results("lm")["methods"]}
    recall = {**{m: hybrid.load_results("retrieval")["methods"][m] for m in REFERENCE_ROWS},
              **load_results("retrieval")["methods"]}
    lengths = load_results("lm")["eval_lengths"]
    header = ["method", f"ppl@{lengths[0]}", f"ppl@{lengths[-1]}", f"recall@{lengths[0]}", f"recall@{lengths[-1]}",
              "train s"]
    rows = []
    for method, entry in text.items():
        seconds = [run["train_cpu_seconds"] for run in entry["runs"]]
        rows.append([method, _cell(entry, "perplexity", 0), _cell(entry, "perplexity", -1),
                     _cell(recall[method], "accuracy", 0), _cell(recall[method], "accuracy", -1),
                     f"{sum(seconds) / len(seconds):.0f}"])
    return header, rows


def summary_lines(results: dict[str, Any]) -> list[str]:
    """A plain-text table: mean score (min to max over seeds) per row and length, then the depths."""
    metric, short = ("perplexity", "ppl") if results["experiment"] == "inside_lm" else ("accuracy", "acc")
    lines = [f"{'method':<16}" + "".join(f"{short + '@' + str(n):>20}" for n in results["eval_lengths"])]
    for method, entry in results["methods"].items():
        lines.append(f"{method:<16}" + spread_cells(entry, metric))
    for label in results.get("depths", {}):
        header = "".join(f"{'acc@' + str(n):>20}" for n in results["eval_lengths"])
        lines.append(f"pairs at the {label}".ljust(16) + header)
        for method, entry in results["rows"].items():
            lines.append(f"{method:<16}" + spread_cells(entry["accuracy"][label], "accuracy"))
    return lines
