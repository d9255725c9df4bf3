"""What differs between model types, as transformers' code has it: the table the reader reads.

``model_types.json`` is derived from the pinned transformers by ``tools/rope_model_types`` and
checked against it by ``tests/test_rope_model_types.py``; each key is documented and typed in
`posenc.configs._schema` (``tests/test_config_schema.py`` holds every entry to it). This
module loads it and answers the questions `posenc.configs._reader` asks of one model type; it holds
no model names of its own.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from posenc.configs._schema import LayerPattern, ModelTypeEntry, ModelTypeTable, NopePattern

TABLE_PATH = Path(__file__).resolve().parent / "model_types.json"
# Layer types that are softmax attention, and layer types that are not attention at all
# (transformers' names; any other layer type is reported as unknown).
ATTENTION_LAYER_TYPES = ("full_attention", "sliding_attention", "chunked_attention", "indexed_attention",
                         "reference_sliding_attention")
NOT_ATTENTION_LAYER_TYPES = ("linear_attention", "mamba", "conv", "mlp", "moe")
#: What carries order in each of them (their LayerRope's note; the inspector's words say the same).
NOT_ATTENTION_ORDER = {"linear_attention": "a recurrent layer, whose state carries order",
                       "mamba": "a recurrent layer, whose state carries order",
                       "conv": "a short causal convolution, which sees order within its kernel",
                       "mlp": "it acts on each token alone", "moe": "it acts on each token alone"}


@functools.cache
def model_types() -> dict[str, ModelTypeEntry]:
    """Every model type the pinned transformers registers, with its entry."""
    table: ModelTypeTable = json.loads(TABLE_PATH.read_text())  # its shape: tests/test_config_schema.py
    return table["model_types"]


def table_source() -> str:
    return str(json.loads(TABLE_PATH.read_text())["_source"])


def entry(model_type: str) -> ModelTypeEntry | None:
    """The entry of a model type, following a wrapper (a vision-language config, ...) to its text
    model; None for a model type transformers does not know. A config read through a wrapper has
    no ``text_config`` (`posenc.configs._params._text_part`), so the class builds the text model
    with the wrapper's defaults for it (``text_field_defaults``), which win over the text class's."""
    found = model_types().get(model_type)
    overlay: dict[str, int] = {}
    while found is not None and set(found) <= _WRAPPER_KEYS:
        overlay = {**found.get("text_field_defaults", {}), **overlay}  # the outer wrapper's win
        found = model_types().get(found["text_model_type"])
    if found is not None and overlay:
        found = found.copy()
        found["field_defaults"] = {**found.get("field_defaults", {}), **overlay}
    return found


_WRAPPER_KEYS = {"text_model_type", "text_model_type_aliases", "text_field_defaults", "text_config_merges",
                 "top_level_read"}


def text_model_type(model_type: str, given: str | None = None) -> str:
    """The model type a wrapper's text model is read as: ``given`` (its text_config's own
    ``model_type``) under the name the wrapper's config class gives it, else the class default."""
    found = model_types().get(model_type) or {}
    if given is not None:
        return str(found.get("text_model_type_aliases", {}).get(given, given))
    return str(found.get("text_model_type", model_type))


def layout(found: ModelTypeEntry, config: Mapping[str, Any]) -> str | None:
    """How the model's attention code pairs q/k features: a fixed layout, or the one a config flag
    (``rope_interleave``) selects, with the config class's default when the config omits it."""
    spec = found.get("layout")
    if not isinstance(spec, Mapping):
        return None if spec is None else str(spec)
    value = config.get(spec["key"])
    flag = spec["default"] if value is None else value
    if not isinstance(flag, bool):
        raise TypeError(f"config[{spec['key']!r}] must be true or false, got {type(flag).__name__} {flag!r}")
    chosen = spec["true"] if flag else spec["false"]
    return None if chosen is None else str(chosen)


def get(found: ModelTypeEntry, config: Mapping[str, Any], key: str) -> Any:
    """``config[key]``, under transformers' canonical name or the one the config class maps it to
    (DBRX's ``d_model`` for ``hidden_size``)."""
    value = config.get(key)
    if value is None and key in found.get("attribute_map", {}):
        value = config.get(found["attribute_map"][key])
    return value


def field(found: ModelTypeEntry, config: Mapping[str, Any], key: str) -> Any:
    """``config[key]``, or the config class's default for it (None if it has none)."""
    value = get(found, config, key)
    return found.get("field_defaults", {}).get(key) if value is None else value


def default_theta(found: ModelTypeEntry, layer_type: str | None) -> float:
    theta = found.get("default_theta", 10000.0)
    if isinstance(theta, Mapping):  # by layer type (NeoMME), or {"global": ..., "local": ...}: local for sliding
        if layer_type in theta:
            return float(theta[layer_type])
        return float(theta["local" if layer_type == "sliding_attention" else "global"])
    return float(theta)


def every_k(pattern: LayerPattern | NopePattern, config: Mapping[str, Any], layers: int) -> list[Any]:
    """A layer pattern of the form "every k-th layer (after ``offset``) is ``every``", counted from the
    last layer with ``from_end`` (as some classes count); the last layer is ``last`` where the class
    forces it, and ``every`` with ``at_least_one`` when no other layer is."""
    key = pattern.get("key")
    k = config.get(key) if key else None
    k = pattern["k"] if k is None else k
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise ValueError(f"config[{key!r}] must be an integer >= 1, got {k!r}")
    at = (lambda i: layers - 1 - i) if pattern.get("from_end") else (lambda i: i)
    out = [pattern["every"] if (at(i) + pattern["offset"]) % k == 0 else pattern["other"] for i in range(layers)]
    if out and ("last" in pattern or (pattern.get("at_least_one") and pattern["every"] not in out)):
        out[-1] = pattern.get("last", pattern["every"])
    return out


def differs(config: Mapping[str, Any], key: str, default: Any) -> bool:
    """Whether the config gives ``key`` a value other than the class default (True is not 1 here)."""
    if key not in config:
        return False
    value = config[key]
    return isinstance(value, bool) != isinstance(default, bool) or value != default


def pattern(spec: LayerPattern | NopePattern, config: Mapping[str, Any], layers: int) -> list[Any] | None:
    """The layer pattern the config class fills in (`every_k`), or None where the config sets keys
    the pattern depends on in a way the table does not follow (every key of a ``depends_on`` group
    changed from its default); a key of ``if_null`` given as null makes every layer its kind."""
    for key, kind in (spec.get("if_null") or {}).items():
        if key in config and config[key] is None:
            return [kind] * layers
    for group in spec.get("depends_on") or ():
        if all(differs(config, key, default) for key, default in group.items()):
            return None
    return every_k(spec, config, layers)


def given_list(found: ModelTypeEntry, model_type: str | None, field: str, values: list[Any]) -> list[Any]:
    """A ``layer_types`` (or ``no_rope_layers``) list the config gives, as the config class keeps it:
    kinds renamed, the last entry forced (Gemma 4: full attention), or an error where the class
    rewrites it some other way."""
    rule = found.get("given_layer_types") if field == "layer_types" else found.get("given_no_rope_layers")
    if not rule or not values:
        return values
    if rule.get("rewritten"):
        raise ValueError(f"config[{field!r}] is rewritten by transformers' config class for model type "
                         f"{model_type!r} in a way posenc does not follow; give a config without {field!r}")
    renamed = rule.get("renamed") or {}
    out = [renamed.get(v, v) if isinstance(v, str) else v for v in values]
    if "last" in rule:
        out[-1] = rule["last"]
    return out
