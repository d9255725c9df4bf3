r"""Multi-head latent attention (DeepSeek-V2/V3, Kimi K2) and its decoupled RoPE.

Latent attention caches, per token, one small vector \(c\) (the *latent*, ``kv_lora_rank`` wide)
instead of every head's key and value; each head's key and value are up-projections of it,
\(k_h = W^{UK}_h c\) and \(v_h = W^{UV}_h c\). Because \(q_h \cdot (W^{UK}_h c) = ((W^{UK}_h)^\top q_h) \cdot c\),
the key up-projection can be *absorbed* into the query: a decoder never expands the cached latents
into keys at all.

A rotation by the key's position between \(W^{UK}_h\) and the dot product would break this:
\(q_h \cdot R_n W^{UK}_h c\) needs \((W^{UK}_h)^\top R_n^\top\) for every key position \(n\), no single
absorbed query (`latent_key_logits` shows it). So DeepSeek-V2 (https://arxiv.org/abs/2405.04434,
section 2.1.3) *decouples* RoPE: each head's query gets a separate part of ``qk_rope_head_dim``
features that is rotated, and all heads share one rotated key part of that width, computed from
the hidden state and cached beside the latent. The logit of head \(h\) for a query at \(m\) and a key
at \(n\) is then

\[
    q^{\text{nope}}_h \cdot (W^{UK}_h c_n) + R_m q^{\text{rope}}_h \cdot R_n k^{\text{rope}}_n
\]

whose first term absorbs and whose second is ordinary RoPE. The cache holds ``kv_lora_rank +
qk_rope_head_dim`` numbers per token and layer (DeepSeek-V3: 512 + 64) instead of
``heads * (qk_head_dim + v_head_dim)`` (128 * (192 + 128)). With YaRN, DeepSeek also multiplies
the softmax scale \(1/\sqrt{d_{\text{nope}} + d_{\text{rope}}}\) (``qk_nope_head_dim`` and
``qk_rope_head_dim``) by \(m(s, a)^2\), YaRN's \(m(s, a) = 0.1\, a \ln s + 1\) at the ``factor`` \(s\) and
\(a\) = ``mscale_all_dim`` (``softmax_scale``, read by `posenc.configs.read_config`).

`LatentAttention` is checked against transformers' ``DeepseekV3Attention`` (version 5.23.0,
``models/deepseek_v3/modeling_deepseek_v3.py:349-482``) with the same weights.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import torch
from torch import Tensor, nn

from posenc._checks import (check_bool, check_choice, check_elements, check_float, check_int, check_position_ids,
                            check_size_int, check_tensor)
from posenc.attention import scaled_dot_product_attention
from posenc.rope import RotaryEmbedding
from posenc.configs import read_config
from posenc.rope_layouts import LAYOUTS

__all__ = ["LatentAttention", "LatentCache", "latent_cache_widths", "latent_key_logits"]


class _RMSNorm(nn.Module):
    """``weight * x / sqrt(mean(x²) + eps)``, computed in at least float32 (as DeepSeek's RMSNorm)."""

    def __init__(self, width: int, eps: float) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(width))
        self.eps = eps

    def forward(self, x: Tensor) -> Tensor:
        dtype = x.dtype if x.dtype in (torch.float32, torch.float64) else torch.float32
        y = x.to(dtype)
        return self.weight * (y * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + self.eps)).to(x.dtype)


class LatentCache:
    """What latent attention keeps per token: the latent and the rotated key part all heads share.

    Attributes:
        latent: ``[batch, entries, kv_lora_rank]``, normalised, not rotated (None before the first call).
        rope_key: ``[batch, entries, qk_rope_head_dim]``, rotated by each entry's position.
        seen: how many tokens have been fed (the next default position).

    Examples:
        >>> cache = LatentCache()
        >>> len(cache), cache.seen
        (0, 0)
    """

    def __init__(self) -> None:
        self.latent: Tensor | None = None
        self.rope_key: Tensor | None = None
        self.seen = 0

    def __len__(self) -> int:
        return 0 if self.latent is None else int(self.latent.shape[1])

    def append(self, latent: Tensor, rope_key: Tensor) -> tuple[Tensor, Tensor]:
        """Add this call's ``latent [batch, new, r]`` and ``rope_key [batch, new, d_rope]``; returns all of them."""
        latent = check_tensor("latent", latent, ndim=3, floating=True)
        rope_key = check_tensor("rope_key", rope_key, ndim=3, floating=True)
        if rope_key.shape[:2] != latent.shape[:2]:
            raise ValueError(f"rope_key must have the batch and entries of latent {tuple(latent.shape[:2])}, "
                             f"got shape {tuple(rope_key.shape)}")
        if self.latent is not None and self.rope_key is not None:
            if (self.latent.shape[0], self.latent.shape[2], self.rope_key.shape[2]) != (
                    latent.shape[0], latent.shape[2], rope_key.shape[2]):
                raise ValueError(f"latent and rope_key must match the cached batch and widths "
                                 f"{tuple(self.latent.shape)} / {tuple(self.rope_key.shape)}, got shapes "
                                 f"{tuple(latent.shape)} / {tuple(rope_key.shape)}")
            latent = torch.cat((self.latent.to(latent.dtype), latent), dim=1)
            rope_key = torch.cat((self.rope_key.to(rope_key.dtype), rope_key), dim=1)
        self.latent, self.rope_key = latent, rope_key
        self.seen = int(latent.shape[1])
        return latent, rope_key


def latent_cache_widths(config: Mapping[str, Any] | Any) -> dict[str, int]:
    """Numbers cached per token and layer by latent attention and by ordinary attention of the same heads.

    Args:
        config: a DeepSeek-style config (dict or transformers config) with ``num_attention_heads``,
            ``kv_lora_rank``, ``qk_nope_head_dim``, ``qk_rope_head_dim`` and ``v_head_dim``.

    Returns:
        ``{"latent": kv_lora_rank + qk_rope_head_dim, "expanded": heads * (qk_nope + qk_rope + v)}``.

    Examples:
        >>> latent_cache_widths({"num_attention_heads": 128, "kv_lora_rank": 512,
        ...                      "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
        ...                      "v_head_dim": 128})
        {'latent': 576, 'expanded': 40960}
    """
    get = config.get if isinstance(config, Mapping) else lambda key: getattr(config, key, None)
    sizes = {key: check_size_int(f"config[{key!r}]", get(key)) for key in
             ("num_attention_heads", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim")}
    return {"latent": sizes["kv_lora_rank"] + sizes["qk_rope_head_dim"],
            "expanded": sizes["num_attention_heads"] * (sizes["qk_nope_head_dim"] + sizes["qk_rope_head_dim"]
                                                         + sizes["v_head_dim"])}


class LatentAttention(nn.Module):
    r"""Multi-head latent attention with decoupled RoPE, as DeepSeek-V2/V3 (see the module docstring).

    Args:
        dim: model width.
        num_heads: attention heads.
        kv_lora_rank: width of the cached latent.
        qk_nope_head_dim: per head, the query/key features without positions.
        qk_rope_head_dim: per head, the rotated query features; the width of the shared rotated key.
        v_head_dim: per head, the value width.
        q_lora_rank: None (queries projected directly) or the width of the query's own low-rank
            bottleneck (DeepSeek-V3: 1536).
        rope_base: the RoPE base of the rotated parts (`posenc.rope.RotaryEmbedding`).
        rope_scaling: their context-extension rule, as `posenc.rope.RotaryEmbedding` takes it.
        layout: their pair layout; DeepSeek's checkpoints pair features as ``"interleaved"``.
        softmax_scale: a factor on \(1/\sqrt{d_{\text{nope}} + d_{\text{rope}}}\) (``qk_nope_head_dim``,
            ``qk_rope_head_dim``; DeepSeek's YaRN \(m(s, a)^2\) at \(a\) = ``mscale_all_dim``; `from_config`
            reads it).
        bias: biases on the query-down, key/value-down and output projections (``attention_bias``).
        eps: the epsilon of the RMS norms on the latents.

    ``forward(x, *, positions=None, cache=None, mask=None, absorb=False)`` returns ``(output [batch,
    seq, dim], weights [batch, heads, seq, k_len])``; causal, the cached tokens first. ``absorb``
    computes the same thing with the key up-projection folded into the queries and the value
    up-projection applied after attention, attending to the latents themselves.

    Examples:
        >>> _ = torch.manual_seed(0)
        >>> mla = LatentAttention(16, 2, kv_lora_rank=4, qk_nope_head_dim=6,
        ...                       qk_rope_head_dim=4, v_head_dim=5)
        >>> x = torch.randn(1, 7, 16)
        >>> # absorbing is exact
        >>> torch.allclose(mla(x)[0], mla(x, absorb=True)[0], atol=1e-6)
        True
        >>> cache = LatentCache()
        >>> steps = torch.cat([mla(x[:, i:i + 1], cache=cache)[0]
        ...                    for i in range(7)], dim=1)
        >>> (torch.allclose(steps, mla(x)[0], atol=1e-6),
        ...  tuple(cache.latent.shape), tuple(cache.rope_key.shape))
        (True, (1, 7, 4), (1, 7, 4))
    """

    def __init__(self, dim: int, num_heads: int, *, kv_lora_rank: int, qk_nope_head_dim: int, qk_rope_head_dim: int,
                 v_head_dim: int, q_lora_rank: int | None = None, rope_base: float = 10000.0,
                 rope_scaling: Mapping[str, object] | None = None, layout: str = "interleaved",
                 softmax_scale: float = 1.0, bias: bool = False, eps: float = 1e-6) -> None:
        super().__init__()
        self.dim, self.num_heads = check_size_int("dim", dim), check_size_int("num_heads", num_heads)
        self.kv_lora_rank = check_size_int("kv_lora_rank", kv_lora_rank)
        self.qk_nope_head_dim = check_size_int("qk_nope_head_dim", qk_nope_head_dim)
        self.qk_rope_head_dim = check_size_int("qk_rope_head_dim", qk_rope_head_dim)
        self.v_head_dim = check_size_int("v_head_dim", v_head_dim)
        self.q_lora_rank = None if q_lora_rank is None else check_size_int("q_lora_rank", q_lora_rank)
        self.softmax_scale = check_float("softmax_scale", softmax_scale, positive=True, maximum=1e6)
        bias, eps = check_bool("bias", bias), check_float("eps", eps, positive=True, maximum=1.0)
        layout = check_choice("layout", layout, LAYOUTS)
        self.qk_head_dim = self.qk_nope_head_dim + self.qk_rope_head_dim
        heads = self.num_heads
        for what, *sizes in (("the query projection", dim, heads * self.qk_head_dim),
                             ("the key/value up-projection", self.kv_lora_rank, heads * (qk_nope_head_dim + v_head_dim)),
                             ("the output projection", heads * self.v_head_dim, dim)):
            check_elements(what, *sizes)
        if self.q_lora_rank is None:
            self.q_proj: nn.Module = nn.Linear(dim, heads * self.qk_head_dim, bias=False)
        else:
            check_elements("the query down-projection", dim, self.q_lora_rank)
            self.q_proj = nn.Sequential(nn.Linear(dim, self.q_lora_rank, bias=bias), _RMSNorm(self.q_lora_rank, eps),
                                        nn.Linear(self.q_lora_rank, heads * self.qk_head_dim, bias=False))
        self.kv_a_proj = nn.Linear(dim, self.kv_lora_rank + self.qk_rope_head_dim, bias=bias)
        self.kv_a_norm = _RMSNorm(self.kv_lora_rank, eps)
        self.kv_b_proj = nn.Linear(self.kv_lora_rank, heads * (self.qk_nope_head_dim + self.v_head_dim), bias=False)
        self.out = nn.Linear(heads * self.v_head_dim, dim, bias=bias)
        rope_base = check_float("rope_base", rope_base, positive=True)
        try:
            self.rotary = RotaryEmbedding(self.qk_rope_head_dim, base=rope_base, layout=layout, scaling=rope_scaling)
        except (TypeError, ValueError) as error:  # name the arguments as the caller spelled them
            raise type(error)(f"rope_base/rope_scaling: {error}") from None

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | Any) -> LatentAttention:
        """A layer with the sizes, RoPE and softmax scale of a DeepSeek-V2/V3 config (dict or transformers config)."""
        rope = next((layer for layer in read_config(config).layers.values() if layer.rotates), None)
        if rope is None:
            raise ValueError("config has no layer with RoPE: latent attention rotates its decoupled part")
        get = config.get if isinstance(config, Mapping) else lambda key: getattr(config, key, None)
        sizes = {key: check_size_int(f"config[{key!r}]", get(key)) for key in
                 ("hidden_size", "num_attention_heads", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
                  "v_head_dim")}
        kwargs = rope.rotary_kwargs()
        return cls(sizes.pop("hidden_size"), sizes.pop("num_attention_heads"), **sizes, q_lora_rank=get("q_lora_rank"),
                   rope_base=kwargs["base"], rope_scaling=kwargs["scaling"], layout=kwargs["layout"],
                   softmax_scale=rope.softmax_scale, bias=bool(get("attention_bias") or False),
                   eps=float(get("rms_norm_eps") or 1e-6))

    @property
    def scale(self) -> float:
        r"""The logits' scale: ``softmax_scale`` \(/ \sqrt{d_{\text{nope}} + d_{\text{rope}}}\) (``qk_nope_head_dim``,
        ``qk_rope_head_dim``)."""
        return self.softmax_scale / math.sqrt(self.qk_head_dim)

    def _positions(self, x: Tensor, positions: object, cache: LatentCache | None) -> Tensor:
        seq = x.shape[1]
        if positions is None:
            start = cache.seen if cache is not None else 0
            return torch.arange(start, start + seq, device=x.device)
        pos = check_position_ids("positions", positions, ndim=(1, 2))
        if pos.shape[-1] != seq or (pos.ndim == 2 and pos.shape[0] not in (1, x.shape[0])):
            raise ValueError(f"positions must have shape [seq] or [batch, seq] for x of shape {tuple(x.shape)}, "
                             f"got shape {tuple(pos.shape)}")
        return pos.to(x.device)

    def forward(self, x: Tensor, *, positions: Tensor | None = None, cache: LatentCache | None = None,
                mask: Tensor | None = None, absorb: bool = False) -> tuple[Tensor, Tensor]:
        x = check_tensor("x", x, ndim=3, floating=True)
        if x.shape[-1] != self.dim:
            raise ValueError(f"x must have size {self.dim} in its last dimension (the module's dim), "
                             f"got shape {tuple(x.shape)}")
        if x.dtype != self.kv_a_proj.weight.dtype:
            raise TypeError(f"x must have the dtype of the module's weights ({self.kv_a_proj.weight.dtype}), "
                            f"got {x.dtype}; cast one of them with .to()")
        if cache is not None and not isinstance(cache, LatentCache):
            raise TypeError(f"cache must be a posenc.latent.LatentCache or None, got {type(cache).__name__}")
        absorb = check_bool("absorb", absorb)
        pos = self._positions(x, positions, cache)
        q_nope, q_rope, latent, rope_key = self._project(x, pos)
        if cache is not None:  # what the cache holds: the latent and the shared rotated key
            latent, rope_key = cache.append(latent, rope_key)
        return self._attend(x.shape, q_nope, q_rope, latent, rope_key, mask, absorb)

    # --8<-- [start:project]
    def _project(self, x: Tensor,
                 positions: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """Queries (two parts, per head), the latent and the shared key
        part, both rotated parts turned."""
        batch, seq, _ = x.shape
        q = self.q_proj(x).view(batch, seq, self.num_heads, self.qk_head_dim)
        q = q.transpose(1, 2)  # [b, H, s, d_qk]
        q_nope, q_rope = q.split(
            [self.qk_nope_head_dim, self.qk_rope_head_dim], dim=-1)
        latent, rope_key = self.kv_a_proj(x).split(
            [self.kv_lora_rank, self.qk_rope_head_dim], dim=-1)
        # [b, s, r]: cached as it is, never rotated
        latent = self.kv_a_norm(latent)
        # [b, H, s, d_rope]
        q_rope = self.rotary.rotate_queries(q_rope, positions)
        # [b, s, d_rope]: one key part for every head
        rope_key = self.rotary.rotate_keys(rope_key, positions)
        return q_nope, q_rope, latent, rope_key
    # --8<-- [end:project]

    def _attend(self, shape: torch.Size, q_nope: Tensor, q_rope: Tensor, latent: Tensor, rope_key: Tensor,
                mask: Tensor | None, absorb: bool) -> tuple[Tensor, Tensor]:
        batch, seq, _ = shape
        heads, nope = self.num_heads, self.qk_nope_head_dim
        w = self.kv_b_proj.weight.view(heads, nope + self.v_head_dim, self.kv_lora_rank)  # [H, d_nope + d_v, r]
        shared = rope_key[:, None].expand(-1, heads, -1, -1)  # [b, H, k, d_rope]

        def scores(q: Tensor, k: Tensor) -> Tensor:  # DeepSeek's scale, whatever the width of q and k
            return q @ k.transpose(-2, -1) * self.scale

        if absorb:  # W_uk folded into the queries, W_uv applied after attending to the latents
            q_latent = torch.einsum("bhsn,hnr->bhsr", q_nope, w[:, :nope])  # [b, H, s, r]
            keys = torch.cat((latent[:, None].expand(-1, heads, -1, -1), shared), dim=-1)  # [b, H, k, r + d_rope]
            attended, weights = scaled_dot_product_attention(
                torch.cat((q_latent, q_rope), dim=-1), keys, latent[:, None].expand(-1, heads, -1, -1),
                causal=mask is None, mask=mask, scores=scores)  # [b, H, s, r]
            out = torch.einsum("bhsr,hvr->bhsv", attended, w[:, nope:])  # [b, H, s, d_v]
        else:  # every cached latent expanded into each head's key and value
            kv = torch.einsum("bkr,hcr->bhkc", latent, w)  # [b, H, k, d_nope + d_v]
            keys = torch.cat((kv[..., :nope], shared), dim=-1)  # [b, H, k, d_qk]
            out, weights = scaled_dot_product_attention(torch.cat((q_nope, q_rope), dim=-1), keys, kv[..., nope:],
                                                        causal=mask is None, mask=mask, scores=scores)
        return self.out(out.transpose(1, 2).reshape(batch, seq, heads * self.v_head_dim)), weights


def latent_key_logits(q: Tensor, latent: Tensor, w_uk: Tensor, *, q_positions: Tensor | None = None,
                      k_positions: Tensor | None = None, absorb: bool = False, base: float = 10000.0) -> Tensor:
    r"""Logits of queries against keys up-projected from latents, \(k_h = W^{UK}_h c\), optionally with RoPE.

    Why latent attention decouples RoPE, in one call. ``absorb=False`` expands every latent into
    each head's key and, with positions, rotates queries and keys (RoPE on the whole key);
    ``absorb=True`` computes one absorbed query \((W^{UK}_h)^\top (R_m q_h)\) per query and dots it with
    the cached latents, which cannot be rotated per key. Without positions the two agree (the
    absorption is exact); with positions they do not, since the key's rotation \(R_n\) sits between
    \(W^{UK}_h\) and the query.

    Args:
        q: queries ``[..., heads, q_len, d]`` (d even when rotating).
        latent: the cached latents ``[..., k_len, r]`` (shared by the heads).
        w_uk: the key up-projection ``[heads, d, r]``.
        q_positions: integer positions ``[q_len]``, or None (no RoPE; then ``k_positions`` is None too).
        k_positions: integer positions ``[k_len]``, or None (with ``q_positions``).
        absorb: compute through the absorbed query instead of expanded keys.
        base: the RoPE base.

    Returns:
        ``[..., heads, q_len, k_len]`` (no \(1/\sqrt{d}\)), in q's dtype.

    Examples:
        >>> g = torch.Generator().manual_seed(0)
        >>> q, c = (torch.randn(2, 3, 8, generator=g, dtype=torch.float64),
        ...         torch.randn(5, 4, generator=g, dtype=torch.float64))
        >>> w = torch.randn(2, 8, 4, generator=g, dtype=torch.float64)
        >>> torch.allclose(latent_key_logits(q, c, w),
        ...                latent_key_logits(q, c, w, absorb=True))
        True
        >>> p, n = torch.arange(2, 5), torch.arange(5)
        >>> expanded = latent_key_logits(q, c, w, q_positions=p, k_positions=n)
        >>> torch.allclose(expanded, latent_key_logits(
        ...     q, c, w, q_positions=p, k_positions=n, absorb=True))
        False
    """
    q = check_tensor("q", q, min_ndim=3, floating=True)
    latent = check_tensor("latent", latent, min_ndim=2, floating=True, finite=True)
    w_uk = check_tensor("w_uk", w_uk, ndim=3, floating=True, finite=True)
    if w_uk.shape[:2] != (q.shape[-3], q.shape[-1]) or w_uk.shape[2] != latent.shape[-1]:
        raise ValueError(f"w_uk must have shape [heads, d, r] = [{q.shape[-3]}, {q.shape[-1]}, {latent.shape[-1]}] "
                         f"(q {tuple(q.shape)}, latent {tuple(latent.shape)}), got shape {tuple(w_uk.shape)}")
    if latent.dtype != q.dtype or w_uk.dtype != q.dtype:
        raise TypeError(f"latent and w_uk must have the dtype of q ({q.dtype}), got {latent.dtype} and {w_uk.dtype}")
    absorb = check_bool("absorb", absorb)
    rotary = None
    if (q_positions is None) != (k_positions is None):
        raise ValueError("give both q_positions and k_positions (RoPE) or neither")
    if q_positions is not None and k_positions is not None:
        q_pos = check_position_ids("q_positions", q_positions, ndim=1)
        k_pos = check_position_ids("k_positions", k_positions, ndim=1)
        if q_pos.shape[0] != q.shape[-2] or k_pos.shape[0] != latent.shape[-2]:
            raise ValueError(f"q_positions must have {q.shape[-2]} entries (the queries of q) and k_positions "
                             f"{latent.shape[-2]} (the rows of latent), got shapes {tuple(q_pos.shape)} and "
                             f"{tuple(k_pos.shape)}")
        rotary = RotaryEmbedding(check_int("d", q.shape[-1], minimum=2), base=base)
        q = rotary.rotate_queries(q, q_pos)
    return _latent_logits(q, latent, w_uk, rotary, None if rotary is None else k_pos, absorb)


# --8<-- [start:absorb]
def _latent_logits(q: Tensor, latent: Tensor, w_uk: Tensor,
                   rotary: RotaryEmbedding | None, k_pos: Tensor | None,
                   absorb: bool) -> Tensor:
    """q (already rotated, if at all) against the keys ``W_uk c``: expanded
    (and rotated), or absorbed."""
    if absorb:  # one vector per query, whatever the key's position: W_ukᵀ q
        absorbed = torch.einsum("...hsd,hdr->...hsr", q, w_uk)
        return absorbed @ latent.unsqueeze(-3).transpose(-2, -1)
    keys = torch.einsum("...kr,hdr->...hkd", latent, w_uk)  # [..., H, k_len, d]
    if rotary is not None and k_pos is not None:
        # R_n W_uk c: the rotation sits between W_uk and q
        keys = rotary.rotate_keys(keys, k_pos)
    return q @ keys.transpose(-2, -1)
# --8<-- [end:absorb]
