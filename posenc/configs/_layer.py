"""One kind of layer of a model's config, as transformers' code reads it.

The helpers of `posenc.configs._reader` after `posenc.configs._params` has completed the rope
parameters of each layer type: the head and rotated widths, the context length, the scaling dict
and its checks, and what acts outside the rotation (a query temperature, DeepSeek's softmax
scale), and the layout (HunYuan's fixed NTK alpha is read in `posenc.configs._ntk_alpha`). What
differs between model types comes from `posenc.configs._table`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from posenc._checks import MAX_SIZE, check_int, is_integer
from posenc._scaling_rules import _yarn_mscale
from posenc.configs import _table as table
from posenc.configs._ntk_alpha import ALPHA, ALPHA_UNREAD, _alpha_scaling, _reads_alpha
from posenc.configs._rotated_part import rotated_part
from posenc.configs._schema import HeadDimFrom, ModelTypeEntry
from posenc.rope_scaling import MAX_ROPE_DIM, _real, parse_scaling

# The two pair layouts, as posenc.rope takes them (posenc._rotary.LAYOUTS, which imports torch; a
# test ties the two): the reader names the layout without loading torch.
LAYOUTS = ("half", "interleaved")

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
# The rope utils' rules that narrow the frequencies to head_dim * partial_rotary_factor (the table's
# partial_scaled probes each); "proportional" keeps the whole width, with zero frequencies past it.
SCALED_RULES = tuple(kind for kind in ROPE_TYPES if kind not in ("default", "proportional"))
MAX_LENGTH = 2**53
_WITH_ORIGINAL = ("yarn", "longrope", "llama3")


def _one(name: str, *sources: tuple[str, Mapping[str, Any]]) -> Any:
    """The value of key `name` in whichever sources have it (not None); they must agree."""
    found = [(where, source[name]) for where, source in sources if source.get(name) is not None]
    if len({repr(value) for _, value in found}) > 1:
        listed = ", ".join(f"{where}[{name!r}] = {value!r}" for where, value in found)
        raise ValueError(f"config is inconsistent: {listed}")
    return found[0][1] if found else None


# ---------------------------------------------------------------- widths
def _head_dim(config: Mapping[str, Any], found: ModelTypeEntry, layer_type: str | None,
              defaulted: list[str] | None = None) -> int:
    """The head width, as the config class sets it; the keys it took from the class defaults
    (`_sizes`) are appended to ``defaulted``."""
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
    spec = (found.get("per_layer_head_dim") or {}).get(layer_type) if layer_type is not None else None
    if spec is not None and overrides is None:  # Gemma 4: the class writes global_head_dim into per_layer_config
        value = config.get(spec["key"])
        return spec["default"] if value is None else check_int(f"config[{spec['key']!r}]", value, minimum=2,
                                                                maximum=MAX_ROPE_DIM)
    source = found.get("head_dim_from")  # DeepSeek's MLA: head_dim is qk_rope_head_dim, the part that turns
    if not found and config.get("qk_rope_head_dim") is not None:  # a model type transformers lacks: MLA's name
        source = {"key": "qk_rope_head_dim", "over_head_dim": True}
    given = table.get(found, config, "head_dim")
    value = _from_keys(config, found, source, given) if source else None
    if source and value is not None and (source["over_head_dim"] or given is None or source.get("plus")):
        return value  # Mistral 4's heads are the sum wide; a given head_dim feeds its rotary module only
    head_dim = table.field(found, config, "head_dim")
    if head_dim is not None:
        return check_int("config['head_dim']", head_dim, minimum=2, maximum=MAX_ROPE_DIM)
    (hidden_key, hidden), (heads_key, heads) = _sizes(config, found, defaulted)
    factor = source.get("hidden_factor", 1) if source else 1  # Zamba2: attention_head_dim = 2 * hidden_size // heads
    width, shown = factor * hidden, f"{factor} * config[{hidden_key!r}]" if factor != 1 else f"config[{hidden_key!r}]"
    if width % heads:
        raise ValueError(f"{shown} ({width}) must be a multiple of config[{heads_key!r}] ({heads}) when there is "
                         f"no 'head_dim'")
    if width // heads > MAX_ROPE_DIM:
        raise ValueError(f"{shown} / config[{heads_key!r}] (the head width, without 'head_dim') "
                         f"must be <= {MAX_ROPE_DIM}, got {width} / {heads} = {width // heads}")
    return width // heads

def _sizes(config: Mapping[str, Any], found: ModelTypeEntry,
           defaulted: list[str] | None) -> tuple[tuple[str, int], tuple[str, int]]:
    """(key, value) of the hidden size and of the number of heads, each as the config gives it
    (GPT-J's ``n_embd``, ``n_head``), else, where it leaves the key out, the config class's default
    (``field_defaults``: Llama's 4096 and 32, configuration_llama.py:65-68), whose key then joins
    ``defaulted``; a key given as null is refused (the class's strict field refuses None)."""
    names, found_defaults = found.get("attribute_map", {}), found.get("field_defaults", {})
    read: list[tuple[str, Any]] = []
    taken: list[str] = []
    for key, other in (("hidden_size", "n_embd"), ("num_attention_heads", "n_head")):  # GPT-J: n_embd, n_head
        name = key if config.get(key) is not None else names.get(key, other)
        absent = key not in config and name not in config  # null is not absent: the class refuses None
        if absent and found_defaults.get(key) is not None:
            name = key
            taken.append(key)
        read.append((name, found_defaults[key] if absent and key in taken else config.get(name)))
    if any(value is None for _, value in read):
        raise ValueError("config needs 'head_dim', or 'hidden_size' and 'num_attention_heads'")
    if defaulted is not None:
        defaulted.extend(key for key in taken if key not in defaulted)
    (hidden_key, hidden), (heads_key, heads) = read
    return ((hidden_key, check_int(f"config[{hidden_key!r}]", hidden, minimum=1, maximum=MAX_SIZE)),
            (heads_key, check_int(f"config[{heads_key!r}]", heads, minimum=1, maximum=MAX_SIZE)))

def defaults_note(found: ModelTypeEntry, model_type: str | None, defaulted: list[str]) -> list[str]:
    """A note naming the head sizes read from the class defaults: a config.json that transformers
    saves keeps them (to_diff_dict drops only what the base config has, configuration_utils.py:1199-1240)."""
    if not defaulted:
        return []
    shown = " and ".join(f"{key!r} ({found.get('field_defaults', {})[key]})" for key in defaulted)
    verb = "are" if len(defaulted) > 1 else "is"
    return [(f"{shown} {verb} not in the config: read as the defaults of transformers' config class for model "
             f"type {model_type!r}, as it builds such a config; a config.json that transformers saves carries them")]

def _from_keys(config: Mapping[str, Any], found: ModelTypeEntry, source: HeadDimFrom, given: object) -> int | None:
    """The head width the class takes from ``source``'s key, or adds from its keys (Mistral 4's
    ``qk_nope_head_dim + qk_rope_head_dim``, configuration_mistral4.py:131); a key left out has
    its class default (None: one has none). A ``head_dim`` given beside a sum the class keeps for
    its rotary module (modeling_mistral4.py:99) while its attention's heads stay the sum wide
    (modeling_mistral4.py:379, 457): `posenc.configs._rotated_part` reads what that module builds."""
    keys = [source["key"], *source.get("plus", ())]
    values = [table.field(found, config, key) for key in keys]
    if any(value is None for value in values):
        return None
    if len(keys) == 1:
        return check_int(f"config[{keys[0]!r}]", values[0], minimum=2, maximum=MAX_ROPE_DIM)
    total = sum(check_int(f"config[{key!r}]", value, minimum=0, maximum=MAX_ROPE_DIM)
                for key, value in zip(keys, values))
    shown = " + ".join(f"config[{key!r}]" for key in keys)
    if given is not None:
        check_int("config['head_dim']", given, minimum=2, maximum=MAX_ROPE_DIM)
    return check_int(shown, total, minimum=2, maximum=MAX_ROPE_DIM)

def _override(key: object, value: object) -> int | None:
    """The head_dim one entry of Gemma 4's per_layer_config sets (None: it sets none)."""
    if value is not None and not isinstance(value, Mapping):
        raise TypeError(f"config['per_layer_config'][{key!r}] must be a dict of one layer's settings, "
                        f"got {type(value).__name__}")
    dim = None if value is None else value.get("head_dim")
    name = f"config['per_layer_config'][{key!r}]['head_dim']"
    return None if dim is None else check_int(name, dim, minimum=2, maximum=MAX_ROPE_DIM)

def _rotary_width(config: Mapping[str, Any], found: ModelTypeEntry, params: Mapping[str, Any],
                  head_dim: int, model_type: str | None = None, layer_type: str | None = None) -> int:
    if (part := rotated_part(config, found, params, model_type)) is not None:  # Mistral 4's qk_rope_head_dim
        return check_int("the rotated width", part, minimum=2, maximum=head_dim)
    fraction = params.get("partial_rotary_factor")
    key = found.get("rotated_width_key")  # GPT-J's "rotary_dim": a count of features
    # left out: the class default; given as null: the whole head (GPT-J's `rotary_dim or embed_dim`)
    count = (config[key] if key in config else found.get("field_defaults", {}).get(key)) if key else None
    if fraction is not None:
        value = _real("partial_rotary_factor", fraction, minimum=0.0, maximum=1.0)
        if value != 1.0 and found.get("partial_ignored") and params.get("rope_type") == "default":
            raise ValueError(f"partial_rotary_factor is {fraction!r}, which transformers' code for this model type "
                             f"does not apply with rope_type 'default' (its rotary module's default rule rotates the "
                             f"whole head); leave it out")
        _check_scaled(config, found, params, fraction, value, model_type, layer_type)
        width = int(head_dim * value)
    elif count is not None:
        width = check_int(f"config[{key!r}]", count, minimum=2, maximum=head_dim)
    else:
        width = head_dim
    if width < 2 or width % 2:
        raise ValueError(f"the rotated width must be a positive even integer, got {width} "
                         f"(head_dim {head_dim}, partial rotary factor {fraction})")
    return width

def _check_scaled(config: Mapping[str, Any], found: ModelTypeEntry, params: Mapping[str, Any], fraction: object,
                  value: float, model_type: str | None, layer_type: str | None) -> None:
    """A fraction the attention cannot run with a scaled rule (the table's ``partial_scaled`` "fails", or
    ``nested_partial_scaled``'s for this layer type): the rope utils' rule builds frequencies for
    ``head_dim * fraction`` features (modeling_rope_utils.py:181) and the attention rotates a fixed width
    with them: the whole head (Llama's, modeling_llama.py:147-148; Gemma 3's per layer type), or
    Mistral 4's rotated part, the width of its class's own fraction (configuration_mistral4.py:131-132)."""
    kind = params.get("rope_type")
    verdict = (found.get("nested_partial_scaled") or {}).get(layer_type) if layer_type is not None else None
    if (verdict or found.get("partial_scaled")) != "fails" or kind not in SCALED_RULES or _reads_alpha(found, params):
        return  # HunYuan's alpha turns the whole head: refused in _alpha_scaling
    own = 1.0 if verdict else (found.get("absent_defaults") or {}).get("partial_rotary_factor", 1.0)
    who = f"transformers' attention for {f'model type {model_type!r}' if model_type else 'this model type'}"
    changed = [key for group in found.get("defaults_depend_on") or ()
               if all(table.differs(config, k, v) for k, v in group.items()) for key in group]
    if own != 1.0 and changed:
        raise ValueError(f"partial_rotary_factor is {fraction!r} with rope_type {kind!r}: {who} rotates the width of "
                         f"its class's own fraction, which depends on keys this config changes "
                         f"({', '.join(map(repr, changed))}) by a rule posenc does not derive")
    if value != own:
        what = "whole heads" if own == 1.0 else f"the width of its class's own fraction, {own!r},"
        raise ValueError(f"partial_rotary_factor is {fraction!r} with rope_type {kind!r}: {who} rotates {what} "
                         f"and fails on the {'narrower' if value < own else 'other'} frequencies a scaled rule "
                         f"computes for this fraction (head_dim * partial_rotary_factor); leave it out")

def _length(config: Mapping[str, Any], found: ModelTypeEntry, key: str = "max_position_embeddings") -> int | None:
    value = table.field(found, config, key)
    return None if value is None else check_int(f"config[{key!r}]", value, minimum=1, maximum=MAX_LENGTH)

# ---------------------------------------------------------------- one kind of layer
def _scaling(config: Mapping[str, Any], found: ModelTypeEntry, params: Mapping[str, Any],
             head_dim: int) -> dict[str, Any] | None:
    kind = params["rope_type"]
    if kind not in ROPE_TYPES:
        raise ValueError(f"rope_type must be one of {', '.join(map(repr, ROPE_TYPES))} (the types posenc "
                         f"reads from a config), got {kind!r}")
    if kind != "default" and found.get("scaled_rules_refused"):  # RecurrentGemma's, modeling_recurrent_gemma.py:71-74
        raise ValueError(f"rope_type is {kind!r}, and transformers' rotary module for this model type accepts only "
                         f"rope type 'default' (it raises for any other): leave the scaling out")
    alpha = _reads_alpha(found, params)
    if alpha and kind != "dynamic":
        raise ValueError(f"{ALPHA} = {params['alpha']!r} is read only with rope type 'dynamic' (HunYuan's fixed NTK "
                         f"base); transformers' code for this model type ignores it with rope type {kind!r}: leave "
                         f"it out")
    ignored = set(found.get("ignore_keys", ()))
    if found.get("query_temperature") == "llama_4_scaling_beta":  # the attention's query scale reads it (`_temperature`)
        ignored.add("original_max_position_embeddings")
    if found.get("ntk_alpha"):  # HunYuan: its key (null: not given, plain "dynamic"), and with it those not read
        ignored |= {"alpha", *ALPHA_UNREAD} if alpha else {"alpha"}
    for key in params:
        if key not in (*_COMMON, *ROPE_TYPES[kind]) and key not in ignored:
            allowed = sorted({*_COMMON, *ROPE_TYPES[kind], *ignored} - {"type"})
            raise ValueError(f"rope parameters of type {kind!r} got the unknown key {key!r} (allowed: "
                             f"{', '.join(map(repr, allowed))})")
    if alpha:
        return _alpha_scaling(config, found, params)
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

def _temperature(config: Mapping[str, Any], found: ModelTypeEntry, params: Mapping[str, Any] | None,
                 rotates: bool) -> dict[str, Any] | None:
    """A factor on the queries after the rotation, by position (see `read_config`)."""
    rule = found.get("query_temperature")
    if rule == "llama_4_scaling_beta" and rotates:
        _scale_keys_given(params)
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

#: The two rope parameters Ministral 3's and Mistral 4's attention scales its queries with (`_scale_keys_given`).
_SCALE_KEYS = ("llama_4_scaling_beta", "original_max_position_embeddings")


def _scale_keys_given(params: Mapping[str, Any] | None) -> None:
    """Ministral 3's and Mistral 4's attention scales its queries with two rope parameters whatever
    the rope type (get_llama_4_attn_scale, modeling_ministral3.py:145-149, modeling_mistral4.py:476-480),
    and the model fails (a TypeError on None) without either."""
    missing = [key for key in _SCALE_KEYS if params is None or params.get(key) is None]
    if missing:
        raise ValueError(f"config['rope_parameters'] needs {' and '.join(map(repr, missing))}, whatever its rope_type: "
                         f"this model type's attention multiplies its queries by 1 + llama_4_scaling_beta * ln(1 + "
                         f"floor(position / original_max_position_embeddings)), and transformers' model fails "
                         f"without them")


def _softmax_scale(found: ModelTypeEntry, params: Mapping[str, Any] | None) -> float:
    # DeepSeek-V2/V3 (transformers' yarn_apply_mscale): the logits' 1/sqrt(d) times m(s, mscale_all_dim)^2.
    if found.get("softmax_scale") != "yarn_mscale_all_dim" or params is None:
        return 1.0
    if params.get("rope_type", "default") == "default" or not params.get("mscale_all_dim"):
        return 1.0
    factor = _real("rope_parameters['factor']", params.get("factor"), positive=True)
    return _yarn_mscale(factor, _real("rope_parameters['mscale_all_dim']", params["mscale_all_dim"])) ** 2

def _layout(config: Mapping[str, Any], found: ModelTypeEntry, model_type: str | None, given: str | None) -> str:
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


def _mrope_fit(found: ModelTypeEntry, params: Mapping[str, Any], width: int, model_type: str | None) -> None:
    """Refuse M-RoPE sections that transformers' rotary module fails on (`MropeSections`): none where it
    has no default, or a sum other than its number of rungs (``width // 2``) where it splits by them."""
    demand = found.get("mrope_sections")
    if not demand:
        return
    name = "config['rope_parameters']['mrope_section']"
    sections = params.get("mrope_section", demand["default"])
    if sections is None:
        raise ValueError(f"{name} is needed for model type {model_type!r}: transformers' rotary module for it splits "
                         f"the frequencies by these M-RoPE sections"
                         + ("" if "mrope_section" in params else " and has no default"))
    if not isinstance(sections, list) or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0
                                                 for s in sections):
        raise TypeError(f"{name} must be a list of integers >= 0, got {sections!r:.60}")
    if demand["sum"] and sum(sections) != width // 2:
        given = (f"{name} ({sections})" if "mrope_section" in params else
                 f"the sections transformers' rotary module uses without {name} ({sections})")
        raise ValueError(f"{given} must sum to {width // 2}, the number of frequencies of the rotated width {width}: "
                         f"transformers' rotary module for model type {model_type!r} splits them by these sections "
                         f"and fails otherwise")
    _mrope_paired(found, params, model_type)


def _mrope_paired(found: ModelTypeEntry, params: Mapping[str, Any], model_type: str | None) -> None:
    """Refuse sections that Ernie 4.5 VL's rotary module fails on (``paired``): it reads three (h, w,
    t), pre-rotates the first h + w rungs by the last t (an empty t leaves no rungs to place) and
    interleaves h and w with ``torch.stack``, which needs them equal (modeling_ernie4_5_vl_moe.py:94-99,
    123-126); any other sections fail at its first call."""
    demand = found.get("mrope_sections")
    if not demand or not demand.get("paired"):
        return
    sections = params.get("mrope_section", demand["default"])
    if isinstance(sections, list) and len(sections) == 3 and sections[0] == sections[1] and sections[2] > 0:
        return
    name = "config['rope_parameters']['mrope_section']"
    given = (f"{name} ({sections})" if "mrope_section" in params else
             f"the sections transformers' rotary module uses without {name} ({sections})")
    raise ValueError(f"{given} must be three, [h, w, t] with h == w and t > 0: transformers' rotary module for model "
                     f"type {model_type!r} interleaves the first two and places the last after them, and fails "
                     f"otherwise")
