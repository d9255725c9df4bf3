"""Relative position methods: Shaw et al. (2018) and the T5 bias (Raffel et al., 2020).

Both act inside attention and see only the offset ``j - i`` between a key ``j`` and a query
``i``, never the absolute positions.

* Shaw, Uszkoreit and Vaswani (2018) learn one vector per clipped offset
  ``clip(j - i, -k, k)`` and add it to the key (in the logit) and to the value (in the output).
* T5 maps the offset to one of ``num_buckets`` buckets, exact for small distances and
  logarithmically wider up to ``max_distance``, and learns one scalar per bucket and head that
  is added to the logit.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from posenc._bias import bias_positions
from posenc._checks import (
    MAX_SIZE,
    check_bool,
    check_elements,
    check_int,
    check_real_tensor,
    check_size,
    check_size_int,
    check_tensor,
    is_integer,
)
from posenc.attention import SelfAttention, scaled_dot_product_attention

__all__ = ["ShawRelativeAttention", "T5RelativeBias", "relative_positions", "t5_relative_position_bucket"]


def relative_positions(q_len: int, k_len: int) -> Tensor:
    """The offsets ``j - i`` of key ``j`` from query ``i``, a LongTensor ``[q_len, k_len]``.

    Positive entries are keys after the query, negative entries keys before it.

    Examples:
        >>> relative_positions(3, 4)
        tensor([[ 0,  1,  2,  3],
                [-1,  0,  1,  2],
                [-2, -1,  0,  1]])
    """
    q_len = check_size_int("q_len", q_len, minimum=0)
    k_len = check_size_int("k_len", k_len, minimum=0)
    check_elements("the offsets (q_len x k_len)", q_len, k_len)
    return _offsets(q_len, k_len)


# --8<-- [start:relative-positions]
def _offsets(q_len: int, k_len: int) -> Tensor:
    """j - i for query i and key j: keys in columns, queries in rows,
    ``[q_len, k_len]``."""
    return torch.arange(k_len)[None, :] - torch.arange(q_len)[:, None]
# --8<-- [end:relative-positions]


# --8<-- [start:shaw]
class ShawRelativeAttention(nn.Module):
    r"""Multi-head self-attention with Shaw et al.'s relative position
    representations.

    The logit of query \(i\) for key \(j\) is
    \(q_i \cdot (k_j + a^K_{ij}) / \sqrt{d}\) (\(d\) = ``head_dim``) and the
    output of query \(i\) is \(\sum_j w_{ij} (v_j + a^V_{ij})\), where
    \(a^K_{ij}\) and \(a^V_{ij}\) are rows
    ``clip(j - i, -max_distance, max_distance)`` of two learned tables of
    ``2 * max_distance + 1`` vectors. The tables are shared by all heads, as the
    paper offers to save memory (sections 3.1, 3.3); its base model used tables
    per layer and head (section 4.1).

    Args:
        dim: model width, divisible by ``num_heads``.
        num_heads: number of heads.
        max_distance: the clipping distance ``k`` (offsets beyond it share the
            edge vectors).

    The paper does not give an initialisation; both tables start as
    \(\mathcal{N}(0, 1/d)\), so that \(q \cdot a^K\) starts on the same scale as
    \(q \cdot k\).

    ``forward(x, *, causal=False)`` returns ``(output, weights)`` like
    `posenc.SelfAttention`; ``logits(x)`` returns the scores before the softmax.

    Examples:
        >>> layer = ShawRelativeAttention(dim=8, num_heads=2, max_distance=2)
        >>> tuple(layer.key_table.shape)
        (5, 4)
    """

    def __init__(self, dim: int, num_heads: int, max_distance: int) -> None:
        super().__init__()
        dim = check_size_int("dim", dim)
        check_elements("the projections (dim x 4 * dim)", dim, 4 * dim)
        # projections: qkv and out
        self.attention = SelfAttention(dim, num_heads)
        self.dim, self.num_heads, self.head_dim = (
            dim, self.attention.num_heads, self.attention.head_dim)
        self.max_distance = check_size_int("max_distance", max_distance)
        rows = 2 * self.max_distance + 1
        check_elements("the tables (2 * max_distance + 1 x head_dim)", rows,
                       self.head_dim)
        self.key_table = nn.Parameter(
            torch.randn(rows, self.head_dim) * self.head_dim**-0.5)
        self.value_table = nn.Parameter(
            torch.randn(rows, self.head_dim) * self.head_dim**-0.5)

    def table_rows(self, q_len: int, k_len: int) -> Tensor:
        """Row of the tables used by each (query, key) pair:
        ``clip(j - i, -k, k) + k``."""
        k = self.max_distance
        return (relative_positions(q_len, k_len).clamp(-k, k)
                + k).to(self.key_table.device)

    def _heads(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        # finite: the key term reaches the softmax as a bias, where NaN from x
        # would be blamed on it
        check_tensor("x", x, ndim=3, floating=True, finite=True)
        check_size("x", x, -1, self.dim, expected_from="the module's dim")
        if x.dtype != self.key_table.dtype:
            raise TypeError(f"x must have the module's dtype "
                            f"{self.key_table.dtype} (cast the module with "
                            f".to(dtype) to change it), got dtype {x.dtype}")
        return self.attention.split_heads(x)

    def _key_term(self, q: Tensor) -> Tensor:
        """``q_i · a^K_{ij} / sqrt(head_dim)``, ``[batch, heads, seq, seq]``."""
        seq = q.shape[-2]
        # [seq, seq, head_dim]
        a_key = self.key_table[self.table_rows(seq, seq)]
        return (torch.einsum("bhid,ijd->bhij", q, a_key)
                / math.sqrt(self.head_dim))

    def logits(self, x: Tensor) -> Tensor:
        """Attention scores before the softmax, ``[batch, heads, seq, seq]``."""
        q, k, _ = self._heads(x)
        return (q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
                + self._key_term(q))

    def forward(self, x: Tensor, *,
                causal: bool = False) -> tuple[Tensor, Tensor]:
        causal = check_bool("causal", causal)
        q, k, v = self._heads(x)
        heads_out, weights = scaled_dot_product_attention(
            q, k, v, bias=self._key_term(q), causal=causal)
        seq = x.shape[1]
        # [seq, seq, head_dim]
        a_value = self.value_table[self.table_rows(seq, seq)]
        heads_out = heads_out + torch.einsum("bhij,ijd->bhid", weights, a_value)
        merged = heads_out.transpose(1, 2).reshape(x.shape)
        return self.attention.out(merged), weights
# --8<-- [end:shaw]


def _check_bucket_setup(bidirectional: object, num_buckets: object, max_distance: object) -> tuple[bool, int, int]:
    bidirectional = check_bool("bidirectional", bidirectional)
    num_buckets = check_int("num_buckets", num_buckets, minimum=4 if bidirectional else 2, maximum=MAX_SIZE)
    if bidirectional and num_buckets % 2:
        raise ValueError(
            f"num_buckets must be even when bidirectional=True (half the buckets for each "
            f"direction), got {num_buckets}"
        )
    max_distance = check_int("max_distance", max_distance, minimum=1, maximum=1 << 62)
    max_exact = (num_buckets // 2 if bidirectional else num_buckets) // 2
    if max_distance <= max_exact:
        raise ValueError(
            f"max_distance must be greater than the {max_exact} exact buckets per direction "
            f"(num_buckets={num_buckets}, bidirectional={bidirectional}), got {max_distance}"
        )
    return bidirectional, num_buckets, max_distance


def t5_relative_position_bucket(
    relative_position: int | Tensor, *, bidirectional: bool = True, num_buckets: int = 32,
    max_distance: int = 128,
) -> Tensor:
    """T5's bucket for each offset ``relative_position = key position - query position``.

    Bidirectional (the encoder): half the buckets for keys at or before the query, half, shifted
    by ``num_buckets // 2``, for keys after it. Causal (the decoder): keys after the query are
    not seen and share bucket 0 with offset 0. Within a direction of ``b`` buckets, distances
    ``0 .. b//2 - 1`` each have their own bucket, and the other ``b - b//2`` buckets cover
    distances up to ``max_distance`` in logarithmically growing steps; all larger distances share
    the last bucket.

    The log buckets are computed in float32, in the order of T5's reference code, so that a
    model's buckets are the ones it was trained with. A distance that lies exactly on a bucket
    boundary (16, 32 and 64 in T5's encoder setting) or within float32 rounding of one (728 with
    32 causal buckets and ``max_distance=939``) can land in either of the two neighbouring
    buckets, depending on the last bit of the machine's float32 ``log``; every other distance
    gets the bucket of the formula in exact arithmetic. The relative-position chapter lists
    these distances.

    Examples:
        >>> t5_relative_position_bucket(torch.tensor([-200, -20, -1, 0, 1, 20, 200]))
        tensor([15, 10,  1,  0, 17, 26, 31])
    """
    bidirectional, num_buckets, max_distance = _check_bucket_setup(bidirectional, num_buckets, max_distance)
    if is_integer(relative_position):  # any Python int, 10**400 included: only the clamped value matters
        relative_position = torch.tensor(max(-max_distance, min(max_distance, int(relative_position))))
    offsets = check_real_tensor("relative_position", relative_position)
    if offsets.is_floating_point():
        raise TypeError(f"relative_position must hold integers, got dtype {offsets.dtype}")
    # Every distance from max_distance on is in the last bucket: clamping first changes no bucket
    # and keeps abs() away from the int64 minimum, whose absolute value overflows.
    return _bucket(offsets.long().clamp(-max_distance, max_distance), bidirectional, num_buckets, max_distance)


# --8<-- [start:t5-bucket]
def _bucket(offsets: Tensor, bidirectional: bool, num_buckets: int,
            max_distance: int) -> Tensor:
    """The bucket of each offset j - i (int64, within +-max_distance)."""
    if bidirectional:
        buckets = num_buckets // 2  # per direction
        # keys after the query use the upper half
        base = torch.where(offsets > 0, buckets, 0)
        distance = offsets.abs()
    else:
        buckets = num_buckets
        base = torch.zeros_like(offsets)
        # keys after the query count as distance 0
        distance = (-offsets).clamp(min=0)
    exact = buckets // 2
    # The log buckets are computed as T5's reference code computes them (Mesh
    # TensorFlow, and the Hugging Face port): in float32, in this order, then
    # truncated. Rounding can then move a distance that sits on a boundary by
    # one bucket, as it does in the reference code on the same machine (exact
    # arithmetic would not).
    # clamp: no log(0); those are exact anyway
    ratio = distance.clamp(min=exact).float() / exact
    scaled = (torch.log(ratio) / math.log(max_distance / exact)
              * (buckets - exact))
    log_bucket = (exact + scaled.long()).clamp(max=buckets - 1)
    return base + torch.where(distance < exact, distance, log_bucket)
# --8<-- [end:t5-bucket]


# --8<-- [start:t5-bias]
class T5RelativeBias(nn.Module):
    r"""T5's learned relative position bias: one scalar per (bucket, head),
    added to the logits.

    Args:
        num_heads: number of attention heads.
        num_buckets: number of buckets (32 in T5).
        max_distance: distance from which all offsets share the last bucket (128
            in T5).
        bidirectional: True for an encoder, False for a causal decoder.

    ``forward(q_len, k_len=None)`` returns the bias
    ``[num_heads, q_len, k_len]`` for queries at positions ``0 .. q_len - 1``
    and keys at ``0 .. k_len - 1`` (``k_len`` defaults to ``q_len``);
    ``bias(q_positions, k_positions)`` the bias of any integer positions, the
    interface of every additive bias in posenc (`posenc.alibi.AlibiBias`,
    `posenc.kerple.KerpleBias`, ...). T5 computes it once and shares it among
    the layers of a stack. The table ``weight`` ``[num_buckets, num_heads]``
    starts as \(\mathcal{N}(0, 0.1^2)\) (an arbitrary small scale; the paper
    does not specify one).

    Examples:
        >>> bias = T5RelativeBias(num_heads=4)
        >>> tuple(bias.weight.shape), tuple(bias(5).shape)
        ((32, 4), (4, 5, 5))
    """

    def __init__(self, num_heads: int, *, num_buckets: int = 32,
                 max_distance: int = 128, bidirectional: bool = True) -> None:
        super().__init__()
        self.num_heads = check_size_int("num_heads", num_heads)
        (self.bidirectional, self.num_buckets,
         self.max_distance) = _check_bucket_setup(
            bidirectional, num_buckets, max_distance)
        check_elements("the table (num_buckets x num_heads)", self.num_buckets,
                       self.num_heads)
        self.weight = nn.Parameter(
            torch.randn(self.num_buckets, self.num_heads) * 0.1)

    def buckets(self, q_len: int, k_len: int | None = None) -> Tensor:
        """The bucket of each (query, key) pair, ``[q_len, k_len]``."""
        q_len = check_size_int("q_len", q_len, minimum=0)
        k_len = (q_len if k_len is None
                 else check_size_int("k_len", k_len, minimum=0))
        check_elements("the bias (num_heads x q_len x k_len)", self.num_heads,
                       q_len, k_len)
        return t5_relative_position_bucket(
            relative_positions(q_len, k_len), bidirectional=self.bidirectional,
            num_buckets=self.num_buckets, max_distance=self.max_distance)

    def forward(self, q_len: int, k_len: int | None = None) -> Tensor:
        # [q_len, k_len, heads]
        values = self.weight[
            self.buckets(q_len, k_len).to(self.weight.device)]
        return values.permute(2, 0, 1)
    # --8<-- [end:t5-bias]

    def bias(self, q_positions: Tensor | int, k_positions: Tensor | int) -> Tensor:
        """The bias for explicit integer positions: ``[heads, q, k]``, or ``[batch, heads, q, k]`` if either is 2-D.

        Positions are ints n (meaning 0 .. n-1) or ``[seq]`` / ``[batch, seq]`` integer tensors.
        """
        for name, value in (("q_positions", q_positions), ("k_positions", k_positions)):
            if isinstance(value, Tensor) and value.is_floating_point():
                raise TypeError(f"{name} must hold integer positions (T5's buckets are for whole offsets), "
                                f"got dtype {value.dtype}")
        q_pos, k_pos, shape = bias_positions(q_positions, k_positions)
        check_elements("the bias of q_positions and k_positions", self.num_heads, *shape)
        offsets = k_pos[..., None, :] - q_pos[..., :, None]  # j - i, float64 [(batch,) q, k]
        # from max_distance on every offset shares the edge bucket: clamped, it fits in int64 exactly
        offsets = offsets.clamp(-self.max_distance, self.max_distance).long()
        buckets = _bucket(offsets, self.bidirectional, self.num_buckets, self.max_distance)
        return self.weight[buckets.to(self.weight.device)].movedim(-1, -3)  # [(batch,) heads, q, k]
