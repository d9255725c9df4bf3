r"""KERPLE (Chi, Fan, Ramadge and Rudnicky, "KERPLE: Kernelized Relative Positional Embedding
for Length Extrapolation", NeurIPS 2022): learned bias shapes.

Each head adds a learned function of the distance \(|i - j|\) to the logits, from one of two
families of conditionally positive definite kernels, shifted to be 0 at distance 0:

* ``"power"``: \(-r_1 |i - j|^{r_2}\) with \(r_1 > 0\) and \(0 < r_2 \le 2\);
* ``"log"``: \(-r_1 \log(1 + r_2 |i - j|)\) with \(r_1, r_2 > 0\).

The constraints are kept as the authors' code keeps them: before each use the parameters are
projected back into the allowed set (clamped to \(\ge \varepsilon\) = ``eps``, 0.01 in their code,
and \(r_2 \le 2\) for the power kernel). ALiBi is the power kernel with \(r_2 = 1\) and \(r_1\) the
ALiBi slopes, fixed; since the smallest ALiBi slopes (1/128, 1/256 for 8 heads) are below 0.01,
recovering them needs \(\varepsilon \le 2^{-8}\), which the paper's constraint \(r_1 > 0\) allows.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from posenc._bias import bias_positions, distances
from posenc._checks import check_choice, check_elements, check_float, check_size_int

__all__ = ["KINDS", "KerpleBias", "distance_matrix"]

KINDS = ("log", "power")

#: The smallest value a parameter may take by default (the authors' ``eps``).
EPS = 1e-2


def distance_matrix(q_positions: Tensor | int, k_positions: Tensor | int) -> Tensor:
    r"""\(|i - j|\) for every query and key position, float64 ``[q, k]`` (or ``[batch, q, k]``).

    Positions are ints n (meaning 0 .. n-1) or ``[seq]`` / ``[batch, seq]`` tensors.

    Examples:
        >>> distance_matrix(2, torch.tensor([0, 3]))
        tensor([[0., 3.],
                [1., 2.]], dtype=torch.float64)
    """
    q_pos, k_pos, shape = bias_positions(q_positions, k_positions)
    check_elements("the distance matrix of q_positions and k_positions", *shape)
    return distances(q_pos, k_pos)


class KerpleBias(nn.Module):
    r"""KERPLE: per-head learnable \(r_1\), \(r_2\) (``r1``, ``r2``); ``forward(q_len, k_len)`` -> ``[heads, q_len, k_len]``.

    Args:
        num_heads: number of heads (one ``r1`` and one ``r2`` each).
        kind: ``"log"`` (the variant the paper recommends) or ``"power"``.
        eps: the smallest value ``r1`` and ``r2`` are projected to (the paper asks ``> 0``; the
            authors' code uses 0.01), in ``(0, 1]``.

    Initialisation as in the authors' code: uniform, \(r_1 \sim U(0, 2)\), \(r_2 \sim U(0, 1)\) for the log
    kernel; \(r_1 \sim U(0, 1)\), \(r_2 \sim U(0, 2)\) for the power kernel. Query ``i`` and key ``j`` are
    positions ``0 .. q_len - 1`` and ``0 .. k_len - 1``, as in `posenc.alibi.alibi_bias`; use
    `bias` with explicit positions when the queries are not the first positions (a KV cache).

    Examples:
        >>> _ = torch.manual_seed(0)
        >>> kerple = KerpleBias(2, kind="log")
        >>> kerple(3).shape
        torch.Size([2, 3, 3])
        >>> bool((kerple(3).diagonal(dim1=1, dim2=2) == 0).all())
        True
    """

    def __init__(self, num_heads: int, *, kind: str = "log", eps: float = EPS) -> None:
        super().__init__()
        self.num_heads = check_size_int("num_heads", num_heads)
        self.kind = check_choice("kind", kind, KINDS)
        self.eps = check_float("eps", eps, positive=True, maximum=1.0)
        r1_scale, r2_scale = (2.0, 1.0) if self.kind == "log" else (1.0, 2.0)
        self.r1 = nn.Parameter(torch.rand(self.num_heads) * r1_scale)
        self.r2 = nn.Parameter(torch.rand(self.num_heads) * r2_scale)
        self.project_()

    @torch.no_grad()
    def project_(self) -> None:
        """Clamp ``r1`` and ``r2`` into the allowed set, in place, if (and only if) they left it."""
        high = 2.0 if self.kind == "power" else None
        if bool((self.r1 < self.eps).any()):
            self.r1.clamp_(min=self.eps)
        if bool((self.r2 < self.eps).any()) or (high is not None and bool((self.r2 > high).any())):
            self.r2.clamp_(min=self.eps, max=high)

    def bias(self, q_positions: Tensor | int, k_positions: Tensor | int) -> Tensor:
        """The bias for explicit positions: ``[heads, q, k]``, or ``[batch, heads, q, k]`` if either is 2-D.

        Positions are ints n (meaning 0 .. n-1) or ``[seq]`` / ``[batch, seq]`` tensors.
        """
        q_pos, k_pos, shape = bias_positions(q_positions, k_positions)
        check_elements("the bias of q_positions and k_positions", self.num_heads, *shape)
        return self._bias(q_pos, k_pos)

    # --8<-- [start:kernel]
    def _bias(self, q_pos: Tensor, k_pos: Tensor) -> Tensor:
        # -r1 * kernel(|i - j|) per head: [(batch,) heads, q, k]
        # r1, r2 back into the allowed set, as the authors' code does
        self.project_()
        distance = distances(q_pos, k_pos).to(device=self.r1.device)
        distance = distance[..., None, :, :]  # [(batch,) 1, q, k]
        dtype = self.r1.dtype
        if dtype not in (torch.float32, torch.float64):
            dtype = torch.float32  # at least float32, even after .half()
        distance = distance.to(dtype)
        r1 = self.r1.to(dtype)[:, None, None]
        r2 = self.r2.to(dtype)[:, None, None]
        if self.kind == "log":
            kernel = torch.log1p(r2 * distance)
        else:
            kernel = distance.pow(r2)
        return -r1 * kernel + 0.0  # + 0.0: the diagonal's -0.0 becomes 0.0
    # --8<-- [end:kernel]

    def forward(self, q_len: int, k_len: int | None = None) -> Tensor:
        q_len = check_size_int("q_len", q_len, minimum=0)
        k_len = q_len if k_len is None else check_size_int("k_len", k_len, minimum=0)
        check_elements("the bias of q_len and k_len", self.num_heads, q_len, k_len)
        return self.bias(q_len, k_len)
