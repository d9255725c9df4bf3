"""Randomized positions (Ruoss et al. 2023, arXiv 2305.16843): a sorted, uniformly random subset
of 0 .. max_len - 1, by both code paths (a permutation, and Floyd's algorithm for huge ranges)."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import posenc.randomized as randomized
from posenc import randomized_positions


@settings(max_examples=40, deadline=None)
@given(max_len=st.integers(1, 300), fraction=st.floats(0.0, 1.0), seed=st.integers(0, 2**16))
def test_sorted_distinct_in_range(max_len: int, fraction: float, seed: int) -> None:
    seq_len = int(max_len * fraction)
    positions = randomized_positions(seq_len, max_len, generator=torch.Generator().manual_seed(seed))
    assert positions.dtype == torch.long and positions.shape == (seq_len,)
    assert bool((positions.diff() > 0).all())
    if seq_len:
        assert int(positions.min()) >= 0 and int(positions.max()) < max_len


def test_reproducible_with_a_generator() -> None:
    a = randomized_positions(10, 1000, generator=torch.Generator().manual_seed(7))
    b = randomized_positions(10, 1000, generator=torch.Generator().manual_seed(7))
    assert torch.equal(a, b)
    assert torch.equal(randomized_positions(5, 5), torch.arange(5))  # the whole range: no choice


@pytest.mark.parametrize("limit", [randomized._PERMUTATION_LIMIT, 0])
def test_every_position_equally_likely(limit: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # inclusion probability of each position is seq_len / max_len = 1/4 (both code paths)
    monkeypatch.setattr(randomized, "_PERMUTATION_LIMIT", limit)
    generator = torch.Generator().manual_seed(0)
    counts = torch.zeros(20)
    draws = 2000
    for _ in range(draws):
        counts[randomized_positions(5, 20, generator=generator)] += 1
    expected = draws * 5 / 20                      # 500, standard deviation about 19
    assert float((counts - expected).abs().max()) < 80


def test_huge_range_without_a_huge_table() -> None:
    positions = randomized_positions(8, 10**12, generator=torch.Generator().manual_seed(1))
    assert positions.shape == (8,) and bool((positions.diff() > 0).all()) and int(positions.max()) < 10**12


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="seq_len must be <= max_len"):
        randomized_positions(6, 5)
    with pytest.raises(ValueError, match="max_len"):
        randomized_positions(0, 0)
    with pytest.raises(TypeError, match="seq_len"):
        randomized_positions(2.0, 5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="seq_len"):
        randomized_positions(2**21, 2**40)
    with pytest.raises(ValueError, match="max_len"):
        randomized_positions(2, 10**400)
    with pytest.raises(TypeError, match="generator"):
        randomized_positions(2, 5, generator=0)  # type: ignore[arg-type]
