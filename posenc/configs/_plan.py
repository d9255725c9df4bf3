"""Which kind of layer each layer of a model is, and whether its index lets it rotate.

The layer plan `posenc.configs._reader.read_config` reads before anything per layer: the config's
``layer_types`` (as its class rewrites them), or the types its class derives from other keys (Qwen2's
``max_window_layers``, Llama 4's NoPE flags, SmolLM3's sliding NoPE layers, a fixed pattern), and each
layer's NoPE flag (``no_rope_layers``, or the class's rule for it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from posenc._checks import check_int
from posenc.configs import _table as table
from posenc.configs import _windows as windows
from posenc.configs._schema import ModelTypeEntry


# Dots3's config class rewrites the layer list of a legacy config (configuration_dots3_note.py:286-320):
# ``use_dsa`` (true unless the config gives ``per_layer_config``) renames its full_attention layers
# indexed_attention (false: the other way round), and without ``layer_types`` it names the layers from
# ``use_sliding_window`` (true unless given): sliding_attention, but for the first two, every fourth from
# index 1, and every layer with the window off. Its full_attention layers are its indexed ones without
# the indexer (modeling_dots3_note.py:502), rotated with the same settings (rope_theta, and the rotated
# fraction qk_rope_head_dim / head_dim: :343-364): read with the table's indexed_attention entries.
LEGACY_LAYER_TYPES = {"dots3_note_text": {"old": "full_attention", "new": "indexed_attention"}}


# Every config class ends by renaming legacy layer types, after its own __post_init__ (configuration_utils.py:
# 94-99, applied to every config at :514): the names below, in layer_types or the key the class maps it to.
LEGACY_NAMES = {"mamba": "linear_attention", "attention": "full_attention",
                "deepseek_sparse_attention": "indexed_attention", "qwen_sparse_attention": "indexed_attention"}


# Config classes that map a legacy key onto layer_types (attribute_map): Granite 4's layers_block_type
# (configuration_granitemoehybrid.py:54), which its published configs give, of 'mamba' and 'attention' layers
# (renamed by LEGACY_NAMES below); given beside layer_types it wins, as the class's attribute map writes it.
# tests/test_rope_legacy_names.py derives the set from every class's attribute_map.
LEGACY_LAYER_KEYS = {"granitemoehybrid": "layers_block_type"}


def legacy_layer_key(config: Mapping[str, Any], model_type: str | None) -> Mapping[str, Any]:
    """The config with a `LEGACY_LAYER_KEYS` list stored as layer_types, as the class stores it."""
    legacy = LEGACY_LAYER_KEYS.get(model_type or "")
    if legacy is None or config.get(legacy) is None:
        return config
    return {**config, "layer_types": config[legacy]}


def class_layer_types(config: Mapping[str, Any], found: ModelTypeEntry,
                      model_type: str | None) -> tuple[Mapping[str, Any], ModelTypeEntry]:
    """The config with the layer types its class writes (`LEGACY_LAYER_TYPES`, then `LEGACY_NAMES`),
    and the table entry with a renamed type's rope settings where Dots3 reads them so."""
    types = _dots3_types(config, LEGACY_LAYER_TYPES.get(model_type or ""))
    # Dots3 keys its rope parameters by the names it is given, then the base class renames the layers: a
    # renamed layer finds parameters only where a layer already had the new name
    if isinstance(types, (list, tuple)) and (legacy := sorted(
            t for t in {t for t in types if isinstance(t, str)} & set(LEGACY_NAMES) if LEGACY_NAMES[t] not in types)):
        raise ValueError(f"config['layer_types'] names {legacy[0]!r} layers, which model type {model_type!r} cannot run: "
                         f"its config class keys the rope parameters by that name, then renames the layers "
                         f"{LEGACY_NAMES[legacy[0]]!r} (configuration_utils.py:514), and its rotary module finds no "
                         f"parameters for them (KeyError); name them as the class does")
    key = "layer_types" if types is not None or "layer_types" in config else (
        found.get("attribute_map", {}).get("layer_types") or "layer_types")
    types = config.get(key) if types is None else types
    if isinstance(types, (list, tuple)):
        types = [LEGACY_NAMES.get(kind, kind) if isinstance(kind, str) else kind for kind in types]
    if types is None:
        return config, found
    rule = LEGACY_LAYER_TYPES.get(model_type or "")
    if rule and rule["old"] in types:  # the old name's rope settings are the new one's
        old, new = rule["old"], rule["new"]
        aliased: dict[str, Any] = {name: {**value, old: value[new]} for name, value in found.items()
                                   if isinstance(value, Mapping) and new in value}
        found = {**found, **aliased}  # type: ignore[typeddict-item]
    return ({**config, key: types} if types != config.get(key) else config), found


def _dots3_types(config: Mapping[str, Any], rule: Mapping[str, str] | None) -> Any:
    """The layer types a `LEGACY_LAYER_TYPES` class writes (None: it writes none, or there is no rule)."""
    if rule is None:
        return None
    old, new = rule["old"], rule["new"]
    use_dsa = config.get("use_dsa", None if "per_layer_config" in config else True)
    window = config.get("use_sliding_window", True)
    for key, value in (("use_dsa", use_dsa), ("use_sliding_window", window)):  # null: None to the class too
        if value is not None and not isinstance(value, bool):
            raise TypeError(f"config[{key!r}] must be true, false or null, got {type(value).__name__} {value!r:.40}")
    types = config.get("layer_types")
    layers = config.get("num_hidden_layers")
    if types is None and layers is not None:
        layers = check_int("config['num_hidden_layers']", layers, minimum=1, maximum=2**20)
        full = old if use_dsa is False else new
        types = [full if not window or i < 2 or i % 4 == 1 else "sliding_attention" for i in range(layers)]
    if isinstance(types, (list, tuple)) and use_dsa is not None:
        before, after = (old, new) if use_dsa else (new, old)
        types = [after if kind == before else kind for kind in types]
    return types


# Zamba2's class sets max_position_embeddings to 16384 when use_long_context is on, whatever the config gives
# (configuration_zamba2.py:117-118): the context it declares, and the length its rotary module starts from.
LONG_CONTEXT: dict[str, dict[str, Any]] = {"zamba2": {"key": "use_long_context", "length": 16384}}


def class_length(config: Mapping[str, Any], model_type: str | None) -> Mapping[str, Any]:
    """The config with the max_position_embeddings its class sets (`LONG_CONTEXT`), else unchanged."""
    rule = LONG_CONTEXT.get(model_type or "")
    if rule is None:
        return config
    key = rule["key"]
    on = config[key] if key in config else False  # a strict field: true or false, default false
    if not isinstance(on, bool):
        raise TypeError(f"config[{key!r}] must be true or false, got {type(on).__name__} {on!r:.40}")
    return {**config, "max_position_embeddings": rule["length"]} if on else config


def class_names(config: Mapping[str, Any], found: ModelTypeEntry, model_type: str | None) -> Mapping[str, Any]:
    """The config with each key given under a legacy name its class maps onto it (``legacy_names``:
    HunYuan-VL's ``attention_head_dim`` for ``head_dim``) stored under the canonical name, as the
    class stores it: the legacy name wins over the canonical one, as in the class (its
    ``__setattr__`` writes the alias last); two legacy names of one key that disagree are refused."""
    renamed = found.get("legacy_names") or {}
    given = {alias: config[alias] for alias in renamed if config.get(alias) is not None}
    if not given:
        return config
    out = dict(config)
    for target in dict.fromkeys(renamed[alias] for alias in given):
        aliases = [alias for alias in given if renamed[alias] == target]
        if len({repr(given[alias]) for alias in aliases}) > 1:
            shown = " and ".join(f"config[{alias!r}] ({given[alias]!r:.20})" for alias in aliases)
            raise ValueError(f"{shown} both set {target!r} for model type {model_type!r} (its config class "
                             f"maps each onto it), and they differ: which one the class keeps depends on the "
                             f"order of the keys; give one")
        out[target] = given[aliases[0]]
    return out


def layer_plan(config: Mapping[str, Any], found: ModelTypeEntry, model_type: str | None,
                params: Mapping[str | None, Any]) -> tuple[list[str], list[bool]]:
    """The layer type of each layer and whether its index lets it rotate (Llama 4's and SmolLM3's
    ``no_rope_layers``); empty lists when the config gives no layer count."""
    needs_given(config, found, model_type)
    layers = table.get(found, config, "num_hidden_layers")
    layers = check_int("config['num_hidden_layers']", layers, minimum=1, maximum=2**20) if layers is not None else 0
    types = table.get(found, config, "layer_types")
    if types is not None:
        if not isinstance(types, (list, tuple)) or not all(isinstance(t, str) for t in types):
            raise TypeError(f"config['layer_types'] must be a list of strings, got {types!r:.80}")
        types = table.given_list(found, model_type, "layer_types", list(types))  # Gemma 4 forces the last one
        types = _counted(config, model_type, types, layers)
    elif found.get("layer_types_computed"):
        types = []  # the config class computes them from other keys, which posenc does not read
    elif layers and found.get("window_layers"):  # Qwen2: the layers from max_window_layers on, once the window is on
        types = windows.window_types(config, found, layers) or []
    elif layers and found.get("layer_types_from") and config.get(found["layer_types_from"]["key"]):
        types = _types_from_flags(config, found["layer_types_from"], layers)  # Llama 4: from no_rope_layers
    elif layers and ("layer_pattern" in found or found.get("layer_pattern_unknown")):
        types = table.pattern(found["layer_pattern"], config, layers) if "layer_pattern" in found else None
        if types is None and model_type in windows.NOPE_LAYERS_SLIDE:  # SmolLM3 with its window on
            types = windows.nope_sliding_types(config, model_type, _nope_flags(config, found, model_type, layers))
        if types is None:
            types = _unknown_pattern(found, model_type, params)
    else:
        kinds = [k for k in params if k is not None] or ["full_attention"]
        types = [kinds[0]] * layers if len(kinds) == 1 else []
    flags = [True] * len(types)
    if "no_rope_layers" in found.get("rope_condition", ()):
        flags = _nope_flags(config, found, model_type, len(types)) or flags
    if model_type in LAYER_THETAS and types:
        flags = [a and b for a, b in zip(flags, _theta_flags(config, model_type, len(types), params))]
    _scaled_layers(config, model_type, layers, params)
    return types, flags


# Wrappers whose config class builds its text model, where the config gives no text_config, with a base
# (and window) of its own and reads no rope keys at the top level: read_config reads a wrapper config without
# text_config with the text class's defaults (`posenc.configs._table.entry`), so these are refused by name.
WRAPPER_TEXT_ROPE: dict[str, str] = {
    "got_ocr2": "configuration_got_ocr2.py:91-110", "pp_chart2table": "configuration_pp_chart2table.py:90-109",
    "lighton_ocr": "configuration_lighton_ocr.py:69-85", "mistral3": "configuration_mistral3.py:52-69",
    "moss_transcribe_diarize": "configuration_moss_transcribe_diarize.py:98-108",
    "voxtral": "configuration_voxtral.py:95-107", "voxtral_realtime": "configuration_voxtral_realtime.py:150-166"}


def needs_given(config: Mapping[str, Any], found: ModelTypeEntry, model_type: str | None) -> None:
    """Refuse a config whose kinds of layer or text model the class fills in from defaults posenc does
    not read: a `WRAPPER_TEXT_ROPE` wrapper without its text_config (model_type is the wrapper's own
    only then), or no layer count where the class derives the layers without RoPE from it (the table's
    ``nope_pattern`` or ``layer_types_from``: Llama 4, SmolLM3; `LAYER_THETAS`' ``nope_every``: Muse),
    for a wrapper no text_config (its class ignores a count at the top: Llama4Config(num_hidden_layers=8)
    builds a 48-layer text model)."""
    if model_type in WRAPPER_TEXT_ROPE:
        raise ValueError(f"model type {model_type!r}: config needs 'text_config' (without it the config class "
                         f"builds the text model with a base and window of its own, "
                         f"{WRAPPER_TEXT_ROPE[model_type]}, which posenc does not read)")
    thetas = LAYER_THETAS.get(table.text_model_type(model_type)) if model_type is not None else None
    if not (found.get("nope_pattern") or found.get("layer_types_from") or (thetas or {}).get("nope_every")):
        return
    if model_type is not None and (table.model_types().get(model_type) or {}).get("text_model_type"):
        # a wrapper without text_config: its class builds the text model with the text class's layer count
        raise ValueError(f"model type {model_type!r}: config needs 'text_config' (its kinds of layer depend on "
                         f"the text model's layer count: without it the config class builds the text model with "
                         f"its default count and fills in the layers without RoPE from it)")
    if table.get(found, config, "num_hidden_layers") is None and table.get(found, config, "layer_types") is None:
        raise ValueError(f"model type {model_type!r}: config needs 'num_hidden_layers' (its kinds of layer depend "
                         f"on it: the config class fills in the layers without RoPE from its layer count)")


# Molmo2's model rotates the layers outside ``rope_scaling_layers`` (every layer unless given:
# configuration_molmo2.py:157-158) with the rope parameters' base and no scaling, rope type "default"
# (modeling_molmo2.py:98-110, 660-663, 707-718). posenc reads one scaling per kind of layer: a list that
# leaves out a layer under a scaling rule is refused.
SCALED_LAYERS: dict[str, dict[str, str]] = {
    "molmo2_text": {"key": "rope_scaling_layers", "where": "modeling_molmo2.py:98-110, 660-663, 707-718"}}


def _scaled_layers(config: Mapping[str, Any], model_type: str | None, layers: int,
                   params: Mapping[str | None, Any]) -> None:
    rule = SCALED_LAYERS.get(model_type or "")
    given = config.get(rule["key"]) if rule else None
    if rule is None or given is None:
        return
    key = rule["key"]
    if not isinstance(given, (list, tuple)) or not all(isinstance(i, int) and not isinstance(i, bool) for i in given):
        raise TypeError(f"config[{key!r}] must be a list of layer indices, got {given!r:.80}")
    kinds = [p.get("rope_type", p.get("type")) for p in params.values() if isinstance(p, Mapping)]
    if all(kind in (None, "default") for kind in kinds):
        return  # scaled and unscaled layers rotate alike
    left_out = sorted(set(range(layers)) - set(given)) if layers else None
    if left_out is None or left_out:
        which = (f"leaves out layer {left_out[0]}" if left_out else "is given without config['num_hidden_layers']")
        raise ValueError(f"config[{key!r}] {which}: transformers' code for model type {model_type!r} rotates the "
                         f"layers outside it without the scaling rule ({rule['where']}); posenc reads one scaling per "
                         f"kind of layer and does not read this config")


# Model types whose config class keeps a base per layer, ``layer_rope_theta`` (0: NoPE), and whose model
# passes a layer no position embeddings where it is 0. Muse Spark and Muse Glimmer fill it, when not
# given, with 0 for every fourth layer counted from the last (configuration_muse_spark.py:174-180,
# configuration_muse_glimmer.py:156-162) and read only whether it is 0 (one rotary module at the rope
# parameters' base: modeling_muse_spark.py:662-663, modeling_muse_glimmer.py:511-512); Granite SWA fills it
# with the base for every layer and builds one rotary module per distinct base, each layer using its own
# (modeling_granite_swa.py:392-398, 453-455; granitemoe_swa's :498-504, 559-561).
LAYER_THETAS: dict[str, dict[str, Any]] = {
    "muse_spark_text": {"nope_every": 4, "bases": False, "where": "modeling_muse_spark.py:662-663"},
    "muse_glimmer_text": {"nope_every": 4, "bases": False, "where": "modeling_muse_glimmer.py:511-512"},
    "granite_swa": {"nope_every": None, "bases": True, "where": "modeling_granite_swa.py:392-398, 453-455"},
    "granitemoe_swa": {"nope_every": None, "bases": True, "where": "modeling_granitemoe_swa.py:498-504, 559-561"},
}


def nope_note(config: Mapping[str, Any], model_type: str | None) -> str:
    """The note on layers whose index keeps them from rotating (``no_rope_layers``, `LAYER_THETAS`)."""
    if model_type not in LAYER_THETAS:
        return "no RoPE at these layers (config['no_rope_layers'])"
    if config.get("layer_rope_theta") is None:
        return ("no RoPE at these layers (config['layer_rope_theta'], which the config class fills with 0, NoPE, for "
                "every fourth layer counted from the last)")
    return "no RoPE at these layers (config['layer_rope_theta'] is 0 there)"


def _theta_flags(config: Mapping[str, Any], model_type: str, count: int,
                 params: Mapping[str | None, Any]) -> list[bool]:
    """Whether each of ``count`` layers rotates by ``layer_rope_theta`` (`LAYER_THETAS`); a per-layer base
    other than the rope parameters' is refused (posenc reads one base per kind of layer)."""
    rule = LAYER_THETAS[model_type]
    given = config.get("layer_rope_theta")
    if given is None:
        every = rule["nope_every"]
        return [not every or (count - 1 - i) % every != 0 for i in range(count)]
    if not isinstance(given, (list, tuple)) or len(given) != count or not all(
            isinstance(t, (int, float)) and not isinstance(t, bool) for t in given):
        raise ValueError(f"config['layer_rope_theta'] must be a list of {count} numbers (a base per layer, 0: NoPE), "
                         f"got {given!r:.80}")
    flat = params.get(None)
    base = flat.get("rope_theta") if isinstance(flat, Mapping) else None
    if rule["bases"] and (other := next((t for t in given if t and t != base), None)) is not None:
        raise ValueError(f"config['layer_rope_theta'] gives a layer the base {other!r}, where the rope parameters' "
                         f"is {base!r}: transformers' code for model type {model_type!r} rotates each layer with its "
                         f"own base ({rule['where']}); posenc reads one base per kind of layer and does not read "
                         f"this config")
    return [bool(t) for t in given]


# Step 3.7's text config trims the layer lists legacy configs pad with num_nextn_predict_layers trailing MTP
# entries (configuration_step3p7.py:185-200), before every config class checks that layer_types has one entry
# per layer (validate_layer_type, configuration_utils.py:703-718).
PADDED_LAYERS = {"step3p5": "num_nextn_predict_layers"}


def _counted(config: Mapping[str, Any], model_type: str | None, types: list[str], layers: int) -> list[str]:
    """The given layer types as the class keeps them (`PADDED_LAYERS`: the padding trimmed); one per
    layer where the layers are counted, as transformers' config classes check (validate_layer_type,
    configuration_utils.py:703-718)."""
    pad = PADDED_LAYERS.get(model_type or "")
    extra = config.get(pad) if pad else None
    if isinstance(extra, int) and not isinstance(extra, bool) and extra > 0 and len(types) == layers + extra:
        return types[:layers]
    if layers and len(types) != layers:
        raise ValueError(f"config['layer_types'] must have one entry per layer ({layers}, "
                         f"num_hidden_layers), got {len(types)}: {types!r:.80}")
    return types


def _nope_flags(config: Mapping[str, Any], found: ModelTypeEntry, model_type: str | None,
                count: int) -> list[bool] | None:
    """Whether each of ``count`` layers rotates, from ``no_rope_layers`` or the class's rule for it
    (SmolLM3: every ``no_rope_layer_interval``-th layer NoPE); None where neither gives flags."""
    given = config.get("no_rope_layers")
    if given is None and "nope_pattern" in found and count:
        given = table.pattern(found["nope_pattern"], config, count)
        if given is None:
            raise ValueError(f"config needs 'no_rope_layers' for model type {model_type!r}: its config class "
                             f"fills them from keys this config sets, by a rule posenc does not derive")
    elif isinstance(given, (list, tuple)):
        given = table.given_list(found, model_type, "no_rope_layers", list(given))
    if given is None:
        return None
    if not isinstance(given, (list, tuple)) or len(given) != count:
        raise ValueError(f"config['no_rope_layers'] must be a list of {count} flags (1: the layer "
                         f"rotates, 0: NoPE), got {given!r:.80}")
    return [bool(flag) for flag in given]


def _types_from_flags(config: Mapping[str, Any], spec: Mapping[str, Any], layers: int) -> list[str]:
    """The kind of each layer where the config class names it from the given NoPE flags (Llama 4:
    a layer that rotates is chunked attention, a NoPE layer full attention)."""
    key = spec["key"]
    flags = config[key]
    if not isinstance(flags, (list, tuple)) or len(flags) != layers:
        raise ValueError(f"config[{key!r}] must be a list of {layers} flags (1: the layer rotates, 0: NoPE), "
                         f"got {flags!r:.80}")
    return [spec["kinds"]["1" if flag else "0"] for flag in flags]


def _unknown_pattern(found: ModelTypeEntry, model_type: str | None, params: Mapping[str | None, Any]) -> list[str]:
    """No layer types for a config whose class fills them by a rule posenc does not follow: an error
    where the layer type decides the RoPE (one set per layer type, or only some kinds rotate)."""
    # no_rope_layers: NoPE flags belong to layers whose order is unknown here, so no reading could
    # place them (SmolLM3's rule is followed before this: windows.nope_sliding_types)
    if any(k is not None for k in params) or {"sliding_only", "sliding_or_no_window", "no_rope_layers"} & set(
            found.get("rope_condition", ())):
        raise ValueError(f"config needs 'layer_types' for model type {model_type!r}: its config class fills them "
                         f"by a rule posenc does not derive (for this config), and its layers differ in RoPE by type")
    return []
