r"""RoPE frequencies and the rules that change them for longer contexts (or fewer rotated pairs).

`rope_inverse_frequencies` returns \(\theta_i = \text{base}^{-2i/d}\) for the rotated width \(d\), changed by a
``scaling`` dict whose keys follow the ``rope_parameters`` of Hugging Face ``transformers`` (the types
and formulas agree with its ``modeling_rope_utils``; each rule cites its paper below).
`rope_attention_scaling` returns the factor a rule puts on cos and sin (YaRN's and LongRoPE's
attention factor; 1.0 for the others). `posenc.rope` re-exports both.

This module is the record and its public functions: a dict is read once into a `Scaling`, a frozen
record with one typed field per key, checked against the rule table; the rules themselves (one
function per rule with the signature every rule shares, ``rule(scaling, dim, base, seq_len) ->
theta``, and the table `_RULES` that names them) live in ``posenc/_scaling_rules.py``. A new rule
is one function and one row there.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from posenc._checks import check_bool, check_choice, check_even_dim, check_float, check_int
from posenc._scaling_rules import _RULES, SCALING_TYPES, _default_frequencies

if TYPE_CHECKING:  # the record and its checks need no torch: the config reader (posenc.configs) runs without it
    from torch import Tensor

__all__ = ["MAX_ROPE_DIM", "SCALING_TYPES", "Scaling", "parse_scaling", "rope_attention_scaling",
           "rope_inverse_frequencies"]

MAX_ROPE_DIM = 2**16  # widest head (or rotated width) accepted; real models use <= 1024
_MAX_SEQ_LEN = 2**53  # beyond this, integer positions are no longer exact in float64


def _real(name: str, value: object, **bounds: Any) -> float:
    """A finite real number within ``bounds`` (see `check_float`)."""
    return check_float(name, value, **bounds)


def _length(name: str, value: object) -> int:
    return check_int(name, value, minimum=1, maximum=_MAX_SEQ_LEN)


def _factors(name: str, value: object) -> tuple[float, ...]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise TypeError(f"{name} must be a list of positive numbers (one per rotated pair), "
                        f"got {type(value).__name__}")
    return tuple(_real(f"{name}[{i}]", v, positive=True, minimum=_SMALLEST, maximum=_LARGEST)
                 for i, v in enumerate(value))


# The range of a rule's real-valued settings: far beyond any model's (factors of a few hundred at
# most), and narrow enough that no rule overflows (NTK's factor^(d/(d-2)), YaRN's log of
# original / beta) or divides a frequency into infinity.
_LARGEST, _SMALLEST = 1e6, 1e-6

# key -> how its value is checked (and converted); the messages name it as scaling['key'].
_FIELD_CHECKS: dict[str, Callable[[str, object], object]] = {
    "factor": lambda name, v: _real(name, v, minimum=1.0, maximum=_LARGEST),
    "original_max_position_embeddings": _length,
    "max_position_embeddings": _length,
    "attention_factor": lambda name, v: _real(name, v, positive=True, maximum=_LARGEST),
    "beta_fast": lambda name, v: _real(name, v, positive=True, minimum=_SMALLEST, maximum=_LARGEST),
    "beta_slow": lambda name, v: _real(name, v, positive=True, minimum=_SMALLEST, maximum=_LARGEST),
    "mscale": lambda name, v: _real(name, v, minimum=0.0, maximum=_LARGEST),
    "mscale_all_dim": lambda name, v: _real(name, v, minimum=0.0, maximum=_LARGEST),
    "truncate": check_bool,
    "low_freq_factor": lambda name, v: _real(name, v, positive=True, maximum=_LARGEST),
    "high_freq_factor": lambda name, v: _real(name, v, positive=True, maximum=_LARGEST),
    "partial_rotary_factor": lambda name, v: _real(name, v, minimum=0.0, maximum=1.0),
    "short_factor": _factors,
    "long_factor": _factors,
}


@dataclasses.dataclass(frozen=True)
class Scaling:
    """One context-extension rule with its settings, checked: the typed form of a scaling dict.

    ``type`` is one of `SCALING_TYPES`; the other fields are the keys of that type (see
    `rope_inverse_frequencies`), None where a key is not given. Build one from a dict with
    `parse_scaling` (which also checks that the type's required keys are there and no other key
    is); `to_dict` gives the dict back.

    Examples:
        >>> Scaling("linear", factor=4).to_dict()
        {'type': 'linear', 'factor': 4.0}
    """

    type: str
    factor: float | None = None
    original_max_position_embeddings: int | None = None
    max_position_embeddings: int | None = None
    attention_factor: float | None = None
    beta_fast: float | None = None
    beta_slow: float | None = None
    mscale: float | None = None
    mscale_all_dim: float | None = None
    truncate: bool | None = None
    low_freq_factor: float | None = None
    high_freq_factor: float | None = None
    partial_rotary_factor: float | None = None
    short_factor: tuple[float, ...] | None = None
    long_factor: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        check_choice("scaling['type']", self.type, SCALING_TYPES)
        for key, check in _FIELD_CHECKS.items():
            value = getattr(self, key)
            if value is not None:
                object.__setattr__(self, key, check(f"scaling[{key!r}]", value))
        rule = _RULES[self.type]
        for key in self.to_dict():
            if key not in ("type", *rule.required, *rule.optional):
                raise ValueError(f"scaling of type {self.type!r} got the unknown key {key!r} "
                                 f"(allowed: {', '.join(map(repr, sorted({*rule.required, *rule.optional})))})")
        for key in rule.required:
            if getattr(self, key) is None:
                raise ValueError(f"scaling of type {self.type!r} is missing the key {key!r} "
                                 f"(required: {', '.join(map(repr, rule.required))})")
        if rule.check is not None:
            rule.check(self)

    def to_dict(self) -> dict[str, object]:
        """The keys that are set, as a scaling dict (lists for the per-pair factors)."""
        out: dict[str, object] = {"type": self.type}
        for field in dataclasses.fields(self)[1:]:
            value = getattr(self, field.name)
            if value is not None:
                out[field.name] = list(value) if isinstance(value, tuple) else value
        return out

    @property
    def scale(self) -> float:
        r"""The factor \(s\) by which the context grows (``factor``, 1 where the rule has none)."""
        return 1.0 if self.factor is None else self.factor

    @property
    def length_dependent(self) -> bool:
        """Whether the frequencies depend on the current sequence length (``seq_len``)."""
        return _RULES[self.type].length_dependent


def parse_scaling(scaling: Mapping[str, object] | Scaling | None) -> Scaling | None:
    """Read a scaling dict into a checked `Scaling` record (None stays None).

    Every key is checked by name: an unknown type or key, a missing required key, a value of the
    wrong kind or out of range raises a ValueError or TypeError naming it.

    Examples:
        >>> record = parse_scaling({"type": "yarn", "factor": 4,
        ...                         "original_max_position_embeddings": 4096})
        >>> # beta_fast not given: the rule's default (32)
        >>> record.type, record.factor, record.beta_fast
        ('yarn', 4.0, None)
    """
    if scaling is None or isinstance(scaling, Scaling):
        return scaling
    if not isinstance(scaling, Mapping):
        raise TypeError(f"scaling must be a dict such as {{'type': 'linear', 'factor': 2.0}} or None, "
                        f"got {type(scaling).__name__}")
    if "type" not in scaling:
        raise ValueError(f"scaling is missing the key 'type' (one of {', '.join(map(repr, SCALING_TYPES))}), "
                         f"got keys {sorted(map(str, scaling))}")
    kind = check_choice("scaling['type']", scaling["type"], SCALING_TYPES)
    rule = _RULES[kind]
    for key in scaling:
        if key != "type" and key not in (*rule.required, *rule.optional):
            allowed = sorted({"type", *rule.required, *rule.optional})
            raise ValueError(f"scaling of type {kind!r} got the unknown key {key!r} "
                             f"(allowed: {', '.join(map(repr, allowed))})")
    settings: dict[str, Any] = {str(key): value for key, value in scaling.items() if key != "type"}
    return Scaling(kind, **settings)


def _check_scaling(scaling: Mapping[str, object] | Scaling | None) -> dict[str, object] | None:
    """Validate a scaling dict (or record); the checked dict, or None."""
    record = parse_scaling(scaling)
    return None if record is None else record.to_dict()


def _check_dim(name: str, value: object) -> int:
    dim = check_even_dim(name, value)
    if dim > MAX_ROPE_DIM:
        raise ValueError(f"{name} must be a positive even integer <= {MAX_ROPE_DIM}, got {dim}")
    return dim


# Required and optional keys of each type, besides "type" (read by the explorer's parity check).
_REQUIRED: dict[str, tuple[str, ...]] = {kind: rule.required for kind, rule in _RULES.items()}
_OPTIONAL: dict[str, tuple[str, ...]] = {kind: rule.optional for kind, rule in _RULES.items()}


def rope_inverse_frequencies(dim: int, *, base: float = 10000.0,
                             scaling: Mapping[str, object] | Scaling | None = None,
                             seq_len: int | None = None, rotary_dim: int | None = None) -> Tensor:
    r"""The rotation frequency of each pair, \(\theta_i = \text{base}^{-2i/d}\), changed by ``scaling``.

    Args:
        dim: the head dimension, a positive even integer.
        base: the RoPE base (10000 in RoFormer and LLaMA 1/2; 500000 in Llama 3).
        scaling: None, a `Scaling`, or a dict whose ``"type"`` is one of

            * ``"linear"`` (position interpolation, Chen et al. 2023): ``factor``;
            * ``"ntk"`` (NTK-aware base change): ``factor`` \(s\); base becomes
              \(\text{base} \cdot s^{d/(d-2)}\);
            * ``"dynamic"`` (dynamic NTK): ``factor`` \(s\), ``original_max_position_embeddings``
              \(L\); for a sequence length \(n\) = ``seq_len`` \(> L\) the base becomes
              \(\text{base} \cdot (s n / L - (s - 1))^{d/(d-2)}\);
            * ``"yarn"`` (Peng et al. 2023): ``factor``, ``original_max_position_embeddings``, optional
              ``beta_fast`` (32), ``beta_slow`` (1; ``beta_fast == beta_slow`` makes the ramp a step),
              ``truncate`` (True) and the attention-factor keys ``attention_factor``, ``mscale``,
              ``mscale_all_dim`` (see `rope_attention_scaling`);
            * ``"llama3"``: ``factor``, ``low_freq_factor``, ``high_freq_factor`` (equal: a step at the
              wavelength \(L\) / ``low_freq_factor``), ``original_max_position_embeddings`` \(L\);
            * ``"proportional"`` (p-RoPE, Barbero et al. 2024): optional ``partial_rotary_factor`` \(p\)
              in \([0, 1]\) (1, as in ``transformers``) and ``factor`` (1); frequencies over the full
              ``dim``, divided by ``factor``, and the slowest \(d/2 - \lfloor p d/2 \rfloor\) pairs set
              to 0;
            * ``"longrope"`` (Ding et al. 2024): ``original_max_position_embeddings`` \(L\),
              ``short_factor`` and ``long_factor`` (one number per rotated pair), and ``factor`` or
              ``max_position_embeddings`` (the factor is then ``max_position_embeddings`` / \(L\), as
              in ``transformers``), optional ``attention_factor``; \(\theta_i\) divided by
              ``long_factor[i]`` when ``seq_len`` \(> L\), else by ``short_factor[i]``.

        seq_len: the current sequence length; only ``"dynamic"`` and ``"longrope"`` use it (None means
            "not past the trained length"), the other types ignore it.
        rotary_dim: rotate only the first ``rotary_dim`` features (partial rotary, as GPT-NeoX's
            ``rotary_pct`` or ``partial_rotary_factor``): the frequencies are then computed over that width,
            \(d\) = ``rotary_dim``. None means \(d\) = ``dim``. Not allowed with ``"proportional"``.

    Returns:
        ``[d // 2]`` float64 tensor, in radians per position.

    Examples:
        >>> rope_inverse_frequencies(8)
        tensor([1.0000, 0.1000, 0.0100, 0.0010], dtype=torch.float64)
        >>> rope_inverse_frequencies(8, scaling={"type": "linear", "factor": 4.0})
        tensor([0.2500, 0.0250, 0.0025, 0.0003], dtype=torch.float64)
        >>> rope_inverse_frequencies(8, rotary_dim=4)
        tensor([1.0000, 0.0100], dtype=torch.float64)
        >>> rope_inverse_frequencies(
        ...     8, scaling={"type": "proportional", "partial_rotary_factor": 0.5})
        tensor([1.0000, 0.1000, 0.0000, 0.0000], dtype=torch.float64)
    """
    dim = _check_dim("dim", dim)
    base = _real("base", base, positive=True)
    if base == 1.0:
        raise ValueError("base must be > 0 and != 1 (every pair would have the same frequency), got 1.0")
    record = parse_scaling(scaling)
    if seq_len is not None:
        seq_len = check_int("seq_len", seq_len, minimum=1, maximum=_MAX_SEQ_LEN)
    width = dim if rotary_dim is None else _check_rotary_dim(rotary_dim, dim)
    if record is None:
        return _default_frequencies(width, base)
    rule = _RULES[record.type]
    if rule.full_width and width != dim:
        raise ValueError(f"rotary_dim must be None with scaling type {record.type!r} (it turns pairs of the "
                         f"full width and sets the slowest to zero), got rotary_dim={rotary_dim}")
    if width < rule.min_dim:
        name = "dim" if rotary_dim is None else "rotary_dim"
        raise ValueError(f"{name} must be >= {rule.min_dim} for scaling type {record.type!r} "
                         f"(the exponent is d/(d-2)), got {width}")
    for key in ("short_factor", "long_factor"):
        factors = getattr(record, key)
        if factors is not None and len(factors) != width // 2:
            raise ValueError(f"scaling[{key!r}] must have {width // 2} entries (one per rotated pair of "
                             f"the width {width}), got {len(factors)}")
    return rule.frequencies(record, width, base, seq_len)


def _check_rotary_dim(rotary_dim: object, dim: int) -> int:
    width = check_even_dim("rotary_dim", rotary_dim)
    if width > dim:
        raise ValueError(f"rotary_dim must be a positive even integer <= dim ({dim}), got {width}")
    return width


def rope_attention_scaling(scaling: Mapping[str, object] | Scaling | None = None) -> float:
    r"""The factor that multiplies cos and sin (so both q and k) for this scaling.

    * ``"yarn"``: ``scaling["attention_factor"]`` if given; else, when both ``mscale`` and
      ``mscale_all_dim`` are given and nonzero (DeepSeek-V2/V3), \(m(s, a) / m(s, b)\) with
      \(a\) = ``mscale``, \(b\) = ``mscale_all_dim`` and \(m(s, a) = 0.1\, a \ln s + 1\); else the paper's
      \(\sqrt{1/t} = 0.1 \ln s + 1\) (1 when \(s \le 1\)), \(s\) = ``factor``. As in ``transformers``,
      one of the two mscale keys alone is not used.
    * ``"longrope"``: ``scaling["attention_factor"]`` if given, else \(\sqrt{1 + \ln s / \ln L}\)
      with \(L\) = ``original_max_position_embeddings`` (1 when \(s \le 1\)); \(s\) is ``factor``, or
      ``max_position_embeddings`` / \(L\) without it.
    * every other type (and None): 1.0.

    Since q and k are both multiplied, the attention logits grow by the square of the factor.

    Examples:
        >>> yarn = {"type": "yarn", "factor": 4.0,
        ...         "original_max_position_embeddings": 4096}
        >>> round(rope_attention_scaling(yarn), 4)
        1.1386
        >>> deepseek = {**yarn, "mscale": 1.0, "mscale_all_dim": 0.5}
        >>> round(rope_attention_scaling(deepseek), 4)
        1.0648
    """
    record = parse_scaling(scaling)
    return 1.0 if record is None else _RULES[record.type].attention(record)
