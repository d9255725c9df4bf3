"""Relative positions: the offset matrix, T5 buckets and bias, Shaw et al.'s attention."""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc import (
    SelfAttention,
    ShawRelativeAttention,
    T5RelativeBias,
    relative_positions,
    t5_relative_position_bucket,
)

# ---------------------------------------------------------------------------------------------
# relative_positions


@settings(max_examples=30, deadline=None)
@given(q_len=st.integers(0, 8), k_len=st.integers(0, 8))
def test_relative_positions_are_key_minus_query(q_len: int, k_len: int) -> None:
    offsets = relative_positions(q_len, k_len)
    assert offsets.shape == (q_len, k_len) and offsets.dtype == torch.long
    assert offsets.tolist() == [[j - i for j in range(k_len)] for i in range(q_len)]


# ---------------------------------------------------------------------------------------------
# T5 buckets


def _direction(offset: int, bidirectional: bool, num_buckets: int) -> tuple[int, int, int]:
    """(buckets per direction b, first bucket of the direction, distance n) for one offset."""
    if bidirectional:
        return num_buckets // 2, (num_buckets // 2 if offset > 0 else 0), abs(offset)
    return num_buckets, 0, max(-offset, 0)


@functools.lru_cache(maxsize=None)
def _float32_log_bucket(n: int, b: int, max_distance: int) -> int:
    """Bucket within a direction of b buckets for distance n >= b // 2, one float32 step at a time.

    The published formula as T5's reference code evaluates it (Mesh TensorFlow, and Hugging Face's
    T5Attention._relative_position_bucket): e + trunc(log(n / e) / log(max_distance / e) * (b - e))
    with e = b // 2, every operation in float32 except log(max_distance / e), a Python float that
    is rounded to float32 when it divides; capped at b - 1.
    """
    e = b // 2
    f32 = torch.float32
    ratio = torch.tensor(float(n), dtype=f32) / torch.tensor(float(e), dtype=f32)
    scaled = torch.log(ratio) / torch.tensor(math.log(max_distance / e), dtype=f32)
    scaled = scaled * torch.tensor(float(b - e), dtype=f32)
    return min(e + int(scaled.item()), b - 1)


def t5_bucket_reference(offset: int, *, bidirectional: bool, num_buckets: int, max_distance: int) -> int:
    """T5's bucket for one offset (key - query), re-derived from the published float32 formula."""
    b, first, n = _direction(offset, bidirectional, num_buckets)
    return first + (n if n < b // 2 else _float32_log_bucket(n, b, max_distance))


def t5_bucket_exact(offset: int, *, bidirectional: bool, num_buckets: int, max_distance: int) -> int:
    """The same formula in exact arithmetic, to locate where float32 rounding moves a distance.

    floor(L * log(n/e) / log(M/e)) >= s  <=>  (n/e)^L >= (M/e)^s, which fractions decide exactly.
    """
    b, first, n = _direction(offset, bidirectional, num_buckets)
    e = b // 2
    if n < e:
        return first + n
    log_steps = b - e
    s = 0
    while s + 1 < log_steps and Fraction(n, e) ** log_steps >= Fraction(max_distance, e) ** (s + 1):
        s += 1
    return first + e + s


CONFIGS = [
    (True, 32, 128),   # T5 encoder
    (False, 32, 128),  # T5 decoder
    (True, 64, 256),
    (False, 16, 64),
    (True, 8, 20),
    (False, 9, 128),   # odd is fine in causal mode
    (False, 2, 5),     # one exact bucket and one bucket for everything else
    (True, 18, 128),   # boundaries that land exactly on integers (8, 16, 64)
    (False, 19, 288),
    (False, 32, 939),  # float32 puts distance 728 one bucket higher than exact arithmetic
    (True, 34, 27),    # float32 puts distance 18 one bucket lower than exact arithmetic
    (False, 36, 392),  # distance 84: one bucket lower in float32
]


@pytest.mark.parametrize(("bidirectional", "num_buckets", "max_distance"), CONFIGS)
def test_buckets_match_the_float32_formula_exhaustively(bidirectional: bool, num_buckets: int, max_distance: int) -> None:
    offsets = torch.arange(-1000, 1001)
    buckets = t5_relative_position_bucket(
        offsets, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance)
    expected = [t5_bucket_reference(o, bidirectional=bidirectional, num_buckets=num_buckets,
                                    max_distance=max_distance) for o in offsets.tolist()]
    assert buckets.dtype == torch.long
    assert buckets.tolist() == expected
    if bidirectional:  # offset 0 goes to the lower half, so the first bucket of the upper half is never used
        assert set(expected) == set(range(num_buckets)) - {num_buckets // 2}
    else:
        assert set(expected) == set(range(num_buckets))


@pytest.mark.parametrize("bidirectional", [True, False])
def test_buckets_match_the_float32_formula_on_a_grid(bidirectional: bool) -> None:
    """Every bucket count up to 24 (per direction), several max distances, distances 0 to 300."""
    counts = range(4, 49, 2) if bidirectional else range(2, 25)
    for num_buckets in counts:
        exact = (num_buckets // 2 if bidirectional else num_buckets) // 2
        for max_distance in sorted({exact + 1, exact + 2, 3 * exact + 1, 20, 64, 100, 128, 250}):
            if max_distance <= exact:
                continue
            offsets = torch.arange(-300, 301)
            ours = t5_relative_position_bucket(
                offsets, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance)
            expected = [t5_bucket_reference(o, bidirectional=bidirectional, num_buckets=num_buckets,
                                            max_distance=max_distance) for o in offsets.tolist()]
            assert ours.tolist() == expected, (num_buckets, max_distance)


@pytest.mark.parametrize("bidirectional", [True, False])
def test_t5_setting_has_no_rounding_cases(bidirectional: bool) -> None:
    """With 32 buckets and max distance 128, float32 and exact arithmetic agree on every distance."""
    offsets = range(-2000, 2001)
    ours = t5_relative_position_bucket(torch.tensor(list(offsets)), bidirectional=bidirectional)
    assert ours.tolist() == [t5_bucket_exact(o, bidirectional=bidirectional, num_buckets=32, max_distance=128)
                             for o in offsets]


@pytest.mark.parametrize(
    ("bidirectional", "num_buckets", "max_distance", "offset", "exact", "float32"),
    [
        (False, 32, 939, -728, 30, 31),  # 728 is 0.0002 below the start of bucket 31
        (True, 64, 939, 728, 62, 63),    # the same distance after the query in an encoder
        (True, 34, 27, -18, 14, 13),     # 18 is exactly the start of bucket 14; float32 lands below
    ],
)
def test_float32_rounding_cases_follow_the_reference(
    bidirectional: bool, num_buckets: int, max_distance: int, offset: int, exact: int, float32: int,
) -> None:
    kwargs = {"bidirectional": bidirectional, "num_buckets": num_buckets, "max_distance": max_distance}
    assert t5_bucket_exact(offset, **kwargs) == exact  # type: ignore[arg-type]
    assert t5_bucket_reference(offset, **kwargs) == float32  # type: ignore[arg-type]
    assert t5_relative_position_bucket(offset, **kwargs).item() == float32  # type: ignore[arg-type]
    # the only such distance up to 2000 in these settings
    others = [o for o in range(-2000, 2001) if o != offset and (o > 0) == (offset > 0)]
    assert all(t5_bucket_exact(o, **kwargs) == t5_bucket_reference(o, **kwargs)  # type: ignore[arg-type]
               for o in others)


def test_published_t5_values() -> None:
    offsets = torch.tensor([-1000, -128, -127, -91, -90, -64, -32, -16, -15, -8, -7, 0, 1, 7, 8, 127, 128])
    enc = t5_relative_position_bucket(offsets)
    dec = t5_relative_position_bucket(offsets, bidirectional=False)
    # encoder: 8 exact buckets per side; distance n >= 8 goes to 8 + floor(8 log(n/8) / log 16)
    # = 8 + floor(2 log2(n/8)): 16 -> 10, 32 -> 12, 64 -> 14, 15 -> 9; bucket 15 starts at
    # 8 * 16^(7/8) = 90.5, so 91 -> 15 and 90 -> 14. Future keys are shifted by 16.
    assert enc.tolist() == [15, 15, 15, 15, 14, 14, 12, 10, 9, 8, 7, 0, 17, 23, 24, 31, 31]
    # decoder: 16 exact buckets; n >= 16 goes to 16 + floor(16 log(n/16) / log 8):
    # 32 -> 16 + floor(16/3) = 21, 64 -> 16 + floor(32/3) = 26, 90 and 91 -> 16 + 13 = 29,
    # 127 -> 16 + 15 = 31. Future keys share bucket 0 with offset 0.
    assert dec.tolist() == [31, 31, 31, 29, 29, 26, 21, 16, 15, 8, 7, 0, 0, 0, 0, 0, 0]


@settings(max_examples=30, deadline=None)
@given(
    num_buckets=st.integers(2, 80), max_distance=st.integers(1, 500), bidirectional=st.booleans(),
)
def test_buckets_are_monotone_in_distance(num_buckets: int, max_distance: int, bidirectional: bool) -> None:
    if bidirectional:
        num_buckets = max(4, num_buckets - num_buckets % 2)
    exact = (num_buckets // 2 if bidirectional else num_buckets) // 2
    max_distance = max(max_distance, exact + 1)
    kwargs = {"bidirectional": bidirectional, "num_buckets": num_buckets, "max_distance": max_distance}
    past = t5_relative_position_bucket(-torch.arange(0, 600), **kwargs)  # type: ignore[arg-type]
    assert torch.all(past.diff() >= 0) and past.min() == 0
    assert past[max_distance:].unique().tolist() == [past.max().item()]  # one last bucket from max_distance
    future = t5_relative_position_bucket(torch.arange(1, 600), **kwargs)  # type: ignore[arg-type]
    if bidirectional:
        torch.testing.assert_close(future, past[1:] + num_buckets // 2)
    else:
        assert torch.all(future == 0)


def test_bucket_accepts_a_python_int_and_keeps_shape() -> None:
    assert t5_relative_position_bucket(-20).item() == 10
    assert t5_relative_position_bucket(torch.zeros(2, 3, dtype=torch.int32)).shape == (2, 3)


# ---------------------------------------------------------------------------------------------
# T5 bias


@pytest.mark.parametrize("bidirectional", [True, False])
def test_t5_bias_looks_up_one_scalar_per_bucket_and_head(bidirectional: bool) -> None:
    module = T5RelativeBias(3, num_buckets=8, max_distance=12, bidirectional=bidirectional)
    bias = module(5, 7)
    assert bias.shape == (3, 5, 7)
    for h in range(3):
        for i in range(5):
            for j in range(7):
                bucket = t5_bucket_reference(j - i, bidirectional=bidirectional, num_buckets=8, max_distance=12)
                assert bias[h, i, j].item() == module.weight[bucket, h].item()


@settings(max_examples=20, deadline=None)
@given(seq=st.integers(1, 12), shift=st.integers(0, 40))
def test_t5_bias_depends_only_on_the_offset(seq: int, shift: int) -> None:
    module = T5RelativeBias(2, num_buckets=16, max_distance=20)
    with torch.no_grad():
        assert torch.equal(module(seq + shift)[:, shift:, shift:], module(seq))
    assert torch.equal(module(seq), module(seq, seq))


def test_t5_bias_is_trained() -> None:
    module = T5RelativeBias(2)
    module(4).sum().backward()
    grad = module.weight.grad
    assert grad is not None
    used = set(t5_relative_position_bucket(relative_positions(4, 4)).flatten().tolist())
    assert set(torch.nonzero(grad[:, 0]).flatten().tolist()) == used


# ---------------------------------------------------------------------------------------------
# Shaw et al.


def shaw_reference(layer: ShawRelativeAttention, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Equations (2)-(4) of Shaw et al. (2018), one query, key and head at a time, in float64."""
    x = x.double()[0]
    seq, heads, d, k = x.shape[0], layer.num_heads, layer.head_dim, layer.max_distance
    w_qkv = layer.attention.qkv.weight.detach().double()
    w_q, w_k, w_v = w_qkv[:layer.dim], w_qkv[layer.dim:2 * layer.dim], w_qkv[2 * layer.dim:]
    key_table, value_table = layer.key_table.detach().double(), layer.value_table.detach().double()
    logits = torch.empty(heads, seq, seq, dtype=torch.float64)
    z = torch.empty(seq, layer.dim, dtype=torch.float64)
    for h in range(heads):
        cols = slice(h * d, (h + 1) * d)
        q, kk, v = x @ w_q[cols].T, x @ w_k[cols].T, x @ w_v[cols].T
        for i in range(seq):
            for j in range(seq):
                a_k = key_table[max(-k, min(k, j - i)) + k]
                logits[h, i, j] = float(q[i] @ (kk[j] + a_k)) / math.sqrt(d)
            weights = torch.softmax(logits[h, i], dim=0)
            z[i, cols] = sum(weights[j] * (v[j] + value_table[max(-k, min(k, j - i)) + k]) for j in range(seq))
    return logits, z @ layer.attention.out.weight.detach().double().T


def test_shaw_matches_the_paper_equations() -> None:
    torch.manual_seed(3)
    layer = ShawRelativeAttention(dim=8, num_heads=2, max_distance=2)
    x = torch.randn(1, 6, 8)
    ref_logits, ref_out = shaw_reference(layer, x)
    with torch.no_grad():
        out, weights = layer(x)
        logits = layer.logits(x)
    torch.testing.assert_close(logits[0].double(), ref_logits, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(weights[0].double(), torch.softmax(ref_logits, -1), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(out[0].double(), ref_out, rtol=1e-5, atol=1e-5)


@settings(max_examples=25, deadline=None)
@given(seq=st.integers(1, 7), shift=st.integers(1, 6), max_distance=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_shaw_logits_are_translation_invariant(seq: int, shift: int, max_distance: int, seed: int) -> None:
    """The same tokens moved `shift` places later (after other tokens) get the same logits among themselves."""
    torch.manual_seed(seed)
    layer = ShawRelativeAttention(dim=8, num_heads=2, max_distance=max_distance)
    x = torch.randn(1, seq, 8)
    shifted = torch.cat((torch.randn(1, shift, 8), x), dim=1)
    with torch.no_grad():
        torch.testing.assert_close(layer.logits(shifted)[..., shift:, shift:], layer.logits(x), rtol=1e-5, atol=1e-5)


def test_offsets_beyond_max_distance_share_a_row() -> None:
    layer = ShawRelativeAttention(dim=4, num_heads=1, max_distance=2)
    rows = layer.table_rows(1, 8)[0].tolist()  # query 0, keys 0..7: offsets 0..7
    assert rows == [2, 3, 4, 4, 4, 4, 4, 4]
    assert layer.table_rows(8, 1)[:, 0].tolist() == [2, 1, 0, 0, 0, 0, 0, 0]


def test_with_zero_tables_shaw_is_plain_self_attention() -> None:
    torch.manual_seed(0)
    layer = ShawRelativeAttention(dim=8, num_heads=2, max_distance=3)
    plain = SelfAttention(8, 2)
    plain.load_state_dict(layer.attention.state_dict())
    with torch.no_grad():
        layer.key_table.zero_()
        layer.value_table.zero_()
        x = torch.randn(2, 5, 8)
        for causal in (False, True):
            out, weights = layer(x, causal=causal)
            out_plain, weights_plain = plain(x, causal=causal)
            torch.testing.assert_close(out, out_plain)
            torch.testing.assert_close(weights, weights_plain)


def test_shaw_causal_weights_ignore_the_future() -> None:
    layer = ShawRelativeAttention(dim=8, num_heads=2, max_distance=3)
    with torch.no_grad():
        _, weights = layer(torch.randn(1, 5, 8), causal=True)
    assert torch.all(weights.triu(1) == 0)


# ---------------------------------------------------------------------------------------------
# bad input


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: relative_positions(-1, 3), ValueError, r"q_len must be an integer >= 0, got -1"),
        (lambda: relative_positions(3, -2), ValueError, r"k_len must be an integer >= 0, got -2"),
        (lambda: relative_positions(2.0, 3), TypeError, r"q_len must be an integer, got float"),
        (lambda: t5_relative_position_bucket(torch.tensor([1.5])), TypeError,
         r"relative_position must hold integers, got dtype torch.float32"),
        (lambda: t5_relative_position_bucket([1, 2]), TypeError, r"relative_position must be a torch.Tensor"),
        (lambda: t5_relative_position_bucket(3, num_buckets=31), ValueError,
         r"num_buckets must be even when bidirectional=True .* got 31"),
        (lambda: t5_relative_position_bucket(3, num_buckets=2), ValueError, r"num_buckets must be an integer >= 4, got 2"),
        (lambda: t5_relative_position_bucket(3, num_buckets=1, bidirectional=False), ValueError,
         r"num_buckets must be an integer >= 2, got 1"),
        (lambda: t5_relative_position_bucket(3, num_buckets=32, max_distance=8), ValueError,
         r"max_distance must be greater than the 8 exact buckets per direction .* got 8"),
        (lambda: t5_relative_position_bucket(3, max_distance=-5), ValueError, r"max_distance must be an integer >= 1, got -5"),
        (lambda: t5_relative_position_bucket(3, bidirectional=1), TypeError, r"bidirectional must be a bool, got int 1"),
        (lambda: T5RelativeBias(0), ValueError, r"num_heads must be an integer >= 1, got 0"),
        (lambda: T5RelativeBias(4, num_buckets=33), ValueError, r"num_buckets must be even when bidirectional=True"),
        (lambda: T5RelativeBias(4)(-1), ValueError, r"q_len must be an integer >= 0, got -1"),
        (lambda: T5RelativeBias(4)(3, -1), ValueError, r"k_len must be an integer >= 0, got -1"),
        (lambda: ShawRelativeAttention(8, 0, 2), ValueError, r"num_heads must be an integer >= 1, got 0"),
        (lambda: ShawRelativeAttention(8, 3, 2), ValueError, r"dim must be divisible by num_heads, got dim=8, num_heads=3"),
        (lambda: ShawRelativeAttention(8, 2, 0), ValueError, r"max_distance must be an integer >= 1, got 0"),
        (lambda: ShawRelativeAttention(8, 2, 2)(torch.zeros(1, 3, 6)), ValueError, r"x must have size 8 in dimension -1"),
        (lambda: ShawRelativeAttention(8, 2, 2)(torch.zeros(3, 8)), ValueError, r"x must have 3 dimensions"),
    ],
)
def test_bad_input(call: object, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        call()  # type: ignore[operator]
