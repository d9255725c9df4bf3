"""Probes of the table generator (``derive.py``) on a model type's config class: where a flat
``rope_theta``, per-layer bases and a flat ``rope_scaling`` land once the class is built (with RoPE
validation off), the rope types it renames, and the layer pattern it fills in when a config gives
no ``layer_types`` or ``no_rope_layers``.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import dataclasses
import inspect
import itertools
import textwrap
from typing import Any
from unittest import mock

from tools.rope_model_types import dependence


# ---------------------------------------------------------------- where bases and scaling land
@contextlib.contextmanager
def _no_validation(*classes: type) -> Any:
    """Build configs with RoPE validation off (probe values need not make a valid model)."""
    from transformers.modeling_rope_utils import RotaryEmbeddingConfigMixin
    owners = {RotaryEmbeddingConfigMixin} | {c for cls in classes for c in cls.__mro__ if "validate_rope" in vars(c)}
    with contextlib.ExitStack() as stack:
        for owner in owners:
            stack.enter_context(mock.patch.object(owner, "validate_rope", lambda self: None))
        yield


def _landing(config_name: str, text: Any, **kwargs: Any) -> dict[str, Any] | None:
    """The text config's rope_parameters when the config class is built with ``kwargs``."""
    import transformers
    cls = getattr(transformers, config_name)
    try:
        with _no_validation(cls, type(text)):
            config = cls(**copy.deepcopy(kwargs))
    except Exception:
        return None
    params = getattr(config.get_text_config(decoder=True), "rope_parameters", None)
    return params if isinstance(params, dict) else None


def _nested(params: dict[str, Any]) -> bool:
    return bool(params) and all(isinstance(v, dict) or v is None for v in params.values())


def _read_keys(cls: type) -> list[str]:
    """Keys the config classes read from kwargs by name (``kwargs.pop("rotary_pct", ...)``), and their
    dataclass fields about rotary settings."""
    keys: set[str] = set()
    for owner in cls.__mro__:
        if not owner.__module__.startswith("transformers.models."):
            continue
        for node in ast.walk(ast.parse(textwrap.dedent(inspect.getsource(owner)))):
            if (isinstance(node, ast.Call) and getattr(node.func, "attr", "") in ("pop", "get", "setdefault")
                    and getattr(node.func.value, "id", "") == "kwargs" and node.args  # type: ignore[attr-defined]
                    and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                keys.add(node.args[0].value)
        if dataclasses.is_dataclass(owner):
            keys.update(f.name for f in dataclasses.fields(owner)
                        if any(w in f.name for w in ("rope", "rotary", "theta", "partial")))
    return sorted(keys - {"rope_scaling", "rope_parameters", "layer_types", "rope_interleave", "no_rope_layers",
                          "default_theta", "ignore_keys_at_rope_validation"})


_SENTINELS = {"partial_rotary_factor": 0.375}


_TOP_LEVEL = ("rope_theta", "partial_rotary_factor")


def _key_landings(config_name: str, text: Any) -> dict[str, Any]:
    """Where each top-level key the config class reads lands in rope_parameters.

    Flat configs: ``key_aliases`` (``rotary_emb_base`` -> ``rope_theta``), the canonical names the
    class ignores at the top level (``ignored_top_level``), the defaults it fills in when the
    config gives neither (``absent_defaults``), and the default rope_parameters dict it starts
    from (``default_rope_parameters``, without the values that come from top-level keys).
    Per-layer-type configs: ``base_keys``, the key holding each layer type's base."""
    baseline = _landing(config_name, text) or {}
    aliases: dict[str, str] = {}
    bases: dict[str, str] = {}
    settable: set[str] = set()
    rotated_width: str | None = None
    for key in sorted(set(_read_keys(type(text))) | set(_TOP_LEVEL)):
        sentinel = 0.375 if "pct" in key or "partial" in key else 123457.0
        landed = _landing(config_name, text, **{key: sentinel})
        if not landed:
            continue
        if _nested(landed):
            for layer_type, value in landed.items():
                if isinstance(value, dict) and value.get("rope_theta") == sentinel:
                    bases[layer_type] = key
            continue
        head_dim = getattr(text, "head_dim", None)
        if (isinstance(head_dim, int) and key != "partial_rotary_factor" and baseline.get("partial_rotary_factor")
                != landed.get("partial_rotary_factor") and landed.get("partial_rotary_factor") == sentinel / head_dim):
            rotated_width = key  # a count of rotated features, read as partial_rotary_factor = key / head_dim
        for target, value in landed.items():
            if value == sentinel and baseline.get(target) != sentinel:
                settable.add(target)
                if target != key:
                    aliases[key] = target
                elif target in _TOP_LEVEL:
                    settable.add(f"={target}")
    entry: dict[str, Any] = {}
    if rotated_width is not None:
        entry["rotated_width_key"] = rotated_width
    if aliases:
        entry["key_aliases"] = dict(sorted(aliases.items()))
    if bases:
        entry["base_keys"] = dict(sorted(bases.items()))
    if baseline and not _nested(baseline):
        ignored = [t for t in _TOP_LEVEL if f"={t}" not in settable]
        if ignored:
            entry["ignored_top_level"] = ignored
        dict_defaults = {k: v for k, v in baseline.items() if k not in settable}
        if dict_defaults.get("rope_type", "default") != "default" or set(dict_defaults) - {"rope_type"}:
            entry["default_rope_parameters"] = dict_defaults
    elif baseline:
        entry["default_rope_parameters"] = baseline
    return entry


_TYPE_NAMES = ("default", "linear", "dynamic", "yarn", "longrope", "llama3", "proportional", "su", "mrope", "ntk")


def _type_aliases(config_name: str, text: Any) -> dict[str, Any]:
    """rope types the config class renames (Phi-3: ``su`` -> ``longrope``; Qwen2-VL: ``mrope`` ->
    ``default``), and, for a config with one RoPE per layer type, the layer types a flat
    ``rope_scaling`` lands on and whether its old ``type`` spelling is read there at all."""
    entry: dict[str, Any] = {}
    renamed = {}
    for name in _TYPE_NAMES:
        landed = _landing(config_name, text, rope_scaling={"rope_type": name, "factor": 3.0})
        if not landed:
            continue
        targets = [v for v in landed.values() if isinstance(v, dict)] if _nested(landed) else [landed]
        kinds = {t.get("rope_type") for t in targets if t.get("factor") == 3.0}
        if len(kinds) == 1 and (kind := kinds.pop()) != name:
            renamed[name] = kind
        if _nested(landed) and name == "linear":
            old = _landing(config_name, text, rope_scaling={"type": "linear", "factor": 3.0}) or {}
            if not any(isinstance(v, dict) and v.get("rope_type") == "linear" for v in old.values()):
                entry["flat_scaling_type_key_ignored"] = True
    if renamed:
        entry["type_aliases"] = renamed
    return entry


# ---------------------------------------------------------------- the layer pattern, when a config gives none
def _built(config_name: str, text: Any, **kwargs: Any) -> Any:
    import transformers
    cls = getattr(transformers, config_name)
    try:
        with _no_validation(cls, type(text)):
            return cls(**kwargs).get_text_config(decoder=True)
    except Exception:
        return None


def _fit_every(values: list[Any]) -> tuple[Any, int, int] | None:
    """``(v, k, offset)`` such that ``values[i] == v`` exactly when ``(i + offset) % k == 0``."""
    for v in dict.fromkeys(values):
        for k in range(2, len(values) + 1):
            for offset in range(k):
                if all((x == v) == ((i + offset) % k == 0) for i, x in enumerate(values)):
                    return v, k, offset
    return None


def _pattern_shape(config_name: str, text: Any, field: str, entry: dict[str, Any],
                   layers: int) -> dict[str, Any] | None:
    """What else the every-k-th rule fitted at ``layers`` layers needs to hold at other layer counts:
    nothing; ``last`` (the class forces the last layer's kind, as Gemma 4's and Beam's do);
    ``at_least_one`` (the last layer is ``every`` when no other is, as OLMo-Hybrid's); ``from_end``
    (the rule counts from the last layer, with the offset that fits at ``layers``); or None if no rule does."""
    counts = (2, 3, 5, 7, 8, 13)
    built = {n: getattr(_built(config_name, text, num_hidden_layers=n), field, None) for n in counts}
    built = {n: list(v) for n, v in built.items() if isinstance(v, list) and len(v) == n}
    k, every, other = entry["k"], entry["every"], entry["other"]
    from_end_offset = -(layers - 1 + entry["offset"]) % k
    for shape in ({}, {"last": every}, {"at_least_one": True}, {"from_end": True}, {"from_end": True, "last": every}):
        offset = from_end_offset if shape.get("from_end") else entry["offset"]

        def rule(n: int, shape: dict[str, Any] = shape, offset: int = offset) -> list[Any]:
            out = [every if ((n - 1 - i if shape.get("from_end") else i) + offset) % k == 0 else other
                   for i in range(n)]
            if "last" in shape or (shape.get("at_least_one") and every not in out):
                out[-1] = every
            return out

        if all(rule(n) == values for n, values in built.items()):
            return {**shape, "offset": offset} if shape else {}
    return None


def _pattern(config_name: str, text: Any, field: str) -> dict[str, Any] | None:
    """How the config class fills ``layer_types`` (or ``no_rope_layers``) when a config.json gives
    none: every k-th layer (shifted by offset; counted from the last layer with ``from_end``) is of
    one kind, the others of the other, the last layer ``last`` where the class forces it; and which
    key sets k."""
    layers = 12
    base = _built(config_name, text, num_hidden_layers=layers)
    values = getattr(base, field, None)
    if not isinstance(values, list) or len(set(map(str, values))) not in (1, 2):
        return None
    if len(set(map(str, values))) == 1:  # every layer alike: k = 1
        fit: tuple[Any, int, int] | None = (values[0], 1, 0)
    else:
        fit = _fit_every(values)
    if fit is None:
        return None
    every, k, offset = fit
    other = next((v for v in values if v != every), every)
    entry: dict[str, Any] = {"every": every, "other": other, "k": k, "offset": offset}
    shape = _pattern_shape(config_name, text, field, entry, layers)
    if shape is None:  # no every-k-th rule fits the class at other layer counts: posenc claims none
        return None
    entry.update(shape)
    fields = [f.name for f in dataclasses.fields(type(text))] if dataclasses.is_dataclass(type(text)) else []
    for key in [] if k == 1 else _read_keys(type(text)) + fields:  # the key that sets k
        if key in ("num_hidden_layers", field) or not isinstance(_field_default(type(text), key), (int, type(None))):
            continue
        probe = 5 if k != 5 else 3  # a k other than the default one (Gemma 3n's fixed 5 is no key's)
        changed = _built(config_name, text, num_hidden_layers=layers, **{key: probe})
        got = getattr(changed, field, None)
        if isinstance(got, list) and (refit := _fit_every(got)) is not None and refit[1] == probe and refit[0] == every:
            entry["key"] = key
            break
    entry.update(dependence.pattern_dependence(config_name, text, field, entry))
    return entry


def _field_default(cls: type, name: str) -> Any:
    if dataclasses.is_dataclass(cls):
        for field in dataclasses.fields(cls):
            if field.name == name and field.default is not dataclasses.MISSING:
                return field.default
    return getattr(cls, name, None) if not isinstance(getattr(cls, name, None), property) else None


def _head_dim_source(config_name: str, text: Any) -> dict[str, Any] | None:
    """The key the config class copies into ``head_dim`` (DeepSeek-V3: ``qk_rope_head_dim``), or the
    two it adds into it (`_summed_source`), and whether that wins over a ``head_dim`` the config gives."""
    try:
        dim = text.head_dim
    except Exception:  # heterogeneous configs (per-layer head_dim) refuse a global read
        return None
    if not isinstance(dim, int) or isinstance(dim, bool):
        return None
    for key, value in sorted(text.to_dict().items()):
        if key == "head_dim" or value != dim or isinstance(value, bool):
            continue
        if getattr(_built(config_name, text, **{key: dim + 2}), "head_dim", None) == dim + 2:
            over = _built(config_name, text, **{key: dim + 2, "head_dim": dim + 4})
            source = {"key": key, "over_head_dim": getattr(over, "head_dim", None) == dim + 2}
            if _field_default(type(text), key) is None and (factor := _hidden_factor(config_name, text, key)) != 1:
                source["hidden_factor"] = factor  # Zamba2: attention_head_dim = 2 * hidden_size // heads
            return source
    return _summed_source(config_name, text, dim)


def _summed_source(config_name: str, text: Any, dim: int) -> dict[str, Any] | None:
    """Two keys the config class adds into ``head_dim`` (``{"key": a, "plus": [b]}``): each moves
    ``head_dim`` by its own change, and both by the two changes' sum (Mistral 4's
    ``qk_nope_head_dim + qk_rope_head_dim``, configuration_mistral4.py:131)."""
    ints = {key: value for key, value in sorted(text.to_dict().items())
            if key != "head_dim" and isinstance(value, int) and not isinstance(value, bool) and 0 < value < dim}
    for first, second in itertools.combinations(ints, 2):
        if ints[first] + ints[second] != dim:
            continue
        moves = ({first: ints[first] + 2}, {second: ints[second] + 4},
                 {first: ints[first] + 2, second: ints[second] + 4})
        if [getattr(_built(config_name, text, **m), "head_dim", None) for m in moves] == [dim + 2, dim + 4, dim + 6]:
            over = _built(config_name, text, **moves[2], head_dim=dim + 10)  # a head_dim given: does the sum win?
            return {"key": first, "plus": [second], "over_head_dim": getattr(over, "head_dim", None) == dim + 6}
    return None


def head_dim_keys(source: dict[str, Any] | None) -> list[str]:
    """The keys a ``head_dim_from`` entry reads (a config.json may leave them to the class defaults)."""
    return [source["key"], *source.get("plus", ())] if source else []


def _hidden_factor(config_name: str, text: Any, key: str) -> int | None:
    """f where the class computes ``key`` as ``f * hidden_size // num_attention_heads`` when the config
    gives none (1: the usual split; None: no such rule fits)."""
    found = set()
    for hidden, heads in ((64, 4), (96, 4), (192, 8)):
        built = _built(config_name, text, hidden_size=hidden, num_attention_heads=heads)
        value = getattr(built, key, None)
        if not isinstance(value, int) or isinstance(value, bool) or (value * heads) % hidden:
            return None
        found.add(value * heads // hidden)
    return found.pop() if len(found) == 1 else None


#: Keys a config may give under a legacy name its class maps onto them (not layer_types: Granite 4's
#: layers_block_type holds other values, read by its own rule).
_LEGACY_TARGETS = ("hidden_size", "num_attention_heads", "head_dim", "max_position_embeddings", "num_hidden_layers")


def attribute_names(cls: type, mapped: tuple[str, ...]) -> dict[str, Any]:
    """The class's ``attribute_map`` for the keys posenc reads, both ways round: ``attribute_map``,
    a canonical name the class stores under another key (DBRX's ``d_model`` for ``hidden_size``),
    and ``legacy_names``, another name a config.json may give a canonical key under, which the class
    stores as that key, winning over the canonical one (HunYuan-VL's ``attention_head_dim`` for
    ``head_dim``, configuration_hunyuan_vl.py:156; Voxtral Realtime's encoder's ``d_model``)."""
    names = getattr(cls, "attribute_map", None) or {}
    stored = {key: name for key, name in names.items() if key in mapped}
    legacy = {key: name for key, name in names.items() if name in _LEGACY_TARGETS and key not in mapped}
    return {**({"attribute_map": dict(sorted(stored.items()))} if stored else {}),
            **({"legacy_names": dict(sorted(legacy.items()))} if legacy else {})}


SIZE_KEYS = ("hidden_size", "num_attention_heads")


def mapped_default(cls: type, key: str) -> Any:
    """The class default of ``key``, read from the field the class stores it in (its
    ``attribute_map``: CodeGen's ``n_positions`` for ``max_position_embeddings``), else from the
    key's own field (Bailing's maps it to ``model_max_length`` and keeps a field of the name)."""
    mapped = _field_default(cls, (getattr(cls, "attribute_map", None) or {}).get(key, key))
    return _field_default(cls, key) if mapped is None else mapped


def size_defaults(text: Any, entry: dict[str, Any]) -> dict[str, int]:
    """The class defaults of the keys the head width is split from where the class has no default
    ``head_dim`` (Llama's 4096 and 32: ``head_dim = hidden_size // num_attention_heads``,
    configuration_llama.py:65-88), under the canonical names, each read from the field the class
    stores it in (GPT-J's ``n_embd``); kept only where the class built with no arguments has that
    value too (a default its ``__post_init__`` rewrites is left out, and the reader refuses)."""
    if "head_dim" in entry.get("field_defaults", {}):
        return {}
    out = {}
    for key in SIZE_KEYS:
        value = mapped_default(type(text), key)
        if isinstance(value, int) and not isinstance(value, bool) and _value(text, key) == value:
            out[key] = value
    return out


def wrapper_defaults(text: Any) -> dict[str, int]:
    """The defaults a wrapper's class gives its text model where they differ from the text class's
    own (GOT-OCR2's ``text_config`` default is a Qwen2 1024 wide with 16 heads, not Qwen2Config's
    4096 and 32): what a config without a ``text_config`` is built with."""
    try:
        alone = type(text)()
    except Exception:  # noqa: BLE001 - a text class that needs arguments: nothing to compare with
        return {}
    own = {}
    for key in ("head_dim", *SIZE_KEYS, "max_position_embeddings"):
        default, built = mapped_default(type(text), key), _value(text, key)
        if default is not None and isinstance(built, int) and not isinstance(built, bool) \
                and built != _value(alone, key):
            own[key] = built
    dim, hidden, heads = (_value(text, key) for key in ("head_dim", *SIZE_KEYS))
    if "head_dim" not in own and own.keys() & set(SIZE_KEYS) and all(
            isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in (dim, hidden, heads)) \
            and hidden // heads != dim:
        own["head_dim"] = dim  # Mistral 3's text model: 5120 wide, 32 heads of 128, not 160
    return own


def _value(config: Any, key: str) -> Any:
    """``config.key``; None where it has none, or where it has one per layer (Gemma 4's head_dim
    refuses a global read)."""
    try:
        return getattr(config, key, None)
    except Exception:  # noqa: BLE001 - transformers' AmbiguousGlobalPerLayerAttributeError, among others
        return None


def text_merges(config_name: str, text: Any) -> dict[str, Any]:
    """The defaults a wrapper's class merges under a ``text_config`` the config gives: its spec's
    ``init_kwargs`` where building the class from ``text_config={"model_type": ...}`` gives the text
    model those keys and not the text class's own (Voxtral's ``{**init_kwargs, **text_config}``,
    configuration_voxtral.py:121-122); {} where a given text_config is built as it stands."""
    import transformers
    cls = getattr(transformers, config_name)
    spec = (getattr(cls, "sub_configs_defaults", None) or {}).get("text_config")
    merged = dict(getattr(spec, "init_kwargs", None) or {})
    if not merged:
        return {}
    try:
        built = cls(text_config={"model_type": text.model_type}).get_text_config(decoder=True).to_dict()
        plain, under = type(text)().to_dict(), type(text)(**copy.deepcopy(merged)).to_dict()
    except Exception:  # noqa: BLE001 - a class that does not build from a bare text_config (Fun-ASR-Nano)
        return {}
    return merged if built == under != plain else {}
