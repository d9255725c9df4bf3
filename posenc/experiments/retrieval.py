"""Retrieval past the training length: multi-query associative recall (MQAR), measured.

Perplexity rewards local context, so a model can keep a flat perplexity on long inputs while it
ignores every distant token. This study asks for a distant token directly. Every sequence starts
with ``pairs`` key-value pairs (``k1 v1 k2 v2 ...``); after them come blanks and, at random
positions, ``queries`` keys taken from those pairs. At each query the model must predict the
value that followed that key at the start (the task of Arora et al., 2024, "Zoology", with the
pairs kept at the start so that a longer sequence moves the queries further from their answers).
Models train at length L and are tested at 1, 2, 4 and 8 times L with the same number of pairs
and queries: only the distance grows. The score is the share of queries answered right.

Why this task rather than passkey retrieval: it is defined exactly (its generator is
`mqar_batch`, seeded), every query has one right answer, a two-layer model learns it in a few
minutes on a CPU (it needs an induction head: find the earlier copy of the key, read the token
after it), and chance is known (one in ``symbols``). A passkey hidden in text would need the
character-level language model to learn to copy digits, which is much slower to train.

Run it with ``python -m posenc.experiments retrieval --config full``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch
from torch import Tensor, nn

from posenc._checks import check_choice, check_float, check_int
from posenc.experiments._results import (
    read_json,
    run_jobs,
    spread,
    spread_cells,
    versions,
)
from posenc.experiments._training import IGNORE, fit_or_load
from posenc.experiments.config import (
    CONFIGS,
    STUDIED_METHODS,
    Config,
    build_model,
    check_device,
    checkpoint_path,
    evaluation_positions,
    max_length,
)
from posenc.model import TinyTransformer

__all__ = ["CONFIGS", "RESULTS_PATH", "accuracy", "load_results", "mqar_batch", "run", "summary_lines",
           "train_retrieval_model", "vocab_size"]

#: The committed results of the full configuration.
RESULTS_PATH = Path(__file__).resolve().parent / "results" / "retrieval.json"
#: The seed of the test sequences (the same for every method and model seed).
TEST_SEED = 12345


def vocab_size(symbols: int) -> int:
    """Token ids: 0 is the blank, keys are 1 .. symbols, values symbols + 1 .. 2 * symbols."""
    return 1 + 2 * check_int("symbols", symbols, minimum=1)


def mqar_batch(batch: int, length: int, *, pairs: int, queries: int, symbols: int,
               generator: torch.Generator, depth: float | None = None,
               query_span: int | None = None) -> tuple[Tensor, Tensor]:
    """``batch`` MQAR sequences of ``length`` tokens: ``(tokens, targets)``, both ``[batch, length]``.

    ``targets`` holds the answer at each query position and `IGNORE` (-100) elsewhere. The keys
    of one sequence are distinct; values may repeat; queries may ask the same key twice.

    By default the pairs open the sequence and the queries fall anywhere after them (the layout
    the models are trained on). With ``depth`` (0 to 1) the queries fall in the last
    ``query_span`` tokens instead, and the block of pairs starts at ``depth`` times the room
    before that span: 0 at the start, 0.5 in the middle, 1 right before the queries (the
    needle-in-a-haystack layout, with the question at the end and the facts at a chosen depth).

    Examples:
        >>> tokens, targets = mqar_batch(1, 12, pairs=2, queries=2, symbols=4,
        ...                              generator=torch.Generator().manual_seed(0))
        >>> tokens.shape, int((targets >= 0).sum())
        (torch.Size([1, 12]), 2)
    """
    batch = check_int("batch", batch, minimum=1, maximum=2**16)
    pairs = check_int("pairs", pairs, minimum=1)
    symbols = check_int("symbols", symbols, minimum=pairs)
    queries = check_int("queries", queries, minimum=1)
    if depth is None and query_span is not None:
        raise ValueError(f"query_span={query_span} needs a depth (the default layout spreads the queries)")
    span = length if depth is None else check_int("query_span", query_span, minimum=queries, maximum=2**20)
    length = check_int("length", length, minimum=2 * pairs + (queries if depth is None else span), maximum=2**20)
    if not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator, got {type(generator).__name__}")
    keys = torch.rand(batch, symbols, generator=generator).argsort(dim=1)[:, :pairs] + 1
    values = torch.randint(0, symbols, (batch, pairs), generator=generator) + 1 + symbols
    tokens = torch.zeros(batch, length, dtype=torch.long)
    if depth is None:  # the training layout: pairs first, queries anywhere after them
        first, room = 0, length - 2 * pairs  # the queries' slots: 2 * pairs .. length - 1
    else:  # pairs at the given depth of the room before the last query_span tokens
        depth = check_float("depth", depth, minimum=0.0, maximum=1.0)
        first, room = math.floor(depth * (length - span - 2 * pairs) + 0.5), span
    tokens[:, first:first + 2 * pairs:2], tokens[:, first + 1:first + 2 * pairs:2] = keys, values
    slots = torch.rand(batch, room, generator=generator).argsort(dim=1)[:, :queries] + (length - room)
    asked = torch.randint(0, pairs, (batch, queries), generator=generator)
    rows = torch.arange(batch)[:, None]
    tokens[rows, slots] = keys.gather(1, asked)
    targets = torch.full((batch, length), IGNORE, dtype=torch.long)
    targets[rows, slots] = values.gather(1, asked)
    return tokens, targets


def training_batches(config: Config, seed: int, length: int | None = None) -> Iterator[tuple[Tensor, Tensor]]:
    """Endless MQAR training batches of ``length`` tokens (default L), seeded by ``seed``."""
    generator = torch.Generator().manual_seed(seed + 1)
    while True:
        yield mqar_batch(config.batch_size, length or config.train_length, pairs=config.retrieval_pairs,
                         queries=config.retrieval_queries, symbols=config.retrieval_symbols, generator=generator)


def test_set(config: Config, length: int) -> tuple[Tensor, Tensor]:
    """The test sequences of one length (seeded by `TEST_SEED` and the length)."""
    generator = torch.Generator().manual_seed(TEST_SEED + length)
    return mqar_batch(config.retrieval_eval_sequences, length, pairs=config.retrieval_pairs,
                      queries=config.retrieval_queries, symbols=config.retrieval_symbols, generator=generator)


@torch.no_grad()
def accuracy(model: nn.Module, tokens: Tensor, targets: Tensor, *, batch_rows: int | None = None) -> Tensor:
    """Whether the model's most likely token is the answer, at every query: bool ``[queries in all rows]``.

    ``batch_rows`` sequences go through the model at once (default: 32, fewer past 512 tokens). A
    model trained on randomized positions gets random positions, seeded, as in training.
    """
    batch_rows = max(1, min(32, 16384 // tokens.shape[-1])) if batch_rows is None else \
        check_int("batch_rows", batch_rows, minimum=1)
    model.eval()
    device = next(model.parameters()).device
    right = []
    generator = torch.Generator().manual_seed(TEST_SEED)  # randomized positions only
    for start in range(0, tokens.shape[0], batch_rows):
        rows = slice(start, start + batch_rows)
        positions = evaluation_positions(model, tokens[rows].shape[0], tokens.shape[1], generator)
        predicted = model(tokens[rows].to(device),
                          positions=None if positions is None else positions.to(device)).argmax(-1).cpu()
        asked = targets[rows] != IGNORE
        right.append(predicted[asked] == targets[rows][asked])
    return torch.cat(right)


def train_retrieval_model(method: str, config: Config, seed: int = 0, *, device: str = "cpu",
                          progress: bool = False, bar_position: int = 0,
                          use_cache: bool = True) -> tuple[TinyTransformer, dict[str, Any]]:
    """Train (or load from the cache) the MQAR model of one method and seed."""
    method = check_choice("method", method, STUDIED_METHODS)
    device = check_device(device)
    model = build_model(method, config, vocab_size(config.retrieval_symbols), seed).to(device)
    stats = fit_or_load(model, checkpoint_path("retrieval", method, seed, config, device),
                        training_batches(config, seed), config, steps=config.retrieval_steps,
                        peak_learning_rate=config.learning_rate, device=device, label=f"{method} seed {seed}",
                        progress=progress, bar_position=bar_position, use_cache=use_cache)
    return model.eval(), stats


def distance_accuracy(model: TinyTransformer, config: Config, length: int) -> list[float | None]:
    """Accuracy at ``length`` by the query's distance from the start, in blocks of L positions."""
    tokens, targets = test_set(config, length)
    right = accuracy(model, tokens, targets)
    where = (targets != IGNORE).nonzero()[:, 1]  # the query positions, in the order accuracy() returns
    block = where // config.train_length
    return [round(float(right[block == b].double().mean()), 4) if bool((block == b).any()) else None
            for b in range(length // config.train_length)]


def evaluate_model(model: TinyTransformer, config: Config, limit: int | None) -> list[float | None]:
    """Accuracy at every evaluation length (None past a learned table's rows)."""
    scores: list[float | None] = []
    for length in config.eval_lengths:
        if limit is not None and length > limit:
            scores.append(None)
            continue
        tokens, targets = test_set(config, length)
        scores.append(round(float(accuracy(model, tokens, targets).double().mean()), 4))
    return scores


def _job(method: str, seed: int, config: Config, device: str, progress: bool, position: int) -> dict[str, Any]:
    cached = checkpoint_path("retrieval", method, seed, config, device).is_file()
    model, stats = train_retrieval_model(method, config, seed, device=device, progress=progress,
                                         bar_position=position)
    started = time.process_time()
    scores = evaluate_model(model, config, max_length(method, config))
    by_distance = None if max_length(method, config) else distance_accuracy(model, config, max(config.eval_lengths))
    return {"seed": seed, "accuracy": scores, "accuracy_by_block": by_distance, **stats,
            "eval_cpu_seconds": round(time.process_time() - started, 1), "from_cache": cached}


def run(config: Config, *, workers: int = 2, device: str = "cpu", progress: bool = False) -> dict[str, Any]:
    """Train an MQAR model per method and seed of ``config`` and test it at every length."""
    workers = check_int("workers", workers, minimum=1)
    device = check_device(device)
    started = time.perf_counter()
    jobs = [(method, seed) for method in config.methods for seed in config.seeds]
    runs = run_jobs(_job, jobs, config, device=device, workers=workers, progress=progress)
    methods = {}
    for method in config.methods:
        method_runs = [runs[(method, seed)] for seed in config.seeds]
        methods[method] = {**spread("accuracy", [r["accuracy"] for r in method_runs]), "runs": method_runs}
    return {
        "experiment": "retrieval",
        "task": "multi-query associative recall",
        "config": config.as_dict(),
        "eval_lengths": config.eval_lengths,
        "chance": round(1 / config.retrieval_symbols, 4),
        "test_seed": TEST_SEED,
        "versions": versions("tqdm"),
        "device": device,
        "methods": methods,
        "wall_seconds": round(time.perf_counter() - started, 1),
        "workers": workers,
    }


def load_results(path: str | Path = RESULTS_PATH) -> dict[str, Any]:
    """Read a results file (by default the committed one)."""
    return read_json(path)


def summary_lines(results: dict[str, Any]) -> list[str]:
    """A plain-text table: mean accuracy (min to max over seeds) per method and length."""
    lengths = results["eval_lengths"]
    lines = [f"{'method':<16}" + "".join(f"{'acc@' + str(n):>20}" for n in lengths)]
    for method, entry in results["methods"].items():
        lines.append(f"{method:<16}" + spread_cells(entry, "accuracy"))
    return lines

