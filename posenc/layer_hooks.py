"""What each layer of `posenc.model.TinyTransformer` reads, and its attention run in a straight line.

The model's own plumbing (private: `TinyTransformer` checks its caller's input once, at its door).
Once per forward call it computes what its layers share, a `CallInputs`: the positions of the
queries and keys, the mask, the method's bias, and each rotation module's tables at this call's
positions (RoPE's and xPos's cos and sin, PoPE's angles). Each layer then takes a `LayerInputs`
of tensors from its `posenc.layer_plan.LayerPlan`:

* ``tables``: the tables that turn q and k (RoPE, xPos, PoPE), then the L2 norm of q
  and k (``qk_norm``, after the rotation as in Llama 4), then the query factors (``temperature``);
* ``cache``: the keys are cached as they leave the rotation (with
  ``KVCache(key_positions="in-cache")``, unrotated, and every key is turned after the cache);
* ``mask``: the call's mask, narrowed to the layer's window or chunk (``window``, ``chunk``) and to
  the entries its cache kept;
* ``bias`` and ``cope``: the method's, unless the layer has no positions;
* ``offsets``: RoPE logits from a matrix of pair offsets (``pair_offsets``) in place of rotating.

The learned sinks (``sinks``) are a parameter of the layer's attention module, built with it.
`posenc.attention.SelfAttention` keeps its hooks for callers who build a layer of their own.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
from torch import Tensor

from posenc._checks import check_float, check_tensor
from posenc._rotary import apply_table, compute_dtype
from posenc.attention import SelfAttention, _attend
from posenc.cope import CoPE
from posenc.extension import rope_logits
from posenc.forgetting import ForgetGate
from posenc.inference import KVCache, StepPlan
from posenc.layer_plan import LayerPlan
from posenc.path_attention import HouseholderPath
from posenc.pope import PolarEmbedding
from posenc.rope import RotaryEmbedding
from posenc.spans import AttentionSpan
from posenc.stick_breaking import StickBreaking
from posenc.xpos import XPos

__all__ = ["QK_NORM_EPS", "CallInputs", "LayerInputs", "l2_norm", "scale_queries"]

#: The epsilon of the q/k norm (Llama 4's ``rms_norm_eps`` in its published configs is 1e-5; the
#: tiny models use transformers' ``Llama4TextL2Norm`` default, 1e-6).
QK_NORM_EPS = 1e-6

#: The rotations the model's methods use (RoPE, xPos, PoPE).
RotationModule = RotaryEmbedding | XPos | PolarEmbedding
#: A rotation's tables: RoPE's and xPos's (cos, sin), PoPE's query (cos, sin) or key angles.
Table = tuple[Tensor, ...]


@dataclass
class CallInputs:
    """What one forward call gives every layer (built once per call)."""

    query_positions: Tensor  # [batch, q_len], on the model's device
    key_positions: Tensor  # [batch, k_len]: the cache's entries first, then this call's tokens
    query_order: Tensor  # [q_len]: which token of the stream each query is
    key_order: Tensor  # [k_len]
    mask: Tensor | None  # [batch, 1, q_len, k_len], True = attend; None = plain causal
    bias: Tensor | None  # [batch or 1, heads, q_len, k_len]
    cache: KVCache | None
    tables: dict[RotationModule, tuple[Table, Table]] = field(default_factory=dict)  # (q, k) tables of each
    masks: dict[AttentionSpan | None, Tensor] = field(default_factory=dict)  # per span, computed once


@dataclass
class LayerInputs:
    """What one layer's attention reads, all of it tensors or the method's own modules."""

    layer: int  # the layer's place in the cache
    rotation: RotationModule | None  # whose tables these are
    tables: tuple[Table, Table] | None  # turn this call's queries, and its keys (in-cache: every key)
    qk_norm: bool
    q_scale: Tensor | None  # [batch or 1, q_len]: the temperature's factor of each query
    after_cache: bool  # KVCache(key_positions="in-cache"): rotate, norm and scale after the cache
    offsets: Tensor | None  # [batch or 1, 1, q_len, k_len]: RoPE logits from these pair offsets
    mask: Tensor | None  # [batch, 1, q_len, k_len], True = attend; None = plain causal
    bias: Tensor | None  # [batch or 1, heads, q_len, k_len]
    cache: KVCache | None
    cope: CoPE | None = None  # CoPE's module of this layer (a term from the logits)
    content: ForgetGate | HouseholderPath | None = None  # FoX's gates or PaTH's transforms (join, scores)
    weighting: StickBreaking | None = None  # stick-breaking in place of the softmax


def _call_inputs(step: StepPlan, bias: Tensor | None, cache: KVCache | None, device: torch.device,
                 plans: Sequence[LayerPlan], rotations: Sequence[RotationModule | None],
                 dtype: torch.dtype) -> CallInputs:
    """The call's shared inputs; refuses a cache a layer's window or chunk cannot be kept in."""
    query_positions = step.query_positions.to(device)
    if cache is not None and any(plan.span is not None for plan in plans):
        if cache.key_positions == "in-cache":
            raise ValueError("a model whose layers have their own window or chunk needs "
                             "KVCache(key_positions='original'): renumbered entries would leave their spans")
        if cache.seen and step.query_positions.shape[1]:  # evicted keys are gone: no going back
            earliest, upcoming = step.query_positions.amin(dim=1), cache.next_positions()
            if bool((earliest < upcoming).any()):
                row = int((earliest < upcoming).nonzero()[0, 0])
                raise ValueError(f"positions go backwards: row {row} has position {int(earliest[row])} but "
                                 f"the cache's layers dropped what positions below {int(upcoming[row])} "
                                 "would see (windows, chunks)")
    q_len = step.query_positions.shape[1]
    call = CallInputs(query_positions, step.key_positions.to(device),
                      step.key_order[-q_len:] if q_len else step.key_order[:0], step.key_order, step.mask, bias, cache)
    # every key is turned after an in-cache update (spans are refused then: every layer holds them all)
    key_positions = call.key_positions if cache is not None and cache.key_positions == "in-cache" else query_positions
    for rotation in rotations:  # the rotation tables of this call, once per module
        if rotation is not None and rotation not in call.tables:
            q_table = _table(rotation, query_positions, dtype, keys=False)
            same = key_positions is query_positions and isinstance(rotation, RotaryEmbedding)  # RoPE turns both alike
            call.tables[rotation] = (q_table, q_table if same else _table(rotation, key_positions, dtype, keys=True))
    return call


def _table(rotation: RotationModule, positions: Tensor, dtype: torch.dtype, *, keys: bool) -> Table:
    """The rotation's table at ``positions [batch, seq]``, cast to the dtype q and k are turned in."""
    compute = compute_dtype(dtype)
    if isinstance(rotation, PolarEmbedding):  # angles [batch, 1 (heads), seq, head_dim]
        angles = rotation._table(positions, 4, positions.device, dtype)
        return (angles,) if keys else (torch.cos(angles), torch.sin(angles))  # keys add their learned phase
    if isinstance(rotation, XPos):  # cos and sin scaled by zeta^(+-(p - centre) / B)
        cos, sin = rotation._tables(positions, rotation.centre, keys, compute)
    else:  # cos and sin, times RoPE's attention factor
        cos, sin = rotation._tables(positions, positions.device)
    return cos.to(compute), sin.to(compute)  # [batch, seq, width/2]


def _turn(rotation: RotationModule, x: Tensor, table: Table, *, keys: bool) -> Tensor:
    """Queries or keys ``(batch, heads, seq, head_dim)`` turned by the rotation's table."""
    if isinstance(rotation, PolarEmbedding):
        return rotation._turn_keys(x, *table) if keys else rotation._turn_queries(x, *table)
    return apply_table(x, table[0], table[1], rotation.layout, rotation.rotary_dim)


def l2_norm(x: Tensor, eps: float = QK_NORM_EPS) -> Tensor:
    r"""\(x / \sqrt{\mathrm{mean}(x^2) + \varepsilon}\) (\(\varepsilon\) = ``eps``) over the last axis, in at least float32 (Llama 4's q/k norm).

    transformers' ``Llama4TextL2Norm`` (``models/llama4/modeling_llama4.py:105-117``), which has no
    weight: an RMS norm that leaves every query and key with root-mean-square 1.

    Examples:
        >>> l2_norm(torch.tensor([[3.0, 4.0]]))
        tensor([[0.8485, 1.1314]])
    """
    x = check_tensor("x", x, min_ndim=1, floating=True)
    return _l2_norm(x, check_float("eps", eps, positive=True, maximum=1e6))


def scale_queries(q: Tensor, factors: Tensor) -> Tensor:
    """Queries ``[batch, heads, q_len, d]`` times one factor per query ``[batch or 1, q_len]``, in at least float32.

    Examples:
        >>> scale_queries(torch.ones(1, 1, 2, 3), torch.tensor([[1.0, 2.0]]))
        tensor([[[[1., 1., 1.],
                  [2., 2., 2.]]]])
    """
    q = check_tensor("q", q, ndim=4, floating=True)
    factors = check_tensor("factors", factors, ndim=2, floating=True, finite=True)
    if factors.shape[1] != q.shape[2] or factors.shape[0] not in (1, q.shape[0]):
        raise ValueError(f"factors must have shape [batch, q_len] = [{q.shape[0]}, {q.shape[2]}] (or [1, {q.shape[2]}]), "
                         f"got shape {tuple(factors.shape)}")
    return _scale_queries(q, factors)


def _l2_norm(x: Tensor, eps: float = QK_NORM_EPS) -> Tensor:
    dtype = compute_dtype(x.dtype)
    y = x.to(dtype)
    return (y * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype)


def _scale_queries(q: Tensor, factors: Tensor) -> Tensor:
    dtype = compute_dtype(q.dtype)
    return (q.to(dtype) * factors.to(device=q.device, dtype=dtype)[:, None, :, None]).to(q.dtype)


def _mask(span: AttentionSpan | None, call: CallInputs, columns: Tensor | None) -> Tensor | None:
    """The call's mask within the layer's span, on the entries this layer holds."""
    if span is None and columns is None:
        return call.mask
    full = call.masks.get(span)
    if full is None:
        base = call.mask
        if base is None:  # plain causal, in the order tokens were fed
            base = (call.key_order[None, :] <= call.query_order[:, None])[None, None].to(call.query_positions.device)
        if span is not None:
            base = base & span.mask(call.query_positions, call.key_positions)[:, None]  # [batch, 1, q_len, k_len]
        full = call.masks[span] = base
    return full if columns is None else full[..., columns]


# --8<-- [start:layer-hooks]
def _layer_inputs(plan: LayerPlan, layer: int, call: CallInputs,
                  rotation: RotationModule | None,
                  cope: CoPE | None) -> LayerInputs:
    """Each plan field becomes a table, a mask or a tensor of the
    layer's attention."""
    cache = call.cache
    # the cached entries this layer kept
    held = None if cache is None else cache.entries(layer)
    columns = None
    if held is not None:
        past = call.key_positions.shape[1] - call.query_positions.shape[1]
        columns = torch.cat(
            (held, torch.arange(past, call.key_positions.shape[1]))
        ).to(call.key_positions.device)
    offsets = None
    # logits from offsets: q and k are not rotated, keys cached as they are
    if plan.pair_offsets is not None:
        if not isinstance(rotation, RotaryEmbedding):
            raise ValueError("pair_offsets needs a layer with RoPE "
                             "(a posenc.rope.RotaryEmbedding)")
        # this layer's keys
        k_pos = (call.key_positions if columns is None
                 else call.key_positions[:, columns])
        # [batch or 1, q_len, k_len]
        offsets = plan.pair_offsets(call.query_positions, k_pos)
        # [batch, 1 (heads), q_len, k_len]
        offsets = (offsets[..., None, :, :] if offsets.ndim == 3
                   else offsets)
    tables = (call.tables[rotation]
              if rotation is not None and offsets is None else None)
    q_scale = (None if plan.temperature is None
               else _temperature(plan, call.query_positions))
    bias = call.bias if plan.uses_position else None
    return LayerInputs(
        layer, rotation, tables, plan.qk_norm, q_scale,
        after_cache=cache is not None and cache.key_positions == "in-cache",
        offsets=offsets,
        mask=_mask(plan.span, call, columns),
        bias=bias if bias is None or columns is None else bias[..., columns],
        cache=cache, cope=cope if plan.uses_position else None)
# --8<-- [end:layer-hooks]


def _temperature(plan: LayerPlan, positions: Tensor) -> Tensor:
    assert plan.temperature is not None
    factors = plan.temperature(positions)
    if not isinstance(factors, Tensor) or not factors.is_floating_point():  # the caller's function
        raise TypeError(f"a layer plan's temperature must return real factors, got {type(factors).__name__}")
    return factors.expand(positions.shape)  # [batch, q_len]


# --8<-- [start:attend]
def _attend_layer(attention: SelfAttention, x: Tensor,
                  inputs: LayerInputs) -> tuple[Tensor, Tensor]:
    """One layer, in order: project, rotate, norm, scale, join, cache,
    attend, merge the heads."""
    q, k, v = attention._split_heads(x)  # (batch, heads, seq, head_dim) each
    if not inputs.after_cache:  # keys are cached as they leave this step
        q, k = _prepare(q, k, inputs)
    # FoX's gate or PaTH's transform rides with each key
    if inputs.content is not None:
        # unchecked: the model checked its input at its door
        q, k = inputs.content._join(x, q, k)
    # the entries this layer kept first, then this call's
    if inputs.cache is not None:
        # (batch, heads, k_len, head_dim)
        k, v = inputs.cache.update(inputs.layer, k, v)
        if inputs.after_cache:  # every key turned by its index in the cache
            q, k = _prepare(q, k, inputs)
    logits = None
    # RoPE logits from the pair offsets, scaled as RoPE's own
    if inputs.offsets is not None:
        rotation = inputs.rotation
        assert isinstance(rotation, RotaryEmbedding)
        dtype = compute_dtype(q.dtype)
        logits = rope_logits(q.to(dtype), k.to(dtype), rotation.inv_freq,
                             inputs.offsets) * (
            rotation.attention_scaling ** 2 / math.sqrt(q.shape[-1]))
    elif inputs.content is not None:
        logits = inputs.content._scores(q, k)
    out, weights = _attend(
        q, k, v, logits=logits, bias=inputs.bias,
        causal=inputs.mask is None, mask=inputs.mask,
        logit_hook=inputs.cope, sinks=attention.sinks,
        weighting=(None if inputs.weighting is None
                   else inputs.weighting._weights))
    # (batch, seq, heads * head_dim)
    return attention.out(out.transpose(1, 2).reshape(x.shape)), weights
# --8<-- [end:attend]


def _prepare(q: Tensor, k: Tensor, inputs: LayerInputs) -> tuple[Tensor, Tensor]:
    """Rotate q and k by the layer's tables, then norm them (qk_norm), then scale the queries."""
    if inputs.rotation is not None and inputs.tables is not None:
        q = _turn(inputs.rotation, q, inputs.tables[0], keys=False)
        k = _turn(inputs.rotation, k, inputs.tables[1], keys=True)
    if inputs.qk_norm:  # after the rotation, as Llama 4 (the rotation keeps the norm anyway)
        q, k = _l2_norm(q), _l2_norm(k)
    if inputs.q_scale is not None:
        q = _scale_queries(q, inputs.q_scale)
    return q, k
