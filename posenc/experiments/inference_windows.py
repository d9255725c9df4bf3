"""Sliding windows, attention sinks and dynamic NTK on the trained language models. Measured.

Every language model of the length-extrapolation study (same text, configuration and seeds;
`posenc.experiments.length_extrapolation.train_model`, reused from the model cache) except the
learned table, which has no rows past L, is scored at 8 times its training length L with full
attention, a sliding window of L keys (`posenc.inference.KVCache` with ``window=L``), and
``sinks`` attention sinks plus a window of ``L - sinks`` keys (the same budget of L keys;
StreamingLLM, Xiao et al., 2024, https://arxiv.org/abs/2309.17453), the kept keys at the
positions they were cached with.

The RoPE model of seed 0 is scored in more detail: the loss block by block, and each window
setting also with positions re-assigned within the cache. It also decodes one text token by token
with dynamic NTK scaling, once with the cache and once recomputing the whole prefix at every
step, and records how far the two drift apart: with a cache, the keys cached early stay rotated
by the base of their time while the base grows.

Run it with ``python -m posenc.experiments windows --config full``.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import torch
from torch import Tensor
from torch.nn import functional

from posenc._checks import check_int
from posenc.experiments._results import (
    read_json,
    run_jobs,
    spread,
    versions,
    write_json,
)
from posenc.experiments.config import (
    CONFIGS,
    Config,
    check_device,
    evaluation_positions,
    max_length,
)
from posenc.experiments.data import SOURCE, load_corpus
from posenc.experiments.length_extrapolation import (
    EVALUATION_SEED,
    evaluation_text,
    train_model,
)
from posenc.inference import KVCache
from posenc.model import TinyTransformer
from posenc.rope import RotaryEmbedding, rope_inverse_frequencies

#: The committed results of the full configuration; the chapter's figure and numbers read it.
RESULTS_PATH = Path(__file__).resolve().parent / "results" / "inference_windows.json"
#: Attention sinks kept in the "+ sinks" settings (StreamingLLM keeps 4).
SINKS = 4
#: How many 8L windows of the validation text are scored (the same ones for every setting).
EVAL_SEQUENCES = {"full": 8, "large": 8, "tiny": 2}
#: The windows study scores every model at this multiple of its training length.
WINDOWS_MULTIPLE = 8
#: The scaling of the dynamic-NTK run (Hugging Face's "dynamic" type, factor 2).
DYNAMIC_FACTOR = 2.0


def settings(train_length: int) -> list[tuple[str, int | None, int, str]]:
    """(label, window, sinks, key_positions) of every setting scored."""
    budget = train_length
    return [
        ("full attention", None, 0, "original"),
        (f"window {budget}", budget, 0, "original"),
        (f"window {budget}, in-cache positions", budget, 0, "in-cache"),
        (f"{SINKS} sinks + window {budget - SINKS}", budget - SINKS, SINKS, "original"),
        (f"{SINKS} sinks + window {budget - SINKS}, in-cache positions", budget - SINKS, SINKS, "in-cache"),
    ]


@torch.no_grad()
def windowed_losses(model: TinyTransformer, inputs: Tensor, targets: Tensor, *, window: int | None,
                    sinks: int, key_positions: str, positions: Tensor | None = None) -> Tensor:
    """Cross-entropy ``[batch, length]`` of each next character under one cache setting.

    With positions as cached, one call with a windowed cache scores every position at once
    (its mask is the window). With in-cache positions the keys move at every step, so the text
    is decoded one token at a time, as a generation loop would. ``positions`` (only with
    positions as cached) numbers the tokens, e.g. the random positions of a model trained on them.
    """
    if positions is not None and key_positions != "original":
        raise ValueError("positions can only be given with key_positions='original'")
    if window is None:
        logits = model(inputs, positions=positions)
    elif key_positions == "original":
        logits = model(inputs, cache=KVCache(window=window, sinks=sinks), positions=positions)
    else:
        cache = KVCache(window=window, sinks=sinks, key_positions=key_positions)
        logits = torch.cat([model(inputs[:, i:i + 1], cache=cache) for i in range(inputs.shape[1])], dim=1)
    return functional.cross_entropy(logits.transpose(1, 2), targets, reduction="none")


def effective_base(dim: int, theta: Tensor) -> float:
    """The base b with theta_1 = b^(-2/dim): what a frequency table amounts to as a RoPE base."""
    return float(theta[1].double() ** (-dim / 2.0))


@torch.no_grad()
def dynamic_ntk_drift(model: TinyTransformer, text: Tensor, train_length: int) -> dict[str, Any]:
    """Decode ``text`` with dynamic NTK, cached versus recomputed, and measure the difference."""
    assert model.rotary is not None
    head_dim = model.rotary.dim
    scaling = {"type": "dynamic", "factor": DYNAMIC_FACTOR, "original_max_position_embeddings": train_length}
    original = model.rotary
    model.rotary = RotaryEmbedding(head_dim, scaling=scaling)
    try:
        inputs, targets = text[None, :-1], text[None, 1:]
        length = inputs.shape[1]
        cache = KVCache()
        cached = torch.cat([model(inputs[:, i:i + 1], cache=cache) for i in range(length)], dim=1)
        recomputed = torch.stack([model(inputs[:, :i + 1])[0, -1] for i in range(length)])[None]
    finally:
        model.rotary = original
    loss_cached = functional.cross_entropy(cached[0], targets[0], reduction="none")
    loss_recomputed = functional.cross_entropy(recomputed[0], targets[0], reduction="none")
    gap = (cached - recomputed).abs().amax(dim=-1)[0]  # [length]: largest logit difference
    # The base that rotated the key at position m when it was cached (sequence length m + 1),
    # and the base the last step uses for every key.
    probe = sorted({train_length - 1, train_length, 2 * train_length, 4 * train_length, length - 1})
    bases = {str(m): round(effective_base(head_dim, rope_inverse_frequencies(
        head_dim, scaling=scaling, seq_len=m + 1)), 1) for m in probe}
    return {
        "factor": DYNAMIC_FACTOR,
        "length": length,
        "base_when_cached": bases,
        "perplexity_cached": round(math.exp(float(loss_cached.double().mean())), 4),
        "perplexity_recomputed": round(math.exp(float(loss_recomputed.double().mean())), 4),
        "max_logit_gap_within_train_length": round(float(gap[:train_length].max()), 6),
        "max_logit_gap_past_train_length": round(float(gap[train_length:].max()), 4),
    }


def _sequences(config: Config, length: int) -> tuple[Tensor, Tensor]:
    """The windows of ``length`` scored in every setting: inputs and next characters."""
    sequences = EVAL_SEQUENCES.get(config.name, 2)
    text = evaluation_text(load_corpus(config.validation_fraction), config)
    if text.numel() - 1 < sequences * length:
        raise ValueError(f"the validation text has {text.numel() - 1} characters, fewer than "
                         f"{sequences} windows of {length}")
    return text[:sequences * length].view(sequences, length), text[1:sequences * length + 1].view(sequences, length)


def _rope_detail(config: Config, length: int, device: str) -> dict[str, Any]:
    """Every setting, block by block, and the dynamic-NTK drift, on the RoPE model of seed 0."""
    model, stats = train_model("rope", config, 0, device=device)
    inputs, targets = (t.to(device) for t in _sequences(config, length))
    rows = []
    for label, window, sinks, key_positions in settings(config.train_length):
        losses = windowed_losses(model, inputs, targets, window=window, sinks=sinks, key_positions=key_positions)
        by_position = losses.double().mean(0).view(-1, config.train_length).mean(1)  # one value per L
        rows.append({"label": label, "window": window, "sinks": sinks, "key_positions": key_positions,
                     "perplexity": round(math.exp(float(losses.double().mean())), 4),
                     "loss_by_block": [round(float(v), 4) for v in by_position.cpu()]})
    text = evaluation_text(load_corpus(config.validation_fraction), config)[:length + 1].to(device)
    drift = dynamic_ntk_drift(model, text, config.train_length)
    return {"train": {k: stats[k] for k in ("final_train_loss", "train_seconds", "train_cpu_seconds")},
            "settings": rows, "dynamic_ntk": drift}


def _job(method: str, seed: int, config: Config, device: str, progress: bool, position: int) -> dict[str, Any]:
    length = WINDOWS_MULTIPLE * config.train_length
    if method == "rope-detail":
        return _rope_detail(config, length, device)
    model, _ = train_model(method, config, seed, device=device, progress=progress, bar_position=position)
    inputs, targets = (t.to(device) for t in _sequences(config, length))
    # a model trained on randomized positions is scored on them, as in the other studies
    positions = evaluation_positions(model, inputs.shape[0], length, torch.Generator().manual_seed(EVALUATION_SEED))
    if positions is not None:
        positions = positions.to(device)
    scores = {}
    for label, window, sinks, key_positions in settings(config.train_length):
        if key_positions == "original":  # in-cache positions decode token by token: RoPE detail only
            losses = windowed_losses(model, inputs, targets, window=window, sinks=sinks, key_positions=key_positions,
                                     positions=positions)
            scores[label] = round(math.exp(float(losses.double().mean())), 4)
    return {"seed": seed, "perplexity": scores}


def run(config: Config, *, workers: int = 2, device: str = "cpu", progress: bool = False) -> dict[str, Any]:
    """Score every method and seed of ``config`` at 8 x L with full attention, a window, and sinks,
    and the RoPE model of seed 0 in every setting, block by block."""
    workers = check_int("workers", workers, minimum=1)
    device = check_device(device)
    started = time.perf_counter()
    length = WINDOWS_MULTIPLE * config.train_length
    methods = [m for m in config.methods if max_length(m, config) is None]  # the learned table stops at L
    jobs = [("rope-detail", 0)] + [(method, seed) for method in methods for seed in config.seeds]
    runs = run_jobs(_job, jobs, config, device=device, workers=workers, progress=progress)
    detail = runs[("rope-detail", 0)]
    labels = [label for label, *_, key_positions in settings(config.train_length) if key_positions == "original"]
    by_method = {}
    for method in methods:
        method_runs = [runs[(method, seed)] for seed in config.seeds]
        by_method[method] = {label: spread("perplexity", [[r["perplexity"][label]] for r in method_runs])
                             for label in labels}
    corpus = load_corpus(config.validation_fraction)
    return {
        "experiment": "inference_windows",
        "config": config.as_dict(),
        "method": "rope",
        "length": length,
        "multiple": WINDOWS_MULTIPLE,
        "sequences": EVAL_SEQUENCES.get(config.name, 2),
        "sinks": SINKS,
        "corpus": {"source": SOURCE, "sha256": corpus.sha256, "vocab_size": corpus.vocab_size},
        "versions": versions("tqdm"),
        "device": device,
        **detail,
        "methods": by_method,
        "wall_seconds": round(time.perf_counter() - started, 1),
        "workers": workers,
    }


def write_results(results: dict[str, Any], path: str | Path = RESULTS_PATH) -> Path:
    return write_json(results, path)


def load_results(path: str | Path = RESULTS_PATH) -> dict[str, Any]:
    """Read a results file (by default the committed one the chapter is drawn from)."""
    return read_json(path)


def summary_lines(results: dict[str, Any]) -> list[str]:
    """Plain-text tables: mean perplexity at 8L per method and setting; the RoPE model of seed 0."""
    labels = list(next(iter(results["methods"].values())))
    lines = [f"{'method':<16}" + "".join(f"{label:>26}" for label in labels)]
    for method, entry in results["methods"].items():
        lines.append(f"{method:<16}" + "".join(f"{entry[label]['perplexity'][0]:>26.3f}" for label in labels))
    lines.append(f"RoPE model, seed 0, perplexity at {results['multiple']}L = {results['length']} characters")
    for row in results["settings"]:
        lines.append(f"{row['label']:<42}{row['perplexity']:>9.3f}")
    drift = results["dynamic_ntk"]
    lines.append(f"dynamic NTK, cached keys{drift['perplexity_cached']:>27.3f}")
    lines.append(f"dynamic NTK, prefix recomputed{drift['perplexity_recomputed']:>21.3f}")
    return lines


__all__ = ["CONFIGS", "RESULTS_PATH", "load_results", "run", "summary_lines", "write_results"]
