"""Benchmark: posenc.apply_rope against the common eager RoPE formulation and a plain copy.

CPU, float32, q and k of shape [1, 32, 4096, 128] (one sequence of 4096 tokens, 32 heads of 128).
Timed in the same run, in interleaved rounds; the table shows the best round (the least disturbed
by other processes) and the median:

* ``copy``: ``q.clone(), k.clone()``, the memory traffic any out-of-place op must pay;
* ``rotate_half``: cos/sin tables of shape [seq, dim] precomputed once (not timed), then
  ``q * cos + rotate_half(q) * sin`` and the same for k, as in Hugging Face's Llama code;
* ``apply_rope``: ``apply_rope(q), apply_rope(k)`` in each layout, including the computation of its
  cos/sin tables (half: strided multiply and fused multiply-add per half; interleaved: one complex
  multiply over the pairs read as complex numbers);
* ``apply_rope`` with ``rotary_dim=32`` (a quarter of each head turns, as GPT-NeoX), against the
  same copy;
* ``RotaryEmbedding``: ``rotary(q, k)`` with its table already cached.

Targets: ``apply_rope`` at least 2x faster than ``rotate_half`` and within 1.5x of ``copy``.
Timings are printed, never asserted: they depend on the machine and on its load.
Run with ``make bench`` or ``.venv/bin/python benchmarks/bench_rope.py [--repeats N]``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import torch
from torch import Tensor

from posenc.rope import RotaryEmbedding, apply_rope, rope_inverse_frequencies

SHAPE = (1, 32, 4096, 128)
PARTIAL = 32


def rotate_half(x: Tensor) -> Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def eager_tables(seq: int, dim: int) -> tuple[Tensor, Tensor]:
    """cos and sin [seq, dim], each frequency repeated for both halves (the rotate_half layout)."""
    angles = torch.arange(seq, dtype=torch.float32)[:, None] * rope_inverse_frequencies(dim).float()[None, :]
    doubled = torch.cat((angles, angles), dim=-1)
    return doubled.cos(), doubled.sin()


def eager_rope(q: Tensor, k: Tensor, cos: Tensor, sin: Tensor) -> tuple[Tensor, Tensor]:
    return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin


def measure(cases: dict[str, Callable[[], object]], repeats: int) -> dict[str, list[float]]:
    """Run every case once per round, round after round, so that a burst of load from other
    processes hits all of them alike; return each case's times in seconds."""
    for function in cases.values():
        function()  # warm-up: allocator, thread pool
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(repeats):
        for name, function in cases.items():
            start = time.perf_counter()
            function()
            times[name].append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()

    torch.manual_seed(0)
    q, k = torch.randn(SHAPE), torch.randn(SHAPE)
    seq, dim = SHAPE[-2], SHAPE[-1]
    cos, sin = eager_tables(seq, dim)
    rotary = RotaryEmbedding(dim)
    rotary(q, k)  # fill the cache

    # The formulations agree before anything is timed.
    reference = eager_rope(q, k, cos, sin)
    ours = (apply_rope(q), apply_rope(k))
    worst = max(float((a - b).abs().max()) for a, b in zip(ours, reference, strict=True))
    assert worst < 1e-3, f"apply_rope and the eager formulation disagree by {worst}"

    cases: dict[str, Callable[[], object]] = {
        "copy (clone q, k)": lambda: (q.clone(), k.clone()),
        "rotate_half (eager)": lambda: eager_rope(q, k, cos, sin),
        "apply_rope half": lambda: (apply_rope(q), apply_rope(k)),
        "apply_rope interleaved": lambda: (apply_rope(q, layout="interleaved"), apply_rope(k, layout="interleaved")),
        f"apply_rope rd={PARTIAL} half": lambda: (apply_rope(q, rotary_dim=PARTIAL), apply_rope(k, rotary_dim=PARTIAL)),
        f"apply_rope rd={PARTIAL} intl": lambda: (apply_rope(q, layout="interleaved", rotary_dim=PARTIAL),
                                                  apply_rope(k, layout="interleaved", rotary_dim=PARTIAL)),
        "RotaryEmbedding half": lambda: rotary(q, k),
    }
    results = {name: (min(t), statistics.median(t)) for name, t in measure(cases, args.repeats).items()}

    copy_time = results["copy (clone q, k)"][0]
    eager_time = results["rotate_half (eager)"][0]
    print(f"q, k: {list(SHAPE)} float32, torch {torch.__version__}, {torch.get_num_threads()} threads, "
          f"best of {args.repeats}; max |apply_rope - eager| = {worst:.1e}")
    print(f"{'method':<26}{'best ms':>9}{'median ms':>11}{'vs copy':>9}{'eager / this':>14}")
    for name, (best, median) in results.items():
        print(f"{name:<26}{best * 1e3:>9.1f}{median * 1e3:>11.1f}{best / copy_time:>8.2f}x{eager_time / best:>13.2f}x")
    for layout in ("half", "interleaved"):
        best = results[f"apply_rope {layout}"][0]
        print(f"apply_rope {layout}: {eager_time / best:.2f}x faster than rotate_half (target >= 2), "
              f"{best / copy_time:.2f}x the copy time (target <= 1.5)")


if __name__ == "__main__":
    main()
