r"""PaTH attention: position as the product of data-dependent Householder-like transforms.

Yang et al., "PaTH Attention: Position Encoding via Accumulating Householder Transformations"
(NeurIPS 2025, https://arxiv.org/abs/2505.16381): each token t gives a transform
\(H_t = I - \beta_t w_t w_t^\top\) with a unit vector \(w_t\) and \(\beta_t \in (0, 2)\), both
computed from the token's input, and the logit of query i and key j is

\[ q_i^\top \Big( \prod_{s=j+1}^{i} H_s \Big) k_j = q_i^\top H_i H_{i-1} \cdots H_{j+1} k_j . \]

RoPE is the fixed special case in spirit: its matrix between i and j is a rotation that depends
on \(i - j\) alone; PaTH's depends on the tokens in between. \(\beta = 0\) gives \(H = I\):
no position at all (NoPE); \(\beta = 2\) a reflection; between, a matrix with eigenvalue
\(1 - \beta\) along \(w\).

The order of the product is the authors': their decoding step updates every cached key with
the newest token's transform, \(k \leftarrow k - \beta_t (k^\top w_t) w_t\)
(flash-linear-attention, ``fla/layers/path_attn.py``, ``rank_one_update``), so a key j seen by
query i has been multiplied by \(H_{j+1}\) first and \(H_i\) last. Their layer computes
\(w_t\) by a linear map, a short convolution and an L2 norm, and \(\beta_t = 2\sigma(\cdot)\)
(same file, ``w_proj``, ``w_conv1d``, ``l2_norm``, ``bt_proj``); `HouseholderPath` leaves out the
short convolution.

The direct form here is \(O(L^2 d)\): it sweeps the keys from the newest back, applying each
\(H_s\) to the queries that lie after it (\(H\) is symmetric, so \(q^\top H = (H q)^\top\)),
and reads one logit column per key: one pass per key. `path_logits_blockwise` is the paper's
blockwise algorithm: each block's product \(H_{e-1} \cdots H_s\) in the compact form
\(I - W^\top T B W\) with \(T\) from the UT transform (`posenc._path_compact`, which checks the
formulas at the authors' code), every block at once, one pass per distance between blocks:
about ``L / block`` passes. The model's `HouseholderPath` takes it (blocks of `BLOCK` keys) for
a whole sequence, the direct form for new queries against a cache.

Cache: a key carries its token's \(w\) and \(\beta\) (joined to it by `HouseholderPath.join`,
\(d + 1\) more channels); the logits of new queries are swept over every cached key, so decoding
is exact as long as the cache holds every token from the oldest kept key to the newest (no
attention sinks with a window). Cost per decoded token: \(O(L d)\) for the sweep, like a plain
attention row, plus the cache's \(d + 1\) extra numbers per key and head. The authors instead
cache the keys already transformed and update them in place (the same cost per token, no extra
channels).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from posenc._checks import check_size, check_size_int, check_tensor
from posenc._path_compact import compact_logits
from posenc.forgetting import _causal, _check_qk, _check_tokens

__all__ = ["HouseholderPath", "path_logits", "path_logits_blockwise"]

#: The block of the model's blockwise form: 32 keys was the fastest of 16, 32, 64 and 128 on
#: the CPU for the studies' training shapes (L = 64 and 256; ``benchmarks/bench_path.py``).
BLOCK = 32
#: How far from 1 the norm of a Householder vector may be (float32 rounding of a normalised vector).
UNIT_TOLERANCE = 1e-4


def _check_transforms(q: Tensor, k: Tensor, w: object, beta: object) -> tuple[Tensor, Tensor]:
    w_ = check_tensor("w", w, ndim=k.ndim, floating=True, finite=True)
    beta_ = check_tensor("beta", beta, ndim=k.ndim - 1, floating=True, finite=True)
    if w_.shape != k.shape:
        raise ValueError(f"w must have the shape of k {tuple(k.shape)} (one vector per key), got {tuple(w_.shape)}")
    if beta_.shape != k.shape[:-1]:
        raise ValueError(f"beta must have the shape of k without its last axis {tuple(k.shape[:-1])}, "
                         f"got {tuple(beta_.shape)}")
    norms = torch.linalg.vector_norm(w_.detach().to(torch.float64), dim=-1)
    if norms.numel() and float((norms - 1).abs().max()) > UNIT_TOLERANCE:
        raise ValueError(f"w must hold unit vectors (a Householder direction; normalise it), got norms from "
                         f"{float(norms.min()):.6g} to {float(norms.max()):.6g}")
    if beta_.numel() and bool(((beta_ < 0) | (beta_ > 2)).any()):
        raise ValueError(f"beta must lie in [0, 2] (0: the identity, 2: a reflection), got values from "
                         f"{float(beta_.min())} to {float(beta_.max())}")
    return w_, beta_


def _check_path_qk(q: object, k: object) -> tuple[Tensor, Tensor]:
    q_ = check_tensor("q", q, min_ndim=2, floating=True)
    k_ = check_tensor("k", k, min_ndim=2, floating=True)
    if k_.shape[:-2] != q_.shape[:-2] or k_.shape[-1] != q_.shape[-1]:  # names both: either may be wrong
        raise ValueError(f"k must have the leading axes and width of q (q of shape {tuple(q_.shape)}), "
                         f"got k of shape {tuple(k_.shape)}")
    if q_.shape[-2] > k_.shape[-2]:
        raise ValueError(f"q must have no more positions than k (its queries are the last keys), "
                         f"got q_len={q_.shape[-2]}, k_len={k_.shape[-2]}")
    return q_, k_


def path_logits(q: Tensor, k: Tensor, w: Tensor, beta: Tensor) -> Tensor:
    r"""\(q_i^\top H_i \cdots H_{j+1} k_j\), ``[..., q_len, k_len]``, with ``-inf`` where the key comes after the query.

    Not scaled by \(1/\sqrt{d}\). The queries are the last ``q_len`` keys.

    Args:
        q: queries ``[..., q_len, d]``.
        k: keys ``[..., k_len, d]``.
        w: one unit vector per key ``[..., k_len, d]`` (its token's Householder direction).
        beta: one factor per key ``[..., k_len]``, in [0, 2].

    Examples:
        >>> q = k = torch.eye(2)[None].expand(2, 2, 2)[0]          # two tokens, d = 2
        >>> w, beta = torch.tensor([[1.0, 0.0], [1.0, 0.0]]), torch.tensor([0.0, 2.0])
        >>> # H_1 reflects the first axis: q_1 . H_1 k_0 = 0
        >>> path_logits(q, k, w, beta)
        tensor([[1., -inf],
                [0., 1.]])
    """
    q, k = _check_path_qk(q, k)
    w, beta = _check_transforms(q, k, w, beta)
    return _sweep(q, k, w, beta)


def _sweep(q: Tensor, k: Tensor, w: Tensor, beta: Tensor) -> Tensor:
    """The direct form: from the newest key back, read a logit column, then apply that key's H to later queries."""
    dtype = q.dtype if q.dtype in (torch.float32, torch.float64) else torch.float32
    q, k, w, beta = q.to(dtype), k.to(dtype), w.to(dtype), beta.to(dtype)
    q_len, k_len = q.shape[-2], k.shape[-2]
    query_at = torch.arange(k_len - q_len, k_len, device=q.device)  # each query's index among the keys
    u, columns = q, []
    for s in range(k_len - 1, -1, -1):
        columns.append((u * k[..., s, None, :]).sum(-1))  # [..., q_len]: q_i^T H_i ... H_{s+1} k_s
        after = (query_at >= s)[:, None]  # the queries at or after s take H_s next
        w_s, beta_s = w[..., s, None, :], beta[..., s, None, None]
        u = torch.where(after, u - beta_s * (u * w_s).sum(-1, keepdim=True) * w_s, u)
    if not columns:
        return q.new_zeros((*q.shape[:-1], 0))
    return _causal(torch.stack(columns[::-1], dim=-1))


def path_logits_blockwise(q: Tensor, k: Tensor, w: Tensor, beta: Tensor, *, block: int) -> Tensor:
    r"""`path_logits` computed block by block (blocks of ``block`` keys); equal to the direct form.

    Each block's product of transforms in the compact form \(I - W^\top T B W\) (the paper's
    blockwise algorithm, `posenc._path_compact`); every block at once, one pass per distance
    between blocks. For a whole sequence (as many queries as keys) it is the fast form; for a few
    new queries against many keys the direct form does less work.

    Examples:
        >>> _ = torch.manual_seed(0)
        >>> q, k = (torch.randn(9, 4, dtype=torch.float64),
        ...         torch.randn(9, 4, dtype=torch.float64))
        >>> w = torch.nn.functional.normalize(
        ...     torch.randn(9, 4, dtype=torch.float64), dim=-1)
        >>> beta = 2 * torch.rand(9, dtype=torch.float64)
        >>> torch.allclose(path_logits_blockwise(q, k, w, beta, block=4),
        ...                path_logits(q, k, w, beta))
        True
    """
    q, k = _check_path_qk(q, k)
    w, beta = _check_transforms(q, k, w, beta)
    block = check_size_int("block", block)
    return compact_logits(q, k, w, beta, block)


class HouseholderPath(nn.Module):
    r"""PaTH's transforms of one layer, and the logits they give.

    \(w_t = \mathrm{normalise}(W_w x_t)\) per head and \(\beta_t = 2\sigma(W_\beta x_t + b)\), as
    the authors' layer computes them without its short convolution. Behind the model's
    ``content`` and ``scores`` hooks (`posenc.attention.ContentHook`): `join` adds each token's
    \(w\) and \(\beta\) to its key; `scores` gives `path_logits` scaled by \(1/\sqrt{d}\).

    Args:
        dim: the width of the layer's input.
        num_heads: the number of heads.
        head_dim: the width of a query and a key.

    Examples:
        >>> path = HouseholderPath(8, num_heads=2, head_dim=4)
        >>> x, q, k = (torch.randn(1, 3, 8), torch.randn(1, 2, 3, 4),
        ...            torch.randn(1, 2, 3, 4))
        >>> q, keys = path.join(x, q, k)
        >>> tuple(keys.shape)                       # key, w, beta
        (1, 2, 3, 9)
        >>> tuple(path.scores(q, keys).shape)
        (1, 2, 3, 3)
    """

    def __init__(self, dim: int, num_heads: int, head_dim: int) -> None:
        super().__init__()
        self.dim = check_size_int("dim", dim)
        self.num_heads = check_size_int("num_heads", num_heads)
        self.head_dim = check_size_int("head_dim", head_dim)
        self.w_proj = nn.Linear(self.dim, self.num_heads * self.head_dim, bias=False)
        self.beta_proj = nn.Linear(self.dim, self.num_heads)

    def transforms(self, x: Tensor) -> tuple[Tensor, Tensor]:
        """Unit ``w [batch, heads, seq, head_dim]`` and ``beta [batch, heads, seq]`` in (0, 2) from ``x [batch, seq, dim]``."""
        x = check_tensor("x", x, ndim=3, floating=True)
        check_size("x", x, -1, self.dim, expected_from="the module's dim")
        return self._transforms(x)

    def _transforms(self, x: Tensor) -> tuple[Tensor, Tensor]:
        dtype = torch.float64 if x.dtype == torch.float64 else torch.float32
        batch, seq, _ = x.shape
        raw = self.w_proj(x.to(self.w_proj.weight.dtype)).to(dtype).view(batch, seq, self.num_heads, self.head_dim)
        w = nn.functional.normalize(raw, dim=-1, eps=1e-6).transpose(1, 2)
        beta = 2 * torch.sigmoid(self.beta_proj(x.to(self.beta_proj.weight.dtype)).to(dtype)).transpose(1, 2)
        return w, beta

    def join(self, x: Tensor, q: Tensor, k: Tensor) -> tuple[Tensor, Tensor]:
        """The queries as they are, and the keys ``[batch, heads, seq, 2 head_dim + 1]``: key, w, beta."""
        q, k = _check_qk(q, k, self.num_heads, self.head_dim, keys_wider_by=0)
        x = check_tensor("x", x, ndim=3, floating=True)
        check_size("x", x, -1, self.dim, expected_from="the module's dim")
        _check_tokens(x, k)
        return self._join(x, q, k)

    def _join(self, x: Tensor, q: Tensor, k: Tensor) -> tuple[Tensor, Tensor]:
        """`join` on the model's own tensors (checked where the model takes its input)."""
        w, beta = self._transforms(x)  # [batch, heads, seq, head_dim], [batch, heads, seq]
        return q, torch.cat((k, w.to(k.dtype), beta.to(k.dtype)[..., None]), dim=-1)  # [..., seq, 2 d + 1]

    def scores(self, q: Tensor, k: Tensor) -> Tensor:
        r"""`path_logits` ``/ sqrt(head_dim)`` ``[batch, heads, q_len, k_len]`` for keys from `join`."""
        q, k = _check_qk(q, k, self.num_heads, self.head_dim, keys_wider_by=self.head_dim + 1)
        return self._scores(q, k)

    def _scores(self, q: Tensor, k: Tensor) -> Tensor:
        """`scores` on the model's own tensors."""
        d = self.head_dim
        q_, k_, w, beta = q, k[..., :d], k[..., d:2 * d], k[..., 2 * d]
        if q.shape[-2] == k.shape[-2]:  # a whole sequence (training, a first call): the blockwise form
            logits = compact_logits(q_, k_, w, beta, BLOCK)
        else:  # new queries against a cache: the direct form, O(L d) per query
            logits = _sweep(q_, k_, w, beta)
        return logits / math.sqrt(d)
