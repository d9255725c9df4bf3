"""Learned sinks and the score hook of scaled_dot_product_attention, against float64 loops."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc.attention import SelfAttention, scaled_dot_product_attention
from posenc.extension import relative_offsets, rope_logits
from posenc.rope import RotaryEmbedding


def reference(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, sinks: torch.Tensor, bias: torch.Tensor,
              allowed: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """w_ij = exp(l_ij) / (sum_j' exp(l_ij') + exp(sink_h)) over the allowed keys, as Python sums."""
    heads, q_len, d = q.shape
    k_len = k.shape[1]
    weights = torch.zeros(heads, q_len, k_len, dtype=torch.float64)
    for h in range(heads):
        for i in range(q_len):
            logits = [float(q[h, i].double() @ k[h, j].double()) / math.sqrt(d) + float(bias[h, i, j])
                      for j in range(k_len)]
            terms = [math.exp(logits[j]) if allowed[i, j] else 0.0 for j in range(k_len)]
            total = sum(terms) + math.exp(float(sinks[h]))
            for j in range(k_len):
                weights[h, i, j] = terms[j] / total
    return weights @ v.double(), weights


@settings(max_examples=25, deadline=None)
@given(heads=st.integers(1, 3), q_len=st.integers(1, 5), extra=st.integers(0, 3), seed=st.integers(0, 2**16))
def test_sinks_match_the_float64_loop(heads: int, q_len: int, extra: int, seed: int) -> None:
    g = torch.Generator().manual_seed(seed)
    k_len = q_len + extra
    q, k, v = (torch.randn(heads, n, 4, generator=g, dtype=torch.float64) for n in (q_len, k_len, k_len))
    sinks = torch.randn(heads, generator=g, dtype=torch.float64) * 2
    bias = torch.randn(heads, q_len, k_len, generator=g, dtype=torch.float64)
    mask = torch.rand(q_len, k_len, generator=g) > 0.3
    causal = torch.ones(q_len, k_len, dtype=torch.bool).tril(k_len - q_len)
    out, weights = scaled_dot_product_attention(q, k, v, bias=bias, mask=mask, causal=True, sinks=sinks)
    want_out, want_weights = reference(q, k, v, sinks, bias, mask & causal)
    torch.testing.assert_close(weights, want_weights, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(out, want_out, rtol=1e-12, atol=1e-12)
    assert bool((weights.sum(-1) < 1).all())  # the sink always keeps a share


def test_a_blind_query_gives_zeros_with_sinks_too() -> None:
    q = k = v = torch.randn(2, 3, 4)
    mask = torch.tensor([[False, False, False], [True, False, False], [True, True, True]])
    out, weights = scaled_dot_product_attention(q, k, v, mask=mask, sinks=torch.tensor([0.0, 5.0]))
    assert torch.equal(weights[:, 0], torch.zeros(2, 3)) and torch.equal(out[:, 0], torch.zeros(2, 4))
    empty = scaled_dot_product_attention(q, k[:, :0], v[:, :0], sinks=torch.zeros(2))
    assert empty[0].shape == (2, 3, 4) and not bool(empty[0].isnan().any())


def test_a_very_negative_sink_is_no_sink_and_a_large_one_takes_everything() -> None:
    g = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(1, 2, 5, 8, generator=g) for _ in range(3))
    plain = scaled_dot_product_attention(q, k, v, causal=True)
    torch.testing.assert_close(scaled_dot_product_attention(q, k, v, causal=True, sinks=torch.full((2,), -1e4)),
                               plain, rtol=0, atol=1e-6)
    hungry = scaled_dot_product_attention(q, k, v, causal=True, sinks=torch.full((2,), 1e4))
    assert float(hungry[1].abs().max()) < 1e-30


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_sinks_are_computed_in_float32(dtype: torch.dtype) -> None:
    g = torch.Generator().manual_seed(2)
    q, k, v = (torch.randn(1, 2, 6, 8, generator=g) for _ in range(3))
    sinks = torch.tensor([0.5, -0.5])
    out, weights = scaled_dot_product_attention(q.to(dtype), k.to(dtype), v.to(dtype), sinks=sinks.to(dtype))
    want, _ = scaled_dot_product_attention(q.to(dtype).float(), k.to(dtype).float(), v.to(dtype).float(),
                                           sinks=sinks.to(dtype).float())
    assert out.dtype == weights.dtype == dtype
    torch.testing.assert_close(out.float(), want, rtol=0, atol=1e-2)


def test_self_attention_learns_its_sinks() -> None:
    torch.manual_seed(0)
    layer = SelfAttention(8, 2, sinks=True)
    assert layer.sinks is not None and torch.equal(layer.sinks.detach(), torch.zeros(2))
    out, _ = layer(torch.randn(2, 4, 8), causal=True)
    out.sum().backward()
    assert layer.sinks.grad is not None and bool(layer.sinks.grad.abs().gt(0).any())
    assert "sinks" not in dict(SelfAttention(8, 2).named_parameters())
    torch.manual_seed(0)
    plain = SelfAttention(8, 2)
    torch.manual_seed(0)
    sinked = SelfAttention(8, 2, sinks=True)
    assert torch.equal(plain.qkv.weight, sinked.qkv.weight)  # the sinks draw nothing from the generator


# ---------------------------------------------------------------- the score hook


def test_the_default_logits_through_the_hook_change_nothing() -> None:
    g = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(2, 2, 5, 8, generator=g) for _ in range(3))
    bias, mask = torch.randn(2, 5, 5, generator=g), torch.rand(5, 5, generator=g) > 0.2

    def plain(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])

    for kwargs in ({}, {"bias": bias}, {"mask": mask, "causal": True}, {"sinks": torch.ones(2)}):
        want = scaled_dot_product_attention(q, k, v, **kwargs)  # type: ignore[arg-type]
        got = scaled_dot_product_attention(q, k, v, scores=plain, **kwargs)  # type: ignore[arg-type]
        torch.testing.assert_close(got, want, rtol=0, atol=0)


def test_rope_logits_from_offsets_are_the_rotated_logits() -> None:
    g = torch.Generator().manual_seed(4)
    q, k, v = (torch.randn(1, 2, 6, 8, generator=g, dtype=torch.float64) for _ in range(3))
    rope = RotaryEmbedding(8)
    positions = torch.arange(6)
    offsets = relative_offsets(positions, positions)

    def from_offsets(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        return rope_logits(q, k, rope.inv_freq, offsets) / math.sqrt(q.shape[-1])

    got = scaled_dot_product_attention(q, k, v, causal=True, scores=from_offsets)
    want = scaled_dot_product_attention(rope.rotate_queries(q, positions), rope.rotate_keys(k, positions), v,
                                        causal=True)
    torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)
    seen: list[tuple[int, ...]] = []

    def spy(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:  # called after kv_hook, on what attention uses
        seen.append(tuple(k.shape))
        return q @ k.transpose(-2, -1)

    layer = SelfAttention(8, 2)
    extra = torch.randn(1, 2, 3, 4)
    layer(torch.randn(1, 4, 8), kv_hook=lambda q, k, v: (q, torch.cat((extra, k), 2), torch.cat((extra, v), 2)),
          scores=spy)
    assert seen == [(1, 2, 7, 4)]


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"sinks": torch.zeros(3)}, ValueError, "sinks must hold one logit per head"),
    ({"sinks": torch.zeros(2, 1)}, ValueError, "sinks"),
    ({"sinks": torch.zeros(2, dtype=torch.long)}, TypeError, "sinks"),
    ({"sinks": torch.tensor([0.0, math.nan])}, ValueError, "sinks"),
    ({"scores": "logits"}, TypeError, "scores must be callable"),
    ({"scores": lambda q, k: torch.zeros(2, 4, 4)}, ValueError, "scores must return the logits' shape"),
    ({"scores": lambda q, k: torch.zeros(1, 2, 4, 4, dtype=torch.long)}, TypeError, "scores must return a real"),
])
def test_bad_input_is_named(kwargs: dict[str, object], error: type[Exception], match: str) -> None:
    q = torch.randn(1, 2, 4, 8)
    with pytest.raises(error, match=match):
        scaled_dot_product_attention(q, q, q, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="sinks must hold one logit per head"):
        scaled_dot_product_attention(q[0, 0], q[0, 0], q[0, 0], sinks=torch.zeros(1))
    with pytest.raises(TypeError, match="sinks must be a bool"):
        SelfAttention(8, 2, sinks=1)  # type: ignore[arg-type]
