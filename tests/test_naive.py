"""The naive first attempts of the first-principles chapter."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc import sinusoidal_encoding
from posenc.naive import counting, normalized_counting, sine_cosine_pairs, single_sine


def test_counting_is_the_position() -> None:
    assert counting(5).flatten().tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert counting(torch.tensor([7, 100000])).flatten().tolist() == [7.0, 100000.0]
    assert counting(3).shape == (3, 1) and counting(3).dtype == torch.float64


@pytest.mark.parametrize("length", [1, 2, 3, 4, 10])
def test_normalized_counting_spans_zero_to_one(length: int) -> None:
    values = normalized_counting(length).flatten().tolist()
    expected = [0.0] if length == 1 else [p / (length - 1) for p in range(length)]
    assert values == pytest.approx(expected, abs=1e-15)


def test_normalized_counting_gives_position_one_different_values() -> None:
    # the second word: 1.0 in a 2-word sentence, 1/3 in a 4-word one
    assert normalized_counting(2)[1, 0] == 1.0
    assert float(normalized_counting(4)[1, 0]) == pytest.approx(1 / 3)


def test_single_sine() -> None:
    values = single_sine(4).flatten().tolist()
    assert values == pytest.approx([math.sin(p) for p in range(4)], abs=1e-15)
    assert single_sine(torch.tensor([2.0]), frequency=0.5).item() == pytest.approx(math.sin(1.0))


@settings(max_examples=30, deadline=None)
@given(
    positions=st.lists(st.floats(-1e4, 1e4), min_size=1, max_size=6),
    freqs=st.lists(st.floats(1e-4, 10.0), min_size=1, max_size=4),
)
def test_sine_cosine_pairs_match_loops(positions: list[float], freqs: list[float]) -> None:
    table = sine_cosine_pairs(torch.tensor(positions, dtype=torch.float64), freqs)
    for r, p in enumerate(positions):
        for j, f in enumerate(freqs):
            assert float(table[r, 2 * j]) == pytest.approx(math.sin(f * p), abs=1e-9)
            assert float(table[r, 2 * j + 1]) == pytest.approx(math.cos(f * p), abs=1e-9)


def test_geometric_pairs_are_the_sinusoidal_encoding() -> None:
    freqs = [10000.0 ** (-2 * i / 8) for i in range(4)]
    torch.testing.assert_close(sine_cosine_pairs(20, freqs), sinusoidal_encoding(20, 8, dtype=torch.float64))


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: counting(-2), ValueError, "positions must be an integer >= 0, got -2"),
        (lambda: counting(2, dtype=torch.int32), TypeError, "dtype must be a floating-point"),
        (lambda: normalized_counting(0), ValueError, "seq_len must be an integer >= 1, got 0"),
        (lambda: normalized_counting(2.5), TypeError, "seq_len must be an integer, got float"),
        (lambda: single_sine(3, frequency=0.0), ValueError, "frequency must be > 0, got 0.0"),
        (lambda: single_sine(torch.ones(2, 2)), ValueError, "positions must have 1 dimensions"),
        (lambda: sine_cosine_pairs(3, []), ValueError, "frequencies must hold at least one"),
        (lambda: sine_cosine_pairs(3, [1.0, -0.5]), ValueError, r"frequencies must all be > 0, got \[1.0, -0.5\]"),
        (lambda: sine_cosine_pairs(3, "1"), TypeError, "frequencies must be a sequence of numbers"),
        (lambda: sine_cosine_pairs(3, [1.0, "a"]), TypeError, r"frequencies\[\] must be a real number, got str"),
    ],
)
def test_bad_inputs(call: object, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        call()  # type: ignore[operator]
