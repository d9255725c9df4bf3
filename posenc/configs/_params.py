"""How transformers' config classes complete a model's RoPE parameters, read from a config dict.

The helpers of `posenc.configs._reader`: the config's text part and the rope parameters of each layer
type (``rope_parameters`` and ``rope_scaling`` merged, per-layer bases, flat keys and class
defaults, what a per-layer-type class makes of a flat set or a null entry). One kind of layer
(widths, scaling, what acts outside the rotation) is read in `posenc.configs._layer`; what differs
between model types comes from `posenc.configs._table`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

from posenc.configs import _table as table
from posenc.configs._layer import _one
from posenc.configs._ntk_alpha import ALPHA_NOTE, _reads_alpha
from posenc.configs._schema import ModelTypeEntry

MAX_NESTING = 100  # levels of dicts and lists a config may nest (a config.json nests a few)


# ---------------------------------------------------------------- reading the config
def _as_mapping(config: object) -> Mapping[str, Any]:
    if isinstance(config, Mapping):
        return _check_nesting(config)
    to_dict = getattr(config, "to_dict", None)
    if callable(to_dict):  # a transformers PreTrainedConfig
        result = to_dict()
        if isinstance(result, Mapping):
            return _check_nesting(result)
    raise TypeError(f"config must be a dict (a model's config.json) or a transformers config, "
                    f"got {type(config).__name__}")

def _check_nesting(config: Mapping[str, Any]) -> Mapping[str, Any]:
    if _too_deep(config):
        raise ValueError(f"config nests more than {MAX_NESTING} levels deep (dicts and lists; a config.json "
                         f"nests a few)")
    return config

def _too_deep(value: object) -> bool:
    """Whether dicts and lists nest more than MAX_NESTING levels in ``value`` (a loop does): checked
    before anything recursive (copying, comparing, printing a value) meets them, without recursing."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        value, depth = stack.pop()
        children = value.values() if isinstance(value, Mapping) else value if isinstance(value, (list, tuple)) else ()
        for child in children:
            if isinstance(child, (Mapping, list, tuple)):
                if depth + 1 > MAX_NESTING:
                    return True
                stack.append((child, depth + 1))
    return False

#: Where a wrapper keeps its language model's config: ``text_config``, else the names transformers'
#: ``get_text_config(decoder=True)`` looks for (configuration_utils.py:1539: T5Gemma's ``decoder``,
#: RAG's ``generator``), else ``decoder_config`` (Canary and Dia, whose get_text_config returns it).
TEXT_CONFIG_KEYS = ("text_config", "decoder", "generator", "decoder_config")


#: What a wrapper's config class sets on the part read_config reads: T5GemmaConfig makes its decoder a decoder
#: (configuration_t5gemma.py:151), whatever the part says (posenc.configs._two_way.PARTS reads the flag).
WRAPPER_SETS: dict[tuple[str | None, str], dict[str, Any]] = {("t5gemma", "decoder"): {"is_decoder": True}}


#: The canonical keys read_config reads from a text model's config (_layer, _params, _plan, _windows,
#: _rotated_part; a model type's own names besides, Gemma 3's rope_local_base_freq): the table generator
#: builds each wrapper class with each at its top level (tools/rope_model_types/wrappers.py) and records
#: those its class reads (``top_level_read``); `_ignored` says what a class does with the other names.
TOP_LEVEL_KEYS = ("rope_theta", "rope_parameters", "rope_scaling", "partial_rotary_factor", "hidden_size",
                  "num_attention_heads", "head_dim", "max_position_embeddings", "num_hidden_layers", "layer_types",
                  "sliding_window", "use_sliding_window", "max_window_layers", "attention_chunk_size",
                  "no_rope_layers", "rope_interleave", "qk_rope_head_dim", "use_bidirectional_attention",
                  "attn_temperature_tuning", "floor_scale", "attn_scale", "use_mem_rope", "layer_rope_theta")


def wrapper_merges() -> dict[str, dict[str, Any]]:
    """Wrappers whose config class merges defaults of its own under a text_config the config gives
    (``{**init_kwargs, **text_config}``, configuration_voxtral.py:121-122, configuration_glmasr.py:112-113,
    ...), with those defaults: the table's ``text_config_merges``, which the generator finds by building
    each wrapper class from a bare text_config. The text model reads them where the text_config leaves them out."""
    return {name: dict(item["text_config_merges"]) for name, item in table.model_types().items()
            if "text_config_merges" in item}


def _with_merged(model_type: str | None, text: Mapping[str, Any]) -> dict[str, Any]:
    """A text_config with `wrapper_merges`' defaults under it, as the class merges them. The base in
    ``rope_parameters`` wins over a flat ``rope_theta`` (transformers' rope standardization keeps a
    given rope_parameters' base): a merged flat base under a given one is dropped, and a given flat
    base under merged rope_parameters, which transformers ignores, is refused by name."""
    found = table.model_types().get(model_type or "", {})
    merged: dict[str, Any] = dict(found.get("text_config_merges", {}))
    params = text.get("rope_parameters")
    if isinstance(params, Mapping) and params.get("rope_theta") is not None:
        merged = {key: value for key, value in merged.items() if key != "rope_theta"}
    theirs = merged.get("rope_parameters", {}).get("rope_theta")
    if theirs is not None and "rope_parameters" not in text and text.get("rope_theta") not in (None, theirs):
        raise ValueError(f"model type {model_type!r}: config['text_config']['rope_theta'] = {text['rope_theta']!r} "
                         f"is not read (the config class merges its own rope_parameters, base {theirs!r}, under "
                         f"the text_config, and their base wins): give it in config['text_config']['rope_parameters']")
    return {**merged, **text}


def _is_wrapper(model_type: object) -> bool:
    """Whether the config class of ``model_type`` keeps its language model in a part (`TEXT_CONFIG_KEYS`)."""
    return isinstance(model_type, str) and bool(table.model_types().get(model_type, {}).get("text_model_type"))


def _ignored(config: Mapping[str, Any]) -> list[str]:
    """The keys a wrapper's config class does not pass to its text model when the config has no text part:
    one of `TOP_LEVEL_KEYS` not in the table's ``top_level_read`` (LlavaConfig(rope_theta=5.0) builds
    Llama's 1e4), and where the class reads none of them, any other key (Gemma3Config(rope_local_base_freq
    =5.0) keeps 1e4 too); a class that reads some passes its text class's other keys on (Qwen2-VL's,
    HunYuan-VL's: configuration_qwen2_vl.py:171-185, configuration_hunyuan_vl.py:276-289)."""
    model_type = config.get("model_type")
    if not _is_wrapper(model_type) or _text_key(config) is not None:
        return []
    read = table.model_types()[str(model_type)].get("top_level_read")
    passed = set(read or ()) | ({key for key in config if key not in TOP_LEVEL_KEYS} if read is not None else set())
    # a null too: Gemma3Config(sliding_window=None) keeps its text model's 4096
    return [key for key in config if key not in passed and key != "model_type" and key not in TEXT_CONFIG_KEYS]


def refuse_ignored(config: Mapping[str, Any], read: Callable[[Mapping[str, Any]], object]) -> None:
    """Refuse, by name, a key at the top of a wrapper's config that its class does not pass to its
    text model (`_ignored`) where it changes ``read``'s answer (the reading, or its error): read_config
    would read what transformers drops. The text model the class builds is the config without them."""
    ignored = _ignored(config)
    if not ignored:
        return
    kept = {key: value for key, value in config.items() if key not in ignored}
    full, base = _outcome(read, config), _outcome(read, kept)
    if full == base:
        return
    # the first key that changes the answer alone; else, for keys that act only together (a window and
    # its switch), the first whose removal changes it (each search reads the config once a key, so it
    # stops at the first found)
    alone = (key for key in ignored if _outcome(read, {**kept, key: config[key]}) != base)
    together = (key for key in ignored if _outcome(read, {k: v for k, v in config.items() if k != key}) != full)
    key = next(alone, None)
    key = next(together, None) if key is None else key
    key = ignored[0] if key is None else key
    raise ValueError(f"model type {config['model_type']!r}: config[{key!r}] = {config[key]!r} is not read (without a "
                     f"text_config the config class builds its text model from its own defaults and ignores "
                     f"it): give it in the language model's part, config['text_config'] (or the 'decoder', "
                     f"'generator' or 'decoder_config' its class keeps)")


def _outcome(read: Callable[[Mapping[str, Any]], object], config: Mapping[str, Any]) -> object:
    try:
        return read(config)
    except (ValueError, TypeError) as error:
        return type(error), str(error)


def _text_key(config: Mapping[str, Any]) -> str | None:
    """The key of a wrapper's language-model config in ``config`` (a dict there), or None."""
    if not _is_wrapper(config.get("model_type")):
        return None
    return next((key for key in TEXT_CONFIG_KEYS if isinstance(config.get(key), Mapping)), None)


def _text_part(config: Mapping[str, Any]) -> tuple[str | None, Mapping[str, Any]]:
    """The model type and the keys of the language model (a vision-language config keeps them in
    ``text_config``, an encoder-decoder in ``decoder``: `TEXT_CONFIG_KEYS`)."""
    model_type = config.get("model_type")
    if model_type is not None and not isinstance(model_type, str):
        raise TypeError(f"config['model_type'] must be a string, got {type(model_type).__name__}")
    key = _text_key(config)
    if key is None or model_type is None:  # not a wrapper, or its language model not given as a dict
        given = next((name for name in TEXT_CONFIG_KEYS if config.get(name) is not None), None)
        if given is not None and _is_wrapper(model_type):
            raise TypeError(f"config[{given!r}] must be a dict (the language model's config), "
                            f"got {type(config[given]).__name__}")
        return model_type, config
    part = _with_merged(model_type, config[key]) if key == "text_config" else config[key]
    text = {**part, **WRAPPER_SETS.get((model_type, key), {})}
    inner = text.get("model_type")
    if inner is not None and not isinstance(inner, str):
        raise TypeError(f"config[{key!r}]['model_type'] must be a string, got {type(inner).__name__}")
    return table.text_model_type(model_type, inner), text

def _sources(config: Mapping[str, Any], found: ModelTypeEntry) -> dict[str, Mapping[str, Any]]:
    """``rope_scaling`` and ``rope_parameters`` as the config gives them (dicts), without a source the
    config class ignores (Cohere2-MoE's ``rope_scaling``)."""
    found_sources = {}
    for key in ("rope_scaling", "rope_parameters"):
        value = config.get(key)
        if value is None:
            continue
        if not isinstance(value, Mapping):
            raise TypeError(f"config[{key!r}] must be a dict or None, got {type(value).__name__}")
        if key not in found.get("ignored_sources", ()):
            found_sources[key] = value
    return found_sources

def _merged(sources: Mapping[str, Mapping[str, Any]]) -> dict[str, Any] | None:
    """``rope_parameters`` and the older ``rope_scaling``, merged (they must agree)."""
    merged: dict[str, Any] | None = None
    for value in sources.values():
        merged = {} if merged is None else merged
        for name, item in value.items():
            if name in merged and merged[name] != item:
                raise ValueError(f"config is inconsistent: rope_scaling[{name!r}] = {merged[name]!r} but "
                                 f"rope_parameters[{name!r}] = {item!r}")
            merged[name] = copy.deepcopy(item)
    return merged

def _nested(params: Mapping[str, Any], names: set[str]) -> bool:
    return bool(params) and all(isinstance(v, Mapping) or v is None for v in params.values()) and (
        not names or set(params) <= names | set(table.ATTENTION_LAYER_TYPES))

def _parameters(config: Mapping[str, Any], found: ModelTypeEntry, layer_types: list[str],
                notes: list[str] | None = None) -> dict[str | None, dict[str, Any] | None]:
    """The rope parameters of each layer type (None key: one for every layer), completed as
    transformers' config classes complete them; what the class ignores is added to ``notes``."""
    notes = [] if notes is None else notes
    sources = _sources(config, found)
    notes += [f"transformers' config class for this model type ignores config[{key!r}]"
              for key in found.get("ignored_sources", ()) if config.get(key) is not None]
    if found.get("fixed_tables"):  # GPT-J, CodeGen: base 10000 and no scaling, whatever the config says
        set_keys = [key for key in ("rope_scaling", "rope_parameters", "rope_theta") if config.get(key) is not None]
        notes += [f"transformers' code for this model type uses fixed tables (base 10000, no scaling): it "
                  f"ignores {', '.join(f'config[{key!r}]' for key in set_keys)}"] if set_keys else []
        return {None: {"rope_type": "default", "rope_theta": 10000.0}}
    default = copy.deepcopy(found.get("default_rope_parameters")) or {}
    names = set(layer_types) | {k for k, v in default.items() if isinstance(v, Mapping)}
    per_type = bool(default) and _nested(default, names)  # a class with one RoPE per layer type
    nested: dict[str | None, dict[str, Any] | None]
    relied: list[str] = []  # what comes from defaults the class computes (from keys posenc does not read)
    given = sources.get("rope_parameters")
    if per_type and given is not None and _nested(given, names):
        if "rope_scaling" in sources:  # the class would update some entries with it: not followed
            raise ValueError("config gives both 'rope_parameters' by layer type and a flat 'rope_scaling'; "
                             "move the scaling into the entries of 'rope_parameters'")
        nested = {k: None if v is None else dict(copy.deepcopy(v)) for k, v in given.items()}
        _complete_entries(config, found, nested, relied)
    elif per_type:  # a flat config of a per-layer-type model (Gemma 3 as published)
        nested = _from_flat(config, found, default, sources, notes)
        relied.append("'rope_parameters' by layer type")
    else:
        raw = _merged(sources)
        if raw is not None and _nested(raw, names):
            nested = {k: v for k, v in raw.items()}
        else:
            nested = {None: raw if raw is not None else default}
            relied += ["'rope_parameters'"] if raw is None and set(default) - {"rope_type"} else []
    absent = found.get("absent_defaults_scaling") if set(sources) == {"rope_scaling"} else None
    absent = found.get("absent_defaults", {}) if absent is None else absent
    for layer_type, params in nested.items():
        if params is not None:
            _complete(config, found, layer_type, params, flat=layer_type is None, absent=absent, relied=relied)
    if any(params is not None and _reads_alpha(found, params) for params in nested.values()):
        notes.append(ALPHA_NOTE)  # HunYuan: "dynamic" with alpha is a fixed base (refused with another type)
    groups = found.get("defaults_depend_on") or ()
    source = found.get("head_dim_from")  # Mistral 4's fraction follows its summed keys: read from them
    summed = {source["key"], *source.get("plus", ())} if source and source.get("plus") else set()
    changed = [group for group in groups if not set(group) <= summed
               and all(table.differs(config, key, value) for key, value in group.items())]
    if relied and changed:
        keys = ", ".join(repr(key) for group in changed for key in group)
        raise ValueError(f"config needs {' and '.join(dict.fromkeys(relied))} for this model type: its config "
                         f"class computes the default from keys this config changes ({keys}), by a rule posenc "
                         f"does not derive")
    return nested

def _from_flat(config: Mapping[str, Any], found: ModelTypeEntry, default: dict[str, Any],
               sources: Mapping[str, Mapping[str, Any]], notes: list[str]) -> dict[str | None, dict[str, Any] | None]:
    """The entries a per-layer-type class makes of a flat ``rope_scaling`` or ``rope_parameters``:
    each layer type's defaults, updated with the flat set where the class puts it, and the bases
    from the class's top-level keys (a base inside the flat set wins where the class lets it land)."""
    if len(sources) > 1:
        raise ValueError("config gives both a flat 'rope_scaling' and a flat 'rope_parameters' for a model type "
                         f"with one RoPE per layer type ({', '.join(map(repr, default))}); give one, by layer type")
    source, flat = next(iter(sources.items()), (None, None))
    if flat and any(isinstance(v, Mapping) for v in flat.values()):
        raise ValueError(f"config[{source!r}] mixes entries by layer type with flat settings: give each layer type "
                         f"its parameters ({', '.join(map(repr, default))}), or one flat set")
    landing = (found.get("flat_landing") or {}).get(source) if source else {"layer_types": [], "theta": []}
    if landing is None:  # the class keeps it flat (its model then fails), or spreads it in a way not followed
        raise ValueError(f"config[{source!r}] must map each layer type to its parameters for this model type "
                         f"({', '.join(map(repr, default))}), got one set {dict(flat or {})!r:.80}")
    nested = {k: None if v is None else dict(v) for k, v in default.items()}  # None: a NoPE layer type (Beam)
    for layer_type in landing["layer_types"]:
        kept = {k: copy.deepcopy(v) for k, v in (flat or {}).items() if k != "rope_theta"}
        nested[layer_type].update(kept)  # type: ignore[union-attr]  # a layer type a flat set lands on rotates
    for layer_type, key in found.get("base_keys", {}).items():
        if config.get(key) is not None and nested.get(layer_type) is not None:
            nested[layer_type]["rope_theta"] = config[key]  # type: ignore[index]
    if flat and flat.get("rope_theta") is not None:
        for layer_type in landing["theta"]:
            nested[layer_type]["rope_theta"] = flat["rope_theta"]  # type: ignore[index]
    if flat and not landing["layer_types"]:
        notes.append(f"config[{source!r}] is one flat set, which transformers' config class for this model type "
                     f"ignores: every layer type keeps its default parameters")
    return nested  # type: ignore[return-value]

def _complete_entries(config: Mapping[str, Any], found: ModelTypeEntry,
                      nested: dict[str | None, dict[str, Any] | None], relied: list[str]) -> None:
    """Complete the entries of a ``rope_parameters`` by layer type as the per-layer-type class does:
    a None entry it fills in, an entry without a base, settings the class adds."""
    for layer_type, entry in nested.items():
        if entry is None and layer_type in found.get("null_filled", ()):
            nested[layer_type] = entry = {"rope_type": "default"}
        if entry is None:
            continue  # NoPE where the class marks it so (Beam); an error otherwise (read_config)
        for key in found.get("nested_top_level", ()):  # Step 3.5 copies a top-level partial_rotary_factor in
            if entry.get(key) is None and config.get(key) is not None:
                entry[key] = config[key]
        _check_entry_fraction(found, layer_type, entry)
        name = layer_type or ""  # the table's per-layer-type keys are layer types (never None)
        spec = (found.get("nested_bases") or {}).get(name)
        if entry.get("rope_theta") is None and found.get("nested_theta_required"):
            raise ValueError(f"config['rope_parameters'][{layer_type!r}] needs 'rope_theta': transformers' config "
                             f"class for this model type leaves an entry without one with no base")
        if entry.get("rope_theta") is None and spec is not None:
            base_key = spec["key"]
            entry["rope_theta"] = config[base_key] if base_key and config.get(base_key) is not None else spec["default"]
        forced = (found.get("nested_forced") or {}).get(name, ())
        for key, value in ((found.get("nested_fill") or {}).get(name) or {}).items():
            if key in forced and entry.get(key) is not None and entry[key] != value:
                raise ValueError(f"config['rope_parameters'][{layer_type!r}][{key!r}] is {entry[key]!r}, but "
                                 f"transformers' config class for this model type sets it to {value!r} itself")
            if key in forced or entry.get(key) is None:
                relied.append(f"rope_parameters[{layer_type!r}][{key!r}]")
            if entry.get(key) is None:
                entry[key] = value

def _check_entry_fraction(found: ModelTypeEntry, layer_type: str | None, entry: Mapping[str, Any]) -> None:
    """A rotated fraction in an entry of rope type "default" that the model's rotary module ignores
    (Gemma 3's default rule reads only the base): an error, not a width transformers does not use."""
    fraction = entry.get("partial_rotary_factor")
    kind = entry.get("rope_type", entry.get("type")) or "default"
    if (fraction is not None and fraction != 1.0 and kind == "default"
            and layer_type in found.get("nested_partial_ignored", ())):
        raise ValueError(f"config['rope_parameters'][{layer_type!r}]['partial_rotary_factor'] is {fraction!r}, which "
                         f"transformers' code for this model type does not apply to an entry of rope_type 'default' "
                         f"(it rotates the whole head); leave it out")

def _complete(config: Mapping[str, Any], found: ModelTypeEntry, layer_type: str | None,
              params: dict[str, Any], *, flat: bool, absent: Mapping[str, Any] | None = None,
              relied: list[str] | None = None) -> None:
    if flat:  # rope_theta and partial_rotary_factor may come from the top level, as the class reads them
        ignored = found.get("ignored_top_level", ())
        for target in ("rope_theta", "partial_rotary_factor"):
            names = [] if target in ignored else [target]
            names += [key for key, name in found.get("key_aliases", {}).items() if name == target]
            top = _one(target, *((f"config[{name!r}]", {target: config.get(name)}) for name in names))
            if params.get(target) is None:
                params[target] = top if top is not None else (absent or {}).get(target)
                if top is None and params[target] is not None and relied is not None:
                    relied.append(repr(target))
            elif top is not None:
                _one(target, ("rope_parameters", params), ("config", {target: top}))
            if params[target] is None:
                del params[target]
    if params.get("rope_theta") is None:
        params["rope_theta"] = table.default_theta(found, layer_type)
    kind = _one("rope_type", ("rope_parameters", params)) or params.get("type") or "default"
    if not isinstance(kind, str):
        raise TypeError(f"rope_type must be a string such as 'yarn', got {type(kind).__name__} {kind!r}")
    if params.get("type") is not None and params.get("rope_type") is not None and params["type"] != kind:
        raise ValueError(f"config is inconsistent: rope type {params['type']!r} under 'type' but {kind!r} "
                         f"under 'rope_type'")
    params["rope_type"] = found.get("type_aliases", {}).get(kind, kind)
    params.pop("type", None)
