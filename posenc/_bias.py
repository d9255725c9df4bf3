"""Positions and distances shared by the learned additive biases (`posenc.kerple`, `posenc.fire`)."""

from __future__ import annotations

import torch
from torch import Tensor

from posenc._checks import check_real_tensor, check_size_int, is_integer


def bias_positions(name: str, value: object) -> Tensor:
    """Positions for a bias: an int n (0 .. n-1), or a ``[seq]`` or ``[batch, seq]`` tensor; float64."""
    if is_integer(value):
        return torch.arange(check_size_int(name, value, minimum=0), dtype=torch.float64)
    if not isinstance(value, Tensor):
        raise TypeError(f"{name} must be an integer or a torch.Tensor of positions, got {type(value).__name__}")
    return check_real_tensor(name, value, ndim=(1, 2), finite=True).to(torch.float64)


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
