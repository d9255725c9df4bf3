"""The model-type table's layer patterns, typed (`posenc.configs._schema.ModelTypeEntry` names them):
how a config class fills ``layer_types`` or ``no_rope_layers`` when a config.json gives none, and
what it does with a list a config gives. Source locators are transformers 5.23.0's, as pinned.
"""

from __future__ import annotations

from typing import TypedDict

__all__ = ["GivenList", "LayerPattern", "LayerTypesFrom", "NopePattern", "Scalar"]

#: A JSON scalar as a config class's default holds it.
Scalar = str | int | float | bool | None


class _PatternBase(TypedDict, total=False):
    k: int
    offset: int
    key: str
    from_end: bool
    at_least_one: bool
    if_null: dict[str, str]
    depends_on: list[dict[str, Scalar]]


class LayerPattern(_PatternBase, total=False):
    """How the config class fills ``layer_types`` when a config.json gives none, fitted by the
    generator as "every k-th layer" on the class built at 12 layers and checked at 2 to 13 layers
    (`posenc.configs._table.every_k` evaluates it).

    Attributes:
        every: the kind of every k-th layer (``(i + offset) % k == 0``; counted from the last layer
            with ``from_end``).
        other: the kind of the other layers.
        k, offset: the period and its shift; ``key``: the config key that sets ``k``, if any
            (Gemma 3's ``sliding_window_pattern``).
        last: the kind the class forces on the last layer (Gemma 4); ``at_least_one``: the last layer
            is ``every`` when no other layer is (OLMo-Hybrid).
        if_null: a key that, given as null, makes every layer one kind (Ministral: no
            ``sliding_window``, full attention).
        depends_on: groups of keys (with their class defaults) that change the pattern otherwise:
            posenc uses the pattern only while a group is not all changed (probed by building the
            class with each key changed).
    """

    every: str
    other: str
    last: str


class NopePattern(_PatternBase, total=False):
    """How the config class fills ``no_rope_layers`` when a config.json gives none (1: the layer
    rotates, 0: NoPE), fitted as `LayerPattern` is (SmolLM3's ``no_rope_layer_interval``).

    Attributes:
        every, other, last: as `LayerPattern`'s, flags instead of kinds.
    """

    every: int
    other: int
    last: int


class GivenList(TypedDict, total=False):
    """What the config class does with a ``layer_types`` (or ``no_rope_layers``) list a config gives,
    probed with lists of each kind: ``last``, the kind it forces on the last layer (Gemma 4: full
    attention); ``renamed``, kinds it renames; ``rewritten``, any other rewrite (posenc refuses such a
    list by name)."""

    last: str | int
    renamed: dict[str, str]
    rewritten: bool


class LayerTypesFrom(TypedDict):
    """Layer kinds the config class names from a given flags list when the config gives no
    ``layer_types`` (Llama 4: from ``no_rope_layers``, 1 -> chunked attention, 0 -> full attention).

    Attributes:
        key: the flags' key; ``kinds``: the kind of each flag, keyed ``"0"`` and ``"1"``.
    """

    key: str
    kinds: dict[str, str]
