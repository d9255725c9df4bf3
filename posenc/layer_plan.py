"""The position plan of each layer of `posenc.model.TinyTransformer`.

A model has one position method (its ``position``). Its plan says, layer by layer, whether a layer
uses that method and with which settings: one frozen `LayerPlan` per layer. Models that mix layers
are built this way: RoPE in three layers out of four and no positions in the fourth (a NoPE/RoPE
interleave), or a small RoPE base in local layers and a large one in global layers.

Each setting is a field of `LayerPlan`, and the model reads the plan in one place, the hooks it
builds for each layer's attention (`posenc.model.TinyTransformer`), so a new per-layer setting is
one more field and one more hook there.

Examples:
    >>> plans = layer_plans("rope", 4, layer_positions=["rope", "rope", "rope", "none"])
    >>> [plan.position for plan in plans]
    ['rope', 'rope', 'rope', 'none']
    >>> layer_plans("rope", 2, layer_rope_bases=[1e4, 1e6])[1]
    LayerPlan(position='rope', rope_base=1000000.0)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from posenc._checks import check_choice, check_float, check_size_int
from posenc.methods import METHODS, POSITION_METHODS

__all__ = ["LAYER_POSITION_METHODS", "LayerPlan", "layer_plans", "rotation_key"]

#: The per-layer methods of a RoPE model (``layer_positions``): RoPE, or no positions at all.
LAYER_POSITION_METHODS = ("rope", "none")


def _varying() -> str:
    """The methods whose layers may differ (`posenc.methods.Method.per_layer`), for messages."""
    return " or ".join(f"position={name!r}" for name, method in METHODS.items() if method.per_layer)


@dataclass(frozen=True)
class LayerPlan:
    """How one layer uses positions.

    Attributes:
        position: the layer's method: the model's own ``position``, or ``"none"`` (this layer
            sees no position; only the causal mask orders its tokens).
        rope_base: the base of this layer's RoPE; None: the model's own rotation (base 10000).

    Examples:
        >>> LayerPlan("rope", rope_base=500.0).rotation_key
        '500_0'
    """

    position: str
    rope_base: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.position, str) or not self.position:
            raise TypeError(f"position must be the name of a position method, got {self.position!r:.60}")
        if self.rope_base is not None:
            object.__setattr__(self, "rope_base", check_float("rope_base", self.rope_base, positive=True))

    @property
    def uses_position(self) -> bool:
        """Whether this layer uses the model's method (False: no positions in this layer)."""
        return self.position != "none"

    @property
    def rotation_key(self) -> str | None:
        """The name of this layer's own rotation among the model's ``layer_rotaries`` (None: the model's)."""
        return None if self.rope_base is None else rotation_key(self.rope_base)


def rotation_key(base: float) -> str:
    """The name of the rotation of RoPE base ``base`` among a model's ``layer_rotaries``."""
    return repr(check_float("base", base, positive=True)).replace(".", "_")  # a module's name holds no dot


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
    if plan != LayerPlan(position) and not METHODS[position].per_layer:
        raise ValueError(f"per-layer plans other than the model's own need {_varying()}, "
                         f"got position={position!r} and {name}={plan!r}")
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
