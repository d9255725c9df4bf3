"""Rotary position embedding, RoPE (Su et al., "RoFormer", 2021), and its context-extension variants.

RoPE splits each query and key vector of width ``dim`` into ``dim / 2`` pairs and rotates pair i by
the angle ``m * theta_i`` at position m, with ``theta_i = base^(-2i/dim)``. A rotation keeps lengths,
and the dot product of a query rotated to position m with a key rotated to position n depends only on
``m - n``.

Two layouts of the pairs are in use, and they are not interchangeable:

* ``"half"`` pairs dimension i with dimension ``i + dim/2`` (GPT-NeoX, Hugging Face's ``rotate_half``);
* ``"interleaved"`` pairs dimensions ``2i`` and ``2i + 1`` (the RoFormer paper, Meta's LLaMA code).

Context extension changes the frequencies ``theta_i`` (see `rope_inverse_frequencies`); the
formulas follow the papers and agree with the Hugging Face ``transformers`` RoPE utilities.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import torch
from torch import Tensor, nn

from posenc._checks import check_choice, check_even_dim, check_float, check_int, check_tensor

__all__ = [
    "LAYOUTS", "RotaryEmbedding", "apply_rope", "layout_permutation", "rope_attention_scaling",
    "rope_inverse_frequencies", "rope_long_term_decay",
]

LAYOUTS = ("half", "interleaved")
SCALING_TYPES = ("linear", "ntk", "dynamic", "yarn", "llama3")

# Required and optional keys of each scaling type (besides "type").
_REQUIRED: dict[str, tuple[str, ...]] = {
    "linear": ("factor",),
    "ntk": ("factor",),
    "dynamic": ("factor", "original_max_position_embeddings"),
    "yarn": ("factor", "original_max_position_embeddings"),
    "llama3": ("factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"),
}
_OPTIONAL: dict[str, tuple[str, ...]] = {
    "linear": (),
    "ntk": (),
    "dynamic": (),
    "yarn": ("beta_fast", "beta_slow", "attention_factor", "truncate"),
    "llama3": (),
}


def _check_scaling(scaling: object) -> dict[str, object] | None:
    """Validate a scaling dict: known type, every required key, no unknown key (typos fail loudly)."""
    if scaling is None:
        return None
    if not isinstance(scaling, Mapping):
        raise TypeError(f"scaling must be a dict such as {{'type': 'linear', 'factor': 2.0}} or None, "
                        f"got {type(scaling).__name__}")
    if "type" not in scaling:
        raise ValueError(f"scaling is missing the key 'type' (one of {', '.join(map(repr, SCALING_TYPES))}), "
                         f"got keys {sorted(scaling)}")
    kind = check_choice("scaling['type']", scaling["type"], SCALING_TYPES)
    for key in _REQUIRED[kind]:
        if key not in scaling:
            raise ValueError(f"scaling of type {kind!r} is missing the key {key!r} "
                             f"(required: {', '.join(map(repr, _REQUIRED[kind]))})")
    allowed = {"type", *_REQUIRED[kind], *_OPTIONAL[kind]}
    for key in scaling:
        if key not in allowed:
            raise ValueError(f"scaling of type {kind!r} got the unknown key {key!r} "
                             f"(allowed: {', '.join(map(repr, sorted(allowed)))})")
    checked: dict[str, object] = {"type": kind}
    checked["factor"] = check_float("scaling['factor']", scaling["factor"], minimum=1.0)
    if "original_max_position_embeddings" in scaling:
        checked["original_max_position_embeddings"] = check_int(
            "scaling['original_max_position_embeddings']", scaling["original_max_position_embeddings"], minimum=1)
    if kind == "yarn":
        beta_fast = check_float("scaling['beta_fast']", scaling.get("beta_fast", 32.0), positive=True)
        beta_slow = check_float("scaling['beta_slow']", scaling.get("beta_slow", 1.0), positive=True)
        if beta_fast <= beta_slow:
            raise ValueError(f"scaling['beta_fast'] must be greater than scaling['beta_slow'], "
                             f"got beta_fast={beta_fast}, beta_slow={beta_slow}")
        checked.update(beta_fast=beta_fast, beta_slow=beta_slow)
        if scaling.get("attention_factor") is not None:
            checked["attention_factor"] = check_float(
                "scaling['attention_factor']", scaling["attention_factor"], positive=True)
        truncate = scaling.get("truncate", True)
        if not isinstance(truncate, bool):
            raise TypeError(f"scaling['truncate'] must be True or False, got {truncate!r}")
        checked["truncate"] = truncate
    if kind == "llama3":
        low = check_float("scaling['low_freq_factor']", scaling["low_freq_factor"], positive=True)
        high = check_float("scaling['high_freq_factor']", scaling["high_freq_factor"], positive=True)
        if high <= low:
            raise ValueError(f"scaling['high_freq_factor'] must be greater than scaling['low_freq_factor'], "
                             f"got high_freq_factor={high}, low_freq_factor={low}")
        checked.update(low_freq_factor=low, high_freq_factor=high)
    return checked


# --8<-- [start:frequencies]
def _default_frequencies(dim: int, base: float) -> Tensor:
    """theta_i = base^(-2i/dim), i = 0 .. dim/2 - 1, in float64."""
    return base ** -(torch.arange(0, dim, 2, dtype=torch.float64) / dim)
# --8<-- [end:frequencies]


# --8<-- [start:linear]
def _linear(theta: Tensor, factor: float) -> Tensor:
    # Position interpolation: position m is read as m / factor, i.e. every frequency / factor.
    return theta / factor
# --8<-- [end:linear]


# --8<-- [start:ntk]
def _ntk(dim: int, base: float, factor: float) -> Tensor:
    # NTK-aware: a larger base; the fastest pair keeps theta_0 = 1, the slowest is divided by factor.
    return _default_frequencies(dim, base * factor ** (dim / (dim - 2)))
# --8<-- [end:ntk]


# --8<-- [start:dynamic]
def _dynamic(dim: int, base: float, factor: float, original: int, seq_len: int | None) -> Tensor:
    # Dynamic NTK: unchanged up to the trained length, then an NTK base that grows with seq_len.
    length = original if seq_len is None or seq_len <= original else seq_len
    scale = factor * length / original - (factor - 1)
    return _default_frequencies(dim, base * scale ** (dim / (dim - 2)))
# --8<-- [end:dynamic]


# --8<-- [start:yarn]
def _yarn_pair_index(rotations: float, dim: int, base: float, original: int) -> float:
    # The (fractional) pair index i whose wavelength fits `rotations` times into the trained length.
    return dim * math.log(original / (rotations * 2 * math.pi)) / (2 * math.log(base))


def _yarn(theta: Tensor, dim: int, base: float, factor: float, original: int,
          beta_fast: float, beta_slow: float, truncate: bool) -> Tensor:
    low = _yarn_pair_index(beta_fast, dim, base, original)   # pairs below: many turns, keep as is
    high = _yarn_pair_index(beta_slow, dim, base, original)  # pairs above: < 1 turn, interpolate
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    ramp = ((torch.arange(dim // 2, dtype=torch.float64) - low) / (high - low)).clamp(0, 1)
    return theta / factor * ramp + theta * (1 - ramp)
# --8<-- [end:yarn]


# --8<-- [start:llama3]
def _llama3(theta: Tensor, factor: float, low_freq_factor: float, high_freq_factor: float,
            original: int) -> Tensor:
    wavelength = 2 * math.pi / theta
    # smooth = 1 for short wavelengths (kept), 0 for long ones (divided by factor), linear between.
    smooth = ((original / wavelength - low_freq_factor) / (high_freq_factor - low_freq_factor)).clamp(0, 1)
    return (1 - smooth) * theta / factor + smooth * theta
# --8<-- [end:llama3]


def rope_inverse_frequencies(dim: int, *, base: float = 10000.0, scaling: Mapping[str, object] | None = None,
                             seq_len: int | None = None) -> Tensor:
    """The rotation frequency of each pair, ``theta_i = base^(-2i/dim)``, changed by ``scaling``.

    Args:
        dim: the rotated width (the head dimension), a positive even integer.
        base: the RoPE base (10000 in RoFormer and LLaMA 1/2; 500000 in Llama 3).
        scaling: None, or a dict whose ``"type"`` is one of

            * ``"linear"`` (position interpolation, Chen et al. 2023): ``factor``;
            * ``"ntk"`` (NTK-aware base change): ``factor``; base becomes ``base * factor^(dim/(dim-2))``;
            * ``"dynamic"`` (dynamic NTK): ``factor``, ``original_max_position_embeddings`` L; for
              ``seq_len > L`` the base becomes ``base * (factor*seq_len/L - (factor-1))^(dim/(dim-2))``;
            * ``"yarn"`` (Peng et al. 2023): ``factor``, ``original_max_position_embeddings``, optional
              ``beta_fast`` (32), ``beta_slow`` (1), ``attention_factor`` and ``truncate`` (True);
              its attention factor is given by `rope_attention_scaling`;
            * ``"llama3"``: ``factor``, ``low_freq_factor``, ``high_freq_factor``,
              ``original_max_position_embeddings``.

        seq_len: the current sequence length; only ``"dynamic"`` uses it (None means "not past the
            trained length"), the other types ignore it.

    Returns:
        ``[dim // 2]`` float64 tensor, in radians per position.

    Examples:
        >>> rope_inverse_frequencies(8)
        tensor([1.0000, 0.1000, 0.0100, 0.0010], dtype=torch.float64)
        >>> rope_inverse_frequencies(8, scaling={"type": "linear", "factor": 4.0})
        tensor([0.2500, 0.0250, 0.0025, 0.0003], dtype=torch.float64)
    """
    dim = check_even_dim("dim", dim)
    base = check_float("base", base, positive=True)
    if base == 1.0:
        raise ValueError("base must be > 0 and != 1 (every pair would have the same frequency), got 1.0")
    checked = _check_scaling(scaling)
    if seq_len is not None:
        seq_len = check_int("seq_len", seq_len, minimum=1)
    theta = _default_frequencies(dim, base)
    if checked is None:
        return theta
    kind = checked["type"]
    factor = float(checked["factor"])  # type: ignore[arg-type]
    if kind in ("ntk", "dynamic") and dim == 2:
        raise ValueError(f"dim must be >= 4 for scaling type {kind!r} (the exponent is dim/(dim-2)), got 2")
    if kind == "linear":
        return _linear(theta, factor)
    if kind == "ntk":
        return _ntk(dim, base, factor)
    original = int(checked["original_max_position_embeddings"])  # type: ignore[call-overload]
    if kind == "dynamic":
        return _dynamic(dim, base, factor, original, seq_len)
    if kind == "yarn":
        return _yarn(theta, dim, base, factor, original, float(checked["beta_fast"]),  # type: ignore[arg-type]
                     float(checked["beta_slow"]), bool(checked["truncate"]))  # type: ignore[arg-type]
    return _llama3(theta, factor, float(checked["low_freq_factor"]),  # type: ignore[arg-type]
                   float(checked["high_freq_factor"]), original)  # type: ignore[arg-type]


# --8<-- [start:attention-scaling]
def rope_attention_scaling(scaling: Mapping[str, object] | None = None) -> float:
    """The factor that multiplies cos and sin (so both q and k) for this scaling; 1.0 except YaRN.

    For YaRN it is ``scaling["attention_factor"]`` if given, else ``0.1 * ln(factor) + 1`` (the paper's
    ``sqrt(1/t)``): since q and k are both multiplied, the attention logits grow by its square.

    Examples:
        >>> round(rope_attention_scaling({"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096}), 4)
        1.1386
    """
    checked = _check_scaling(scaling)
    if checked is None or checked["type"] != "yarn":
        return 1.0
    if "attention_factor" in checked:
        return float(checked["attention_factor"])  # type: ignore[arg-type]
    factor = float(checked["factor"])  # type: ignore[arg-type]
    return 1.0 if factor <= 1.0 else 0.1 * math.log(factor) + 1.0
# --8<-- [end:attention-scaling]


def _compute_dtype(dtype: torch.dtype) -> torch.dtype:
    """float16/bfloat16 inputs are rotated in float32; float32 and float64 in their own dtype."""
    return dtype if dtype in (torch.float32, torch.float64) else torch.float32


def _check_x(x: object) -> Tensor:
    tensor = check_tensor("x", x, min_ndim=2, floating=True)
    if tensor.is_complex():
        raise TypeError(f"x must be a real floating-point tensor, got dtype {tensor.dtype}")
    check_even_dim("the last dimension of x", tensor.shape[-1])
    return tensor


def _check_rope_positions(positions: object, x: Tensor) -> Tensor | None:
    """positions: None, [seq] or [batch, seq] (batch = x.shape[0]); integer or real, finite."""
    if positions is None:
        return None
    tensor = check_tensor("positions", positions, ndim=(1, 2), finite=True)
    if tensor.dtype == torch.bool or tensor.is_complex():
        raise TypeError(f"positions must hold integer or real positions, got dtype {tensor.dtype}")
    seq = x.shape[-2]
    if tensor.shape[-1] != seq:
        raise ValueError(f"positions must have {seq} entries in its last dimension (the seq dimension of x, "
                         f"shape {tuple(x.shape)}), got shape {tuple(tensor.shape)}")
    if tensor.ndim == 2:
        if x.ndim < 3:
            raise ValueError(f"positions of shape [batch, seq] need x with a batch dimension, "
                             f"got x of shape {tuple(x.shape)}")
        if tensor.shape[0] not in (1, x.shape[0]):
            raise ValueError(f"positions must have size {x.shape[0]} (the batch of x) or 1 in dimension 0, "
                             f"got shape {tuple(tensor.shape)}")
    return tensor


def _angle_table(positions: Tensor, theta: Tensor) -> tuple[Tensor, Tensor]:
    """cos and sin of positions * theta, ``[..., seq, dim/2]``, computed in float64."""
    angles = positions.to(torch.float64)[..., None] * theta.to(device=positions.device, dtype=torch.float64)
    return angles.cos(), angles.sin()


# --8<-- [start:rotate]
def _rotate(x: Tensor, cos: Tensor, sin: Tensor, layout: str, out: Tensor) -> Tensor:
    """Write x with its pairs rotated (by the angles whose cos and sin are given) into ``out``.

    No temporary at all: each half of ``out`` is written by one multiply, then updated in place
    by a fused multiply-add. The pairs are strided views of x and out, never copies. When a
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
    torch.mul(x1, cos, out=out1)
    out1.addcmul_(x2, sin, value=-1.0)  # x1' = x1 cos - x2 sin
    torch.mul(x2, cos, out=out2)
    out2.addcmul_(x1, sin)              # x2' = x2 cos + x1 sin
    return out
# --8<-- [end:rotate]


def _broadcast_table(table: Tensor, x: Tensor) -> Tensor:
    """[seq, h] stays as is; [batch, seq, h] gets singleton axes for x's middle dims (e.g. heads)."""
    if table.ndim == 3:
        return table.reshape(table.shape[0], *([1] * (x.ndim - 3)), *table.shape[1:])
    return table


def _apply_table(x: Tensor, cos: Tensor, sin: Tensor, layout: str) -> Tensor:
    dtype = _compute_dtype(x.dtype)
    cos = _broadcast_table(cos.to(device=x.device, dtype=dtype), x)
    sin = _broadcast_table(sin.to(device=x.device, dtype=dtype), x)
    source = x if x.dtype == dtype else x.to(dtype)
    out = _rotate(source, cos, sin, layout, torch.empty_like(source))
    return out if out.dtype == x.dtype else out.to(x.dtype)


# --8<-- [start:apply]
def apply_rope(x: Tensor, positions: Tensor | None = None, *, base: float = 10000.0, layout: str = "half",
               scaling: Mapping[str, object] | None = None) -> Tensor:
    """Rotate queries or keys ``x [..., seq, dim]`` by their positions.

    Args:
        x: queries or keys, e.g. ``[batch, heads, seq, head_dim]`` (never the values).
        positions: ``[seq]`` or ``[batch, seq]`` integer or real positions; default ``0 .. seq-1``.
        base: the RoPE base.
        layout: ``"half"`` pairs (i, i + dim/2) as GPT-NeoX and Hugging Face; ``"interleaved"``
            pairs (2i, 2i + 1) as RoFormer and Meta's LLaMA code.
        scaling: a context-extension dict (see `rope_inverse_frequencies`). ``"dynamic"`` uses
            ``max(positions) + 1`` as the sequence length; ``"yarn"`` also multiplies the result by
            `rope_attention_scaling`.

    Returns:
        The rotated tensor, same shape and dtype as x. Angles are computed in float64 and the
        rotation in float32 (float64 for float64 inputs), whatever x's dtype.

    Examples:
        >>> x = torch.tensor([[1.0, 0.0], [1.0, 0.0]])   # the same vector at positions 0 and 1
        >>> apply_rope(x)                                # position 1 turns it by 1 radian
        tensor([[1.0000, 0.0000],
                [0.5403, 0.8415]])
    """
    x = _check_x(x)
    layout = check_choice("layout", layout, LAYOUTS)
    pos = _check_rope_positions(positions, x)
    if pos is None:
        pos = torch.arange(x.shape[-2], dtype=torch.float64)
    seq_len = int(math.floor(float(pos.max()))) + 1 if pos.numel() else 1
    theta = rope_inverse_frequencies(x.shape[-1], base=base, scaling=scaling, seq_len=max(seq_len, 1))
    cos, sin = _angle_table(pos, theta)
    attention = rope_attention_scaling(scaling)
    if attention != 1.0:
        cos, sin = cos * attention, sin * attention
    return _apply_table(x, cos, sin, layout)
# --8<-- [end:apply]


class RotaryEmbedding(nn.Module):
    """RoPE as a module: ``forward(q, k, positions=None)`` returns the rotated ``(q, k)``.

    The cos/sin table (float64, ``[length, dim/2]``) is cached for positions ``0 .. length-1`` and
    grows (doubling) when a longer sequence or a larger position arrives; fractional positions and
    ``"dynamic"`` scaling (whose frequencies depend on the sequence length) are computed directly.
    It gives exactly what `apply_rope` gives. The module itself can be passed as the ``rotary``
    hook of `posenc.attention.SelfAttention`. Without ``positions``, keys get 0 .. k_len-1 and
    queries the last q_len of those (decoding with a cache).

    Args:
        dim: the head dimension (even).
        base: the RoPE base.
        layout: ``"half"`` or ``"interleaved"``.
        scaling: a context-extension dict (see `rope_inverse_frequencies`).

    Examples:
        >>> rotary = RotaryEmbedding(8)
        >>> q, k = torch.randn(1, 2, 5, 8), torch.randn(1, 2, 5, 8)
        >>> q_rot, k_rot = rotary(q, k)
        >>> torch.allclose(q_rot, apply_rope(q)), rotary.cached_length
        (True, 5)
    """

    inv_freq: Tensor

    def __init__(self, dim: int, *, base: float = 10000.0, layout: str = "half",
                 scaling: Mapping[str, object] | None = None) -> None:
        super().__init__()
        self.dim = check_even_dim("dim", dim)
        self.base = check_float("base", base, positive=True)
        self.layout = check_choice("layout", layout, LAYOUTS)
        checked = _check_scaling(scaling)
        self.scaling = None if scaling is None else dict(scaling)
        self._dynamic = checked is not None and checked["type"] == "dynamic"
        self.attention_scaling = rope_attention_scaling(scaling)
        self.register_buffer("inv_freq", rope_inverse_frequencies(self.dim, base=self.base, scaling=scaling),
                             persistent=False)
        self._cos = torch.empty(0, self.dim // 2, dtype=torch.float64)
        self._sin = torch.empty(0, self.dim // 2, dtype=torch.float64)

    @property
    def cached_length(self) -> int:
        """How many positions (0 .. cached_length - 1) the cos/sin cache holds."""
        return int(self._cos.shape[0])

    def _grow(self, length: int) -> None:
        size = max(length, 2 * self.cached_length)
        cos, sin = _angle_table(torch.arange(size, dtype=torch.float64, device=self.inv_freq.device), self.inv_freq)
        self._cos, self._sin = cos * self.attention_scaling, sin * self.attention_scaling

    def tables(self, positions: Tensor) -> tuple[Tensor, Tensor]:
        """cos and sin (float64, scaled by the attention factor) for ``positions [seq] or [batch, seq]``."""
        integral = not positions.is_floating_point() or bool((positions == positions.round()).all())
        if self._dynamic or not integral or (positions.numel() and float(positions.min()) < 0):
            seq_len = int(math.floor(float(positions.max()))) + 1 if positions.numel() else 1
            theta = rope_inverse_frequencies(self.dim, base=self.base, scaling=self.scaling, seq_len=max(seq_len, 1))
            cos, sin = _angle_table(positions, theta)
            return cos * self.attention_scaling, sin * self.attention_scaling
        needed = int(positions.max()) + 1 if positions.numel() else 0
        if needed > self.cached_length:
            self._grow(needed)
        index = positions.to(device=self._cos.device, dtype=torch.long)
        return self._cos[index], self._sin[index]

    def forward(self, q: Tensor, k: Tensor, positions: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k = _check_x(q), _check_x(k)
        for name, tensor in (("q", q), ("k", k)):
            if tensor.shape[-1] != self.dim:
                raise ValueError(f"{name} must have size {self.dim} in its last dimension (the module's dim), "
                                 f"got shape {tuple(tensor.shape)}")
        if q.shape[-2] != k.shape[-2] and positions is not None:
            raise ValueError(f"q and k must have the same seq length when positions are given, "
                             f"got {tuple(q.shape)} and {tuple(k.shape)}")
        pos = _check_rope_positions(positions, q)
        if pos is not None:
            _check_rope_positions(positions, k)
            cos, sin = self.tables(pos)
            return _apply_table(q, cos, sin, self.layout), _apply_table(k, cos, sin, self.layout)
        # default positions: keys at 0 .. k_len-1; queries are the last q_len of them (as when decoding)
        k_len, q_len = k.shape[-2], q.shape[-2]
        if q_len > k_len:
            raise ValueError(f"q must not be longer than k without explicit positions, got q of shape "
                             f"{tuple(q.shape)} and k of shape {tuple(k.shape)}")
        cos, sin = self.tables(torch.arange(k_len))
        q_cos, q_sin = cos[k_len - q_len:], sin[k_len - q_len:]
        return _apply_table(q, q_cos, q_sin, self.layout), _apply_table(k, cos, sin, self.layout)


# --8<-- [start:permutation]
def layout_permutation(dim: int) -> Tensor:
    """Index ``perm`` with ``x_interleaved = x_half[..., perm]``: half-layout pair (i, i + dim/2)
    moves to dimensions (2i, 2i + 1). ``perm.argsort()`` maps back.

    Examples:
        >>> layout_permutation(8)
        tensor([0, 4, 1, 5, 2, 6, 3, 7])
    """
    half = check_even_dim("dim", dim) // 2
    return torch.stack((torch.arange(half), torch.arange(half, 2 * half)), dim=-1).flatten()
# --8<-- [end:permutation]


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
    dim = check_even_dim("dim", dim)
    base = check_float("base", base, positive=True)
    r = check_tensor("distances", distances, ndim=1, finite=True).to(torch.float64)
    angles = r[:, None] * _default_frequencies(dim, base)[None, :]
    partial_sums = torch.polar(torch.ones_like(angles), angles).cumsum(dim=-1)  # S_1 .. S_{dim/2}
    return partial_sums.abs().mean(dim=-1)
# --8<-- [end:decay]

