r"""Which position method lets a model read longer inputs than it was trained on? Measured.

One `posenc.model.TinyTransformer` per position method and seed is trained as a character-level
language model on the same text (`posenc.experiments.data`), with windows of ``train_length``
characters; within a seed every method sees the same batches. Each model is then scored on
held-out text cut into non-overlapping windows of 1, 2, 4 and 8 times the training length: the
perplexity over every character of every window, so each length is scored on exactly the same
characters (the protocol of Press, Smith and Lewis, 2022). The learned table has
``train_length`` rows, so that model is scored only at the training length.

On the CPU everything runs with one thread per process and fixed seeds, so the numbers depend
only on the configuration and the library versions, not on the machine's load or on how many
models train in parallel. Run it with::

    python -m posenc.experiments length-extrapolation --config full \
        --output results.json
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch
from torch import Tensor, nn
from torch.nn import functional

from posenc._checks import check_choice, check_int
from posenc.experiments._results import (
    read_json,
    run_jobs,
    spread,
    spread_cells,
    versions,
    write_json,
)
from posenc.experiments._training import fit_or_load
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
from posenc.experiments.data import SOURCE, Corpus, load_corpus
from posenc.model import TinyTransformer

__all__ = ["CONFIGS", "RESULTS_PATH", "STUDIED_METHODS", "Config", "build_model", "evaluate", "evaluation_text",
           "load_results", "run", "summary_lines", "train_and_evaluate", "train_model", "training_batches",
           "write_results"]

#: Seeds the random positions that models trained on randomized positions are scored with.
EVALUATION_SEED = 2023
#: The committed results of the full configuration; the site's figures and tables read this file.
RESULTS_PATH = Path(__file__).resolve().parent / "results" / "length_extrapolation.json"


def training_batches(train: Tensor, config: Config, seed: int = 0,
                     length: int | None = None) -> Iterator[tuple[Tensor, Tensor]]:
    """Endless random windows of ``length`` characters (default L) of the training text, as
    (inputs, next characters); the same sequence for every method of a seed."""
    generator = torch.Generator().manual_seed(seed + 1)
    length = length or config.train_length
    offsets = torch.arange(length + 1)
    while True:
        starts = torch.randint(0, train.numel() - length - 1, (config.batch_size,), generator=generator)
        windows = train[starts[:, None] + offsets]
        yield windows[:, :-1], windows[:, 1:]


def evaluation_text(corpus: Corpus, config: Config) -> Tensor:
    """The validation characters scored at every length: a whole number of the longest windows."""
    longest = max(config.eval_lengths)
    available = corpus.validation.numel() - 1
    if config.max_eval_characters is not None:
        available = min(available, config.max_eval_characters)
    usable = (available // longest) * longest
    if usable == 0:
        raise ValueError(f"the validation text ({available} characters) is shorter than one window of {longest}")
    return corpus.validation[: usable + 1]


@torch.no_grad()
def evaluate(model: nn.Module, text: Tensor, length: int, *, batch_windows: int | None = None) -> Tensor:
    """Cross-entropy (nats) of every character of ``text[1:]``, predicted in windows of ``length``.

    Returns ``[windows, length]`` on the CPU: entry (w, p) is the loss of the character at
    position p of window w, which the model predicts from the p + 1 characters before it in the
    same window (a model trained on randomized positions gets random positions, seeded, as in
    training). The model may sit on any device; ``text`` is moved to it. ``batch_windows``
    windows go through the model at once (default: 16, fewer past 512 tokens, to bound memory).
    """
    length = check_int("length", length, minimum=1)
    batch_windows = max(1, min(16, 8192 // length)) if batch_windows is None else \
        check_int("batch_windows", batch_windows, minimum=1)
    if text.ndim != 1 or (text.numel() - 1) % length:
        raise ValueError(f"text must be 1-D with a multiple of length={length} characters plus one, "
                         f"got shape {tuple(text.shape)}")
    model.eval()
    device = next(model.parameters()).device
    inputs = text[:-1].view(-1, length).to(device)
    targets = text[1:].view(-1, length).to(device)
    losses = []
    generator = torch.Generator().manual_seed(EVALUATION_SEED)  # randomized positions only
    for start in range(0, inputs.shape[0], batch_windows):
        rows = inputs[start:start + batch_windows]
        positions = evaluation_positions(model, rows.shape[0], length, generator)
        logits = model(rows, positions=None if positions is None else positions.to(device))
        loss = functional.cross_entropy(logits.transpose(1, 2), targets[start:start + batch_windows], reduction="none")
        losses.append(loss.float().cpu())
    return torch.cat(losses)


def train_model(method: str, config: Config, seed: int = 0, *, device: str = "cpu", progress: bool = False,
                bar_position: int = 0, use_cache: bool = True) -> tuple[TinyTransformer, dict[str, Any]]:
    """Train (or load from the cache) the language model of one method and seed.

    Returns the model, in eval mode on ``device``, and its training statistics.
    """
    method = check_choice("method", method, STUDIED_METHODS)
    device = check_device(device)
    corpus = load_corpus(config.validation_fraction)
    model = build_model(method, config, corpus.vocab_size, seed).to(device)
    stats = fit_or_load(model, checkpoint_path("lm", method, seed, config, device),
                        training_batches(corpus.train, config, seed), config, steps=config.steps,
                        peak_learning_rate=config.learning_rate, device=device, label=f"{method} seed {seed}",
                        progress=progress, bar_position=bar_position, use_cache=use_cache)
    return model.eval(), stats


def train_and_evaluate(method: str, config: Config, seed: int = 0, *, device: str = "cpu",
                       progress: bool = False, bar_position: int = 0) -> dict[str, Any]:
    """Train the model of one method and seed, and score it at every evaluation length."""
    cached = checkpoint_path("lm", method, seed, config, device).is_file()
    model, stats = train_model(method, config, seed, device=device, progress=progress, bar_position=bar_position)
    text = evaluation_text(load_corpus(config.validation_fraction), config)
    limit = max_length(method, config)
    perplexity: list[float | None] = []
    loss_by_length: list[float | None] = []
    position_loss: list[float] = []
    started = time.process_time()
    for length in config.eval_lengths:
        if limit is not None and length > limit:
            perplexity.append(None)  # the table has no rows past train_length
            loss_by_length.append(None)
            continue
        losses = evaluate(model, text, length)
        mean = float(losses.double().mean())
        loss_by_length.append(round(mean, 6))
        perplexity.append(round(math.exp(mean), 4))
        by_position = losses.double().mean(0)  # [length]
        position_loss = [round(float(v), 4) for v in by_position.view(-1, config.position_bucket).mean(1)]
    return {
        "seed": seed,
        "perplexity": perplexity,
        "loss": loss_by_length,
        "position_loss": position_loss,  # mean loss per bucket of positions, longest length scored
        **stats,  # training statistics, measured when the model was trained
        "eval_cpu_seconds": round(time.process_time() - started, 1),
        "from_cache": cached,
    }


def _job(method: str, seed: int, config: Config, device: str, progress: bool, position: int) -> dict[str, Any]:
    return train_and_evaluate(method, config, seed, device=device, progress=progress, bar_position=position)


def run(config: Config, *, workers: int = 2, device: str = "cpu", progress: bool = False) -> dict[str, Any]:
    """Train and score every method and seed of ``config``; returns the results as a JSON-ready dict.

    ``workers > 1`` trains models in parallel processes (one thread each). The numbers do not
    depend on ``workers``: each model is seeded on its own.
    """
    workers = check_int("workers", workers, minimum=1)
    device = check_device(device)
    corpus = load_corpus(config.validation_fraction)
    started = time.perf_counter()
    jobs = [(method, seed) for method in config.methods for seed in config.seeds]
    runs = run_jobs(_job, jobs, config, device=device, workers=workers, progress=progress)
    methods: dict[str, Any] = {}
    for method in config.methods:
        method_runs = [runs[(method, seed)] for seed in config.seeds]
        parameters = sum(p.numel() for p in build_model(method, config, corpus.vocab_size).parameters())
        methods[method] = {
            "parameters": parameters,
            "max_len": max_length(method, config),
            **spread("perplexity", [r["perplexity"] for r in method_runs]),
            "runs": method_runs,
        }
    return {
        "experiment": "length_extrapolation",
        "config": config.as_dict(),
        "eval_lengths": config.eval_lengths,
        "corpus": {
            "source": SOURCE,
            "characters": corpus.characters,
            "sha256": corpus.sha256,
            "vocab_size": corpus.vocab_size,
            "train_characters": corpus.train.numel(),
            "validation_characters": corpus.validation.numel(),
            "evaluated_characters": evaluation_text(corpus, config).numel() - 1,
        },
        "versions": versions("tqdm"),
        "device": device,
        "methods": methods,
        "wall_seconds": round(time.perf_counter() - started, 1),
        "workers": workers,
    }


def write_results(results: dict[str, Any], path: str | Path) -> Path:
    return write_json(results, path)


def load_results(path: str | Path = RESULTS_PATH) -> dict[str, Any]:
    """Read a results file (by default the committed one that the site is drawn from)."""
    return read_json(path)


def summary_lines(results: dict[str, Any]) -> list[str]:
    """A plain-text table: mean perplexity (min to max over seeds) per method and length."""
    lengths = results["eval_lengths"]
    header = f"{'method':<16}{'params':>9}" + "".join(f"{'ppl@' + str(n):>20}" for n in lengths)
    lines = [header]
    for method, entry in results["methods"].items():
        lines.append(f"{method:<16}{entry['parameters']:>9}" + spread_cells(entry, "perplexity"))
    return lines
