"""posenc.extension: the offset matrices of ReRoPE, Self-Extend, Dual Chunk Attention and STRING, and
the exact RoPE logits for any offsets, checked in float64 against the authors' constructions (RoPE
applied to the positions their code feeds it, one attention matrix per kind of pair)."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc.extension import (
    dual_chunk_offsets,
    log_length_scale,
    relative_offsets,
    rerope_offsets,
    rope_logits,
    self_extend_offsets,
    string_offsets,
)
from posenc.rope import apply_rope, rope_inverse_frequencies

D = 8
THETA = rope_inverse_frequencies(D, base=100.0)


def qk(n: int, seed: int = 0, heads: int = 2) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    return (torch.randn(heads, n, D, generator=generator, dtype=torch.float64),
            torch.randn(heads, n, D, generator=generator, dtype=torch.float64))


def rotated_logits(q: torch.Tensor, k: torch.Tensor, q_pos: torch.Tensor, k_pos: torch.Tensor,
                   scaling: dict[str, object] | None = None) -> torch.Tensor:
    """q rotated to q_pos, k rotated to k_pos, by posenc.rope.apply_rope (float64): one attention matrix."""
    return apply_rope(q, q_pos.double(), base=100.0, scaling=scaling) @ \
        apply_rope(k, k_pos.double(), base=100.0, scaling=scaling).transpose(-2, -1)


def causal(n: int) -> torch.Tensor:
    return torch.ones(n, n, dtype=torch.bool).tril()


# ---------------------------------------------------------------------------------- rope_logits


@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_rope_logits_with_offsets_i_minus_j_are_ordinary_rope(layout: str) -> None:
    q, k = qk(7)
    offsets = relative_offsets(torch.arange(7), torch.arange(7))
    plain = apply_rope(q, layout=layout, base=100.0) @ apply_rope(k, layout=layout, base=100.0).transpose(-2, -1)
    assert torch.allclose(rope_logits(q, k, THETA, offsets, layout=layout), plain, atol=1e-12)


@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_rope_logits_are_a_query_at_offset_r_against_a_key_at_zero(layout: str) -> None:
    # Any real offsets, pair by pair: the reference rotates q_i to r_ij and k_j to 0 with apply_rope.
    q, k = qk(4, seed=1, heads=1)
    offsets = torch.tensor([[0.0, 3.5, -2.0, 7.0], [1.0, 0.0, 12.25, 2.0], [5.0, 5.0, 0.0, -1.0],
                            [100.0, 2.0, 1.5, 0.0]], dtype=torch.float64)
    got = rope_logits(q, k, THETA, offsets, layout=layout)[0]
    for i in range(4):
        for j in range(4):
            q_i = apply_rope(q[0, i:i + 1], offsets[i, j:j + 1], base=100.0, layout=layout)
            k_j = apply_rope(k[0, j:j + 1], torch.zeros(1, dtype=torch.float64), base=100.0, layout=layout)
            assert got[i, j].item() == pytest.approx(float(q_i[0] @ k_j[0]), abs=1e-12)


def test_rope_logits_float32_follow_float64_and_broadcast_offsets_per_row() -> None:
    q, k = qk(6, seed=2)
    batch_q, batch_k = torch.stack([q, 2 * q]), torch.stack([k, -k])  # [2, heads, 6, D]
    offsets = torch.stack([rerope_offsets(torch.arange(6), torch.arange(6), window=2),
                           relative_offsets(torch.arange(6), torch.arange(6))])[:, None]  # [2, 1, 6, 6]
    exact = rope_logits(batch_q, batch_k, THETA, offsets)
    single = rope_logits(q, k, THETA, offsets[0, 0])
    assert torch.allclose(exact[0], single, atol=1e-12)
    assert torch.allclose(exact[1], -2 * rope_logits(q, k, THETA, offsets[1, 0]), atol=1e-12)
    low = rope_logits(batch_q.float(), batch_k.float(), THETA, offsets)
    assert low.dtype == torch.float32
    assert torch.allclose(low.double(), exact, atol=1e-4, rtol=1e-5)


# ------------------------------------------------------- each method against the authors' construction


def test_rerope_is_ordinary_rope_near_the_diagonal_and_a_query_at_window_beyond() -> None:
    # bojone/rerope rerope_patch.py:76-88: attn1 from RoPE at (i, j), attn2 from q rotated to `window`
    # and k rotated to 0; pick attn1 where |i - j| < window.
    n, window = 9, 3
    q, k = qk(n, seed=3)
    pos = torch.arange(n)
    near = rotated_logits(q, k, pos, pos)
    far = rotated_logits(q, k, torch.full((n,), window), torch.zeros(n))
    reference = torch.where((pos[:, None] - pos[None, :]).abs() < window, near, far)
    got = rope_logits(q, k, THETA, rerope_offsets(pos, pos, window=window))
    assert torch.allclose(got[..., causal(n)], reference[..., causal(n)], atol=1e-12)


def test_leaky_rerope_is_linear_interpolation_past_the_window() -> None:
    # leaky_rerope_patch.py:73-97: attn2 from q at i + window (factor - 1) and k at j, both with the
    # frequencies divided by factor (a linear-scaling rotary embedding).
    n, window, factor = 10, 3, 4.0
    q, k = qk(n, seed=4)
    pos = torch.arange(n)
    linear = {"type": "linear", "factor": factor}
    far = rotated_logits(q, k, pos + window * (factor - 1), pos, scaling=linear)
    reference = torch.where((pos[:, None] - pos[None, :]).abs() < window, rotated_logits(q, k, pos, pos), far)
    got = rope_logits(q, k, THETA, rerope_offsets(pos, pos, window=window, factor=factor))
    assert torch.allclose(got[..., causal(n)], reference[..., causal(n)], atol=1e-12)


@pytest.mark.parametrize(("group_size", "window"), [(2, 4), (3, 4), (4, 3), (1, 2)])
def test_self_extend_is_neighbour_attention_plus_grouped_attention(group_size: int, window: int) -> None:
    # datamllab/LongLM self_extend_patch/Llama.py:133-180: grouped query at i // G + W - W / G, grouped key
    # at j // G; neighbour attention where i - j < W.
    n = 13
    q, k = qk(n, seed=5)
    pos = torch.arange(n)
    grouped = rotated_logits(q, k, pos // group_size + window - window / group_size, pos // group_size)
    reference = torch.where(pos[:, None] - pos[None, :] < window, rotated_logits(q, k, pos, pos), grouped)
    got = rope_logits(q, k, THETA, self_extend_offsets(pos, pos, group_size=group_size, window=window))
    assert torch.allclose(got[..., causal(n)], reference[..., causal(n)], atol=1e-12)


@pytest.mark.parametrize(("chunk_size", "local_window"), [(6, 2), (5, 0), (4, 3), (8, 5)])
def test_dual_chunk_attention_is_intra_successive_and_inter_chunk_attention(chunk_size: int,
                                                                            local_window: int) -> None:
    # HKUNLP/ChunkLlama chunkllama_attn_replace.py: keys at j % c; queries at i % c (intra, :162-180),
    # min(i % c + c, chunk_size) (successive, :182-184), min(2c - 1, chunk_size) (inter, :186-192).
    n, c = 17, chunk_size - local_window
    q, k = qk(n, seed=6)
    pos = torch.arange(n)
    key = pos % c
    intra = rotated_logits(q, k, pos % c, key)
    successive = rotated_logits(q, k, torch.clamp(pos % c + c, max=chunk_size), key)
    inter = rotated_logits(q, k, torch.full((n,), min(2 * c - 1, chunk_size)), key)
    apart = pos[:, None] // c - pos[None, :] // c
    reference = torch.where(apart == 0, intra, torch.where(apart == 1, successive, inter))
    got = rope_logits(q, k, THETA, dual_chunk_offsets(pos, pos, chunk_size=chunk_size, local_window=local_window))
    assert torch.allclose(got[..., causal(n)], reference[..., causal(n)], atol=1e-12)


def test_string_is_a_band_of_rope_plus_shifted_queries_beyond_it() -> None:
    # HKUNLP/STRING string_for_llama.py:413-420: queries at i for the band, at i - shift + local_window beyond.
    n, shift, local = 12, 5, 2
    q, k = qk(n, seed=7)
    pos = torch.arange(n)
    shifted = rotated_logits(q, k, pos - shift + local, pos)
    reference = torch.where(pos[:, None] - pos[None, :] < shift, rotated_logits(q, k, pos, pos), shifted)
    got = rope_logits(q, k, THETA, string_offsets(pos, pos, shift=shift, local_window=local))
    assert torch.allclose(got[..., causal(n)], reference[..., causal(n)], atol=1e-12)


def test_log_length_scale_is_the_rerope_query_factor() -> None:
    positions = torch.tensor([0, 1, 15, 16, 17, 100, 4095])
    expected = [max(1.0, math.log(p + 1) / math.log(16)) for p in positions.tolist()]
    assert log_length_scale(positions, 16).tolist() == pytest.approx(expected, rel=1e-12)


# ------------------------------------------------------------------------------- properties


def _past(n: int) -> tuple[torch.Tensor, torch.Tensor]:
    pos = torch.arange(n)
    return pos, (pos[:, None] - pos[None, :]).double()


methods = st.sampled_from(["rerope", "leaky", "self-extend", "dual-chunk", "string"])


def offsets_of(method: str, q_pos: torch.Tensor, k_pos: torch.Tensor, a: int, b: int) -> torch.Tensor:
    """One method's offsets with settings drawn from two integers a, b >= 1."""
    if method == "rerope":
        return rerope_offsets(q_pos, k_pos, window=a)
    if method == "leaky":
        return rerope_offsets(q_pos, k_pos, window=a, factor=1.0 + b / 3)
    if method == "self-extend":
        return self_extend_offsets(q_pos, k_pos, group_size=b, window=a)
    if method == "dual-chunk":
        return dual_chunk_offsets(q_pos, k_pos, chunk_size=a + b, local_window=a - 1)
    return string_offsets(q_pos, k_pos, shift=a + b, local_window=a - 1)


@settings(max_examples=80, deadline=None)
@given(method=methods, n=st.integers(1, 60), a=st.integers(1, 12), b=st.integers(1, 12))
def test_offsets_are_exact_near_the_diagonal_bounded_and_never_negative(method: str, n: int, a: int, b: int) -> None:
    pos, r = _past(n)
    got = offsets_of(method, pos, pos, a, b)
    assert got.shape == (n, n) and got.dtype == torch.float64
    past = r >= 0
    assert torch.equal(got[~past], r[~past])  # keys after the query are left alone
    assert bool((got[past] >= 0).all())
    top = n - 1
    if method == "rerope":  # exact below the window, never beyond it
        near, bound = a, float(a)
    elif method == "leaky":
        near, bound = a, max(a, a + (top - a) / (1.0 + b / 3))
    elif method == "self-extend":
        near, bound = a, top // b + a - a / b
    elif method == "dual-chunk":  # chunks of a + b - (a - 1) = b + 1 tokens; offsets at most a + b
        near, bound = 1, float(a + b)
    else:
        near, bound = a + b, max(a + b - 1.0, top - (a + b) + (a - 1))
    exact = past & (r < near)
    if method == "dual-chunk":  # intra-chunk pairs keep their offset
        exact = past & (pos[:, None] // (b + 1) == pos[None, :] // (b + 1))
    assert torch.equal(got[exact], r[exact])
    assert float(got[past].max()) <= bound + 1e-9
    if method != "self-extend":  # (a grouped key can land up to 1 - 1/G farther than it is)
        assert bool((got[past] <= r[past] + 1e-9).all())  # the others never move a key farther away


@settings(max_examples=40, deadline=None)
@given(method=methods, n=st.integers(1, 30), a=st.integers(1, 8), b=st.integers(1, 8),
       shift=st.integers(0, 40))
def test_rows_of_a_batch_are_their_own_positions(method: str, n: int, a: int, b: int, shift: int) -> None:
    rows = torch.stack([torch.arange(n), torch.arange(n) + shift])
    batched = offsets_of(method, rows, rows, a, b)
    assert batched.shape == (2, n, n)
    for row in range(2):
        assert torch.equal(batched[row], offsets_of(method, rows[row], rows[row], a, b))
    if method in ("rerope", "leaky", "string"):  # functions of i - j alone
        assert torch.equal(batched[0], batched[1])


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 50), window=st.integers(0, 10), train=st.integers(12, 40))
def test_self_extend_with_the_smallest_group_that_fits_stays_within_training(n: int, window: int,
                                                                               train: int) -> None:
    # The group size the study picks: the smallest G with (n - 1) // G + W - W / G <= train - 1.
    group = next(g for g in range(1, n + 2) if (n - 1) // g + window - window / g <= train - 1)
    pos, r = _past(n)
    got = self_extend_offsets(pos, pos, group_size=group, window=window)
    assert float(got.max()) <= train - 1
    if n <= train:
        assert group == 1 and torch.equal(got, r)  # nothing to extend: RoPE's own offsets


def test_settings_that_change_nothing_give_rope_offsets() -> None:
    pos, r = _past(20)
    assert torch.equal(rerope_offsets(pos, pos, window=20), r)
    assert torch.equal(rerope_offsets(pos, pos, window=3, factor=1.0), r)
    assert torch.equal(self_extend_offsets(pos, pos, group_size=1, window=3), r)
    assert torch.equal(dual_chunk_offsets(pos, pos, chunk_size=25, local_window=2), r)  # one chunk
    assert torch.equal(string_offsets(pos, pos, shift=20, local_window=3), r)


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: rerope_offsets(torch.arange(3), torch.arange(3), window=0), ValueError, "window must be an integer >= 1"),
        (lambda: rerope_offsets(torch.arange(3), torch.arange(3), window=2, factor=0.5), ValueError,
         "factor must be >= 1.0"),
        (lambda: self_extend_offsets(torch.arange(3), torch.arange(3), group_size=0, window=2), ValueError,
         "group_size must be an integer >= 1"),
        (lambda: dual_chunk_offsets(torch.arange(3), torch.arange(3), chunk_size=4, local_window=4), ValueError,
         "local_window must be an integer <= 3"),
        (lambda: string_offsets(torch.arange(3), torch.arange(3), shift=3, local_window=3), ValueError,
         "local_window must be an integer <= 2"),
        (lambda: relative_offsets(torch.tensor([-1, 0]), torch.arange(2)), ValueError, "query_positions must hold"),
        (lambda: relative_offsets(torch.tensor([0.5]), torch.arange(2)), ValueError, "whole-number"),
        (lambda: relative_offsets(torch.arange(2), torch.tensor([True])), TypeError, "key_positions must hold real"),
        (lambda: relative_offsets(torch.zeros(2, 3, dtype=torch.long), torch.arange(3)), ValueError,
         "both be 1-D or both 2-D"),
        (lambda: relative_offsets(torch.zeros(2, 3, dtype=torch.long), torch.zeros(3, 3, dtype=torch.long)),
         ValueError, "same batch size"),
        (lambda: relative_offsets(torch.arange(2**14), torch.arange(2**14)), ValueError, "more than"),
        (lambda: log_length_scale(torch.arange(3), 1), ValueError, "train_length must be an integer >= 2"),
        (lambda: rope_logits(torch.randn(3, 8), torch.randn(3, 6), THETA, torch.zeros(3, 3)), ValueError,
         "even last dimension"),
        (lambda: rope_logits(torch.randn(3, 8), torch.randn(3, 8), THETA[:2], torch.zeros(3, 3)), ValueError,
         "inv_freq must hold d / 2 = 4"),
        (lambda: rope_logits(torch.randn(3, 8), torch.randn(3, 8), THETA, torch.zeros(2, 3)), ValueError,
         "offsets must broadcast"),
        (lambda: rope_logits(torch.randn(3, 8), torch.randn(3, 8), THETA, torch.full((3, 3), math.nan)), ValueError,
         "offsets must contain only finite"),
        (lambda: rope_logits(torch.randn(3, 8), torch.randn(3, 8).double(), THETA, torch.zeros(3, 3)), TypeError,
         "one dtype"),
        (lambda: rope_logits(torch.randn(3, 8), torch.randn(3, 8), THETA, torch.zeros(3, 3), layout="x"), ValueError,
         "layout must be one of"),
    ],
)
def test_bad_input_is_a_clear_error(call, error, match) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(error, match=match):
        call()
