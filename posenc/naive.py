r"""The first attempts at a position code, before the sinusoidal encoding of Vaswani et al. (2017).

Each function returns a table ``[len, width]`` with one row per position, so that the analysis
helpers (`posenc.analysis`) can compare them with the real encoding row by row:

* `counting` writes the position itself (0, 1, 2, ...): unbounded.
* `normalized_counting` divides by the last index of the sentence, so every value lies in
  \([0, 1]\), but the same position gets a different value in sentences of different length.
* `single_sine` writes \(\sin(\omega p)\) at position \(p\) for one frequency \(\omega\): bounded,
  but many positions land close together.
* `sine_cosine_pairs` writes one (sin, cos) pair per chosen frequency; with the frequencies
  \(\text{base}^{-2i/d}\), \(i = 0, \dots, d/2 - 1\), it is exactly the sinusoidal encoding of
  width \(d\).

These are teaching tools, so they compute in float64 by default: the chapters look at gaps between
codes as small as 1e-7, which float32 cannot resolve.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from posenc._checks import (
    MAX_SIZE,
    check_elements,
    check_finite_result,
    check_float,
    check_float_dtype,
    check_positions,
    check_real_tensor,
    check_size_int,
)

__all__ = ["counting", "normalized_counting", "sine_cosine_pairs", "single_sine"]


def _check_frequencies(frequencies: object) -> Tensor:
    if isinstance(frequencies, Tensor):
        values = check_real_tensor("frequencies", frequencies, ndim=1, finite=True).to(torch.float64)
    elif isinstance(frequencies, Sequence) and not isinstance(frequencies, str):
        if len(frequencies) > MAX_SIZE:
            raise ValueError(f"frequencies must hold at most {MAX_SIZE} frequencies, got {len(frequencies)}")
        values = torch.tensor([check_float("frequencies[]", f) for f in frequencies], dtype=torch.float64)
    else:
        raise TypeError(f"frequencies must be a sequence of numbers or a 1-D tensor, got {type(frequencies).__name__}")
    if values.numel() == 0:
        raise ValueError("frequencies must hold at least one frequency, got an empty sequence")
    if bool((values <= 0).any()):
        raise ValueError(f"frequencies must all be > 0, got {values.tolist()}")
    return values


def counting(positions: int | Tensor, *, dtype: torch.dtype = torch.float64) -> Tensor:
    """Attempt 1: the position itself as one extra feature, ``[len, 1]``.

    Examples:
        >>> counting(4).flatten()
        tensor([0., 1., 2., 3.], dtype=torch.float64)
    """
    return _counting(check_positions("positions", positions)).to(check_float_dtype("dtype", dtype))


def normalized_counting(seq_len: int, *, dtype: torch.dtype = torch.float64) -> Tensor:
    r"""Attempt 2: \(p / (n - 1)\) at positions \(p = 0, \dots, n - 1\) (\(n\) = ``seq_len``), so the
    first word gets 0 and the last 1, ``[seq_len, 1]``. A one-word sentence gets ``[[0.]]`` (no division by zero).

    Examples:
        >>> normalized_counting(3).flatten()
        tensor([0.0000, 0.5000, 1.0000], dtype=torch.float64)
    """
    return _normalized_counting(check_size_int("seq_len", seq_len)).to(check_float_dtype("dtype", dtype))


def single_sine(positions: int | Tensor, *, frequency: float = 1.0, dtype: torch.dtype = torch.float64) -> Tensor:
    r"""Attempt 3: \(\sin(\omega p)\) at position \(p\) (\(\omega\) = ``frequency``), bounded in \([-1, 1]\),
    ``[len, 1]``."""
    pos = check_positions("positions", positions)
    frequency = check_float("frequency", frequency, positive=True)
    # sin of a finite angle is finite: NaN in the code means frequency * pos overflowed
    code = check_finite_result(_single_sine(pos, frequency), "positions x frequency")
    return code.to(check_float_dtype("dtype", dtype))


def sine_cosine_pairs(
    positions: int | Tensor, frequencies: Sequence[float] | Tensor, *, dtype: torch.dtype = torch.float64
) -> Tensor:
    r"""Attempt 4: one (sin, cos) pair per frequency, interleaved, ``[len, 2 * len(frequencies)]``.

    Column \(2j\) is \(\sin(\omega_j p)\) at position \(p\) (\(\omega_j\) = ``frequencies[j]``) and column
    \(2j + 1\) the matching cosine.
    """
    pos = check_positions("positions", positions)
    freqs = _check_frequencies(frequencies)
    check_elements("the table (positions x 2 * frequencies)", pos.numel(), 2 * freqs.numel())
    code = check_finite_result(_sine_cosine_pairs(pos, freqs), "positions x frequencies")
    return code.to(check_float_dtype("dtype", dtype))


# --8<-- [start:naive]
def _counting(positions: Tensor) -> Tensor:
    """Attempt 1: the position itself, one feature per position."""
    return positions[:, None]  # [len, 1]


def _normalized_counting(seq_len: int) -> Tensor:
    """Attempt 2: 0 for the first word, 1 for the last (and 0 for a single
    word)."""
    pos = torch.arange(seq_len, dtype=torch.float64)
    return (pos / max(seq_len - 1, 1))[:, None]  # [seq_len, 1]


def _single_sine(positions: Tensor, frequency: float) -> Tensor:
    """Attempt 3: one sine, bounded in [-1, 1]."""
    return torch.sin(frequency * positions)[:, None]  # [len, 1]


def _sine_cosine_pairs(positions: Tensor, frequencies: Tensor) -> Tensor:
    """Attempt 4: a (sin, cos) pair per frequency, interleaved."""
    angles = positions[:, None] * frequencies[None, :]  # [len, n]
    # [len, 2n]
    return torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(-2)
# --8<-- [end:naive]
