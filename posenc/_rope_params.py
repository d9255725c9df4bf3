"""How transformers' config classes complete a model's RoPE parameters, read from a config dict.

The helpers of `posenc.rope_config`: the rope parameters of each layer type (``rope_parameters``
and ``rope_scaling`` merged, per-layer bases, flat keys and class defaults), the head and rotated
widths, the scaling dict, and what acts outside the rotation. What differs between model types
comes from `posenc._rope_table`.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from posenc import _rope_table as table
from posenc._checks import MAX_SIZE, check_int, is_integer
from posenc._scaling_rules import _yarn_mscale
from posenc.rope_scaling import MAX_ROPE_DIM, _real, parse_scaling

# rope_type -> the keys of rope_parameters it reads (besides rope_type/type, rope_theta, partial_rotary_factor).
ROPE_TYPES: dict[str, tuple[str, ...]] = {
    "default": (),
    "linear": ("factor",),
    "dynamic": ("factor",),
    "yarn": ("factor", "original_max_position_embeddings", "attention_factor", "beta_fast", "beta_slow",
             "mscale", "mscale_all_dim", "truncate"),
    "longrope": ("factor", "original_max_position_embeddings", "attention_factor", "short_factor", "long_factor"),
    "llama3": ("factor", "original_max_position_embeddings", "low_freq_factor", "high_freq_factor"),
    "proportional": ("factor",),
}
_COMMON = ("rope_type", "type", "rope_theta", "partial_rotary_factor")
MAX_LENGTH = 2**53
MAX_NESTING = 100  # levels of dicts and lists a config may nest (a config.json nests a few)
_WITH_ORIGINAL = ("yarn", "longrope", "llama3")


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

def _one(name: str, *sources: tuple[str, Mapping[str, Any]]) -> Any:
    """The value of key `name` in whichever sources have it (not None); they must agree."""
    found = [(where, source[name]) for where, source in sources if source.get(name) is not None]
    if len({repr(value) for _, value in found}) > 1:
        listed = ", ".join(f"{where}[{name!r}] = {value!r}" for where, value in found)
        raise ValueError(f"config is inconsistent: {listed}")
    return found[0][1] if found else None

def _text_part(config: Mapping[str, Any]) -> tuple[str | None, Mapping[str, Any]]:
    """The model type and the keys of the language model (a vision-language config keeps them in
    ``text_config``)."""
    model_type = config.get("model_type")
    if model_type is not None and not isinstance(model_type, str):
        raise TypeError(f"config['model_type'] must be a string, got {type(model_type).__name__}")
    text = config.get("text_config")
    if isinstance(text, Mapping) and model_type is not None and table.model_types().get(model_type, {}).get(
            "text_model_type"):
        inner = text.get("model_type")
        if inner is not None and not isinstance(inner, str):
            raise TypeError(f"config['text_config']['model_type'] must be a string, got {type(inner).__name__}")
        return table.text_model_type(model_type, inner), text
    return model_type, config

def _sources(config: Mapping[str, Any], found: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
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

def _parameters(config: Mapping[str, Any], found: Mapping[str, Any], layer_types: list[str],
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
    groups = found.get("defaults_depend_on") or ()
    changed = [group for group in groups if all(table.differs(config, key, value) for key, value in group.items())]
    if relied and changed:
        keys = ", ".join(repr(key) for group in changed for key in group)
        raise ValueError(f"config needs {' and '.join(dict.fromkeys(relied))} for this model type: its config "
                         f"class computes the default from keys this config changes ({keys}), by a rule posenc "
                         f"does not derive")
    return nested

def _from_flat(config: Mapping[str, Any], found: Mapping[str, Any], default: dict[str, Any],
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

def _complete_entries(config: Mapping[str, Any], found: Mapping[str, Any],
                      nested: dict[str | None, dict[str, Any] | None], relied: list[str]) -> None:
    """Complete the entries of a ``rope_parameters`` by layer type as the per-layer-type class does:
    a None entry it fills in, an entry without a base, settings the class adds."""
    for layer_type, entry in nested.items():
        if entry is None and layer_type in found.get("null_filled", ()):
            nested[layer_type] = entry = {"rope_type": "default"}
        if entry is None:
            continue  # NoPE where the class marks it so (Beam); an error otherwise (read_config)
        spec = (found.get("nested_bases") or {}).get(layer_type)
        if entry.get("rope_theta") is None and found.get("nested_theta_required"):
            raise ValueError(f"config['rope_parameters'][{layer_type!r}] needs 'rope_theta': transformers' config "
                             f"class for this model type leaves an entry without one with no base")
        if entry.get("rope_theta") is None and spec is not None:
            key = spec["key"]
            entry["rope_theta"] = config[key] if key and config.get(key) is not None else spec["default"]
        forced = (found.get("nested_forced") or {}).get(layer_type, ())
        for key, value in ((found.get("nested_fill") or {}).get(layer_type) or {}).items():
            if key in forced and entry.get(key) is not None and entry[key] != value:
                raise ValueError(f"config['rope_parameters'][{layer_type!r}][{key!r}] is {entry[key]!r}, but "
                                 f"transformers' config class for this model type sets it to {value!r} itself")
            if key in forced or entry.get(key) is None:
                relied.append(f"rope_parameters[{layer_type!r}][{key!r}]")
            if entry.get(key) is None:
                entry[key] = value

def _complete(config: Mapping[str, Any], found: Mapping[str, Any], layer_type: str | None,
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

# ---------------------------------------------------------------- widths
def _head_dim(config: Mapping[str, Any], found: Mapping[str, Any], layer_type: str | None) -> int:
    overrides, types = config.get("per_layer_config"), table.get(found, config, "layer_types")
    if layer_type is not None and isinstance(overrides, Mapping) and isinstance(types, (list, tuple)):
        # Gemma 4: per_layer_config overrides head_dim for some layer indices ("05": {...})
        by_index = {int(key): _override(key, value) for key, value in overrides.items()  # int keys: a config object
                    if is_integer(key) or (isinstance(key, str) and key.isascii() and key.isdigit())}
        dims = {by_index.get(i) for i, kind in enumerate(types) if kind == layer_type}
        if len(dims) > 1:
            raise ValueError(f"config is inconsistent: layers of type {layer_type!r} have different head_dim "
                             f"overrides in 'per_layer_config': {sorted(map(str, dims))}")
        if dims and (dim := dims.pop()) is not None:
            return dim
    spec = (found.get("per_layer_head_dim") or {}).get(layer_type)
    if spec is not None and overrides is None:  # Gemma 4: the class writes global_head_dim into per_layer_config
        value = config.get(spec["key"])
        return spec["default"] if value is None else check_int(f"config[{spec['key']!r}]", value, minimum=2,
                                                                maximum=MAX_ROPE_DIM)
    source = found.get("head_dim_from")  # DeepSeek's MLA: head_dim is qk_rope_head_dim, the part that turns
    if not found and config.get("qk_rope_head_dim") is not None:  # a model type transformers lacks: MLA's name
        source = {"key": "qk_rope_head_dim", "over_head_dim": True}
    given = table.get(found, config, "head_dim")
    value = table.field(found, config, source["key"]) if source else None  # the class default if left out
    if source and value is not None and (source["over_head_dim"] or given is None):
        return check_int(f"config[{source['key']!r}]", value, minimum=2, maximum=MAX_ROPE_DIM)
    head_dim = table.field(found, config, "head_dim")
    if head_dim is not None:
        return check_int("config['head_dim']", head_dim, minimum=2, maximum=MAX_ROPE_DIM)
    names = found.get("attribute_map", {})
    hidden_key = "hidden_size" if config.get("hidden_size") is not None else names.get("hidden_size", "n_embd")
    heads_key = ("num_attention_heads" if config.get("num_attention_heads") is not None
                 else names.get("num_attention_heads", "n_head"))  # GPT-J: n_embd, n_head
    if config.get(hidden_key) is None or config.get(heads_key) is None:
        raise ValueError("config needs 'head_dim', or 'hidden_size' and 'num_attention_heads'")
    hidden = check_int(f"config[{hidden_key!r}]", config[hidden_key], minimum=1, maximum=MAX_SIZE)
    heads = check_int(f"config[{heads_key!r}]", config[heads_key], minimum=1, maximum=MAX_SIZE)
    if hidden % heads:
        raise ValueError(f"config[{hidden_key!r}] ({hidden}) must be a multiple of "
                         f"config[{heads_key!r}] ({heads}) when there is no 'head_dim'")
    if hidden // heads > MAX_ROPE_DIM:
        raise ValueError(f"config[{hidden_key!r}] / config[{heads_key!r}] (the head width, without 'head_dim') "
                         f"must be <= {MAX_ROPE_DIM}, got {hidden} / {heads} = {hidden // heads}")
    return hidden // heads

def _override(key: object, value: object) -> int | None:
    """The head_dim one entry of Gemma 4's per_layer_config sets (None: it sets none)."""
    if value is not None and not isinstance(value, Mapping):
        raise TypeError(f"config['per_layer_config'][{key!r}] must be a dict of one layer's settings, "
                        f"got {type(value).__name__}")
    dim = None if value is None else value.get("head_dim")
    name = f"config['per_layer_config'][{key!r}]['head_dim']"
    return None if dim is None else check_int(name, dim, minimum=2, maximum=MAX_ROPE_DIM)

def _rotary_width(config: Mapping[str, Any], found: Mapping[str, Any], params: Mapping[str, Any],
                  head_dim: int) -> int:
    fraction = params.get("partial_rotary_factor")
    key = found.get("rotated_width_key")  # GPT-J's "rotary_dim": a count of features
    # left out: the class default; given as null: the whole head (GPT-J's `rotary_dim or embed_dim`)
    count = (config[key] if key in config else found.get("field_defaults", {}).get(key)) if key else None
    if fraction is not None:
        width = int(head_dim * _real("partial_rotary_factor", fraction, minimum=0.0, maximum=1.0))
    elif count is not None:
        width = check_int(f"config[{key!r}]", count, minimum=2, maximum=head_dim)
    else:
        width = head_dim
    if width < 2 or width % 2:
        raise ValueError(f"the rotated width must be a positive even integer, got {width} "
                         f"(head_dim {head_dim}, partial rotary factor {fraction})")
    return width

def _length(config: Mapping[str, Any], found: Mapping[str, Any], key: str = "max_position_embeddings") -> int | None:
    value = table.field(found, config, key)
    return None if value is None else check_int(f"config[{key!r}]", value, minimum=1, maximum=MAX_LENGTH)

# ---------------------------------------------------------------- one kind of layer
def _scaling(config: Mapping[str, Any], found: Mapping[str, Any], params: Mapping[str, Any],
             head_dim: int) -> dict[str, Any] | None:
    kind = params["rope_type"]
    if kind not in ROPE_TYPES:
        raise ValueError(f"rope_type must be one of {', '.join(map(repr, ROPE_TYPES))} (the types posenc "
                         f"reads from a config), got {kind!r}")
    ignored = set(found.get("ignore_keys", ()))
    for key in params:
        if key not in (*_COMMON, *ROPE_TYPES[kind]) and key not in ignored:
            allowed = sorted({*_COMMON, *ROPE_TYPES[kind], *ignored} - {"type"})
            raise ValueError(f"rope parameters of type {kind!r} got the unknown key {key!r} (allowed: "
                             f"{', '.join(map(repr, allowed))})")
    if kind == "default":
        return None
    scaling: dict[str, Any] = {"type": kind}
    scaling.update({k: v for k, v in params.items() if k in ROPE_TYPES[kind] and v is not None})
    longest = _length(config, found)
    if kind == "dynamic":  # transformers counts from max_position_embeddings
        if longest is None:
            raise ValueError("config needs 'max_position_embeddings' for rope type 'dynamic' (the length "
                             "past which the base grows)")
        scaling["original_max_position_embeddings"] = longest
    if kind in _WITH_ORIGINAL:
        original = _one("original_max_position_embeddings", ("rope_parameters", params), ("config", config))
        original = longest if original is None else original
        if original is None:
            raise ValueError(f"config needs 'original_max_position_embeddings' or 'max_position_embeddings' "
                             f"for rope type {kind!r}")
        scaling["original_max_position_embeddings"] = check_int(
            "original_max_position_embeddings", original, minimum=1, maximum=MAX_LENGTH)
        if scaling.get("factor") is None and longest is not None:
            if kind == "yarn":
                scaling["factor"] = longest / scaling["original_max_position_embeddings"]
            if kind == "longrope":
                scaling["max_position_embeddings"] = longest
    if kind == "proportional":
        scaling["partial_rotary_factor"] = params.get("partial_rotary_factor", 1.0)
    parse_scaling(scaling)  # every value named and checked
    return scaling

def _temperature(config: Mapping[str, Any], found: Mapping[str, Any], params: Mapping[str, Any] | None,
                 rotates: bool) -> dict[str, Any] | None:
    """A factor on the queries after the rotation, by position (see `read_config`)."""
    rule = found.get("query_temperature")
    if rule == "llama_4_scaling_beta" and params is not None and params.get("llama_4_scaling_beta") is not None:
        beta = _real("rope_parameters['llama_4_scaling_beta']", params["llama_4_scaling_beta"], minimum=0.0,
                     maximum=1e6)
        length = check_int("rope_parameters['original_max_position_embeddings']",
                           params.get("original_max_position_embeddings"), minimum=1, maximum=MAX_LENGTH)
        return {"rule": "llama_4_scaling_beta", "beta": beta, "length": length}
    if rule == "llama4_nope_tuning" and not rotates and table.field(found, config, "attn_temperature_tuning"):
        floor = check_int("config['floor_scale']", table.field(found, config, "floor_scale"), minimum=1,
                          maximum=MAX_LENGTH)
        scale = _real("config['attn_scale']", table.field(found, config, "attn_scale"), minimum=0.0, maximum=1e6)
        return {"rule": "llama4_nope_tuning", "floor_scale": floor, "attn_scale": scale}
    return None

def _softmax_scale(found: Mapping[str, Any], params: Mapping[str, Any] | None) -> float:
    # DeepSeek-V2/V3 (transformers' yarn_apply_mscale): the logits' 1/sqrt(d) times m(s, mscale_all_dim)^2.
    if found.get("softmax_scale") != "yarn_mscale_all_dim" or params is None:
        return 1.0
    if params.get("rope_type", "default") == "default" or not params.get("mscale_all_dim"):
        return 1.0
    factor = _real("rope_parameters['factor']", params.get("factor"), positive=True)
    return _yarn_mscale(factor, _real("rope_parameters['mscale_all_dim']", params["mscale_all_dim"])) ** 2

def _layout(config: Mapping[str, Any], found: Mapping[str, Any], model_type: str | None, given: str | None) -> str:
    derived = table.layout(found, config) if found else None
    if given is not None and derived is not None and given != derived:
        raise ValueError(f"layout must be {derived!r} for model type {model_type!r} (how transformers' code for "
                         f"it pairs q/k features), got layout={given!r}")
    if given is not None or derived is not None:
        return given or derived  # type: ignore[return-value]
    why = ("the config has no 'model_type'" if model_type is None else
           f"the pinned transformers has no model type {model_type!r}"
           if not table.model_types().get(model_type) else
           f"posenc could not derive it from transformers' code for model type {model_type!r}")
    raise ValueError(f"layout is needed: {why}; pass layout='half' (features i and i + d/2 form a pair, "
                     f"as GPT-NeoX and Llama in transformers) or layout='interleaved' (features 2i and 2i + 1, "
                     f"as GPT-J and Meta's original code)")
