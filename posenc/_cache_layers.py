"""Which cached entries each layer keeps, when layers attend within spans of their own.

Private to `posenc.inference.KVCache`: a model whose layers have their own sliding window or chunk
(`posenc.spans`) lets each such layer drop the entries none of its later queries can see, while
its global layers keep everything. The cache then records, per layer, which of its entries the
layer holds (``held``: indices into the cache's ``positions``, ``valid`` and ``order``), and keeps
an entry as long as one layer holds it.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from posenc.spans import AttentionSpan


def held_after(held: list[Tensor] | None, layer: int, total: int, new: int) -> Tensor:
    """The entries (of ``total``, the last ``new`` this call's) that ``layer`` holds after its update."""
    if held is None:
        return torch.arange(total)
    return torch.cat((held[layer], torch.arange(total - new, total)))


def check_layer_spans(spans: object, num_layers: int, *, in_cache: bool) -> list[AttentionSpan | None]:
    """``spans``: None, or one `AttentionSpan` or None per layer."""
    if spans is None or (type(spans) is list and len(spans) == num_layers and not any(spans)):
        return [None] * num_layers  # no layer has a span of its own (the common case, checked fast)
    if isinstance(spans, (str, bytes)) or not isinstance(spans, Sequence) or len(spans) != num_layers:
        raise TypeError(f"spans must be a sequence of one AttentionSpan or None per layer ({num_layers}), "
                        f"got {spans!r:.60}")
    for span in spans:
        if span is not None and not isinstance(span, AttentionSpan):
            raise TypeError(f"spans must hold posenc.spans.AttentionSpan or None, got {type(span).__name__}")
    if any(span is not None for span in spans) and in_cache:
        raise ValueError("per-layer windows or chunks (spans) need KVCache(key_positions='original'): "
                         "renumbering the entries would move them in and out of a layer's span")
    return list(spans)


def check_unbroken_cache(cache: object, layer: int, position: str) -> None:
    """FoX and PaTH read every token between a cached key and the query: ``layer``'s entries must
    run without a gap up to the newest token (a full cache or a sliding window; not sinks)."""
    from posenc.inference import KVCache  # the cache imports this module
    assert isinstance(cache, KVCache)
    if cache.key_positions == "in-cache":
        raise ValueError(f"position={position!r} caches keys with what it computed from each token; "
                         "KVCache(key_positions='in-cache') would rotate them again: use 'original'")
    held = cache.entries(layer)
    order = cache.order if held is None else cache.order[held]
    if order.numel() and not torch.equal(order, torch.arange(cache.seen - order.numel(), cache.seen)):
        raise ValueError(f"position={position!r} needs every token between a cached key and the query, "
                         f"but the cache dropped some (window={cache.window}, sinks={cache.sinks}): "
                         "use a cache without sinks")


# --8<-- [start:evict]
def evict_per_layer(keys: list[Tensor], values: list[Tensor],
                    held: list[Tensor], spans: list[AttentionSpan | None],
                    window: Tensor, positions: Tensor, valid: Tensor,
                    upcoming: Tensor
                    ) -> tuple[list[Tensor], list[Tensor], Tensor,
                               list[Tensor] | None]:
    """Each layer keeps what the cache-wide ``window`` keeps and, with a
    span, what its later queries can see.

    Returns the kept keys and values, the entries any layer still holds
    (``union``, sorted) and each layer's entries as indices into ``union``
    (None when every layer holds all of them).
    """
    kept, kept_keys, kept_values = [], [], []
    # columns: the entries this layer holds, [held]
    for layer, columns in enumerate(held):
        keep = window[columns]
        span = spans[layer]
        # seen by some row's next query (later queries see less)
        if span is not None:
            keep = keep & (span._keeps(positions[:, columns], upcoming)
                           & valid[:, columns]).any(0)
        index = keep.nonzero().squeeze(-1)
        kept_keys.append(
            keys[layer].index_select(-2, index.to(keys[layer].device)))
        kept_values.append(
            values[layer].index_select(-2, index.to(values[layer].device)))
        kept.append(columns[index])
    # sorted
    union = (torch.unique(torch.cat(kept)) if kept
             else torch.zeros(0, dtype=torch.long))
    remapped = [torch.searchsorted(union, columns) for columns in kept]
    if all(columns.numel() == union.numel() for columns in remapped):
        # every layer holds every entry again
        return kept_keys, kept_values, union, None
    return kept_keys, kept_values, union, remapped
# --8<-- [end:evict]
