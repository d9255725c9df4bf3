r"""Rotary positions of image and video generators: FLUX's axis-split ids, 3-D video grids, and
what changes at a new resolution or length (per-axis NTK, RIFLEx).

The diffusion transformers of FLUX, Wan, HunyuanVideo and Cosmos rotate each head split into
axes: the first ``axes_dims[0]`` features turn with the token's id on axis 0 (time, or FLUX's
"index" axis), the next ``axes_dims[1]`` with its row, the last ``axes_dims[2]`` with its column.
Each axis is an ordinary 1-D RoPE on its own features with its own ladder
\(\theta_{a,k} = b_a^{-2k/d_a}\), \(k < d_a/2\), \(d_a\) = ``axes_dims[a]``. The rotation itself is
`posenc.rope_nd.apply_rope_nd` with ``frequencies="per_axis"``; this module adds the ids, the
per-axis bases and RIFLEx's change to one frequency.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import Tensor

from posenc._checks import (
    MAX_GRID_CELLS,
    check_choice,
    check_float,
    check_int,
    check_position_tensor,
    check_positions_match,
    check_tensor,
    is_integer,
)
from posenc._rotary import LAYOUTS, apply_table

__all__ = ["apply_axes_rope", "axes_frequencies", "flux_position_ids", "ntk_axis_factor", "riflex_frequencies",
           "riflex_intrinsic_index", "video_axes_dims"]

_MAX_FEATURES = 1 << 16  # a bound on the rotated width of one head


def _check_axes_dims(axes_dims: object, name: str = "axes_dims") -> tuple[int, ...]:
    if isinstance(axes_dims, (str, bytes)) or not isinstance(axes_dims, Sequence) or len(axes_dims) == 0:
        raise TypeError(f"{name} must be a non-empty list or tuple of positive even integers (features per axis), "
                        f"got {axes_dims!r}")
    for value in axes_dims:
        if not is_integer(value) or int(value) < 2 or int(value) % 2:
            raise ValueError(f"{name} must hold positive even integers (features per axis), got {list(axes_dims)!r}")
    dims = tuple(int(v) for v in axes_dims)
    if sum(dims) > _MAX_FEATURES:
        raise ValueError(f"{name} must sum to at most {_MAX_FEATURES} features, got {sum(dims)}")
    return dims


def flux_position_ids(text_tokens: int, height: int, width: int, *, version: int = 1) -> Tensor:
    """FLUX's position ids of a text prompt followed by an image, text first.

    FLUX.1 (``version=1``, ``[text_tokens + height * width, 3]``): text tokens get (0, 0, 0),
    every one of them; the image patch at row r, column c of the packed latent grid gets
    (0, r, c), row-major, as diffusers' ``FluxPipeline`` builds ``text_ids`` (zeros) and
    ``_prepare_latent_image_ids`` and ``FluxTransformer2DModel`` concatenates them. The first
    axis is 0 for the generated image (FLUX.1 Kontext marks a reference image with 1 there).

    FLUX.2 (``version=2``, ``[..., 4]``, axes (time, row, column, text)): text token i gets
    (0, 0, 0, i) and the patch (0, r, c, 0) (``Flux2Pipeline._prepare_text_ids`` and
    ``_prepare_latent_ids``): its text is rotated, on an axis of its own.

    Args:
        text_tokens: length of the prompt (512 for FLUX.1-dev's T5), >= 0.
        height: rows of the packed latent grid (image height / 16 for FLUX.1).
        width: columns of the packed latent grid.
        version: 1 (FLUX.1) or 2 (FLUX.2).

    Examples:
        >>> flux_position_ids(2, 2, 3).T
        tensor([[0, 0, 0, 0, 0, 0, 0, 0],
                [0, 0, 0, 0, 0, 1, 1, 1],
                [0, 0, 0, 1, 2, 0, 1, 2]])
        >>> flux_position_ids(2, 1, 2, version=2).T
        tensor([[0, 0, 0, 0],
                [0, 0, 0, 0],
                [0, 0, 0, 1],
                [0, 1, 0, 0]])
    """
    text_tokens = check_int("text_tokens", text_tokens, minimum=0, maximum=MAX_GRID_CELLS)
    height = check_int("height", height, minimum=1, maximum=MAX_GRID_CELLS)
    width = check_int("width", width, minimum=1, maximum=MAX_GRID_CELLS)
    if text_tokens + height * width > MAX_GRID_CELLS:
        raise ValueError(f"text_tokens + height * width must be <= {MAX_GRID_CELLS}, "
                         f"got {text_tokens} + {height} * {width}")
    version = check_int("version", version, minimum=1, maximum=2)
    rows, cols = torch.meshgrid(torch.arange(height), torch.arange(width), indexing="ij")
    zeros = torch.zeros_like(rows)
    if version == 1:
        image = torch.stack((zeros, rows, cols), dim=-1).reshape(-1, 3)  # (0, r, c)
        return torch.cat((torch.zeros(text_tokens, 3, dtype=torch.long), image))
    image = torch.stack((zeros, rows, cols, zeros), dim=-1).reshape(-1, 4)  # (0, r, c, 0)
    text = torch.zeros(text_tokens, 4, dtype=torch.long)
    text[:, 3] = torch.arange(text_tokens)  # (0, 0, 0, i)
    return torch.cat((text, image))


def video_axes_dims(head_dim: int) -> tuple[int, int, int]:
    """Wan's and Cosmos's split of a head into (time, height, width) features.

    Height and width get ``2 * (head_dim // 6)`` each, time the rest (diffusers'
    ``WanRotaryPosEmbed`` and ``CosmosRotaryPosEmbed``). HunyuanVideo and FLUX read theirs
    from the config instead (``rope_axes_dim`` / ``axes_dims_rope``, (16, 56, 56)).

    Examples:
        >>> video_axes_dims(128)                # Wan 2.1: 40 heads of 128
        (44, 42, 42)
    """
    head_dim = check_int("head_dim", head_dim, minimum=6, maximum=_MAX_FEATURES)
    if head_dim % 2:
        raise ValueError(f"head_dim must be even (features turn in pairs), got {head_dim}")
    spatial = 2 * (head_dim // 6)
    return head_dim - 2 * spatial, spatial, spatial


def ntk_axis_factor(scale: float, dim: int) -> float:
    r"""The NTK-aware factor on one axis's base for a ``scale``-times longer axis: \(s^{d/(d-2)}\).

    With the base multiplied by it, the slowest pair of that axis turns ``scale`` times slower
    while the fastest keeps its speed (Cosmos's ``rope_scale``; bloc97's NTK-aware rule per axis).

    Examples:
        >>> round(ntk_axis_factor(2.0, 16), 4)
        2.2082
    """
    scale = check_float("scale", scale, positive=True, maximum=1e6)
    dim = check_int("dim", dim, minimum=4, maximum=_MAX_FEATURES)
    return scale ** (dim / (dim - 2))


def axes_frequencies(axes_dims: Sequence[int], *, base: float = 10000.0,
                     ntk_factors: Sequence[float] | None = None) -> Tensor:
    r"""The rotation speed of every pair of a head split into axes, float64 ``[sum(axes_dims) / 2]``.

    Axis a owns ``axes_dims[a] / 2`` consecutive pairs, turning at
    \((b f_a)^{-2k/d_a}\) for its k-th pair, \(b\) = ``base``, \(f_a\) = ``ntk_factors[a]`` (1 by
    default), \(d_a\) = ``axes_dims[a]``: diffusers' ``get_1d_rotary_pos_embed(d_a, ..., theta=b,
    ntk_factor=f_a)`` per axis, concatenated.

    Examples:
        >>> axes_frequencies((2, 4), base=100.0)
        tensor([1.0000, 1.0000, 0.1000], dtype=torch.float64)
    """
    dims = _check_axes_dims(axes_dims)
    base = check_float("base", base, positive=True)
    if base == 1.0:
        raise ValueError("base must be > 0 and != 1 (every pair would turn at the same speed), got 1.0")
    if ntk_factors is None:
        factors = [1.0] * len(dims)
    else:
        if isinstance(ntk_factors, (str, bytes)) or not isinstance(ntk_factors, Sequence):
            raise TypeError(f"ntk_factors must be a list of positive numbers, one per axis, got {ntk_factors!r}")
        if len(ntk_factors) != len(dims):
            raise ValueError(f"ntk_factors must have one entry per axis ({len(dims)} in axes_dims={list(dims)}), "
                             f"got {len(ntk_factors)}")
        factors = [check_float(f"ntk_factors[{i}]", f, positive=True, maximum=1e12) for i, f in enumerate(ntk_factors)]
    ladders = [(base * f) ** -(torch.arange(0, d, 2, dtype=torch.float64) / d) for d, f in zip(dims, factors)]
    return torch.cat(ladders)


def _check_speeds(theta: object) -> Tensor:
    theta = check_tensor("theta", theta, ndim=1, floating=True, finite=True)
    if theta.numel() == 0 or bool((theta <= 0).any()):
        raise ValueError(f"theta must be a non-empty 1-D tensor of positive speeds (radians per position), "
                         f"got shape {tuple(theta.shape)}")
    return theta


def riflex_intrinsic_index(theta: Tensor, repetition: float) -> int:
    r"""RIFLEx's intrinsic frequency: the pair whose period \(2\pi/\theta_j\) is closest to ``repetition``.

    ``repetition`` is the position (latent frame) where a video extended without any change
    first repeats its start; Zhao et al. read it from samples of the model (near latent frame 48
    for HunyuanVideo, the example of ``identify_k`` in the authors' ``riflex_utils.py``, which
    gives their 1-based k = 4, period 50). Their code rounds each period to a whole frame before
    comparing; this compares the exact periods. Returns a 0-based index.

    Examples:
        >>> theta = axes_frequencies((16,), base=256.0)      # HunyuanVideo's time axis
        >>> riflex_intrinsic_index(theta, 48)
        3
    """
    theta = _check_speeds(theta)
    repetition = check_float("repetition", repetition, positive=True, maximum=1e12)
    periods = 2 * math.pi / theta.to(torch.float64)
    return int((periods - repetition).abs().argmin())


def riflex_frequencies(theta: Tensor, *, index: int, length: float, margin: float = 0.9) -> Tensor:
    r"""``theta`` with its intrinsic pair slowed so that ``length`` positions stay inside one period.

    RIFLEx (Zhao et al. 2025) sets \(\theta_k' = \text{margin} \cdot 2\pi / L'\) for the intrinsic
    pair k (`riflex_intrinsic_index`), \(L'\) = ``length``, the extended number of positions on
    that axis; every other pair is left as it is. The authors' code takes ``margin`` = 0.9 (90 %
    of a period, against a repetition at the very end); 1.0 is the bare rule of their Eq. (8).
    A pair that already turns slower than that is left unchanged (lowering it is the point).

    Examples:
        >>> theta = axes_frequencies((16,), base=256.0)
        >>> new = riflex_frequencies(theta, index=3, length=98)
        >>> (round(2 * math.pi / float(theta[3]), 1),
        ...  round(2 * math.pi / float(new[3]), 1))
        (50.3, 108.9)
    """
    theta = _check_speeds(theta)
    index = check_int("index", index, minimum=0, maximum=theta.numel() - 1)
    length = check_float("length", length, positive=True, maximum=1e12)
    margin = check_float("margin", margin, positive=True, maximum=1.0)
    out = theta.to(torch.float64).clone()
    out[index] = min(float(out[index]), margin * 2 * math.pi / length)
    return out


def apply_axes_rope(x: Tensor, positions: Tensor, *, axes_dims: Sequence[int], theta: Tensor | None = None,
                    base: float = 10000.0, layout: str = "interleaved") -> Tensor:
    """Rotate ``x [..., seq, dim]``: the features of axis a by ``positions[..., a]`` times their speeds.

    Args:
        x: queries or keys, e.g. ``[batch, heads, seq, head_dim]``; features past ``sum(axes_dims)``
            are passed through unrotated.
        positions: one id per axis, ``[seq, n_axes]`` or ``[batch, seq, n_axes]`` (`flux_position_ids`,
            `posenc.rope_nd.grid_positions`), finite.
        axes_dims: features per axis, even, in order (FLUX: (16, 56, 56); `video_axes_dims`).
        theta: the speed of each pair, ``[sum(axes_dims) / 2]`` (`axes_frequencies`,
            `riflex_frequencies`); default ``axes_frequencies(axes_dims, base=base)``.
        base: the base when ``theta`` is not given (FLUX and Wan 10000, HunyuanVideo 256).
        layout: ``"interleaved"`` pairs (2i, 2i+1), as FLUX, Wan and HunyuanVideo (diffusers'
            ``repeat_interleave_real=True``); ``"half"`` pairs each axis block's features with
            those ``sum(axes_dims) / 2`` later (Cosmos).

    Examples:
        >>> x = torch.ones(2, 4)               # 2 tokens, axes of 2 features each
        >>> apply_axes_rope(x, torch.tensor([[0, 0], [0, 1]]), axes_dims=(2, 2))
        tensor([[ 1.0000,  1.0000,  1.0000,  1.0000],
                [ 1.0000,  1.0000, -0.3012,  1.3818]])
    """
    x = check_tensor("x", x, min_ndim=2, floating=True)
    dims = _check_axes_dims(axes_dims)
    if sum(dims) > x.shape[-1]:
        raise ValueError(f"axes_dims must sum to at most the last dimension of x ({x.shape[-1]}), "
                         f"got {list(dims)} (sum {sum(dims)})")
    layout = check_choice("layout", layout, LAYOUTS)
    if theta is None:
        theta = axes_frequencies(dims, base=base)
    theta = check_tensor("theta", theta, ndim=1, floating=True, finite=True)
    if theta.numel() != sum(dims) // 2:
        raise ValueError(f"theta must have sum(axes_dims) / 2 = {sum(dims) // 2} entries, got {theta.numel()}")
    pos = check_positions_match("positions", check_position_tensor("positions", positions, ndim=(2, 3)), "x", x,
                                coordinates=len(dims))
    owner = torch.repeat_interleave(torch.arange(len(dims)), torch.tensor(dims) // 2).to(pos.device)
    angles = pos.to(torch.float64)[..., owner] * theta.to(device=pos.device, dtype=torch.float64)  # [..., seq, pairs]
    return apply_table(x, angles.cos(), angles.sin(), layout, rotary_dim=sum(dims))
