"""Minimal scaled dot-product attention, with the two hooks position methods need.

Position methods act in one of three places (see the chapters):

* on the input embeddings, before attention (sinusoidal, learned): nothing to do here;
* on the attention logits, as an additive ``bias`` (T5, ALiBi);
* on queries and keys, before their dot product, through ``rotary`` (RoPE).

Shapes: ``x`` is ``[batch, seq, dim]``; per-head tensors are ``[batch, heads, seq, head_dim]``;
biases broadcast to ``[batch, heads, q_len, k_len]``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor, nn

from posenc._checks import check_positive_int, check_size, check_tensor

#: Called as ``rotary(q, k)`` on per-head queries and keys; returns the rotated pair.
QueryKeyTransform = Callable[[Tensor, Tensor], tuple[Tensor, Tensor]]


def scaled_dot_product_attention(
    q: Tensor, k: Tensor, v: Tensor, *, bias: Tensor | None = None, causal: bool = False
) -> tuple[Tensor, Tensor]:
    """softmax(q kᵀ / sqrt(d) + bias) v, returning ``(output, weights)``.

    Args:
        q: queries ``[..., q_len, d]``.
        k: keys ``[..., k_len, d]``.
        v: values ``[..., k_len, d_v]``.
        bias: added to the logits; broadcastable to ``[..., q_len, k_len]``.
        causal: mask keys that come after the query. With ``q_len < k_len`` the queries are
            taken to be the last ``q_len`` positions (as when decoding with a cache).

    Returns:
        The attended values ``[..., q_len, d_v]`` and the weights ``[..., q_len, k_len]``,
        each row of which sums to 1.

    Examples:
        >>> q = k = v = torch.eye(2).unsqueeze(0)
        >>> out, weights = scaled_dot_product_attention(q, k, v)
        >>> weights.sum(-1)
        tensor([[1., 1.]])
    """
    check_tensor("q", q, min_ndim=2, floating=True)
    check_tensor("k", k, min_ndim=2, floating=True)
    check_tensor("v", v, min_ndim=2, floating=True)
    check_size("k", k, -1, q.shape[-1], expected_from="the last dimension of q")
    check_size("v", v, -2, k.shape[-2], expected_from="the number of keys")
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if bias is not None:
        check_tensor("bias", bias, min_ndim=2)
        scores = scores + bias
    if causal:
        q_len, k_len = scores.shape[-2:]
        if q_len > k_len:
            raise ValueError(f"causal attention needs q_len <= k_len, got q_len={q_len}, k_len={k_len}")
        future = torch.ones(q_len, k_len, dtype=torch.bool, device=q.device).triu(k_len - q_len + 1)
        scores = scores.masked_fill(future, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


class SelfAttention(nn.Module):
    """Multi-head self-attention with no position information of its own.

    Args:
        dim: model width; must be divisible by ``num_heads``.
        num_heads: number of heads.

    ``forward(x, *, bias=None, rotary=None, causal=False)`` returns ``(output, weights)`` with
    output ``[batch, seq, dim]`` and weights ``[batch, heads, seq, seq]``.

    Examples:
        >>> attention = SelfAttention(dim=8, num_heads=2)
        >>> out, weights = attention(torch.randn(1, 5, 8))
        >>> tuple(out.shape), tuple(weights.shape)
        ((1, 5, 8), (1, 2, 5, 5))
    """

    def __init__(self, dim: int, num_heads: int = 1) -> None:
        super().__init__()
        self.dim = check_positive_int("dim", dim)
        self.num_heads = check_positive_int("num_heads", num_heads)
        if dim % num_heads:
            raise ValueError(f"dim must be divisible by num_heads, got dim={dim}, num_heads={num_heads}")
        self.head_dim = dim // num_heads
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.out = nn.Linear(dim, dim, bias=False)

    def split_heads(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """Project ``x [batch, seq, dim]`` to per-head q, k, v ``[batch, heads, seq, head_dim]``."""
        batch, seq, _ = x.shape
        qkv = self.qkv(x).view(batch, seq, 3, self.num_heads, self.head_dim)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)
        return q, k, v

    def forward(
        self,
        x: Tensor,
        *,
        bias: Tensor | None = None,
        rotary: QueryKeyTransform | None = None,
        causal: bool = False,
    ) -> tuple[Tensor, Tensor]:
        check_tensor("x", x, ndim=3, floating=True)
        check_size("x", x, -1, self.dim, expected_from="the module's dim")
        q, k, v = self.split_heads(x)
        if rotary is not None:
            q, k = rotary(q, k)
        heads_out, weights = scaled_dot_product_attention(q, k, v, bias=bias, causal=causal)
        merged = heads_out.transpose(1, 2).reshape(x.shape)
        return self.out(merged), weights
