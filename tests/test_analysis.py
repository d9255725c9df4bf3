"""Analysis helpers: each checked against a plain-Python computation."""

from __future__ import annotations

import itertools
import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc import sinusoidal_encoding
from posenc.analysis import (
    binary_code,
    cosine_similarity_matrix,
    float32_angle_error,
    nearest_collision,
    pairwise_distances,
    rising_steps,
    shift_map_residual,
    similarity_to_position,
    wavelengths,
)


def brute_force_collision(rows: list[list[float]]) -> tuple[int, int, float]:
    best = (0, 1, math.inf)
    for i, j in itertools.combinations(range(len(rows)), 2):
        d = math.dist(rows[i], rows[j])
        if d < best[2]:
            best = (i, j, d)
    return best


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.floats(-10, 10), min_size=3, max_size=3), min_size=2, max_size=12, unique_by=tuple))
def test_nearest_collision_matches_brute_force(rows: list[list[float]]) -> None:
    got = nearest_collision(torch.tensor(rows, dtype=torch.float64))
    want = brute_force_collision(rows)
    assert got.distance == pytest.approx(want[2], abs=1e-9)
    assert math.dist(rows[got.first], rows[got.second]) == pytest.approx(want[2], abs=1e-9)
    assert got.first < got.second


def test_nearest_collision_across_blocks() -> None:
    rows = torch.arange(3000, dtype=torch.float64)[:, None] * 10.0
    rows[2500] = 5.5  # 4.5 from row 1 (10.0), 5.5 from row 0; every other gap is >= 10 -> pair (1, 2500)
    got = nearest_collision(rows)
    assert (got.first, got.second) == (1, 2500) and got.distance == pytest.approx(4.5)


def test_single_sine_has_no_exact_repeat_but_a_near_one() -> None:
    codes = torch.sin(torch.arange(512, dtype=torch.float64))[:, None]
    got = nearest_collision(codes)
    # independent: in 1-D the closest pair is adjacent after sorting
    ranked = sorted(range(512), key=math.sin)
    gap, a, b = min((math.sin(q) - math.sin(p), p, q) for p, q in zip(ranked, ranked[1:]))
    assert (got.first, got.second) == (min(a, b), max(a, b)) == (11, 344)
    assert got.distance == pytest.approx(abs(math.sin(11) - math.sin(344)))
    assert 0 < got.distance < 1e-6


def test_cosine_similarity_matrix_matches_loops() -> None:
    rows = [[1.0, 2.0, 0.5], [-1.0, 0.0, 3.0], [0.2, 0.2, 0.2]]
    got = cosine_similarity_matrix(torch.tensor(rows))
    for i, j in itertools.product(range(3), repeat=2):
        dot = sum(a * b for a, b in zip(rows[i], rows[j]))
        want = dot / math.hypot(*rows[i]) / math.hypot(*rows[j])
        assert float(got[i, j]) == pytest.approx(want, abs=1e-7)


@pytest.mark.parametrize("dim", [2, 8, 128])
def test_similarity_to_position_closed_form(dim: int) -> None:
    # cos-sim(PE(0), PE(k)) = (2/dim) * sum_i cos(k w_i), since every code has norm sqrt(dim/2)
    got = similarity_to_position(sinusoidal_encoding(30, dim, dtype=torch.float64))
    w = [10000.0 ** (-2 * i / dim) for i in range(dim // 2)]
    want = [2 / dim * sum(math.cos(k * wi) for wi in w) for k in range(30)]
    assert got.tolist() == pytest.approx(want, abs=1e-12)


def test_similarity_matrix_is_toeplitz() -> None:
    sim = cosine_similarity_matrix(sinusoidal_encoding(40, 16, dtype=torch.float64))
    for k in range(40):
        diagonal = torch.diagonal(sim, offset=k)
        torch.testing.assert_close(diagonal, diagonal[:1].expand_as(diagonal), rtol=0, atol=1e-12)


def test_similarity_is_not_monotone_for_d8() -> None:
    sim = similarity_to_position(sinusoidal_encoding(20, 8))
    assert rising_steps(sim) == [4, 5, 6, 11, 12, 17, 18, 19]


def test_pairwise_distances_depend_only_on_offset() -> None:
    dist = pairwise_distances(sinusoidal_encoding(30, 32, dtype=torch.float64))
    assert float(dist[3, 13]) == pytest.approx(float(dist[17, 27]), abs=1e-12)
    assert float(dist[0, 1]) == pytest.approx(math.sqrt(sum(2 - 2 * math.cos(10000.0 ** (-2 * i / 32)) for i in range(16))))


def test_wavelengths() -> None:
    got = wavelengths(512).tolist()
    assert got[0] == pytest.approx(2 * math.pi)
    assert got[-1] == pytest.approx(2 * math.pi * 10000 ** (510 / 512))
    assert len(got) == 256


def test_rising_steps() -> None:
    assert rising_steps(torch.tensor([3.0, 2.0, 1.0])) == []
    assert rising_steps(torch.tensor([0.0, 1.0, 1.0, 2.0])) == [1, 3]


def test_shift_map_residual_sin_cos_versus_sine_only() -> None:
    table = sinusoidal_encoding(500, 16, dtype=torch.float64)
    assert shift_map_residual(table, 3) < 1e-12
    assert shift_map_residual(table[:, 0::2], 3) > 0.3


def test_float32_angle_error_grows_with_position() -> None:
    errors = float32_angle_error(torch.tensor([10.0, 1e6]), 64)
    manual = 0.0
    for i in range(32):
        angle32 = float(torch.tensor(1e6, dtype=torch.float32) * torch.tensor(10000.0 ** (-2 * i / 64), dtype=torch.float32))
        angle64 = 1e6 * 10000.0 ** (-2 * i / 64)
        manual = max(manual, abs(math.sin(angle32) - math.sin(angle64)), abs(math.cos(angle32) - math.cos(angle64)))
    # the helper takes sin/cos in float32 too, so allow float32 rounding of the result
    assert float(errors[1]) == pytest.approx(manual, abs=1e-6)
    assert float(errors[0]) < 1e-5 < 1e-2 < float(errors[1])


def test_binary_code() -> None:
    assert binary_code(torch.tensor([0, 5, 6]), 3).tolist() == [[0, 0, 0], [1, 0, 1], [0, 1, 1]]
    assert binary_code(8, 3)[:, 0].tolist() == [p % 2 for p in range(8)]


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: cosine_similarity_matrix(torch.zeros(3)), ValueError, "codes must have 2 dimensions"),
        (lambda: cosine_similarity_matrix([[1.0]]), TypeError, "codes must be a torch.Tensor, got list"),
        (lambda: cosine_similarity_matrix(torch.zeros(2, 2)), ValueError, "all-zero row"),
        (lambda: similarity_to_position(torch.ones(3, 2), reference=3), ValueError, "reference must be an integer <= 2, got 3"),
        (lambda: pairwise_distances(torch.tensor([[float("inf")]])), ValueError, "codes must contain only finite"),
        (lambda: nearest_collision(torch.ones(1, 4)), ValueError, "codes must have at least 2 rows"),
        (lambda: wavelengths(3), ValueError, "dim must be a positive even integer, got 3"),
        (lambda: wavelengths(4, base=-1.0), ValueError, "base must be > 0, got -1.0"),
        (lambda: rising_steps(torch.ones(2, 2)), ValueError, "values must have 1 dimensions"),
        (lambda: rising_steps(torch.ones(3), tolerance=-1.0), ValueError, "tolerance must be >= 0.0"),
        (lambda: shift_map_residual(torch.ones(4, 2), 4), ValueError, "offset must be an integer <= 3, got 4"),
        (lambda: shift_map_residual(torch.ones(4, 2), 0), ValueError, "offset must be an integer >= 1, got 0"),
        (lambda: float32_angle_error(4, 5), ValueError, "dim must be a positive even integer, got 5"),
        (lambda: binary_code(torch.tensor([1.5]), 3), ValueError, "positions must be non-negative integers"),
        (lambda: binary_code(4, 0), ValueError, "bits must be an integer >= 1, got 0"),
        # issue 10: complex and bool tables were accepted, binary codes overflowed past int64
        (lambda: cosine_similarity_matrix(torch.ones(2, 2, dtype=torch.complex64)), TypeError, "codes must hold real"),
        (lambda: pairwise_distances(torch.ones(2, 2, dtype=torch.bool)), TypeError, "codes must hold real"),
        (lambda: rising_steps(torch.ones(3, dtype=torch.bool)), TypeError, "values must hold real"),
        (lambda: cosine_similarity_matrix(torch.ones(3, 0)), ValueError, "codes must have at least one column"),
        (lambda: binary_code(torch.tensor([2.0**60]), 62), ValueError, "positions must be non-negative integers"),
        (lambda: binary_code(10**400, 3), ValueError, "positions must be an integer <="),
        (lambda: float32_angle_error(torch.tensor([1e39], dtype=torch.float64), 4), ValueError, "positions must fit"),
    ],
)
def test_bad_inputs(call: object, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        call()  # type: ignore[operator]


def test_shift_map_residual_of_all_zero_codes_is_zero_not_nan() -> None:
    """A = 0 maps zero codes onto zero codes exactly: the residual is 0, not 0/0."""
    assert shift_map_residual(torch.zeros(5, 3), 2) == 0.0


def test_analysis_is_scale_free_at_the_edges_of_float64() -> None:
    """Huge and tiny codes give the same similarities as ordinary ones (no overflow in the norms)."""
    codes = torch.tensor([[1.0, 0.0], [1.0, 1.0], [0.0, 2.0]], dtype=torch.float64)
    for scale in (1e300, 1e-300):
        torch.testing.assert_close(cosine_similarity_matrix(codes * scale), cosine_similarity_matrix(codes))
        torch.testing.assert_close(pairwise_distances(codes * scale) / scale, pairwise_distances(codes))
        assert math.isclose(nearest_collision(codes * scale).distance / scale, nearest_collision(codes).distance)
        assert math.isclose(shift_map_residual(codes * scale, 1), shift_map_residual(codes, 1), abs_tol=1e-12)


@pytest.mark.parametrize("function", [cosine_similarity_matrix, pairwise_distances])
def test_size_errors_name_the_argument(function: object) -> None:
    # issue 22: a matrix too large to build is refused with the argument's name in the message
    with pytest.raises(ValueError, match=r"\bcodes\b.*20000 x 20000"):
        function(torch.ones(20000, 2))  # type: ignore[operator]
