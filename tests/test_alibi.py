"""ALiBi: slopes against the published rule, the bias matrix, and the causal shift identity."""

from __future__ import annotations

import itertools
import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc import alibi_bias, alibi_slopes, scaled_dot_product_attention


def published_slopes(n: int) -> list[float]:
    """The rule of Press et al. (2022), written as plain Python floats.

    Power of two: start = 2^(-8/n), each next slope is the previous one times start.
    Otherwise: the slopes for the largest power of two p below n, then slopes 0, 2, 4, ...
    of the 2p-head sequence until there are n in all.
    """

    def geometric(heads: int) -> list[float]:
        start = 2.0 ** (-8.0 / heads)
        out, value = [], start
        for _ in range(heads):
            out.append(value)
            value *= start
        return out

    p = 1
    while p * 2 <= n:
        p *= 2
    if p == n:
        return geometric(n)
    return geometric(p) + geometric(2 * p)[0::2][: n - p]


def test_eight_heads_are_powers_of_one_half() -> None:
    assert alibi_slopes(8, dtype=torch.float64).tolist() == [2.0**-k for k in range(1, 9)]


def test_sixteen_heads() -> None:
    slopes = alibi_slopes(16, dtype=torch.float64)
    assert slopes.tolist() == pytest.approx([2.0 ** (-k / 2) for k in range(1, 17)], rel=1e-15)
    assert slopes[0].item() == pytest.approx(1 / math.sqrt(2)) and slopes[-1].item() == 1 / 256


def test_twelve_heads_follow_the_non_power_of_two_rule() -> None:
    slopes = alibi_slopes(12, dtype=torch.float64).tolist()
    # the 8-head slopes, then every other slope of the 16-head sequence: 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5
    expected = [2.0**-k for k in range(1, 9)] + [2.0 ** -(k + 0.5) for k in range(4)]
    assert slopes == pytest.approx(expected, rel=1e-15)
    assert slopes[8:] == pytest.approx([0.70711, 0.35355, 0.17678, 0.08839], abs=1e-5)


@pytest.mark.parametrize("n", range(1, 65))
def test_slopes_match_the_published_rule(n: int) -> None:
    slopes = alibi_slopes(n, dtype=torch.float64)
    assert slopes.tolist() == pytest.approx(published_slopes(n), rel=1e-14)
    assert torch.all(slopes > 0) and torch.all(slopes < 1)
    assert len(set(slopes.tolist())) == n  # no two heads share a slope


def test_one_head() -> None:
    assert alibi_slopes(1).tolist() == [1 / 256]


@settings(max_examples=40, deadline=None)
@given(heads=st.integers(1, 20), q_len=st.integers(0, 9), k_len=st.integers(0, 9))
def test_bias_is_minus_slope_times_distance(heads: int, q_len: int, k_len: int) -> None:
    bias = alibi_bias(heads, q_len, k_len, dtype=torch.float64)
    slopes = published_slopes(heads)
    assert bias.shape == (heads, q_len, k_len)
    for h in range(heads):
        for i in range(q_len):
            for j in range(k_len):
                assert bias[h, i, j].item() == pytest.approx(-slopes[h] * abs(i - j), rel=1e-13)
                if i == j:
                    assert bias[h, i, j].item() == 0.0 and not math.copysign(1.0, bias[h, i, j].item()) < 0
                else:
                    assert bias[h, i, j].item() < 0


def test_k_len_defaults_to_q_len_and_bias_is_symmetric() -> None:
    bias = alibi_bias(4, 6)
    assert bias.shape == (4, 6, 6)
    assert torch.equal(bias, bias.transpose(-1, -2))
    assert bias.dtype == torch.float32


@settings(max_examples=30, deadline=None)
@given(heads=st.integers(1, 12), seq=st.integers(1, 10), seed=st.integers(0, 2**16))
def test_causal_model_can_use_slope_times_key_index(heads: int, seq: int, seed: int) -> None:
    """Below the diagonal -m|i - j| = m*j - m*i: a per-row constant apart from m*j, which softmax ignores."""
    g = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(heads, seq, 4, generator=g, dtype=torch.float64) for _ in range(3))
    slopes = alibi_slopes(heads, dtype=torch.float64)
    key_index_bias = slopes[:, None, None] * torch.arange(seq, dtype=torch.float64)[None, None, :]
    out_a, w_a = scaled_dot_product_attention(q, k, v, bias=alibi_bias(heads, seq, dtype=torch.float64), causal=True)
    out_b, w_b = scaled_dot_product_attention(q, k, v, bias=key_index_bias, causal=True)
    torch.testing.assert_close(w_a, w_b, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(out_a, out_b, rtol=1e-12, atol=1e-12)
    # ...and the two biases themselves differ (unless there is a single position)
    if seq > 1:
        assert not torch.allclose(alibi_bias(heads, seq, dtype=torch.float64), key_index_bias)


def test_key_index_bias_is_wrong_without_the_causal_mask() -> None:
    q = k = torch.zeros(1, 4, 2, dtype=torch.float64)
    v = torch.eye(4, dtype=torch.float64)[None]
    slopes = alibi_slopes(1, dtype=torch.float64)
    key_index_bias = slopes * torch.arange(4, dtype=torch.float64).expand(1, 4, 4)
    _, w_a = scaled_dot_product_attention(q, k, v, bias=alibi_bias(1, 4, dtype=torch.float64))
    _, w_b = scaled_dot_product_attention(q, k, v, bias=key_index_bias)
    assert not torch.allclose(w_a, w_b)  # |i - j| penalises future keys; +m*j rewards them


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: alibi_slopes(0), ValueError, r"num_heads must be an integer >= 1, got 0"),
        (lambda: alibi_slopes(-4), ValueError, r"num_heads must be an integer >= 1, got -4"),
        (lambda: alibi_slopes(8.0), TypeError, r"num_heads must be an integer, got float"),
        (lambda: alibi_slopes(8, dtype=torch.int64), TypeError, r"dtype must be a floating-point torch.dtype"),
        (lambda: alibi_bias(0, 4), ValueError, r"num_heads must be an integer >= 1, got 0"),
        (lambda: alibi_bias(4, -1), ValueError, r"q_len must be an integer >= 0, got -1"),
        (lambda: alibi_bias(4, 3, -2), ValueError, r"k_len must be an integer >= 0, got -2"),
        (lambda: alibi_bias(4, 3.5), TypeError, r"q_len must be an integer, got float"),
        (lambda: alibi_bias(4, 3, dtype="float32"), TypeError, r"dtype must be a floating-point torch.dtype"),
    ],
)
def test_bad_input(call: object, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        call()  # type: ignore[operator]


def test_absurd_head_counts_fail_fast() -> None:
    """alibi_slopes(2**40) used to loop for minutes; any size is bounded, and large valid ones are quick."""
    import time

    start = time.perf_counter()
    with pytest.raises(ValueError, match="num_heads must be an integer <= 16777216"):
        alibi_slopes(2**40)
    with pytest.raises(ValueError, match="num_heads must be an integer <= 16777216"):
        alibi_slopes(10**400)
    slopes = alibi_slopes(3 * 2**18)  # not a power of two: the interleaved rule, vectorised
    assert time.perf_counter() - start < 5.0
    assert slopes.shape == (3 * 2**18,) and bool((slopes > 0).all())


# ---------------------------------------------------------------- AlibiBias: the bias interface


def test_alibi_bias_module_of_any_positions_matches_the_formula() -> None:
    # Press et al. (2022): -m_h |i - j| with m_h = 2^(-8h/H), h = 1 .. H (H a power of two); float64 loops.
    from posenc import AlibiBias

    heads, queries, keys = 4, torch.tensor([[7, 100], [0, 1]]), torch.tensor([[0, 7, 50], [1, 2, 3]])
    bias = AlibiBias(heads).bias(queries, keys)
    assert bias.shape == (2, heads, 2, 3) and bias.dtype == torch.float32
    for b, h, i, j in itertools.product(range(2), range(heads), range(2), range(3)):
        slope = 2.0 ** (-8.0 * (h + 1) / heads)
        expected = -slope * abs(int(queries[b, i]) - int(keys[b, j]))
        assert math.isclose(float(bias[b, h, i, j]), expected, rel_tol=1e-6, abs_tol=0.0)
    assert torch.equal(AlibiBias(heads)(5, 7), alibi_bias(heads, 5, 7))  # 0 .. n-1: the function's bias
    assert not bool(torch.signbit(AlibiBias(heads).bias(3, 3)).diagonal(dim1=-2, dim2=-1).any())  # 0.0, not -0.0
