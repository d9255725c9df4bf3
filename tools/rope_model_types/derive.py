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
import copy
import dataclasses
import importlib
import inspect
import json
import logging
import re
import sys
import textwrap
import warnings
from typing import Any
from unittest import mock

import torch

from posenc.configs._table import TABLE_PATH
from tools.rope_model_types import dependence, probes, rotation, windows

# The condition around a rotation call (ast.unparse of the `if` test) -> posenc's name for it.
CONDITIONS = {
    "self.use_rope": "no_rope_layers",
    "self.sliding_window is not None": "sliding_only",
    "self.is_local_attention": "sliding_only",
    "self.sliding_window is None or self.is_sliding": "sliding_or_no_window",
    "alibi is None": "no_alibi",
    "not is_cross_attention": None,           # self-attention rotates, cross-attention does not
    "self.config.rope_interleave": None,      # a layout flag, probed separately
    "self.config.rope_interleave and self.training": None,
}
# Layer types whose layers are softmax attention, and those that are not attention: the reader's own.
from posenc.configs._table import ATTENTION_LAYER_TYPES, NOT_ATTENTION_LAYER_TYPES  # noqa: E402
_ROTARY_CALLS = ("apply_rotary_pos_emb", "apply_rotary_emb", "apply_rotary_pos_emb_interleave",
                 "apply_rope", "apply_rotary")


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


# ---------------------------------------------------------------- the layout, by probing
def _rotary_candidates(module: Any, text: Any) -> list[Any]:
    """The rotary modules of ``module`` that build from the text config, text ones first."""
    found = []
    for name, cls in vars(module).items():
        if not (inspect.isclass(cls) and name.endswith("RotaryEmbedding")):
            continue
        if any(word in name for word in _OTHER_MODALITIES):
            continue
        try:
            rotary = cls(config=text)
        except Exception:
            continue
        if isinstance(getattr(rotary, "inv_freq", None), torch.Tensor) or hasattr(rotary, "layer_types"):
            found.append(rotary)
    return found


def _tables(rotary: Any, length: int, layer_type: str | None) -> Any:
    x = torch.zeros(1, length, 8, dtype=torch.float64)
    positions = torch.arange(length)[None, :]
    args: list[Any] = [x, positions]
    if layer_type is not None and "layer_type" in inspect.signature(rotary.forward).parameters:
        args.append(layer_type)
    for call in (lambda: rotary(*args), lambda: rotary(x, positions.expand(3, 1, length), *args[2:])):
        try:  # the second form: M-RoPE, one row of positions per axis
            return call()
        except Exception:
            continue
    return None


def _inv_freq(rotary: Any, layer_type: str | None) -> torch.Tensor | None:
    name = "inv_freq" if layer_type is None or hasattr(rotary, "inv_freq") else f"{layer_type}_inv_freq"
    value = getattr(rotary, name, None)
    return value if isinstance(value, torch.Tensor) else None


def _apply(function: Any, q: torch.Tensor, k: torch.Tensor, tables: Any) -> tuple[torch.Tensor, torch.Tensor] | None:
    """Call a rotation function of any of the signatures transformers uses; the rotated q and k."""
    names = list(inspect.signature(function).parameters)
    try:
        if isinstance(tables, torch.Tensor):  # complex freqs_cis (Llama 4, DeepSeek-V2)
            out = function(q, k, tables.to(torch.complex128) if tables.is_complex() else tables)
        elif names[:4] in (["q", "k", "cos", "sin"], ["xq", "xk", "cos", "sin"]):
            out = function(q, k, *tables)
        elif names[:3] in (["x", "cos", "sin"], ["hidden_states", "cos", "sin"]):
            out = function(q, *tables), function(k, *tables)
        elif names[:3] == ["tensor", "sin", "cos"]:  # GPT-J, CodeGen: [batch, seq, heads, dim]
            cos, sin = tables
            out = tuple(function(t.transpose(1, 2), sin, cos).transpose(1, 2) for t in (q, k))
        else:
            return None
    except Exception:
        if isinstance(tables, torch.Tensor) and q.shape[1] != q.shape[2]:  # [batch, seq, heads, dim] (Llama 4)
            pair = _apply(function, q.transpose(1, 2), k.transpose(1, 2), tables)
            return None if pair is None else (pair[0].transpose(1, 2), pair[1].transpose(1, 2))
        return None
    return (out[0], out[1]) if isinstance(out, tuple) and len(out) >= 2 else None


def _posenc_rotation(x: torch.Tensor, inv_freq: torch.Tensor, layout: str, scale: float) -> torch.Tensor:
    """RoPE written out (float64) over the first ``width`` features, pairs as ``layout`` says."""
    width = 2 * inv_freq.shape[-1]
    x = x.clone()
    angles = torch.arange(x.shape[-2], dtype=torch.float64)[:, None] * inv_freq.to(torch.float64)
    cos, sin = angles.cos() * scale, angles.sin() * scale
    part = x[..., :width]
    if layout == "half":
        a, b = part[..., : width // 2], part[..., width // 2:]
        x[..., :width] = torch.cat([a * cos - b * sin, b * cos + a * sin], dim=-1)
    else:
        a, b = part[..., 0::2], part[..., 1::2]
        x[..., :width] = torch.stack([a * cos - b * sin, b * cos + a * sin], dim=-1).flatten(-2)
    return x


def _layout_of(function: Any, rotary: Any, text: Any, layer_type: str | None) -> str | None:
    """The layout whose attention scores (q_m . k_n for every m, n) the model's rotation reproduces."""
    inv_freq = _inv_freq(rotary, layer_type)
    if inv_freq is None:
        return None
    rotary = rotary.double()
    length = 7
    tables = _tables(rotary, length, layer_type)
    if tables is None:
        return None
    width = 2 * inv_freq.shape[-1]
    scale = float(getattr(rotary, "attention_scaling", 1.0) if layer_type is None
                  else getattr(rotary, f"{layer_type}_attention_scaling", getattr(rotary, "attention_scaling", 1.0)))
    generator = torch.Generator().manual_seed(0)
    for extra in (0, 2 * width, width):  # full width first, then with features that pass unrotated
        q, k = (torch.randn(1, 2, length, width + extra, dtype=torch.float64, generator=generator) for _ in "qk")
        out = _apply(function, q, k, tables)
        if out is None or out[0].shape != q.shape:
            continue
        scores = out[0].double() @ out[1].double().transpose(-1, -2)
        for layout in ("half", "interleaved"):
            ours = (_posenc_rotation(q, inv_freq.double(), layout, scale)
                    @ _posenc_rotation(k, inv_freq.double(), layout, scale).transpose(-1, -2))
            if torch.allclose(scores, ours, atol=1e-6):
                return layout
        return None
    return None


class _LegacyRotary(torch.nn.Module):
    """GPT-J's and CodeGen's tables (``create_sinusoidal_positions``: sin then cos, base 10000), as a
    rotary module that returns (cos, sin)."""

    def __init__(self, module: Any, rotary_dim: int) -> None:
        super().__init__()
        self.make = module.create_sinusoidal_positions
        self.inv_freq = 1.0 / 10000 ** (torch.arange(0, rotary_dim, 2, dtype=torch.float64) / rotary_dim)
        self.rotary_dim = rotary_dim

    def forward(self, x: torch.Tensor, position_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        table = self.make(int(position_ids.max()) + 1, self.rotary_dim).to(torch.float64)[position_ids]
        sin, cos = torch.split(table, self.rotary_dim // 2, dim=-1)
        return cos, sin


def _legacy_rotary(module: Any, text: Any) -> list[Any]:
    if not hasattr(module, "create_sinusoidal_positions") or not isinstance(getattr(text, "rotary_dim", None), int):
        return []
    return [_LegacyRotary(module, text.rotary_dim)]


def _rotation_functions(module: Any) -> dict[str, Any]:
    return {name: getattr(module, name) for name in _ROTARY_CALLS if callable(getattr(module, name, None))}


# ---------------------------------------------------------------- the source: conditions and calls
def _calls_rotation(nodes: list[ast.stmt]) -> bool:
    names = {getattr(c.func, "id", getattr(c.func, "attr", "")) for stmt in nodes for c in ast.walk(stmt)
             if isinstance(c, ast.Call)}
    return bool(names & set(_ROTARY_CALLS))


def _branches(source: str) -> list[str]:
    """Every ``if`` test with a rotation call in its body (layout flags such as ``rope_interleave``)."""
    return sorted({ast.unparse(node.test) for node in ast.walk(ast.parse(source))
                   if isinstance(node, ast.If) and _calls_rotation(node.body)})


def _conditions(source: str) -> list[str]:
    """The ``if`` tests under which a rotation call runs and without which none does (an ``else``
    that rotates too, as GPT-J's partial/full branches, is not such a condition)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.If) and _calls_rotation(node.body) and not _calls_rotation(node.orelse):
            found.append(ast.unparse(node.test))
    return sorted(set(found))


_OTHER_MODALITIES = ("Vision", "Audio", "Image", "Video", "Patch", "Speech", "Conformer", "Indexer")


def _called_in_attention(source: str) -> set[str]:
    """The rotation functions the text attention classes call (``class ...Attention``)."""
    called = set()
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.ClassDef) and node.name.endswith("Attention")
                and not any(word in node.name for word in _OTHER_MODALITIES)):
            for call in ast.walk(node):
                if isinstance(call, ast.Call):
                    name = getattr(call.func, "id", getattr(call.func, "attr", ""))
                    if name in _ROTARY_CALLS:
                        called.add(name)
    return called


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


# Keys posenc reads under transformers' canonical names; a config class may store them under others.
_MAPPED_KEYS = ("hidden_size", "num_attention_heads", "head_dim", "max_position_embeddings", "num_hidden_layers",
                "layer_types")
def _head_dim_source(config_name: str, text: Any) -> dict[str, Any] | None:
    """The key the config class copies into ``head_dim`` (DeepSeek-V3: ``qk_rope_head_dim``), and
    whether it wins over a ``head_dim`` the config gives."""
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
            return {"key": key, "over_head_dim": getattr(over, "head_dim", None) == dim + 2}
    return None


_FIELD_DEFAULTS = ("head_dim", "max_position_embeddings", "rope_interleave", "attn_temperature_tuning",
                   "floor_scale", "attn_scale", "sliding_window", "attention_chunk_size", "qk_rope_head_dim")


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


def _field_default(cls: type, name: str) -> Any:
    if dataclasses.is_dataclass(cls):
        for field in dataclasses.fields(cls):
            if field.name == name and field.default is not dataclasses.MISSING:
                return field.default
    return getattr(cls, name, None) if not isinstance(getattr(cls, name, None), property) else None


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
        return wrapper
    params = getattr(text, "rope_parameters", None)
    source = inspect.getsource(module)
    legacy = isinstance(getattr(text, "rotary_dim", None), int) and "create_sinusoidal_positions" in source
    if not legacy and (not isinstance(params, dict) or not params or "Rotary" not in source):
        calls = rotation.rotation_calls(source)  # no settings to read is not "no RoPE" (DINOv3, V-JEPA 2, ESM)
        return {"rope": False, "rotation_calls": calls} if calls else {"rope": False}
    params = params if isinstance(params, dict) else {}
    # GPT-J's and CodeGen's fixed tables: base 10000 and no scaling, whatever the config says
    entry: dict[str, Any] = {"rotated_width_key": "rotary_dim", "fixed_tables": True} if legacy else {}
    if text.model_type != model_type:
        entry["text_model_type"] = text.model_type
    layer_types = [t for t in getattr(text, "layer_types", None) or [] if isinstance(t, str)]
    candidates = list(params) if _nested(params) else layer_types
    # a layer type that rotates (Beam's full_attention parameters are None: NoPE, nothing to probe)
    probe_type = next((t for t in ATTENTION_LAYER_TYPES if t in candidates and params.get(t, {}) is not None), None)
    functions = _rotation_functions(module)
    used = _called_in_attention(source)
    functions = {name: f for name, f in functions.items() if name in used} or functions
    layouts: dict[str, str | None] = {}
    for rotary in _rotary_candidates(module, text) or _legacy_rotary(module, text):
        for name, function in functions.items():
            layouts.setdefault(name, _layout_of(function, rotary, text, probe_type))
        if any(layouts.values()):
            break
    if sites := rotation.rotary_sites(module, source, text, probe_type):
        entry["rotary_sites"] = sites  # a layer that rotates at two sites in two layouts (DeepSeek-V3.2)
    conditions = _conditions(source)
    if any("rope_interleave" in c for c in _branches(source)):
        default = bool(_field_default(type(text), "rope_interleave"))
        entry["layout"] = {"key": "rope_interleave", "default": default,
                           "true": layouts.get("apply_rotary_pos_emb_interleave"),
                           "false": layouts.get("apply_rotary_pos_emb")}
    else:
        found = {v for v in layouts.values() if v is not None}
        entry["layout"] = found.pop() if len(found) == 1 else None
    theta = getattr(type(text), "default_theta", 10000.0)
    if theta != 10000.0:
        entry["default_theta"] = theta
    fields = {key: value for key in _FIELD_DEFAULTS if (value := _field_default(type(text), key)) is not None}
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
        entry.update(probes.nested_partial(config_name, text, defaults, entry.get("nested_fill", {})))
    elif params and not _nested(params):
        entry.update(probes.flat_class(config_name, text))
    entry.update(_type_aliases(config_name, text))
    entry.update(probes.given_lists(config_name, text))
    entry.update(probes.layer_types_from_flags(config_name, text))
    entry.update(probes.per_layer_head_dim(config_name, text))
    entry.update(dependence.defaults_dependence(config_name, text, entry))
    entry.update(windows.windows(config_name, text, source))  # which layers attend within a window
    for key in ((entry.get("head_dim_from") or {}).get("key"), entry.get("rotated_width_key")):
        if key and (value := _field_default(type(text), key)) is not None:  # what a config.json may leave out
            entry.setdefault("field_defaults", {})[key] = value
    renamed = {key: name for key, name in (getattr(type(text), "attribute_map", None) or {}).items()
               if key in _MAPPED_KEYS}
    if renamed:
        entry["attribute_map"] = dict(sorted(renamed.items()))
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
    unknown = sorted(set(layer_types) - set(ATTENTION_LAYER_TYPES) - set(NOT_ATTENTION_LAYER_TYPES))
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
        if _says_no_rope(table, model_type) and (parts := rotation.rotating_parts(table, classes, model_type)):
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
