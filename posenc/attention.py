r"""Minimal scaled dot-product attention, with the hooks position methods need.

Position methods act in one of three places (see the chapters):

* on the input embeddings, before attention (sinusoidal, learned): nothing to do here;
* on the attention logits, as an additive ``bias`` (ALiBi, T5, KERPLE, FIRE: every one a
  `PositionBias`);
* on queries and keys, before their dot product, through ``rotary`` (RoPE, xPos: every one a
  `Rotation`);
* on the logits themselves, through ``logit_hook``, when the term depends on them (CoPE);
* in place of the logits, through ``scores``, when they are not \(q k^\top / \sqrt{d}\) (RoPE
  logits from a matrix of offsets, `posenc.extension.rope_logits`; FoX's and PaTH's logits);
* from the layer's input itself, through ``content``, when the position term is computed from
  each token (FoX's forget gates, PaTH's Householder transforms): it joins what it computes to
  the keys, so a cache keeps it with them, and ``scores`` reads it back;
* in place of the softmax, through ``weighting`` (stick-breaking attention).

``sinks`` adds one learned logit per head to the softmax's denominator only (gpt-oss): a query
may then give less than all of its weight to the keys.

A boolean ``mask`` (True = attend) says which keys each query may see (padding, packed
documents, sliding windows), and ``kv_hook`` lets a caller swap in the keys and values of a
cache (see `posenc.inference.KVCache`).

Shapes: ``x`` is ``[batch, seq, dim]``; per-head tensors are ``[batch, heads, seq, head_dim]``;
biases and masks broadcast to ``[batch, heads, q_len, k_len]``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Protocol

import torch
from torch import Tensor, nn

from posenc._attention_checks import (
    check_bias,
    check_hook_term,
    check_hooks,
    check_mask,
    check_qkv,
    check_scores,
    check_sinks,
    check_weights,
)
from posenc._checks import (
    check_bool,
    check_elements,
    check_size,
    check_size_int,
    check_tensor,
)

__all__ = ["ContentHook", "KeyValueHook", "LogitHook", "PositionBias", "QueryKeyTransform", "Rotation", "ScoreHook",
           "SelfAttention", "WeightHook", "scaled_dot_product_attention"]

#: Called as ``rotary(q, k)`` on per-head queries and keys; returns the rotated pair.
QueryKeyTransform = Callable[[Tensor, Tensor], tuple[Tensor, Tensor]]
#: Called as ``kv_hook(q, k, v)`` after the rotary hook, on this call's per-head tensors; returns
#: the queries and the keys and values to attend to (e.g. the cached ones followed by these).
KeyValueHook = Callable[[Tensor, Tensor, Tensor], tuple[Tensor, Tensor, Tensor]]
#: Called as ``logit_hook(q, scores)`` on the queries and their scaled, masked logits (masked
#: entries ``-inf``); returns a term added to the logits before the causal mask and the softmax.
LogitHook = Callable[[Tensor, Tensor], Tensor]
#: Called as ``scores(q, k)`` after ``kv_hook`` on the queries and keys attention uses; returns the
#: logits ``[..., q_len, k_len]`` in place of ``q kᵀ / sqrt(d)`` (e.g. RoPE logits from any offsets,
#: `posenc.extension.rope_logits`, or latent attention's own scale, `posenc.latent`).
ScoreHook = Callable[[Tensor, Tensor], Tensor]
#: Called as ``content(x, q, k)`` on the layer's input ``[batch, seq, dim]`` and this call's per-head
#: queries and keys (after ``rotary``); returns them with what a data-dependent method computes from
#: each token joined to the keys (FoX's log forget gates, PaTH's transforms: `posenc.forgetting`,
#: `posenc.path_attention`), so that a cache keeps it with them; its ``scores`` reads it back.
ContentHook = Callable[[Tensor, Tensor, Tensor], tuple[Tensor, Tensor]]
#: Called as ``weighting(logits)`` on the masked logits ``[..., q_len, k_len]`` (hidden keys
#: ``-inf``, keys in the order they were fed); returns the attention weights in place of the
#: softmax (stick-breaking, `posenc.stick_breaking`).
WeightHook = Callable[[Tensor], Tensor]


class PositionBias(Protocol):
    """An additive bias method: `posenc.alibi.AlibiBias`, `posenc.relative.T5RelativeBias`,
    `posenc.kerple.KerpleBias`, `posenc.fire.FireBias`."""

    def bias(self, q_positions: Tensor | int, k_positions: Tensor | int) -> Tensor:
        """The bias of queries and keys at these positions (ints n mean 0 .. n-1; tensors ``[seq]`` or
        ``[batch, seq]``): ``[heads, q, k]``, or ``[batch, heads, q, k]``."""
        ...  # pragma: no cover - a protocol


class Rotation(Protocol):
    """A rotary method, which turns queries and keys by their positions: `posenc.rope.RotaryEmbedding`,
    `posenc.xpos.XPos`. Keys rotated once (and cached) stay valid for later queries."""

    def rotate_queries(self, q: Tensor, positions: Tensor) -> Tensor:
        """Queries ``[..., seq, head_dim]`` at ``positions [seq]`` or ``[batch, seq]``, rotated."""
        ...  # pragma: no cover - a protocol

    def rotate_keys(self, k: Tensor, positions: Tensor) -> Tensor:
        """Keys ``[..., seq, head_dim]`` at ``positions [seq]`` or ``[batch, seq]``, rotated."""
        ...  # pragma: no cover - a protocol


def scaled_dot_product_attention(
    q: Tensor, k: Tensor, v: Tensor, *, bias: Tensor | None = None, causal: bool = False,
    mask: Tensor | None = None, logit_hook: LogitHook | None = None, sinks: Tensor | None = None,
    scores: ScoreHook | None = None, weighting: WeightHook | None = None,
) -> tuple[Tensor, Tensor]:
    r"""\(\mathrm{softmax}(q k^\top / \sqrt{d} + \text{bias})\, v\) over the allowed keys, returning
    ``(output, weights)``.

    Args:
        q: queries ``[..., q_len, d]``.
        k: keys ``[..., k_len, d]``, with the leading dimensions and dtype of q.
        v: values ``[..., k_len, d_v]``.
        bias: real numbers added to the logits; broadcastable to ``[..., q_len, k_len]``.
            A boolean tensor is refused: pass it as ``mask``.
        causal: mask keys that come after the query. With ``q_len < k_len`` the queries are
            taken to be the last ``q_len`` positions (as when decoding with a cache).
        mask: booleans broadcastable to ``[..., q_len, k_len]``, True where the query may
            attend to the key; combined with ``causal``.
        logit_hook: None, or ``logit_hook(q, scores)`` returning a term of the logits' shape
            that depends on the logits (CoPE's position term). It sees the logits after the
            bias and ``mask`` (masked entries ``-inf``) and before the causal mask, whose
            queries it must treat as the last ``q_len`` keys.
        sinks: None, or one learned logit per head ``[heads]`` (q is ``[..., heads, q_len, d]``),
            as gpt-oss's attention sinks: it joins each row's softmax after the masks, bias and
            hooks, takes part of the weight, and is dropped, so it has no value
            (transformers' ``models/gpt_oss/modeling_gpt_oss.py:243-253``). Not scaled by
            \(1/\sqrt{d}\).
        scores: None, or ``scores(q, k)`` returning the logits ``[..., q_len, k_len]`` that
            replace \(q k^\top / \sqrt{d}\) (bias, mask, hooks and causal mask then act as usual);
            its keys may then be wider than the queries (what ``content`` joined to them).
        weighting: None, or ``weighting(logits)`` returning the weights in place of the softmax,
            from the logits after every mask (hidden keys ``-inf``); not with ``sinks``.

    Returns:
        The attended values ``[..., q_len, d_v]`` and the weights ``[..., q_len, k_len]``.
        Each row of weights sums to 1 (less with ``sinks``: the sink's share is left out),
        except a query that may attend to no key at all (every key masked, every logit ``-inf``,
        or no keys): its weights and output are all zeros, as in PyTorch's own
        ``scaled_dot_product_attention``, instead of NaN. No queries give an empty output.
        Half-precision inputs are computed in float32 and cast back.

    Examples:
        >>> q = k = v = torch.eye(2).unsqueeze(0)
        >>> out, weights = scaled_dot_product_attention(q, k, v)
        >>> weights.sum(-1)
        tensor([[1., 1.]])
        >>> # query 1 sees nothing
        >>> mask = torch.tensor([[True, False], [False, False]])
        >>> scaled_dot_product_attention(q, k, v, mask=mask)[1]
        tensor([[[1., 0.],
                 [0., 0.]]])
        >>> # one head, two equal keys, and a sink
        >>> q = k = v = torch.zeros(1, 2, 4)
        >>> scaled_dot_product_attention(q, k, v, sinks=torch.zeros(1))[1][0, 1]
        tensor([0.3333, 0.3333])
    """
    check_hooks(logit_hook=logit_hook, scores=scores, weighting=weighting)
    q, k, v = check_qkv(q, k, v, own_scores=scores is not None)
    causal = check_bool("causal", causal)
    q_len, k_len = q.shape[-2], k.shape[-2]
    shape = (*q.shape[:-1], k_len)
    checked_bias = None if bias is None else check_bias(bias, shape)
    checked_mask = None if mask is None else check_mask(mask, shape)
    checked_sinks = None if sinks is None else check_sinks(sinks, q)
    if checked_sinks is not None and weighting is not None:
        raise ValueError("sinks join a softmax; weighting replaces it: give one of them, not both")
    if causal and q_len > k_len:
        raise ValueError(f"causal attention needs q_len <= k_len, got q_len={q_len}, k_len={k_len}")
    logits = None if scores is None else check_scores(scores(q, k), shape)  # the caller's (RoPE from offsets, ...)
    term = None if logit_hook is None else lambda q_, s: check_hook_term(logit_hook(q_, s), s)
    weigh = None if weighting is None else lambda s: check_weights(weighting(s), tuple(s.shape))
    return _attend(q, k, v, logits=logits, bias=checked_bias, causal=causal, mask=checked_mask, logit_hook=term,
                   sinks=checked_sinks, weighting=weigh)


def _attend(q: Tensor, k: Tensor, v: Tensor, *, logits: Tensor | None = None, bias: Tensor | None = None,
            causal: bool = False, mask: Tensor | None = None, logit_hook: LogitHook | None = None,
            sinks: Tensor | None = None, weighting: WeightHook | None = None) -> tuple[Tensor, Tensor]:
    """`scaled_dot_product_attention` on checked arguments (the model's own; ``logits``: its scores)."""
    # q: (batch, heads, q_len, head_dim); k: (batch, heads, k_len, head_dim); v: (batch, heads, k_len, d_v)
    dtype = q.dtype if q.dtype in (torch.float32, torch.float64) else torch.float32
    if logits is None:
        logits = q.to(dtype) @ k.to(dtype).transpose(-2, -1) / math.sqrt(q.shape[-1])  # (batch, heads, q_len, k_len)
    else:
        logits = logits.to(dtype)
    if bias is not None:  # (batch or 1, heads, q_len, k_len)
        logits = logits + bias.to(dtype)
    if mask is not None:  # (batch, 1, q_len, k_len), True = attend
        logits = logits.masked_fill(~mask.to(q.device), float("-inf"))
    if logit_hook is not None:  # a term computed from the (masked) logits themselves
        logits = logits + logit_hook(q.to(dtype), logits).to(dtype)
    if causal:  # the queries are the last q_len keys
        q_len, k_len = logits.shape[-2], logits.shape[-1]
        future = torch.ones(q_len, k_len, dtype=torch.bool, device=q.device).triu(k_len - q_len + 1)
        logits = logits.masked_fill(future, float("-inf"))
    if weighting is not None:  # stick-breaking: the weights of every key from the masked logits
        weights = weighting(logits).to(dtype)
        return (weights @ v.to(dtype)).to(v.dtype), weights.to(q.dtype)
    return _softmax_attend(logits, v, sinks, dtype, q.dtype)


# --8<-- [start:softmax]
def _softmax_attend(logits: Tensor, v: Tensor, sinks: Tensor | None,
                    dtype: torch.dtype,
                    out_dtype: torch.dtype) -> tuple[Tensor, Tensor]:
    """softmax over the keys (and the sink of each head, whose weight is
    dropped), then the values."""
    if sinks is not None:  # gpt-oss: one more logit per head, denominator only
        sink = sinks.to(device=logits.device, dtype=dtype).view(-1, 1, 1)
        sink = sink.expand(*logits.shape[:-1], 1)
        weights = torch.softmax(torch.cat((logits, sink), dim=-1), dim=-1)
        weights = weights[..., :-1]  # [..., q_len, k_len]
    else:
        # A query with no visible key (or no key at all): softmax over all
        # -inf would be NaN; define it as zeros, as torch's own
        # scaled_dot_product_attention does.
        blind = (logits == float("-inf")).all(dim=-1, keepdim=True)
        weights = torch.softmax(logits.masked_fill(blind, 0.0), dim=-1)
        weights = weights.masked_fill(blind, 0.0)
    return (weights @ v.to(dtype)).to(v.dtype), weights.to(out_dtype)
# --8<-- [end:softmax]


class SelfAttention(nn.Module):
    """Multi-head self-attention with no position information of its own.

    Args:
        dim: model width; must be divisible by ``num_heads``.
        num_heads: number of heads.
        sinks: give each head a learned sink logit (the parameter ``sinks [heads]``, starting at
            0), as gpt-oss does; see `scaled_dot_product_attention`.

    ``forward(x, *, bias=None, rotary=None, causal=False, mask=None, kv_hook=None, logit_hook=None,
    scores=None, content=None, weighting=None)`` returns ``(output, weights)`` with output
    ``[batch, seq, dim]`` and weights
    ``[batch, heads, seq, k_len]`` (``k_len = seq`` unless ``kv_hook`` adds cached keys).
    ``rotary(q, k)`` rotates this call's queries and keys; ``kv_hook(q, k, v)`` then returns
    the queries, keys and values to attend to (see `KeyValueHook`); ``content(x, q, k)`` runs
    between the two (see `ContentHook`); ``logit_hook``, ``scores`` and ``weighting`` are passed on
    to `scaled_dot_product_attention`, with the module's sinks.

    Examples:
        >>> attention = SelfAttention(dim=8, num_heads=2)
        >>> out, weights = attention(torch.randn(1, 5, 8))
        >>> tuple(out.shape), tuple(weights.shape)
        ((1, 5, 8), (1, 2, 5, 5))
        >>> with_sinks = SelfAttention(dim=8, num_heads=2, sinks=True)
        >>> with torch.no_grad():
        ...     # every logit 0, as the sink's
        ...     _ = with_sinks.qkv.weight.zero_()
        ...     weights = with_sinks(torch.randn(1, 5, 8), causal=True)[1]
        >>> # the sink keeps 1 / (keys + 1)
        >>> weights.sum(-1)[0, 0]
        tensor([0.5000, 0.6667, 0.7500, 0.8000, 0.8333])
    """

    def __init__(self, dim: int, num_heads: int = 1, *, sinks: bool = False) -> None:
        super().__init__()
        self.dim = check_size_int("dim", dim)
        self.num_heads = check_size_int("num_heads", num_heads)
        sinks = check_bool("sinks", sinks)
        check_elements("the query/key/value projection (3 dim x dim)", 3 * self.dim, self.dim)
        if dim % num_heads:
            raise ValueError(f"dim must be divisible by num_heads, got dim={dim}, num_heads={num_heads}")
        self.head_dim = dim // num_heads
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.out = nn.Linear(dim, dim, bias=False)
        # zeros draw nothing from the generator: a model without sinks keeps its parameters
        self.sinks = nn.Parameter(torch.zeros(num_heads)) if sinks else None

    def _check_x(self, x: object) -> Tensor:
        tensor = check_tensor("x", x, ndim=3, floating=True)
        check_size("x", tensor, -1, self.dim, expected_from="the module's dim")
        if tensor.dtype != self.qkv.weight.dtype:
            raise TypeError(f"x must have the dtype of the module's weights ({self.qkv.weight.dtype}), "
                            f"got {tensor.dtype}; cast one of them with .to()")
        return tensor

    def split_heads(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """Project ``x [batch, seq, dim]`` to per-head q, k, v ``[batch, heads, seq, head_dim]``."""
        return self._split_heads(self._check_x(x))

    def _split_heads(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        batch, seq, _ = x.shape
        qkv = self.qkv(x).view(batch, seq, 3, self.num_heads, self.head_dim)  # (batch, seq, 3, heads, head_dim)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)  # (batch, heads, seq, head_dim) each
        return q, k, v

    def forward(
        self,
        x: Tensor,
        *,
        bias: Tensor | None = None,
        rotary: QueryKeyTransform | None = None,
        causal: bool = False,
        mask: Tensor | None = None,
        kv_hook: KeyValueHook | None = None,
        logit_hook: LogitHook | None = None,
        scores: ScoreHook | None = None,
        content: ContentHook | None = None,
        weighting: WeightHook | None = None,
    ) -> tuple[Tensor, Tensor]:
        x = self._check_x(x)
        causal = check_bool("causal", causal)
        check_hooks(rotary=rotary, kv_hook=kv_hook, logit_hook=logit_hook, scores=scores, content=content,
                     weighting=weighting)
        q, k, v = self._split_heads(x)
        if rotary is not None:
            q, k = rotary(q, k)
        if content is not None:  # what the method computes from each token rides with its key
            q, k = content(x, q, k)
        if kv_hook is not None:
            q, k, v = kv_hook(q, k, v)
        heads_out, weights = scaled_dot_product_attention(q, k, v, bias=bias, causal=causal, mask=mask,
                                                          logit_hook=logit_hook, sinks=self.sinks, scores=scores,
                                                          weighting=weighting)
        merged = heads_out.transpose(1, 2).reshape(x.shape)  # (batch, seq, heads * head_dim)
        return self.out(merged), weights
