r"""Rotary positions of vision encoders: DINOv3's normalised coordinates, V-JEPA 2's head thirds,
Pixtral's 2-D ladder and RoPE-Mixed's learned directions.

All of them turn pairs of a head's features by angles that depend on a patch's row and column
(and frame); they differ in the coordinates and in which pair listens to which axis:

* DINOv3 (Siméoni et al. 2025) measures a patch by its centre, scaled to [-1, 1] on each axis
  (`patch_center_coordinates`), so every resolution spans the same range; in training it shifts,
  stretches per axis and rescales those coordinates (`augment_patch_coordinates`);
* V-JEPA 2 (Assran et al. 2025) gives a third of each head to time, height and width;
* Pixtral gives a 2-D head the even rungs of the 1-D ladder for rows and the odd ones for columns;
* RoPE-Mixed (Heo et al. 2024) learns, per head, a direction in the (row, column) plane for each
  pair, so a pair can turn along a diagonal.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from posenc._checks import (
    MAX_GRID_CELLS,
    check_choice,
    check_float,
    check_int,
    check_position_tensor,
    check_positions_match,
    check_tensor,
)
from posenc._rotary import apply_table
from posenc.rope_nd import apply_rope_nd

__all__ = ["RopeMixed", "apply_dinov3_rope", "apply_pixtral_rope", "apply_rope_head_thirds",
           "augment_patch_coordinates", "patch_center_coordinates"]

#: V-JEPA 2's two readings of a third's table: the released models' and a true rotation.
PAIRINGS = ("vjepa2", "rotation")


def _check_grid(height: object, width: object) -> tuple[int, int]:
    h = check_int("height", height, minimum=1, maximum=MAX_GRID_CELLS)
    w = check_int("width", width, minimum=1, maximum=MAX_GRID_CELLS)
    if h * w > MAX_GRID_CELLS:
        raise ValueError(f"height * width must be <= {MAX_GRID_CELLS}, got {h} * {w} = {h * w}")
    return h, w


def _check_head(x: Tensor, multiple: int, why: str) -> Tensor:
    x = check_tensor("x", x, min_ndim=2, floating=True)
    if x.shape[-1] % multiple or x.shape[-1] == 0:
        raise ValueError(f"x must have a last dimension (head_dim) that is a positive multiple of {multiple} "
                         f"({why}), got shape {tuple(x.shape)}")
    return x


def patch_center_coordinates(height: int, width: int) -> Tensor:
    """DINOv3's coordinates of patch centres, ``[height * width, 2]`` float64 (row, column), in (-1, 1).

    The patch in row r of ``height`` sits at ``2 (r + 0.5) / height - 1``, and likewise for
    columns: a 2 x 2 grid and a 64 x 64 grid span the same square, only more finely.

    Examples:
        >>> patch_center_coordinates(2, 4)[:4]
        tensor([[-0.5000, -0.7500],
                [-0.5000, -0.2500],
                [-0.5000,  0.2500],
                [-0.5000,  0.7500]], dtype=torch.float64)
    """
    height, width = _check_grid(height, width)
    rows = (torch.arange(height, dtype=torch.float64) + 0.5) / height
    cols = (torch.arange(width, dtype=torch.float64) + 0.5) / width
    grid = torch.stack(torch.meshgrid(rows, cols, indexing="ij"), dim=-1).reshape(-1, 2)
    return 2.0 * grid - 1.0


def augment_patch_coordinates(coords: Tensor, *, shift: float | None = None, jitter: float | None = None,
                              rescale: float | None = None, generator: torch.Generator | None = None) -> Tensor:
    """DINOv3's training-time changes to the coordinates: one draw per call, in this order.

    * ``shift``: add to each axis a number drawn uniformly from ``[-shift, shift]``;
    * ``jitter``: multiply each axis by its own factor, log-uniform in ``[1/jitter, jitter]``;
    * ``rescale``: multiply both axes by one factor, log-uniform in ``[1/rescale, rescale]``.

    None leaves a step out (transformers' ``DINOv3ViTConfig`` defaults: shift and jitter None,
    rescale 2.0). The draws are made in float32 from ``generator`` (the global one if None) in the
    order transformers' ``augment_patches_center_coordinates`` makes them, so a seed gives the
    same draws; the arithmetic is float64.

    Examples:
        >>> coords = patch_center_coordinates(2, 2)
        >>> out = augment_patch_coordinates(
        ...     coords, rescale=2.0, generator=torch.Generator().manual_seed(0))
        >>> ratio = out / coords                  # one factor for every coordinate
        >>> bool(torch.allclose(ratio, ratio[0, 0])), 0.5 <= float(ratio[0, 0]) <= 2.0
        (True, True)
    """
    coords = check_tensor("coords", coords, ndim=2, floating=True, finite=True)
    if coords.shape[-1] != 2:
        raise ValueError(f"coords must have shape [patches, 2] (row, column), got {tuple(coords.shape)}")
    out = coords.to(torch.float64)

    def draw(shape: tuple[int, ...], bound: float) -> Tensor:
        return torch.empty(shape, dtype=torch.float32).uniform_(-bound, bound, generator=generator).double()

    if shift is not None:
        out = out + draw((1, 2), check_float("shift", shift, minimum=0.0, maximum=1e6))
    if jitter is not None:
        out = out * draw((1, 2), math.log(check_float("jitter", jitter, minimum=1.0, maximum=1e6))).exp()
    if rescale is not None:
        out = out * draw((1,), math.log(check_float("rescale", rescale, minimum=1.0, maximum=1e6))).exp()
    return out


def apply_dinov3_rope(x: Tensor, coords: Tensor, *, base: float = 100.0) -> Tensor:
    r"""Rotate the patch tokens ``x [..., patches, head_dim]`` at DINOv3's coordinates.

    The head is split in two halves of ``head_dim / 4`` pairs, the first for the row, the second
    for the column; the k-th pair of an axis turns by \(2\pi c \, b^{-4k/d}\), \(c\) the
    coordinate in [-1, 1] (`patch_center_coordinates`, perhaps augmented), \(b\) = ``base``
    (``rope_theta``, 100), \(d\) = ``head_dim``; pairs are (i, i + d/2), as transformers'
    ``DINOv3ViTRopePositionEmbedding``. Class and register tokens are not rotated: pass only the
    patches.

    Examples:
        >>> x = torch.ones(1, 4, 4)
        >>> apply_dinov3_rope(x, patch_center_coordinates(2, 2))[0, 0]
        tensor([-1., -1., -1., -1.])
    """
    x = _check_head(x, 4, "a quarter of the head per axis and feature half")
    coords = check_positions_match("coords", check_position_tensor("coords", coords, ndim=(2, 3)), "x", x,
                                   coordinates=2)
    pairs = x.shape[-1] // 4
    return apply_rope_nd(x, 2 * math.pi * coords.to(torch.float64), sections=(pairs, pairs), base=base,
                         layout="half", frequencies="per_axis")


def apply_pixtral_rope(x: Tensor, positions: Tensor, *, base: float = 10000.0) -> Tensor:
    r"""Pixtral's 2-D RoPE on ``x [..., patches, head_dim]`` at integer (row, column) ``positions``.

    Of the 1-D ladder \(\theta_j = b^{-2j/d}\), \(j < d/2\), the rows take the even rungs and the
    columns the odd ones: pair k < d/4 turns by \(r\,\theta_{2k}\), pair d/4 + k by \(c\,\theta_{2k+1}\);
    pairs are (i, i + d/2) (transformers' ``PixtralVisionRotaryEmbedding``, Mistral's
    ``precompute_freqs_cis_2d``).

    Examples:
        >>> x = torch.ones(1, 8)
        >>> apply_pixtral_rope(x, torch.tensor([[0, 1]]), base=100.0)[0]
        tensor([1.0000, 1.0000, 0.6394, 0.9679, 1.0000, 1.0000, 1.2614, 1.0311])
    """
    x = _check_head(x, 4, "a quarter of the head per axis and feature half")
    positions = check_positions_match("positions", check_position_tensor("positions", positions, ndim=(2, 3)),
                                      "x", x, coordinates=2)
    base = check_float("base", base, positive=True)
    d = x.shape[-1]
    ladder = base ** -(torch.arange(0, d, 2, dtype=torch.float64) / d)  # [d/2]
    theta = torch.cat((ladder[0::2], ladder[1::2]))  # rows: even rungs, columns: odd rungs
    owner = torch.arange(2).repeat_interleave(d // 4).to(positions.device)
    angles = positions.to(torch.float64)[..., owner] * theta.to(positions.device)
    return apply_table(x, angles.cos(), angles.sin(), "half")


def apply_rope_head_thirds(x: Tensor, positions: Tensor, *, base: float = 10000.0,
                           pairing: str = "vjepa2") -> Tensor:
    r"""V-JEPA 2's 3-D RoPE: a third of each head per axis (frame, row, column).

    Each third has ``w = 2 * ((head_dim // 3) // 2)`` features, in order; the ``head_dim - 3w``
    left over pass unrotated. Within a third, pairs are (2i, 2i+1) and the ladder is
    \(b^{-2j/w}\), \(j < w/2\).

    Args:
        x: queries or keys ``[..., tokens, head_dim]``.
        positions: (frame, row, column) of each token, ``[tokens, 3]`` or ``[batch, tokens, 3]``.
        base: 10000 in V-JEPA 2 (fixed in its code).
        pairing: ``"vjepa2"``, the released models': the table of a third is tiled
            (``repeat``) instead of repeated per pair, so feature f of a third uses rung
            ``f mod (w/2)`` and the two features of a pair use different rungs (the authors' code
            calls it a bug kept for the trained weights); ``"rotation"``, the corrected form,
            both features of pair i on rung i: a true rotation.

    Examples:
        >>> x = torch.ones(1, 6)
        >>> pos = torch.tensor([[1, 0, 0]])
        >>> apply_rope_head_thirds(x, pos, pairing="rotation")[0, :2]
        tensor([-0.3012,  1.3818])
        >>> apply_rope_head_thirds(x, pos)[0, :2]            # same: a third of one pair
        tensor([-0.3012,  1.3818])
    """
    x = _check_head(x, 1, "split into thirds")
    width = 2 * ((x.shape[-1] // 3) // 2)
    if width == 0:
        raise ValueError(f"x must have a last dimension (head_dim) of at least 6 (three axes of one pair), "
                         f"got shape {tuple(x.shape)}")
    positions = check_positions_match("positions", check_position_tensor("positions", positions, ndim=(2, 3)),
                                      "x", x, coordinates=3)
    base = check_float("base", base, positive=True)
    pairing = check_choice("pairing", pairing, PAIRINGS)
    ladder = base ** -(torch.arange(width // 2, dtype=torch.float64) / (width / 2))  # [w/2]
    rung = torch.arange(width) % (width // 2) if pairing == "vjepa2" else torch.arange(width) // 2
    pos = positions.to(torch.float64)
    thirds = []
    for axis in range(3):
        part = x[..., axis * width:(axis + 1) * width]
        angles = pos[..., axis:axis + 1] * ladder[rung].to(pos.device)  # [..., tokens, w]: one angle per feature
        thirds.append(_turn_pairs(part, angles.cos(), angles.sin()))
    return torch.cat((*thirds, x[..., 3 * width:]), dim=-1)


def _turn_pairs(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
    """x * cos + (-x_{2i+1}, x_{2i}) * sin, per feature (a rotation when both features of a pair share an angle)."""
    x64 = x.to(torch.float64)
    partner = torch.stack((-x64[..., 1::2], x64[..., 0::2]), dim=-1).flatten(-2)
    cos, sin = cos.to(x.device), sin.to(x.device)
    return (x64 * cos + partner * sin).to(x.dtype)


class RopeMixed(nn.Module):
    r"""RoPE-Mixed (Heo et al. 2024): learned per-head frequencies on both axes for every pair.

    Pair j of head h turns by \(\theta^{\text{row}}_{h,j} r + \theta^{\text{col}}_{h,j} c\): a speed
    along a direction of the (row, column) plane. Initialisation as the authors' ``rope-vit``
    code: magnitudes \(b^{-4k/d}\), \(k < d/4\) (\(b\) = ``base``, 10), each used twice, in a
    random direction \(\varphi_h\) per head and in the direction at right angles,
    \(\varphi_h + \pi/2\). Pairs are (2i, 2i+1). One module holds one layer's frequencies.

    Args:
        head_dim: features per head, a multiple of 4.
        num_heads: heads.
        base: 10 in the paper's RoPE-Mixed models (100 for their axial RoPE).
        generator: for the random directions (the global generator if None).

    ``frequencies`` is the parameter ``[2, num_heads, head_dim / 2]`` (row, column). ``forward(x,
    positions)`` rotates ``x [batch, num_heads, tokens, head_dim]`` at ``positions [tokens, 2]``.

    Examples:
        >>> layer = RopeMixed(8, 2, generator=torch.Generator().manual_seed(0))
        >>> layer.frequencies.shape
        torch.Size([2, 2, 4])
        >>> layer(torch.ones(1, 2, 3, 8), torch.tensor([[0, 0], [0, 1], [1, 1]])).shape
        torch.Size([1, 2, 3, 8])
    """

    def __init__(self, head_dim: int, num_heads: int, *, base: float = 10.0,
                 generator: torch.Generator | None = None) -> None:
        super().__init__()
        self.head_dim = check_int("head_dim", head_dim, minimum=4, maximum=1 << 16)
        if self.head_dim % 4:
            raise ValueError(f"head_dim must be a multiple of 4 (two directions of head_dim / 4 pairs), got {head_dim}")
        self.num_heads = check_int("num_heads", num_heads, minimum=1, maximum=1 << 12)
        base = check_float("base", base, positive=True)
        magnitude = base ** -(torch.arange(0, self.head_dim, 4, dtype=torch.float64) / self.head_dim)  # [d/4]
        phi = torch.rand(self.num_heads, 1, generator=generator, dtype=torch.float64) * 2 * math.pi
        direction = torch.cat((phi.expand(-1, magnitude.numel()), (phi + math.pi / 2).expand(-1, magnitude.numel())), -1)
        speed = magnitude.repeat(2)  # [d/2]
        row, col = speed * direction.sin(), speed * direction.cos()  # [heads, d/2] each
        self.frequencies = nn.Parameter(torch.stack((row, col)).float())

    def angles(self, positions: Tensor) -> Tensor:
        """The angle of every pair, ``[num_heads, tokens, head_dim / 2]`` (float64 unless training)."""
        positions = check_position_tensor("positions", positions, ndim=2)
        if positions.shape[-1] != 2:
            raise ValueError(f"positions must have shape [tokens, 2] (row, column), got {tuple(positions.shape)}")
        freqs = self.frequencies if torch.is_grad_enabled() and self.frequencies.requires_grad \
            else self.frequencies.detach().double()
        pos = positions.to(device=freqs.device, dtype=freqs.dtype)
        return torch.einsum("na,ahj->hnj", pos, freqs)  # row * theta_row + col * theta_col

    def forward(self, x: Tensor, positions: Tensor) -> Tensor:
        x = check_tensor("x", x, ndim=4, floating=True)
        if x.shape[1] != self.num_heads or x.shape[-1] != self.head_dim:
            raise ValueError(f"x must have shape [batch, {self.num_heads}, tokens, {self.head_dim}] "
                             f"(num_heads, head_dim), got {tuple(x.shape)}")
        angles = self.angles(positions)
        if angles.shape[1] != x.shape[2]:
            raise ValueError(f"positions must have one row per token of x ({x.shape[2]}), got {angles.shape[1]}")
        angles = angles[None]  # [1, heads, tokens, pairs]: shared by the batch
        return apply_table(x, angles.cos(), angles.sin(), "interleaved")
