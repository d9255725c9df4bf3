"""A tiny vision transformer that classifies images with any of posenc's 2-D positions, or none.

`TinyViT` cuts an image into square patches, reads them row after row, and places them by one of
`VIT_POSITIONS`: the learned grid or the sine-cosine table of `posenc.vision`, added to the patch
embeddings; or axial RoPE (Heo et al., 2024), RoPE-Mixed's learned directions or DINOv3's
normalised patch centres (`posenc.rope_images`), turning queries and keys in every layer. It
takes images of other sizes than the one it is built for, which is what
``posenc.experiments.vit_resolution`` measures.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import torch
from torch import Tensor, nn

from posenc._checks import MAX_ELEMENTS, MAX_GRID_CELLS, check_choice, check_float, check_int, check_size, check_tensor
from posenc._vit_rotary import EXTENSIONS, MixedRotary, axial_rotary, normalised_rotary
from posenc.attention import SelfAttention
from posenc.rope_images import RopeMixed
from posenc.rope_nd import grid_positions
from posenc.vision import _MAX_WIDTH, LearnedPositionalEmbedding2D, sinusoidal_encoding_2d

__all__ = ["VIT_POSITIONS", "TinyViT"]

#: The ``position`` values of `TinyViT`.
VIT_POSITIONS = ("none", "learned", "sinusoidal", "rope", "rope-mixed", "rope-normalized")


class _EncoderBlock(nn.Module):
    """One pre-norm encoder block (no causal mask): x + attention(norm(x)), then x + mlp(norm(x))."""

    def __init__(self, dim: int, num_heads: int, hidden: int) -> None:
        super().__init__()
        self.attention_norm = nn.LayerNorm(dim)
        self.attention = SelfAttention(dim, num_heads)
        self.mlp_norm = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))

    def forward(self, x: Tensor, rotary: Callable[[Tensor, Tensor], tuple[Tensor, Tensor]] | None) -> Tensor:
        attended, _ = self.attention(self.attention_norm(x), rotary=rotary)
        x = x + attended
        return x + self.mlp(self.mlp_norm(x))


# --8<-- [start:vit]
class TinyViT(nn.Module):
    """A small vision transformer classifier,
    ``[batch, channels, H, W] images -> [batch, classes] logits``.

    Args:
        image_size: the (height, width) in pixels it is built for (an int
            for a square); this sets the grid of the learned table. Other
            sizes are accepted at run time, see below.
        patch_size: side of the square patches; the image sides must be
            multiples of it.
        num_classes: number of classes.
        dim: model width.
        num_heads: attention heads (``dim`` divisible by it; for ``"rope"``
            the head width must be a multiple of 4: half of its pairs for
            the row, half for the column).
        num_layers: encoder blocks (pre-norm, bidirectional attention).
        position: ``"none"``, ``"learned"``
            (`LearnedPositionalEmbedding2D`), ``"sinusoidal"``
            (`sinusoidal_encoding_2d`), ``"rope"`` (axial 2-D RoPE at patch
            indices, as `posenc.rope_nd.apply_rope_nd` with
            ``frequencies="per_axis"``, in every layer), ``"rope-mixed"``
            (`posenc.rope_images.RopeMixed`, learned, one per layer; base
            10 as the paper unless ``rope_base`` says otherwise) or
            ``"rope-normalized"`` (DINOv3's patch centres in [-1, 1],
            `posenc.rope_images.apply_dinov3_rope`).
        channels: colour channels of the images.
        mlp_ratio: width of the feed-forward layer, as a multiple of
            ``dim``.
        rope_base: the RoPE base (Heo et al. use 100 for ViTs).
        rope_rescale: for ``"rope"`` on a grid other than the trained one,
            multiply the coordinates by (trained rows / rows, trained
            columns / columns), so that they span the trained range, as a
            resampled learned grid does; False keeps the patch indices.
        rope_extension: for ``"rope"`` on a grid larger than the trained
            one, change each longer axis's speeds at test time:
            ``"none"``, ``"ntk"`` (per-axis NTK,
            `posenc.rope_video.ntk_axis_factor` with the ratio of the
            sides) or ``"riflex"`` (`posenc.rope_video.riflex_frequencies`,
            the intrinsic pair the one whose period is closest to the
            trained side).
        coordinate_jitter: for ``"rope-normalized"``, DINOv3's per-axis
            stretch drawn in training
            (`posenc.rope_images.augment_patch_coordinates`), one draw per
            forward call in training mode; None leaves it out.
        coordinate_rescale: likewise, DINOv3's scale of both axes drawn in
            training (2.0 in its released models); None leaves it out.

    Patches are embedded by a strided convolution, as in ViT; the class is
    read from the mean of the patch outputs (no class token). An image of
    another size gives another grid: the sine-cosine table and RoPE simply
    take the new coordinates, the learned table is resampled (bicubic) to
    the new grid. Images are cast to the dtype of the model's weights.

    Examples:
        >>> model = TinyViT(8, patch_size=2, num_classes=10, dim=16,
        ...                 num_heads=2, num_layers=1, position="rope")
        >>> small, large = torch.zeros(3, 1, 8, 8), torch.zeros(3, 1, 12, 16)
        >>> model(small).shape, model(large).shape
        (torch.Size([3, 10]), torch.Size([3, 10]))
    """

    def __init__(self, image_size: int | tuple[int, int], patch_size: int,
                 num_classes: int, dim: int, num_heads: int, num_layers: int,
                 *, position: str, channels: int = 1, mlp_ratio: int = 2,
                 rope_base: float | None = None, rope_rescale: bool = False,
                 rope_extension: str = "none",
                 coordinate_jitter: float | None = None,
                 coordinate_rescale: float | None = None) -> None:
        super().__init__()
        self.patch_size, height, width = _image_shape(image_size, patch_size)
        self.grid = (height // self.patch_size, width // self.patch_size)
        self.num_classes = check_int("num_classes", num_classes,
                                     minimum=1, maximum=MAX_GRID_CELLS)
        self.dim = check_int("dim", dim, minimum=1, maximum=_MAX_WIDTH)
        self.num_heads = check_int("num_heads", num_heads, minimum=1)
        self.num_layers = check_int("num_layers", num_layers,
                                    minimum=1, maximum=1024)
        self.position = check_choice("position", position, VIT_POSITIONS)
        self.channels = check_int("channels", channels,
                                  minimum=1, maximum=1024)
        mlp_ratio = check_int("mlp_ratio", mlp_ratio, minimum=1, maximum=64)
        self._check_weights(mlp_ratio, pixels=height * width)
        # as Heo et al.'s mixed and axial ViTs
        default_base = 10.0 if self.position == "rope-mixed" else 100.0
        self.rope_base = _rope_base(
            default_base if rope_base is None else rope_base)
        if not isinstance(rope_rescale, bool):
            raise TypeError("rope_rescale must be True or False, "
                            f"got {rope_rescale!r}")
        self.rope_rescale = rope_rescale
        self.rope_extension = check_choice("rope_extension", rope_extension,
                                           EXTENSIONS)
        self.coordinate_jitter = _stretch("coordinate_jitter",
                                          coordinate_jitter)
        self.coordinate_rescale = _stretch("coordinate_rescale",
                                           coordinate_rescale)
        self.head_dim = _head_dim(self.position, self.dim, self.num_heads)
        self.patches = nn.Conv2d(self.channels, self.dim,
                                 kernel_size=self.patch_size,
                                 stride=self.patch_size)
        self.learned = (LearnedPositionalEmbedding2D(*self.grid, self.dim)
                        if position == "learned" else None)
        self.blocks = nn.ModuleList(
            _EncoderBlock(self.dim, self.num_heads, mlp_ratio * self.dim)
            for _ in range(self.num_layers))
        self.mixed = nn.ModuleList(
            RopeMixed(self.head_dim, self.num_heads, base=self.rope_base)
            for _ in range(self.num_layers)
        ) if position == "rope-mixed" else None
        self.norm = nn.LayerNorm(self.dim)
        self.head = nn.Linear(self.dim, self.num_classes)

    def forward(self, images: Tensor) -> Tensor:
        check_tensor("images", images, ndim=4, floating=True)
        check_size("images", images, 1, self.channels,
                   expected_from="the model's channels")
        rows, cols = self._patch_grid(images)
        # the model computes in its own dtype, whatever the images'
        weight = self.patches.weight
        x = self.patches(images.to(weight.dtype))
        x = x.flatten(2).transpose(1, 2)  # [batch, rows * cols, dim]
        if self.learned is not None:  # the trained grid, resampled if needed
            x = self.learned(x, rows, cols)
        elif self.position == "sinusoidal":  # the table at the new grid
            table = sinusoidal_encoding_2d(rows, cols, self.dim)
            x = x + table.to(device=x.device, dtype=x.dtype)
        rotaries = self._rotaries(rows, cols, x.device)
        for block, rotary in zip(self.blocks, rotaries):
            x = block(x, rotary)
        return self.head(self.norm(x.mean(dim=1)))

    def _check_weights(self, mlp_ratio: int, *, pixels: int) -> None:
        """Refuse a model of more than about MAX_ELEMENTS weights (counted
        from the sizes, before any is made)."""
        inputs = (self.channels * self.patch_size ** 2 + self.num_classes
                  + pixels)
        weights = (self.num_layers * (4 + 2 * mlp_ratio) * self.dim ** 2
                   + inputs * self.dim)
        if weights > MAX_ELEMENTS:
            raise ValueError(
                f"the model would have about {weights} weights, more than "
                f"the {MAX_ELEMENTS} allowed: reduce dim={self.dim}, "
                f"num_layers={self.num_layers}, mlp_ratio={mlp_ratio}, "
                f"num_classes={self.num_classes}, channels={self.channels} "
                f"or patch_size={self.patch_size}")

    def _patch_grid(self, images: Tensor) -> tuple[int, int]:
        """The ``(rows, cols)`` of patches of ``images``, checked."""
        side_h, side_w = images.shape[-2:]
        if (side_h % self.patch_size or side_w % self.patch_size
                or min(side_h, side_w) == 0):
            raise ValueError(
                "images must have height and width that are positive "
                f"multiples of patch_size={self.patch_size}, "
                f"got shape {tuple(images.shape)}")
        rows, cols = side_h // self.patch_size, side_w // self.patch_size
        if rows * cols > MAX_GRID_CELLS:
            raise ValueError(
                f"images give {rows * cols} patches, more than "
                f"{MAX_GRID_CELLS}: got shape {tuple(images.shape)}")
        return rows, cols

    def _rotaries(self, rows: int, cols: int,
                  device: torch.device) -> list[Any]:
        """The ``rotary`` hook of each block on a ``rows x cols`` grid
        (None for an additive method)."""
        if self.position == "rope":  # q and k by (row, column), every layer
            rotary: Any = axial_rotary(
                rows, cols, head_dim=self.head_dim, base=self.rope_base,
                trained=self.grid, rescale=self.rope_rescale,
                extension=self.rope_extension, device=device)
        elif self.position == "rope-normalized":
            rotary = normalised_rotary(
                rows, cols, head_dim=self.head_dim, base=self.rope_base,
                training=self.training, jitter=self.coordinate_jitter,
                rescale=self.coordinate_rescale, device=device)
        elif self.mixed is not None:
            cells = grid_positions(rows, cols).to(device)
            # self.mixed is a ModuleList of RopeMixed
            return [MixedRotary(cast(RopeMixed, layer), cells)
                    for layer in self.mixed]
        else:
            rotary = None
        return [rotary] * self.num_layers
# --8<-- [end:vit]


# The checks of TinyViT's arguments, done once, at the door.


def _image_shape(image_size: int | tuple[int, int],
                 patch_size: int) -> tuple[int, int, int]:
    """``(patch_size, height, width)``: the sides whole multiples of the
    patch side, and at most MAX_GRID_CELLS patches."""
    size = (image_size if isinstance(image_size, tuple)
            else (image_size, image_size))
    if len(size) != 2:
        raise ValueError("image_size must be an int or a (height, width) "
                         f"tuple, got {image_size!r}")
    patch = check_int("patch_size", patch_size, minimum=1, maximum=1024)
    height = check_int("image_size", size[0], minimum=patch, maximum=1 << 16)
    width = check_int("image_size", size[1], minimum=patch, maximum=1 << 16)
    if height % patch or width % patch:
        raise ValueError("image_size must be a multiple of "
                         f"patch_size={patch_size}, got {image_size!r}")
    cells = (height // patch) * (width // patch)
    if cells > MAX_GRID_CELLS:
        raise ValueError(f"image_size gives {cells} patches, "
                         f"more than {MAX_GRID_CELLS}")
    return patch, height, width


def _rope_base(base: float) -> float:
    base = check_float("rope_base", base, positive=True)
    if base == 1.0:
        raise ValueError("rope_base must be > 0 and != 1 (every pair "
                         "would turn at the same speed), got 1.0")
    return base


def _stretch(name: str, value: float | None) -> float | None:
    """DINOv3's coordinate jitter or rescale: None, or a factor >= 1."""
    if value is None:
        return None
    return check_float(name, value, minimum=1.0, maximum=1e3)


def _head_dim(position: str, dim: int, num_heads: int) -> int:
    """The head width, which RoPE splits between rows and columns."""
    if dim % num_heads:
        raise ValueError("dim must be divisible by num_heads, "
                         f"got dim={dim}, num_heads={num_heads}")
    head_dim = dim // num_heads
    if position.startswith("rope") and head_dim % 4:
        raise ValueError(
            f"position={position!r} needs a head width "
            f"dim // num_heads that is a multiple of 4, got {head_dim}")
    if position == "sinusoidal" and dim % 4:
        raise ValueError("position='sinusoidal' needs dim to be a "
                         f"multiple of 4, got {dim}")
    return head_dim
