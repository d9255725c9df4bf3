"""Read a model's RoPE settings from its config, as Hugging Face ``transformers`` stores them.

`from_config` turns a ``config.json`` (a dict, or a ``transformers`` config object) into the keyword
arguments of `posenc.rope.RotaryEmbedding` that reproduce that model's rotary embedding: the head
dimension, the base, the partial rotary width, the layout and the scaling rule. The rules for the
keys follow ``transformers``' ``modeling_rope_utils`` (version pinned in the lock file), and the
tests check the result against its rotary modules.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from posenc._checks import check_int
from posenc.rope_scaling import _check_scaling, _real

__all__ = ["ROPE_TYPES", "from_config"]

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
_MAX_LENGTH = 2**53
# Checkpoints whose q/k features pair as (2i, 2i+1): GPT-J ("rotate_every_two"); DeepSeek's configs say
# so with "rope_interleave": true.
_INTERLEAVED_MODELS = ("gptj",)


def _as_mapping(config: object) -> Mapping[str, Any]:
    if isinstance(config, Mapping):
        return config
    to_dict = getattr(config, "to_dict", None)
    if callable(to_dict):  # a transformers PreTrainedConfig
        result = to_dict()
        if isinstance(result, Mapping):
            return result
    raise TypeError(f"config must be a dict (a model's config.json) or a transformers config, "
                    f"got {type(config).__name__}")


def _one(name: str, *sources: tuple[str, Mapping[str, Any]]) -> Any:
    """The value of key `name` in whichever sources have it (not None); they must agree."""
    found = [(where, source[name]) for where, source in sources if source.get(name) is not None]
    if len({repr(value) for _, value in found}) > 1:
        listed = ", ".join(f"{where}[{name!r}] = {value!r}" for where, value in found)
        raise ValueError(f"config is inconsistent: {listed}")
    return found[0][1] if found else None


def _rope_parameters(config: Mapping[str, Any], layer_type: str | None) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for key in ("rope_scaling", "rope_parameters"):
        value = config.get(key)
        if value is None:
            continue
        if not isinstance(value, Mapping):
            raise TypeError(f"config[{key!r}] must be a dict or None, got {type(value).__name__}")
        if all(isinstance(v, Mapping) or v is None for v in value.values()) and value:
            # nested per layer type (e.g. Gemma 3: sliding_attention / full_attention)
            if layer_type not in value:
                raise ValueError(f"config[{key!r}] holds one RoPE per layer type; pass layer_type, one of "
                                 f"{', '.join(map(repr, sorted(value)))}, got layer_type={layer_type!r}")
            value = value[layer_type]
            if value is None:
                raise ValueError(f"layers of type {layer_type!r} use no RoPE (NoPE): config[{key!r}]"
                                 f"[{layer_type!r}] is None")
        elif layer_type is not None:
            raise ValueError(f"layer_type must be None: config[{key!r}] is one RoPE for every layer, "
                             f"got layer_type={layer_type!r}")
        for name, item in value.items():
            if name in merged and merged[name] != item:
                raise ValueError(f"config is inconsistent: rope_scaling[{name!r}] = {merged[name]!r} but "
                                 f"rope_parameters[{name!r}] = {item!r}")
            merged[name] = item
    return merged


def _layer_head_dim(config: Mapping[str, Any], layer_type: str | None) -> int | None:
    """Gemma 4 style: ``per_layer_config`` overrides head_dim for some layer indices."""
    overrides, types = config.get("per_layer_config"), config.get("layer_types")
    if layer_type is None or not isinstance(overrides, Mapping) or not isinstance(types, (list, tuple)):
        return None
    by_index = {int(key): value for key, value in overrides.items() if str(key).isdigit()}
    dims = set()
    for index, kind in enumerate(types):
        if kind == layer_type:
            override = by_index.get(index)
            dims.add(override.get("head_dim") if isinstance(override, Mapping) else None)
    if len(dims) > 1:
        raise ValueError(f"config is inconsistent: layers of type {layer_type!r} have different head_dim "
                         f"overrides in 'per_layer_config': {sorted(map(str, dims))}")
    found = dims.pop() if dims else None
    return None if found is None else check_int("config['per_layer_config'][...]['head_dim']", found, minimum=2)


def _head_dim(config: Mapping[str, Any], layer_type: str | None = None) -> int:
    layer_dim = _layer_head_dim(config, layer_type)
    if layer_dim is not None:
        return layer_dim
    if config.get("qk_rope_head_dim") is not None:  # DeepSeek's MLA: only this part of q and k turns
        return check_int("config['qk_rope_head_dim']", config["qk_rope_head_dim"], minimum=2)
    if config.get("head_dim") is not None:
        return check_int("config['head_dim']", config["head_dim"], minimum=2)
    # GPT-2 style names (GPT-J): n_embd, n_head
    hidden_key = "hidden_size" if config.get("hidden_size") is not None else "n_embd"
    heads_key = "num_attention_heads" if config.get("num_attention_heads") is not None else "n_head"
    if config.get(hidden_key) is None or config.get(heads_key) is None:
        raise ValueError("config needs 'head_dim', or 'hidden_size' and 'num_attention_heads'")
    hidden = check_int(f"config[{hidden_key!r}]", config[hidden_key], minimum=1)
    heads = check_int(f"config[{heads_key!r}]", config[heads_key], minimum=1)
    if hidden % heads:
        raise ValueError(f"config[{hidden_key!r}] ({hidden}) must be a multiple of "
                         f"config[{heads_key!r}] ({heads}) when there is no 'head_dim'")
    return hidden // heads


def _rotary_width(config: Mapping[str, Any], params: Mapping[str, Any], head_dim: int) -> int:
    fraction = _one("partial_rotary_factor", ("rope_parameters", params), ("config", config))
    if fraction is None and config.get("rotary_pct") is not None:  # GPT-NeoX's name
        fraction = config["rotary_pct"]
    if fraction is not None:
        p = _real("partial_rotary_factor", fraction, minimum=0.0, maximum=1.0)
        width = int(head_dim * p)
    elif config.get("rotary_dim") is not None:  # GPT-J's name: a count of features
        width = check_int("config['rotary_dim']", config["rotary_dim"], minimum=2, maximum=head_dim)
    else:
        width = head_dim
    if width < 2 or width % 2:
        raise ValueError(f"the rotated width must be a positive even integer, got {width} "
                         f"(head_dim {head_dim}, partial rotary factor {fraction})")
    return width


def from_config(config: Mapping[str, Any], layer_type: str | None = None) -> dict[str, Any]:
    """The keyword arguments of `RotaryEmbedding` that reproduce a model's RoPE.

    Reads ``rope_theta``, ``rope_parameters`` or ``rope_scaling`` (the older name; both are merged and
    must agree), ``partial_rotary_factor`` (or GPT-NeoX's ``rotary_pct``, GPT-J's ``rotary_dim``),
    ``head_dim`` (DeepSeek's ``qk_rope_head_dim`` first; else ``hidden_size / num_attention_heads``),
    ``rotary_emb_base`` (GPT-NeoX's name for the base), ``rope_interleave`` (DeepSeek: interleaved
    layout), ``max_position_embeddings`` and
    ``original_max_position_embeddings`` (and a per-layer-type ``head_dim`` from ``per_layer_config``,
    as in Gemma 4), with the rules of ``transformers``:

    * ``"dynamic"`` counts from ``max_position_embeddings``;
    * ``"yarn"``, ``"longrope"`` and ``"llama3"`` take ``original_max_position_embeddings`` from the
      RoPE parameters or the config (falling back on ``max_position_embeddings``), and a missing
      ``factor`` of YaRN or LongRoPE is ``max_position_embeddings / original_max_position_embeddings``;
    * ``"proportional"`` keeps the full width and passes ``partial_rotary_factor`` to the scaling.

    Unknown RoPE keys and values that disagree between two places are errors.

    Args:
        config: a model's ``config.json`` as a dict, or a ``transformers`` config object.
        layer_type: for configs with one RoPE per layer type (Gemma 3's ``"sliding_attention"`` and
            ``"full_attention"``), which one to read; None otherwise.

    Returns:
        ``{"dim", "base", "layout", "scaling", "rotary_dim"}`` for ``RotaryEmbedding(**result)``.

    Examples:
        >>> from_config({"hidden_size": 4096, "num_attention_heads": 32, "rope_theta": 500000.0,
        ...              "max_position_embeddings": 8192})
        {'dim': 128, 'base': 500000.0, 'layout': 'half', 'scaling': None, 'rotary_dim': None}
    """
    config = _as_mapping(config)
    if layer_type is not None and not isinstance(layer_type, str):
        raise TypeError(f"layer_type must be a string or None, got {type(layer_type).__name__}")
    params = _rope_parameters(config, layer_type)
    head_dim = _head_dim(config, layer_type)
    base = _one("rope_theta", ("rope_parameters", params), ("config", config))
    if base is None:
        base = config.get("rotary_emb_base")  # GPT-NeoX's name in its config.json
    base = 10000.0 if base is None else _real("rope_theta", base, positive=True)
    kind = _one("rope_type", ("rope_parameters", params)) or params.get("type") or "default"
    if not isinstance(kind, str):
        raise TypeError(f"rope_type must be a string such as 'yarn', got {type(kind).__name__} {kind!r}")
    if params.get("type") is not None and params["type"] != kind:
        raise ValueError(f"config is inconsistent: rope type {params['type']!r} under 'type' but {kind!r} "
                         f"under 'rope_type'")
    if kind not in ROPE_TYPES:
        raise ValueError(f"rope_type must be one of {', '.join(map(repr, ROPE_TYPES))} (the types posenc "
                         f"reads from a config), got {kind!r}")
    for key in params:
        if key not in (*_COMMON, *ROPE_TYPES[kind]):
            raise ValueError(f"rope parameters of type {kind!r} got the unknown key {key!r} (allowed: "
                             f"{', '.join(map(repr, sorted({*_COMMON, *ROPE_TYPES[kind]} - {'type'})))})")
    width = head_dim if kind == "proportional" else _rotary_width(config, params, head_dim)
    interleaved = config.get("model_type") in _INTERLEAVED_MODELS or config.get("rope_interleave") is True
    layout = "interleaved" if interleaved else "half"
    result: dict[str, Any] = {"dim": head_dim, "base": base, "layout": layout, "scaling": None,
                              "rotary_dim": None if width == head_dim else width}
    if kind == "default":
        return result
    scaling: dict[str, Any] = {"type": kind}
    scaling.update({k: v for k, v in params.items() if k in ROPE_TYPES[kind] and v is not None})
    longest = config.get("max_position_embeddings")
    if kind == "dynamic":
        if longest is None:
            raise ValueError("config needs 'max_position_embeddings' for rope type 'dynamic' (the length "
                             "past which the base grows)")
        scaling["original_max_position_embeddings"] = check_int(
            "config['max_position_embeddings']", longest, minimum=1, maximum=_MAX_LENGTH)
    if kind in ("yarn", "longrope", "llama3"):
        original = _one("original_max_position_embeddings", ("rope_parameters", params), ("config", config))
        if original is None:
            original = longest
        if original is None:
            raise ValueError(f"config needs 'original_max_position_embeddings' or 'max_position_embeddings' "
                             f"for rope type {kind!r}")
        original = check_int("original_max_position_embeddings", original, minimum=1, maximum=_MAX_LENGTH)
        scaling["original_max_position_embeddings"] = original
        if scaling.get("factor") is None and kind in ("yarn", "longrope"):
            if longest is None:
                raise ValueError(f"config needs a 'factor' or 'max_position_embeddings' for rope type {kind!r}")
            longest = check_int("config['max_position_embeddings']", longest, minimum=1, maximum=_MAX_LENGTH)
            scaling["factor"] = longest / original
    if kind == "proportional":
        fraction = _one("partial_rotary_factor", ("rope_parameters", params), ("config", config))
        scaling["partial_rotary_factor"] = 1.0 if fraction is None else fraction
    if kind == "yarn" and scaling.get("truncate") is None:
        scaling.pop("truncate", None)
    _check_scaling(scaling)  # every value named and checked once more
    result["scaling"] = scaling
    return result
