"""Benchmark: greedy decoding with posenc's KV cache against recomputing the whole prefix.

CPU, float32, one thread, the tiny model of the length-extrapolation experiment (103 token ids,
width 64, 4 heads, 2 layers, RoPE), untrained (the time does not depend on the weights). From a
one-token prompt it decodes N = 64, 128 and 256 tokens greedily, two ways:

* ``cache``: `TinyTransformer.generate`, one token per step through a `posenc.KVCache`: each
  step runs the model on one token and attends to the cached keys, O(N) work per step;
* ``recompute``: at each step, the model runs on the whole prefix, O(N²) attention and O(N) of
  everything else per step, as a loop without a cache does.

Both give the same tokens (checked). The ratio recompute / cache must grow with N.
Timings are printed, never asserted: they depend on the machine and on its load. Each case is
timed in interleaved rounds and the best round is shown.
Run with ``make bench`` or ``.venv/bin/python benchmarks/bench_decode.py [--repeats N]``.
"""

from __future__ import annotations

import argparse
import time

import torch
from torch import Tensor

from posenc import TinyTransformer

LENGTHS = (64, 128, 256)


@torch.no_grad()
def recompute(model: TinyTransformer, prompt: Tensor, new_tokens: int) -> Tensor:
    out = prompt
    for _ in range(new_tokens):
        out = torch.cat([out, model(out)[:, -1].argmax(-1, keepdim=True)], dim=1)
    return out


def best_time(function: object, repeats: int) -> float:
    assert callable(function)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = TinyTransformer(103, 64, 4, 2, position="rope").eval()
    prompt = torch.tensor([[1]])
    print(f"{'tokens':>7}{'cache (s)':>11}{'recompute (s)':>15}{'ratio':>8}")
    for n in LENGTHS:
        with torch.no_grad():
            assert torch.equal(model.generate(prompt, n), recompute(model, prompt, n))
        cached = best_time(lambda: model.generate(prompt, n), args.repeats)
        full = best_time(lambda: recompute(model, prompt, n), args.repeats)
        print(f"{n:>7}{cached:>11.4f}{full:>15.4f}{full / cached:>8.2f}")


if __name__ == "__main__":
    main()
