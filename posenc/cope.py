r"""CoPE, Contextual Position Encoding (Golovneva, Wang, Weston and Sukhbaatar, 2024).

Positions that count what the model decides to count, not tokens. For query \(i\) every key
\(t \le i\) gets a gate \(g_{it} = \sigma(q_i \cdot k_t / \sqrt{d})\) (the attention logit through a
sigmoid), and the position of key \(j\) relative to query \(i\) is the sum of the gates from \(j\)
to \(i\):

\[
    p_{ij} = \sum_{t=j}^{i} g_{it}.
\]

With every gate 1 this is \(i - j + 1\), the token distance (plus one); with gates that open
only on, say, the last token of each word, it counts words. \(p_{ij}\) is fractional, so the
position embedding \(e[p_{ij}]\) interpolates linearly between the learned \(e[\lfloor p \rfloor]\)
and \(e[\lceil p \rceil]\); since only \(q_i \cdot e[p]\) is needed, the products \(q_i \cdot e[p]\)
are computed once for the integer \(p\) and interpolated. The result is added to the logits. Positions are
clamped to ``max_position - 1``. The method is causal: keys after the query get no gate.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from posenc._checks import check_size_int, check_tensor

__all__ = ["CoPE", "contextual_positions"]

#: The most numbers the position embeddings may hold (head_dim x max_position).
MAX_EMBEDDINGS = 1 << 24


def _check_real(name: str, value: object, min_ndim: int = 2, finite: bool = False) -> Tensor:
    tensor = check_tensor(name, value, min_ndim=min_ndim, floating=True, finite=finite)
    if tensor.is_complex():
        raise TypeError(f"{name} must be a real floating-point tensor, got dtype {tensor.dtype}")
    return tensor


def _causal_keep(q_len: int, k_len: int, device: torch.device) -> Tensor:
    """True where key j is not after query i; the queries are the last q_len of the keys."""
    return torch.ones(q_len, k_len, dtype=torch.bool, device=device).tril(k_len - q_len)


# --8<-- [start:positions]
def _reverse_cumsum(gates: Tensor) -> Tensor:
    """p_ij = sum_{t=j}^{i} g_it; gates of keys after the query are 0."""
    dtype = gates.dtype
    if dtype not in (torch.float32, torch.float64):
        dtype = torch.float32
    keep = _causal_keep(gates.shape[-2], gates.shape[-1], gates.device)
    causal = gates.to(dtype).masked_fill(~keep, 0.0)
    return causal.flip(-1).cumsum(-1).flip(-1)
# --8<-- [end:positions]


def contextual_positions(gates: Tensor) -> Tensor:
    r"""\(p_{ij} = \sum_{t=j}^{i} g_{it}\): the reverse cumulative sum of the gates along the keys.

    ``gates [..., q_len, k_len]``: finite, normally in \([0, 1]\). The queries are the last ``q_len``
    of the keys (as in `posenc.attention.scaled_dot_product_attention` with ``causal=True``), and
    gates of keys after the query are ignored (their positions are 0). Float32 at least.

    Examples:
        >>> contextual_positions(torch.ones(3, 3))          # every gate 1: i - j + 1
        tensor([[1., 0., 0.],
                [2., 1., 0.],
                [3., 2., 1.]])
    """
    gates = _check_real("gates", gates, finite=True)
    return _reverse_cumsum(gates)


class CoPE(nn.Module):
    r"""CoPE: ``forward(q, logits)`` returns the position term to add to the attention logits.

    Args:
        head_dim: the size of each query vector (the position embeddings have this size).
        max_position: the number of position embeddings ``e[0] .. e[max_position - 1]``; larger
            contextual positions are clamped to ``max_position - 1``.

    ``forward(q, logits)``: ``q [..., q_len, head_dim]`` the queries and ``logits [..., q_len,
    k_len]`` their scaled logits \(q \cdot k / \sqrt{d}\), \(d\) = ``head_dim`` (before softmax; entries already masked
    with ``-inf``, e.g. padding, get gate 0 and are not counted). Returns ``[..., q_len, k_len]``,
    float32 at least; use it as ``scores = logits + cope(q, logits)``, then mask and softmax as
    usual. The queries are the last ``q_len`` keys, so the same call serves decoding with a KV cache:
    each new query's row needs only the cached keys' logits, nothing else is kept. As in the
    authors' code the embeddings start at zero and are shared by the heads of a layer.

    Examples:
        >>> cope = CoPE(4, max_position=8)
        >>> q, k = torch.randn(1, 5, 4), torch.randn(1, 5, 4)
        >>> logits = q @ k.transpose(-2, -1) / 2.0
        >>> cope(q, logits).shape
        torch.Size([1, 5, 5])
    """

    def __init__(self, head_dim: int, *, max_position: int) -> None:
        super().__init__()
        self.head_dim = check_size_int("head_dim", head_dim)
        self.max_position = check_size_int("max_position", max_position)
        if self.head_dim * self.max_position > MAX_EMBEDDINGS:
            raise ValueError(f"head_dim x max_position must be <= {MAX_EMBEDDINGS} (the position embeddings), "
                             f"got head_dim={self.head_dim}, max_position={self.max_position}")
        self.pos_emb = nn.Parameter(torch.zeros(self.head_dim, self.max_position))

    def gates(self, logits: Tensor) -> Tensor:
        """``sigmoid(logits)``, float32 at least (keys after the query are ignored later)."""
        logits = _check_real("logits", logits)
        dtype = logits.dtype if logits.dtype in (torch.float32, torch.float64) else torch.float32
        return torch.sigmoid(logits.to(dtype))

    def positions(self, logits: Tensor) -> Tensor:
        """The contextual positions ``p_ij``, clamped to ``max_position - 1``."""
        return _reverse_cumsum(self.gates(logits)).clamp(max=self.max_position - 1)

    def interpolate(self, q: Tensor, positions: Tensor) -> Tensor:
        """``q_i . e[p_ij]`` for ``q [..., q_len, head_dim]`` and fractional ``positions [..., q_len, k_len]``.

        Positions must be finite and are clamped to ``[0, max_position - 1]``; float32 at least.
        """
        q = _check_real("q", q)
        self._check_head_dim(q)
        positions = _check_real("positions", positions, finite=True)
        if positions.shape[:-1] != q.shape[:-1]:
            raise ValueError(f"positions must have shape [..., q_len, k_len] with the leading dimensions of "
                             f"q {tuple(q.shape[:-1])}, got shape {tuple(positions.shape)}")
        dtype = torch.promote_types(torch.promote_types(q.dtype, positions.dtype), torch.float32)
        return self._interpolate(q.to(dtype), positions.to(dtype).clamp(0, self.max_position - 1))

    def _check_head_dim(self, q: Tensor) -> None:
        if q.shape[-1] != self.head_dim:
            raise ValueError(f"q must have size {self.head_dim} in its last dimension (the module's "
                             f"head_dim), got shape {tuple(q.shape)}")

    # --8<-- [start:interpolate]
    def _interpolate(self, q: Tensor, positions: Tensor) -> Tensor:
        """``q_i . e[p_ij]``, ``e`` interpolated between integers."""
        dtype = positions.dtype
        # q_i . e[p] for every integer p, [..., q_len, P]
        per_integer = q.to(dtype) @ self.pos_emb.to(dtype)
        floor = positions.floor()
        weight = positions - floor  # 0 at an integer (NaN stays NaN)
        last = self.max_position - 1
        below = floor.nan_to_num(0.0).long().clamp(0, last)
        above = positions.ceil().nan_to_num(0.0).long().clamp(0, last)
        low = per_integer.gather(-1, below)
        high = per_integer.gather(-1, above)
        return low + weight * (high - low)
    # --8<-- [end:interpolate]

    def forward(self, q: Tensor, logits: Tensor) -> Tensor:
        q = _check_real("q", q)
        logits = _check_real("logits", logits)
        self._check_head_dim(q)
        if logits.shape[:-1] != q.shape[:-1]:
            raise ValueError(f"logits must have shape [..., q_len, k_len] with the leading dimensions of "
                             f"q {tuple(q.shape[:-1])}, got shape {tuple(logits.shape)}")
        if logits.shape[-2] > logits.shape[-1]:
            raise ValueError(f"logits must not have more queries than keys (causal, the queries are the "
                             f"last keys), got shape {tuple(logits.shape)}")
        dtype = torch.promote_types(torch.promote_types(q.dtype, logits.dtype), torch.float32)
        positions = self.positions(logits.to(dtype))
        return self._interpolate(q.to(dtype), positions)
