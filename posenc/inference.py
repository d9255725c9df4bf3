"""Positions at inference time: the KV cache, left padding, packed sequences, sliding windows.

At training time every sequence starts at position 0 and the model sees it whole. At inference
time the position ids have to be supplied with care:

* decoding with a cache (`KVCache`) feeds one token at a time, and its position must continue
  from the cached ones, not restart at 0;
* a left-padded batch must number each row from its first real token
  (`positions_from_mask`), or every position shifts by the amount of padding;
* several documents packed into one row must each restart at 0 (`packed_positions`) and must
  not see each other (`packed_attention_mask`);
* a sliding window with attention sinks (Xiao et al., 2024, https://arxiv.org/abs/2309.17453)
  keeps the first ``sinks`` entries and the last ``window`` ones, and must decide which
  positions the kept keys carry (``key_positions``).

`posenc.model.TinyTransformer.forward` takes ``positions``, ``attention_mask`` and ``cache``
and uses the helpers here.

Inside: the position ids and masks of padded and packed batches (`positions_from_mask`,
`packed_positions`, `packed_attention_mask`) live in ``_batch_positions.py``; this module gives
them, the cache and the plan of each forward call.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from posenc._batch_positions import (
    MAX_PACKED_LENGTH,
    check_bool_mask,
    packed_attention_mask,
    packed_positions,
    positions_from_mask,
)
from posenc._cache_layers import check_layer_spans, evict_per_layer, held_after
from posenc._checks import (
    MAX_POSITION_ID,
    MAX_SIZE,
    check_choice,
    check_int,
    check_position_ids,
    check_size_int,
    check_tensor,
)
from posenc.spans import AttentionSpan

__all__ = ["KEY_POSITIONS", "MAX_PACKED_LENGTH", "KVCache", "StepPlan", "packed_attention_mask", "packed_positions",
           "plan_step", "positions_from_mask"]

#: The ``key_positions`` values of `KVCache`.
KEY_POSITIONS = ("original", "in-cache")


class KVCache:
    """The keys and values of every layer, kept between calls so decoding does not recompute them.

    Create it empty and pass it to `posenc.model.TinyTransformer.forward` (or let
    ``generate`` make one); the model fills it in place. The first model that uses a cache
    owns it: another model, or a batch of another size, is refused.

    Args:
        window: None (keep everything) or the number of most recent tokens each query may see,
            itself included (sliding-window attention). After each call the cache keeps only
            what the next token can see.
        sinks: with a window, also keep the first ``sinks`` entries forever: the attention
            sinks of StreamingLLM (Xiao et al., 2024, https://arxiv.org/abs/2309.17453). The
            entries are counted in the order tokens were fed, the same for every row: in a
            left-padded batch a row's padding counts among its sinks.
        key_positions: which positions the kept keys carry. ``"original"``: the position each
            key had when it was cached (RoPE keys are cached already rotated, ALiBi and T5
            measure distances from it). ``"in-cache"``: positions are re-assigned as the index
            of each entry among the cache's real entries at every step, as StreamingLLM does;
            RoPE keys are then cached unrotated and rotated again at every step.

    Attributes:
        keys, values: one ``[batch, heads, entries, head_dim]`` tensor per layer.
        positions: ``[batch, entries]`` int64, the position of each entry.
        valid: ``[batch, entries]`` bool, False for padding.
        order: ``[entries]`` int64, which token of the stream each kept entry is (0 = the
            first token ever fed): it tells which entries the window kept.
        seen: how many tokens have been fed so far.

    Examples:
        >>> cache = KVCache(window=4, sinks=1)
        >>> len(cache), cache.seen
        (0, 0)
    """

    def __init__(self, *, window: int | None = None, sinks: int = 0, key_positions: str = "original") -> None:
        self.window = None if window is None else check_size_int("window", window)
        self.sinks = check_int("sinks", sinks, minimum=0, maximum=MAX_SIZE)
        if self.sinks and self.window is None:
            raise ValueError(f"sinks={self.sinks} needs a window: without one every entry is kept anyway")
        self.key_positions = check_choice("key_positions", key_positions, KEY_POSITIONS)
        self.keys: list[Tensor] = []
        self.values: list[Tensor] = []
        self.positions = torch.zeros(0, 0, dtype=torch.long)
        self.valid = torch.zeros(0, 0, dtype=torch.bool)
        self.order = torch.zeros(0, dtype=torch.long)
        self.seen = 0
        self._next = torch.zeros(0, dtype=torch.long)
        self._owner: weakref.ref[object] | None = None
        # Per layer, which entries it holds (indices into positions/valid/order), once a layer's
        # own span (`posenc.spans`) has dropped some; None while every layer holds every entry.
        self._held: list[Tensor] | None = None

    def __len__(self) -> int:
        """The number of entries kept (per row and layer)."""
        return int(self.order.numel())

    def __repr__(self) -> str:
        return (f"KVCache(entries={len(self)}, seen={self.seen}, window={self.window}, sinks={self.sinks}, "
                f"key_positions={self.key_positions!r})")

    def entries(self, layer: int) -> Tensor | None:
        """Which entries layer ``layer`` holds (indices into ``positions``, ``valid``, ``order``), or None: all.

        A layer with a sliding window or a chunk of its own drops the entries its later queries
        cannot see (see `commit`), so its keys are fewer than the cache's entries.
        """
        if type(layer) is not int or not 0 <= layer <= len(self.keys):  # len: the layer update adds next
            layer = check_int("layer", layer, minimum=0, maximum=len(self.keys))
        return None if self._held is None or layer == len(self._held) else self._held[layer].clone()

    def next_positions(self) -> Tensor:
        """``[batch]``: one past the largest position of each row's real tokens fed so far (0 if none).

        Recorded before the window drops entries, so evicting the most recent keys (a window
        of 1) does not send the next position back.
        """
        return self._next.clone()

    def _check_owner(self, owner: object, num_layers: int, batch: int) -> None:
        if self._owner is None:
            if self.seen:
                raise ValueError("cache was filled by a model that no longer exists; start a new KVCache")
            return
        if self._owner() is not owner:
            raise ValueError("cache was filled by another model; each model needs its own KVCache")
        if len(self.keys) != num_layers:
            raise ValueError(f"cache holds {len(self.keys)} layers, the model has {num_layers}")
        if self.positions.shape[0] != batch:
            raise ValueError(f"cache holds a batch of {self.positions.shape[0]} rows, "
                             f"got tokens with {batch} rows")

    def update(self, layer: int, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Append this call's keys ``k`` and values ``v`` ``[batch, heads, new, head_dim]`` to layer ``layer``.

        Returns every key and value of that layer, the cached ones first. A model calls it once per
        layer and call, layers in order, then `commit` once.
        """
        layer = check_int("layer", layer, minimum=0, maximum=len(self.keys))
        k = check_tensor("k", k, ndim=4, floating=True)
        v = check_tensor("v", v, ndim=4, floating=True)
        if v.shape[:3] != k.shape[:3]:
            raise ValueError(f"v must have the batch, heads and entries of k {tuple(k.shape[:3])}, "
                             f"got shape {tuple(v.shape)}")
        if layer < len(self.keys):
            if self.keys[layer].shape[:2] != k.shape[:2] or self.keys[layer].shape[3] != k.shape[3]:
                raise ValueError(f"k must have the batch, heads and head_dim of layer {layer}'s cached keys "
                                 f"{tuple(self.keys[layer].shape)}, got shape {tuple(k.shape)}")
            k = torch.cat((self.keys[layer].to(k.dtype), k), dim=-2)
            v = torch.cat((self.values[layer].to(v.dtype), v), dim=-2)
            self.keys[layer], self.values[layer] = k, v
        else:
            self.keys.append(k)
            self.values.append(v)
        return k, v

    def commit(self, step: StepPlan, *, owner: object, spans: Sequence[AttentionSpan | None] | None = None) -> None:
        """After every layer's `update`: record the entries of ``step``, then drop what the window hides.

        ``step`` is the `plan_step` of this call; ``owner`` the model that ran it (a later call by
        another model is refused). ``spans``: each layer's own window or chunk
        (`posenc.spans.AttentionSpan`, None for a layer that sees every key); a layer then drops
        the entries no later query of it can see (later queries must not go back in position).
        """
        if not isinstance(step, StepPlan):
            raise TypeError(f"step must be the StepPlan of this call (from plan_step), got {type(step).__name__}")
        new = step.query_positions.shape[1]
        checked = self._check_spans(spans)
        per_layer = self._held is not None or any(span is not None for span in checked)
        total = step.key_positions.shape[1]
        held = [self._held_after(layer, step) for layer in range(len(self.keys))] if per_layer else []
        for layer, keys in enumerate(self.keys):
            planned = held[layer].numel() if per_layer else total
            if keys.shape[-2] != planned:
                raise ValueError(f"step plans {planned} entries but the cache's layers hold {keys.shape[-2]} "
                                 f"(layer {layer}): call update on every layer before commit")
        try:
            self._owner = weakref.ref(owner)
        except TypeError:
            raise TypeError(f"owner must be the model that ran the step, got {type(owner).__name__}") from None
        self.positions, self.valid, self.order = step.key_positions, step.key_valid, step.key_order
        self.seen += new
        latest = torch.zeros(self.positions.shape[0], dtype=torch.long)
        if self.positions.shape[1]:
            latest = self.positions.masked_fill(~self.valid, -1).amax(dim=-1) + 1
        self._next = latest if self._next.shape != latest.shape else torch.maximum(self._next, latest)
        if per_layer:
            self._evict_per_layer(held, checked)
            return
        if self.window is None:
            return
        # The next token (order == seen) sees keys with seen - order < window, and the sinks.
        index = self._window_keeps().nonzero().squeeze(-1)
        self.order = self.order[index]
        self.positions, self.valid = self.positions[:, index], self.valid[:, index]
        device_index = [index.to(k.device) for k in self.keys[:1]]
        if device_index:
            self.keys = [k.index_select(-2, device_index[0]) for k in self.keys]
            self.values = [v.index_select(-2, device_index[0]) for v in self.values]
        if self.key_positions == "in-cache":  # the kept entries are renumbered 0, 1, 2, ...
            self.positions = positions_from_mask(self.valid)

    def _window_keeps(self) -> Tensor:
        """``[entries]``: what the cache-wide window (and its sinks) keeps for the next token."""
        if self.window is None:
            return torch.ones(self.order.shape, dtype=torch.bool)
        return (self.order < self.sinks) | (self.order > self.seen - self.window)

    def _held_after(self, layer: int, step: StepPlan) -> Tensor:
        """The entries of ``step`` (indices into its keys) that layer ``layer`` holds after its update."""
        return held_after(self._held, layer, step.key_positions.shape[1], step.query_positions.shape[1])

    def _check_spans(self, spans: object) -> list[AttentionSpan | None]:
        return check_layer_spans(spans, len(self.keys), in_cache=self.key_positions == "in-cache")

    def _evict_per_layer(self, held: list[Tensor], spans: list[AttentionSpan | None]) -> None:
        """Each layer keeps what the cache's window keeps and, with a span, what its later queries can see."""
        self.keys, self.values, union, self._held = evict_per_layer(
            self.keys, self.values, held, spans, self._window_keeps(), self.positions, self.valid, self._next)
        self.positions, self.valid, self.order = self.positions[:, union], self.valid[:, union], self.order[union]


@dataclass(frozen=True)
class StepPlan:
    """The positions and the mask of one forward call: what `plan_step` works out and `KVCache.commit` records."""

    query_positions: Tensor  # [batch, q_len] (on the CPU, like the rest of the bookkeeping)
    key_positions: Tensor  # [batch, k_len]: cached entries, then this call's tokens
    key_valid: Tensor  # [batch, k_len]
    key_order: Tensor  # [k_len]
    mask: Tensor | None  # [batch, 1, q_len, k_len], True = attend; None = plain causal


def plan_step(cache: KVCache | None, *, owner: object, num_layers: int, batch: int, q_len: int,
              positions: object, attention_mask: object, device: torch.device) -> StepPlan:
    """Validate ``positions``, ``attention_mask`` and ``cache`` and work out this call's positions and mask."""
    num_layers = check_size_int("num_layers", num_layers)
    batch = check_size_int("batch", batch)
    q_len = check_size_int("q_len", q_len, minimum=0)
    if cache is not None and not isinstance(cache, KVCache):
        raise TypeError(f"cache must be a posenc.KVCache or None, got {type(cache).__name__}")
    if cache is not None:
        cache._check_owner(owner, num_layers, batch)
    past = len(cache) if cache is not None else 0
    k_len = past + q_len
    mask_2d = mask_3d = None
    if attention_mask is not None:
        tensor = check_bool_mask("attention_mask", attention_mask, ndim=(2, 3))
        wanted = (batch, k_len) if tensor.ndim == 2 else (batch, q_len, k_len)
        if tuple(tensor.shape) != wanted:
            where = f" ({past} cached entries + {q_len} new tokens)" if past else ""
            raise ValueError(f"attention_mask must have shape [batch, k_len] = [{batch}, {k_len}] for padding or "
                             f"[batch, q_len, k_len] = [{batch}, {q_len}, {k_len}]{where}, "
                             f"got shape {tuple(tensor.shape)}")
        mask_2d, mask_3d = (tensor, None) if tensor.ndim == 2 else (None, tensor)
    new_valid = torch.ones(batch, q_len, dtype=torch.bool)
    old_valid = cache.valid if cache is not None and past else torch.zeros(batch, 0, dtype=torch.bool)
    key_valid = torch.cat((old_valid, new_valid), dim=1) if mask_2d is None else mask_2d.cpu()

    in_cache = cache is not None and cache.key_positions == "in-cache"
    if in_cache:
        if positions is not None:
            raise ValueError("positions cannot be given with a KVCache(key_positions='in-cache'): "
                             "its positions are the index of each entry in the cache")
        key_positions = positions_from_mask(key_valid)
        query_positions = key_positions[:, past:]
    else:
        old_positions = cache.positions if cache is not None and past else torch.zeros(batch, 0, dtype=torch.long)
        if positions is not None:
            query_positions = check_position_ids("positions", positions, like=(batch, q_len)).expand(batch, q_len).cpu()
            if cache is not None and cache.seen and q_len:
                last = cache.next_positions() - 1 if cache is not None else None
                assert last is not None
                backwards = (last >= 0) & (query_positions[:, 0] <= last)
                if bool(backwards.any()):
                    row = int(backwards.nonzero()[0, 0])
                    raise ValueError(f"positions go backwards: row {row} starts at {int(query_positions[row, 0])} "
                                     f"but the cache already holds position {int(last[row])}; leave positions "
                                     "out to continue from the cache")
        else:
            start = cache.next_positions() if cache is not None and cache.seen else torch.zeros(batch, dtype=torch.long)
            query_positions = start[:, None] + torch.arange(q_len)
            if query_positions.numel() and int(query_positions.max()) > MAX_POSITION_ID:
                raise ValueError(f"positions would pass {MAX_POSITION_ID}: the cache already holds {cache.seen if cache else 0} tokens")
        key_positions = torch.cat((old_positions, query_positions), dim=1)

    seen = cache.seen if cache is not None else 0
    old_order = cache.order if cache is not None else torch.zeros(0, dtype=torch.long)
    key_order = torch.cat((old_order, seen + torch.arange(q_len)))
    window = cache.window if cache is not None else None
    mask = None
    # Plain causal attention (the cached keys first, in order) needs no mask of its own.
    plain = window is None and mask_3d is None and bool(key_valid.all())
    if not plain:
        query_order = key_order[past:]
        allowed = key_order[None, :] <= query_order[:, None]  # causal, in the order tokens were fed
        if window is not None and cache is not None:
            distance = query_order[:, None] - key_order[None, :]
            allowed = allowed & ((distance < window) | (key_order[None, :] < cache.sinks))
        full = allowed[None] & key_valid[:, None, :]
        if mask_3d is not None:
            full = full & mask_3d.cpu()
        mask = full[:, None].to(device)
    return StepPlan(query_positions, key_positions, key_valid, key_order, mask)
