r"""How large must RoPE's base be for a context of L tokens? The bound of Xu et al. (2024).

Xu, Men, Wang et al., "Base of RoPE Bounds Context Length" (NeurIPS 2024, arXiv 2405.14591),
section 4 (read in arXiv v1), ask that a query attend more, on average, to a key similar to it
(the query plus zero-mean noise) than to a random key, at every distance \(m\) up to the context
length (their Desiderata 2). With the components of \(q\) i.i.d. of variance \(\sigma^2\), the
expected difference of the two logits at distance \(m\) is \(2\sigma^2 B(m)\) with (section 4.2,
Theorem 1, Eq. 9), for head width \(d\) and \(\theta_i = \text{base}^{-2i/d}\),

\[
    B(m) = \sum_{i=0}^{d/2-1} \cos(m\,\theta_i),
\]

so the property holds up to a context of \(L\) tokens when \(B(m) \ge 0\) for \(m = 0, \dots, L - 1\),
and the lower bound of the base for \(L\) is the smallest base for which it does (section 4.3,
Eq. 10 and 11, which write \(m\) up to \(L\); the farthest distance within \(L\) tokens is
\(L - 1\)). The authors note there that the bound is not strict: stacked layers can reach
beyond one layer's range. \(B\) decays with
\(m\) in an irregular, oscillating way, so the set of good bases is not an interval: a base a
little above a good one can fail (for ``dim=16, L=64``, bases from about 1706 to 1749 hold, 1750
to 2768 fail, and every whole base tried from 2769 to 200,000 holds). The paper's Table 2 lists
the bound for head width 128 (4.3e3 for \(L = 1024\), 2.7e4 for 4096, 8.4e4 for 8192; Figure 1 plots it; also
tabulated by Su, https://kexue.fm/archives/10122, who finds some of the paper's values can be
lowered by a finer search).

`similarity_margin` computes \(B\), `rope_base_context_length` the longest context a base keeps
\(B\) non-negative over, and `rope_base_lower_bound` the smallest base, searched on a fine
geometric grid.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from posenc._checks import check_even_dim, check_float, check_int, check_real_tensor
from posenc.rope import rope_inverse_frequencies

__all__ = ["rope_base_context_length", "rope_base_lower_bound", "similarity_margin"]

#: Longest context the searches accept (they evaluate B at every distance below it).
MAX_CONTEXT = 1 << 20
#: Most cosines one search may evaluate (bases x distances x d/2), about a minute of CPU time.
_MAX_WORK = 1 << 36
_BASES_PER_BLOCK = 64
_DISTANCES_PER_BLOCK = 512


def similarity_margin(distances: Tensor, dim: int, *, base: float = 10000.0) -> Tensor:
    r"""\(B(m) = \sum_i \cos(m\,\theta_i)\) at each distance \(m\) (float64): Xu et al.'s measure of how
    much more a query attends to a similar key than to a random one at that distance.

    Examples:
        >>> similarity_margin(torch.tensor([0, 10, 50]), 16, base=100.0)
        tensor([ 8.0000,  2.0662, -1.9211], dtype=torch.float64)
    """
    m = check_real_tensor("distances", distances, ndim=1, finite=True)
    dim = check_even_dim("dim", dim)
    base = check_float("base", base, minimum=1.0)
    if m.numel() * (dim // 2) > 1 << 27:
        raise ValueError(f"distances has {m.numel()} entries: with dim={dim} that is more than {1 << 27} cosines")
    theta = rope_inverse_frequencies(dim, base=base).to(torch.float64)
    return torch.cos(m.to(torch.float64)[:, None] * theta[None, :]).sum(dim=-1)


def _holds(bases: Tensor, dim: int, length: int) -> Tensor:
    """For each base, whether B(m) >= 0 for every m in 0 .. length-1 (blocks of distances, stopping
    early once every base has failed)."""
    exponents = torch.arange(dim // 2, dtype=torch.float64) * (-2.0 / dim)
    theta = bases[:, None] ** exponents[None, :]  # [bases, d/2]
    alive = torch.ones(bases.shape[0], dtype=torch.bool)
    for start in range(0, length, _DISTANCES_PER_BLOCK):
        m = torch.arange(start, min(length, start + _DISTANCES_PER_BLOCK), dtype=torch.float64)
        live = alive.nonzero()[:, 0]
        margin = torch.cos(m[:, None, None] * theta[None, live, :]).sum(dim=-1)  # [m, live bases]
        alive[live[(margin < 0).any(dim=0)]] = False
        if not bool(alive.any()):
            break
    return alive


def rope_base_context_length(dim: int, base: float, *, max_length: int = MAX_CONTEXT) -> int:
    r"""The longest context \(L\) for which \(B(m) \ge 0\) at every \(m < L\) (at most ``max_length``).

    Examples:
        >>> rope_base_context_length(16, 500.0)
        46
        >>> # holds at every distance below 64
        >>> rope_base_context_length(16, 1e6, max_length=64)
        64
    """
    dim = check_even_dim("dim", dim)
    base = check_float("base", base, minimum=1.0)
    max_length = check_int("max_length", max_length, minimum=1, maximum=MAX_CONTEXT)
    if max_length * (dim // 2) > _MAX_WORK:
        raise ValueError(f"dim={dim} and max_length={max_length} would need more than {_MAX_WORK} cosines")
    theta = rope_inverse_frequencies(dim, base=base).to(torch.float64)
    for start in range(0, max_length, _DISTANCES_PER_BLOCK):
        m = torch.arange(start, min(max_length, start + _DISTANCES_PER_BLOCK), dtype=torch.float64)
        negative = (torch.cos(m[:, None] * theta[None, :]).sum(dim=-1) < 0).nonzero()
        if negative.numel():
            return start + int(negative[0, 0])
    return max_length


def rope_base_lower_bound(dim: int, context_length: int, *, relative_step: float = 1e-3,
                          max_base: float = 1e12) -> float:
    r"""The smallest base keeping \(B(m) \ge 0\) for \(m = 0, \dots, L - 1\), \(L\) = ``context_length``
    (Xu et al.'s bound).

    The bases tried are \((1 + s)^k\), \(k = 1, 2, \dots\), with \(s\) = ``relative_step``, in
    increasing order, up to ``max_base``; the first that keeps \(B\) non-negative is returned. It is
    within a factor \(1 + s\) of the true infimum unless the good bases below it form an island
    narrower than one step (the good set has gaps, see the module docstring).

    Examples:
        >>> # head width 16, 64 tokens: the full study
        >>> round(rope_base_lower_bound(16, 64))
        1707
    """
    dim = check_even_dim("dim", dim)
    length = check_int("context_length", context_length, minimum=1, maximum=MAX_CONTEXT)
    step = check_float("relative_step", relative_step, minimum=1e-6, maximum=1.0)
    top = check_float("max_base", max_base, minimum=1.0 + step, maximum=1e300)
    count = math.ceil(math.log(top) / math.log1p(step))
    if count * length * (dim // 2) > _MAX_WORK:
        raise ValueError(f"the search over {count} bases (relative_step={step:g}, max_base={top:g}) at "
                         f"context_length={length} and dim={dim} could need more than {_MAX_WORK} cosines; "
                         f"use a larger relative_step or a smaller max_base")
    ratio = math.log1p(step)
    for first in range(1, count + 1, _BASES_PER_BLOCK):
        k = torch.arange(first, min(count, first + _BASES_PER_BLOCK - 1) + 1, dtype=torch.float64)
        bases = torch.exp(k * ratio)  # (1 + step)^k, increasing
        good = _holds(bases, dim, length)
        if bool(good.any()):
            return float(bases[good][0])
    raise ValueError(f"no base up to max_base={top:g} keeps B(m) >= 0 for every m below "
                     f"context_length={length} at dim={dim}")


