"""Which position method lets a model read longer inputs than it was trained on? Measured.

One `posenc.model.TinyTransformer` per position method is trained as a character-level
language model on the same text (`posenc.experiments.data`), with the same batches, the same
seed and windows of ``train_length`` characters. Each is then scored on held-out text cut into
non-overlapping windows of 1, 2, 4 and 8 times the training length: the perplexity over every
character of every window, so each length is scored on exactly the same characters (the protocol
of Press, Smith and Lewis, 2022). The learned table has ``train_length`` rows, so that model is
scored only at the training length.

Everything runs on the CPU with one thread per process and fixed seeds, so the numbers depend
only on the configuration and the library versions, not on the machine's load or on how many
methods run in parallel. Run it with::

    python -m posenc.experiments length-extrapolation --config full --output results.json
"""

from __future__ import annotations

import json
import math
import multiprocessing
import sys
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
from torch import Tensor
from torch.nn import functional

from posenc._checks import check_choice, check_int
from posenc.experiments._results import read_json, versions, write_json
from posenc.experiments.data import SOURCE, Corpus, load_corpus
from posenc.model import POSITION_METHODS, TinyTransformer

#: The committed results of the full configuration; the site's figure and table read this file.
RESULTS_PATH = Path(__file__).resolve().parent / "results" / "length_extrapolation.json"
#: The training-loss curve in the results has this many points (block means).
CURVE_POINTS = 30


# --8<-- [start:config]
@dataclass(frozen=True)
class Config:
    """Everything that decides the numbers of one run."""

    name: str
    methods: tuple[str, ...]
    train_length: int  # L: characters per training window (and rows of the learned table)
    eval_multiples: tuple[int, ...]  # evaluate at m * L for each m
    dim: int
    num_heads: int
    num_layers: int
    batch_size: int
    steps: int
    learning_rate: float
    warmup_steps: int  # linear warm-up, then cosine decay to min_lr_ratio * learning_rate
    min_lr_ratio: float
    weight_decay: float
    grad_clip: float
    seed: int
    validation_fraction: float
    max_eval_characters: int | None  # None: all of the validation text
    position_bucket: int  # width of the position buckets of the loss-by-position curve

    @property
    def eval_lengths(self) -> list[int]:
        return [m * self.train_length for m in self.eval_multiples]

    def as_dict(self) -> dict[str, Any]:
        return json.loads(json.dumps(asdict(self)))  # tuples become lists, as in the JSON file


#: The methods this study trains: the six of the first edition, whose results are committed. The
#: methods added since (xPos, KERPLE, FIRE, CoPE) are accepted by the model but not yet studied.
STUDIED_METHODS = ("none", "sinusoidal", "learned", "rope", "alibi", "t5")

CONFIGS = {
    "full": Config(
        name="full", methods=STUDIED_METHODS, train_length=64, eval_multiples=(1, 2, 4, 8),
        dim=64, num_heads=4, num_layers=2, batch_size=32, steps=4000, learning_rate=2e-3,
        warmup_steps=200, min_lr_ratio=0.1, weight_decay=0.01, grad_clip=1.0, seed=0,
        validation_fraction=0.1, max_eval_characters=None, position_bucket=16,
    ),
    "tiny": Config(
        name="tiny", methods=STUDIED_METHODS, train_length=16, eval_multiples=(1, 2, 4, 8),
        dim=16, num_heads=2, num_layers=1, batch_size=4, steps=12, learning_rate=2e-3,
        warmup_steps=4, min_lr_ratio=0.1, weight_decay=0.01, grad_clip=1.0, seed=0,
        validation_fraction=0.1, max_eval_characters=512, position_bucket=8,
    ),
}
# --8<-- [end:config]


def build_model(method: str, config: Config, vocab_size: int) -> TinyTransformer:
    """The model of one method, initialised from the config's seed."""
    torch.manual_seed(config.seed)
    max_len = config.train_length if method == "learned" else None
    return TinyTransformer(vocab_size, config.dim, config.num_heads, config.num_layers,
                           position=method, max_len=max_len)


def learning_rate(step: int, config: Config) -> float:
    """Linear warm-up over ``warmup_steps``, then a cosine decay to ``min_lr_ratio`` of the peak."""
    if step < config.warmup_steps:
        return config.learning_rate * (step + 1) / config.warmup_steps
    progress = (step - config.warmup_steps) / max(1, config.steps - config.warmup_steps)
    floor = config.min_lr_ratio
    return config.learning_rate * (floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * progress)))


def training_batches(train: Tensor, config: Config) -> Iterable[tuple[Tensor, Tensor]]:
    """Random windows of the training text (the same sequence for every method): inputs, targets."""
    generator = torch.Generator().manual_seed(config.seed + 1)
    offsets = torch.arange(config.train_length + 1)
    for _ in range(config.steps):
        starts = torch.randint(0, train.numel() - config.train_length - 1, (config.batch_size,), generator=generator)
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
def evaluate(model: TinyTransformer, text: Tensor, length: int, *, batch_windows: int = 16) -> Tensor:
    """Cross-entropy (nats) of every character of ``text[1:]``, predicted in windows of ``length``.

    Returns ``[windows, length]``: entry (w, p) is the loss of the character at position p of
    window w, which the model predicts from the p + 1 characters before it in the same window.
    """
    length = check_int("length", length, minimum=1)
    if text.ndim != 1 or (text.numel() - 1) % length:
        raise ValueError(f"text must be 1-D with a multiple of length={length} characters plus one, "
                         f"got shape {tuple(text.shape)}")
    model.eval()
    inputs = text[:-1].view(-1, length)
    targets = text[1:].view(-1, length)
    losses = []
    for start in range(0, inputs.shape[0], batch_windows):
        logits = model(inputs[start:start + batch_windows])
        loss = functional.cross_entropy(logits.transpose(1, 2), targets[start:start + batch_windows], reduction="none")
        losses.append(loss)
    return torch.cat(losses)


def _bar(method: str, config: Config, position: int, enabled: bool) -> Any:
    from tqdm import tqdm

    return tqdm(total=config.steps, desc=f"{method:>10}", position=position, file=sys.stderr,
                mininterval=2.0, leave=True, disable=not enabled, dynamic_ncols=True)


def train_model(method: str, config: Config, *, progress: bool = False,
                bar_position: int = 0) -> tuple[TinyTransformer, dict[str, Any]]:
    """Train the model of one method; returns it (in eval mode) and its training statistics."""
    method = check_choice("method", method, POSITION_METHODS)
    corpus = load_corpus(config.validation_fraction)
    model = build_model(method, config, corpus.vocab_size)
    decay = [p for n, p in model.named_parameters() if p.ndim >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.ndim < 2]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": config.weight_decay},
                                   {"params": no_decay, "weight_decay": 0.0}], lr=config.learning_rate)
    wall, cpu = time.perf_counter(), time.process_time()
    recent: list[float] = []
    curve: list[float] = []  # mean training loss of each block of curve_block steps
    curve_block = max(1, config.steps // CURVE_POINTS)
    block_sum = 0.0
    model.train()
    with _bar(method, config, bar_position, progress) as bar:
        for step, (inputs, targets) in enumerate(training_batches(corpus.train, config)):
            for group in optimizer.param_groups:
                group["lr"] = learning_rate(step, config)
            logits = model(inputs)
            loss = functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), config.grad_clip)
            optimizer.step()
            value = loss.item()
            recent = (recent + [value])[-100:]
            block_sum += value
            if (step + 1) % curve_block == 0:
                curve.append(round(block_sum / curve_block, 4))
                block_sum = 0.0
            bar.update(1)
            if step % 50 == 0:
                bar.set_postfix(loss=f"{loss.item():.3f}", refresh=False)
    train_seconds, train_cpu_seconds = time.perf_counter() - wall, time.process_time() - cpu
    model.eval()
    return model, {
        "final_train_loss": round(sum(recent) / len(recent), 4),  # mean of the last 100 steps
        "train_curve": curve,
        "train_curve_block": curve_block,
        "train_seconds": round(train_seconds, 1),
        "train_cpu_seconds": round(train_cpu_seconds, 1),
    }


def train_and_evaluate(method: str, config: Config, *, progress: bool = False, bar_position: int = 0) -> dict[str, Any]:
    """Train the model of one method and score it at every evaluation length."""
    model, stats = train_model(method, config, progress=progress, bar_position=bar_position)
    corpus = load_corpus(config.validation_fraction)
    text = evaluation_text(corpus, config)
    perplexity: list[float | None] = []
    loss_by_length: list[float | None] = []
    position_loss: list[float] = []
    for length in config.eval_lengths:
        if method == "learned" and length > config.train_length:
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
        "parameters": sum(p.numel() for p in model.parameters()),
        "max_len": config.train_length if method == "learned" else None,
        "perplexity": perplexity,
        "loss": loss_by_length,
        "position_loss": position_loss,  # mean loss per bucket of positions, longest length scored
        **stats,
    }


def _worker(job: tuple[str, Config, bool, int]) -> tuple[str, dict[str, Any]]:
    method, config, progress, position = job
    torch.set_num_threads(1)
    return method, train_and_evaluate(method, config, progress=progress, bar_position=position)


def run(config: Config, *, workers: int = 2, progress: bool = False) -> dict[str, Any]:
    """Train and score every method of ``config``; returns the results as a JSON-ready dict.

    ``workers > 1`` trains methods in parallel processes (one thread each). The numbers do not
    depend on ``workers``: each method is seeded on its own.
    """
    workers = check_int("workers", workers, minimum=1)
    corpus = load_corpus(config.validation_fraction)
    jobs = [(method, config, progress, i) for i, method in enumerate(config.methods)]
    started = time.perf_counter()
    results: dict[str, dict[str, Any]] = {}
    if workers == 1:
        threads = torch.get_num_threads()
        try:
            results.update(_worker(job) for job in jobs)
        finally:
            torch.set_num_threads(threads)
    else:
        context = multiprocessing.get_context("spawn")
        with context.Pool(min(workers, len(jobs))) as pool:
            results.update(pool.imap_unordered(_worker, jobs))
    return {
        "experiment": "length_extrapolation",
        "config": config.as_dict(),
        "seed": config.seed,
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
        "versions": versions(),
        "methods": {method: results[method] for method in config.methods},
        "wall_seconds": round(time.perf_counter() - started, 1),
        "workers": workers,
    }


def write_results(results: dict[str, Any], path: str | Path) -> Path:
    return write_json(results, path)


def load_results(path: str | Path = RESULTS_PATH) -> dict[str, Any]:
    """Read a results file (by default the committed one that the site is drawn from)."""
    return read_json(path)


def summary_lines(results: dict[str, Any]) -> list[str]:
    """A plain-text table of perplexity per method and evaluation length."""
    lengths = results["eval_lengths"]
    header = f"{'method':<11}{'params':>8}" + "".join(f"{'ppl@' + str(n):>10}" for n in lengths)
    lines = [header]
    for method, entry in results["methods"].items():
        cells = "".join(f"{'-':>10}" if p is None else f"{p:>10.3f}" for p in entry["perplexity"])
        lines.append(f"{method:<11}{entry['parameters']:>8}" + cells)
    return lines

