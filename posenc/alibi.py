r"""ALiBi, "Attention with Linear Biases" (Press, Smith and Lewis, ICLR 2022).

Nothing is added to the embeddings. Each head \(h\) adds \(-m_h \, |i - j|\) to the logit of
query \(i\) for key \(j\): a penalty growing linearly with distance, steeper for heads with a
larger slope \(m_h\). The slopes are fixed, not learned.

Slopes for \(n\) heads, \(n\) a power of two: the geometric sequence that starts at
\(2^{-8/n}\) and has that same ratio, so the last slope is \(2^{-8}\). For other \(n\) the paper's
code takes the \(p\) slopes of the largest power of two \(p < n\), then the \(n - p\) first
slopes at even indices (every other one, starting with the first) of the \(2p\)-head sequence.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from posenc._bias import bias_positions, distances
from posenc._checks import check_elements, check_float_dtype, check_size_int
from posenc.relative import relative_positions

__all__ = ["AlibiBias", "alibi_bias", "alibi_slopes"]


# --8<-- [start:slopes]
def _power_of_two_slopes(heads: int) -> Tensor:
    """(2^(-8/heads))^h for h = 1 .. heads, with heads a power of two: 1/256 is
    always the last."""
    h = torch.arange(1, heads + 1, dtype=torch.float64)
    return torch.exp2(-8.0 * h / heads)


def _slopes(num_heads: int) -> Tensor:
    """The slope of each head, float64 ``[num_heads]``, in the paper's head
    order."""
    # largest power of two <= num_heads
    closest = 1 << (num_heads.bit_length() - 1)
    slopes = _power_of_two_slopes(closest)
    # the rest: every other slope of the 2 * closest sequence
    if closest < num_heads:
        rest = _power_of_two_slopes(2 * closest)[0::2][: num_heads - closest]
        slopes = torch.cat((slopes, rest))
    return slopes
# --8<-- [end:slopes]


# --8<-- [start:bias]
def _alibi(slopes: Tensor, distance: Tensor) -> Tensor:
    """``-slope_h * |i - j|``: slopes ``[heads]`` and distances
    ``[(batch,) q, k]``, float64."""
    # [(batch,) heads, q, k]
    bias = -(slopes[:, None, None] * distance[..., None, :, :])
    return bias + 0.0  # + 0.0: the diagonal's -0.0 becomes 0.0
# --8<-- [end:bias]


def alibi_slopes(num_heads: int, *, dtype: torch.dtype = torch.float32) -> Tensor:
    """The fixed slope of each head, ``[num_heads]``, in the paper's head order.

    Examples:
        >>> alibi_slopes(8) * 256
        tensor([128.,  64.,  32.,  16.,   8.,   4.,   2.,   1.])
    """
    num_heads = check_size_int("num_heads", num_heads)
    return _slopes(num_heads).to(check_float_dtype("dtype", dtype))


def alibi_bias(num_heads: int, q_len: int, k_len: int | None = None, *,
               dtype: torch.dtype = torch.float32) -> Tensor:
    r"""The additive logit bias \(-m_h \, |i - j|\) (slope \(m_h\) of head \(h\)), ``[num_heads, q_len, k_len]``.

    Query ``i`` and key ``j`` are positions ``0 .. q_len - 1`` and ``0 .. k_len - 1``
    (``k_len`` defaults to ``q_len``). The diagonal is 0 and every other entry is negative.
    `AlibiBias` takes any positions.

    Examples:
        >>> alibi_bias(1, 3)
        tensor([[[ 0.0000, -0.0039, -0.0078],
                 [-0.0039,  0.0000, -0.0039],
                 [-0.0078, -0.0039,  0.0000]]])
    """
    q_len = check_size_int("q_len", q_len, minimum=0)
    k_len = q_len if k_len is None else check_size_int("k_len", k_len, minimum=0)
    num_heads = check_size_int("num_heads", num_heads)
    dtype = check_float_dtype("dtype", dtype)
    check_elements("the bias (num_heads x q_len x k_len)", num_heads, q_len, k_len)
    distance = relative_positions(q_len, k_len).abs().to(torch.float64)
    return _alibi(_slopes(num_heads), distance).to(dtype)


class AlibiBias(nn.Module):
    r"""ALiBi as a bias module: ``bias(q_positions, k_positions)`` gives \(-m_h \, |i - j|\).

    The interface of every additive bias in posenc (`posenc.relative.T5RelativeBias`,
    `posenc.kerple.KerpleBias`, `posenc.fire.FireBias`): positions are ints n (meaning
    0 .. n-1) or ``[seq]`` / ``[batch, seq]`` tensors, and the bias is ``[heads, q, k]``, or
    ``[batch, heads, q, k]`` if either is 2-D. Computed from the positions themselves, so it
    is right for cached keys and padded rows. Float32 (from float64 distances); no parameters.

    Examples:
        >>> alibi = AlibiBias(2)
        >>> alibi.bias(torch.tensor([3]), torch.tensor([0, 3]))
        tensor([[[-0.1875,  0.0000]],
        <BLANKLINE>
                [[-0.0117,  0.0000]]])
        >>> torch.equal(alibi(4), alibi_bias(2, 4))
        True
    """

    def __init__(self, num_heads: int) -> None:
        super().__init__()
        self.num_heads = check_size_int("num_heads", num_heads)

    def bias(self, q_positions: Tensor | int, k_positions: Tensor | int) -> Tensor:
        """The bias for explicit positions, ``[(batch,) heads, q, k]``."""
        q_pos, k_pos, shape = bias_positions(q_positions, k_positions)
        check_elements("the bias of q_positions and k_positions", self.num_heads, *shape)
        distance = distances(q_pos, k_pos)  # [(batch,) q, k], on the positions' device
        return _alibi(_slopes(self.num_heads).to(distance.device), distance).to(torch.float32)

    def forward(self, q_len: int, k_len: int | None = None) -> Tensor:
        """The bias of queries ``0 .. q_len - 1`` and keys ``0 .. k_len - 1``, ``[heads, q_len, k_len]``."""
        q_len = check_size_int("q_len", q_len, minimum=0)
        k_len = q_len if k_len is None else check_size_int("k_len", k_len, minimum=0)
        return self.bias(q_len, k_len)
