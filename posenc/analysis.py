"""Small pure functions that measure position codes: similarities, collisions, wavelengths.

A *code table* is a tensor ``[len, width]`` with one row per position, as returned by
`posenc.sinusoidal_encoding` or the functions of `posenc.naive`. Everything here is
computed in float64, whatever the dtype of the input.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
from torch import Tensor

from posenc._checks import (
    MAX_EXACT_POSITION,
    check_elements,
    check_even_dim,
    check_finite_result,
    check_float,
    check_int,
    check_positions,
    check_real_tensor,
)
from posenc.sinusoidal import inverse_frequencies

__all__ = ["Collision", "binary_code", "cosine_similarity_matrix", "float32_angle_error", "nearest_collision",
           "pairwise_distances", "rising_steps", "shift_map_residual", "similarity_to_position", "wavelengths"]

# cdist's default matrix-product shortcut (|a|² + |b|² - 2ab) loses the small gaps this module
# is about (1e-7 between two single-sine codes); compute differences directly.
_EXACT = "donot_use_mm_for_euclid_dist"


def _codes(name: str, value: object, *, min_rows: int = 1) -> Tensor:
    table = check_real_tensor(name, value, ndim=2, finite=True)
    if table.shape[0] < min_rows:
        raise ValueError(f"{name} must have at least {min_rows} rows (positions), got shape {tuple(table.shape)}")
    return table.to(torch.float64)


def _scaled(table: Tensor) -> tuple[Tensor, float]:
    """``table / s`` and ``s``, with s the largest magnitude: no overflow or underflow in norms."""
    scale = float(table.abs().max()) if table.numel() else 0.0
    return (table / scale, scale) if scale > 0 else (table, 1.0)


def cosine_similarity_matrix(codes: Tensor) -> Tensor:
    """``[len, len]`` matrix of cosine similarities between every pair of rows.

    Examples:
        >>> cosine_similarity_matrix(torch.tensor([[1.0, 0.0], [1.0, 1.0]]))
        tensor([[1.0000, 0.7071],
                [0.7071, 1.0000]], dtype=torch.float64)
    """
    table = _codes("codes", codes)
    check_elements("the matrix of codes (len x len)", table.shape[0], table.shape[0])
    if table.shape[1] == 0:
        raise ValueError(f"codes must have at least one column (its rows are all-zero), got shape {tuple(table.shape)}")
    table = table / table.abs().amax(dim=1, keepdim=True).clamp(min=torch.finfo(torch.float64).tiny)
    norms = table.norm(dim=1)
    if bool((norms == 0).any()):
        raise ValueError("codes must not contain an all-zero row (its cosine similarity is undefined)")
    unit = table / norms[:, None]
    return unit @ unit.T


def similarity_to_position(codes: Tensor, reference: int = 0) -> Tensor:
    """Cosine similarity of every row to row ``reference``, ``[len]``.

    For the sinusoidal encoding this depends only on the offset ``p - reference``, so with
    ``reference=0`` entry k is "similarity against offset k".
    """
    table = _codes("codes", codes)
    reference = check_int("reference", reference, minimum=0, maximum=table.shape[0] - 1)
    return cosine_similarity_matrix(table)[reference]


def pairwise_distances(codes: Tensor) -> Tensor:
    """``[len, len]`` Euclidean distances between every pair of rows."""
    table = _codes("codes", codes)
    check_elements("the matrix of codes (len x len)", table.shape[0], table.shape[0])
    unit, scale = _scaled(table)
    return torch.cdist(unit, unit, compute_mode=_EXACT) * scale


class Collision(NamedTuple):
    """The two positions whose codes are closest, and the distance between them."""

    first: int
    second: int
    distance: float


def nearest_collision(codes: Tensor) -> Collision:
    """The pair of distinct rows ``first < second`` with the smallest Euclidean distance.

    A distance of 0 means two positions share a code; a tiny distance means they are hard to tell
    apart. Works in blocks of rows, so a few thousand positions are fine.

    Examples:
        >>> nearest_collision(torch.tensor([[0.0], [5.0], [0.5], [9.0]]))
        Collision(first=0, second=2, distance=0.5)
    """
    table, scale = _scaled(_codes("codes", codes, min_rows=2))
    n = table.shape[0]
    best = Collision(0, 1, math.inf)
    block = 1024
    for start in range(0, n, block):
        rows = table[start:start + block]
        dist = torch.cdist(rows, table, compute_mode=_EXACT)
        index = torch.arange(rows.shape[0])[:, None] + start
        dist[torch.arange(n)[None, :] <= index] = math.inf  # keep only pairs first < second
        flat = int(dist.argmin())
        value = float(dist.flatten()[flat])
        if value < best.distance:
            best = Collision(start + flat // n, flat % n, value)
    return best._replace(distance=best.distance * scale)


def wavelengths(dim: int, base: float = 10000.0) -> Tensor:
    r"""Wavelength (in positions) of each (sin, cos) pair, \(2\pi \cdot \text{base}^{2i/d}\), float64 ``[dim/2]``.

    With \(d\) = ``dim``, the shortest is \(2\pi\); the longest is \(2\pi \cdot \text{base}^{(d-2)/d}\), a
    little less than \(2\pi \cdot \text{base}\).

    Examples:
        >>> wavelengths(4, base=100.0)
        tensor([ 6.2832, 62.8319], dtype=torch.float64)
    """
    return 2 * math.pi / inverse_frequencies(dim, base)


def rising_steps(values: Tensor, *, tolerance: float = 1e-12) -> list[int]:
    """The indices k >= 1 where ``values[k] > values[k-1] + tolerance``.

    An empty list means the sequence never increases (it is non-increasing); used to check
    whether a similarity really decays monotonically with the offset.

    Examples:
        >>> rising_steps(torch.tensor([1.0, 0.8, 0.9, 0.5]))
        [2]
    """
    series = check_real_tensor("values", values, ndim=1, finite=True).to(torch.float64)
    tolerance = check_float("tolerance", tolerance, minimum=0.0)
    steps = torch.nonzero(series[1:] > series[:-1] + tolerance).flatten() + 1
    return [int(k) for k in steps]


def shift_map_residual(codes: Tensor, offset: int) -> float:
    r"""How well one fixed linear map sends every code to the code ``offset`` positions later.

    With \(k\) = ``offset``, \(S\) = ``codes[:-k]`` and \(T\) = ``codes[k:]``, fits \(A\) by least
    squares in \(S A \approx T\) (each code \(p\) mapped to code \(p + k\)) and returns the relative
    residual \(\lVert S A - T \rVert / \lVert T \rVert\) (Frobenius norms). Near 0 (rounding only)
    means such a map exists. If every target code is zero, \(A = 0\) is such a map and the result
    is 0.0.
    """
    table = _codes("codes", codes)
    offset = check_int("offset", offset, minimum=1, maximum=table.shape[0] - 1)
    table, _ = _scaled(table)  # the relative residual does not depend on the scale
    source, target = table[:-offset], table[offset:]
    if not bool(target.any()):
        return 0.0
    solution = torch.linalg.lstsq(source, target, driver="gelsd").solution
    return float((source @ solution - target).norm() / target.norm())


def float32_angle_error(positions: int | Tensor, dim: int, *, base: float = 10000.0) -> Tensor:
    """Largest error per position of a table whose angles are computed in float32, ``[len]``.

    The float32 recipe of many tutorials: ``sin(float32(pos) * float32(freq))``. The reference is
    the same formula in float64. The error grows with the position, because float32 keeps only
    about 7 significant digits of the angle ``pos * freq``.
    """
    pos = check_positions("positions", positions)
    dim = check_even_dim("dim", dim)
    if bool((pos.abs() > torch.finfo(torch.float32).max).any()):
        raise ValueError("positions must fit in float32 (|position| <= 3.4e38) for a float32 angle error")
    freqs = inverse_frequencies(dim, base)
    check_elements("the table (positions x dim)", pos.numel(), dim)
    check_finite_result(pos[:, None] * freqs[None, :], "positions x frequencies")
    angles32 = pos.to(torch.float32)[:, None] * freqs.to(torch.float32)[None, :]
    angles64 = pos[:, None] * freqs[None, :]
    error_sin = (angles32.sin().double() - angles64.sin()).abs()
    error_cos = (angles32.cos().double() - angles64.cos()).abs()
    return check_finite_result(torch.maximum(error_sin, error_cos).amax(dim=1),
                               "positions x frequencies in float32")


def binary_code(positions: int | Tensor, bits: int) -> Tensor:
    """Bit b of each position in column b (least significant bit first), ``[len, bits]``, float64.

    Examples:
        >>> binary_code(torch.tensor([5]), 3)
        tensor([[1., 0., 1.]], dtype=torch.float64)
    """
    pos = check_positions("positions", positions)
    bits = check_int("bits", bits, minimum=1, maximum=62)
    check_elements("the code (positions x bits)", pos.numel(), bits)
    if bool((pos < 0).any()) or bool((pos != pos.round()).any()) or bool((pos > MAX_EXACT_POSITION).any()):
        raise ValueError(f"positions must be non-negative integers (at most 2**53) for a binary code, got {pos.tolist()[:5]}")
    integers = pos.to(torch.int64)
    return ((integers[:, None] >> torch.arange(bits)[None, :]) & 1).to(torch.float64)
