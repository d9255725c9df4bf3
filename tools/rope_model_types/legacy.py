"""Probes of the table generator (``derive.py``) for rotations written outside transformers' usual
pattern (a rotary module built from ``rope_parameters``, one rotation of q and k for every head):

* **a switch** (``rope_switch``): the attention rotates only when a config key has one value (ESM:
  ``if self.position_embedding_type == "rotary":``, modeling_esm.py:368), and with another adds
  learned absolute embeddings instead (``== "absolute"`` around ``self.position_embeddings(...)``,
  modeling_esm.py:253-255); read from the source, then the layout probed with the switch on, and
  whether the rotary module reads only the top-level ``rope_theta`` (``theta_only``), by building
  it with a ``rope_parameters`` that would change its frequencies;
* **a sinusoidal table** (RoFormer: ``RoFormerSinusoidalPositionalEmbedding.create_weight``, sines
  then cosines, turned by ``apply_rotary_position_embeddings(sinusoidal_pos, q, k)``): its base
  fitted from the table, its layout found by running the rotation on it (``fixed_tables``), and
  whether it rotates the values too under a config flag (``rotates_values``: ``self.rotary_value``);
* **a slice of heads** (``head_slice``): the rotation's result assigned to a slice of the heads
  (Qwen2.5-Omni's DiT: ``query[:, :1], key[:, :1] = apply_rotary_pos_emb(...)``), which posenc's one
  rotation per layer cannot express.
"""

from __future__ import annotations

import ast
import inspect
from typing import Any

import torch

from tools.rope_model_types.classes import _field_default
from tools.rope_model_types.modeling import (
    _ROTARY_CALLS,
    _layout_of,
    _posenc_rotation,
    _rotary_candidates,
    _rotation_functions,
)


def _self_key(node: ast.expr) -> str | None:
    """``NAME`` of ``self.NAME``, else None."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return None


def _called(nodes: list[ast.stmt], names: tuple[str, ...] | set[str]) -> list[ast.Call]:
    return [c for stmt in nodes for c in ast.walk(stmt) if isinstance(c, ast.Call)
            and getattr(c.func, "id", getattr(c.func, "attr", "")) in names]


# ---------------------------------------------------------------- a switch (ESM)
def _switch_tests(source: str) -> list[tuple[str, str, ast.If]]:
    """Every ``if self.KEY == "VALUE":`` of the source, as (KEY, VALUE, the if)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        test = node.test if isinstance(node, ast.If) else None
        if (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)
                and (key := _self_key(test.left)) and isinstance(test.comparators[0], ast.Constant)
                and isinstance(value := test.comparators[0].value, str)):
            found.append((key, value, node))
    return found


def rope_switch(text: Any, source: str) -> dict[str, Any] | None:
    """The config key whose value switches the rotation on, the value that does, the value under
    which learned absolute embeddings are added instead, and the class default; None without one."""
    tests = _switch_tests(source)
    rotary = {(key, value) for key, value, node in tests if _called(node.body, _ROTARY_CALLS)}
    if len(rotary) != 1:
        return None
    key, value = rotary.pop()
    default = _field_default(type(text), key)
    if not isinstance(default, str):  # not a config field with a string default
        return None
    absolute = sorted({v for k, v, node in tests if k == key and _called(node.body, {"position_embeddings"})})
    return {"key": key, "rotary": value, "absolute": absolute[0] if len(absolute) == 1 else None, "default": default}


def switched_entry(module: Any, text: Any, switch: dict[str, Any]) -> dict[str, Any]:
    """The layout with the switch on, and whether the rotary module reads only ``rope_theta``."""
    on = type(text)(**{switch["key"]: switch["rotary"]})
    entry: dict[str, Any] = {"rope_switch": switch}
    layouts = {_layout_of(f, r, on, None) for r in _rotary_candidates(module, on)[:1]
               for f in _rotation_functions(module).values()} - {None}
    entry["layout"] = layouts.pop() if len(layouts) == 1 else None
    if (theta := _field_default(type(text), "rope_theta")) is not None:
        if float(theta) != 10000.0:
            entry["default_theta"] = float(theta)
        if _reads_theta_only(module, text, switch):
            entry["theta_only"] = True
    return entry


def _reads_theta_only(module: Any, text: Any, switch: dict[str, Any]) -> bool:
    """Whether the rotary module's frequencies follow the top-level ``rope_theta`` and ignore a
    ``rope_parameters`` (and ``rope_scaling``) that would change them."""
    probe = {"rope_type": "linear", "factor": 4.0, "rope_theta": 500.0}
    try:
        built = type(text)(**{switch["key"]: switch["rotary"]}, rope_theta=123.0, rope_parameters=probe,
                           rope_scaling=probe)
    except Exception:
        return False
    rotary = next(iter(_rotary_candidates(module, built)), None)
    inv_freq = getattr(rotary, "inv_freq", None)
    if not isinstance(inv_freq, torch.Tensor):
        return False
    width = 2 * inv_freq.shape[-1]
    expected = 1.0 / 123.0 ** (torch.arange(0, width, 2, dtype=torch.float64) / width)
    return bool(torch.allclose(inv_freq.double(), expected, rtol=1e-6))


# ---------------------------------------------------------------- a sinusoidal table (RoFormer)
def _table_class(module: Any) -> Any:
    return next((cls for name, cls in vars(module).items() if inspect.isclass(cls)
                 and name.endswith("SinusoidalPositionalEmbedding") and hasattr(cls, "create_weight")), None)


def _table_rotation(module: Any, calls: list[str]) -> Any:
    """The rotation function (a method of an attention class) that takes the table first."""
    for cls in vars(module).values():
        for name in calls:
            function = inspect.getattr_static(cls, name, None) if inspect.isclass(cls) else None
            function = getattr(function, "__func__", function)
            if callable(function) and next(iter(inspect.signature(function).parameters), "") == "sinusoidal_pos":
                return function
    return None


def sinusoidal_entry(module: Any, text: Any, source: str, calls: list[str]) -> dict[str, Any] | None:
    """``fixed_tables`` and the layout of a model that turns q and k by a sinusoidal table of one
    head's width (the table's base fitted and required to be 10000, as posenc's fixed tables are),
    and the flag that makes it rotate the values too; None where the probe does not fit."""
    cls, rotate = _table_class(module), _table_rotation(module, calls)
    heads = getattr(text, "num_attention_heads", None)
    if cls is None or rotate is None or not isinstance(heads, int):
        return None
    dim, length = text.hidden_size // heads, 7
    table = cls(length, dim).create_weight().double()  # [position, sines then cosines]
    inv_freq = 1.0 / 10000.0 ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    angles = torch.arange(length, dtype=torch.float64)[:, None] * inv_freq
    if not torch.allclose(table, torch.cat([angles.sin(), angles.cos()], dim=-1), atol=1e-6):
        return None  # not base 10000 in that order: not read
    generator = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 2, length, dim, dtype=torch.float64, generator=generator) for _ in "qkv")
    turned = rotate(table[None, None], q, k)
    scores = turned[0] @ turned[1].transpose(-1, -2)
    layout = next((name for name in ("half", "interleaved") if torch.allclose(
        scores, _posenc_rotation(q, inv_freq, name, 1.0) @ _posenc_rotation(k, inv_freq, name, 1.0).transpose(-1, -2),
        atol=1e-6)), None)
    if layout is None:
        return None
    entry: dict[str, Any] = {"fixed_tables": True, "layout": layout}
    with_values = rotate(table[None, None], q, k, v)
    if len(with_values) == 3 and not torch.equal(with_values[2], v) and (flag := _value_flag(source, calls)):
        entry["rotates_values"] = {"key": flag, "default": bool(_field_default(type(text), flag))}
    return entry


def _value_flag(source: str, calls: list[str]) -> str | None:
    """The config flag (``if self.FLAG:``) under which the rotation is called with the values too
    (one more argument than in its ``else``)."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.If) and (flag := _self_key(node.test)):
            inside, other = _called(node.body, tuple(calls)), _called(node.orelse, tuple(calls))
            if inside and other and len(inside[0].args) == len(other[0].args) + 1:
                return flag
    return None


# ---------------------------------------------------------------- a slice of heads (Qwen2.5-Omni's DiT)
def head_slice(module: Any, text: Any, source: str) -> dict[str, Any] | None:
    """Where the attention class built from this config (its ``config`` annotated with the config's
    class) assigns the rotation's result to a slice of q and k (``query[:, :1], key[:, :1] =
    apply_rotary_pos_emb(f(query[:, :1]), ...)``): the class, the slices, and the functions the
    sliced q and k pass through first."""
    for cls in ast.walk(ast.parse(source)):
        if not (isinstance(cls, ast.ClassDef) and cls.name.endswith("Attention") and _built_from(module, cls.name, text)):
            continue
        for node in ast.walk(cls):
            if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                    and getattr(node.value.func, "id", getattr(node.value.func, "attr", "")) in _ROTARY_CALLS):
                continue
            targets = node.targets[0].elts if isinstance(node.targets[0], ast.Tuple) else []
            if targets and all(isinstance(t, ast.Subscript) for t in targets):
                through = sorted({getattr(a.func, "id", getattr(a.func, "attr", "")) for a in node.value.args[:2]
                                  if isinstance(a, ast.Call)})
                return {"attention": cls.name, "sliced": ", ".join(ast.unparse(t) for t in targets), "through": through}
    return None


def _built_from(module: Any, name: str, text: Any) -> bool:
    cls = getattr(module, name, None)
    try:
        annotation = inspect.signature(cls.__init__).parameters["config"].annotation  # type: ignore[misc]
    except (TypeError, ValueError, KeyError, AttributeError):
        return False
    return getattr(annotation, "__name__", annotation) == type(text).__name__


def legacy_entry(module: Any, text: Any, source: str, calls: list[str]) -> dict[str, Any] | None:
    """The entry of a model type with no rotary settings of the usual kind that still rotates in a
    way posenc reads (ESM's switch, RoFormer's sinusoidal table); None otherwise."""
    if (switch := rope_switch(text, source)) is not None:
        return switched_entry(module, text, switch)
    return sinusoidal_entry(module, text, source, calls)
