r"""FIRE (Li et al., "Functional Interpolation for Relative Positions Improves Long Context
Transformers", ICLR 2024): a learned function of the normalised distance.

The bias of query \(i\) for key \(j\) in each head is an MLP of one number,

\[
    b(i, j) = f\left(\frac{\psi(i - j)}{\psi(\max(L, i))}\right),
\]

with \(\psi(x) = \log(c x + 1)\), where \(f\) is a small MLP (1 -> hidden -> ReLU -> heads), \(c > 0\) is learned and \(L\) is a
learned threshold. Dividing by \(\psi(i)\) maps every distance of every query into \([0, 1]\),
whatever the sequence length: the same function serves every length, and a query past the
trained length asks \(f\) about inputs it has seen. The threshold \(L\) stops the normalisation
for short distances near the start, where \(i\) alone would blow small distances up. As in the
authors' code, \(c\) and \(L\) enter through their absolute values, and a small ``eps`` keeps
the denominator away from 0.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from posenc._bias import bias_positions, distances
from posenc._checks import MAX_EXACT_POSITION, check_elements, check_int, check_size_int

__all__ = ["FireBias"]

#: Initial values in the paper's reference code.
INIT_C = 0.1
INIT_L = 512.0
EPS = 1e-6
#: The most weights the MLP's second layer may have (hidden x num_heads).
MAX_WEIGHTS = 1 << 24


class FireBias(nn.Module):
    r"""FIRE: ``forward(q_len, k_len)`` -> ``[heads, q_len, k_len]``.

    Args:
        num_heads: number of heads (outputs of the MLP).
        hidden: width of the MLP's hidden layer (32 in the paper).
        max_len: the initial threshold \(L\) (None: the paper's 512). A good choice is the
            training length, or less.

    Learnable: the MLP, \(c\) (initially 0.1) and \(L\) (as \(|\lambda \cdot \text{max\_len}|\), the
    multiplier \(\lambda\) initially 1). Query ``i`` and key ``j`` are positions ``0 .. q_len - 1``
    and ``0 .. k_len - 1``; `bias` takes explicit positions (a KV cache). FIRE is meant for
    causal attention; a key after its query gets the distance \(|i - j|\).

    Examples:
        >>> _ = torch.manual_seed(0)
        >>> fire = FireBias(4, max_len=16)
        >>> fire(5).shape
        torch.Size([4, 5, 5])
        >>> bool(torch.isfinite(fire(5000, 1)).all())
        True
    """

    def __init__(self, num_heads: int, *, hidden: int = 32, max_len: int | None = None) -> None:
        super().__init__()
        self.num_heads = check_size_int("num_heads", num_heads)
        self.hidden = check_size_int("hidden", hidden)
        if self.hidden * self.num_heads > MAX_WEIGHTS:
            raise ValueError(f"hidden x num_heads must be <= {MAX_WEIGHTS} (the MLP's second layer), "
                             f"got hidden={self.hidden}, num_heads={self.num_heads}")
        init_l = INIT_L if max_len is None else float(check_int("max_len", max_len, minimum=1, maximum=MAX_EXACT_POSITION))
        self.layer1 = nn.Linear(1, self.hidden)                # the MLP f: 1 -> hidden -> ReLU -> heads
        self.layer2 = nn.Linear(self.hidden, self.num_heads)
        self.c = nn.Parameter(torch.tensor(INIT_C))
        self.l_multiplier = nn.Parameter(torch.tensor(1.0))
        self.init_l = init_l  # a Python float: no .half() can round it

    @property
    def threshold(self) -> Tensor:
        r"""The current threshold \(L = |\lambda \cdot \text{max\_len}|\), \(\lambda\) the learned multiplier (a scalar tensor)."""
        return (self.l_multiplier.to(torch.float64) * self.init_l).abs()

    def normalised_distance(self, q_positions: Tensor | int, k_positions: Tensor | int) -> Tensor:
        r"""\(\psi(|i - j|) / \psi(\max(L, i))\), ``[(batch,) q, k]``; in \([0, 1]\) for keys \(j \le i\)."""
        q_pos, k_pos, shape = bias_positions(q_positions, k_positions)
        check_elements("the distances of q_positions and k_positions", *shape)
        return self._normalised(q_pos, k_pos)

    # --8<-- [start:normalise]
    def _normalised(self, q_pos: Tensor, k_pos: Tensor) -> Tensor:
        # psi(|i - j|) / psi(max(L, i)), [(batch,) q, k]
        q_pos, k_pos = q_pos.to(self.c.device), k_pos.to(self.c.device)
        dtype = self.c.dtype
        if dtype not in (torch.float32, torch.float64):
            dtype = torch.float32  # at least float32, even after .half()
        c = self.c.to(dtype).abs()
        distance = distances(q_pos, k_pos).to(dtype)
        threshold = self.threshold.to(dtype)
        normaliser = torch.maximum(q_pos.to(dtype), threshold)[..., None]
        psi_distance = torch.log1p(c * distance)
        return psi_distance / (torch.log1p(c * normaliser) + EPS)
    # --8<-- [end:normalise]

    def bias(self, q_positions: Tensor | int, k_positions: Tensor | int) -> Tensor:
        """The bias for explicit positions: ``[heads, q, k]``, or ``[batch, heads, q, k]`` if either is 2-D.

        Positions are ints n (meaning 0 .. n-1) or ``[seq]`` / ``[batch, seq]`` tensors.
        """
        q_pos, k_pos, shape = bias_positions(q_positions, k_positions)
        check_elements("the MLP's activations for q_positions and k_positions", *shape,
                       max(self.hidden, self.num_heads))
        x = self._normalised(q_pos, k_pos)[..., None]  # [(batch,) q, k, 1]
        first, last = self.layer1, self.layer2
        # at least float32, even after .half(): the weights are cast for the computation
        hidden = F.relu(F.linear(x, first.weight.to(x.dtype), first.bias.to(x.dtype)))
        out = F.linear(hidden, last.weight.to(x.dtype), last.bias.to(x.dtype))  # [(batch,) q, k, heads]
        return out.movedim(-1, -3)

    def forward(self, q_len: int, k_len: int | None = None) -> Tensor:
        q_len = check_size_int("q_len", q_len, minimum=0)
        k_len = q_len if k_len is None else check_size_int("k_len", k_len, minimum=0)
        check_elements("the MLP's activations for q_len and k_len", q_len, k_len, max(self.hidden, self.num_heads))
        return self.bias(q_len, k_len)
