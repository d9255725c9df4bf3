"""Context extension applied: RoPE scaling rules on the trained models, without and with a fine-tune.

The RoPE models of the language-modelling and retrieval studies (the same configuration and
seeds; reused from the model cache when those studies ran first) are scored at 2, 4 and 8 times
their training length L with each scaling rule posenc implements:

* **No training.** Each static rule (``linear`` = position interpolation, ``ntk``, ``yarn`` with
  its attention factor, ``llama3``) gets the factor matched to the length, s = l / L. ``dynamic``
  computes its own factor from the sequence length (factor 1: s = l / L). ``none`` is plain RoPE.
* **Short fine-tune.** A copy of each model is fine-tuned at 2L for ``finetune_steps`` steps (a
  few percent of pre-training, as Chen et al. 2023 and Peng et al. 2023 do) with the rule and
  s = 2, then scored at 2L, 4L and 8L with that same s = 2. ``none`` fine-tunes plain RoPE at 2L,
  the baseline the position-interpolation paper compares with. ``dynamic`` is an inference-time
  rule, so it is not fine-tuned.

``longrope`` is not applied: its per-frequency factors come from a search run for each model
(Ding et al., 2024), which this study does not run; any factors we made up would not be LongRoPE.

Run it with ``python -m posenc.experiments extension --config full``.
"""

from __future__ import annotations

import copy
import math
import time
from pathlib import Path
from typing import Any

from torch import nn

from posenc._checks import check_int
from posenc.experiments import length_extrapolation as lm
from posenc.experiments import retrieval
from posenc.experiments._results import (
    read_json,
    run_jobs,
    spread,
    versions,
)
from posenc.experiments._training import fit
from posenc.experiments.config import CONFIGS, Config, check_device
from posenc.experiments.data import load_corpus
from posenc.model import TinyTransformer
from posenc.rope import RotaryEmbedding

__all__ = ["CONFIGS", "FINE_TUNED_RULES", "NO_TRAINING_RULES", "RESULTS_PATH", "load_results", "run", "scaling", "score",
           "summary_lines", "trained_rope"]

#: The committed results of the full configuration.
RESULTS_PATH = Path(__file__).resolve().parent / "results" / "context_extension.json"
#: The rules scored without training, and those scored after the short fine-tune.
NO_TRAINING_RULES = ("none", "linear", "ntk", "dynamic", "yarn", "llama3")
FINE_TUNED_RULES = ("none", "linear", "ntk", "yarn", "llama3")
#: The tasks, and the score each reports.
METRICS = {"lm": "perplexity", "retrieval": "accuracy"}


def scaling(rule: str, factor: float, train_length: int) -> dict[str, Any] | None:
    """The ``scaling`` dict of `posenc.rope.RotaryEmbedding` for one rule and factor s."""
    original = {"original_max_position_embeddings": train_length}
    rules: dict[str, dict[str, Any] | None] = {
        "none": None,
        "linear": {"type": "linear", "factor": factor},
        "ntk": {"type": "ntk", "factor": factor},
        "dynamic": {"type": "dynamic", "factor": 1.0, **original},
        "yarn": {"type": "yarn", "factor": factor, **original},  # beta_fast 32, beta_slow 1, 0.1 ln s + 1
        "llama3": {"type": "llama3", "factor": factor, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                   **original},
    }
    if rule not in rules:
        raise ValueError(f"rule must be one of {', '.join(map(repr, rules))}, got {rule!r}")
    return rules[rule]


def with_rule(model: TinyTransformer, rule: str, factor: float, train_length: int) -> TinyTransformer:
    """``model`` (changed in place) with its rotary embedding replaced by the rule's."""
    assert model.rotary is not None
    model.rotary = RotaryEmbedding(model.rotary.dim, scaling=scaling(rule, factor, train_length))
    return model


def score(task: str, model: nn.Module, config: Config, length: int) -> float:
    """One model's score at one length: perplexity on the text (``lm``), accuracy on MQAR (``retrieval``)."""
    if task == "lm":
        text = lm.evaluation_text(load_corpus(config.validation_fraction), config)
        return round(math.exp(float(lm.evaluate(model, text, length).double().mean())), 4)
    tokens, targets = retrieval.test_set(config, length)
    return round(float(retrieval.accuracy(model, tokens, targets).double().mean()), 4)


def trained_rope(task: str, config: Config, seed: int, device: str, progress: bool = False,
                 position: int = 0) -> tuple[TinyTransformer, dict[str, Any]]:
    """The RoPE model of one task and seed (from the model cache when the study ran before)."""
    if task == "lm":
        return lm.train_model("rope", config, seed, device=device, progress=progress, bar_position=position)
    return retrieval.train_retrieval_model("rope", config, seed, device=device, progress=progress,
                                           bar_position=position)


def _fine_tune(task: str, model: TinyTransformer, config: Config, seed: int, device: str, *, label: str,
               progress: bool, bar_position: int) -> dict[str, Any]:
    length = config.finetune_multiple * config.train_length
    if task == "lm":
        batches = lm.training_batches(load_corpus(config.validation_fraction).train, config, seed + 1000, length)
    else:
        batches = retrieval.training_batches(config, seed + 1000, length)
    return fit(model, batches, config, steps=config.finetune_steps, peak_learning_rate=config.finetune_learning_rate,
               warmup_steps=max(1, config.finetune_steps // 10), device=device, label=label, progress=progress,
               bar_position=bar_position)


def _job(task: str, seed: int, config: Config, device: str, progress: bool, position: int) -> dict[str, Any]:
    model, _ = trained_rope(task, config, seed, device, progress, position)
    lengths = config.eval_lengths[1:]
    started = time.process_time()
    at_train_length = score(task, model, config, config.train_length)
    no_training = {rule: [score(task, with_rule(model, rule, length / config.train_length, config.train_length),
                                 config, length) for length in lengths] for rule in NO_TRAINING_RULES}
    fine_tuned, fine_tune_seconds = {}, 0.0
    factor = float(config.finetune_multiple)
    for rule in FINE_TUNED_RULES:
        tuned = with_rule(copy.deepcopy(model), rule, factor, config.train_length)
        label = f"{task} {rule} seed {seed}"
        fine_tune_seconds += _fine_tune(task, tuned, config, seed, device, label=label, progress=progress,
                                        bar_position=position)["train_cpu_seconds"]
        fine_tuned[rule] = [score(task, tuned, config, length) for length in lengths]
        fine_tuned[rule + "@L"] = [score(task, tuned, config, config.train_length)]
    return {"seed": seed, "at_train_length": at_train_length, "no_training": no_training, "fine_tuned": fine_tuned,
            "fine_tune_cpu_seconds": round(fine_tune_seconds, 1),
            "cpu_seconds": round(time.process_time() - started, 1)}


def run(config: Config, *, workers: int = 2, device: str = "cpu", progress: bool = False) -> dict[str, Any]:
    """Score the RoPE models of ``config`` with every rule, without and with the fine-tune."""
    workers = check_int("workers", workers, minimum=1)
    device = check_device(device)
    started = time.perf_counter()
    jobs = [(task, seed) for task in METRICS for seed in config.seeds]
    runs = run_jobs(_job, jobs, config, device=device, workers=workers, progress=progress)
    tasks: dict[str, Any] = {}
    for task, metric in METRICS.items():
        task_runs = [runs[(task, seed)] for seed in config.seeds]
        tasks[task] = {
            "metric": metric,
            "at_train_length": spread(metric, [[r["at_train_length"]] for r in task_runs]),
            "no_training": {rule: spread(metric, [r["no_training"][rule] for r in task_runs])
                            for rule in NO_TRAINING_RULES},
            "fine_tuned": {rule: spread(metric, [r["fine_tuned"][rule] for r in task_runs])
                           for rule in FINE_TUNED_RULES},
            "fine_tuned_at_train_length": {rule: spread(metric, [r["fine_tuned"][rule + "@L"] for r in task_runs])
                                           for rule in FINE_TUNED_RULES},
            "runs": task_runs,
        }
    return {
        "experiment": "context_extension",
        "config": config.as_dict(),
        "eval_lengths": config.eval_lengths[1:],
        "fine_tune_length": config.finetune_multiple * config.train_length,
        "no_training_factor": "s = l / L, the scored length over the training length",
        "scalings_fine_tuned": {rule: scaling(rule, float(config.finetune_multiple), config.train_length)
                                for rule in FINE_TUNED_RULES},
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
    """Plain-text tables: each task's score per rule and length, without and with the fine-tune."""
    lines = []
    for task, entry in results["tasks"].items():
        metric = entry["metric"]
        lines.append(f"{task} ({metric})" + "".join(f"{'@' + str(n):>10}" for n in results["eval_lengths"]))
        for setting in ("no_training", "fine_tuned"):
            for rule, scores in entry[setting].items():
                label = f"{setting.replace('_', ' ')}: {rule}"
                lines.append(f"{label:<24}" + "".join(f"{v:>10.3f}" for v in scores[metric]))
    return lines
