"""Parity of the explorer's formulas with posenc (float64): the sinusoidal table, ALiBi's slopes
and T5's buckets, and the helpers every parity check shares (:class:`Checker`, the in-page calls,
the comparison of lists). The RoPE frequencies are in ``explorer_rope_parity``; see
``check_explorer``'s docstring (1) for what "the same" means.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import torch

from posenc.alibi import alibi_slopes
from posenc.sinusoidal import sinusoidal_encoding
from posenc.relative import t5_relative_position_bucket

__all__ = ["TOLERANCE", "Checker", "check_alibi", "check_sinusoidal", "check_t5", "t5_bucket_exact"]

TOLERANCE = 1e-9

CALL_ALL = """([name, calls]) => calls.map((args) => {
  try { return {ok: true, value: window.posencExplorer[name](...args)}; }
  catch (error) { return {ok: false, error: `${error.name}: ${error.message}`}; }
})"""


class Checker:
    def __init__(self) -> None:
        self.problems: list[str] = []
        self.counts: dict[str, int] = {}

    def fail(self, where: str, detail: str) -> None:
        self.problems.append(f"{where}: {detail}")

    def count(self, what: str, n: int = 1) -> None:
        self.counts[what] = self.counts.get(what, 0) + n


def _call(page: Any, name: str, calls: list[list[Any]]) -> list[dict[str, Any]]:
    return list(page.evaluate(CALL_ALL, [name, calls]))


def _relative_error(ours: float, theirs: float, floor: float = 0.0) -> float:
    return abs(ours - theirs) / max(abs(theirs), floor) if theirs or floor else abs(ours)


def _compare_lists(check: Checker, where: str, js: list[Any], py: list[float], floor: float = 0.0) -> None:
    if len(js) != len(py):
        check.fail(where, f"{len(js)} values from JavaScript, {len(py)} from posenc")
        return
    worst = max((_relative_error(a, b, floor) for a, b in zip(js, py)), default=0.0)
    if not worst < TOLERANCE:
        check.fail(where, f"relative error {worst:.3g} >= {TOLERANCE}")


def check_sinusoidal(page: Any, check: Checker) -> None:
    grid = [(p, d, b) for p in (1, 7, 50) for d in (2, 4, 6, 16, 128) for b in (100.0, 10000.0, 12345.6)]
    results = _call(page, "sinusoidalEncoding", [list(args) for args in grid])
    for (positions, dim, base), result in zip(grid, results):
        where = f"sinusoidalEncoding({positions}, {dim}, {base})"
        if not result["ok"]:
            check.fail(where, result["error"])
            continue
        expected = sinusoidal_encoding(positions, dim, base=base, dtype=torch.float64)
        rows = result["value"]
        if [len(rows), *(len(r) for r in rows[:1])] != [positions, dim]:
            check.fail(where, f"shape {len(rows)} x {len(rows[0]) if rows else 0}, expected {positions} x {dim}")
            continue
        _compare_lists(check, where, [v for row in rows for v in row], expected.flatten().tolist(), floor=1.0)
        check.count("sinusoidalEncoding values", positions * dim)
    for bad in ([3, 5, 10000], [3, 0, 10000], [-1, 4, 10000], [3, 4, 1]):
        if _call(page, "sinusoidalEncoding", [bad])[0]["ok"]:
            check.fail(f"sinusoidalEncoding{tuple(bad)}", "accepted bad input")


def check_alibi(page: Any, check: Checker) -> None:
    counts = list(range(1, 81)) + [96, 128, 255, 256, 257]
    for heads, result in zip(counts, _call(page, "alibiSlopes", [[n] for n in counts])):
        where = f"alibiSlopes({heads})"
        if not result["ok"]:
            check.fail(where, result["error"])
            continue
        _compare_lists(check, where, result["value"], alibi_slopes(heads, dtype=torch.float64).tolist())
        check.count("alibiSlopes values", heads)
    for bad in ([0], [2.5], ["8"]):
        if _call(page, "alibiSlopes", [bad])[0]["ok"]:
            check.fail(f"alibiSlopes({bad[0]!r})", "accepted bad input")


def t5_bucket_exact(offset: int, bidirectional: bool, num_buckets: int, max_distance: int) -> int:
    """T5's bucket in exact arithmetic: floor(L log(n/e) / log(M/e)) >= s  <=>  (n/e)^L >= (M/e)^s."""
    buckets = num_buckets // 2 if bidirectional else num_buckets
    first = buckets if bidirectional and offset > 0 else 0
    distance = abs(offset) if bidirectional else max(-offset, 0)
    exact = buckets // 2
    if distance < exact:
        return first + distance
    steps = buckets - exact
    s = 0
    while s + 1 < steps and Fraction(distance, exact) ** steps >= Fraction(max_distance, exact) ** (s + 1):
        s += 1
    return first + exact + s


def _near_boundary(offset: int, bidirectional: bool, num_buckets: int, max_distance: int) -> bool:
    """Whether the offset's log-bucket position (b - e) ln(n/e) / ln(M/e) lies within float32 rounding
    of an integer: there the bucket depends on how float32 rounds, and on the float32 log used
    (PyTorch's and a correctly rounded one differ by one unit in the last place for some inputs; see
    the T5 section of docs/relative.md). Float32 keeps about 7 digits: 1e-6 covers a few roundings."""
    buckets = num_buckets // 2 if bidirectional else num_buckets
    distance = abs(offset) if bidirectional else max(-offset, 0)
    exact = buckets // 2
    if distance < exact:
        return False
    position = (buckets - exact) * math.log(distance / exact) / math.log(max_distance / exact)
    return abs(position - round(position)) <= 1e-6 * max(1.0, abs(position))


T5_CONFIGS = [
    (True, 32, 128), (False, 32, 128), (True, 64, 256), (False, 16, 64), (True, 8, 20), (False, 9, 128),
    (False, 2, 5), (True, 18, 128), (False, 32, 939), (True, 34, 27), (False, 36, 392), (True, 4, 3),
]


def check_t5(page: Any, check: Checker) -> None:
    offsets = list(range(-1000, 1001))
    boundary = 0
    for bidirectional, num_buckets, max_distance in T5_CONFIGS:
        where = f"t5RelativePositionBucket(..., {bidirectional}, {num_buckets}, {max_distance})"
        calls = [[o, bidirectional, num_buckets, max_distance] for o in offsets]
        results = _call(page, "t5RelativePositionBucket", calls)
        expected = t5_relative_position_bucket(torch.tensor(offsets), bidirectional=bidirectional,
                                               num_buckets=num_buckets, max_distance=max_distance).tolist()
        for offset, result, ours in zip(offsets, results, expected):
            if not result["ok"]:
                check.fail(f"{where} at offset {offset}", result["error"])
                break
            js = result["value"]
            if js == ours:
                continue
            exact = t5_bucket_exact(offset, bidirectional, num_buckets, max_distance)
            if abs(js - ours) <= 1 and abs(js - exact) <= 1 and _near_boundary(offset, bidirectional, num_buckets, max_distance):
                boundary += 1  # on a float32 boundary: either bucket next to it is accepted
                continue
            check.fail(f"{where} at offset {offset}", f"JavaScript {js}, posenc {ours}, exact arithmetic {exact}")
            break
        check.count("t5RelativePositionBucket values", len(offsets))
    if boundary:
        print(f"  T5: {boundary} offsets on a float32 boundary where the JavaScript differs from posenc "
              "(accepted: one of the two buckets that meet there)")
    for bad in ([1, True, 5, 128], [1, True, 32, 8], [1.5, True, 32, 128], [1, 1, 32, 128]):
        if _call(page, "t5RelativePositionBucket", [bad])[0]["ok"]:
            check.fail(f"t5RelativePositionBucket{tuple(bad)}", "accepted bad input")
