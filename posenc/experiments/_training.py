"""The training loop shared by every study: AdamW, warm-up then cosine decay, clipping, timings.

One function, `fit`, trains a model on an iterable of ``(inputs, targets)`` batches with the
optimiser settings of a study's configuration. Targets equal to ``IGNORE`` (-100, PyTorch's
``ignore_index``) carry no loss, which lets the retrieval task score only its answers.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Protocol

import torch
from torch import Tensor, nn
from torch.nn import functional

#: Targets with this value carry no loss (PyTorch's default ``ignore_index``).
IGNORE = -100
#: The training-loss curve in the results has this many points (block means).
CURVE_POINTS = 30


class Schedule(Protocol):
    """The optimiser settings `fit` reads from a study's configuration."""

    @property
    def warmup_steps(self) -> int: ...
    @property
    def min_lr_ratio(self) -> float: ...
    @property
    def weight_decay(self) -> float: ...
    @property
    def grad_clip(self) -> float: ...


def learning_rate(step: int, *, peak: float, steps: int, warmup_steps: int, min_lr_ratio: float) -> float:
    """Linear warm-up over ``warmup_steps``, then a cosine decay to ``min_lr_ratio`` of the peak."""
    if step < warmup_steps:
        return peak * (step + 1) / warmup_steps
    progress = (step - warmup_steps) / max(1, steps - warmup_steps)
    return peak * (min_lr_ratio + (1 - min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * progress)))


def progress_bar(label: str, total: int, *, position: int = 0, enabled: bool = True) -> Any:
    """A tqdm bar on stderr (one per worker process, stacked by ``position``)."""
    from tqdm import tqdm

    return tqdm(total=total, desc=f"{label:>22}", position=position, file=sys.stderr, mininterval=2.0,
                leave=True, disable=not enabled, dynamic_ncols=True)


def fit(model: nn.Module, batches: Iterable[tuple[Tensor, Tensor]], schedule: Schedule, *, steps: int,
        peak_learning_rate: float, warmup_steps: int | None = None, device: str = "cpu",
        label: str = "", progress: bool = False, bar_position: int = 0) -> dict[str, Any]:
    """Train ``model`` for ``steps`` batches; returns the final loss, the loss curve and timings.

    Weight decay applies to matrices only (not to norms, biases or per-head scalars), as in GPT-2.
    ``warmup_steps`` overrides the schedule's (fine-tuning warms up for fewer steps).
    """
    decay = [p for p in model.parameters() if p.ndim >= 2]
    no_decay = [p for p in model.parameters() if p.ndim < 2]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": schedule.weight_decay},
                                   {"params": no_decay, "weight_decay": 0.0}], lr=peak_learning_rate)
    warmup = schedule.warmup_steps if warmup_steps is None else warmup_steps
    wall, cpu = time.perf_counter(), time.process_time()
    recent: list[float] = []
    curve: list[float] = []
    block = max(1, steps // CURVE_POINTS)
    block_sum = 0.0
    model.train()
    with progress_bar(label, steps, position=bar_position, enabled=progress) as bar:
        for step, (inputs, targets) in zip(range(steps), batches):
            rate = learning_rate(step, peak=peak_learning_rate, steps=steps, warmup_steps=warmup,
                                 min_lr_ratio=schedule.min_lr_ratio)
            for group in optimizer.param_groups:
                group["lr"] = rate
            logits = model(inputs.to(device))
            loss = functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.to(device).reshape(-1),
                                            ignore_index=IGNORE)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), schedule.grad_clip)
            optimizer.step()
            value = loss.item()
            recent = (recent + [value])[-100:]
            block_sum += value
            if (step + 1) % block == 0:
                curve.append(round(block_sum / block, 4))
                block_sum = 0.0
            bar.update(1)
            if step % 50 == 0:
                bar.set_postfix(loss=f"{value:.3f}", refresh=False)
    model.eval()
    return {
        "final_train_loss": round(sum(recent) / len(recent), 4),  # mean of the last 100 steps
        "train_curve": curve,
        "train_curve_block": block,
        "train_seconds": round(time.perf_counter() - wall, 1),
        "train_cpu_seconds": round(time.process_time() - cpu, 1),
    }


def fit_or_load(model: nn.Module, path: Path, batches: Iterable[tuple[Tensor, Tensor]], schedule: Schedule, *,
                steps: int, peak_learning_rate: float, device: str, label: str, progress: bool,
                bar_position: int, use_cache: bool) -> dict[str, Any]:
    """Train ``model`` with `fit`, or load it from ``path`` when ``use_cache`` and it is there
    (saving it there after training). Returns the training statistics (those measured when the
    model was trained); the model is left in eval mode."""
    if use_cache and path.is_file():
        saved = torch.load(path, map_location=device, weights_only=True)
        model.load_state_dict(saved["state"])
        model.eval()
        stats: dict[str, Any] = saved["stats"]
        return stats
    stats = fit(model, batches, schedule, steps=steps, peak_learning_rate=peak_learning_rate, device=device,
                label=label, progress=progress, bar_position=bar_position)
    if use_cache:
        path.parent.mkdir(parents=True, exist_ok=True)
        torch.save({"state": model.state_dict(), "stats": stats}, path)
    return stats


def train_task_model(task: str, build: Callable[[int], nn.Module], config: Any, seed: int, *, name: str,
                     label: str, device: str, progress: bool, bar_position: int) -> tuple[nn.Module, dict[str, Any]]:
    """Train (or load from the cache, as ``name``) the model ``build(vocab_size)`` on one task of the
    later studies, ``"lm"`` or ``"retrieval"`` (MQAR), with ``config``'s data, steps and schedule."""
    # the task modules train with fit_or_load: imported here, not at the top, to avoid the cycle
    from posenc.experiments import length_extrapolation as lm
    from posenc.experiments import retrieval
    from posenc.experiments.config import checkpoint_path
    from posenc.experiments.data import load_corpus

    if task == "lm":
        corpus = load_corpus(config.validation_fraction)
        model = build(corpus.vocab_size).to(device)
        batches, steps = lm.training_batches(corpus.train, config, seed), config.steps
    else:
        model = build(retrieval.vocab_size(config.retrieval_symbols)).to(device)
        batches, steps = retrieval.training_batches(config, seed), config.retrieval_steps
    stats = fit_or_load(model, checkpoint_path(task, name, seed, config, device), batches, config, steps=steps,
                        peak_learning_rate=config.learning_rate, device=device, label=label, progress=progress,
                        bar_position=bar_position, use_cache=True)
    return model.eval(), stats
