"""Pairs of positions for the additive biases (`posenc.alibi`, `posenc.relative`, `posenc.kerple`, `posenc.fire`).

Each bias method's ``bias(q_positions, k_positions)`` takes positions as an int n (meaning
0 .. n-1) or a ``[seq]`` / ``[batch, seq]`` tensor, read by `posenc._checks.check_positions`.
"""

from __future__ import annotations

import torch
from torch import Tensor

from posenc._checks import check_positions


def bias_positions(q_positions: object, k_positions: object) -> tuple[Tensor, Tensor, tuple[int, ...]]:
    """The two positions, float64, and the shape ``[(batch,) q, k]`` of their pairs."""
    q_pos = check_positions("q_positions", q_positions, ndim=(1, 2))
    k_pos = check_positions("k_positions", k_positions, ndim=(1, 2))
    return q_pos, k_pos, pair_shape("q_positions", q_pos, "k_positions", k_pos)


def pair_shape(q_name: str, q_positions: Tensor, k_name: str, k_positions: Tensor) -> tuple[int, ...]:
    """The shape ``[(batch,) q, k]`` of the pairs of these positions; checks that the batches agree."""
    batches = {p.shape[0] for p in (q_positions, k_positions) if p.ndim == 2}
    if len(batches - {1}) > 1:
        raise ValueError(f"{q_name} and {k_name} must have the same batch size (or 1), got shapes "
                         f"{tuple(q_positions.shape)} and {tuple(k_positions.shape)}")
    batch = (max(batches),) if batches else ()
    return (*batch, q_positions.shape[-1], k_positions.shape[-1])


def distances(q_positions: Tensor, k_positions: Tensor) -> Tensor:
    """``|i - j|`` for every pair, float64 ``[(batch,) q, k]`` (arguments already checked)."""
    return (q_positions.to(torch.float64)[..., :, None] - k_positions.to(torch.float64)[..., None, :]).abs()
