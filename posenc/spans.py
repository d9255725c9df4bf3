"""Attention spans: which keys a query may see, layer by layer (sliding windows, Llama 4's chunks).

Many models of 2024-2026 limit what some of their layers attend to, and leave other layers
global:

* a **sliding window** of ``w``: the query at position ``p`` sees the keys at ``p - w + 1 .. p``,
  itself included (Mistral; Gemma 2/3's local layers; gpt-oss's banded layers, ``w = 128``);
* a **chunk** of ``c``: the sequence is cut into blocks ``[0, c)``, ``[c, 2c)``, ... and a query
  sees only the keys of its own block, up to itself (Llama 4's RoPE layers, ``c = 8192``). Unlike
  a window, the first query of a block sees nothing before it.

Both are measured in positions (the ids the model is given), combined with the causal mask. Under
a KV cache a windowed or chunked layer can drop the keys no later query will see (`AttentionSpan.keeps`);
its global layers keep everything.

As transformers builds them (version 5.23.0, ``masking_utils.py``): ``sliding_window_overlay``
(``:88-97``, ``kv_idx > q_idx - sliding_window``) and ``chunked_overlay`` (``:100-109``,
``(kv_idx - left_padding) // chunk_size == (q_idx - left_padding) // chunk_size``): its indices
count from each row's first real token, which are the positions of `posenc.inference.positions_from_mask`.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from posenc._bias import pair_shape
from posenc._checks import MAX_POSITION_ID, check_bool, check_elements, check_int, check_position_ids

__all__ = ["AttentionSpan", "span_mask"]


def _check_span(window: object, chunk: object) -> tuple[int | None, int | None]:
    if (window is None) == (chunk is None):
        raise ValueError(f"give one of window and chunk (a span is a sliding window or a chunk), "
                         f"got window={window!r:.40} and chunk={chunk!r:.40}")
    w = None if window is None else check_int("window", window, minimum=1, maximum=MAX_POSITION_ID + 1)
    c = None if chunk is None else check_int("chunk", chunk, minimum=1, maximum=MAX_POSITION_ID + 1)
    return w, c


def _within(q_pos: Tensor, k_pos: Tensor, window: int | None, chunk: int | None) -> Tensor:
    """``[..., q_len, k_len]``: whether each key lies in the query's window or chunk (causality aside)."""
    q, k = q_pos[..., :, None], k_pos[..., None, :]
    if window is not None:
        return q - k < window  # the query and the window - 1 positions before it
    assert chunk is not None
    return torch.div(q, chunk, rounding_mode="floor") == torch.div(k, chunk, rounding_mode="floor")


@dataclass(frozen=True)
class AttentionSpan:
    """The keys a layer attends to: a sliding ``window`` or a ``chunk`` (give one), in positions.

    Examples:
        >>> AttentionSpan(chunk=3).mask(torch.arange(5), torch.arange(5)).int()
        tensor([[1, 1, 1, 0, 0],
                [1, 1, 1, 0, 0],
                [1, 1, 1, 0, 0],
                [0, 0, 0, 1, 1],
                [0, 0, 0, 1, 1]], dtype=torch.int32)
        >>> # the next query is at 6
        >>> AttentionSpan(window=2).keeps(torch.arange(6), torch.tensor(6))
        tensor([False, False, False, False, False,  True])
    """

    window: int | None = None
    chunk: int | None = None

    def __post_init__(self) -> None:
        window, chunk = _check_span(self.window, self.chunk)
        object.__setattr__(self, "window", window)
        object.__setattr__(self, "chunk", chunk)

    def mask(self, query_positions: Tensor, key_positions: Tensor) -> Tensor:
        """Whether each key is within each query's span, ``[..., q_len, k_len]`` (no causal mask).

        Positions are integer ids, ``[seq]`` or ``[batch, seq]``.
        """
        q = check_position_ids("query_positions", query_positions, ndim=(1, 2))
        k = check_position_ids("key_positions", key_positions, ndim=(1, 2))
        check_elements("the mask (batch x q_len x k_len)", *pair_shape("query_positions", q, "key_positions", k))
        return _within(q, k.to(q.device), self.window, self.chunk)

    def keeps(self, key_positions: Tensor, next_positions: Tensor) -> Tensor:
        """Whether a query at a position ``>= next_positions`` may still see each key.

        Args:
            key_positions: ``[..., k_len]`` integer positions of the cached keys.
            next_positions: the smallest position a later query can have, broadcastable to
                ``key_positions`` without its last axis (``[batch]``, or one number).

        Returns:
            ``[..., k_len]`` booleans: False for keys the span hides from every later query (a
            cache may drop them).
        """
        keys = check_position_ids("key_positions", key_positions, ndim=(1, 2))
        nxt = check_position_ids("next_positions", next_positions, ndim=(0, 1))
        if nxt.ndim == 1 and (keys.ndim != 2 or nxt.shape[0] not in (1, keys.shape[0])):
            raise ValueError(f"next_positions must have one entry per row of key_positions "
                             f"(shape {tuple(keys.shape)}), got shape {tuple(nxt.shape)}")
        return self._keeps(keys, nxt.to(keys.device))

    def _keeps(self, keys: Tensor, nxt: Tensor) -> Tensor:
        upcoming = nxt[..., None] if nxt.ndim else nxt  # [batch, 1] or a scalar
        if self.window is not None:  # the next query sees back to next - window + 1
            return upcoming - keys < self.window
        assert self.chunk is not None
        return torch.div(keys, self.chunk, rounding_mode="floor") >= torch.div(upcoming, self.chunk,
                                                                               rounding_mode="floor")


def span_mask(query_positions: Tensor, key_positions: Tensor, *, window: int | None = None,
              chunk: int | None = None, causal: bool = True) -> Tensor:
    """Which keys each query may see under a sliding window or a chunk, ``[..., q_len, k_len]`` bool.

    Args:
        query_positions: integer positions ``[q_len]`` or ``[batch, q_len]``.
        key_positions: integer positions ``[k_len]`` or ``[batch, k_len]``.
        window: the query sees the keys at its own position and the ``window - 1`` before it.
        chunk: the query sees the keys of its own chunk ``[c * n, c * (n + 1))`` (Llama 4).
        causal: also hide keys at later positions than the query.

    Give exactly one of ``window`` and ``chunk``.

    Examples:
        >>> span_mask(torch.arange(5), torch.arange(5), window=2).int()
        tensor([[1, 0, 0, 0, 0],
                [1, 1, 0, 0, 0],
                [0, 1, 1, 0, 0],
                [0, 0, 1, 1, 0],
                [0, 0, 0, 1, 1]], dtype=torch.int32)
        >>> span_mask(torch.arange(5), torch.arange(5), chunk=2).int()
        tensor([[1, 0, 0, 0, 0],
                [1, 1, 0, 0, 0],
                [0, 0, 1, 0, 0],
                [0, 0, 1, 1, 0],
                [0, 0, 0, 0, 1]], dtype=torch.int32)
    """
    span = AttentionSpan(window=window, chunk=chunk)
    causal = check_bool("causal", causal)
    allowed = span.mask(query_positions, key_positions)
    if causal:
        q = query_positions.to(allowed.device)
        allowed = allowed & (key_positions.to(allowed.device)[..., None, :] <= q[..., :, None])
    return allowed
