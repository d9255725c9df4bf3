"""RoPE frequencies and the rules that change them for longer contexts (or fewer rotated pairs).

`rope_inverse_frequencies` returns ``theta_i = base^(-2i/d)`` for the rotated width ``d``, changed by a
``scaling`` dict whose keys follow the ``rope_parameters`` of Hugging Face ``transformers`` (the types
and formulas agree with its ``modeling_rope_utils``; each rule cites its paper below).
`rope_attention_scaling` returns the factor a rule puts on cos and sin (YaRN's and LongRoPE's
attention factor; 1.0 for the others). `posenc.rope` re-exports both.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import torch
from torch import Tensor

from posenc._checks import check_choice, check_even_dim, check_float, check_int

__all__ = ["MAX_ROPE_DIM", "SCALING_TYPES", "rope_attention_scaling", "rope_inverse_frequencies"]

SCALING_TYPES = ("linear", "ntk", "dynamic", "yarn", "llama3", "proportional", "longrope")
MAX_ROPE_DIM = 2**16  # widest head (or rotated width) accepted; real models use <= 1024
_MAX_SEQ_LEN = 2**53  # beyond this, integer positions are no longer exact in float64

# Required and optional keys of each scaling type (besides "type").
_REQUIRED: dict[str, tuple[str, ...]] = {
    "linear": ("factor",),
    "ntk": ("factor",),
    "dynamic": ("factor", "original_max_position_embeddings"),
    "yarn": ("factor", "original_max_position_embeddings"),
    "llama3": ("factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"),
    "proportional": ("partial_rotary_factor",),
    "longrope": ("factor", "original_max_position_embeddings", "short_factor", "long_factor"),
}
_OPTIONAL: dict[str, tuple[str, ...]] = {
    "linear": (),
    "ntk": (),
    "dynamic": (),
    "yarn": ("beta_fast", "beta_slow", "attention_factor", "mscale", "mscale_all_dim", "truncate"),
    "llama3": (),
    "proportional": ("factor",),
    "longrope": ("attention_factor",),
}


def _real(name: str, value: object, **bounds: float | bool) -> float:
    """`check_float`, with integers too large for a float answered by a ValueError that names them."""
    try:
        return check_float(name, value, **bounds)  # type: ignore[arg-type]
    except OverflowError:
        bits = int(value).bit_length()  # type: ignore[call-overload]
        raise ValueError(f"{name} must be a finite real number, got an integer of {bits} bits "
                         f"(too large for a float)") from None


def _check_dim(name: str, value: object) -> int:
    dim = check_even_dim(name, value)
    if dim > MAX_ROPE_DIM:
        raise ValueError(f"{name} must be a positive even integer <= {MAX_ROPE_DIM}, got {dim}")
    return dim


def _check_factors(name: str, value: object) -> tuple[float, ...]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise TypeError(f"{name} must be a list of positive numbers (one per rotated pair), "
                        f"got {type(value).__name__}")
    return tuple(_real(f"{name}[{i}]", v, positive=True) for i, v in enumerate(value))


def _check_scaling(scaling: object) -> dict[str, object] | None:
    """Validate a scaling dict: known type, every required key, no unknown key (typos fail loudly)."""
    if scaling is None:
        return None
    if not isinstance(scaling, Mapping):
        raise TypeError(f"scaling must be a dict such as {{'type': 'linear', 'factor': 2.0}} or None, "
                        f"got {type(scaling).__name__}")
    if "type" not in scaling:
        raise ValueError(f"scaling is missing the key 'type' (one of {', '.join(map(repr, SCALING_TYPES))}), "
                         f"got keys {sorted(map(str, scaling))}")
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
    checked["factor"] = _real("scaling['factor']", scaling.get("factor", 1.0), minimum=1.0)
    if "original_max_position_embeddings" in scaling:
        checked["original_max_position_embeddings"] = check_int(
            "scaling['original_max_position_embeddings']", scaling["original_max_position_embeddings"],
            minimum=1, maximum=_MAX_SEQ_LEN)
    if kind == "yarn":
        beta_fast = _real("scaling['beta_fast']", scaling.get("beta_fast", 32.0), positive=True)
        beta_slow = _real("scaling['beta_slow']", scaling.get("beta_slow", 1.0), positive=True)
        if beta_fast <= beta_slow:
            raise ValueError(f"scaling['beta_fast'] must be greater than scaling['beta_slow'], "
                             f"got beta_fast={beta_fast}, beta_slow={beta_slow}")
        checked.update(beta_fast=beta_fast, beta_slow=beta_slow)
        for key in ("attention_factor", "mscale", "mscale_all_dim"):
            if scaling.get(key) is not None:
                bounds = {"positive": True} if key == "attention_factor" else {"minimum": 0.0}
                checked[key] = _real(f"scaling[{key!r}]", scaling[key], **bounds)
        truncate = scaling.get("truncate", True)
        if not isinstance(truncate, bool):
            raise TypeError(f"scaling['truncate'] must be True or False, got {truncate!r}")
        checked["truncate"] = truncate
    if kind == "llama3":
        low = _real("scaling['low_freq_factor']", scaling["low_freq_factor"], positive=True)
        high = _real("scaling['high_freq_factor']", scaling["high_freq_factor"], positive=True)
        if high <= low:
            raise ValueError(f"scaling['high_freq_factor'] must be greater than scaling['low_freq_factor'], "
                             f"got high_freq_factor={high}, low_freq_factor={low}")
        checked.update(low_freq_factor=low, high_freq_factor=high)
    if kind == "proportional":
        checked["partial_rotary_factor"] = _real(
            "scaling['partial_rotary_factor']", scaling["partial_rotary_factor"], minimum=0.0, maximum=1.0)
    if kind == "longrope":
        checked["short_factor"] = _check_factors("scaling['short_factor']", scaling["short_factor"])
        checked["long_factor"] = _check_factors("scaling['long_factor']", scaling["long_factor"])
        if scaling.get("attention_factor") is not None:
            checked["attention_factor"] = _real("scaling['attention_factor']", scaling["attention_factor"],
                                                positive=True)
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


# --8<-- [start:proportional]
def _proportional(dim: int, base: float, factor: float, fraction: float) -> Tensor:
    # p-RoPE: the frequencies of the full width; only the fastest `fraction` of the pairs turn,
    # the slowest pairs get theta = 0 (no rotation: those features carry no position at all).
    theta = _default_frequencies(dim, base) / factor
    turning = math.floor(fraction * dim / 2)
    theta[turning:] = 0.0
    return theta
# --8<-- [end:proportional]


# --8<-- [start:longrope]
def _longrope(theta: Tensor, short: tuple[float, ...], long: tuple[float, ...], original: int,
              seq_len: int | None) -> Tensor:
    # LongRoPE: one searched factor per pair; the long list once the sequence is past the trained length.
    chosen = long if seq_len is not None and seq_len > original else short
    return theta / torch.tensor(chosen, dtype=torch.float64)
# --8<-- [end:longrope]


def rope_inverse_frequencies(dim: int, *, base: float = 10000.0, scaling: Mapping[str, object] | None = None,
                             seq_len: int | None = None, rotary_dim: int | None = None) -> Tensor:
    """The rotation frequency of each pair, ``theta_i = base^(-2i/d)``, changed by ``scaling``.

    Args:
        dim: the head dimension, a positive even integer.
        base: the RoPE base (10000 in RoFormer and LLaMA 1/2; 500000 in Llama 3).
        scaling: None, or a dict whose ``"type"`` is one of

            * ``"linear"`` (position interpolation, Chen et al. 2023): ``factor``;
            * ``"ntk"`` (NTK-aware base change): ``factor``; base becomes ``base * factor^(d/(d-2))``;
            * ``"dynamic"`` (dynamic NTK): ``factor``, ``original_max_position_embeddings`` L; for
              ``seq_len > L`` the base becomes ``base * (factor*seq_len/L - (factor-1))^(d/(d-2))``;
            * ``"yarn"`` (Peng et al. 2023): ``factor``, ``original_max_position_embeddings``, optional
              ``beta_fast`` (32), ``beta_slow`` (1), ``truncate`` (True) and the attention-factor keys
              ``attention_factor``, ``mscale``, ``mscale_all_dim`` (see `rope_attention_scaling`);
            * ``"llama3"``: ``factor``, ``low_freq_factor``, ``high_freq_factor``,
              ``original_max_position_embeddings``;
            * ``"proportional"`` (p-RoPE, Barbero et al. 2024): ``partial_rotary_factor`` p in [0, 1],
              optional ``factor`` (1); frequencies over the full ``dim``, divided by ``factor``, and the
              slowest ``dim/2 - floor(p*dim/2)`` pairs set to 0 (not rotated);
            * ``"longrope"`` (Ding et al. 2024): ``factor``, ``original_max_position_embeddings`` L,
              ``short_factor`` and ``long_factor`` (one number per rotated pair), optional
              ``attention_factor``; ``theta_i / long_factor[i]`` when ``seq_len > L``, else
              ``theta_i / short_factor[i]``.

        seq_len: the current sequence length; only ``"dynamic"`` and ``"longrope"`` use it (None means
            "not past the trained length"), the other types ignore it.
        rotary_dim: rotate only the first ``rotary_dim`` features (partial rotary, as GPT-NeoX's
            ``rotary_pct`` or ``partial_rotary_factor``): the frequencies are then computed over that width,
            ``d = rotary_dim``. None means ``d = dim``. Not allowed with ``"proportional"``.

    Returns:
        ``[d // 2]`` float64 tensor, in radians per position.

    Examples:
        >>> rope_inverse_frequencies(8)
        tensor([1.0000, 0.1000, 0.0100, 0.0010], dtype=torch.float64)
        >>> rope_inverse_frequencies(8, scaling={"type": "linear", "factor": 4.0})
        tensor([0.2500, 0.0250, 0.0025, 0.0003], dtype=torch.float64)
        >>> rope_inverse_frequencies(8, rotary_dim=4)
        tensor([1.0000, 0.0100], dtype=torch.float64)
        >>> rope_inverse_frequencies(8, scaling={"type": "proportional", "partial_rotary_factor": 0.5})
        tensor([1.0000, 0.1000, 0.0000, 0.0000], dtype=torch.float64)
    """
    dim = _check_dim("dim", dim)
    base = _real("base", base, positive=True)
    if base == 1.0:
        raise ValueError("base must be > 0 and != 1 (every pair would have the same frequency), got 1.0")
    checked = _check_scaling(scaling)
    if seq_len is not None:
        seq_len = check_int("seq_len", seq_len, minimum=1, maximum=_MAX_SEQ_LEN)
    width = dim if rotary_dim is None else _check_rotary_dim(rotary_dim, dim)
    if checked is None:
        return _default_frequencies(width, base)
    kind = checked["type"]
    if kind == "proportional" and width != dim:
        raise ValueError(f"rotary_dim must be None with scaling type 'proportional' (it turns pairs of the "
                         f"full width and sets the slowest to zero), got rotary_dim={rotary_dim}")
    factor = float(checked["factor"])  # type: ignore[arg-type]
    if kind in ("ntk", "dynamic") and width == 2:
        name = "dim" if rotary_dim is None else "rotary_dim"
        raise ValueError(f"{name} must be >= 4 for scaling type {kind!r} (the exponent is d/(d-2)), got 2")
    theta = _default_frequencies(width, base)
    if kind == "linear":
        return _linear(theta, factor)
    if kind == "ntk":
        return _ntk(width, base, factor)
    if kind == "proportional":
        return _proportional(dim, base, factor, float(checked["partial_rotary_factor"]))  # type: ignore[arg-type]
    original = int(checked["original_max_position_embeddings"])  # type: ignore[call-overload]
    if kind == "dynamic":
        return _dynamic(width, base, factor, original, seq_len)
    if kind == "yarn":
        return _yarn(theta, width, base, factor, original, float(checked["beta_fast"]),  # type: ignore[arg-type]
                     float(checked["beta_slow"]), bool(checked["truncate"]))  # type: ignore[arg-type]
    if kind == "longrope":
        short, long = checked["short_factor"], checked["long_factor"]
        for key, factors in (("short_factor", short), ("long_factor", long)):
            if len(factors) != width // 2:  # type: ignore[arg-type]
                raise ValueError(f"scaling[{key!r}] must have {width // 2} entries (one per rotated pair of "
                                 f"the width {width}), got {len(factors)}")  # type: ignore[arg-type]
        return _longrope(theta, short, long, original, seq_len)  # type: ignore[arg-type]
    return _llama3(theta, factor, float(checked["low_freq_factor"]),  # type: ignore[arg-type]
                   float(checked["high_freq_factor"]), original)  # type: ignore[arg-type]


def _check_rotary_dim(rotary_dim: object, dim: int) -> int:
    width = check_even_dim("rotary_dim", rotary_dim)
    if width > dim:
        raise ValueError(f"rotary_dim must be a positive even integer <= dim ({dim}), got {width}")
    return width


# --8<-- [start:attention-scaling]
def _yarn_mscale(factor: float, mscale: float = 1.0) -> float:
    # YaRN's sqrt(1/t) = 0.1 ln(s) + 1 (Peng et al. 2023, section 3.4); DeepSeek scales the log by mscale.
    return 1.0 if factor <= 1.0 else 0.1 * mscale * math.log(factor) + 1.0


def rope_attention_scaling(scaling: Mapping[str, object] | None = None) -> float:
    """The factor that multiplies cos and sin (so both q and k) for this scaling.

    * ``"yarn"``: ``scaling["attention_factor"]`` if given; else, when both ``mscale`` and
      ``mscale_all_dim`` are given and nonzero (DeepSeek-V2/V3), ``m(s, mscale) / m(s, mscale_all_dim)``
      with ``m(s, a) = 0.1 * a * ln(s) + 1``; else the paper's ``sqrt(1/t) = 0.1 * ln(s) + 1``
      (1 when ``s <= 1``). As in ``transformers``, one of the two mscale keys alone is not used.
    * ``"longrope"``: ``scaling["attention_factor"]`` if given, else ``sqrt(1 + ln(s) / ln(L))``
      with ``L = original_max_position_embeddings`` (1 when ``s <= 1``).
    * every other type (and None): 1.0.

    Since q and k are both multiplied, the attention logits grow by the square of the factor.

    Examples:
        >>> yarn = {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096}
        >>> round(rope_attention_scaling(yarn), 4)
        1.1386
        >>> round(rope_attention_scaling({**yarn, "mscale": 1.0, "mscale_all_dim": 0.5}), 4)
        1.0648
    """
    checked = _check_scaling(scaling)
    if checked is None or checked["type"] not in ("yarn", "longrope"):
        return 1.0
    if "attention_factor" in checked:
        return float(checked["attention_factor"])  # type: ignore[arg-type]
    factor = float(checked["factor"])  # type: ignore[arg-type]
    if checked["type"] == "longrope":
        original = int(checked["original_max_position_embeddings"])  # type: ignore[call-overload]
        if factor <= 1.0 or original == 1:
            return 1.0
        return math.sqrt(1 + math.log(factor) / math.log(original))
    mscale, mscale_all_dim = checked.get("mscale"), checked.get("mscale_all_dim")
    if mscale and mscale_all_dim:
        numerator = _yarn_mscale(factor, float(mscale))  # type: ignore[arg-type]
        return numerator / _yarn_mscale(factor, float(mscale_all_dim))  # type: ignore[arg-type]
    return _yarn_mscale(factor)
# --8<-- [end:attention-scaling]
