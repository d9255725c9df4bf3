"""What one layer of `posenc.model.TinyTransformer` does with its plan, as the hooks of its attention.

The model computes what a forward call shares once (`CallInputs`: the positions of the queries
and of every key, the mask of padding and windows, the bias, the cache), then asks `layer_hooks`
for each layer's keyword arguments of `posenc.attention.SelfAttention`, built from that layer's
`posenc.layer_plan.LayerPlan`:

* ``rotary``: turn q and k by their positions (RoPE, xPos), then the L2 norm of q and k
  (``qk_norm``, after the rotation as in Llama 4), then the query temperature (``temperature``);
* ``kv_hook``: the cache, which holds the keys as they left ``rotary`` (with
  ``KVCache(key_positions="in-cache")``, unrotated, and ``rotary`` runs on every key instead);
* ``mask``: the call's mask, narrowed to the layer's window or chunk (``window``, ``chunk``) and
  to the entries its cache kept;
* ``bias`` and ``logit_hook``: the method's, unless the layer has no positions;
* ``scores``: RoPE logits from a matrix of pair offsets (``pair_offsets``) in place of rotating.

The learned sinks (``sinks``) are a parameter of the layer's attention module, built with it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor

from posenc._checks import MAX_SIZE, check_float, check_int, check_tensor
from posenc.attention import LogitHook, QueryKeyTransform, Rotation
from posenc.extension import rope_logits
from posenc.inference import KVCache, StepPlan
from posenc.layer_plan import LayerPlan, QueryScale
from posenc.rope import RotaryEmbedding
from posenc.spans import AttentionSpan

__all__ = ["QK_NORM_EPS", "CallInputs", "call_inputs", "l2_norm", "layer_hooks", "scale_queries"]

#: The epsilon of the q/k norm (Llama 4's ``rms_norm_eps`` in its published configs is 1e-5; the
#: tiny models use transformers' ``Llama4TextL2Norm`` default, 1e-6).
QK_NORM_EPS = 1e-6


@dataclass
class CallInputs:
    """What one forward call gives every layer (built once per call by `call_inputs`)."""

    query_positions: Tensor  # [batch, q_len], on the model's device
    key_positions: Tensor  # [batch, k_len]: the cache's entries first, then this call's tokens
    query_order: Tensor  # [q_len]: which token of the stream each query is
    key_order: Tensor  # [k_len]
    mask: Tensor | None  # [batch, 1, q_len, k_len], True = attend; None = plain causal
    bias: Tensor | None  # [batch or 1, heads, q_len, k_len]
    cache: KVCache | None
    masks: dict[AttentionSpan | None, Tensor] = field(default_factory=dict)  # per span, computed once


def _check_call(step: object, bias: object, cache: object, device: object, plans: object) -> list[LayerPlan]:
    if not isinstance(step, StepPlan):
        raise TypeError(f"step must be the StepPlan of this call (posenc.inference.plan_step), got {type(step).__name__}")
    if bias is not None:
        check_tensor("bias", bias, ndim=4, floating=True)
    if cache is not None and not isinstance(cache, KVCache):
        raise TypeError(f"cache must be a posenc.KVCache or None, got {type(cache).__name__}")
    if not isinstance(device, torch.device):
        raise TypeError(f"device must be a torch.device, got {type(device).__name__}")
    if isinstance(plans, (str, bytes)) or not isinstance(plans, Sequence):
        raise TypeError(f"plans must be a sequence of LayerPlan, got {type(plans).__name__}")
    for plan in plans:
        if not isinstance(plan, LayerPlan):
            raise TypeError(f"plans must hold posenc.layer_plan.LayerPlan, got {type(plan).__name__}")
    return list(plans)


def call_inputs(step: StepPlan, *, bias: Tensor | None, cache: KVCache | None, device: torch.device,
                plans: Sequence[LayerPlan]) -> CallInputs:
    """The shared inputs of a call; refuses a cache a layer's window or chunk cannot be kept in.

    Args:
        step: the call's `posenc.inference.plan_step`.
        bias: the method's bias ``[batch or 1, heads, q_len, k_len]``, or None.
        cache: the call's cache, or None.
        device: where the model computes.
        plans: the model's plans, one per layer.
    """
    plans = _check_call(step, bias, cache, device, plans)
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
    return CallInputs(query_positions, step.key_positions.to(device), step.key_order[-step.query_positions.shape[1]:]
                      if step.query_positions.shape[1] else step.key_order[:0], step.key_order, step.mask, bias, cache)


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
    dtype = x.dtype if x.dtype in (torch.float32, torch.float64) else torch.float32
    y = x.to(dtype)
    return (y * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype)


def _scale_queries(q: Tensor, factors: Tensor) -> Tensor:
    dtype = q.dtype if q.dtype in (torch.float32, torch.float64) else torch.float32
    return (q.to(dtype) * factors.to(device=q.device, dtype=dtype)[:, None, :, None]).to(q.dtype)


def _temperature(scale: QueryScale, positions: Tensor) -> Tensor:
    factors = scale(positions)
    if not isinstance(factors, Tensor) or not factors.is_floating_point():
        raise TypeError(f"a layer plan's temperature must return real factors, got {type(factors).__name__}")
    return factors.expand(positions.shape)  # [batch, q_len]


def _transform(rotation: Rotation | None, plan: LayerPlan) -> Any:
    """(q, k, q_pos, k_pos) -> (q, k): rotate, norm, then scale the queries; None if it does nothing."""
    if rotation is None and not plan.qk_norm and plan.temperature is None:
        return None
    temperature = plan.temperature

    def transform(q: Tensor, k: Tensor, q_pos: Tensor, k_pos: Tensor) -> tuple[Tensor, Tensor]:
        if rotation is not None:
            q, k = rotation.rotate_queries(q, q_pos), rotation.rotate_keys(k, k_pos)
        if plan.qk_norm:  # after the rotation, as Llama 4 (the rotation keeps the norm anyway)
            q, k = _l2_norm(q), _l2_norm(k)
        if temperature is not None:
            q = _scale_queries(q, _temperature(temperature, q_pos))
        return q, k

    return transform


def _offset_scores(plan: LayerPlan, rotation: Rotation | None, q_pos: Tensor, k_pos: Tensor) -> Any:
    """RoPE logits from the plan's pair offsets, scaled as RoPE's own (attention factor², 1/sqrt(d))."""
    if not isinstance(rotation, RotaryEmbedding) or plan.pair_offsets is None:
        raise ValueError("pair_offsets needs a layer with RoPE (a posenc.rope.RotaryEmbedding)")
    offsets = plan.pair_offsets(q_pos, k_pos)  # [batch or 1, q_len, k_len]
    factor = rotation.attention_scaling ** 2

    def scores(q: Tensor, k: Tensor) -> Tensor:
        dtype = q.dtype if q.dtype in (torch.float32, torch.float64) else torch.float32
        pairs = offsets[..., None, :, :] if offsets.ndim == 3 else offsets  # [batch, 1 (heads), q_len, k_len]
        return rope_logits(q.to(dtype), k.to(dtype), rotation.inv_freq, pairs) * (factor / math.sqrt(q.shape[-1]))

    return scores


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


def _check_layer(plan: object, layer: object, call: object, rotation: object, logit_hook: object) -> None:
    if not isinstance(plan, LayerPlan):
        raise TypeError(f"plan must be a posenc.layer_plan.LayerPlan, got {type(plan).__name__}")
    if type(layer) is not int or not 0 <= layer <= MAX_SIZE:  # checked fast: once per layer and call
        check_int("layer", layer, minimum=0, maximum=MAX_SIZE)
    if not isinstance(call, CallInputs):
        raise TypeError(f"call must be the CallInputs of this call (call_inputs), got {type(call).__name__}")
    if rotation is not None and not (callable(getattr(rotation, "rotate_queries", None))
                                     and callable(getattr(rotation, "rotate_keys", None))):
        raise TypeError(f"rotation must be a Rotation (rotate_queries, rotate_keys) or None, "
                        f"got {type(rotation).__name__}")
    if logit_hook is not None and not callable(logit_hook):
        raise TypeError(f"logit_hook must be callable or None, got {type(logit_hook).__name__}")


def layer_hooks(plan: LayerPlan, layer: int, call: CallInputs, *, rotation: Rotation | None,
                logit_hook: LogitHook | None) -> dict[str, Any]:
    """The keyword arguments of layer ``layer``'s attention: ``bias``, ``rotary``, ``mask``, ``kv_hook``,
    ``logit_hook`` and ``scores``, from its plan, this call's inputs and its method's modules.

    Args:
        plan: the layer's `posenc.layer_plan.LayerPlan`.
        layer: the layer's index (its place in the cache).
        call: the call's `CallInputs`.
        rotation: the layer's rotation (a `posenc.attention.Rotation`), or None.
        logit_hook: the method's logit hook of this layer (CoPE), or None.

    Examples:
        >>> from posenc.attention import SelfAttention
        >>> from posenc.inference import plan_step
        >>> from posenc.rope import RotaryEmbedding
        >>> attention, plan = SelfAttention(8, 2), LayerPlan("rope", chunk=2, qk_norm=True)
        >>> step = plan_step(None, owner=attention, num_layers=1, batch=1, q_len=4, positions=None,
        ...                  attention_mask=None, device=torch.device("cpu"))
        >>> call = call_inputs(step, bias=None, cache=None, device=torch.device("cpu"), plans=[plan])
        >>> hooks = layer_hooks(plan, 0, call, rotation=RotaryEmbedding(4), logit_hook=None)
        >>> hooks["mask"][0, 0].int()                    # the chunks of two positions
        tensor([[1, 0, 0, 0],
                [1, 1, 0, 0],
                [0, 0, 1, 0],
                [0, 0, 1, 1]], dtype=torch.int32)
        >>> out, weights = attention(torch.randn(1, 4, 8), causal=False, **hooks)
        >>> weights[0, 0, 2, :2].tolist()                 # query 2 sees nothing of the first chunk
        [0.0, 0.0]
    """
    _check_layer(plan, layer, call, rotation, logit_hook)
    return _hooks(plan, layer, call, rotation, logit_hook)


# --8<-- [start:layer-hooks]
def _hooks(plan: LayerPlan, layer: int, call: CallInputs, rotation: Rotation | None,
           logit_hook: LogitHook | None) -> dict[str, Any]:
    """Each plan field becomes a hook, a mask or an argument of the layer's attention."""
    cache = call.cache
    held = None if cache is None else cache.entries(layer)  # the cached entries this layer kept
    columns = None
    if held is not None:
        past = call.key_positions.shape[1] - call.query_positions.shape[1]
        columns = torch.cat((held, torch.arange(past, call.key_positions.shape[1]))).to(call.key_positions.device)
    q_pos = call.query_positions
    k_pos = call.key_positions if columns is None else call.key_positions[:, columns]  # this layer's keys
    scores = None
    if plan.pair_offsets is not None:  # logits from offsets: q and k are not rotated, keys cached as they are
        scores, rotation = _offset_scores(plan, rotation, q_pos, k_pos), None
    transform = _transform(rotation, plan)
    in_cache = cache is not None and cache.key_positions == "in-cache"
    rotary: QueryKeyTransform | None = None
    if transform is not None and not in_cache:  # keys are cached as they leave it
        def rotary(q: Tensor, k: Tensor) -> tuple[Tensor, Tensor]:
            return transform(q, k, q_pos, q_pos)

    kv_hook = None
    if cache is not None:
        def kv_hook(q: Tensor, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor, Tensor]:
            k_all, v_all = cache.update(layer, k, v)  # the entries this layer kept first, then this call's
            if in_cache and transform is not None:  # every key turned by its index in the cache
                q, k_all = transform(q, k_all, q_pos, k_pos)
            return q, k_all, v_all

    bias = call.bias if plan.uses_position else None
    return {"bias": bias if bias is None or columns is None else bias[..., columns], "rotary": rotary,
            "mask": _mask(plan.span, call, columns), "kv_hook": kv_hook,
            "logit_hook": logit_hook if plan.uses_position else None, "scores": scores}
# --8<-- [end:layer-hooks]
