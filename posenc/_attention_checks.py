"""The argument checks of `posenc.attention.scaled_dot_product_attention`: queries, keys and values,
bias, mask and sinks, the hooks, and what the hooks return.

Private: each raises the ValueError or TypeError of the public boundary (see `posenc._checks`),
naming the argument as the caller spelled it; `posenc.attention` calls them once, at the door.
"""

from __future__ import annotations

import torch
from torch import Tensor

from posenc._checks import check_broadcast, check_size, check_tensor


def check_qkv(q: object, k: object, v: object, *, own_scores: bool = False) -> tuple[Tensor, Tensor, Tensor]:
    checked = []
    for name, value in (("q", q), ("k", k), ("v", v)):
        tensor = check_tensor(name, value, min_ndim=2, floating=True)  # complex is not floating point
        checked.append(tensor)
    q_, k_, v_ = checked
    for name, tensor in (("k", k_), ("v", v_)):
        if tensor.dtype != q_.dtype:
            raise TypeError(f"{name} must have the dtype of q ({q_.dtype}), got {tensor.dtype}")
        if tensor.shape[:-2] != q_.shape[:-2]:
            raise ValueError(f"{name} must have the leading (batch, heads) dimensions of q, "
                             f"{tuple(q_.shape[:-2])}, got shape {tuple(tensor.shape)}")
    if not own_scores:  # a scores hook decides what its keys carry (FoX's gates, PaTH's transforms)
        check_size("k", k_, -1, q_.shape[-1], expected_from="the last dimension of q")
    check_size("v", v_, -2, k_.shape[-2], expected_from="the number of keys")
    return q_, k_, v_


def check_bias(bias: object, shape: tuple[int, ...]) -> Tensor:
    tensor = check_tensor("bias", bias, min_ndim=2)
    if tensor.dtype == torch.bool:
        raise TypeError("bias is added to the logits and must hold real numbers, got a boolean tensor; "
                        "to choose which keys a query sees, pass it as mask= (True = attend)")
    if not tensor.is_floating_point():
        raise TypeError(f"bias must be a real floating-point tensor, got dtype {tensor.dtype}")
    check_broadcast("bias", tensor, shape)
    if bool(torch.isnan(tensor).any()) or bool((tensor == float("inf")).any()):
        raise ValueError("bias must not hold NaN or +inf (it would turn the softmax into NaN); "
                         "-inf is allowed and hides a key")
    return tensor


def check_mask(mask: object, shape: tuple[int, ...]) -> Tensor:
    tensor = check_tensor("mask", mask, min_ndim=1)
    if tensor.dtype != torch.bool:
        raise TypeError(f"mask must be a boolean tensor (True = attend), got dtype {tensor.dtype}")
    check_broadcast("mask", tensor, shape)
    return tensor


def check_hooks(**hooks: object) -> None:
    for name, hook in hooks.items():
        if hook is not None and not callable(hook):
            raise TypeError(f"{name} must be callable or None, got {type(hook).__name__}")


def check_hook_term(term: object, scores: Tensor) -> Tensor:
    if not isinstance(term, Tensor) or not term.is_floating_point():
        raise TypeError(f"logit_hook must return a real floating-point tensor, got {type(term).__name__}"
                        + (f" of dtype {term.dtype}" if isinstance(term, Tensor) else ""))
    check_broadcast("the term returned by logit_hook", term, tuple(scores.shape))
    return term


def check_scores(logits: object, shape: tuple[int, ...]) -> Tensor:
    if not isinstance(logits, Tensor) or not logits.is_floating_point():
        raise TypeError(f"scores must return a real floating-point tensor, got {type(logits).__name__}"
                        + (f" of dtype {logits.dtype}" if isinstance(logits, Tensor) else ""))
    if tuple(logits.shape) != shape:
        raise ValueError(f"scores must return the logits' shape {shape} ([..., q_len, k_len]), "
                         f"got shape {tuple(logits.shape)}")
    return logits


def check_weights(weights: object, shape: tuple[int, ...]) -> Tensor:
    if not isinstance(weights, Tensor) or not weights.is_floating_point():
        raise TypeError(f"weighting must return a real floating-point tensor, got {type(weights).__name__}")
    if tuple(weights.shape) != shape:
        raise ValueError(f"weighting must return the logits' shape {shape}, got shape {tuple(weights.shape)}")
    return weights


def check_sinks(sinks: object, q: Tensor) -> Tensor:
    tensor = check_tensor("sinks", sinks, ndim=1, floating=True, finite=True)
    if q.ndim < 3 or tensor.shape[0] != q.shape[-3]:
        heads = "q has no heads dimension" if q.ndim < 3 else f"{q.shape[-3]} heads"
        raise ValueError(f"sinks must hold one logit per head, [heads] = [{q.shape[-3] if q.ndim >= 3 else '?'}] "
                         f"(q of shape {tuple(q.shape)}: {heads}), got shape {tuple(tensor.shape)}")
    return tensor
