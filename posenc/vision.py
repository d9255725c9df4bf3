"""Positions of image patches: the 2-D sine-cosine table and a learned 2-D grid.

A vision transformer (Dosovitskiy et al., 2021) cuts an image into patches and reads them as a
sequence, row after row. Each patch has a row and a column, and a position method for images
encodes both:

* `sinusoidal_encoding_2d`: the fixed table of MAE (He et al., 2022): half of the features are a
  1-D sine-cosine table of the column, the other half of the row;
* `LearnedPositionalEmbedding2D`: one trainable vector per grid cell (ViT, DeiT), resized by
  bicubic interpolation when the grid changes;
* axial RoPE (Heo et al., 2024), through `posenc.rope_nd.apply_rope_nd`, and its relatives for
  images: RoPE-Mixed's learned directions and DINOv3's normalised patch centres
  (`posenc.rope_images`).

`posenc.tiny_vit.TinyViT` wires any of them (or none) into a small classifier.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch.nn import functional

from posenc._checks import MAX_ELEMENTS, MAX_GRID_CELLS, check_float, check_int, check_size, check_tensor
from posenc.rope_nd import grid_positions
from posenc.sinusoidal import inverse_frequencies

__all__ = ["LearnedPositionalEmbedding2D", "sinusoidal_encoding_2d"]

_MAX_WIDTH = 1 << 16  # a bound on feature widths


def _check_size(elements: int) -> None:
    if elements > MAX_ELEMENTS:
        raise ValueError(f"height * width * dim must be <= {MAX_ELEMENTS} (the table's size), got {elements}")


def _check_grid(height: object, width: object) -> tuple[int, int]:
    h = check_int("height", height, minimum=1, maximum=MAX_GRID_CELLS)
    w = check_int("width", width, minimum=1, maximum=MAX_GRID_CELLS)
    if h * w > MAX_GRID_CELLS:
        raise ValueError(f"height * width must be <= {MAX_GRID_CELLS}, got {h} * {w} = {h * w}")
    return h, w


def sinusoidal_encoding_2d(height: int, width: int, dim: int, *, base: float = 10000.0) -> Tensor:
    r"""The fixed 2-D sine-cosine table of MAE, ``[height * width, dim]`` float32, patches row-major.

    Features ``0 .. dim/2 - 1`` encode the column of the patch, ``dim/2 .. dim - 1`` its row
    (the order of MAE's ``get_2d_sincos_pos_embed``). Each half is a block of \(d/4\) sines
    followed by a block of \(d/4\) cosines (\(d\) = ``dim``), with frequencies
    \(\text{base}^{-k/(d/4)}\), \(k = 0, \dots, d/4 - 1\); the 1-D
    table of `posenc.sinusoidal.sinusoidal_encoding` interleaves them instead.

    Args:
        height: rows of patches.
        width: columns of patches.
        dim: model width, a multiple of 4.
        base: the constant 10000 of the 1-D table.

    Examples:
        >>> table = sinusoidal_encoding_2d(2, 3, 4)     # patch (r, c) is row 3r + c
        >>> # [sin c, cos c, sin r, cos r] with dim/4 = 1 frequency
        >>> table
        tensor([[ 0.0000,  1.0000,  0.0000,  1.0000],
                [ 0.8415,  0.5403,  0.0000,  1.0000],
                [ 0.9093, -0.4161,  0.0000,  1.0000],
                [ 0.0000,  1.0000,  0.8415,  0.5403],
                [ 0.8415,  0.5403,  0.8415,  0.5403],
                [ 0.9093, -0.4161,  0.8415,  0.5403]])
    """
    height, width = _check_grid(height, width)
    dim = check_int("dim", dim, minimum=4, maximum=_MAX_WIDTH)
    if height * width * dim > MAX_ELEMENTS:
        raise ValueError(f"height * width * dim must be <= {MAX_ELEMENTS}, got {height} * {width} * {dim}")
    if dim % 4:
        raise ValueError(f"dim must be a multiple of 4 (half per axis, each half sines "
                         f"and cosines), got {dim}")
    base = check_float("base", base, positive=True)
    return _table_2d(height, width, dim, base).float()


# --8<-- [start:table]
def _sincos_1d(positions: Tensor, dim: int, base: float) -> Tensor:
    """MAE's 1-D block: ``dim/2`` sines, then ``dim/2`` cosines (not
    interleaved), float64."""
    frequencies = inverse_frequencies(dim, base)[None, :]
    angles = positions.to(torch.float64)[:, None] * frequencies
    return torch.cat((angles.sin(), angles.cos()), dim=-1)


def _table_2d(height: int, width: int, dim: int, base: float) -> Tensor:
    """The column's block, then the row's, for each patch in reading order,
    float64 ``[height * width, dim]``."""
    rows, cols = grid_positions(height, width).unbind(-1)  # [height * width]
    half = dim // 2
    return torch.cat((_sincos_1d(cols, half, base),
                      _sincos_1d(rows, half, base)), dim=-1)
# --8<-- [end:table]


# --8<-- [start:learned]
class LearnedPositionalEmbedding2D(nn.Module):
    """A trainable vector per cell of a ``height x width`` grid of patches,
    and its resizing.

    Args:
        height: rows of patches the table is trained at.
        width: columns of patches.
        dim: model width.
        cls_token: also hold a row for a class token placed before the
            patches; it belongs to no cell, so resizing leaves it as it is
            (as DeiT and MAE do).
        init_std: standard deviation of the normal initialisation (0.02, as
            in ViT and DeiT).

    ``encoding(height, width)`` is the table for a grid of that size: the
    trained one, or the trained grid resampled by bicubic interpolation
    (``align_corners=False``, as DeiT's and MAE's ``interpolate_pos_embed``).
    ``resize(height, width)`` makes that resampled grid the module's
    parameter, as before fine-tuning at a new resolution.
    ``forward(x, height, width)`` adds it to
    ``x [batch, (1 +) height * width, dim]``.

    Examples:
        >>> layer = LearnedPositionalEmbedding2D(4, 4, 8, cls_token=True)
        >>> layer.encoding(4, 4).shape, layer.encoding(6, 6).shape
        (torch.Size([17, 8]), torch.Size([37, 8]))
        >>> layer.resize(6, 6)
        >>> layer.grid.shape, (layer.height, layer.width)
        (torch.Size([36, 8]), (6, 6))
    """

    cls: nn.Parameter | None

    def __init__(self, height: int, width: int, dim: int, *,
                 cls_token: bool = False, init_std: float = 0.02) -> None:
        super().__init__()
        self.height, self.width = _check_grid(height, width)
        self.dim = check_int("dim", dim, minimum=1, maximum=_MAX_WIDTH)
        _check_size(self.height * self.width * self.dim)
        if not isinstance(cls_token, bool):
            raise TypeError(
                f"cls_token must be True or False, got {cls_token!r}")
        self.init_std = check_float("init_std", init_std, minimum=0.0)
        cells = self.height * self.width
        self.grid = nn.Parameter(
            torch.randn(cells, self.dim) * self.init_std)
        self.cls = (nn.Parameter(torch.randn(1, self.dim) * self.init_std)
                    if cls_token else None)

    def _interpolate(self, height: int, width: int) -> Tensor:
        # [cells, dim] -> [1, dim, rows, cols], bicubic in float64,
        # then back to [cells, dim]
        image = self.grid.to(torch.float64).T.reshape(
            1, self.dim, self.height, self.width)
        resized = functional.interpolate(image, size=(height, width),
                                         mode="bicubic", align_corners=False)
        return resized.reshape(self.dim, height * width).T.to(self.grid.dtype)

    def encoding(self, height: int | None = None,
                 width: int | None = None) -> Tensor:
        """The table for a ``height x width`` grid (default: the trained
        one), class row first."""
        height = self.height if height is None else height
        width = self.width if width is None else width
        height, width = _check_grid(height, width)
        _check_size(height * width * self.dim)
        same = (height, width) == (self.height, self.width)
        table = self.grid if same else self._interpolate(height, width)
        if self.cls is None:
            return table
        return torch.cat((self.cls, table), dim=0)

    def resize(self, height: int, width: int) -> None:
        """Replace the grid by its bicubic resampling to
        ``height x width``; the class row is kept."""
        height, width = _check_grid(height, width)
        _check_size(height * width * self.dim)
        with torch.no_grad():
            table = self._interpolate(height, width).clone()
        self.grid = nn.Parameter(table)
        self.height, self.width = height, width

    def forward(self, x: Tensor, height: int | None = None,
                width: int | None = None) -> Tensor:
        check_tensor("x", x, ndim=3, floating=True)
        check_size("x", x, -1, self.dim, expected_from="the module's dim")
        table = self.encoding(height, width)
        check_size("x", x, 1, table.shape[0],
                   expected_from="the grid's cells (plus the class row)")
        return x + table.to(x.dtype)
# --8<-- [end:learned]
