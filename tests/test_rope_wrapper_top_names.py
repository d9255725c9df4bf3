"""Every name a wrapper's text model knows, given at the top of a wrapper's config without a text part.

tests/test_rope_wrapper_top_level.py holds the keys of ``TOP_LEVEL_KEYS`` to the table's
``top_level_read``; read_config also reads text-model keys under other names: a class's own base keys
(Gemma 3's ``rope_local_base_freq``, ModernBERT's ``global_rope_theta``), window keys (ModernBERT's
``local_attention``), legacy names from an ``attribute_map`` (HunYuan-VL's ``attention_head_dim``),
Gemma 4's ``per_layer_config``, Qwen4-Exp's indexer keys... Most wrapper classes drop them all
(Gemma3Config(rope_local_base_freq=64.0) keeps 10000), which read_config read. Here every such name
(the text class's fields and ``attribute_map`` names, and every name in its table entry) is given at the
top of each wrapper with probe values, live: where the class builds the same text model,
read_config must read as without it or refuse it by name; where the class passes it on (Qwen2-VL,
HunYuan-VL, Dots3), read_config must read what the class built.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import re
import shutil
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

transformers = pytest.importorskip("transformers", reason="transformers is a test dependency (requirements.lock)")

from posenc.configs import read_config
from posenc.configs._params import TEXT_CONFIG_KEYS
from posenc.configs._table import entry, model_types
from posenc.configs.vision import ENCODER_MODEL_TYPES
from tests.test_rope_wrapper_top_level import words

# a config the reading needs beside the probe (HunYuan-VL's M-RoPE sections have no default)
BASES: dict[str, dict[str, Any]] = {"hunyuan_vl": {"rope_parameters": {
    "rope_type": "default", "rope_theta": 1e4, "mrope_section": [16, 16, 16, 16]}}}
WRAPPERS = sorted(t for t, item in model_types().items() if item.get("text_model_type")
                  and t not in ENCODER_MODEL_TYPES and t in transformers.CONFIG_MAPPING)
SKIPPED = {"model_type", "architectures", "transformers_version", "dtype", "torch_dtype", *TEXT_CONFIG_KEYS}


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, str):
        yield value


def _text_class(model_type: str) -> Any:
    name = model_types()[model_type]["text_model_type"]
    return transformers.CONFIG_MAPPING[name] if name in transformers.CONFIG_MAPPING else None


def _probes(default: Any) -> list[Any]:
    """Values other than the class default, of its type (any type where it has none), and null."""
    if isinstance(default, bool):
        return [not default, None]
    if isinstance(default, int):
        return [2 * default + 2, None]
    if isinstance(default, float):
        return [2 * default + 0.5, None]
    if isinstance(default, str):
        return ["posenc_probe", None]
    if isinstance(default, list) and default:
        return [list(reversed(default)) if list(reversed(default)) != default else default + default[:1], None]
    return [64, 5000.0, True, [1, 0, 1], {"05": {"head_dim": 64}}] if default is None else [None]


def _names(model_type: str) -> dict[str, Any]:
    """Each name to probe with the text class's default for it."""
    cls = _text_class(model_type)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            defaults = cls().to_dict() if cls is not None else {}
    except Exception:  # noqa: BLE001 - a class that cannot be built bare: its names from the table only
        defaults = {}
    aliases = dict(getattr(cls, "attribute_map", {}) or {})
    names = set(defaults) | set(aliases) | set(aliases.values())
    names |= {s for s in _strings(dict(entry(model_type) or {})) if re.fullmatch(r"[a-z][a-z0-9_]*", s)}
    return {name: defaults.get(name, defaults.get(aliases.get(name, ""))) for name in sorted(names - SKIPPED)}


def _outcome(config: dict[str, Any]) -> Any:
    try:
        return read_config(config)
    except (ValueError, TypeError) as error:
        return str(error)


def _text(model_type: str, **kwargs: Any) -> Any:
    """The text model the wrapper's class builds from ``kwargs`` (its error, where it refuses them)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            built = transformers.CONFIG_MAPPING[model_type](**copy.deepcopy(kwargs))
            return built.get_text_config(decoder=True).to_dict(), built
    except Exception as error:  # noqa: BLE001 - the class refuses the probe
        return type(error).__name__, None


def _unnoted(rope: Any) -> dict[str, Any]:
    return {name: dataclasses.replace(layer, note=None, layers=()) for name, layer in rope.layers.items()}


@pytest.mark.parametrize("model_type", WRAPPERS)
def test_a_name_the_class_drops_is_not_read(model_type: str) -> None:
    base_config = {"model_type": model_type, **BASES.get(model_type, {})}
    base = _outcome(base_config)
    if isinstance(base, str):
        pytest.skip(f"{model_type!r} is not read at its defaults: {base[:80]}")
    theirs = _text(model_type, **BASES.get(model_type, {}))[0]
    problems = []
    for name, default in _names(model_type).items():
        for value in _probes(default):
            ours = _outcome({**base_config, name: value})
            if ours == base:
                continue  # read_config reads as without it
            built, config = _text(model_type, **{**BASES.get(model_type, {}), name: value})
            if built == theirs and ours != words(model_type, name, value):
                problems.append(f"{name}={value!r}: the class drops it; read_config: {str(ours)[:120]}")
            elif (built != theirs and config is not None and not isinstance(ours, str)
                  and _unnoted(ours) != _unnoted(read_config(config.to_dict()))):
                problems.append(f"{name}={value!r}: the class passes it on; read_config reads otherwise")
    assert not problems, "\n".join(problems)


def test_the_sweep_finds_the_names_read_config_reads() -> None:
    """The names above include those read_config reads under a class's own name."""
    assert "rope_local_base_freq" in _names("gemma3") and "global_rope_theta" in _names("modernvbert")
    assert {"local_attention", "local_rope_theta"} <= set(_names("pe_video"))
    assert "per_layer_config" in _names("gemma4") and "indexer_n_heads" in _names("qwen4_exp")
    assert "attention_head_dim" in _names("hunyuan_vl") and "swa_rope_theta" in _names("dots3_note")


# refused (the class drops each: checked live above), and read: dropped at its default value, a
# wrapper's own key, keys the class passes on (Dots3's swa_rope_theta, HunYuan-VL's legacy name)
PORT_REFUSED = [{"model_type": "gemma3", "rope_local_base_freq": 64.0}, {"model_type": "pe_video", "local_attention": 258},
                {"model_type": "colmodernvbert", "global_rope_theta": 5000.0},
                {"model_type": "qwen4_exp", "indexer_n_heads": 64},
                {"model_type": "gemma4", "global_head_dim": 128},
                {"model_type": "step3p7", "partial_rotary_factors": [0.5]},
                {"model_type": "llava", "rope_theta": 5e5, "image_token_index": 3},
                {"model_type": "gemma3", "sliding_window": None}, {"model_type": "llava", "hidden_size": None}]
PORT_READ = [{"model_type": "llava", "rope_theta": 10000.0}, {"model_type": "llava", "image_token_index": 3},
             {"model_type": "dots3_note", "swa_rope_theta": 64.0},
             {"model_type": "hunyuan_vl", "attention_head_dim": 64, "rope_parameters": {
                 "rope_type": "default", "rope_theta": 1e4, "mrope_section": [8, 8, 8, 8]}}]


@pytest.mark.parametrize("config", PORT_REFUSED)
def test_a_dropped_name_is_refused_by_name(config: dict[str, Any]) -> None:
    key = next(k for k in config if k not in ("model_type", "image_token_index"))
    built = _text(config["model_type"], **{k: v for k, v in config.items() if k != "model_type"})[0]
    assert built == _text(config["model_type"])[0]  # the class's text model: unchanged
    assert _outcome(config) == words(config["model_type"], key, config[key])


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the site's JavaScript")
def test_the_browser_port_refuses_and_reads_alike(tmp_path: Path) -> None:
    from tests.site.check_inspector import API_READING, posenc_reading
    from tests.test_explorer_ports import port_against_posenc, run_js
    cases = [(json.dumps(config), None, None) for config in PORT_REFUSED + PORT_READ]
    problems, outcomes = port_against_posenc(tmp_path, cases)
    assert not problems, "\n".join(problems[:10])
    assert outcomes == [False] * len(PORT_REFUSED) + [True] * len(PORT_READ)
    refused = cases[:len(PORT_REFUSED)]
    theirs = run_js(tmp_path, API_READING.replace("([cases])", "(cases)"), refused)
    assert isinstance(theirs, list)
    assert [json.loads(t)["error"] for t in theirs] == [posenc_reading(*c)["error"] for c in refused]
