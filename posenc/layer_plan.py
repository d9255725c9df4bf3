"""The plan of each layer of `posenc.model.TinyTransformer`: its positions and its attention.

A model has one position method (its ``position``). Its plan says, layer by layer, whether a layer
uses that method and with which settings, and how the layer attends: one frozen `LayerPlan` per
layer. The designs of today's models are plans (`posenc.designs`):

* which layers carry positions: RoPE in three layers out of four and none in the fourth (Llama 4,
  Cohere Command A / R7B, SmolLM3), or RoPE everywhere;
* the RoPE of each layer: a small base in local layers and a large one, scaled, in global ones
  (Gemma 3), or RoPE logits from any matrix of pair offsets (`posenc.extension`);
* what each layer attends to: a sliding window or a chunk (`posenc.spans`), or everything;
* what acts beside the rotation: an L2 norm of q and k after it (Llama 4), a temperature on the
  queries (`posenc.temperature`), a learned sink logit per head (gpt-oss).

Each setting is a field of `LayerPlan`, and the model reads the plan in one place, the inputs it
builds for each layer's attention (`posenc.layer_hooks`), so a new per-layer setting is one more
field there and one more step of the layer.

Examples:
    >>> plans = layer_plans("rope", 4,
    ...                     layer_positions=["rope", "rope", "rope", "none"])
    >>> [plan.position for plan in plans]
    ['rope', 'rope', 'rope', 'none']
    >>> layer_plans("rope", 2, layer_rope_bases=[1e4, 1e6])[1]
    LayerPlan(position='rope', rope_base=1000000.0)
    >>> LayerPlan("rope", chunk=8, qk_norm=True)
    LayerPlan(position='rope', rope_base=None, chunk=8, qk_norm=True)
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields

from torch import Tensor

from posenc._checks import check_bool, check_choice, check_float, check_size_int
from posenc.methods import METHODS, POSITION_METHODS
from posenc.rope_scaling import Scaling, parse_scaling
from posenc.spans import AttentionSpan

__all__ = ["LAYER_POSITION_METHODS", "LayerPlan", "OffsetRule", "QueryScale", "layer_plans", "rotation_key"]

#: The per-layer methods of a RoPE model (``layer_positions``): RoPE, or no positions at all.
LAYER_POSITION_METHODS = ("rope", "none")


def _varying() -> str:
    """The methods whose layers may differ (`posenc.methods.Method.per_layer`), for messages."""
    return " or ".join(f"position={name!r}" for name, method in METHODS.items() if method.per_layer)


#: Called as ``pair_offsets(query_positions, key_positions)`` (``[batch, q_len]``, ``[batch, k_len]``);
#: returns the offset of each pair, broadcastable to ``[batch, q_len, k_len]`` (`posenc.extension`).
OffsetRule = Callable[[Tensor, Tensor], Tensor]
#: Called with the queries' positions ``[batch, q_len]``; returns the factor of each query (float64).
QueryScale = Callable[[Tensor], Tensor]


@dataclass(frozen=True, repr=False)
class LayerPlan:
    """How one layer uses positions and what it attends to.

    Attributes:
        position: the layer's method: the model's own ``position``, or ``"none"`` (this layer
            sees no position; only the causal mask orders its tokens).
        rope_base: the base of this layer's RoPE; None: the model's own rotation (base 10000).
        rope_scaling: a context-extension rule for this layer's RoPE (a dict or a
            `posenc.rope_scaling.Scaling`, as `posenc.rope.RotaryEmbedding` takes it), e.g. on
            the global layers only (Gemma 3); None: unscaled.
        window: attend only to the keys of the last ``window`` positions (a sliding window).
        chunk: attend only to the keys of the query's own chunk of ``chunk`` positions (Llama 4).
        temperature: multiply each query by a factor of its position, after the rotation and
            the norm: a `posenc.temperature.QueryTemperature` (Llama 4's NoPE layers:
            `posenc.temperature.LLAMA4_NOPE`), or any callable of the positions.
        sinks: a learned sink logit per head in this layer's softmax (gpt-oss).
        qk_norm: an L2 (RMS) norm of each query and key after the rotation, without a weight
            (Llama 4's ``Llama4TextL2Norm``).
        pair_offsets: RoPE logits from this matrix of pair offsets instead of rotating q and k
            (`posenc.extension.rope_logits`; keys are cached unrotated).

    Examples:
        >>> LayerPlan("rope", rope_base=500.0).rotation_key
        '500_0'
        >>> LayerPlan("rope", window=4).span
        AttentionSpan(window=4, chunk=None)
    """

    position: str
    rope_base: float | None = None
    rope_scaling: Scaling | None = None
    window: int | None = None
    chunk: int | None = None
    temperature: QueryScale | None = None
    sinks: bool = False
    qk_norm: bool = False
    pair_offsets: OffsetRule | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.position, str) or not self.position:
            raise TypeError(f"position must be the name of a position method, got {self.position!r:.60}")
        if self.rope_base is not None:
            object.__setattr__(self, "rope_base", check_float("rope_base", self.rope_base, positive=True))
        if self.rope_scaling is not None:
            if not isinstance(self.rope_scaling, (Mapping, Scaling)):
                raise TypeError(f"rope_scaling must be a scaling dict, a Scaling or None, "
                                f"got {type(self.rope_scaling).__name__}")
            try:
                object.__setattr__(self, "rope_scaling", parse_scaling(self.rope_scaling))
            except (TypeError, ValueError) as error:  # name the field as the caller spelled it
                raise type(error)(f"rope_scaling: {error}") from None
        if self.window is not None or self.chunk is not None:
            AttentionSpan(window=self.window, chunk=self.chunk)  # checks both
        for name in ("temperature", "pair_offsets"):
            if getattr(self, name) is not None and not callable(getattr(self, name)):
                raise TypeError(f"{name} must be callable or None, got {type(getattr(self, name)).__name__}")
        check_bool("sinks", self.sinks)
        check_bool("qk_norm", self.qk_norm)
        if self.pair_offsets is not None and self.position == "none":
            raise ValueError("pair_offsets needs a layer with RoPE, got position='none'")

    def __repr__(self) -> str:  # the fields that differ from the defaults (position and rope_base always)
        shown = [f"{f.name}={getattr(self, f.name)!r}" for f in fields(self)
                 if f.name in ("position", "rope_base") or getattr(self, f.name) != f.default]
        return f"LayerPlan({', '.join(shown)})"

    @property
    def uses_position(self) -> bool:
        """Whether this layer uses the model's method (False: no positions in this layer)."""
        return self.position != "none"

    @property
    def rotation_key(self) -> str | None:
        """The name of this layer's own rotation among the model's ``layer_rotaries`` (None: the model's)."""
        if self.rope_base is None and self.rope_scaling is None:
            return None
        return rotation_key(10000.0 if self.rope_base is None else self.rope_base, self.rope_scaling)

    @property
    def span(self) -> AttentionSpan | None:
        """This layer's window or chunk (`posenc.spans.AttentionSpan`), or None (every key)."""
        if self.window is None and self.chunk is None:
            return None
        return AttentionSpan(window=self.window, chunk=self.chunk)

    @property
    def changes_positions(self) -> bool:
        """Whether the plan changes the method's positions (only per-layer methods allow it)."""
        return (not self.uses_position or self.rope_base is not None or self.rope_scaling is not None
                or self.pair_offsets is not None)


def rotation_key(base: float, scaling: Scaling | Mapping[str, object] | None = None) -> str:
    """The name of the rotation of RoPE base ``base`` (and ``scaling``) among a model's ``layer_rotaries``."""
    key = repr(check_float("base", base, positive=True)).replace(".", "_")  # a module's name holds no dot
    record = parse_scaling(scaling)
    if record is None:
        return key
    digest = hashlib.sha1(repr(record).encode()).hexdigest()[:8]  # the same settings, the same name
    return f"{key}_{record.type}_{digest}"


def _per_layer(name: str, value: object, num_layers: int) -> list[object]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise TypeError(f"{name} must be a sequence with one entry per layer, got {type(value).__name__}")
    if len(value) != num_layers:
        raise ValueError(f"{name} must have one entry per layer ({num_layers}), got {len(value)} "
                         f"(num_layers={num_layers})")
    return list(value)


def _from_keywords(position: str, num_layers: int, layer_positions: object,
                   layer_rope_bases: object) -> list[object]:
    """The plans of the shorthand keywords: one method per layer, one RoPE base per layer."""
    if not METHODS[position].per_layer:
        raise ValueError(f"layer_positions and layer_rope_bases need {_varying()}, got position={position!r}")
    methods: list[str] = [position] * num_layers
    if layer_positions is not None:
        methods = [check_choice(f"layer_positions[{i}]", method, (position, "none"))
                   for i, method in enumerate(_per_layer("layer_positions", layer_positions, num_layers))]
    bases: list[float | None] = [None] * num_layers
    if layer_rope_bases is not None:
        bases = [check_float(f"layer_rope_bases[{i}]", base, positive=True)
                 for i, base in enumerate(_per_layer("layer_rope_bases", layer_rope_bases, num_layers))]
    return [LayerPlan(method, base) for method, base in zip(methods, bases)]


def _check_plan(name: str, plan: object, position: str) -> LayerPlan:
    if not isinstance(plan, LayerPlan):
        raise TypeError(f"{name} must be a posenc.layer_plan.LayerPlan, got {type(plan).__name__}")
    if plan.position not in (position, "none"):
        raise ValueError(f"{name}.position must be the model's position {position!r} or 'none', "
                         f"got {plan.position!r}")
    if plan.changes_positions and not METHODS[position].per_layer:  # windows, sinks, ... suit any method
        raise ValueError(f"per-layer positions other than the model's own need {_varying()}, "
                         f"got position={position!r} and {name}={plan!r}")
    if plan.sinks and plan.uses_position and METHODS[position].place == "weights":  # checked here, once
        raise ValueError(f"{name}.sinks: sinks join a softmax; position={position!r} replaces the softmax: "
                         "give one of them, not both")
    return plan


def layer_plans(position: str, num_layers: int, *, layer_plans: Sequence[LayerPlan] | None = None,
                layer_positions: Sequence[str] | None = None,
                layer_rope_bases: Sequence[float] | None = None) -> tuple[LayerPlan, ...]:
    """One checked `LayerPlan` per layer of a model whose method is ``position``.

    Args:
        position: the model's position method.
        num_layers: how many layers.
        layer_plans: the plans themselves, one per layer; or the shorthands:
        layer_positions: ``"rope"`` or ``"none"`` per layer (``position="rope"`` only).
        layer_rope_bases: the RoPE base of each layer (``position="rope"`` only).

    Without any of them every layer uses the model's method as it is.
    """
    num_layers = check_size_int("num_layers", num_layers)
    position = check_choice("position", position, POSITION_METHODS)
    shorthand = layer_positions is not None or layer_rope_bases is not None
    if layer_plans is not None and shorthand:
        raise ValueError("give layer_plans or the shorthands layer_positions and layer_rope_bases, not both")
    if layer_plans is None and not shorthand:
        return (LayerPlan(position),) * num_layers
    plans = (_per_layer("layer_plans", layer_plans, num_layers) if layer_plans is not None
             else _from_keywords(position, num_layers, layer_positions, layer_rope_bases))
    return tuple(_check_plan(f"layer_plans[{i}]", plan, position) for i, plan in enumerate(plans))
