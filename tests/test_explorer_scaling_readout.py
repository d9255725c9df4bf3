"""The scaling widget's readout compares a pair with itself (reader's review X10).

Under p-RoPE the last pairs stop turning, and the readout once set the last
pair's wavelength before scaling beside the slowest turning pair's after it
(54,400 against 2,180 for head 128, base 10,000, p = 1/2: pairs 63 and 31).
`slowestTurning` (formulas.js) is run under node on posenc's frequencies and
checked against the wavelengths written out from the formula
2 pi base^(2i/d) times the factor, in float64.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from posenc.rope_scaling import rope_inverse_frequencies
from tests.test_explorer_ports import needs_node, run_js

CALL = "(before, after) => window.posencExplorer.slowestTurning(before, after)"


def _wavelengths(inverse: list[float]) -> list[float | None]:
    # JSON has no infinity: a pair that does not turn goes over as null,
    # which Number.isFinite rejects as it rejects Infinity
    return [2 * math.pi / t if t > 0 else None for t in inverse]


@needs_node
@pytest.mark.parametrize("fraction", [0.25, 0.5, 0.75])
def test_p_rope_compares_the_slowest_turning_pair(tmp_path: Path,
                                                  fraction: float) -> None:
    dim, base, factor = 128, 10_000.0, 4.0
    before = _wavelengths(rope_inverse_frequencies(dim, base=base).tolist())
    after = _wavelengths(rope_inverse_frequencies(dim, base=base, scaling={
        "type": "proportional", "factor": factor,
        "partial_rotary_factor": fraction}).tolist())
    got = run_js(tmp_path, CALL, before, after)
    turning = int(fraction * dim / 2)
    pair = turning - 1
    assert got["pair"] == pair and got["stillFrom"] == turning
    by_hand = 2 * math.pi * base ** (2 * pair / dim)
    assert got["before"] == pytest.approx(by_hand, rel=1e-12)
    assert got["after"] == pytest.approx(by_hand * factor, rel=1e-12)


@needs_node
def test_every_pair_turning_compares_the_last(tmp_path: Path) -> None:
    before = [1.0, 2.0, 3.0]
    after = [1.0, 4.0, 9.0]
    assert run_js(tmp_path, CALL, before, after) == {
        "pair": 2, "before": 3.0, "after": 9.0, "stillFrom": None}
