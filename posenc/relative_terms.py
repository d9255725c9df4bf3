r"""Relative attention written as a sum of terms: Transformer-XL and DeBERTa.

* Transformer-XL (Dai et al., 2019, section 3.3) writes the logit of query \(i\) and key \(j\) as
  four terms: content against content, content against the relative position \(i - j\), and two
  learned global biases \(u\) and \(v\) in place of the query for each. With the projected
  content \(q_i\), \(k_j\) and the projected sinusoid of the offset \(r_{i-j}\),
  \(A_{ij} = (q_i + u) \cdot k_j + (q_i + v) \cdot r_{i-j}\).
* DeBERTa (He et al., 2021, section 3.1) keeps separate vectors for content and for relative
  position and adds content-to-position and position-to-content terms to the content term,
  with the offset clipped to \(2k\) indices (`deberta_relative_index`).

Both return logits before the softmax and before any \(1/\sqrt{d}\) (Transformer-XL scales by
\(1/\sqrt{d}\), DeBERTa by \(1/\sqrt{3d}\)).
"""

from __future__ import annotations

import torch
from torch import Tensor

from posenc._checks import (
    MAX_SIZE,
    check_elements,
    check_int,
    check_size,
    check_size_int,
    check_tensor,
)

__all__ = ["deberta_relative_index", "deberta_scores", "transformer_xl_scores"]


def _check_pair(names: tuple[str, str], q: object, k: object) -> tuple[Tensor, Tensor]:
    """Queries and keys of one self-attention: finite floating tensors ``[..., n, d]`` of one shape."""
    q = check_tensor(names[0], q, min_ndim=2, floating=True, finite=True)
    k = check_tensor(names[1], k, min_ndim=2, floating=True, finite=True)
    if k.shape != q.shape:
        raise ValueError(f"{names[1]} must have the shape of {names[0]} {tuple(q.shape)} (self-attention), "
                         f"got {tuple(k.shape)}")
    if min(q.shape) == 0:
        raise ValueError(f"{names[0]} must not be empty, got shape {tuple(q.shape)}")
    return q, k


def _check_table(name: str, value: object, *, ndim: int, width: int, dtype: torch.dtype, like: str) -> Tensor:
    """A finite floating tensor of rank ``ndim`` whose last axis is ``width`` and dtype ``dtype``."""
    table = check_tensor(name, value, ndim=ndim, floating=True, finite=True)
    check_size(name, table, -1, width, expected_from=f"the width of {like}")
    if table.dtype != dtype:
        raise TypeError(f"{name} must have the dtype of {like} ({dtype}), got {table.dtype}")
    return table


# --8<-- [start:transformer-xl]
def transformer_xl_scores(q: Tensor, k: Tensor, r: Tensor, u: Tensor,
                          v: Tensor) -> Tensor:
    r"""Transformer-XL's logits
    \((q_i + u) \cdot k_j + (q_i + v) \cdot r_{i-j}\) for self-attention.

    Args:
        q: projected queries, ``[..., n, d]``.
        k: projected keys, ``[..., n, d]``.
        r: projected position rows for the offsets ``i - j = -(n-1) .. n-1`` in
            that order, ``[2n - 1, d]`` (in the paper \(W_{k,R} R_{i-j}\), \(R\)
            the sinusoid table).
        u: the learned global vector that stands for the query in the content
            term, ``[d]``.
        v: the learned global vector that stands for the query in the position
            term, ``[d]``.

    Returns:
        ``[..., n, n]``, unscaled.

    Examples:
        >>> q, k = torch.zeros(3, 2), torch.zeros(3, 2)
        >>> r = torch.arange(10.0).view(5, 2)   # rows for offsets -2 .. 2
        >>> transformer_xl_scores(q, k, r, torch.zeros(2),
        ...                       torch.tensor([1.0, 0.0]))
        tensor([[4., 2., 0.],
                [6., 4., 2.],
                [8., 6., 4.]])
    """
    q, k = _check_pair(("q", "k"), q, k)
    n, d = q.shape[-2], q.shape[-1]
    if k.dtype != q.dtype:
        raise TypeError(f"k must have the dtype of q ({q.dtype}), "
                        f"got {k.dtype}")
    r = _check_table("r", r, ndim=2, width=d, dtype=q.dtype, like="q")
    check_size("r", r, 0, 2 * n - 1,
               expected_from="2n - 1 offsets for n queries")
    u = _check_table("u", u, ndim=1, width=d, dtype=q.dtype, like="q")
    v = _check_table("v", v, ndim=1, width=d, dtype=q.dtype, like="q")
    # [..., n, n]: terms (a) and (c)
    content = (q + u) @ k.transpose(-2, -1)
    # [..., n, 2n-1]: terms (b) and (d), every offset
    by_offset = (q + v) @ r.transpose(-2, -1)
    i = torch.arange(n, device=q.device)
    # [..., n, n]: row of offset i - j
    index = (i[:, None] - i[None, :] + n - 1).expand(*q.shape[:-1], n)
    return content + by_offset.gather(-1, index)             # [..., n, n]
# --8<-- [end:transformer-xl]


# --8<-- [start:deberta]
def deberta_relative_index(q_len: int, k_len: int, max_distance: int) -> Tensor:
    r"""DeBERTa's clipped relative index \(\delta(i, j)\) of query \(i\) and key
    \(j\): \(i - j + k\) clipped to \(0, \dots, 2k - 1\) (\(k\) =
    ``max_distance``), a LongTensor ``[q_len, k_len]``.

    Examples:
        >>> deberta_relative_index(4, 4, 2)
        tensor([[2, 1, 0, 0],
                [3, 2, 1, 0],
                [3, 3, 2, 1],
                [3, 3, 3, 2]])
    """
    q_len = check_size_int("q_len", q_len, minimum=0)
    k_len = check_size_int("k_len", k_len, minimum=0)
    max_distance = check_int("max_distance", max_distance, minimum=1,
                             maximum=MAX_SIZE)
    check_elements("the relative index", q_len, k_len)
    # [q_len, k_len]: i - j
    offsets = torch.arange(q_len)[:, None] - torch.arange(k_len)[None, :]
    return (offsets + max_distance).clamp(0, 2 * max_distance - 1)


def deberta_scores(qc: Tensor, kc: Tensor, qr: Tensor, kr: Tensor) -> Tensor:
    r"""DeBERTa's disentangled logits: content to content, content to
    position, position to content,

    \(Q^c_i \cdot K^c_j + Q^c_i \cdot K^r_{\delta(i,j)} +
    K^c_j \cdot Q^r_{\delta(j,i)}\), with \(Q^c\), \(K^c\), \(Q^r\), \(K^r\)
    the arguments ``qc``, ``kc``, ``qr``, ``kr``.

    Args:
        qc: projected content queries, ``[..., n, d]``.
        kc: projected content keys, ``[..., n, d]``.
        qr: the relative position table projected as queries, ``[2k, d]``; ``k``
            (the clipping distance) is read from its length.
        kr: the relative position table projected as keys, ``[2k, d]``.

    Returns:
        ``[..., n, n]``, before the division by \(\sqrt{3d}\).
    """
    qc, kc = _check_pair(("qc", "kc"), qc, kc)
    n, d = qc.shape[-2], qc.shape[-1]
    if kc.dtype != qc.dtype:
        raise TypeError(f"kc must have the dtype of qc ({qc.dtype}), "
                        f"got {kc.dtype}")
    qr = _check_table("qr", qr, ndim=2, width=d, dtype=qc.dtype, like="qc")
    kr = _check_table("kr", kr, ndim=2, width=d, dtype=qc.dtype, like="qc")
    if qr.shape[0] % 2 or qr.shape[0] == 0:
        raise ValueError(f"qr must have 2k rows (k >= 1), "
                         f"got shape {tuple(qr.shape)}")
    if kr.shape != qr.shape:
        raise ValueError(f"kr must have the shape of qr {tuple(qr.shape)}, "
                         f"got {tuple(kr.shape)}")
    # [n, n]: δ(i, j)
    delta = deberta_relative_index(n, n, qr.shape[0] // 2).to(qc.device)
    batch = qc.shape[:-2]
    content = qc @ kc.transpose(-2, -1)                   # [..., n, n]
    # [..., n, n]: qc_i · kr[δ(i, j)]
    c2p = (qc @ kr.transpose(-2, -1)).gather(-1, delta.expand(*batch, n, n))
    # [..., j, i]: kc_j · qr[δ(j, i)]
    p2c = (kc @ qr.transpose(-2, -1)).gather(-1, delta.expand(*batch, n, n))
    return content + c2p + p2c.transpose(-2, -1)          # [..., n, n]
# --8<-- [end:deberta]
