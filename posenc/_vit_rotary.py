"""The rotary hooks of `posenc.tiny_vit.TinyViT`'s RoPE variants, one per forward call.

* axial RoPE at patch indices, with a test-time change of each axis's speeds on a grid larger
  than the trained one: none, per-axis NTK (`posenc.rope_video.ntk_axis_factor`) or RIFLEx
  (`posenc.rope_video.riflex_frequencies`, the intrinsic pair taken as the one whose period is
  closest to the trained side);
* DINOv3's normalised patch centres (`posenc.rope_images`), turned by ``2 pi c theta``, with its
  training-time draws;
* RoPE-Mixed, one learned `posenc.rope_images.RopeMixed` per layer.

Private: `TinyViT` checks the arguments.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from posenc.rope_images import RopeMixed, augment_patch_coordinates, patch_center_coordinates
from posenc.rope_nd import grid_positions
from posenc.rope_video import (
    apply_axes_rope,
    axes_frequencies,
    ntk_axis_factor,
    riflex_frequencies,
    riflex_intrinsic_index,
)

#: Test-time changes of axial RoPE on a larger grid.
EXTENSIONS = ("none", "ntk", "riflex")


class AxisRotary:
    """``rotary(q, k)``: both turned by ``positions [tokens, 2]``, half of each head per axis."""

    def __init__(self, positions: Tensor, head_dim: int, theta: Tensor) -> None:
        self.positions, self.theta = positions, theta
        self.axes_dims = (head_dim // 2, head_dim // 2)

    def __call__(self, q: Tensor, k: Tensor) -> tuple[Tensor, Tensor]:
        def rotate(t: Tensor) -> Tensor:  # pairs (i, i + d/2), rows first: as posenc.rope_nd per_axis
            return apply_axes_rope(t, self.positions, axes_dims=self.axes_dims, theta=self.theta, layout="half")
        return rotate(q), rotate(k)


class MixedRotary:
    """``rotary(q, k)`` of one layer's `RopeMixed`."""

    def __init__(self, layer: RopeMixed, positions: Tensor) -> None:
        self.layer, self.positions = layer, positions

    def __call__(self, q: Tensor, k: Tensor) -> tuple[Tensor, Tensor]:
        return self.layer(q, self.positions), self.layer(k, self.positions)


def axial_frequencies(head_dim: int, base: float, trained: tuple[int, int], grid: tuple[int, int],
                      extension: str) -> Tensor:
    """The speeds of the pairs of both axes, float64 ``[head_dim / 2]``, changed per axis on a larger grid."""
    width = head_dim // 2  # features per axis
    speeds = []
    for side, trained_side in zip(grid, trained):
        plain = axes_frequencies((width,), base=base)
        if side <= trained_side or extension == "none":
            speeds.append(plain)
        elif extension == "ntk":  # the slowest pair slowed by side / trained_side, the fastest kept
            speeds.append(axes_frequencies((width,), base=base, ntk_factors=[ntk_axis_factor(side / trained_side,
                                                                                              width)]))
        else:  # RIFLEx: the pair whose period is nearest the trained side covers the new side in one period
            index = riflex_intrinsic_index(plain, trained_side)
            speeds.append(riflex_frequencies(plain, index=index, length=side))
    return torch.cat(speeds)


def axial_rotary(rows: int, cols: int, *, head_dim: int, base: float, trained: tuple[int, int], rescale: bool,
                 extension: str, device: torch.device) -> AxisRotary:
    positions = grid_positions(rows, cols).to(device=device, dtype=torch.float64)
    if rescale:  # (rows, cols) coordinates squeezed into the trained grid's range
        positions = positions * torch.tensor([trained[0] / rows, trained[1] / cols], device=device)
    return AxisRotary(positions, head_dim, axial_frequencies(head_dim, base, trained, (rows, cols), extension))


def normalised_rotary(rows: int, cols: int, *, head_dim: int, base: float, training: bool,
                      jitter: float | None, rescale: float | None, device: torch.device) -> AxisRotary:
    """DINOv3: patch centres in [-1, 1], drawn anew (per-axis jitter, rescale) at each training step."""
    coords = patch_center_coordinates(rows, cols)
    if training and (jitter is not None or rescale is not None):
        coords = augment_patch_coordinates(coords, jitter=jitter, rescale=rescale)
    theta = axes_frequencies((head_dim // 2, head_dim // 2), base=base)
    return AxisRotary((2 * math.pi * coords).to(device), head_dim, theta)
