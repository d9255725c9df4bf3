"""Today's hybrid designs, measured: RoPE on some layers, none or a window on others.

The designs of `posenc.designs`, each a four-layer `posenc.model.TinyTransformer`, trained and
scored with the protocol of the language-modelling and retrieval studies (the same text, MQAR
generator, batches, optimiser, seeds and lengths, 1 to 8 times L), next to plain RoPE, no
positions and ALiBi at the same four layers:

* ``rnope-swa``: layers 1-3 RoPE within a sliding window, layer 4 NoPE over everything (Cohere);
* ``irope``: layers 1-3 RoPE within chunks, with q/k norm, layer 4 NoPE with the attention
  temperature (Llama 4's three chunked layers per global one);
* ``rope-sinks``: RoPE everywhere with a learned sink logit per head, windowed and full layers
  alternating (gpt-oss).

The spans at this scale (`spans`): a window of L/4 and a chunk of L/2. Both are shorter than L,
so that every training sequence already holds several windows or chunks and a longer input only
repeats a layout training met (a span of L or more would meet its first chunk edge or its
first key out of the window only past L); L/4 leaves a character-level local layer a few words.

The models are four layers deep, the other studies' two, so they have their own configuration
(`CONFIGS`: each of `posenc.experiments.config.LATER_CONFIGS` with four layers and these
methods) and their own results files, one per task; the two-layer results stay as they are.

Run it with ``python -m posenc.experiments hybrid-lm --config full`` and ``hybrid-retrieval``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch

from posenc._checks import check_choice, check_int
from posenc.designs import DESIGNS, design_plans
from posenc.experiments import length_extrapolation as lm
from posenc.experiments import retrieval
from posenc.experiments._results import (
    read_json,
    run_jobs,
    spread,
    spread_cells,
    versions,
)
from posenc.experiments._training import train_task_model
from posenc.experiments.config import (
    LATER_CONFIGS,
    Config,
    build_model,
    check_device,
    checkpoint_path,
)
from posenc.experiments.data import SOURCE, load_corpus
from posenc.model import TinyTransformer

__all__ = ["CONFIGS", "DESIGNS_STUDIED", "LAYERS", "METHODS", "RESULTS_PATHS", "build_hybrid_model", "describe",
           "load_results", "run", "spans", "study_results", "summary_lines", "task_scores", "train_hybrid_model"]

#: The designs studied, and every row of the study: the plain methods first, at the same depth.
DESIGNS_STUDIED = ("rnope-swa", "irope", "rope-sinks")
METHODS = ("rope", "none", "alibi", *DESIGNS_STUDIED)
#: Layers of every model of this study: enough for Llama 4's three local layers per global one.
LAYERS = 4
#: One configuration per run size: the later studies' own, four layers deep, these methods.
CONFIGS = {name: replace(config, num_layers=LAYERS, methods=METHODS) for name, config in LATER_CONFIGS.items()}
#: The committed results of the full configuration, one file per task.
RESULTS_PATHS = {task: Path(__file__).resolve().parent / "results" / f"hybrid_{task}.json"
                 for task in ("lm", "retrieval")}
#: The metric of each task.
METRICS = {"lm": "perplexity", "retrieval": "accuracy"}


def spans(design: str, train_length: int) -> dict[str, int]:
    """The span of a design's local layers at training length L: ``{"window": L // 4}`` for the
    windowed designs, ``{"chunk": L // 2}`` for iRoPE (the keyword `posenc.designs.design_plans` takes)."""
    design = check_choice("design", design, DESIGNS_STUDIED)
    train_length = check_int("train_length", train_length, minimum=4)
    kind = DESIGNS[design].span
    return {kind: train_length // 4 if kind == "window" else train_length // 2}


def build_hybrid_model(method: str, config: Config, vocab_size: int, seed: int = 0) -> TinyTransformer:
    """The model of one row of `METHODS`, initialised from ``seed``: a design's layer plans on a
    RoPE model, or the plain method of `posenc.experiments.config.build_model`."""
    method = check_choice("method", method, METHODS)
    if method not in DESIGNS_STUDIED:
        return build_model(method, config, vocab_size, seed)
    seed = check_int("seed", seed, minimum=0)
    plans = design_plans(method, config.num_layers, **spans(method, config.train_length))
    torch.manual_seed(seed)
    return TinyTransformer(vocab_size, config.dim, config.num_heads, config.num_layers, position="rope",
                           layer_plans=plans)


def describe(method: str, config: Config) -> list[str]:
    """Each layer of a row's model in words ("rope, window 16", "none, temperature")."""
    if method not in DESIGNS_STUDIED:
        return [check_choice("method", method, METHODS)] * config.num_layers
    words = []
    for plan in design_plans(method, config.num_layers, **spans(method, config.train_length)):
        parts = [plan.position]
        parts += [f"window {plan.window}"] if plan.window else []
        parts += [f"chunk {plan.chunk}"] if plan.chunk else []
        parts += ["q/k norm"] if plan.qk_norm else []
        parts += ["temperature"] if plan.temperature is not None else []
        parts += ["sinks"] if plan.sinks else []
        words.append(", ".join(parts))
    return words


def _cache_name(method: str, config: Config) -> str:
    """The name a row's model is cached under (a design's span is part of it)."""
    if method not in DESIGNS_STUDIED:
        return method
    return method + "".join(f"-{kind}{size}" for kind, size in spans(method, config.train_length).items())


def train_hybrid_model(task: str, method: str, config: Config, seed: int = 0, *, device: str = "cpu",
                       progress: bool = False, bar_position: int = 0) -> tuple[TinyTransformer, dict[str, Any]]:
    """Train (or load from the cache) the model of one task, row and seed, as the other studies train theirs."""
    task = check_choice("task", task, tuple(METRICS))
    model, stats = train_task_model(task, lambda vocab_size: build_hybrid_model(method, config, vocab_size, seed),
                                    config, seed, name=_cache_name(method, config), label=f"{task} {method} seed {seed}",
                                    device=check_device(device), progress=progress, bar_position=bar_position)
    assert isinstance(model, TinyTransformer)
    return model, stats


def _job(label: str, seed: int, config: Config, device: str, progress: bool, position: int) -> dict[str, Any]:
    task, method = label.split(":")
    cached = checkpoint_path(task, _cache_name(method, config), seed, config, device).is_file()
    model, stats = train_hybrid_model(task, method, config, seed, device=device, progress=progress,
                                      bar_position=position)
    started = time.process_time()
    scores = task_scores(task, model, config)
    return {"seed": seed, **scores, **stats, "eval_cpu_seconds": round(time.process_time() - started, 1),
            "from_cache": cached}


def task_scores(task: str, model: TinyTransformer, config: Config) -> dict[str, Any]:
    """The scores of a trained model of the four-layer studies (this one and `posenc.experiments.inside`):
    perplexity at every length and the loss by position at 8L (``"lm"``), or MQAR accuracy at every
    length and by distance at 8L (``"retrieval"``)."""
    scores: dict[str, Any] = {}
    if task == "lm":
        text = lm.evaluation_text(load_corpus(config.validation_fraction), config)
        losses = [lm.evaluate(model, text, n) for n in config.eval_lengths]
        scores["perplexity"] = [round(math.exp(float(loss.double().mean())), 4) for loss in losses]
        by_position = losses[-1].double().mean(0)  # [8L]: the loss at each position of the longest windows
        scores["position_loss"] = [round(float(v), 4) for v in by_position.view(-1, config.position_bucket).mean(1)]
    else:
        scores["accuracy"] = retrieval.evaluate_model(model, config, None)
        scores["accuracy_by_block"] = retrieval.distance_accuracy(model, config, max(config.eval_lengths))
    return scores


def run(config: Config, *, task: str = "lm", workers: int = 2, device: str = "cpu",
        progress: bool = False) -> dict[str, Any]:
    """Train and score every row of `METHODS` and seed of ``config`` on ``task`` (``"lm"`` or ``"retrieval"``)."""
    task = check_choice("task", task, tuple(METRICS))
    workers = check_int("workers", workers, minimum=1)
    device = check_device(device)
    if config.num_layers < LAYERS:
        raise ValueError(f"config must have at least {LAYERS} layers (use hybrid.CONFIGS), got {config.num_layers}")
    started = time.perf_counter()
    jobs = [(f"{task}:{method}", seed) for method in config.methods for seed in config.seeds]
    runs = run_jobs(_job, jobs, config, device=device, workers=workers, progress=progress)
    spans_used = {design: spans(design, config.train_length) for design in DESIGNS_STUDIED}
    return study_results("hybrid", task, config, runs, build=build_hybrid_model, describe=describe,
                         header={"spans": spans_used}, device=device, workers=workers, started=started)


def study_results(study: str, task: str, config: Config, runs: dict[tuple[str, int], dict[str, Any]], *,
                  build: Callable[[str, Config, int], TinyTransformer], device: str, workers: int, started: float,
                  header: dict[str, Any] | None = None, describe: Callable[[str, Config], list[str]] | None = None,
                  after: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> dict[str, Any]:
    """The results of a four-layer study (this one and `posenc.experiments.inside`), in the files' key order.

    The task header (``experiment`` is ``{study}_{task}``; ``task``, ``config``, ``eval_lengths``,
    then ``header``'s keys), the corpus (``"lm"``) or chance and test seed (``"retrieval"``), then
    ``after(methods)``'s keys, then per method of ``config.methods``: its layers (where ``describe``
    is given), its parameter count (``build(method, config, vocab_size)``), the mean, min and max of
    the task's metric over seeds and the ``runs`` (keyed ``("{task}:{method}", seed)``); last, the
    run's record: versions, ``device``, wall seconds since ``started`` (``time.perf_counter``), ``workers``.
    """
    metric = METRICS[task]
    corpus = load_corpus(config.validation_fraction) if task == "lm" else None  # MQAR needs no text
    vocab = corpus.vocab_size if corpus is not None else retrieval.vocab_size(config.retrieval_symbols)
    methods: dict[str, Any] = {}
    for method in config.methods:
        method_runs = [runs[(f"{task}:{method}", seed)] for seed in config.seeds]
        methods[method] = {
            **({"layers": describe(method, config)} if describe is not None else {}),
            "parameters": sum(p.numel() for p in build(method, config, vocab).parameters()),
            **spread(metric, [r[metric] for r in method_runs]),
            "runs": method_runs,
        }
    results: dict[str, Any] = {
        "experiment": f"{study}_{task}",
        "task": "language modelling" if task == "lm" else "multi-query associative recall",
        "config": config.as_dict(),
        "eval_lengths": config.eval_lengths,
        **(header or {}),
    }
    if corpus is not None:
        results["corpus"] = {"source": SOURCE, "evaluated_characters": lm.evaluation_text(corpus, config).numel() - 1}
    else:
        results["chance"] = round(1 / config.retrieval_symbols, 4)
        results["test_seed"] = retrieval.TEST_SEED
    results.update(after(methods) if after is not None else {})
    return {**results, "methods": methods, "versions": versions("tqdm"), "device": device,
            "wall_seconds": round(time.perf_counter() - started, 1), "workers": workers}


def load_results(task: str = "lm", path: str | Path | None = None) -> dict[str, Any]:
    """Read a task's results file (by default the committed one)."""
    task = check_choice("task", task, tuple(METRICS))
    return read_json(RESULTS_PATHS[task] if path is None else path)


def summary_lines(results: dict[str, Any]) -> list[str]:
    """A plain-text table: mean score (min to max over seeds) per row and length."""
    metric, short = ("perplexity", "ppl") if results["experiment"] == "hybrid_lm" else ("accuracy", "acc")
    lines = [f"{'method':<12}" + "".join(f"{short + '@' + str(n):>20}" for n in results["eval_lengths"])]
    for method, entry in results["methods"].items():
        lines.append(f"{method:<12}" + spread_cells(entry, metric))
    return lines
