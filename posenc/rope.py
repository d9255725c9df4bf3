r"""Rotary position embedding, RoPE (Su et al., "RoFormer", 2021): the rotation, the module, the layouts.

RoPE splits each query and key vector of width \(d\) = ``dim`` into \(d/2\) pairs and rotates pair
\(i\) by the angle \(m\,\theta_i\) at position \(m\), with \(\theta_i = \text{base}^{-2i/d}\). A
rotation keeps lengths, and the dot product of a query rotated to position \(m\) with a key rotated
to position \(n\) depends only on \(m - n\). With ``rotary_dim < dim`` (partial rotary) only the
first ``rotary_dim`` features turn.

Two layouts of the pairs are in use, and they are not interchangeable:

* ``"half"`` pairs dimension i with dimension ``i + dim/2`` (GPT-NeoX, Hugging Face's ``rotate_half``);
* ``"interleaved"`` pairs dimensions ``2i`` and ``2i + 1`` (the RoFormer paper, Meta's LLaMA code).

The frequencies and their context-extension rules live in `posenc.rope_scaling`, reading a model
config in `posenc.configs`, the layouts and checkpoint conversion in `posenc.rope_layouts`;
their public names are re-exported here, so ``posenc.rope.X`` keeps working.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import torch
from torch import Tensor, nn

from posenc._checks import (
    MAX_ELEMENTS,
    MAX_EXACT_POSITION,
    check_choice,
    check_position_tensor,
    check_positions_match,
    check_rotary_input,
    check_tensor,
)
from posenc._rotary import angle_table, apply_table, frequency_ladder
from posenc.configs import from_config
from posenc.rope_layouts import (
    LAYOUT_ALIASES,
    LAYOUTS,
    convert_rope_layout,
    layout_permutation,
)
from posenc.rope_scaling import (
    SCALING_TYPES,
    _check_dim,
    _check_rotary_dim,
    _real,
    parse_scaling,
    rope_attention_scaling,
    rope_inverse_frequencies,
)

__all__ = [
    "LAYOUTS", "LAYOUT_ALIASES", "SCALING_TYPES", "RotaryEmbedding", "apply_rope", "convert_rope_layout",
    "from_config", "layout_permutation", "rope_attention_scaling", "rope_inverse_frequencies",
    "rope_long_term_decay",
]


_CACHE_ROWS = 2**16  # the cos/sin cache grows freely up to this many positions (or 4x the sequence)


def _positions_of(x_name: str, x: Tensor, positions: object) -> Tensor:
    """positions [seq] or [batch, seq] (batch = x.shape[0]) of the rows of x; integer or real, finite."""
    return check_positions_match("positions", check_position_tensor("positions", positions), x_name, x)


def _sequence_length(positions: Tensor) -> int:
    """max(positions) + 1, at least 1: the length that "dynamic" and "longrope" scaling look at."""
    if not positions.numel():
        return 1
    return max(1, min(math.floor(float(positions.max())) + 1, MAX_EXACT_POSITION))


def apply_rope(x: Tensor, positions: Tensor | None = None, *, base: float = 10000.0, layout: str = "half",
               scaling: Mapping[str, object] | None = None, rotary_dim: int | None = None) -> Tensor:
    """Rotate queries or keys ``x [..., seq, dim]`` by their positions.

    Args:
        x: queries or keys, e.g. ``[batch, heads, seq, head_dim]`` (never the values).
        positions: ``[seq]`` or ``[batch, seq]`` integer or real positions; default ``0 .. seq-1``.
        base: the RoPE base.
        layout: ``"half"`` pairs (i, i + d/2) as GPT-NeoX and Hugging Face; ``"interleaved"``
            pairs (2i, 2i + 1) as RoFormer and Meta's LLaMA code (d: the rotated width).
        scaling: a context-extension dict (see `rope_inverse_frequencies`). ``"dynamic"`` and
            ``"longrope"`` use ``max(positions) + 1`` as the sequence length; the result is
            multiplied by `rope_attention_scaling` (YaRN's and LongRoPE's attention factor).
        rotary_dim: rotate only the first ``rotary_dim`` features (even, <= dim), with frequencies
            over that width; the other features pass through unchanged. None rotates all of them.

    Returns:
        The rotated tensor, same shape and dtype as x. Angles are computed in float64 and the
        rotation in float32 (float64 for float64 inputs), whatever x's dtype.

    Examples:
        >>> # the same vector at positions 0 and 1
        >>> x = torch.tensor([[1.0, 0.0], [1.0, 0.0]])
        >>> # position 1 turns it by 1 radian
        >>> apply_rope(x)
        tensor([[1.0000, 0.0000],
                [0.5403, 0.8415]])
        >>> apply_rope(torch.ones(2, 4), rotary_dim=2)   # features 2 and 3 pass through
        tensor([[ 1.0000,  1.0000,  1.0000,  1.0000],
                [-0.3012,  1.3818,  1.0000,  1.0000]])
    """
    x = check_rotary_input("x", x)
    layout = check_choice("layout", layout, LAYOUTS)
    width = None if rotary_dim is None else _check_rotary_dim(rotary_dim, x.shape[-1])
    pos = torch.arange(x.shape[-2], dtype=torch.float64) if positions is None else _positions_of("x", x, positions)
    return _rope(x, pos, base=base, layout=layout, scaling=scaling, rotary_dim=width)


# --8<-- [start:apply]
def _rope(x: Tensor, positions: Tensor, *, base: float, layout: str,
          scaling: Mapping[str, object] | None,
          rotary_dim: int | None) -> Tensor:
    """`apply_rope` once its arguments are checked: the tables from float64
    angles, then the rotation."""
    theta = rope_inverse_frequencies(x.shape[-1], base=base, scaling=scaling,
                                     seq_len=_sequence_length(positions),
                                     rotary_dim=rotary_dim)
    cos, sin = angle_table(positions, theta)  # [..., seq, rotary_dim / 2]
    # YaRN's and LongRoPE's factor on q and k
    attention = rope_attention_scaling(scaling)
    if attention != 1.0:
        cos, sin = cos * attention, sin * attention
    return apply_table(x, cos, sin, layout, rotary_dim)
# --8<-- [end:apply]


class RotaryEmbedding(nn.Module):
    """RoPE as a module: ``forward(q, k, positions=None)`` returns the rotated ``(q, k)``.

    ``rotate_queries(q, positions)`` and ``rotate_keys(k, positions)`` rotate one of them (the
    rotation interface of posenc's rotary methods, shared with `posenc.xpos.XPos`); for RoPE the
    two are the same rotation.

    The frequencies are float64 and kept outside the module's buffers, so ``.to(torch.bfloat16)``,
    ``.half()`` and the like never round them. The cos/sin table (float64, ``[length, d/2]``, one per
    device) is cached for positions ``0 .. length-1`` and grows (doubling) when a longer sequence or a
    larger position arrives, up to ``max(2**16, 4 * seq)`` rows; positions beyond that, fractional or
    negative positions, and ``"dynamic"``/``"longrope"`` scaling (whose frequencies depend on the
    sequence length) are computed directly. It gives exactly what `apply_rope` gives. The module can
    be passed as the ``rotary`` hook of `posenc.attention.SelfAttention`. Without ``positions``, keys
    get 0 .. k_len-1 and queries the last q_len of those (decoding with a cache).

    Args:
        dim: the head dimension (even).
        base: the RoPE base.
        layout: ``"half"`` or ``"interleaved"``.
        scaling: a context-extension dict (see `rope_inverse_frequencies`).
        rotary_dim: rotate only the first ``rotary_dim`` features (partial rotary); None rotates all.

    Examples:
        >>> rotary = RotaryEmbedding(8)
        >>> q, k = torch.randn(1, 2, 5, 8), torch.randn(1, 2, 5, 8)
        >>> q_rot, k_rot = rotary(q, k)
        >>> torch.allclose(q_rot, apply_rope(q)), rotary.cached_length
        (True, 5)
        >>> torch.equal(rotary.rotate_keys(k, torch.arange(5)), k_rot)
        True
        >>> # a cast leaves the frequencies alone
        >>> rotary.to(torch.bfloat16).inv_freq.dtype
        torch.float64
    """

    def __init__(self, dim: int, *, base: float = 10000.0, layout: str = "half",
                 scaling: Mapping[str, object] | None = None, rotary_dim: int | None = None) -> None:
        super().__init__()
        self.dim = _check_dim("dim", dim)
        self.base = _real("base", base, positive=True)
        self.layout = check_choice("layout", layout, LAYOUTS)
        self.rotary_dim = None if rotary_dim is None else _check_rotary_dim(rotary_dim, self.dim)
        record = parse_scaling(scaling)
        self.scaling = None if record is None else dict(scaling) if isinstance(scaling, Mapping) else record.to_dict()
        self._length_dependent = record is not None and record.length_dependent
        self.attention_scaling = rope_attention_scaling(record)
        self._frequencies = rope_inverse_frequencies(self.dim, base=self.base, scaling=record,
                                                     rotary_dim=self.rotary_dim)
        self._cache: dict[torch.device, tuple[Tensor, Tensor]] = {}

    @property
    def inv_freq(self) -> Tensor:
        """The frequencies (float64, ``[d/2]``) at lengths within the trained context."""
        return self._frequencies.clone()

    @property
    def cached_length(self) -> int:
        """How many positions (0 .. cached_length - 1) the largest cos/sin cache holds."""
        return max((int(cos.shape[0]) for cos, _ in self._cache.values()), default=0)

    def _cached(self, length: int, device: torch.device) -> tuple[Tensor, Tensor]:
        cos, sin = self._cache.get(device, (None, None))
        if cos is None or sin is None or cos.shape[0] < length:
            size = max(length, 2 * (0 if cos is None else int(cos.shape[0])))
            cos, sin = angle_table(torch.arange(size, dtype=torch.float64, device=device), self._frequencies)
            cos, sin = cos * self.attention_scaling, sin * self.attention_scaling
            self._cache[device] = (cos, sin)
        return cos, sin

    def _tables(self, positions: Tensor, device: torch.device) -> tuple[Tensor, Tensor]:
        """cos and sin at ``positions`` (the model looks them up once per call for all its layers)."""
        integral = not positions.is_floating_point() or bool((positions == positions.round()).all())
        low = float(positions.min()) if positions.numel() else 0.0
        high = float(positions.max()) if positions.numel() else -1.0
        limit = max(_CACHE_ROWS, 4 * positions.shape[-1])
        if self._length_dependent or not integral or low < 0 or high + 1 > limit:
            theta = rope_inverse_frequencies(self.dim, base=self.base, scaling=self.scaling,
                                             seq_len=_sequence_length(positions), rotary_dim=self.rotary_dim)
            cos, sin = angle_table(positions.to(device), theta)
            return cos * self.attention_scaling, sin * self.attention_scaling
        cos, sin = self._cached(int(high) + 1, device)
        index = positions.to(device=device, dtype=torch.long)
        return cos[index], sin[index]

    def tables(self, positions: Tensor) -> tuple[Tensor, Tensor]:
        """cos and sin (float64, scaled by the attention factor) for ``positions [seq] or [batch, seq]``."""
        pos = check_position_tensor("positions", positions)
        return self._tables(pos, pos.device)

    def rotate_queries(self, q: Tensor, positions: Tensor) -> Tensor:
        """Rotate queries ``q [..., seq, dim]`` at ``positions [seq]`` or ``[batch, seq]``."""
        q = check_rotary_input("q", q, dim=self.dim)
        cos, sin = self._tables(_positions_of("q", q, positions), q.device)
        return apply_table(q, cos, sin, self.layout, self.rotary_dim)

    def rotate_keys(self, k: Tensor, positions: Tensor) -> Tensor:
        """Rotate keys ``k [..., seq, dim]`` at ``positions [seq]`` or ``[batch, seq]`` (as queries are)."""
        k = check_rotary_input("k", k, dim=self.dim)
        cos, sin = self._tables(_positions_of("k", k, positions), k.device)
        return apply_table(k, cos, sin, self.layout, self.rotary_dim)

    def forward(self, q: Tensor, k: Tensor, positions: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k = check_rotary_input("q", q, dim=self.dim), check_rotary_input("k", k, dim=self.dim)
        if q.shape[-2] != k.shape[-2] and positions is not None:
            raise ValueError(f"q and k must have the same seq length when positions are given, "
                             f"got {tuple(q.shape)} and {tuple(k.shape)}")
        if positions is not None:
            pos = _positions_of("k", k, _positions_of("q", q, positions))
            cos, sin = self._tables(pos, q.device)
            return (apply_table(q, cos, sin, self.layout, self.rotary_dim),
                    apply_table(k, cos, sin, self.layout, self.rotary_dim))
        # default positions: keys at 0 .. k_len-1; queries are the last q_len of them (as when decoding)
        k_len, q_len = k.shape[-2], q.shape[-2]
        if q_len > k_len:
            raise ValueError(f"q must not be longer than k without explicit positions, got q of shape "
                             f"{tuple(q.shape)} and k of shape {tuple(k.shape)}")
        cos, sin = self._tables(torch.arange(k_len, device=k.device), k.device)
        q_cos, q_sin = cos[k_len - q_len:], sin[k_len - q_len:]
        return (apply_table(q, q_cos, q_sin, self.layout, self.rotary_dim),
                apply_table(k, cos, sin, self.layout, self.rotary_dim))


def rope_long_term_decay(distances: Tensor, dim: int, *, base: float = 10000.0) -> Tensor:
    r"""RoFormer's bound on \(|q_m \cdot k_n|\) as a function of the distance \(m - n\) (section 3.4.3).

    With pairs summed by Abel transformation, \(|q_m \cdot k_n| \le \max_i |h_{i+1} - h_i| \sum_j |S_j|\)
    where \(S_j = \sum_{i<j} e^{\mathrm{i}(m-n)\theta_i}\); the paper plots the relative upper bound,
    the mean of \(|S_j|\) over \(j = 1, \dots, d/2\) (\(d\) = ``dim``), which this returns, float64.

    Examples:
        >>> rope_long_term_decay(torch.tensor([0, 1000]), 128)
        tensor([32.5000,  4.4708], dtype=torch.float64)
    """
    dim = _check_dim("dim", dim)
    base = _real("base", base, positive=True)
    r = check_tensor("distances", distances, ndim=1, finite=True)
    if r.dtype == torch.bool or r.is_complex():
        raise TypeError(f"distances must hold integer or real distances, got dtype {r.dtype}")
    if r.numel() * (dim // 2) > MAX_ELEMENTS:
        raise ValueError(f"distances has {r.numel()} entries: with dim={dim} the table would hold more than "
                         f"{MAX_ELEMENTS} numbers")
    return _long_term_decay(r, dim, base)


# --8<-- [start:decay]
def _long_term_decay(distances: Tensor, dim: int, base: float) -> Tensor:
    """mean_j |S_j| for each distance m - n, float64 (arguments checked by
    `rope_long_term_decay`)."""
    # [len, dim/2]
    angles = (distances.to(torch.float64)[:, None]
              * frequency_ladder(dim, base)[None, :])
    # S_1 .. S_{dim/2}
    partial_sums = torch.polar(torch.ones_like(angles),
                               angles).cumsum(dim=-1)
    return partial_sums.abs().mean(dim=-1)
# --8<-- [end:decay]
