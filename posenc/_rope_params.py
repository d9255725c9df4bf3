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

def _raw_parameters(config: Mapping[str, Any]) -> dict[str, Any] | None:
    """``rope_parameters`` and the older ``rope_scaling``, merged (they must agree)."""
    merged: dict[str, Any] | None = None
    for key in ("rope_scaling", "rope_parameters"):
        value = config.get(key)
        if value is None:
            continue
        if not isinstance(value, Mapping):
            raise TypeError(f"config[{key!r}] must be a dict or None, got {type(value).__name__}")
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

def _parameters(config: Mapping[str, Any], found: Mapping[str, Any],
                layer_types: list[str]) -> dict[str | None, dict[str, Any] | None]:
    """The rope parameters of each layer type (None key: one for every layer), completed as
    transformers' config classes complete them."""
    raw = _raw_parameters(config)
    default = copy.deepcopy(found.get("default_rope_parameters")) or {}
    names = set(layer_types) | {k for k, v in default.items() if isinstance(v, Mapping)}
    if raw is not None and _nested(raw, names):
        nested: dict[str | None, dict[str, Any] | None] = {k: v for k, v in raw.items()}
    elif default and _nested(default, names):  # a flat config of a per-layer-type model (Gemma 3 as published)
        if raw and not found.get("flat_scaling_layer_types"):  # the class keeps it flat; its model then fails
            raise ValueError(f"config['rope_parameters'] (or 'rope_scaling') must map each layer type to its "
                             f"parameters for this model type ({', '.join(map(repr, default))}), got one set "
                             f"{dict(raw)!r:.80}")
        nested = {k: None if v is None else dict(v) for k, v in default.items()}  # None: a NoPE layer type (Beam)
        for layer_type in found.get("flat_scaling_layer_types", []) if raw else []:
            target = nested[layer_type] or {}
            target.update({k: v for k, v in (raw or {}).items() if k != "rope_theta"})
        for layer_type, key in found.get("base_keys", {}).items():
            if config.get(key) is not None and nested.get(layer_type) is not None:
                nested[layer_type]["rope_theta"] = config[key]  # type: ignore[index]
        if raw and raw.get("rope_theta") is not None:
            raise ValueError("config['rope_scaling'] must not hold 'rope_theta' in a config with one RoPE per "
                             "layer type; give the bases as the config class names them "
                             f"({', '.join(sorted(set(found.get('base_keys', {}).values())))})")
    else:
        nested = {None: raw if raw is not None else default}
    for layer_type, params in nested.items():
        if params is not None:
            _complete(config, found, layer_type, params, flat=layer_type is None)
    return nested

def _complete(config: Mapping[str, Any], found: Mapping[str, Any], layer_type: str | None,
              params: dict[str, Any], *, flat: bool) -> None:
    if flat:  # rope_theta and partial_rotary_factor may come from the top level, as the class reads them
        ignored = found.get("ignored_top_level", ())
        for target in ("rope_theta", "partial_rotary_factor"):
            names = [] if target in ignored else [target]
            names += [key for key, name in found.get("key_aliases", {}).items() if name == target]
            top = _one(target, *((f"config[{name!r}]", {target: config.get(name)}) for name in names))
            if params.get(target) is None:
                params[target] = top if top is not None else found.get("absent_defaults", {}).get(target)
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
    source = found.get("head_dim_from")  # DeepSeek's MLA: head_dim is qk_rope_head_dim, the part that turns
    if not found and config.get("qk_rope_head_dim") is not None:  # a model type transformers lacks: MLA's name
        source = {"key": "qk_rope_head_dim", "over_head_dim": True}
    given = table.get(found, config, "head_dim")
    if source and config.get(source["key"]) is not None and (source["over_head_dim"] or given is None):
        return check_int(f"config[{source['key']!r}]", config[source["key"]], minimum=2, maximum=MAX_ROPE_DIM)
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
    if fraction is not None:
        width = int(head_dim * _real("partial_rotary_factor", fraction, minimum=0.0, maximum=1.0))
    elif key and config.get(key) is not None:
        width = check_int(f"config[{key!r}]", config[key], minimum=2, maximum=head_dim)
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
