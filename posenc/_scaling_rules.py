"""The context-extension rules of `posenc.rope_scaling`, and the one table that names them.

Each rule is one function with the signature every rule shares, ``rule(scaling, dim, base,
seq_len) -> theta`` (float64 inverse frequencies of the rotated width ``dim``), plus, where the rule
has one, the factor it puts on cos and sin and a check across its keys. A rule is one row of
`_RULES`: the keys it requires and accepts, and those functions. `posenc.rope_scaling` reads a
scaling dict into its `Scaling` record against this table and calls the row's functions; each rule
cites its paper in `posenc.rope_scaling.rope_inverse_frequencies`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:  # the record reads this table, so the rules name its type only
    import torch
    from torch import Tensor

    from posenc.rope_scaling import Scaling

# torch is imported inside the rules that compute frequencies: the keys, checks and attention
# factors of this table are read by the config reader (posenc.configs), which runs without torch.

__all__: list[str] = []  # private: posenc.rope_scaling is the public face


# ---------------------------------------------------------------- the rules: one signature each
# --8<-- [start:frequencies]
def _default_frequencies(dim: int, base: float) -> Tensor:
    """theta_i = base^(-2i/dim), i = 0 .. dim/2 - 1, in float64."""
    import torch
    return base ** -(torch.arange(0, dim, 2, dtype=torch.float64) / dim)
# --8<-- [end:frequencies]


# --8<-- [start:linear]
def _linear(s: Scaling, dim: int, base: float, seq_len: int | None) -> Tensor:
    # Position interpolation: position m is read as m / factor,
    # i.e. every frequency / factor.
    return _default_frequencies(dim, base) / s.scale
# --8<-- [end:linear]


# --8<-- [start:ntk]
def _ntk(s: Scaling, dim: int, base: float, seq_len: int | None) -> Tensor:
    # NTK-aware: a larger base; the fastest pair keeps theta_0 = 1,
    # the slowest is divided by factor.
    return _default_frequencies(dim, base * s.scale ** (dim / (dim - 2)))
# --8<-- [end:ntk]


# --8<-- [start:dynamic]
def _dynamic(s: Scaling, dim: int, base: float, seq_len: int | None) -> Tensor:
    # Dynamic NTK: unchanged up to the trained length, then an NTK base
    # that grows with seq_len.
    original, factor = _original(s), s.scale
    length = original if seq_len is None or seq_len <= original else seq_len
    scale = factor * length / original - (factor - 1)
    return _default_frequencies(dim, base * scale ** (dim / (dim - 2)))
# --8<-- [end:dynamic]


# --8<-- [start:yarn]
def _yarn_pair_index(
    rotations: float, dim: int, base: float, original: int
) -> float:
    # The (fractional) pair index i whose wavelength fits `rotations` times
    # into the trained length.
    return (
        dim * math.log(original / (rotations * 2 * math.pi))
        / (2 * math.log(base))
    )


def _yarn(s: Scaling, dim: int, base: float, seq_len: int | None) -> Tensor:
    import torch
    theta, original = _default_frequencies(dim, base), _original(s)
    # pairs below low: many turns, kept
    low = _yarn_pair_index(s.beta_fast or 32.0, dim, base, original)
    # pairs above high: < 1 turn, interpolated
    high = _yarn_pair_index(s.beta_slow or 1.0, dim, base, original)
    if s.truncate is not False:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    # beta_fast == beta_slow, or a ramp squeezed to one pair: a step
    if low == high:
        high += 0.001
    pairs = torch.arange(dim // 2, dtype=torch.float64)
    ramp = ((pairs - low) / (high - low)).clamp(0, 1)
    return theta / s.scale * ramp + theta * (1 - ramp)
# --8<-- [end:yarn]


# --8<-- [start:llama3]
def _llama3(s: Scaling, dim: int, base: float, seq_len: int | None) -> Tensor:
    import torch
    theta, original = _default_frequencies(dim, base), _original(s)
    low, high = s.low_freq_factor or 1.0, s.high_freq_factor or 1.0
    wavelength = 2 * math.pi / theta
    # smooth = 1 for short wavelengths (kept), 0 for long ones (divided by
    # factor), linear between; with low == high a step at the wavelength
    # original / low.
    if high > low:
        smooth = ((original / wavelength - low) / (high - low)).clamp(0, 1)
    else:
        smooth = (wavelength <= original / low).to(torch.float64)
    return (1 - smooth) * theta / s.scale + smooth * theta
# --8<-- [end:llama3]


# --8<-- [start:proportional]
def _proportional(s: Scaling, dim: int, base: float,
                  seq_len: int | None) -> Tensor:
    # p-RoPE: the frequencies of the full width; only the fastest `fraction`
    # of the pairs turn, the slowest pairs get theta = 0 (no rotation: those
    # features carry no position at all).
    fraction = (1.0 if s.partial_rotary_factor is None
                else s.partial_rotary_factor)
    theta = _default_frequencies(dim, base) / s.scale
    turning = math.floor(fraction * dim / 2)
    theta[turning:] = 0.0
    return theta
# --8<-- [end:proportional]


# --8<-- [start:longrope]
def _longrope(s: Scaling, dim: int, base: float, seq_len: int | None) -> Tensor:
    import torch
    # LongRoPE: one searched factor per pair; the long list once the
    # sequence is past the trained length.
    long = seq_len is not None and seq_len > _original(s)
    chosen = (s.long_factor if long else s.short_factor) or ()
    return (_default_frequencies(dim, base)
            / torch.tensor(chosen, dtype=torch.float64))
# --8<-- [end:longrope]


def _original(s: Scaling) -> int:
    # Every rule that reads the trained length requires the key (see _RULES).
    return s.original_max_position_embeddings or 1


# --8<-- [start:attention-scaling]
def _yarn_mscale(factor: float, mscale: float = 1.0) -> float:
    # YaRN's sqrt(1/t) = 0.1 ln(s) + 1 (Peng et al. 2023, section 3.4);
    # DeepSeek scales the log by mscale.
    return 1.0 if factor <= 1.0 else 0.1 * mscale * math.log(factor) + 1.0


def _yarn_attention(s: Scaling) -> float:
    if s.attention_factor is not None:
        return s.attention_factor
    # DeepSeek-V2/V3: both given and nonzero
    if s.mscale and s.mscale_all_dim:
        return (
            _yarn_mscale(s.scale, s.mscale)
            / _yarn_mscale(s.scale, s.mscale_all_dim)
        )
    return _yarn_mscale(s.scale)


def _longrope_attention(s: Scaling) -> float:
    if s.attention_factor is not None:
        return s.attention_factor
    factor, original = _longrope_factor(s), _original(s)
    if factor <= 1.0 or original == 1:
        return 1.0
    return math.sqrt(1 + math.log(factor) / math.log(original))
# --8<-- [end:attention-scaling]


def _longrope_factor(s: Scaling) -> float:
    # As transformers: the given factor, else max_position_embeddings / original_max_position_embeddings.
    if s.factor is not None:
        return s.factor
    return (s.max_position_embeddings or 1) / _original(s)


def _no_attention_factor(s: Scaling) -> float:
    return 1.0


# ---------------------------------------------------------------- cross-key checks
def _check_yarn(s: Scaling) -> None:
    fast, slow = s.beta_fast or 32.0, s.beta_slow or 1.0
    if fast < slow:
        raise ValueError(f"scaling['beta_fast'] must be greater than or equal to scaling['beta_slow'], "
                         f"got beta_fast={fast}, beta_slow={slow}")


def _check_llama3(s: Scaling) -> None:
    low, high = s.low_freq_factor or 1.0, s.high_freq_factor or 1.0
    if high < low:
        raise ValueError(f"scaling['high_freq_factor'] must be greater than or equal to "
                         f"scaling['low_freq_factor'], got high_freq_factor={high}, low_freq_factor={low}")


def _check_longrope(s: Scaling) -> None:
    if s.factor is None and s.max_position_embeddings is None and s.attention_factor is None:
        raise ValueError("scaling of type 'longrope' needs 'factor', or 'max_position_embeddings' (the factor is "
                         "then max_position_embeddings / original_max_position_embeddings), or 'attention_factor'")


class _Rule(NamedTuple):
    required: tuple[str, ...]
    optional: tuple[str, ...]
    frequencies: Callable[[Scaling, int, float, int | None], Tensor]
    attention: Callable[[Scaling], float] = _no_attention_factor
    check: Callable[[Scaling], None] | None = None
    min_dim: int = 2             # ntk and dynamic raise the base to d/(d-2)
    full_width: bool = False     # proportional: frequencies over the whole head, no rotary_dim
    length_dependent: bool = False


_RULES: dict[str, _Rule] = {
    "linear": _Rule(("factor",), (), _linear),
    "ntk": _Rule(("factor",), (), _ntk, min_dim=4),
    "dynamic": _Rule(("factor", "original_max_position_embeddings"), (), _dynamic, min_dim=4,
                     length_dependent=True),
    "yarn": _Rule(("factor", "original_max_position_embeddings"),
                  ("beta_fast", "beta_slow", "attention_factor", "mscale", "mscale_all_dim", "truncate"),
                  _yarn, _yarn_attention, _check_yarn),
    "llama3": _Rule(("factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"), (),
                    _llama3, check=_check_llama3),
    "proportional": _Rule((), ("partial_rotary_factor", "factor"), _proportional, full_width=True),
    "longrope": _Rule(("original_max_position_embeddings", "short_factor", "long_factor"),
                      ("factor", "max_position_embeddings", "attention_factor"),
                      _longrope, _longrope_attention, _check_longrope, length_dependent=True),
}
SCALING_TYPES = tuple(_RULES)
