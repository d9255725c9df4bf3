"""Derive, from the pinned transformers, what `posenc.configs` must know about each model type.

``python -m tools.rope_model_types`` reads every model type transformers registers (its config class
at its defaults and its ``modeling_*.py``) and writes ``posenc/configs/model_types.json``, the table
`posenc.configs.read_config` reads (each key documented and typed in ``posenc/configs/_schema.py``);
``--check`` only compares (``tests/test_rope_model_types.py`` runs that comparison in a process of
its own, so a new transformers release that changes a model type fails loudly).

What is derived, and how (no hand-written list of model names):

* **layout**: the model's own rotary module and ``apply_rotary_pos_emb`` (or the function its
  attention calls) are run on a probe q/k, and the result compared with posenc's rotation in both
  layouts; where the attention code branches on ``config.rope_interleave``, both branches are probed
  and the config class's default recorded. No match: the layout is left unknown (``null``), and
  `from_config` asks for it.
* **where bases and scaling live per layer type**: the config class is built with a flat
  ``rope_theta``, each flat per-layer name its source reads (``rope_local_base_freq``,
  ``global_rope_theta``, ...) and a flat ``rope_scaling``, and the layer types they land on are read back.
* **what acts outside the rotation**: the attention code's own calls, read from the source
  (DeepSeek's ``yarn_apply_mscale`` on the softmax scale, Ministral's ``get_llama_4_attn_scale``,
  Llama 4's temperature tuning), and the condition under which a layer rotates at all (the ``if``
  around the rotation call: ``self.use_rope``, ``self.sliding_window is not None``, ...), named
  from a small vocabulary that `from_config` implements; any other condition is recorded verbatim
  as a note.
* **names a key differently**: a top-level key the class reads as a rotated width in features
  (``rotated_width_key``: GPT-J's ``rotary_dim``; MiniMax-M2's, read as ``rotary_dim / head_dim``),
  found by building the class with a probe value; for a wrapper (vision-language, ...), the text
  model types its class renames (``text_model_type_aliases``: Kimi K2.5 builds a text_config of
  model_type ``kimi_k2`` as ``deepseek_v3``), found by trying each string in its source.
* **layer patterns** (``layer_pattern``, ``nope_pattern``): how the class fills ``layer_types`` or
  ``no_rope_layers`` when a config.json gives none, fitted as "every k-th layer" at 12 layers and
  checked at 2 to 13: counted from the last layer (``from_end``), the last layer forced
  (``last``), or made ``every`` when no other layer is (``at_least_one``); no fit, no pattern.
* **rotation without settings to read** (``rotation_calls``): a model type with no rotary settings
  posenc reads whose modeling file still calls a rotation function (DINOv3, V-JEPA 2, ESM, SAM 2/3:
  ``rotation.py``), refused by name rather than said to use no RoPE; a call counts when the
  function is named as a rotation or its body rotates (``x * cos + rotate(x) * sin``:
  Wav2Vec2-Conformer's ``_apply_rotary_embedding``);
* **parts that rotate** (``rotating_parts``): a model type said to use no RoPE whose sub-configs
  (``sub_configs_defaults``, three levels down) have entries that rotate (pi0's Gemma, CHMv2's
  DINOv3 backbone), refused by name as well;
* **rotations outside the usual pattern** (``legacy.py``): ESM's switch (``rope_switch``,
  ``theta_only``), RoFormer's sinusoidal table (``fixed_tables``, ``rotates_values``), a rotation
  of a slice of the heads (``head_slice``: Qwen2.5-Omni's DiT);
* **windows** (``window_all_layers``, ``window_switch``, ``window_layers``): which layers attend
  within ``sliding_window`` (``windows.py``);
* the class defaults `from_config` needs when a config.json leaves a key out (``default_theta``,
  the default ``rope_parameters``, ``head_dim``, ``rope_interleave``), and the keys the class tells
  its RoPE validation to ignore.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import importlib
import inspect
import json
import logging
import re
import sys
import textwrap
import warnings
from typing import Any

import torch

from posenc.configs._table import TABLE_PATH
from tools.rope_model_types import classes, dependence, partial, probes, rotation, windows, wrappers
from tools.rope_model_types.legacy import head_slice, legacy_entry
from tools.rope_model_types.classes import (  # noqa: F401 - _built, _landing, _read_keys: the probes reach them here
    _built,
    _field_default,
    _head_dim_source,
    _key_landings,
    _landing,
    _nested,
    _no_validation,
    _pattern,
    _read_keys,
    _type_aliases,
)
from tools.rope_model_types.modeling import (  # noqa: F401 - _apply, _inv_freq: tests/rope_live.py reaches them here
    _annotated_for,
    _apply,
    _branches,
    _called_in_attention,
    _conditions,
    _inv_freq,
    _layout_of,
    _legacy_rotary,
    _rotary_candidates,
    _rotation_functions,
    mrope_sections,
    own_name,
)

# The condition around a rotation call (ast.unparse of the `if` test) -> posenc's name for it.
CONDITIONS = {
    "self.use_rope": "no_rope_layers",
    "self.sliding_window is not None": "sliding_only",
    "self.is_local_attention": "sliding_only",
    "self.sliding_window is None or self.is_sliding": "sliding_or_no_window",
    "alibi is None": "no_alibi",
    "not is_cross_attention": None,           # self-attention rotates, cross-attention does not
    "self.config.rope_interleave": None,      # a layout flag, probed separately
    "self.config.use_mem_rope": "use_mem_rope",  # Zamba2: its shared attention rotates only with this flag on
    "self.config.rope_interleave and self.training": None,
}
# Layer types whose layers are softmax attention, and those that are not attention: the reader's own.
from posenc.configs._table import ATTENTION_LAYER_TYPES, NOT_ATTENTION_LAYER_TYPES
from posenc.configs._windows import LAYER_KINDS


def _quiet() -> None:
    logging.disable(logging.WARNING)
    warnings.filterwarnings("ignore")


def _model_types() -> dict[str, str]:
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES
    return dict(CONFIG_MAPPING_NAMES)


def _module(model_type: str) -> Any:
    from transformers.models.auto.configuration_auto import model_type_to_module_name
    name = model_type_to_module_name(model_type)
    return importlib.import_module(f"transformers.models.{name}.modeling_{name}")


def _text_config(config_name: str) -> Any:
    import transformers
    config = getattr(transformers, config_name)()
    return config.get_text_config(decoder=True)


# Keys posenc reads under transformers' canonical names; a config class may store them under others.
_MAPPED_KEYS = ("hidden_size", "num_attention_heads", "head_dim", "max_position_embeddings", "num_hidden_layers",
                "layer_types")
_FIELD_DEFAULTS = ("head_dim", "max_position_embeddings", "rope_interleave", "attn_temperature_tuning",
                   "floor_scale", "attn_scale", "sliding_window", "attention_chunk_size", "qk_rope_head_dim",
                   "use_mem_rope")


# ---------------------------------------------------------------- one model type
def _text_aliases(config_name: str, target: str) -> dict[str, str]:
    """Names a wrapper's config class accepts for its text model's type besides the registered ones,
    and the type it reads them as (Kimi K2.5: a text_config of model_type ``kimi_k2`` is built as
    ``deepseek_v3``): each string in the class's source that is no registered model type, tried."""
    import transformers
    cls = getattr(transformers, config_name)
    names = {node.value for owner in cls.__mro__ if owner.__module__.startswith("transformers.models.")
             for node in ast.walk(ast.parse(textwrap.dedent(inspect.getsource(owner))))
             if isinstance(node, ast.Constant) and isinstance(node.value, str)
             and re.fullmatch(r"[a-z][a-z0-9_]*", node.value)}
    def reads_as(name: str) -> str | None:
        try:
            with _no_validation(cls):
                built = cls(text_config={"model_type": name}).get_text_config(decoder=True)
        except Exception:
            return None
        return getattr(built, "model_type", None)

    if reads_as("posenc_no_such_model_type") is not None:  # the class does not read the name at all
        return {}
    return {name: target for name in sorted(names - set(_model_types())) if reads_as(name) == target}


def derive(model_type: str, config_name: str) -> dict[str, Any] | None:
    """The table entry of one model type; None when it has no RoPE settings (or cannot be built)."""
    try:
        text = _text_config(config_name)
        module = _module(text.model_type)
    except Exception:
        return None
    if text.model_type != model_type and text.model_type in _model_types():
        wrapper: dict[str, Any] = {"text_model_type": text.model_type}  # a wrapper: its text model's entry
        if aliases := _text_aliases(config_name, text.model_type):
            wrapper["text_model_type_aliases"] = aliases
        if defaults := classes.wrapper_defaults(text):  # GOT-OCR2 builds a 1024-wide Qwen2 by default
            wrapper["text_field_defaults"] = defaults
        if merges := classes.text_merges(config_name, text):  # Voxtral's under a given text_config
            wrapper["text_config_merges"] = merges
        if (read := wrappers.top_level_read(config_name)) is not None:  # Qwen2-VL's; LlavaConfig reads none
            wrapper["top_level_read"] = read
        return wrapper
    params = getattr(text, "rope_parameters", None)
    source = inspect.getsource(module)
    legacy = isinstance(getattr(text, "rotary_dim", None), int) and "create_sinusoidal_positions" in source
    if not legacy and (not isinstance(params, dict) or not params or "Rotary" not in source):
        calls = rotation.rotation_calls(source)  # no settings to read is not "no RoPE" (DINOv3, V-JEPA 2, ESM)
        if not calls:
            return {"rope": False}
        if (read := legacy_entry(module, text, source, calls)) is not None:  # ESM's switch, RoFormer's table
            fields = {key: value for key in _FIELD_DEFAULTS
                      if (value := classes.mapped_default(type(text), key)) is not None}
            fields.update(classes.size_defaults(text, {"field_defaults": fields}))  # RoFormer's 768 and 12
            return {**read, **({"field_defaults": fields} if fields else {})}
        elsewhere = rotation.rotates_elsewhere(text, source, calls)  # GLM-5-Next: only its vision tower rotates
        # Cohere Compass: the class fills no rope_parameters (an empty dict), its rotary module reads them
        given_only = {"rope_parameters_given_only": True} if params == {} and not elsewhere else {}
        return {"rope": False, "rotation_calls": calls, **({"rotates_elsewhere": elsewhere} if elsewhere else {}),
                **rotation.off_entry(text, source, elsewhere), **given_only}
    params = params if isinstance(params, dict) else {}
    # GPT-J's and CodeGen's fixed tables: base 10000 and no scaling, whatever the config says
    entry: dict[str, Any] = {"rotated_width_key": "rotary_dim", "fixed_tables": True} if legacy else {}
    if text.model_type != model_type:
        entry["text_model_type"] = text.model_type
    layer_types = [t for t in getattr(text, "layer_types", None) or [] if isinstance(t, str)]
    candidates = list(params) if _nested(params) else layer_types
    # a layer type that rotates (Beam's full_attention parameters are None: NoPE, nothing to probe)
    kinds = LAYER_KINDS.get(model_type, {})  # layer types its code runs as another kind (ZAYA's "hybrid")
    named = {kinds.get(t, t): t for t in candidates}
    probe_type = next((named[k] for k in ATTENTION_LAYER_TYPES if k in named and params.get(named[k], {}) is not None),
                      None)
    functions = _rotation_functions(module)
    used = _called_in_attention(source, own_name(text), type(text).__name__)
    functions = {name: f for name, f in functions.items() if name in used} or functions
    layouts: dict[str, str | None] = {}
    rotaries = _rotary_candidates(module, text) or _legacy_rotary(module, text)
    if rotaries and hasattr(type(rotaries[0]), "compute_ntk_alpha_rope_parameters"):
        entry["ntk_alpha"] = True  # HunYuan: "dynamic" with an alpha runs its own fixed-base rule
    if not rotaries:  # BLT: its settings reach no rotary module; its four parts rotate with their own
        NO_ROTARY_MODULE.add(model_type)
    elif (sections := mrope_sections(rotaries[0], probe_type)) is not None:
        # first: the layout's probe below fits the sections it is given, so the module must be the model's
        # own (Qwen2.5-Omni's DiT has its own rotary module; the file's text module builds from its config too)
        if _annotated_for(module, text) not in (None, type(rotaries[0]).__name__):
            rotaries = []
        else:
            entry["mrope_sections"] = sections
    for rotary in rotaries:
        for name, function in functions.items():
            layouts.setdefault(name, _layout_of(function, rotary, text, probe_type))
        if any(layouts.values()):
            break
    if sites := rotation.rotary_sites(module, source, text, probe_type):
        entry["rotary_sites"] = sites  # a layer that rotates at two sites in two layouts (DeepSeek-V3.2)
    if heads := head_slice(module, text, source):
        entry["head_slice"] = heads  # Qwen2.5-Omni's DiT rotates a slice of its heads
    conditions = _conditions(source)
    if any("rope_interleave" in c for c in _branches(source)):
        default = bool(_field_default(type(text), "rope_interleave"))
        entry["layout"] = {"key": "rope_interleave", "default": default,
                           "true": layouts.get("apply_rotary_pos_emb_interleave"),
                           "false": layouts.get("apply_rotary_pos_emb")}
    else:
        found = {v for v in layouts.values() if v is not None}
        entry["layout"] = found.pop() if len(found) == 1 else None
        backward = {_layout_of(f, r, text, probe_type, sign=-1.0) for r in rotaries[:1] for f in functions.values()}
        if entry["layout"] is None and len(backward - {None}) == 1:
            entry["turns_backward"] = (backward - {None}).pop()  # NanoChat's rotate_half, signs flipped
    theta = getattr(type(text), "default_theta", 10000.0)
    if theta != 10000.0:
        entry["default_theta"] = theta
    fields = {key: value for key in _FIELD_DEFAULTS if (value := classes.mapped_default(type(text), key)) is not None}
    if fields:
        entry["field_defaults"] = fields
    if (source_key := _head_dim_source(config_name, text)) is not None:
        entry["head_dim_from"] = source_key
    if layer_types and "layer_types" not in text.to_dict() and "layer_types" not in entry.get("attribute_map", {}):
        entry["layer_types_computed"] = True  # a property of other keys: posenc does not read it
    for field, name in (("layer_types", "layer_pattern"), ("no_rope_layers", "nope_pattern")):
        if (pattern := _pattern(config_name, text, field)) is not None:
            entry[name] = pattern
    if layer_types and "layer_pattern" not in entry and not entry.get("layer_types_computed"):
        entry["layer_pattern_unknown"] = True  # the class fills layer_types by a rule no probe fitted
    entry.update(_key_landings(config_name, text))
    defaults = entry.get("default_rope_parameters")
    if isinstance(defaults, dict) and _nested(defaults):
        entry.update(probes.per_layer_type(config_name, text, defaults, entry.get("base_keys", {})))
        entry.update(probes.nested_partial(config_name, text, defaults, entry.get("nested_fill", {}), functions))
    elif params and not _nested(params):
        entry.update(probes.flat_class(config_name, text))
        entry.update(partial.flat_partial(config_name, text, functions))  # Llama's: the whole head
    entry.update(_type_aliases(config_name, text))
    entry.update(probes.given_lists(config_name, text))
    entry.update(probes.layer_types_from_flags(config_name, text))
    entry.update(probes.per_layer_head_dim(config_name, text))
    entry.update(dependence.defaults_dependence(config_name, text, entry))
    entry.update(windows.windows(config_name, text, source))  # which layers attend within a window
    for key in (*classes.head_dim_keys(entry.get("head_dim_from")), entry.get("rotated_width_key")):
        if key and (value := _field_default(type(text), key)) is not None:  # what a config.json may leave out
            entry.setdefault("field_defaults", {})[key] = value
    entry.update(classes.attribute_names(type(text), _MAPPED_KEYS))  # DBRX's d_model; HunYuan-VL's legacy names
    if sizes := classes.size_defaults(text, entry):  # a config.json without them: the head width the class splits
        entry.setdefault("field_defaults", {}).update(sizes)
    ignored = sorted(set(getattr(text, "ignore_keys_at_rope_validation", None) or ()) - {"partial_rotary_factor"})
    if ignored:
        entry["ignore_keys"] = ignored
    rules, notes = [], []
    for condition in conditions:
        rule = CONDITIONS.get(condition, "?")
        if rule == "?":
            notes.append(f"whether a layer rotates depends on `{condition}` in its attention code")
        elif rule is not None:
            rules.append(rule)
    if rules:
        entry["rope_condition"] = sorted(set(rules))
    if "yarn_apply_mscale" in source:
        entry["softmax_scale"] = "yarn_mscale_all_dim"
    if "self.sinks" in source:  # gpt-oss: a learned sink logit per head joins every softmax
        entry["attention_sinks"] = True
    if "get_llama_4_attn_scale" in source:
        entry["query_temperature"] = "llama_4_scaling_beta"
    if "attn_temperature_tuning" in source:
        entry["query_temperature"] = "llama4_nope_tuning"
    unknown = sorted({kinds.get(t, t) for t in layer_types} - set(ATTENTION_LAYER_TYPES) - set(NOT_ATTENTION_LAYER_TYPES))
    if unknown:
        notes.append(f"layer types posenc does not classify: {', '.join(unknown)}")
    if model_type in READ_ELSEWHERE:  # a reader of its own: the generic probes' notes would contradict it
        entry["read_by"], notes = READ_ELSEWHERE[model_type], []
    if notes:
        entry["notes"] = notes
    return entry


# The one documented override: model types whose config posenc reads with a reader of their own,
# because no generic probe can (DeepSeek-V4's rope parameters are keyed by rope kind, ``main`` and
# ``compress``, not by layer type: configuration_deepseek_v4.py:293-320). read_config hands them to
# it; the entry keeps what the probes found and names the reader.
READ_ELSEWHERE = {"deepseek_v4": "posenc.configs.sites.read_deepseek_v4"}
# Model types whose settings no rotary module of their file builds from (filled by `derive`).
NO_ROTARY_MODULE: set[str] = set()


_LAYER_TYPES = ATTENTION_LAYER_TYPES + NOT_ATTENTION_LAYER_TYPES


def _canonical(value: Any) -> Any:
    """``value`` with every map keyed by layer types, and every list of layer types, in one fixed
    order: some classes fill their per-layer-type defaults by iterating a set (NeoMME), whose order
    changes with Python's string hashing from one process to the next."""
    def rank(name: Any) -> tuple[int, str]:
        return (_LAYER_TYPES.index(name), "") if name in _LAYER_TYPES else (len(_LAYER_TYPES), str(name))

    if isinstance(value, dict):
        out = {k: _canonical(v) for k, v in value.items()}
        return dict(sorted(out.items(), key=lambda kv: rank(kv[0]))) if out and set(out) <= set(_LAYER_TYPES) else out
    if isinstance(value, list):
        out_list = [_canonical(v) for v in value]
        return sorted(out_list, key=rank) if out_list and set(map(str, out_list)) <= set(_LAYER_TYPES) else out_list
    return value


def _config_classes(table: dict[str, Any]) -> dict[str, type]:
    """The config class of each model type in the table that transformers can import."""
    from transformers import CONFIG_MAPPING
    classes = {}
    for model_type in table:
        with contextlib.suppress(Exception):  # a class whose imports fail has no parts to follow
            classes[model_type] = CONFIG_MAPPING[model_type]
    return classes


def _says_no_rope(table: dict[str, Any], model_type: str) -> bool:
    """Whether the table's entry says the model type uses no RoPE: ``rope`` false with no rotation
    calls, or a wrapper whose text model's entry says so."""
    entry = table.get(model_type) or {}
    if entry.get("rope") is False and not entry.get("rotation_calls"):
        return True
    text = entry.get("text_model_type")
    return bool(text) and text != model_type and _says_no_rope(table, text)


def derive_all() -> dict[str, Any]:
    _quiet()
    torch.manual_seed(0)
    table = {}
    for model_type, config_name in _model_types().items():
        entry = derive(model_type, config_name)
        if entry is not None:
            table[model_type] = _canonical(entry)
    classes = _config_classes(table)
    for model_type, entry in table.items():  # a model whose parts rotate is not a model without RoPE
        no_rope = _says_no_rope(table, model_type)
        if not no_rope and model_type not in NO_ROTARY_MODULE:
            continue
        parts = rotation.rotating_parts(table, classes, model_type)
        if not no_rope:  # settings no rotary module reads: only parts posenc reads with a layout count (BLT's
            # four; not SAM 2 video's decoders, whose file rotates in its memory attention, read_vision_config's)
            parts = {key: kind for key, kind in parts.items() if isinstance(table[kind].get("layout"), str)}
        if parts:
            entry["rotating_parts"] = parts
    import transformers
    return {"_source": f"derived by tools/rope_model_types from transformers {transformers.__version__}; "
                       f"do not edit by hand", "model_types": dict(sorted(table.items()))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed table, write nothing")
    args = parser.parse_args(argv)
    derived = derive_all()
    text = json.dumps(derived, indent=1, sort_keys=False) + "\n"
    if args.check:
        return 0 if TABLE_PATH.exists() and TABLE_PATH.read_text() == text else 1
    TABLE_PATH.write_text(text)
    kinds = [e.get("layout") for e in derived["model_types"].values() if e.get("rope", True)]
    print(f"{len(derived['model_types'])} model types, {len(kinds)} with RoPE settings, "
          f"{sum(k is None for k in kinds)} of them without a derived layout -> {TABLE_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
