"""ALiBi, "Attention with Linear Biases" (Press, Smith and Lewis, ICLR 2022).

Nothing is added to the embeddings. Each head ``h`` adds ``-m_h * |i - j|`` to the logit of
query ``i`` for key ``j``: a penalty growing linearly with distance, steeper for heads with a
larger slope ``m_h``. The slopes are fixed, not learned.

Slopes for ``n`` heads, ``n`` a power of two: the geometric sequence that starts at
``2^(-8/n)`` and has that same ratio, so the last slope is ``2^-8``. For other ``n`` the paper's
code takes the ``p`` slopes of the largest power of two ``p < n``, then the ``n - p`` first
slopes at even indices (every other one, starting with the first) of the ``2p``-head sequence.
"""

from __future__ import annotations

import torch
from torch import Tensor

from posenc._checks import check_elements, check_float_dtype, check_size_int
from posenc.relative import relative_positions


def _check_dtype(dtype: object) -> torch.dtype:
    return check_float_dtype("dtype", dtype)


# --8<-- [start:slopes]
def _power_of_two_slopes(heads: int) -> Tensor:
    """(2^(-8/heads))^h for h = 1 .. heads, with heads a power of two: 1/256 is always the last."""
    h = torch.arange(1, heads + 1, dtype=torch.float64)
    return torch.exp2(-8.0 * h / heads)


def alibi_slopes(num_heads: int, *, dtype: torch.dtype = torch.float32) -> Tensor:
    """The fixed slope of each head, ``[num_heads]``, in the paper's head order.

    Examples:
        >>> alibi_slopes(8) * 256
        tensor([128.,  64.,  32.,  16.,   8.,   4.,   2.,   1.])
    """
    num_heads = check_size_int("num_heads", num_heads)
    dtype = _check_dtype(dtype)
    closest = 1 << (num_heads.bit_length() - 1)  # largest power of two <= num_heads
    slopes = _power_of_two_slopes(closest)
    if closest < num_heads:  # the rest: every other slope of the 2 * closest sequence
        rest = _power_of_two_slopes(2 * closest)[0::2][: num_heads - closest]
        slopes = torch.cat((slopes, rest))
    return slopes.to(dtype)
# --8<-- [end:slopes]


# --8<-- [start:bias]
def alibi_bias(num_heads: int, q_len: int, k_len: int | None = None, *,
               dtype: torch.dtype = torch.float32) -> Tensor:
    """The additive logit bias ``-slope_h * |i - j|``, ``[num_heads, q_len, k_len]``.

    Query ``i`` and key ``j`` are positions ``0 .. q_len - 1`` and ``0 .. k_len - 1``
    (``k_len`` defaults to ``q_len``). The diagonal is 0 and every other entry is negative.

    Examples:
        >>> alibi_bias(1, 3)
        tensor([[[ 0.0000, -0.0039, -0.0078],
                 [-0.0039,  0.0000, -0.0039],
                 [-0.0078, -0.0039,  0.0000]]])
    """
    q_len = check_size_int("q_len", q_len, minimum=0)
    k_len = q_len if k_len is None else check_size_int("k_len", k_len, minimum=0)
    slopes = alibi_slopes(num_heads, dtype=torch.float64)
    dtype = _check_dtype(dtype)
    check_elements("the bias (num_heads x q_len x k_len)", slopes.numel(), q_len, k_len)
    minus_distance = -relative_positions(q_len, k_len).abs()  # integer, so no -0.0
    return (slopes[:, None, None] * minus_distance.to(torch.float64)).to(dtype)
# --8<-- [end:bias]
