"""The base against the context: RoPE models trained at L with bases from small to large. Measured.

Xu et al. (2024, "Base of RoPE Bounds Context Length", arXiv 2405.14591) derive a lower bound of
RoPE's base for a context of L tokens (`posenc.rope_base.rope_base_lower_bound`) and report that
a model trained below it keeps a low perplexity while it fails to retrieve from far back. Here
one language model and one MQAR model per base of `StudySettings.bases` and per seed are trained
exactly as the RoPE models of the other studies (same data, batches, optimiser; only the base
differs; base 10000 *is* their RoPE model, taken from the model cache). Each is scored:

* on MQAR at L, query by query, by the distance from the query to its key (buckets of
  ``distance_bucket`` tokens, ``base_eval_sequences`` test sequences), to see at which distance
  retrieval breaks; and on the retrieval study's test sequences at L, 2L, 4L and 8L;
* on the text, by perplexity at L, 2L, 4L and 8L, as in the language-modelling study;

next to what posenc computes for the head width and L: the paper's bound, and for each base the
longest context over which its B(m) stays non-negative (`posenc.rope_base.rope_base_context_length`).

Run it with ``python -m posenc.experiments rope-base --config full``.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from posenc._checks import check_choice, check_float, check_int
from posenc.experiments import length_extrapolation as lm
from posenc.experiments import retrieval
from posenc.experiments._results import read_json, run_jobs, spread, versions
from posenc.experiments._training import IGNORE, train_task_model
from posenc.experiments.config import LATER_CONFIGS as CONFIGS
from posenc.experiments.config import SETTINGS, Config, build_model, check_device, checkpoint_path
from posenc.experiments.data import load_corpus
from posenc.model import TinyTransformer
from posenc.rope_base import rope_base_context_length, rope_base_lower_bound

__all__ = ["CONFIGS", "RESULTS_PATH", "base_key", "build_base_model", "load_results", "query_distances", "run",
           "summary_lines", "train_base_model"]

#: The committed results of the full configuration.
RESULTS_PATH = Path(__file__).resolve().parent / "results" / "base_context.json"
#: The seed of the MQAR test sequences at L (the same for every base and model seed).
TEST_SEED = 20240523
#: The base of the other studies' RoPE models.
DEFAULT_BASE = 10000.0
#: The grid step of the bound's search (`rope_base_lower_bound`).
BOUND_STEP = 1e-3
#: The tasks: the task name of the model cache, and the score reported.
TASKS = {"lm": "perplexity", "retrieval": "accuracy"}


def model_name(base: float) -> str:
    """The method name a base's models are cached under: ``"rope"`` for the default base."""
    return "rope" if float(base) == DEFAULT_BASE else f"rope-base{float(base):g}"


def base_key(base: float) -> str:
    """How a base is named in the results: ``"500"``, ``"1000000"`` (digits only, so that the
    claims of `posenc.experiments.claims` can name it: ``base.recall.1000000@L``)."""
    base = check_float("base", base, minimum=1.0)
    return f"{base:.0f}" if base.is_integer() else f"{base:g}".replace("+", "")


def build_base_model(base: float, config: Config, vocab_size: int, seed: int = 0) -> TinyTransformer:
    """A RoPE model with ``base`` in every layer, initialised from ``seed`` (the studies' RoPE
    model for the default base; the base changes no weight, so both draw the same ones)."""
    base = check_float("base", base, minimum=1.0)
    if base == DEFAULT_BASE:
        return build_model("rope", config, vocab_size, seed)
    seed = check_int("seed", seed, minimum=0)
    torch.manual_seed(seed)
    return TinyTransformer(vocab_size, config.dim, config.num_heads, config.num_layers, position="rope",
                           layer_rope_bases=[base] * config.num_layers)


def train_base_model(task: str, base: float, config: Config, seed: int = 0, *, device: str = "cpu",
                     progress: bool = False, bar_position: int = 0) -> tuple[TinyTransformer, dict[str, Any]]:
    """Train (or load from the cache) the model of one task, base and seed, as the other studies train theirs."""
    task = check_choice("task", task, tuple(TASKS))
    model, stats = train_task_model(task, lambda vocab_size: build_base_model(base, config, vocab_size, seed),
                                    config, seed, name=model_name(base), label=f"{task} base {base:g} seed {seed}",
                                    device=check_device(device), progress=progress, bar_position=bar_position)
    assert isinstance(model, TinyTransformer)
    return model, stats


def query_distances(tokens: Tensor, targets: Tensor) -> Tensor:
    """For every query of MQAR ``tokens`` (in the order `retrieval.accuracy` scores them), how many
    tokens back its key stands: the first earlier occurrence of the queried key (keys are distinct
    within a sequence and come before the queries)."""
    rows, where = (targets != IGNORE).nonzero(as_tuple=True)
    asked = tokens[rows, where]
    first = (tokens[rows] == asked[:, None]).int().argmax(dim=1)  # the pair block's copy
    return where - first


def _distance_scores(model: TinyTransformer, config: Config, sequences: int, bucket: int) -> list[float | None]:
    """MQAR accuracy at L by bucket of distance from the query to its key (None for an empty bucket)."""
    generator = torch.Generator().manual_seed(TEST_SEED)
    tokens, targets = retrieval.mqar_batch(sequences, config.train_length, pairs=config.retrieval_pairs,
                                           queries=config.retrieval_queries, symbols=config.retrieval_symbols,
                                           generator=generator)
    right = retrieval.accuracy(model, tokens, targets)
    which = query_distances(tokens, targets) // bucket
    return [round(float(right[which == b].double().mean()), 4) if bool((which == b).any()) else None
            for b in range(math.ceil(config.train_length / bucket))]


def _job(label: str, seed: int, config: Config, device: str, progress: bool, position: int) -> dict[str, Any]:
    base, settings = float(label), SETTINGS[config.name]
    cached = {task: checkpoint_path(task, model_name(base), seed, config, device).is_file() for task in TASKS}
    language, lm_stats = train_base_model("lm", base, config, seed, device=device, progress=progress,
                                          bar_position=position)
    recall, recall_stats = train_base_model("retrieval", base, config, seed, device=device, progress=progress,
                                            bar_position=position)
    started = time.process_time()
    text = lm.evaluation_text(load_corpus(config.validation_fraction), config)
    perplexity = [round(math.exp(float(lm.evaluate(language, text, n).double().mean())), 4) for n in config.eval_lengths]
    by_distance = _distance_scores(recall, config, settings.base_eval_sequences, settings.distance_bucket)
    accuracy = retrieval.evaluate_model(recall, config, None)  # the retrieval study's test sets, L .. 8L
    return {"seed": seed, "perplexity": perplexity, "accuracy": accuracy, "accuracy_by_distance": by_distance,
            "train_cpu_seconds": {"lm": lm_stats["train_cpu_seconds"], "retrieval": recall_stats["train_cpu_seconds"]},
            "final_train_loss": {"lm": lm_stats["final_train_loss"], "retrieval": recall_stats["final_train_loss"]},
            "eval_cpu_seconds": round(time.process_time() - started, 1), "from_cache": cached}


def run(config: Config, *, workers: int = 2, device: str = "cpu", progress: bool = False) -> dict[str, Any]:
    """Train and score the models of every base and seed of ``config``."""
    workers = check_int("workers", workers, minimum=1)
    device = check_device(device)
    settings = SETTINGS[config.name]
    started = time.perf_counter()
    jobs = [(repr(float(base)), seed) for base in settings.bases for seed in config.seeds]
    runs = run_jobs(_job, jobs, config, device=device, workers=workers, progress=progress)
    head_dim = config.dim // config.num_heads
    horizon = max(config.eval_lengths)
    bases: dict[str, Any] = {}
    for base in settings.bases:
        base_runs = [runs[(repr(float(base)), seed)] for seed in config.seeds]
        bases[base_key(base)] = {
            "base": base,
            "model": model_name(base),
            # the longest context over which B(m) >= 0 (capped at the longest length scored)
            "context_length": rope_base_context_length(head_dim, base, max_length=horizon),
            **spread("perplexity", [r["perplexity"] for r in base_runs]),
            **spread("accuracy", [r["accuracy"] for r in base_runs]),
            **spread("accuracy_by_distance", [r["accuracy_by_distance"] for r in base_runs]),
            "runs": base_runs,
        }
    bucket = settings.distance_bucket
    return {
        "experiment": "base_context",
        "config": config.as_dict(),
        "settings": settings.as_dict(),
        "head_dim": head_dim,
        "eval_lengths": config.eval_lengths,
        "lower_bound": {"base": round(rope_base_lower_bound(head_dim, config.train_length, relative_step=BOUND_STEP), 1),
                        "relative_step": BOUND_STEP, "context_length": config.train_length},
        "distance_buckets": [[b * bucket, min(config.train_length, (b + 1) * bucket) - 1]
                             for b in range(math.ceil(config.train_length / bucket))],
        "test_seed": TEST_SEED,
        "chance": round(1 / config.retrieval_symbols, 4),
        "bases": bases,
        "versions": versions("tqdm"),
        "device": device,
        "wall_seconds": round(time.perf_counter() - started, 1),
        "workers": workers,
    }


def load_results(path: str | Path = RESULTS_PATH) -> dict[str, Any]:
    """Read a results file (by default the committed one)."""
    return read_json(path)


def summary_lines(results: dict[str, Any]) -> list[str]:
    """Plain-text tables: per base, the B(m) horizon, MQAR accuracy by distance at L, and accuracy
    and perplexity by length (means over seeds)."""
    buckets = [f"d{lo}-{hi}" for lo, hi in results["distance_buckets"]]
    lines = [f"lower bound of the base for L = {results['lower_bound']['context_length']} at head width "
             f"{results['head_dim']}: {results['lower_bound']['base']:g}",
             f"{'base':>9}{'B>=0 to':>9}" + "".join(f"{b:>8}" for b in buckets)
             + "".join(f"{'acc@' + str(n):>9}" for n in results["eval_lengths"])
             + "".join(f"{'ppl@' + str(n):>9}" for n in results["eval_lengths"])]
    for entry in results["bases"].values():
        cells = "".join(f"{'-':>8}" if a is None else f"{a:>8.2f}" for a in entry["accuracy_by_distance"])
        lines.append(f"{entry['base']:>9g}{entry['context_length']:>9}" + cells
                     + "".join(f"{a:>9.2f}" for a in entry["accuracy"])
                     + "".join(f"{p:>9.2f}" for p in entry["perplexity"]))
    return lines
