"""Rotary position embedding, RoPE (Su et al., "RoFormer", 2021): the rotation, the module, the layouts.

RoPE splits each query and key vector of width ``dim`` into ``dim / 2`` pairs and rotates pair i by
the angle ``m * theta_i`` at position m, with ``theta_i = base^(-2i/dim)``. A rotation keeps lengths,
and the dot product of a query rotated to position m with a key rotated to position n depends only on
``m - n``. With ``rotary_dim < dim`` (partial rotary) only the first ``rotary_dim`` features turn.

Two layouts of the pairs are in use, and they are not interchangeable:

* ``"half"`` pairs dimension i with dimension ``i + dim/2`` (GPT-NeoX, Hugging Face's ``rotate_half``);
* ``"interleaved"`` pairs dimensions ``2i`` and ``2i + 1`` (the RoFormer paper, Meta's LLaMA code).

The frequencies and their context-extension rules live in `posenc.rope_scaling`, reading a model
config in `posenc.rope_config`, the layouts and checkpoint conversion in `posenc.rope_layouts`;
their public names are re-exported here, so ``posenc.rope.X`` keeps working.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import torch
from torch import Tensor, nn

from posenc._checks import check_choice, check_tensor
from posenc.rope_config import from_config
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
    rope_attention_scaling,
    rope_inverse_frequencies,
)
from posenc.rope_scaling import _check_scaling as _check_scaling  # noqa: PLC0414 - other modules import these from here
from posenc.rope_scaling import _default_frequencies as _default_frequencies  # noqa: PLC0414

__all__ = [
    "LAYOUTS", "LAYOUT_ALIASES", "SCALING_TYPES", "RotaryEmbedding", "apply_rope", "convert_rope_layout",
    "from_config", "layout_permutation", "rope_attention_scaling", "rope_inverse_frequencies",
    "rope_long_term_decay",
]


_CACHE_ROWS = 2**16  # the cos/sin cache grows freely up to this many positions (or 4x the sequence)
_MAX_SEQ_LEN = 2**53
_MAX_ELEMENTS = 2**27  # largest table a small request may build


def _compute_dtype(dtype: torch.dtype) -> torch.dtype:
    """float16/bfloat16 inputs are rotated in float32; float32 and float64 in their own dtype."""
    return dtype if dtype in (torch.float32, torch.float64) else torch.float32


def _check_x(x: object, name: str = "x") -> Tensor:
    tensor = check_tensor(name, x, min_ndim=2, floating=True)
    if tensor.is_complex():
        raise TypeError(f"{name} must be a real floating-point tensor, got dtype {tensor.dtype}")
    width = tensor.shape[-1]
    if width == 0 or width % 2:
        raise ValueError(f"the last dimension of {name} must be a positive even integer, got {width} "
                         f"(shape {tuple(tensor.shape)})")
    return tensor


def _check_position_tensor(positions: object) -> Tensor:
    tensor = check_tensor("positions", positions, ndim=(1, 2), finite=True)
    if tensor.dtype == torch.bool or tensor.is_complex():
        raise TypeError(f"positions must hold integer or real positions, got dtype {tensor.dtype}")
    return tensor


def _check_rope_positions(positions: object, x: Tensor, name: str = "x") -> Tensor | None:
    """positions: None, [seq] or [batch, seq] (batch = x.shape[0]); integer or real, finite."""
    if positions is None:
        return None
    tensor = _check_position_tensor(positions)
    seq = x.shape[-2]
    if tensor.shape[-1] != seq:
        raise ValueError(f"positions must have {seq} entries in its last dimension (the seq dimension of {name}, "
                         f"shape {tuple(x.shape)}), got shape {tuple(tensor.shape)}")
    if tensor.ndim == 2:
        _check_position_batch(tensor, x, name, "[batch, seq]")
    return tensor


def _check_position_batch(tensor: Tensor, x: Tensor, name: str, shape: str) -> None:
    """Positions with a leading batch axis (``shape`` names their layout): ``name`` must have a
    batch axis too, of the same size (or positions a batch of 1, shared by every row)."""
    if x.ndim < 3:
        raise ValueError(f"positions of shape {shape} need {name} with a batch dimension, "
                         f"got {name} of shape {tuple(x.shape)}")
    if tensor.shape[0] not in (1, x.shape[0]):
        raise ValueError(f"positions must have size {x.shape[0]} (the batch of {name}) or 1 in dimension 0, "
                         f"got shape {tuple(tensor.shape)}")


def _sequence_length(positions: Tensor) -> int:
    """max(positions) + 1, at least 1: the length that "dynamic" and "longrope" scaling look at."""
    if not positions.numel():
        return 1
    return max(1, min(math.floor(float(positions.max())) + 1, _MAX_SEQ_LEN))


def _angle_table(positions: Tensor, theta: Tensor) -> tuple[Tensor, Tensor]:
    """cos and sin of positions * theta, ``[..., seq, dim/2]``, computed in float64."""
    angles = positions.to(torch.float64)[..., None] * theta.to(device=positions.device, dtype=torch.float64)
    return angles.cos(), angles.sin()


def _complex_view(t: Tensor) -> Tensor | None:
    """t [..., 2h] seen as h complex numbers (pairs 2i, 2i+1), without a copy; None if strides forbid it."""
    if t.stride(-1) != 1 or t.storage_offset() % 2 or any(s % 2 for s in t.stride()[:-1]):
        return None
    return torch.view_as_complex(t.unflatten(-1, (-1, 2)))


# --8<-- [start:rotate]
def _rotate(x: Tensor, cos: Tensor, sin: Tensor, layout: str, out: Tensor) -> Tensor:
    """Write x with its pairs rotated (by the angles whose cos and sin are given) into ``out``.

    Interleaved pairs (2i, 2i+1) are read as complex numbers and multiplied by ``cos + i sin``:
    one fused pass over x. Half pairs (i, i + dim/2) are strided views of x and out: each half
    of ``out`` is written by one multiply, then updated in place by a fused multiply-add, block
    of positions by block, so that the update finds its operands still in cache. When a
    gradient is needed the same formula is evaluated out of place instead.
    """
    half = x.shape[-1] // 2
    if layout == "half":
        x1, x2, out1, out2 = x[..., :half], x[..., half:], out[..., :half], out[..., half:]
    else:
        x1, x2, out1, out2 = x[..., 0::2], x[..., 1::2], out[..., 0::2], out[..., 1::2]
    if torch.is_grad_enabled() and (x.requires_grad or cos.requires_grad or sin.requires_grad):
        # Training: autograd cannot differentiate writes into `out`, so build the result
        # out of place (same arithmetic, one extra temporary per half).
        first, second = x1 * cos - x2 * sin, x2 * cos + x1 * sin
        if layout == "half":
            return torch.cat((first, second), dim=-1)
        return torch.stack((first, second), dim=-1).flatten(-2)
    if layout == "interleaved":
        x_c, out_c = _complex_view(x), _complex_view(out)
        if x_c is not None and out_c is not None:
            torch.mul(x_c, torch.complex(cos, sin), out=out_c)  # (x1 + i x2)(cos + i sin)
            return out
    for rows in _blocks(x, cos):  # a few positions at a time, so the second pass reads from cache
        c, s = (cos[..., rows, :], sin[..., rows, :]) if cos.shape[-2] > 1 else (cos, sin)
        torch.mul(x1[..., rows, :], c, out=out1[..., rows, :])
        out1[..., rows, :].addcmul_(x2[..., rows, :], s, value=-1.0)  # x1' = x1 cos - x2 sin
        torch.mul(x2[..., rows, :], c, out=out2[..., rows, :])
        out2[..., rows, :].addcmul_(x1[..., rows, :], s)              # x2' = x2 cos + x1 sin
    return out
# --8<-- [end:rotate]


_BLOCK_BYTES = 2**20  # per thread: one block of the half-layout rotation stays in cache between its passes


def _blocks(x: Tensor, cos: Tensor) -> list[slice]:
    """Slices of the seq axis of x, each about _BLOCK_BYTES of x per thread (one slice for small inputs).

    Smaller blocks fit a faster cache but cost one dispatch of four ops each; measured on CPU,
    a megabyte per thread was the best trade (``make bench``).
    """
    seq = x.shape[-2]
    per_position = x.element_size() * (x.numel() // max(seq, 1))
    step = max(1, _BLOCK_BYTES * torch.get_num_threads() // max(per_position, 1))
    if x.ndim < 2 or seq <= step or cos.shape[-2] not in (1, seq):
        return [slice(None)]
    return [slice(start, start + step) for start in range(0, seq, step)]


def _broadcast_table(table: Tensor, x: Tensor) -> Tensor:
    """[seq, h] stays as is; [batch, seq, h] gets singleton axes for x's middle dims (e.g. heads)."""
    if table.ndim == 3:
        return table.reshape(table.shape[0], *([1] * (x.ndim - 3)), *table.shape[1:])
    return table


# --8<-- [start:partial]
def _apply_table(x: Tensor, cos: Tensor, sin: Tensor, layout: str, rotary_dim: int | None = None) -> Tensor:
    """Rotate the first ``rotary_dim`` features of x (all if None) by the table; copy the rest as is."""
    dtype = _compute_dtype(x.dtype)
    cos = _broadcast_table(cos.to(device=x.device, dtype=dtype), x)
    sin = _broadcast_table(sin.to(device=x.device, dtype=dtype), x)
    source = x if x.dtype == dtype else x.to(dtype)
    width = x.shape[-1] if rotary_dim is None else rotary_dim
    out = torch.empty_like(source)
    if width == x.shape[-1]:
        out = _rotate(source, cos, sin, layout, out)
    elif torch.is_grad_enabled() and (source.requires_grad or cos.requires_grad or sin.requires_grad):
        turned = _rotate(source[..., :width], cos, sin, layout, out[..., :width])
        out = torch.cat((turned, source[..., width:]), dim=-1)
    else:  # partial rotary: the pass-through features are copied bit for bit
        _rotate(source[..., :width], cos, sin, layout, out[..., :width])
        out[..., width:] = source[..., width:]
    return out if out.dtype == x.dtype else out.to(x.dtype)
# --8<-- [end:partial]


def _check_width(name: str, x: Tensor, rotary_dim: int | None) -> None:
    if rotary_dim is not None and rotary_dim > x.shape[-1]:
        raise ValueError(f"rotary_dim must be <= the last dimension of {name}, got rotary_dim={rotary_dim} "
                         f"and {name} of shape {tuple(x.shape)}")


# --8<-- [start:apply]
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
        >>> x = torch.tensor([[1.0, 0.0], [1.0, 0.0]])   # the same vector at positions 0 and 1
        >>> apply_rope(x)                                # position 1 turns it by 1 radian
        tensor([[1.0000, 0.0000],
                [0.5403, 0.8415]])
        >>> apply_rope(torch.ones(2, 4), rotary_dim=2)   # features 2 and 3 pass through
        tensor([[ 1.0000,  1.0000,  1.0000,  1.0000],
                [-0.3012,  1.3818,  1.0000,  1.0000]])
    """
    x = _check_x(x)
    layout = check_choice("layout", layout, LAYOUTS)
    width = None if rotary_dim is None else _check_rotary_dim(rotary_dim, x.shape[-1])
    pos = _check_rope_positions(positions, x)
    if pos is None:
        pos = torch.arange(x.shape[-2], dtype=torch.float64)
    theta = rope_inverse_frequencies(x.shape[-1], base=base, scaling=scaling, seq_len=_sequence_length(pos),
                                     rotary_dim=width)
    cos, sin = _angle_table(pos, theta)
    attention = rope_attention_scaling(scaling)
    if attention != 1.0:
        cos, sin = cos * attention, sin * attention
    return _apply_table(x, cos, sin, layout, width)
# --8<-- [end:apply]


class RotaryEmbedding(nn.Module):
    """RoPE as a module: ``forward(q, k, positions=None)`` returns the rotated ``(q, k)``.

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
        >>> rotary.to(torch.bfloat16).inv_freq.dtype    # a cast leaves the frequencies alone
        torch.float64
    """

    def __init__(self, dim: int, *, base: float = 10000.0, layout: str = "half",
                 scaling: Mapping[str, object] | None = None, rotary_dim: int | None = None) -> None:
        super().__init__()
        self.dim = _check_dim("dim", dim)
        self.base = _real("base", base, positive=True)
        self.layout = check_choice("layout", layout, LAYOUTS)
        self.rotary_dim = None if rotary_dim is None else _check_rotary_dim(rotary_dim, self.dim)
        checked = _check_scaling(scaling)
        self.scaling = None if scaling is None else dict(scaling)
        self._length_dependent = checked is not None and checked["type"] in ("dynamic", "longrope")
        self.attention_scaling = rope_attention_scaling(scaling)
        self._frequencies = rope_inverse_frequencies(self.dim, base=self.base, scaling=scaling,
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
            cos, sin = _angle_table(torch.arange(size, dtype=torch.float64, device=device), self._frequencies)
            cos, sin = cos * self.attention_scaling, sin * self.attention_scaling
            self._cache[device] = (cos, sin)
        return cos, sin

    def _tables(self, positions: Tensor, device: torch.device) -> tuple[Tensor, Tensor]:
        integral = not positions.is_floating_point() or bool((positions == positions.round()).all())
        low = float(positions.min()) if positions.numel() else 0.0
        high = float(positions.max()) if positions.numel() else -1.0
        limit = max(_CACHE_ROWS, 4 * positions.shape[-1])
        if self._length_dependent or not integral or low < 0 or high + 1 > limit:
            theta = rope_inverse_frequencies(self.dim, base=self.base, scaling=self.scaling,
                                             seq_len=_sequence_length(positions), rotary_dim=self.rotary_dim)
            cos, sin = _angle_table(positions.to(device), theta)
            return cos * self.attention_scaling, sin * self.attention_scaling
        cos, sin = self._cached(int(high) + 1, device)
        index = positions.to(device=device, dtype=torch.long)
        return cos[index], sin[index]

    def tables(self, positions: Tensor) -> tuple[Tensor, Tensor]:
        """cos and sin (float64, scaled by the attention factor) for ``positions [seq] or [batch, seq]``."""
        pos = _check_position_tensor(positions)
        return self._tables(pos, pos.device)

    def forward(self, q: Tensor, k: Tensor, positions: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k = _check_x(q, "q"), _check_x(k, "k")
        for name, tensor in (("q", q), ("k", k)):
            if tensor.shape[-1] != self.dim:
                raise ValueError(f"{name} must have size {self.dim} in its last dimension (the module's dim), "
                                 f"got shape {tuple(tensor.shape)}")
        if q.shape[-2] != k.shape[-2] and positions is not None:
            raise ValueError(f"q and k must have the same seq length when positions are given, "
                             f"got {tuple(q.shape)} and {tuple(k.shape)}")
        pos = _check_rope_positions(positions, q, "q")
        if pos is not None:
            _check_rope_positions(positions, k, "k")
            cos, sin = self._tables(pos, q.device)
            return (_apply_table(q, cos, sin, self.layout, self.rotary_dim),
                    _apply_table(k, cos, sin, self.layout, self.rotary_dim))
        # default positions: keys at 0 .. k_len-1; queries are the last q_len of them (as when decoding)
        k_len, q_len = k.shape[-2], q.shape[-2]
        if q_len > k_len:
            raise ValueError(f"q must not be longer than k without explicit positions, got q of shape "
                             f"{tuple(q.shape)} and k of shape {tuple(k.shape)}")
        cos, sin = self._tables(torch.arange(k_len, device=k.device), k.device)
        q_cos, q_sin = cos[k_len - q_len:], sin[k_len - q_len:]
        return (_apply_table(q, q_cos, q_sin, self.layout, self.rotary_dim),
                _apply_table(k, cos, sin, self.layout, self.rotary_dim))


# --8<-- [start:decay]
def rope_long_term_decay(distances: Tensor, dim: int, *, base: float = 10000.0) -> Tensor:
    """RoFormer's bound on |q_m . k_n| as a function of the distance m - n (section 3.4.3).

    With pairs summed by Abel transformation, ``|q_m . k_n| <= (max_i |h_{i+1} - h_i|) *
    sum_j |S_j|`` where ``S_j = sum_{i<j} exp(1j * (m - n) * theta_i)``; the paper plots the
    relative upper bound ``mean_j |S_j|`` (j = 1 .. dim/2), which this returns, float64.

    Examples:
        >>> rope_long_term_decay(torch.tensor([0, 1000]), 128)
        tensor([32.5000,  4.4708], dtype=torch.float64)
    """
    dim = _check_dim("dim", dim)
    base = _real("base", base, positive=True)
    r = check_tensor("distances", distances, ndim=1, finite=True)
    if r.dtype == torch.bool or r.is_complex():
        raise TypeError(f"distances must hold integer or real distances, got dtype {r.dtype}")
    if r.numel() * (dim // 2) > _MAX_ELEMENTS:
        raise ValueError(f"distances has {r.numel()} entries: with dim={dim} the table would hold more than "
                         f"{_MAX_ELEMENTS} numbers")
    angles = r.to(torch.float64)[:, None] * _default_frequencies(dim, base)[None, :]
    partial_sums = torch.polar(torch.ones_like(angles), angles).cumsum(dim=-1)  # S_1 .. S_{dim/2}
    return partial_sums.abs().mean(dim=-1)
# --8<-- [end:decay]
