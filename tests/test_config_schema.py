"""Every entry of the model-type table has only the keys `posenc.configs._schema.ModelTypeEntry`
documents, each of the documented type (a key the generator starts to write must be documented
there first, and the reader's typed view of the table holds).

The check walks the TypedDicts' annotations at run time: unknown keys and missing required keys are
refused, and every value is checked against its type, nested dicts and lists included (a JSON
integer is a valid float; a bool is never an int).
"""

from __future__ import annotations

import json
import pathlib
import types
import typing
from typing import Any, Literal

import pytest

from posenc.configs import _schema, _table

GENERATOR = pathlib.Path(__file__).resolve().parents[1] / "tools" / "rope_model_types"


def problems(value: Any, hint: Any, where: str) -> list[str]:
    """What is wrong with ``value`` as a ``hint``, one line per problem (empty: it conforms)."""
    origin = typing.get_origin(hint)
    if typing.is_typeddict(hint):
        return _typed_dict(value, hint, where)
    if origin in (typing.Union, types.UnionType):
        found = [problems(value, option, where) for option in typing.get_args(hint)]
        return [] if any(not p for p in found) else [f"{where}: {value!r:.60} is none of {hint}"]
    if origin is Literal:
        return [] if any(value == v and type(value) is type(v) for v in typing.get_args(hint)) else [
            f"{where}: {value!r:.60} is not one of {typing.get_args(hint)}"]
    if origin is dict:
        if not isinstance(value, dict):
            return [f"{where}: expected a dict, got {type(value).__name__}"]
        key_type, value_type = typing.get_args(hint)
        return [p for k, v in value.items()
                for p in problems(k, key_type, f"{where} key") + problems(v, value_type, f"{where}[{k!r}]")]
    if origin is list:
        if not isinstance(value, list):
            return [f"{where}: expected a list, got {type(value).__name__}"]
        (item_type,) = typing.get_args(hint)
        return [p for i, v in enumerate(value) for p in problems(v, item_type, f"{where}[{i}]")]
    if hint is type(None) or hint is None:
        return [] if value is None else [f"{where}: expected null, got {value!r:.60}"]
    if hint is float:  # JSON writes 8.0 as 8.0 but a class default of 8 as 8
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif hint is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, hint)
    return [] if ok else [f"{where}: expected {hint.__name__}, got {type(value).__name__} {value!r:.60}"]


def _typed_dict(value: Any, hint: Any, where: str) -> list[str]:
    if not isinstance(value, dict):
        return [f"{where}: expected a dict ({hint.__name__}), got {type(value).__name__}"]
    hints = typing.get_type_hints(hint)
    found = [f"{where}: unknown key {key!r} (not in {hint.__name__})" for key in value if key not in hints]
    found += [f"{where}: missing key {key!r} ({hint.__name__})" for key in hint.__required_keys__ if key not in value]
    return found + [p for key, v in value.items() if key in hints for p in problems(v, hints[key], f"{where}[{key!r}]")]


def test_every_entry_has_documented_keys_of_their_types() -> None:
    table = json.loads(_table.TABLE_PATH.read_text())
    found = problems(table, _schema.ModelTypeTable, "model_types.json")
    assert not found, "\n".join(found[:40])
    assert len(table["model_types"]) > 700  # the whole table was walked, not an empty one


def test_every_key_of_an_entry_is_documented_in_its_docstring() -> None:
    doc = _schema.ModelTypeEntry.__doc__ or ""
    undocumented = [key for key in typing.get_type_hints(_schema.ModelTypeEntry) if f"{key}:" not in doc
                    and f"``{key}``" not in doc and f" {key}," not in doc]
    assert not undocumented, undocumented


def test_every_documented_key_is_one_the_generator_writes() -> None:
    """No key documented for nothing: each is written by the generator (``given_no_rope_layers``,
    for one, is derived but no class of the pinned transformers needs it today)."""
    source = "".join(path.read_text() for path in GENERATOR.glob("*.py"))
    unwritten = [key for key in typing.get_type_hints(_schema.ModelTypeEntry) if f'"{key}"' not in source]
    assert not unwritten, unwritten


@pytest.mark.parametrize(("entry", "expected"), [
    ({"layout": "half", "sinks": True}, "unknown key 'sinks'"),
    ({"layout": "diagonal"}, "is none of"),
    ({"rope": True}, "not one of"),
    ({"field_defaults": {"head_dim": "128"}}, "['head_dim']"),
    ({"layer_pattern": {"every": "full_attention", "other": "sliding_attention", "k": True}}, "expected int"),
    ({"window_layers": {"key": "max_window_layers", "default": 28, "compare": ">=", "k": 1}}, "missing key 'offset'"),
    ({"nested_bases": {"full_attention": {"key": None, "default": "1e6"}}}, "['default']"),
    ({"rope_condition": ["sliding_only", "always"]}, "[1]"),
])
def test_the_check_refuses_what_the_schema_does_not_allow(entry: dict[str, Any], expected: str) -> None:
    found = problems(entry, _schema.ModelTypeEntry, "entry")
    assert found and expected in "\n".join(found), found


def test_the_check_accepts_a_real_entry_and_json_integers_as_floats() -> None:
    assert problems(_table.model_types()["gemma3_text"], _schema.ModelTypeEntry, "gemma3_text") == []
    assert problems({"absent_defaults": {"rope_theta": 10000}}, _schema.ModelTypeEntry, "e") == []
    assert problems({"absent_defaults": {"rope_theta": True}}, _schema.ModelTypeEntry, "e") != []
