"""Benchmark: PaTH's logits by the direct form, by dense block products, and by the compact form.

CPU, float32, one thread; forward and backward (a training step's work) of the logits of q, k,
the unit vectors w and the factors beta, at the training shapes of the inside-attention study's
configurations (`posenc.experiments.inside.CONFIGS`: batch, heads, L, head width):

* ``direct``: `posenc.path_attention.path_logits`, one pass per key;
* ``dense blocks``: the form posenc had before the compact one (written out below): within a
  block the direct sweep, across blocks each block's product as a dense d x d matrix, one pass
  per pair of blocks, and loops over the keys of each block to build the products;
* ``compact``: `posenc.path_attention.path_logits_blockwise`, each block's product as
  I - W^T T B W, every block at once, one pass per distance between blocks.

Then one training step (forward and backward) of the study's PaTH model, with the model's scores
by the direct form and by its own (the compact form, blocks of ``BLOCK``).

Timed in the same run, in interleaved rounds; the tables show the best round and each form's
speed as the direct form's time over its own. Timings are printed, never asserted: they depend on
the machine and on its load. Run with ``make bench`` or
``.venv/bin/python benchmarks/bench_path.py [--repeats N] [--configs tiny full large]``.
"""

from __future__ import annotations

import argparse
import math
import statistics
from collections.abc import Callable
from unittest import mock

import torch

# beside this script: every case once per round, round after round
from bench_rope import measure
from torch import Tensor

from posenc.experiments.inside import CONFIGS
from posenc.model import TinyTransformer
from posenc.path_attention import (
    BLOCK,
    HouseholderPath,
    _sweep,
    path_logits,
    path_logits_blockwise,
)


def dense_blocks(q: Tensor, k: Tensor, w: Tensor, beta: Tensor, block: int) -> Tensor:
    """PaTH logits with each block's product a dense d x d matrix (as many queries as keys)."""
    length = k.shape[-2]
    starts = range(0, length, block)
    spans = [(s, min(s + block, length)) for s in starts]
    carried = [_carry(k[..., s:e, :], w[..., s:e, :], beta[..., s:e], keys=True) for s, e in spans]
    products = [_product(w[..., s:e, :], beta[..., s:e]) for s, e in spans]
    out = q.new_full((*q.shape[:-1], length), float("-inf"))
    for b, (s, e) in enumerate(spans):
        out[..., s:e, s:e] = _sweep(q[..., s:e, :], k[..., s:e, :], w[..., s:e, :], beta[..., s:e])
        u = _carry(q[..., s:e, :], w[..., s:e, :], beta[..., s:e], keys=False)  # H_s ... H_i q_i
        for c in range(b - 1, -1, -1):  # earlier blocks, newest first
            start, end = spans[c]
            out[..., s:e, start:end] = u @ carried[c].transpose(-2, -1)
            u = u @ products[c]
    return out


def _householder(x: Tensor, w: Tensor, beta: Tensor) -> Tensor:
    return x - beta * (x * w).sum(-1, keepdim=True) * w


def _carry(x: Tensor, w: Tensor, beta: Tensor, *, keys: bool) -> Tensor:
    """Keys to the end of their block (each later H of it), or queries to its start (H_i down to H_s)."""
    index = torch.arange(x.shape[-2])[:, None]
    order = range(1, x.shape[-2]) if keys else range(x.shape[-2] - 1, -1, -1)
    for t in order:
        moved = _householder(x, w[..., t, None, :], beta[..., t, None, None])
        x = torch.where(index < t if keys else index >= t, moved, x)
    return x


def _product(w: Tensor, beta: Tensor) -> Tensor:
    """The dense H_(e-1) ... H_s, built one transform at a time on the rows of its transpose."""
    d = w.shape[-1]
    product = torch.eye(d, dtype=w.dtype).expand(*w.shape[:-2], d, d)
    for t in range(w.shape[-2]):
        product = _householder(product.transpose(-2, -1), w[..., t, None, :],
                               beta[..., t, None, None]).transpose(-2, -1)
    return product


def inputs(shape: tuple[int, int, int, int], dtype: torch.dtype) -> list[Tensor]:
    batch, heads, length, width = shape
    g = torch.Generator().manual_seed(0)
    q, k = (torch.randn(batch, heads, length, width, generator=g, dtype=dtype) for _ in range(2))
    w = torch.nn.functional.normalize(torch.randn(batch, heads, length, width, generator=g, dtype=dtype), dim=-1)
    beta = 2 * torch.rand(batch, heads, length, generator=g, dtype=dtype)
    return [q, k, w, beta]


def forms(block: int) -> dict[str, Callable[..., Tensor]]:
    return {
        "direct": path_logits,
        "dense blocks": lambda q, k, w, beta: dense_blocks(q, k, w, beta, block),
        "compact": lambda q, k, w, beta: path_logits_blockwise(q, k, w, beta, block=block),
    }


def check_agreement(shape: tuple[int, int, int, int], block: int) -> float:
    """The three forms' float64 logits, before anything is timed: the largest difference."""
    args = inputs(shape, torch.float64)
    direct, *others = (form(*args) for form in forms(block).values())
    finite = direct.isfinite()
    worst = max(float((other - direct)[finite].abs().max()) for other in others)
    assert worst < 1e-9 and all(torch.equal(o.isfinite(), finite) for o in others), worst
    return worst


def training_work(form: Callable[..., Tensor], args: list[Tensor]) -> Callable[[], None]:
    """Forward and backward through the logits (the masked entries left out of the sum)."""
    leaves = [a.clone().requires_grad_() for a in args]

    def run() -> None:
        logits = form(*leaves)
        logits.masked_fill(logits.isinf(), 0.0).sum().backward()
    return run


def model_steps(config_name: str) -> dict[str, Callable[[], None]]:
    """One forward and backward of the study's PaTH model: its scores direct, or its own."""
    config = CONFIGS[config_name]
    torch.manual_seed(0)
    model = TinyTransformer(96, config.dim, config.num_heads, config.num_layers, position="path")
    tokens = torch.randint(0, 96, (config.batch_size, config.train_length))

    def direct_scores(self: HouseholderPath, q: Tensor, k: Tensor) -> Tensor:
        d = self.head_dim
        return _sweep(q, k[..., :d], k[..., d:2 * d], k[..., 2 * d]) / math.sqrt(d)

    def step() -> None:
        model.zero_grad()
        model(tokens).sum().backward()

    def direct_step() -> None:
        with mock.patch.object(HouseholderPath, "_scores", direct_scores):
            step()
    return {"direct": direct_step, "compact": step}


def report(title: str, times: dict[str, list[float]]) -> None:
    print(title)
    print(f"  {'form':<14}{'best ms':>10}{'median ms':>11}{'direct / this':>15}")
    direct = min(times["direct"])
    for name, t in times.items():
        print(f"  {name:<14}{min(t) * 1e3:>10.1f}{statistics.median(t) * 1e3:>11.1f}{direct / min(t):>14.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--configs", nargs="+", default=["tiny", "full", "large"], choices=sorted(CONFIGS))
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(f"torch {torch.__version__}, 1 thread, float32, best of {args.repeats} rounds; block {BLOCK}")
    for name in args.configs:
        config = CONFIGS[name]
        shape = (config.batch_size, config.num_heads, config.train_length, config.dim // config.num_heads)
        worst = check_agreement(shape, BLOCK)
        data = inputs(shape, torch.float32)
        cases = {form_name: training_work(form, data) for form_name, form in forms(BLOCK).items()}
        report(f"{name}: logits [batch, heads, L, d] = {list(shape)}, forward + backward "
               f"(float64 forms agree to {worst:.0e})", measure(cases, args.repeats))
        report(f"{name}: one training step of the study's PaTH model ({config.num_layers} layers, "
               f"width {config.dim})", measure(model_steps(name), args.repeats))


if __name__ == "__main__":
    main()
