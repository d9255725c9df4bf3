"""Rope keys and rope types a config class renames in its own code, read as the class keeps them.

Most renames are derived into the table (``type_aliases``: Phi-3's ``su``, Qwen2-VL's ``mrope``;
``key_aliases``: GPT-NeoX's ``rotary_pct``). HunYuan-VL's text config renames more than the table's
probe sees: `ROPE_RENAMES`. ``tests/test_rope_class_renames.py`` checks the register against the
class; ``tests/test_rope_class_code.py`` lists every config class of the pinned transformers whose own
code touches its rope parameters, each read, refused or not relevant, with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from posenc.configs import _table as table

# HunYuan-VL's text config (configuration_hunyuan_vl.py:171-222), after the base class has set rope_type
# from 'type': a legacy ``xdrope_section`` becomes ``mrope_section`` (both given: they must agree as
# floats, and the legacy key is dropped), rope type 'xdrope' becomes 'dynamic' (and 'type' follows
# rope_type: :208-222); then __post_init__ turns the sections into ints, refusing a non-integer
# (:163-169, 194-206; their sum is checked where every M-RoPE config's is, posenc.configs._layer._mrope_fit).
ROPE_RENAMES: dict[str, dict[str, Any]] = {
    "hunyuan_vl_text": {"keys": {"xdrope_section": "mrope_section"}, "types": {"xdrope": "dynamic"},
                        "whole": "mrope_section", "where": "configuration_hunyuan_vl.py:171-222",
                        "whole_where": "configuration_hunyuan_vl.py:194-206"},
}


def class_rope(config: Mapping[str, Any], model_type: str | None) -> Mapping[str, Any]:
    """The config with its ``rope_parameters`` and ``rope_scaling`` as the class keeps them
    (`ROPE_RENAMES`), else unchanged."""
    rule = ROPE_RENAMES.get(table.text_model_type(model_type)) if model_type is not None else None
    if rule is None:
        return config
    out = dict(config)
    for source in ("rope_scaling", "rope_parameters"):
        value = config.get(source)
        if isinstance(value, Mapping) and value:  # anything else is refused where the sources are read
            out[source] = _renamed(value, rule, source)
    return out


def _renamed(params: Mapping[str, Any], rule: Mapping[str, Any], source: str) -> dict[str, Any]:
    out = dict(params)
    spelled = {}  # the name the config gave a renamed key's value under, for the messages
    for old, new in rule["keys"].items():
        legacy = out.pop(old, None)
        if legacy is None:
            continue
        given = out.get(new)
        if given is None:
            out[new], spelled[new] = legacy, old
        elif _floats(f"config[{source!r}][{old!r}]", legacy) != _floats(f"config[{source!r}][{new!r}]", given):
            raise ValueError(f"config[{source!r}] gives both {new!r} ({given!r:.60}) and the legacy {old!r} "
                             f"({legacy!r:.60}), and they differ: transformers' config class refuses that "
                             f"({rule['where']}); give one")
    kind = out.get("rope_type", out.get("type"))
    if isinstance(kind, str) and kind in rule["types"]:
        kind = rule["types"][kind]
    if kind is not None:  # the class writes rope_type, and 'type' where the config gives it, from one value
        out["rope_type"] = kind
        if "type" in out:
            out["type"] = kind
    whole = rule.get("whole")
    if whole and out.get(whole) is not None:
        name = f"config[{source!r}][{spelled.get(whole, whole)!r}]"
        values = _floats(name, out[whole])
        if not all(value.is_integer() for value in values):
            raise ValueError(f"{name} must hold whole numbers, got {out[whole]!r:.60}: transformers' config class "
                             f"refuses others ('Illegal mrope partition', {rule['whole_where']})")
        out[whole] = [int(value) for value in values]
    return out


def _floats(name: str, value: Any) -> list[float]:
    """The sections as the class compares them (``float(section)`` for each); numbers only."""
    if not isinstance(value, (list, tuple)) or not all(
            isinstance(item, (int, float)) and not isinstance(item, bool) for item in value):
        raise TypeError(f"{name} must be a list of numbers, got {value!r:.60}")
    return [float(item) for item in value]


# Config classes whose own validation refuses rope types that other classes take (after their renames,
# the table's type_aliases), and rope types posenc cannot read for them: Phi-3's and Phi-4-multimodal's
# validate_rope take only "default" and "longrope" (configuration_phi3.py:122-123,
# configuration_phi4_multimodal.py:264-265); Cosmos3 Edge's validate_architecture only "default", with
# three sections summing to head_dim / 2 (configuration_cosmos3_edge.py:105-114). PhiMoE's rotary module
# multiplies cos and sin by short_mscale or long_mscale, chosen by the input's length (modeling_phimoe.py:82-95;
# its class requires both for any other type, configuration_phimoe.py:100-113): one attention factor for
# every length, as posenc reads a layer, cannot say that.
CLASS_ROPE_TYPES: dict[str, dict[str, Any]] = {
    "phi3": {"types": ("default", "longrope"), "where": "configuration_phi3.py:122-123"},
    "phi4_multimodal": {"types": ("default", "longrope"), "where": "configuration_phi4_multimodal.py:264-265"},
    "cosmos3_edge_text": {"types": ("default",), "sections": 3, "where": "configuration_cosmos3_edge.py:105-114"},
    "phimoe": {"types": ("default",), "unread": "modeling_phimoe.py:82-95"},
}


def class_rope_types(config: Mapping[str, Any], model_type: str | None) -> None:
    """Refuse a rope type (or M-RoPE sections) the class refuses, or that posenc cannot read for it
    (`CLASS_ROPE_TYPES`)."""
    rule = CLASS_ROPE_TYPES.get(table.text_model_type(model_type)) if model_type is not None else None
    if rule is None:
        return
    aliases = (table.entry(str(model_type)) or {}).get("type_aliases", {})
    for source in ("rope_scaling", "rope_parameters"):
        params = config.get(source)
        if not isinstance(params, Mapping):
            continue
        kind = params.get("rope_type", params.get("type")) or "default"
        if not isinstance(kind, str):
            continue  # refused by name where the rope parameters are read
        kind = aliases.get(kind, kind)
        if kind not in rule["types"] and "unread" in rule:
            raise ValueError(f"config[{source!r}] has rope type {kind!r}: transformers' rotary module for model type "
                             f"{model_type!r} then multiplies cos and sin by short_mscale or long_mscale, chosen by "
                             f"the input's length ({rule['unread']}); posenc reads one attention factor for every "
                             f"length and does not read this config")
        if kind not in rule["types"]:
            allowed = " and ".join(repr(t) for t in rule["types"])
            raise ValueError(f"config[{source!r}] has rope type {kind!r}: transformers' config class for model type "
                             f"{model_type!r} accepts only {allowed} ({rule['where']})")
        sections = params.get("mrope_section")
        head_dim = table.field(table.entry(str(model_type)) or {}, config, "head_dim")
        if rule.get("sections") and isinstance(sections, list) and (len(sections) != rule["sections"] or (
                isinstance(head_dim, int) and all(isinstance(s, int) and not isinstance(s, bool) for s in sections)
                and sum(sections) != head_dim // 2)):
            raise ValueError(f"config[{source!r}]['mrope_section'] must be {rule['sections']} sections summing to "
                             f"head_dim / 2 ({head_dim}/2), got {sections!r:.60}: transformers' config class for "
                             f"model type {model_type!r} refuses others ({rule['where']})")


# Qwen4-Exp's validate_architecture: once any key of its sparse attention's indexer is given, the
# rotated width, int(head_dim * partial_rotary_factor), must fit the indexer's head
# (configuration_qwen4_exp.py:205-230), whose queries and pooled keys turn their first rotated-width
# features with the attention's cos and sin (modeling_qwen4_exp.py:652-664, 711, 743-747).
INDEXER_FITS: dict[str, dict[str, Any]] = {
    "qwen4_exp_text": {"key": "indexer_head_dim", "where": "configuration_qwen4_exp.py:205-230",
                       "keys": ("indexer_n_heads", "indexer_kv_heads", "indexer_head_dim", "indexer_budget",
                                "indexer_compress_ratio")},
}


def indexer_fit(config: Mapping[str, Any], model_type: str | None, widths: list[int]) -> None:
    """Refuse a rotated width wider than the indexer's head where the class refuses it (`INDEXER_FITS`)."""
    rule = INDEXER_FITS.get(table.text_model_type(model_type)) if model_type is not None else None
    if rule is None or all(config.get(key) is None for key in rule["keys"]):
        return
    missing = [key for key in rule["keys"] if config.get(key) is None]
    if missing:  # the class's own check (configuration_qwen4_exp.py:214-217)
        raise ValueError(f"config needs {', '.join(map(repr, missing))} beside the indexer's other keys: transformers' "
                         f"config class for model type {model_type!r} refuses part of them (QSA config is missing "
                         f"required fields): give all of {', '.join(map(repr, rule['keys']))}, or none")
    size = config.get(rule["key"])
    if not isinstance(size, int) or isinstance(size, bool):
        return  # the class's other checks refuse it (a missing or non-integer key): not the rotation's
    for width in widths:
        if width > size:
            raise ValueError(f"config[{rule['key']!r}] is {size}, narrower than the rotated width {width} (head_dim * "
                             f"partial_rotary_factor): transformers' config class for model type {model_type!r} "
                             f"refuses it once the indexer's keys are given, as its indexer turns the first "
                             f"rotated-width features of its heads ({rule['where']})")
