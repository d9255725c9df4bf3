r"""The sinusoidal encoding of "Attention Is All You Need" (Vaswani et al., 2017, section 3.5).

Column \(2i\) of the table holds \(\sin(p / \text{base}^{2i/d})\) at position \(p\), with \(d\) =
``dim``, and column \(2i + 1\) the matching cosine. Angles are always computed in float64 and cast
at the end: in float32, ``pos * freq`` at large positions loses the digits that decide the sine (see
the Properties chapter).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor, nn

from posenc._checks import (
    MAX_EXACT_POSITION,
    check_bool,
    check_elements,
    check_even_dim,
    check_finite_result,
    check_float,
    check_float_dtype,
    check_int,
    check_position_ids,
    check_positions,
    check_size,
    check_size_int,
    check_tensor,
)

__all__ = ["SinusoidalPositionalEncoding", "inverse_frequencies", "offset_matrix", "sinusoidal_encoding"]


# --8<-- [start:encoding]
def inverse_frequencies(dim: int, base: float = 10000.0) -> Tensor:
    r"""Angular frequency of each (sin, cos) pair, \(\text{base}^{-2i/d}\)
    for \(i = 0, \dots, d/2 - 1\) (\(d\) = ``dim``), float64."""
    dim = check_even_dim("dim", dim)
    base = check_float("base", base, positive=True)
    exponents = torch.arange(0, dim, 2, dtype=torch.float64) / dim
    return base ** -exponents


def sinusoidal_encoding(
    positions: int | Tensor, dim: int, *, base: float = 10000.0,
    dtype: torch.dtype = torch.float32
) -> Tensor:
    r"""The sinusoidal position table, ``[len(positions), dim]``.

    Args:
        positions: an int ``n`` (positions 0 .. n-1) or a 1-D tensor of
            positions, which may be large or fractional.
        dim: model width, a positive even integer.
        base: the constant 10000 of the paper; wavelengths run from
            \(2\pi\) to nearly \(2\pi \cdot \text{base}\).
        dtype: dtype of the result; the angles are computed in float64
            whatever it is.

    Examples:
        >>> sinusoidal_encoding(2, 4)
        tensor([[0.0000, 1.0000, 0.0000, 1.0000],
                [0.8415, 0.5403, 0.0100, 0.9999]])
    """
    pos = check_positions("positions", positions)  # float64
    dtype = check_float_dtype("dtype", dtype)
    freqs = inverse_frequencies(dim, base)
    check_elements("the table (positions x dim)", pos.numel(),
                   2 * freqs.numel())
    angles = check_finite_result(pos[:, None] * freqs[None, :],
                                 "positions x frequencies")
    # [len, dim/2, (sin, cos)]
    table = torch.stack((angles.sin(), angles.cos()), dim=-1)
    # interleave: sin in even columns, cos in odd ones
    return table.flatten(-2).to(dtype)
# --8<-- [end:encoding]


def offset_matrix(k: int | float, dim: int, *, base: float = 10000.0,
                  dtype: torch.dtype = torch.float64) -> Tensor:
    r"""The matrix \(M_k\) with \(PE_{p+k} = M_k \, PE_p\) for every position \(p\).

    It is block diagonal: pair \(i\) is rotated by the angle \(k \cdot \text{base}^{-2i/d}\) (\(d\) =
    ``dim``). It depends only on the offset \(k\) and the fixed frequencies (nothing is learned), and
    \(k\) may be negative.

    Examples:
        >>> pe = sinusoidal_encoding(torch.tensor([3.0, 8.0]), 8, dtype=torch.float64)
        >>> torch.allclose(offset_matrix(5, 8) @ pe[0], pe[1])
        True
    """
    k = check_float("k", k)
    dim = check_even_dim("dim", dim)
    check_elements("the matrix (dim x dim)", dim, dim)
    angles = check_finite_result(k * inverse_frequencies(dim, base), "k x frequencies")
    return _rotation_blocks(angles).to(check_float_dtype("dtype", dtype))


# --8<-- [start:offset]
def _rotation_blocks(angles: Tensor) -> Tensor:
    """The block-diagonal matrix that turns each (sin, cos) pair by its
    angle, float64 ``[dim, dim]``."""
    cos, sin = angles.cos(), angles.sin()  # [dim/2] each
    # [sin(a+b), cos(a+b)] = [[cos b, sin b], [-sin b, cos b]] @ [sin a, cos a]
    # [dim/2, 2, 2]
    blocks = torch.stack((torch.stack((cos, sin), -1),
                          torch.stack((-sin, cos), -1)), -2)
    return torch.block_diag(*blocks)
# --8<-- [end:offset]


class SinusoidalPositionalEncoding(nn.Module):
    r"""Adds the sinusoidal encoding to a batch of embeddings ``[batch, seq, dim]``.

    Args:
        dim: model width (even).
        base: frequency base (10000 in the paper).
        max_len: positions to precompute into a table (default 2048). Longer inputs still work:
            the missing rows are computed on demand.
        dropout: dropout applied to the sum, as in the paper (0.1 there).
        scale_input: multiply the embeddings by \(\sqrt{\text{dim}}\) before adding, as in the paper's
            shared-embedding models.

    ``forward(x, offset=0)`` encodes positions offset .. offset + seq - 1; ``rows(positions)`` gives the
    rows of any integer positions (the interface it shares with
    `posenc.learned.LearnedPositionalEmbedding`), computed past ``max_len``.

    The precomputed table stays in float32 whatever ``.to()``, ``.half()`` or ``.bfloat16()``
    do to the module: those move it to the new device but never lower its precision, and the
    encoding is cast to the input's dtype only when it is added.

    Examples:
        >>> layer = SinusoidalPositionalEncoding(4)
        >>> layer(torch.zeros(1, 2, 4))
        tensor([[[0.0000, 1.0000, 0.0000, 1.0000],
                 [0.8415, 0.5403, 0.0100, 0.9999]]])
        >>> layer.bfloat16().table.dtype
        torch.float32
    """

    table: Tensor

    def __init__(
        self, dim: int, *, base: float = 10000.0, max_len: int | None = None, dropout: float = 0.0,
        scale_input: bool = False,
    ) -> None:
        super().__init__()
        self.dim = check_even_dim("dim", dim)
        self.base = check_float("base", base, positive=True)
        self.max_len = 2048 if max_len is None else check_size_int("max_len", max_len)
        check_elements("the table (max_len x dim)", self.max_len, self.dim)
        check_float("dropout", dropout, minimum=0.0, maximum=1.0)
        self.scale_input = check_bool("scale_input", scale_input)
        self.dropout = nn.Dropout(dropout)
        # A plain attribute, not a buffer: a buffer would be cast by .half()/.to(bfloat16), and
        # bfloat16 keeps 3 significant digits of a sine. _apply below moves it between devices
        # only. It is not in state_dict, so checkpoints do not depend on max_len.
        self.table = sinusoidal_encoding(self.max_len, self.dim, base=self.base)

    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> SinusoidalPositionalEncoding:
        # .to(), .cuda(), .half()... call fn on every parameter and buffer; learn the target
        # device from an empty float64 probe and move the table there in float32. The probe sits
        # where the table is: a cast alone (.half() after .cuda()) must leave the table on its device.
        target = fn(torch.empty(0, dtype=torch.float64, device=self.table.device))
        self.table = self.table.to(device=target.device)
        return super()._apply(fn, recurse)

    def encoding(self, seq_len: int, offset: int = 0) -> Tensor:
        """Rows offset .. offset + seq_len - 1 of the table (computed if past max_len), float32."""
        seq_len = check_size_int("seq_len", seq_len, minimum=0)
        offset = check_int("offset", offset, minimum=0, maximum=MAX_EXACT_POSITION - seq_len)
        end = offset + seq_len
        if end <= self.max_len:
            return self.table[offset:end]
        check_elements("the encoding (seq_len x dim)", seq_len, self.dim)
        positions = torch.arange(seq_len, dtype=torch.float64) + offset
        return sinusoidal_encoding(positions, self.dim, base=self.base).to(self.table.device)

    def rows(self, positions: Tensor) -> Tensor:
        """The rows ``[..., dim]`` of integer ``positions``, float32 (computed past ``max_len``)."""
        positions = check_position_ids("positions", positions)
        top = int(positions.max()) if positions.numel() else -1
        if top < self.max_len:
            return self.table[positions]
        flat = positions.flatten().to(torch.float64)
        rows = sinusoidal_encoding(flat, self.dim, base=self.base)
        return rows.view(*positions.shape, self.dim).to(self.table.device)

    @property
    def position_limit(self) -> None:
        """How many positions the encoding can answer for: no limit (None)."""
        return None

    def forward(self, x: Tensor, offset: int = 0) -> Tensor:
        check_tensor("x", x, ndim=3, floating=True)
        check_size("x", x, -1, self.dim, expected_from="the module's dim")
        offset = check_int("offset", offset, minimum=0, maximum=MAX_EXACT_POSITION - x.shape[1])
        if self.scale_input:
            x = x * math.sqrt(self.dim)
        return self.dropout(x + self.encoding(x.shape[1], offset).to(x.dtype))
