"""posenc.rope_base: Xu et al.'s B(m) and the lower bound of RoPE's base, against a plain-Python
reference and the values the paper publishes for head width 128."""

from __future__ import annotations

import math

import pytest
import torch

from posenc.rope_base import rope_base_context_length, rope_base_lower_bound, similarity_margin


def margin(m: int, dim: int, base: float) -> float:
    """B(m) written from the paper's formula, term by term in Python floats."""
    return sum(math.cos(m * base ** (-2 * i / dim)) for i in range(dim // 2))


def test_similarity_margin_is_the_sum_of_cosines() -> None:
    distances = torch.tensor([0, 1, 7, 63, 1000, 12345])
    for dim, base in ((16, 500.0), (128, 10000.0), (2, 3.0)):
        got = similarity_margin(distances, dim, base=base)
        assert got.dtype == torch.float64
        assert got.tolist() == pytest.approx([margin(m, dim, base) for m in distances.tolist()], abs=1e-9)
    assert similarity_margin(torch.tensor([0]), 16)[0].item() == 8.0  # every cosine is 1 at distance 0


@pytest.mark.parametrize(("dim", "base"), [(16, 50.0), (16, 500.0), (16, 2000.0), (32, 5000.0), (16, 1e6)])
def test_context_length_is_the_first_distance_with_a_negative_margin(dim: int, base: float) -> None:
    first = next((m for m in range(256) if margin(m, dim, base) < 0), 256)
    assert rope_base_context_length(dim, base, max_length=256) == first


def test_lower_bound_is_the_first_good_base_of_its_grid() -> None:
    # Brute force over the same grid (1 + step)^k with the reference margin: every base before the
    # answer fails at some distance below L, the answer holds at all of them.
    dim, length, step = 16, 64, 1e-2
    found = rope_base_lower_bound(dim, length, relative_step=step)
    k = round(math.log(found) / math.log1p(step))
    assert found == pytest.approx((1 + step) ** k, rel=1e-9)
    assert all(margin(m, dim, found) >= 0 for m in range(length))
    for j in range(1, k):
        base = (1 + step) ** j
        assert any(margin(m, dim, base) < 0 for m in range(length)), base


def test_lower_bound_of_the_studies() -> None:
    # head width 16 at L = 64 (full) and 32 at L = 256 (large); the finer the grid, the closer to the infimum
    fine = rope_base_lower_bound(16, 64, relative_step=1e-4)
    assert 1705 < fine < rope_base_lower_bound(16, 64) < 1708
    assert rope_base_context_length(16, fine, max_length=64) == 64
    assert rope_base_context_length(16, fine / (1 + 2e-4), max_length=64) < 64
    assert 2000 < rope_base_lower_bound(32, 256) < 2200


def test_good_bases_are_not_an_interval() -> None:
    # Just above the bound for dim 16, L 64 lies a band of bases that fail again (module docstring).
    assert rope_base_context_length(16, 1720.0, max_length=64) == 64
    assert rope_base_context_length(16, 2000.0, max_length=64) < 64
    assert rope_base_context_length(16, 2800.0, max_length=64) == 64


def test_the_paper_bound_for_head_width_128_at_1k() -> None:
    # Xu et al. (2024), section 4.3, Table 2 (plotted in Figure 1): 4.3e3 for a context of 1024.
    assert rope_base_lower_bound(128, 1024) == pytest.approx(4.3e3, rel=0.015)


@pytest.mark.slow
@pytest.mark.parametrize(("length", "published"), [(4096, 2.7e4), (8192, 8.4e4)])
def test_the_paper_bound_for_head_width_128_at_4k_and_8k(length: int, published: float) -> None:
    assert rope_base_lower_bound(128, length) == pytest.approx(published, rel=0.02)


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: similarity_margin(torch.arange(3), 7), ValueError, "dim must be a positive even integer"),
        (lambda: similarity_margin(torch.arange(3), 8, base=0.5), ValueError, "base must be >= 1.0"),
        (lambda: similarity_margin(torch.tensor([True]), 8), TypeError, "distances must hold real"),
        (lambda: rope_base_context_length(8, 100.0, max_length=0), ValueError, "max_length must be an integer >= 1"),
        (lambda: rope_base_lower_bound(8, 2**40), ValueError, "context_length must be an integer <="),
        (lambda: rope_base_lower_bound(2**20, 2**16), ValueError, "more than"),
        (lambda: rope_base_lower_bound(8, 64, relative_step=1e-9), ValueError, "relative_step must be >="),
        (lambda: rope_base_lower_bound(16, 64, max_base=100.0), ValueError, "no base up to max_base=100"),
    ],
)
def test_bad_input_is_a_clear_error(call, error, match) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(error, match=match):
        call()
