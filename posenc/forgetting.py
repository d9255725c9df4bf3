r"""Forgetting attention (FoX): a forget gate per head and token, summed between key and query.

Lin et al., "Forgetting Transformer: Softmax Attention with a Forget Gate" (ICLR 2025,
https://arxiv.org/abs/2503.02130), "Forgetting Attention": each token t gets, per head, a scalar forget gate
\(f_t = \sigma(w_f^\top x_t + b_f)\) from its own input \(x_t\), and the logit of query i and key
j gains

\[ D_{ij} = \sum_{l=j+1}^{i} \log f_l \quad (j \le i), \]

so softmax attention becomes \(\mathrm{softmax}(q_i^\top k_j / \sqrt{d} + D_{ij})\). With
\(c_t = \sum_{l \le t} \log f_l\) this is \(D_{ij} = c_i - c_j\) (the authors' code:
``log_lambda = torch.cumsum(log_fgate)``, ``decay_bias = log_lambda[:, None] - log_lambda[None]``,
``src/forgetting_transformer/model/forgetting_transformer/modeling_forgetting_transformer.py:442-443``).
A gate that never forgets (\(f = 1\)) gives plain causal attention; a constant gate \(f\) gives
ALiBi's bias \(-m |i - j|\) with slope \(m = -\log f\); a gate computed from content makes the
slope a function of the tokens in between. It needs no position encoding and works beside RoPE.

Cache: a key carries its own token's log gate (one scalar per head, joined to it as one more
channel by `ForgetGate.join`); the logit of a query and a cached key sums the gates of the keys
between them, so decoding is exact as long as the cache holds every token from the oldest kept
key to the newest (a full cache, or a sliding window; not attention sinks with a window, which
drop the tokens between the sinks and the window). The authors' cache keeps the same state
(``fgate_cache.py``: ``log_fgate_cache``). Cost: one dot product of width ``dim`` per head and
token for the gate, and one addition per logit.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from posenc._checks import check_size, check_size_int, check_tensor

__all__ = ["ForgetGate", "forgetting_bias"]


def _check_gates(gates: object) -> Tensor:
    tensor = check_tensor("gates", gates, min_ndim=1, floating=True, finite=True)
    if tensor.numel() and bool(((tensor <= 0) | (tensor > 1)).any()):
        low, high = float(tensor.min()), float(tensor.max())
        raise ValueError(f"gates must lie in (0, 1] (a forget gate is a sigmoid; 1 forgets nothing), "
                         f"got values from {low} to {high}")
    return tensor


def forgetting_bias(gates: Tensor) -> Tensor:
    r"""FoX's logit bias \(D_{ij} = \sum_{l=j+1}^{i} \log f_l\) from the gates ``[..., seq]``: ``[..., seq, seq]``.

    Keys after the query (\(j > i\)) get ``-inf`` (causal). Computed in float64 from the gates.

    Args:
        gates: forget gates in (0, 1], the last axis the tokens (e.g. ``[heads, seq]``).

    Examples:
        >>> # a constant gate: ALiBi, slope log 2
        >>> forgetting_bias(torch.tensor([0.5, 0.5, 0.5]))
        tensor([[ 0.0000,    -inf,    -inf],
                [-0.6931,  0.0000,    -inf],
                [-1.3863, -0.6931,  0.0000]], dtype=torch.float64)
    """
    gates = _check_gates(gates)
    cumulative = torch.log(gates.to(torch.float64)).cumsum(-1)  # c_t, [..., seq]
    bias = cumulative[..., :, None] - cumulative[..., None, :]  # c_i - c_j
    seq = gates.shape[-1]
    future = torch.ones(seq, seq, dtype=torch.bool, device=gates.device).triu(1)
    return bias.masked_fill(future, float("-inf"))


class ForgetGate(nn.Module):
    r"""FoX's forget gates of one layer, and the logits they give (Lin et al., 2025).

    One gate per head: \(f_t = \sigma(w^\top x_t + b)\), a linear map ``dim -> num_heads``
    (``fgate_proj`` in the authors' code). Behind the model's ``content`` and ``scores`` hooks
    (`posenc.attention.ContentHook`): `join` adds each token's log gate to its key as one more
    channel; `scores` turns queries and such keys into logits.

    Args:
        dim: the width of the layer's input.
        num_heads: the number of heads (one gate each).
        head_dim: the width of a query and a key.

    Examples:
        >>> gate = ForgetGate(8, num_heads=2, head_dim=4)
        >>> x, q, k = (torch.randn(1, 3, 8), torch.randn(1, 2, 3, 4),
        ...            torch.randn(1, 2, 3, 4))
        >>> q, keys = gate.join(x, q, k)
        >>> tuple(keys.shape)                       # each key carries its log gate
        (1, 2, 3, 5)
        >>> bool(torch.isneginf(gate.scores(q, keys)[0, 0, 0, 1]))   # causal
        True
    """

    def __init__(self, dim: int, num_heads: int, head_dim: int) -> None:
        super().__init__()
        self.dim = check_size_int("dim", dim)
        self.num_heads = check_size_int("num_heads", num_heads)
        self.head_dim = check_size_int("head_dim", head_dim)
        self.proj = nn.Linear(self.dim, self.num_heads)

    def log_gates(self, x: Tensor) -> Tensor:
        """``log f`` of each head and token ``[batch, heads, seq]`` from ``x [batch, seq, dim]``, in at least float32."""
        x = check_tensor("x", x, ndim=3, floating=True)
        check_size("x", x, -1, self.dim, expected_from="the module's dim")
        return self._log_gates(x)

    def _log_gates(self, x: Tensor) -> Tensor:
        dtype = torch.float64 if x.dtype == torch.float64 else torch.float32
        logits = self.proj(x.to(self.proj.weight.dtype)).to(dtype)  # [batch, seq, heads]
        return nn.functional.logsigmoid(logits).transpose(1, 2)

    def join(self, x: Tensor, q: Tensor, k: Tensor) -> tuple[Tensor, Tensor]:
        """The queries as they are, and the keys ``[batch, heads, seq, head_dim + 1]`` with each token's log gate."""
        q, k = _check_qk(q, k, self.num_heads, self.head_dim, keys_wider_by=0)
        x = check_tensor("x", x, ndim=3, floating=True)
        check_size("x", x, -1, self.dim, expected_from="the module's dim")
        _check_tokens(x, k)
        return self._join(x, q, k)

    def _join(self, x: Tensor, q: Tensor, k: Tensor) -> tuple[Tensor, Tensor]:
        """`join` on the model's own tensors (checked where the model takes its input)."""
        return q, torch.cat((k, self._log_gates(x).to(k.dtype)[..., None]), dim=-1)  # [batch, heads, seq, d + 1]

    def scores(self, q: Tensor, k: Tensor) -> Tensor:
        r"""Logits \(q_i^\top k_j / \sqrt{d} + c_i - c_j\) ``[batch, heads, q_len, k_len]`` for keys from `join`.

        The queries are the last ``q_len`` keys (as when decoding with a cache); later keys get ``-inf``.
        """
        q, k = _check_qk(q, k, self.num_heads, self.head_dim, keys_wider_by=1)
        return self._scores(q, k)

    def _scores(self, q: Tensor, k: Tensor) -> Tensor:
        """`scores` on the model's own tensors."""
        dtype = q.dtype if q.dtype in (torch.float32, torch.float64) else torch.float32
        keys, log_f = k[..., :-1].to(dtype), k[..., -1].to(dtype)
        cumulative = log_f.cumsum(-1)  # c_j over the keys, [batch, heads, k_len]
        q_len, k_len = q.shape[-2], k.shape[-2]
        bias = cumulative[..., k_len - q_len:, None] - cumulative[..., None, :]
        logits = q.to(dtype) @ keys.transpose(-2, -1) / math.sqrt(self.head_dim) + bias
        return _causal(logits)


def _check_qk(q: object, k: object, heads: int, width: int, *, keys_wider_by: int) -> tuple[Tensor, Tensor]:
    """Per-head queries ``[batch, heads, q_len, width]`` and keys of width ``width + keys_wider_by``."""
    q_ = check_tensor("q", q, ndim=4, floating=True)
    k_ = check_tensor("k", k, ndim=4, floating=True)
    check_size("q", q_, 1, heads, expected_from="the module's num_heads")
    check_size("q", q_, -1, width, expected_from="the module's head_dim")
    if k_.shape[:2] != q_.shape[:2]:
        raise ValueError(f"k must have the batch and heads of q {tuple(q_.shape[:2])}, got shape {tuple(k_.shape)}")
    check_size("k", k_, -1, width + keys_wider_by, expected_from=f"head_dim + {keys_wider_by} (what join adds)")
    if q_.shape[-2] > k_.shape[-2]:  # the queries are the last keys: none can lie past them
        raise ValueError(f"q must have no more positions than k (its queries are the last keys), "
                         f"got q_len={q_.shape[-2]}, k_len={k_.shape[-2]}")
    return q_, k_


def _check_tokens(x: Tensor, k: Tensor) -> None:
    """``x [batch, seq, dim]`` holds the tokens of the keys ``k [batch, heads, seq, ...]``."""
    if x.shape[1] != k.shape[-2] or x.shape[0] != k.shape[0]:
        raise ValueError(f"x must have the batch and seq of k {tuple(k.shape[:1])}, {k.shape[-2]}, "
                         f"got shape {tuple(x.shape)}")


def _causal(logits: Tensor) -> Tensor:
    """``-inf`` where the key comes after the query (queries are the last ``q_len`` keys)."""
    q_len, k_len = logits.shape[-2], logits.shape[-1]
    future = torch.ones(q_len, k_len, dtype=torch.bool, device=logits.device).triu(k_len - q_len + 1)
    return logits.masked_fill(future, float("-inf"))
