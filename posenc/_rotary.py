"""What the rotary methods share: the frequency ladder, the angle tables and the rotation kernel.

RoPE (`posenc.rope`), xPos (`posenc.xpos`) and N-D RoPE (`posenc.rope_nd`) all turn pairs of
features by angles ``position * theta``; they differ only in how they choose the angles (and
xPos in a scale on cos and sin). The tables are computed in float64 and the rotation in at least
float32. Private: the arguments are checked by the public functions that call these.
"""

from __future__ import annotations

import torch
from torch import Tensor

#: The pair layouts: ``"half"`` pairs (i, i + d/2), ``"interleaved"`` pairs (2i, 2i + 1).
LAYOUTS = ("half", "interleaved")
#: Per thread: one block of the half-layout rotation stays in cache between its passes.
_BLOCK_BYTES = 2**20


def frequency_ladder(dim: int, base: float) -> Tensor:
    """theta_i = base^(-2i/dim), i = 0 .. dim/2 - 1, in float64."""
    return base ** -(torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def compute_dtype(dtype: torch.dtype) -> torch.dtype:
    """float16/bfloat16 inputs are rotated in float32; float32 and float64 in their own dtype."""
    return dtype if dtype in (torch.float32, torch.float64) else torch.float32


def angle_table(positions: Tensor, theta: Tensor) -> tuple[Tensor, Tensor]:
    """cos and sin of positions * theta, ``[..., seq, dim/2]``, computed in float64."""
    angles = positions.to(torch.float64)[..., None] * theta.to(device=positions.device, dtype=torch.float64)
    return angles.cos(), angles.sin()


def _complex_view(t: Tensor) -> Tensor | None:
    """t [..., 2h] seen as h complex numbers (pairs 2i, 2i+1), without a copy; None if strides forbid it."""
    if t.stride(-1) != 1 or t.storage_offset() % 2 or any(s % 2 for s in t.stride()[:-1]):
        return None
    return torch.view_as_complex(t.unflatten(-1, (-1, 2)))


# --8<-- [start:rotate]
def rotate(x: Tensor, cos: Tensor, sin: Tensor, layout: str,
           out: Tensor) -> Tensor:
    """Write x with its pairs rotated (by the angles whose cos and sin are
    given) into ``out``.

    Interleaved pairs (2i, 2i+1) are read as complex numbers and multiplied
    by ``cos + i sin``: one fused pass over x. Half pairs (i, i + dim/2) are
    strided views of x and out: each half of ``out`` is written by one
    multiply, then updated in place by a fused multiply-add, block of
    positions by block, so that the update finds its operands still in
    cache. When a gradient is needed the same formula is evaluated out of
    place instead.
    """
    half = x.shape[-1] // 2
    if layout == "half":
        x1, x2, out1, out2 = (x[..., :half], x[..., half:],
                              out[..., :half], out[..., half:])
    else:
        x1, x2, out1, out2 = (x[..., 0::2], x[..., 1::2],
                              out[..., 0::2], out[..., 1::2])
    if torch.is_grad_enabled() and (x.requires_grad or cos.requires_grad
                                    or sin.requires_grad):
        # Training: autograd cannot differentiate writes into `out`, so
        # build the result out of place (same arithmetic, one extra
        # temporary per half).
        first, second = x1 * cos - x2 * sin, x2 * cos + x1 * sin
        if layout == "half":
            return torch.cat((first, second), dim=-1)
        return torch.stack((first, second), dim=-1).flatten(-2)
    if layout == "interleaved":
        x_c, out_c = _complex_view(x), _complex_view(out)
        if x_c is not None and out_c is not None:
            # (x1 + i x2)(cos + i sin)
            torch.mul(x_c, torch.complex(cos, sin), out=out_c)
            return out
    # a few positions at a time, so the second pass reads from cache
    for rows in _blocks(x, cos):
        c, s = ((cos[..., rows, :], sin[..., rows, :]) if cos.shape[-2] > 1
                else (cos, sin))
        torch.mul(x1[..., rows, :], c, out=out1[..., rows, :])
        # x1' = x1 cos - x2 sin
        out1[..., rows, :].addcmul_(x2[..., rows, :], s, value=-1.0)
        torch.mul(x2[..., rows, :], c, out=out2[..., rows, :])
        # x2' = x2 cos + x1 sin
        out2[..., rows, :].addcmul_(x1[..., rows, :], s)
    return out
# --8<-- [end:rotate]


def _blocks(x: Tensor, cos: Tensor) -> list[slice]:
    """Slices of the seq axis of x, each about _BLOCK_BYTES of x per thread (one slice for small inputs).

    Smaller blocks fit a faster cache but cost one dispatch of four ops each; measured on CPU,
    a megabyte per thread was the best trade (``make bench``).
    """
    seq = x.shape[-2]
    per_position = x.element_size() * (x.numel() // max(seq, 1))
    step = max(1, _BLOCK_BYTES * torch.get_num_threads() // max(per_position, 1))
    if x.ndim < 2 or seq <= step or cos.shape[-2] not in (1, seq):
        return [slice(None)]
    return [slice(start, start + step) for start in range(0, seq, step)]


def _broadcast_table(table: Tensor, x: Tensor) -> Tensor:
    """[seq, h] stays as is; [batch, seq, h] gets singleton axes for x's middle dims (e.g. heads)."""
    if table.ndim == 3:
        return table.reshape(table.shape[0], *([1] * (x.ndim - 3)), *table.shape[1:])
    return table


# --8<-- [start:partial]
def apply_table(x: Tensor, cos: Tensor, sin: Tensor, layout: str,
                rotary_dim: int | None = None) -> Tensor:
    """Rotate the first ``rotary_dim`` features of x (all if None) by the
    table; copy the rest as is."""
    dtype = compute_dtype(x.dtype)
    cos = _broadcast_table(cos.to(device=x.device, dtype=dtype), x)
    sin = _broadcast_table(sin.to(device=x.device, dtype=dtype), x)
    source = x if x.dtype == dtype else x.to(dtype)
    width = x.shape[-1] if rotary_dim is None else rotary_dim
    out = torch.empty_like(source)
    if width == x.shape[-1]:
        out = rotate(source, cos, sin, layout, out)
    elif torch.is_grad_enabled() and (source.requires_grad
                                      or cos.requires_grad
                                      or sin.requires_grad):
        turned = rotate(source[..., :width], cos, sin, layout,
                        out[..., :width])
        out = torch.cat((turned, source[..., width:]), dim=-1)
    else:  # partial rotary: the pass-through features are copied bit for bit
        rotate(source[..., :width], cos, sin, layout, out[..., :width])
        out[..., width:] = source[..., width:]
    return out if out.dtype == x.dtype else out.to(x.dtype)
# --8<-- [end:partial]
