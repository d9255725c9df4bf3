r"""xPos (Sun et al., "A Length-Extrapolatable Transformer", 2022): RoPE with a decay.

xPos rotates queries and keys exactly as RoPE does and, in addition, multiplies pair \(i\) of
the query at position \(m\) by \(\zeta_i^{m/B}\) and pair \(i\) of the key at position \(n\)
by \(\zeta_i^{-n/B}\), with

\[
    \zeta_i = \frac{2i/d + 0.4}{1.4}
\]

for \(i = 0, \dots, d/2 - 1\) (so \(0.29 \le \zeta_i < 1\)), head width \(d\) = ``dim`` and the scale base \(B\) = ``scale_base`` (512 in the paper). The
dot product of pair \(i\) then carries the factor \(\zeta_i^{(m-n)/B}\): it depends on \(m - n\)
only, and it shrinks as the query moves away from the key, most for the fast low pairs.
``scale_base=math.inf`` switches the decay off, and what is left is RoPE.

Like the authors' code (torchscale, ``xpos_relative_position.py``), the exponent uses positions
*centred* on the middle of the sequence, \(m - c\) with \(c = \lceil \text{length} / 2 \rceil\), while
the rotation uses the positions themselves. The centre cancels in \(q \cdot k\)
(\((m - c) - (n - c) = m - n\)) and only keeps the factors near 1: uncentred, the key of position
8191 would be multiplied by \(\zeta_0^{-8191/512}\), about \(5 \cdot 10^8\), past float16's largest
number.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from posenc._checks import (
    MAX_EXACT_POSITION,
    check_bool,
    check_choice,
    check_even_dim,
    check_float,
    check_int,
    check_position_tensor,
    check_positions_match,
    check_rotary_input,
)
from posenc._rotary import LAYOUTS, angle_table, apply_table, compute_dtype
from posenc.rope_scaling import _check_rotary_dim, rope_inverse_frequencies

__all__ = ["XPos", "xpos_zeta"]

#: The offset gamma of the paper's zeta_i = (2i/dim + gamma) / (1 + gamma).
GAMMA = 0.4


def xpos_zeta(dim: int) -> Tensor:
    r"""The per-pair decay base \(\zeta_i = (2i/d + 0.4) / 1.4\) (\(d\) = ``dim``), ``[dim // 2]``, float64.

    Examples:
        >>> xpos_zeta(8)
        tensor([0.2857, 0.4643, 0.6429, 0.8214], dtype=torch.float64)
    """
    dim = check_even_dim("dim", dim)
    return (torch.arange(0, dim, 2, dtype=torch.float64) / dim + GAMMA) / (1 + GAMMA)


def _check_scale_base(value: object) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value == math.inf:
        return math.inf
    return check_float("scale_base", value, positive=True)


def _check_centre(centre: object) -> float:
    return check_float("centre", centre)


def _check_scale(scale: Tensor, dtype: torch.dtype) -> None:
    """Refuse scale factors that overflow, or vanish, in the dtype the rotation runs in."""
    info = torch.finfo(dtype)
    if scale.numel() and not (float(scale.max()) <= info.max and float(scale.min()) >= info.tiny):
        raise ValueError(f"positions and centre give xPos scale factors outside the {dtype} range "
                         f"(|position - centre| / scale_base is too large): use a centre nearer the positions")


class XPos(nn.Module):
    r"""xPos: ``forward(q, k, positions=None, *, centre=None)`` returns the rotated, scaled ``(q, k)``.

    Args:
        dim: the head dimension (even).
        scale_base: \(B\) in \(\zeta_i^{m/B}\) (512 in the paper); ``math.inf`` switches the decay
            off, leaving plain RoPE.
        base: the RoPE base of the rotation.
        layout: ``"half"`` (pairs (i, i + dim/2)) or ``"interleaved"`` (pairs (2i, 2i+1), the layout
            of the authors' code); pair \(i\) always gets frequency \(\theta_i\) and decay base \(\zeta_i\).
        rotary_dim: rotate and scale only the first ``rotary_dim`` features (even, <= dim), with
            \(\theta\) and \(\zeta\) over that width, as `posenc.rope.RotaryEmbedding` does; the other
            features pass through unchanged. None: all of them.
        centre: the fixed centre of `rotate_queries` and `rotate_keys` (below); default 0.

    Positions and the centre: without ``positions`` the keys sit at ``0 .. k_len - 1`` and the
    queries are the last ``q_len`` of them (decoding with a cache), as in `RotaryEmbedding`. The
    decay exponent uses ``position - centre``; by default \(\text{centre} = \lceil \text{length} / 2 \rceil\) with
    ``length = k_len`` (or ``max(positions) + 1``), which is what torchscale does. Any centre gives
    the same scores, as long as queries and keys share it: ``rotate_queries(q, positions)`` and
    ``rotate_keys(k, positions)`` (the rotation interface shared with `RotaryEmbedding`) use the
    module's fixed ``centre``, so keys rotated once and cached stay valid; `queries` and `keys` take
    the centre as an argument. Tables are computed in float64 on every call (nothing a
    ``.half()`` could truncate).

    Examples:
        >>> xpos = XPos(8)
        >>> q, k = torch.randn(1, 2, 5, 8), torch.randn(1, 2, 5, 8)
        >>> q_x, k_x = xpos(q, k)
        >>> tuple(q_x.shape), tuple(k_x.shape)
        ((1, 2, 5, 8), (1, 2, 5, 8))
        >>> torch.equal(xpos.rotate_keys(k, torch.arange(5)),
        ...             xpos.keys(k, torch.arange(5), centre=0.0))
        True
    """

    def __init__(self, dim: int, *, scale_base: float = 512.0, base: float = 10000.0,
                 layout: str = "half", rotary_dim: int | None = None, centre: float = 0.0) -> None:
        super().__init__()
        self.dim = check_even_dim("dim", dim)
        self.scale_base = _check_scale_base(scale_base)
        self.base = check_float("base", base, positive=True)
        if self.base == 1.0:
            raise ValueError("base must be > 0 and != 1 (every pair would have the same frequency), got 1.0")
        self.layout = check_choice("layout", layout, LAYOUTS)
        self.rotary_dim = None if rotary_dim is None else _check_rotary_dim(rotary_dim, self.dim)
        self.centre = _check_centre(centre)

    def tables(self, positions: Tensor, *, centre: float, downscale: bool) -> tuple[Tensor, Tensor]:
        r"""cos and sin of \(p\,\theta_i\) at position \(p\), times \(\zeta_i^{\pm(p - c)/B}\) about the centre \(c\).

        ``positions [seq]`` or ``[batch, seq]``. ``downscale=False`` gives the query tables (factor
        \(\zeta_i^{(m-c)/B}\)), ``True`` the key tables (its inverse). float64, ``[..., seq, width/2]``
        (width: ``rotary_dim`` or ``dim``).
        """
        pos = check_position_tensor("positions", positions)
        return self._tables(pos, _check_centre(centre), check_bool("downscale", downscale), torch.float64)

    # --8<-- [start:tables]
    def _tables(self, positions: Tensor, centre: float, downscale: bool,
                dtype: torch.dtype) -> tuple[Tensor, Tensor]:
        # cos and sin of position * theta_i, times
        # zeta_i^((position - centre) / B) for queries and its inverse for
        # keys (downscale); float64, [..., seq, width/2]
        pos = positions.to(torch.float64)
        width = self.rotary_dim or self.dim
        theta = rope_inverse_frequencies(width, base=self.base)
        cos, sin = angle_table(pos, theta)
        if self.scale_base == math.inf:
            return cos, sin
        exponent = (pos - centre)[..., None] / self.scale_base
        zeta = xpos_zeta(width).to(pos.device)
        scale = zeta ** (-exponent if downscale else exponent)
        # the rotation runs in dtype: the factors must fit in it
        _check_scale(scale, dtype)
        return cos * scale, sin * scale
    # --8<-- [end:tables]

    def default_centre(self, length: int) -> float:
        r"""torchscale's centre for positions ``0 .. length - 1``: \(\lceil \text{length} / 2 \rceil\)."""
        length = check_int("length", length, minimum=0, maximum=MAX_EXACT_POSITION)
        return float(-((-length) // 2))

    def _turn(self, name: str, x: Tensor, positions: object, centre: float, downscale: bool) -> Tensor:
        x = check_rotary_input(name, x, dim=self.dim)
        pos = check_positions_match("positions", check_position_tensor("positions", positions), name, x)
        cos, sin = self._tables(pos, centre, downscale, compute_dtype(x.dtype))
        return apply_table(x, cos, sin, self.layout, self.rotary_dim)

    def rotate_queries(self, q: Tensor, positions: Tensor) -> Tensor:
        """Rotate and scale queries ``[..., seq, dim]`` at ``positions [seq] or [batch, seq]``, about `centre`."""
        return self._turn("q", q, positions, self.centre, False)

    def rotate_keys(self, k: Tensor, positions: Tensor) -> Tensor:
        """Rotate and inversely scale keys ``[..., seq, dim]`` at ``positions``, about `centre`."""
        return self._turn("k", k, positions, self.centre, True)

    def queries(self, q: Tensor, positions: Tensor, *, centre: float) -> Tensor:
        """`rotate_queries` about the given ``centre``."""
        return self._turn("q", q, positions, _check_centre(centre), False)

    def keys(self, k: Tensor, positions: Tensor, *, centre: float) -> Tensor:
        """`rotate_keys` about the given ``centre``."""
        return self._turn("k", k, positions, _check_centre(centre), True)

    def forward(self, q: Tensor, k: Tensor, positions: Tensor | None = None, *,
                centre: float | None = None) -> tuple[Tensor, Tensor]:
        q, k = check_rotary_input("q", q, dim=self.dim), check_rotary_input("k", k, dim=self.dim)
        if positions is None:
            k_len, q_len = k.shape[-2], q.shape[-2]
            if q_len > k_len:
                raise ValueError(f"q must not be longer than k without explicit positions, got q of "
                                 f"shape {tuple(q.shape)} and k of shape {tuple(k.shape)}")
            k_pos = torch.arange(k_len, device=k.device)
            q_pos = k_pos[k_len - q_len:]
            c = self.default_centre(k_len) if centre is None else _check_centre(centre)
            return self.queries(q, q_pos, centre=c), self.keys(k, k_pos, centre=c)
        if q.shape[-2] != k.shape[-2]:
            raise ValueError(f"q and k must have the same seq length when positions are given, "
                             f"got {tuple(q.shape)} and {tuple(k.shape)} (use queries() and keys())")
        pos = check_positions_match("positions", check_position_tensor("positions", positions), "q", q)
        if centre is None:  # ceil(length / 2) for positions 0 .. length - 1, length = max + 1
            c = float(math.ceil((math.floor(float(pos.max())) + 1) / 2)) if pos.numel() else 0.0
        else:
            c = _check_centre(centre)
        return self.queries(q, pos, centre=c), self.keys(k, pos, centre=c)
