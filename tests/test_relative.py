"""Relative positions: the offset matrix, T5 buckets and bias, Shaw et al.'s attention."""

from __future__ import annotations

import functools
import math

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
#
# The expectation is computed in exact (integer) arithmetic, so it cannot depend on the CPU or on
# the libm that evaluates float32 log. Float32 T5 (ours, and the reference code) can only disagree
# with it for a distance that lies on a bucket boundary or within float32 rounding of one: those
# "ambiguous" distances are listed by `ambiguous_distances`, left out of the exact comparison, and
# checked instead (a) to be in one of the two buckets that meet at that boundary and (b) against
# the same float32 operations evaluated on the running machine (never a recorded constant).


def _direction(offset: int, bidirectional: bool, num_buckets: int) -> tuple[int, int, int]:
    """(buckets per direction b, first bucket of the direction, distance n) for one offset."""
    if bidirectional:
        return num_buckets // 2, (num_buckets // 2 if offset > 0 else 0), abs(offset)
    return num_buckets, 0, max(-offset, 0)


def _exact_log_steps(n: int, b: int, max_distance: int) -> int:
    """min(floor(L * log(n/e) / log(M/e)), L - 1) for n >= e = b // 2, L = b - e, M = max_distance.

    floor(...) >= s  <=>  (n/e)^L >= (M/e)^s  <=>  n^L * e^s >= M^s * e^L: integers decide it.
    """
    e = b // 2
    steps = b - e
    s = 0
    while s + 1 < steps and n**steps * e ** (s + 1) >= max_distance ** (s + 1) * e**steps:
        s += 1
    return s


def t5_bucket_exact(offset: int, *, bidirectional: bool, num_buckets: int, max_distance: int) -> int:
    """T5's bucket for one offset (key - query), from the published formula in exact arithmetic."""
    b, first, n = _direction(offset, bidirectional, num_buckets)
    e = b // 2
    return first + (n if n < e else e + _exact_log_steps(n, b, max_distance))


# Float32's unit roundoff is u = 2**-24 ~ 6e-8. The float32 value of v = L log(n/e) / log(M/e)
# carries the rounding of n/e (an absolute error of about u in the log, i.e. u L / log(M/e) in
# v), the error of log itself (a few ulp) and three more roundings (c, the division, the
# product): in all below about 12 u (v + L / log(M/e)). A distance is called ambiguous when v is
# within 1e-5 (v + L / log(M/e)) ~ 170 u of a boundary: far more than float32 can move it, so
# every other distance is decided the same way by any IEEE float32 log accurate to a few ulp.
_MARGIN = 1e-5


def ambiguous_boundary(n: int, b: int, max_distance: int) -> int | None:
    """The boundary t (bucket e + t starts there) that distance n is too close to, if any."""
    e = b // 2
    steps = b - e
    if n <= e:  # exact buckets; log(1) = 0 exactly
        return None
    c = math.log(max_distance / e)
    v = steps * math.log(n / e) / c
    t = round(v)
    if 1 <= t <= steps - 1 and abs(v - t) <= _MARGIN * (v + steps / c):
        return t
    return None


def ambiguous_distances(bidirectional: bool, num_buckets: int, max_distance: int, limit: int) -> list[int]:
    b = num_buckets // 2 if bidirectional else num_buckets
    return [n for n in range(limit + 1) if ambiguous_boundary(n, b, max_distance) is not None]


@functools.cache
def _float32_log_bucket_here(n: int, b: int, max_distance: int) -> int:
    """The float32 log bucket of distance n evaluated on this machine, one 0-d op at a time.

    T5's reference code (Mesh TensorFlow, and Hugging Face's T5Attention._relative_position_bucket):
    e + trunc(log(float32(n) / e) / log(max_distance / e) * (b - e)), every operation in float32
    except log(max_distance / e), a Python float rounded to float32 when it divides; capped at b - 1.
    """
    e = b // 2
    f32 = torch.float32
    ratio = torch.tensor(float(n), dtype=f32) / torch.tensor(float(e), dtype=f32)
    scaled = torch.log(ratio) / torch.tensor(math.log(max_distance / e), dtype=f32)
    scaled = scaled * torch.tensor(float(b - e), dtype=f32)
    return min(e + int(scaled.item()), b - 1)


def check_bucket_table(bidirectional: bool, num_buckets: int, max_distance: int, limit: int) -> list[int]:
    """Compare every offset in [-limit, limit] with the exact table; return the ambiguous offsets."""
    kwargs = {"bidirectional": bidirectional, "num_buckets": num_buckets, "max_distance": max_distance}
    offsets = list(range(-limit, limit + 1))
    table = t5_relative_position_bucket(torch.tensor(offsets), **kwargs).tolist()  # type: ignore[arg-type]
    ambiguous = []
    for offset, bucket in zip(offsets, table):
        b, first, n = _direction(offset, bidirectional, num_buckets)
        t = ambiguous_boundary(n, b, max_distance)
        if t is None:
            assert bucket == t5_bucket_exact(offset, **kwargs), (kwargs, offset)  # type: ignore[arg-type]
            continue
        ambiguous.append(offset)
        e = b // 2
        assert bucket in (first + e + t - 1, first + e + t), (kwargs, offset)  # the two sides
        alone = t5_relative_position_bucket(offset, **kwargs).item()  # type: ignore[arg-type]
        assert alone == first + _float32_log_bucket_here(n, b, max_distance), (kwargs, offset)
    return ambiguous


CONFIGS = [
    (True, 32, 128),   # T5 encoder: 16, 32 and 64 lie exactly on boundaries
    (False, 32, 128),  # T5 decoder
    (True, 64, 256),
    (False, 16, 64),
    (True, 8, 20),
    (False, 9, 128),   # odd is fine in causal mode
    (False, 2, 5),     # one exact bucket and one bucket for everything else
    (True, 18, 128),   # boundaries that land exactly on integers (8, 16, 64)
    (False, 19, 288),
    (False, 32, 939),  # distance 728 is 1e-6 (in v) below the start of bucket 31
    (True, 34, 27),    # distances 12 and 18 are exactly the starts of buckets 11 and 14
    (False, 36, 392),  # distance 84 is exactly the start of bucket 27
]


@pytest.mark.parametrize(("bidirectional", "num_buckets", "max_distance"), CONFIGS)
def test_buckets_match_exact_arithmetic_exhaustively(bidirectional: bool, num_buckets: int, max_distance: int) -> None:
    ambiguous = check_bucket_table(bidirectional, num_buckets, max_distance, limit=1000)
    assert len(ambiguous) <= 40  # a handful of boundary distances, not the table
    expected = [t5_bucket_exact(o, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance)
                for o in range(-1000, 1001)]
    if bidirectional:  # offset 0 goes to the lower half, so the first bucket of the upper half is never used
        assert set(expected) == set(range(num_buckets)) - {num_buckets // 2}
    else:
        assert set(expected) == set(range(num_buckets))


@pytest.mark.parametrize("bidirectional", [True, False])
def test_buckets_match_exact_arithmetic_on_a_grid(bidirectional: bool) -> None:
    """Every bucket count up to 24 (per direction), several max distances, distances 0 to 300."""
    counts = range(4, 49, 2) if bidirectional else range(2, 25)
    for num_buckets in counts:
        exact = (num_buckets // 2 if bidirectional else num_buckets) // 2
        for max_distance in sorted({exact + 1, exact + 2, 3 * exact + 1, 20, 64, 100, 128, 250}):
            if max_distance > exact:
                check_bucket_table(bidirectional, num_buckets, max_distance, limit=300)


def test_every_exact_boundary_is_listed_as_ambiguous() -> None:
    """A distance whose v is exactly an integer t (n^L e^t == M^t e^L) is always left out."""
    for bidirectional, num_buckets, max_distance in CONFIGS:
        b = num_buckets // 2 if bidirectional else num_buckets
        e, steps = b // 2, b - b // 2
        on_boundary = [n for n in range(e + 1, 1001) for t in range(1, steps)
                       if n**steps * e**t == max_distance**t * e**steps]
        listed = ambiguous_distances(bidirectional, num_buckets, max_distance, 1000)
        assert set(on_boundary) <= set(listed)
    # T5's encoder: 8 + floor(2 log2(n / 8)) has integer v exactly where n / 8 is a power of 2
    assert ambiguous_distances(True, 32, 128, 1000) == [16, 32, 64]
    assert ambiguous_distances(False, 32, 128, 1000) == []  # 16 log(n/16) / log 8 is never an integer
    assert 728 in ambiguous_distances(False, 32, 939, 1000)


@pytest.mark.parametrize(("bidirectional", "num_buckets", "max_distance"), CONFIGS)
def test_buckets_equal_hugging_face_t5_on_this_machine(bidirectional: bool, num_buckets: int, max_distance: int) -> None:
    """The reference implementation, run here on the same tensor: equal everywhere, boundaries included."""
    modeling_t5 = pytest.importorskip("transformers.models.t5.modeling_t5", reason="transformers is a test dependency")
    offsets = torch.arange(-1000, 1001)
    ours = t5_relative_position_bucket(
        offsets, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance)
    theirs = modeling_t5.T5Attention._relative_position_bucket(
        offsets, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance)
    assert ours.tolist() == theirs.tolist()


def test_published_t5_values() -> None:
    # away from the boundary distances 16, 32 and 64 of the encoder (see the tests above)
    offsets = torch.tensor([-1000, -128, -127, -91, -90, -65, -33, -17, -15, -8, -7, 0, 1, 7, 8, 127, 128])
    enc = t5_relative_position_bucket(offsets)
    dec = t5_relative_position_bucket(offsets, bidirectional=False)
    # encoder: 8 exact buckets per side; distance n >= 8 goes to 8 + floor(8 log(n/8) / log 16)
    # = 8 + floor(2 log2(n/8)): 17 -> 10, 33 -> 12, 65 -> 14, 15 -> 9; bucket 15 starts at
    # 8 * 16^(7/8) = 90.5, so 91 -> 15 and 90 -> 14. Future keys are shifted by 16.
    assert enc.tolist() == [15, 15, 15, 15, 14, 14, 12, 10, 9, 8, 7, 0, 17, 23, 24, 31, 31]
    # decoder: 16 exact buckets; n >= 16 goes to 16 + floor(16 log(n/16) / log 8):
    # 33 -> 16 + floor(5.57) = 21, 65 -> 16 + floor(10.8) = 26, 90 and 91 -> 16 + 13 = 29,
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


def test_offsets_beyond_int64_get_the_last_bucket() -> None:
    """Any distance from max_distance on is the last bucket: Python ints of any size, int64 extremes."""
    for bidirectional in (True, False):
        last = t5_relative_position_bucket(-1000, bidirectional=bidirectional).item()
        assert t5_relative_position_bucket(-(10**400), bidirectional=bidirectional).item() == last
        extremes = torch.tensor([-(2**63), 2**63 - 1])
        far = t5_relative_position_bucket(torch.tensor([-1000, 1000]), bidirectional=bidirectional)
        assert t5_relative_position_bucket(extremes, bidirectional=bidirectional).tolist() == far.tolist()
    assert t5_relative_position_bucket(10**400).item() == 31


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
                bucket = t5_bucket_exact(j - i, bidirectional=bidirectional, num_buckets=8, max_distance=12)
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
        (lambda: t5_relative_position_bucket(3, bidirectional=1), TypeError, r"bidirectional must be a bool .*got int 1"),
        (lambda: T5RelativeBias(0), ValueError, r"num_heads must be an integer >= 1, got 0"),
        (lambda: T5RelativeBias(4, num_buckets=33), ValueError, r"num_buckets must be even when bidirectional=True"),
        (lambda: T5RelativeBias(4)(-1), ValueError, r"q_len must be an integer >= 0, got -1"),
        (lambda: T5RelativeBias(4)(3, -1), ValueError, r"k_len must be an integer >= 0, got -1"),
        (lambda: ShawRelativeAttention(8, 0, 2), ValueError, r"num_heads must be an integer >= 1, got 0"),
        (lambda: ShawRelativeAttention(8, 3, 2), ValueError, r"dim must be divisible by num_heads, got dim=8, num_heads=3"),
        (lambda: ShawRelativeAttention(8, 2, 0), ValueError, r"max_distance must be an integer >= 1, got 0"),
        (lambda: ShawRelativeAttention(8, 2, 2)(torch.zeros(1, 3, 6)), ValueError, r"x must have size 8 in dimension -1"),
        (lambda: ShawRelativeAttention(8, 2, 2)(torch.zeros(3, 8)), ValueError, r"x must have 3 dimensions"),
        # issue 10: flags are real bools, dtypes match, sizes are bounded
        (lambda: ShawRelativeAttention(8, 2, 2)(torch.zeros(1, 3, 8), causal="no"), TypeError, r"causal must be a bool"),
        (lambda: ShawRelativeAttention(8, 2, 2)(torch.zeros(1, 3, 8, dtype=torch.float64)), TypeError,
         r"x must have the module's dtype torch.float32"),
        (lambda: ShawRelativeAttention(2**40, 2, 2), ValueError, r"dim must be an integer <= 16777216"),
        (lambda: relative_positions(2**20, 2**20), ValueError, r"the offsets \(q_len x k_len\) would have"),
        (lambda: t5_relative_position_bucket(torch.tensor([1 + 1j])), TypeError, r"relative_position must hold real"),
        (lambda: t5_relative_position_bucket(3, max_distance=10**400), ValueError, r"max_distance must be an integer <="),
    ],
)
def test_bad_input(call: object, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        call()  # type: ignore[operator]


# ---------------------------------------------------------------- the bias interface, bad input (issue 22)


def test_nan_in_shaw_input_is_reported_as_the_input() -> None:
    x = torch.randn(1, 3, 8)
    x[0, 1, 2] = math.nan
    with pytest.raises(ValueError, match="x must contain only finite values"):
        ShawRelativeAttention(8, 2, 2)(x)


def test_t5_bias_of_positions_is_the_table_entry_of_each_offset() -> None:
    # Independent of bias(): look each (query, key) pair up by hand in the learned table.
    torch.manual_seed(0)
    t5 = T5RelativeBias(3, bidirectional=False, num_buckets=8, max_distance=20)
    queries, keys = torch.tensor([[5, 40], [0, 1]]), torch.tensor([[0, 3, 5, 39], [0, 1, 2, 3]])
    bias = t5.bias(queries, keys)
    assert bias.shape == (2, 3, 2, 4)
    for b in range(2):
        for i in range(2):
            for j in range(4):
                offset = int(keys[b, j] - queries[b, i])
                bucket = int(t5_relative_position_bucket(offset, bidirectional=False, num_buckets=8, max_distance=20))
                assert torch.equal(bias[b, :, i, j], t5.weight[bucket])
    torch.testing.assert_close(t5.bias(6, 6), t5(6), rtol=0, atol=0)  # 0 .. n-1: the forward's bias
    shifted = t5.bias(queries + 1000, keys + 1000)  # offsets only
    assert torch.equal(shifted, bias)


def test_t5_bias_refuses_fractional_positions() -> None:
    with pytest.raises(TypeError, match="q_positions must hold integer positions"):
        T5RelativeBias(2).bias(torch.tensor([0.5]), 3)
