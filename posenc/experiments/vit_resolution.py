"""Train a tiny ViT at one resolution, test it at larger ones: which position method copes? Measured.

One `posenc.tiny_vit.TinyViT` per position method and seed learns scikit-learn's handwritten digits
(``sklearn.datasets.load_digits``: 1,797 scans of 8 x 8 pixels, shipped with the package) at
8 x 8 pixels, a 4 x 4 grid of 2 x 2 patches. The held-out digits are then upsampled (bilinear) to
larger sizes, so the same patch size gives a larger grid, and each model is scored on them as
they are: the sine-cosine table and RoPE take the new coordinates, the learned grid is resampled
by bicubic interpolation, and ``"rope-rescaled"`` (the RoPE model, tested differently) squeezes
the new coordinates into the trained range. No model is fine-tuned at the new size.

Everything runs on the CPU with one thread per process and fixed seeds::

    python -m posenc.experiments vit-resolution --config full --output results.json
"""

from __future__ import annotations

import json
import math
import multiprocessing
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
from torch import Tensor
from torch.nn import functional

from posenc._checks import check_choice, check_int
from posenc.experiments._results import read_json, versions, write_json
from posenc.tiny_vit import TinyViT

#: The position methods compared: TinyViT's first four, and RoPE with coordinates rescaled to the trained range.
METHODS = ("none", "learned", "sinusoidal", "rope", "rope-rescaled")
#: Every method `build_model` knows: a TinyViT position, or one of these settings of it. The
#: test-time variants of ``"rope"`` (rescaled, NTK, RIFLEx) train the same model as ``"rope"``.
VARIANTS: dict[str, dict[str, Any]] = {
    "rope-rescaled": {"position": "rope", "rope_rescale": True},
    "rope-ntk": {"position": "rope", "rope_extension": "ntk"},
    "rope-riflex": {"position": "rope", "rope_extension": "riflex"},
    "rope-dinov3": {"position": "rope-normalized", "coordinate_rescale": 2.0},  # the released models' setting
    # with DINOv3's per-axis jitter too (off in the released models): each axis stretched by its own
    # log-uniform factor in [1/2, 2], on top of the shared rescale draw
    "rope-dinov3-jitter": {"position": "rope-normalized", "coordinate_rescale": 2.0, "coordinate_jitter": 2.0},
}
#: The committed results of the full configuration; the page and its figure read this file.
RESULTS_PATH = Path(__file__).resolve().parent / "results" / "vit_resolution.json"


# --8<-- [start:config]
@dataclass(frozen=True)
class Config:
    """Everything that decides the numbers of one run."""

    name: str
    methods: tuple[str, ...]
    # one model per (method, seed); the data split is the same for all
    seeds: tuple[int, ...]
    train_size: int  # pixels per side when training (the digits' own 8)
    eval_sizes: tuple[int, ...]  # pixels per side of the upsampled test images
    patch_size: int
    dim: int
    num_heads: int
    num_layers: int
    batch_size: int
    epochs: int
    # AdamW, linear warm-up for one epoch, then cosine decay to zero
    learning_rate: float
    weight_decay: float
    test_fraction: float  # held out, stratified by class, split seed 0
    # None: every training digit (the tiny config uses a few)
    max_train: int | None

    def as_dict(self) -> dict[str, Any]:
        return json.loads(json.dumps(asdict(self)))


CONFIGS = {
    "full": Config(name="full", methods=METHODS, seeds=(0, 1, 2, 3, 4),
                   train_size=8, eval_sizes=(8, 12, 16), patch_size=2,
                   dim=32, num_heads=2, num_layers=2, batch_size=64,
                   epochs=40, learning_rate=3e-3, weight_decay=0.05,
                   test_fraction=0.25, max_train=None),
    "tiny": Config(name="tiny", methods=METHODS, seeds=(0,), train_size=8,
                   eval_sizes=(8, 12), patch_size=2, dim=16, num_heads=2,
                   num_layers=1, batch_size=32, epochs=1, learning_rate=3e-3,
                   weight_decay=0.05, test_fraction=0.25, max_train=96),
}
# --8<-- [end:config]


def load_data(config: Config) -> dict[str, Tensor]:
    """The digits as ``[n, 1, 8, 8]`` floats in [0, 1] and their labels, split into train and test."""
    from sklearn.datasets import load_digits  # type: ignore[import-untyped]
    from sklearn.model_selection import train_test_split  # type: ignore[import-untyped]

    digits = load_digits()
    images = torch.tensor(digits.images, dtype=torch.float32).unsqueeze(1) / 16.0
    labels = torch.tensor(digits.target, dtype=torch.long)
    train_idx, test_idx = train_test_split(range(len(labels)), test_size=config.test_fraction,
                                           stratify=digits.target, random_state=0)
    train_idx = list(train_idx)[: config.max_train] if config.max_train is not None else list(train_idx)
    return {"train_images": images[train_idx], "train_labels": labels[train_idx],
            "test_images": images[list(test_idx)], "test_labels": labels[list(test_idx)]}


def upsample(images: Tensor, size: int) -> Tensor:
    """Images resized to ``size x size`` pixels (bilinear); the same images at size 8."""
    if images.shape[-1] == size:
        return images
    return functional.interpolate(images, size=(size, size), mode="bilinear", align_corners=False)


def build_model(method: str, config: Config, seed: int) -> TinyViT:
    """A TinyViT position by name, or a setting of one in `VARIANTS`: ``"rope-rescaled"`` is
    ``position="rope"`` with ``rope_rescale=True``, the same model when trained, other
    coordinates on a larger grid."""
    torch.manual_seed(seed)
    settings = VARIANTS.get(method, {"position": method})
    return TinyViT(config.train_size, config.patch_size, 10, config.dim, config.num_heads, config.num_layers,
                   **settings)


@torch.no_grad()
def accuracy(model: TinyViT, images: Tensor, labels: Tensor) -> float:
    model.eval()
    predictions = torch.cat([model(chunk).argmax(-1) for chunk in images.split(256)])
    return float((predictions == labels).double().mean())


def train_and_evaluate(method: str, seed: int, config: Config) -> dict[str, Any]:
    """Train one model and score it at every evaluation size."""
    method = check_choice("method", method, config.methods)
    seed = check_int("seed", seed, minimum=0)
    data = load_data(config)
    model = build_model(method, config, seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay)
    n = data["train_labels"].numel()
    per_epoch = math.ceil(n / config.batch_size)
    total = per_epoch * config.epochs
    generator = torch.Generator().manual_seed(1000 + seed)
    cpu, step = time.process_time(), 0
    model.train()
    for _ in range(config.epochs):
        for batch in torch.randperm(n, generator=generator).split(config.batch_size):
            warm = min(1.0, (step + 1) / per_epoch)
            scale = warm * 0.5 * (1 + math.cos(math.pi * step / total))
            for group in optimizer.param_groups:
                group["lr"] = config.learning_rate * scale
            loss = functional.cross_entropy(model(data["train_images"][batch]), data["train_labels"][batch])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            step += 1
    scores = [round(accuracy(model, upsample(data["test_images"], size), data["test_labels"]), 4)
              for size in config.eval_sizes]
    return {"accuracy": scores, "final_loss": round(loss.item(), 4),
            "cpu_seconds": round(time.process_time() - cpu, 1)}


def _worker(job: tuple[str, int, Config]) -> tuple[str, int, dict[str, Any]]:
    method, seed, config = job
    torch.set_num_threads(1)
    return method, seed, train_and_evaluate(method, seed, config)


def run(config: Config, *, workers: int = 2, progress: bool = False) -> dict[str, Any]:
    """Train and score every (method, seed) of ``config``; the results as a JSON-ready dict."""
    from tqdm import tqdm

    workers = check_int("workers", workers, minimum=1)
    jobs = [(method, seed, config) for method in config.methods for seed in config.seeds]
    started = time.perf_counter()
    done: dict[tuple[str, int], dict[str, Any]] = {}
    with tqdm(total=len(jobs), desc="vit-resolution", file=sys.stderr, disable=not progress,
              unit="model") as bar:
        if workers == 1:
            threads = torch.get_num_threads()
            try:
                for job in jobs:
                    method, seed, entry = _worker(job)
                    done[method, seed] = entry
                    bar.update(1)
            finally:
                torch.set_num_threads(threads)
        else:
            with multiprocessing.get_context("spawn").Pool(min(workers, len(jobs))) as pool:
                for method, seed, entry in pool.imap_unordered(_worker, jobs):
                    done[method, seed] = entry
                    bar.update(1)
    data = load_data(config)
    methods = {}
    for method in config.methods:
        runs = [done[method, seed] for seed in config.seeds]
        by_size = list(zip(*(entry["accuracy"] for entry in runs)))  # [size][seed]
        methods[method] = {
            "accuracy": [list(values) for values in by_size],
            "mean": [round(sum(values) / len(values), 4) for values in by_size],
            "parameters": sum(p.numel() for p in build_model(method, config, 0).parameters()),
            "cpu_seconds": round(sum(entry["cpu_seconds"] for entry in runs), 1),
        }
    return {
        "experiment": "vit_resolution",
        "config": config.as_dict(),
        "data": {"source": "sklearn.datasets.load_digits", "images": 1797,
                 "train_images": int(data["train_labels"].numel()), "test_images": int(data["test_labels"].numel())},
        "grids": [size // config.patch_size for size in config.eval_sizes],
        "versions": versions("sklearn"),
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
    """Test accuracy (%) per method and image size: the mean over seeds, and the range."""
    sizes = results["config"]["eval_sizes"]
    lines = [f"{'method':<14}" + "".join(f"{f'{s}x{s} px':>16}" for s in sizes)]
    for method, entry in results["methods"].items():
        cells = [f"{100 * mean:5.1f} ({100 * min(v):.0f}-{100 * max(v):.0f})"
                 for mean, v in zip(entry["mean"], entry["accuracy"])]
        lines.append(f"{method:<14}" + "".join(f"{cell:>16}" for cell in cells))
    return lines
