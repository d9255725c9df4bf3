"""Latent attention: a float64 loop of DeepSeek-V2's equations, the cache, absorption, bad input."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc.latent import LatentAttention, LatentCache, latent_cache_widths, latent_key_logits

SIZES = {"kv_lora_rank": 4, "qk_nope_head_dim": 6, "qk_rope_head_dim": 4, "v_head_dim": 5}


def rotate(x: torch.Tensor, position: int, base: float = 10000.0, layout: str = "half") -> torch.Tensor:
    """One vector turned by RoPE at ``position`` (RoFormer eq. 34), float64, as a loop over pairs."""
    d = x.shape[-1]
    out = x.double().clone()
    for j in range(d // 2):
        a, b = (j, j + d // 2) if layout == "half" else (2 * j, 2 * j + 1)
        angle = position * base ** (-2 * j / d)
        out[a] = x[a] * math.cos(angle) - x[b] * math.sin(angle)
        out[b] = x[b] * math.cos(angle) + x[a] * math.sin(angle)
    return out


def make(seed: int = 0, **kwargs: object) -> LatentAttention:
    torch.manual_seed(seed)
    layer = LatentAttention(16, 2, **{**SIZES, **kwargs}).double().eval()  # type: ignore[arg-type]
    with torch.no_grad():
        for p in layer.parameters():
            p.normal_(0, 0.5)
    return layer


def reference(layer: LatentAttention, x: torch.Tensor) -> torch.Tensor:
    """DeepSeek-V2 section 2.1 with decoupled RoPE, one head, one query, one key at a time."""
    (seq, _), heads = x.shape, layer.num_heads
    nope, rope, v_dim, r = layer.qk_nope_head_dim, layer.qk_rope_head_dim, layer.v_head_dim, layer.kv_lora_rank
    w_q = layer.q_proj.weight.double()  # type: ignore[union-attr]
    down = layer.kv_a_proj.weight.double()
    w_up = layer.kv_b_proj.weight.double().view(heads, nope + v_dim, r)
    out = torch.zeros(seq, heads * v_dim, dtype=torch.float64)
    compressed = x @ down.T
    latent = compressed[:, :r]
    latent = latent / torch.sqrt((latent ** 2).mean(-1, keepdim=True) + 1e-6) * layer.kv_a_norm.weight.double()
    k_rope = [rotate(compressed[n, r:], n, layout=layer.rotary.layout) for n in range(seq)]
    scale = layer.softmax_scale / math.sqrt(nope + rope)
    for h in range(heads):
        for m in range(seq):
            q = (w_q @ x[m]).view(heads, nope + rope)[h]
            q_rot = rotate(q[nope:], m, layout=layer.rotary.layout)
            logits = []
            for n in range(m + 1):
                k_nope = w_up[h, :nope] @ latent[n]
                logits.append(float(q[:nope] @ k_nope + q_rot @ k_rope[n]) * scale)
            top = max(logits)
            weights = [math.exp(v - top) for v in logits]
            total = sum(weights)
            value = sum(w / total * (w_up[h, nope:] @ latent[n]) for n, w in enumerate(weights))
            out[m, h * v_dim:(h + 1) * v_dim] = value
    return out @ layer.out.weight.double().T


@pytest.mark.parametrize("layout", ["half", "interleaved"])
@pytest.mark.parametrize("softmax_scale", [1.0, 1.3])
def test_matches_the_float64_loop(layout: str, softmax_scale: float) -> None:
    layer = make(layout=layout, softmax_scale=softmax_scale)
    x = torch.randn(1, 6, 16, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        want = reference(layer, x[0])
        torch.testing.assert_close(layer(x)[0][0], want, rtol=1e-10, atol=1e-10)
        torch.testing.assert_close(layer(x, absorb=True)[0][0], want, rtol=1e-10, atol=1e-10)


@settings(max_examples=10, deadline=None)
@given(seq=st.integers(1, 9), chunk=st.integers(1, 4), offset=st.integers(0, 5), lora=st.sampled_from([None, 6]),
       seed=st.integers(0, 2**16))
def test_cached_decoding_equals_the_full_forward(seq: int, chunk: int, offset: int, lora: int | None,
                                                  seed: int) -> None:
    layer = make(seed, q_lora_rank=lora)
    x = torch.randn(2, seq, 16, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))
    positions = torch.arange(offset, offset + seq)
    cache = LatentCache()
    with torch.no_grad():
        full, _ = layer(x, positions=positions)
        parts = [layer(x[:, i:i + chunk], positions=positions[i:i + chunk], cache=cache, absorb=bool(i % 2))[0]
                 for i in range(0, seq, chunk)]
    torch.testing.assert_close(torch.cat(parts, dim=1), full, rtol=1e-10, atol=1e-10)
    assert cache.latent is not None and cache.rope_key is not None
    assert tuple(cache.latent.shape) == (2, seq, 4) and tuple(cache.rope_key.shape) == (2, seq, 4)


def test_absorbing_is_exact_without_rotation_and_fails_with_one() -> None:
    g = torch.Generator().manual_seed(3)
    heads, d, r = 2, 8, 4
    q = torch.randn(heads, 3, d, dtype=torch.float64, generator=g)
    c = torch.randn(5, r, dtype=torch.float64, generator=g)
    w = torch.randn(heads, d, r, dtype=torch.float64, generator=g)
    p, n = [2, 3, 4], list(range(5))
    expanded = torch.zeros(heads, 3, 5, dtype=torch.float64)
    absorbed = torch.zeros(heads, 3, 5, dtype=torch.float64)
    plain = torch.zeros(heads, 3, 5, dtype=torch.float64)
    for h in range(heads):
        for i in range(3):
            for j in range(5):
                key = w[h] @ c[j]
                plain[h, i, j] = q[h, i] @ key
                expanded[h, i, j] = rotate(q[h, i], p[i]) @ rotate(key, n[j])
                absorbed[h, i, j] = (w[h].T @ rotate(q[h, i], p[i])) @ c[j]
    pos = {"q_positions": torch.tensor(p), "k_positions": torch.tensor(n)}
    torch.testing.assert_close(latent_key_logits(q, c, w), plain, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(latent_key_logits(q, c, w, absorb=True), plain, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(latent_key_logits(q, c, w, **pos), expanded, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(latent_key_logits(q, c, w, absorb=True, **pos), absorbed, rtol=1e-12, atol=1e-12)
    assert float((expanded - absorbed).abs().max()) > 0.1  # the rotation breaks the absorption


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision(dtype: torch.dtype) -> None:
    layer = make(4).float()
    x = torch.randn(2, 10, 16, generator=torch.Generator().manual_seed(4))
    with torch.no_grad():
        want = layer(x)[0]
        got = layer.to(dtype)(x.to(dtype))[0]
    assert got.dtype == dtype
    torch.testing.assert_close(got.float(), want, rtol=0, atol=0.15 if dtype == torch.bfloat16 else 0.03)


def test_cache_widths() -> None:
    from transformers import DeepseekV3Config

    v3 = DeepseekV3Config()  # the class defaults are DeepSeek-V3's sizes
    assert latent_cache_widths(v3) == {"latent": 512 + 64, "expanded": 128 * (128 + 64 + 128)}
    layer = make()
    assert latent_cache_widths({"num_attention_heads": 2, **SIZES}) == {"latent": 8, "expanded": 2 * 15}
    assert layer.kv_lora_rank + layer.qk_rope_head_dim == 8


@pytest.mark.parametrize(("call", "error", "match"), [
    (lambda: LatentAttention(16, 2, **{**SIZES, "kv_lora_rank": 0}), ValueError, "kv_lora_rank"),
    (lambda: LatentAttention(16, 2, **SIZES, layout="zig"), ValueError, "layout"),
    (lambda: LatentAttention(16, 2, **SIZES, softmax_scale=0.0), ValueError, "softmax_scale"),
    (lambda: make()(torch.zeros(1, 3, 15, dtype=torch.float64)), ValueError, "x must have size 16"),
    (lambda: make()(torch.zeros(1, 3, 16, dtype=torch.float64), positions=torch.arange(4)), ValueError, "positions"),
    (lambda: make()(torch.zeros(1, 3, 16, dtype=torch.float64), cache=[]), TypeError, "cache"),
    (lambda: LatentCache().append(torch.zeros(1, 2, 4), torch.zeros(1, 3, 4)), ValueError, "rope_key"),
    (lambda: latent_key_logits(torch.zeros(2, 3, 8), torch.zeros(5, 4), torch.zeros(2, 8, 3)), ValueError, "w_uk"),
    (lambda: latent_key_logits(torch.zeros(2, 3, 8), torch.zeros(5, 4), torch.zeros(2, 8, 4),
                               q_positions=torch.arange(3)), ValueError, "k_positions"),
    (lambda: latent_cache_widths({"num_attention_heads": 2}), TypeError, "kv_lora_rank"),
])
def test_bad_input(call: object, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        call()  # type: ignore[operator]
