"""Probes of the table generator (``derive.py``): which keys a config class's RoPE defaults depend on.

posenc reads a model type's defaults from the table (the layer pattern a class fills in, the
``rope_parameters`` it starts from or adds). A class may compute them from other keys of the
config; the probes here change each key the class reads and record the ones that change the
default, so that posenc refuses, naming the key, a config that changes them rather than read the
table's default silently:

* **layer patterns** (``pattern_dependence``): a key that, set to null, turns a constant pattern
  into another constant (Ministral: no ``sliding_window``, full attention: ``if_null``), and the
  keys that change the pattern otherwise (``depends_on``, with their defaults: posenc claims the
  pattern only while the config leaves them at their defaults).
* **RoPE defaults** (``defaults_dependence``): ``defaults_depend_on``, the keys posenc does not read
  that change the default ``rope_parameters`` or what the class adds to a set (Mistral 4's rotated
  fraction from ``qk_rope_head_dim`` and ``qk_nope_head_dim``; Step 3.5's per-layer
  ``partial_rotary_factors``).
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

from tools.rope_model_types.probes import PROBE, S, _helpers

# ---------------------------------------------------------------- what other keys a default depends on
_SKIP = {"num_hidden_layers", "layer_types", "no_rope_layers", "rope_parameters", "rope_scaling", "per_layer_config"}


def _candidate_keys(text: Any) -> list[str]:
    """The keys the model's own config classes read (kwargs they pop, fields they declare; not the
    fields every transformers config has)."""
    h = _helpers()
    cls = type(text)
    own = {name for owner in cls.__mro__ if owner.__module__.startswith("transformers.models.")
           for name in vars(owner).get("__annotations__", {})}
    names = h._read_keys(cls) + ([f.name for f in dataclasses.fields(cls) if f.name in own]
                                 if dataclasses.is_dataclass(cls) else [])
    return [k for k in dict.fromkeys(names) if k not in _SKIP]


def _probe_values(default: Any, layers: Any) -> list[Any]:
    values: list[Any] = [None] if default is not None else []
    if isinstance(default, bool):
        values.append(not default)
    elif isinstance(default, (int, float)):
        values += [default + 3, 1]
    else:  # and a value per layer (Step 3.5's partial_rotary_factors)
        values += [True, 3] + ([[0.375] * layers] if isinstance(layers, int) and 0 < layers <= 256 else [])
    return values


def _same(got: Any, expected: Any) -> bool:
    """Equal, comparing only the forms that built both times when both are lists of built results."""
    if isinstance(got, list) and isinstance(expected, list) and any(isinstance(x, dict) for x in expected):
        return len(got) == len(expected) and all(a is None or b is None or a == b for a, b in zip(got, expected))
    return bool(got == expected)


def dependence(config_name: str, text: Any, read: Any, skip: tuple[str, ...] = (),
               constant_kind: bool = False) -> dict[str, Any]:
    """The keys that change what ``read(**keys)`` reads from the class built with them (a default it
    computes): each key alone (set to null, to another value), then all the others changed at once,
    reduced to a group whose keys change it only together (Qwen2's layer pattern:
    ``use_sliding_window`` and ``max_window_layers``). Returns ``depends_on``, a list of groups
    ``{key: class default}``: posenc trusts the default unless every key of some group differs from
    its default in the config. With ``constant_kind``, a key whose null turns a constant list into
    another constant one is ``if_null`` instead (Ministral: no sliding_window, full attention)."""
    h = _helpers()
    expected = read()
    if expected is None:
        return {}
    if_null: dict[str, Any] = {}
    groups: list[dict[str, Any]] = []
    quiet: dict[str, Any] = {}  # keys that build alone and change nothing alone: the value to try together
    defaults: dict[str, Any] = {}
    for key in _candidate_keys(text):
        if key in skip:
            continue
        default = defaults[key] = h._field_default(type(text), key)
        if not isinstance(default, (bool, int, float, type(None))):
            continue
        changed = False
        for value in _probe_values(default, getattr(text, "num_hidden_layers", None)):
            got = read(**{key: value})
            if got is None:
                continue
            if _same(got, expected):
                if value is not None:
                    quiet[key] = value  # the last value tried (1 for an int: the likeliest to matter)
                continue
            if (value is None and constant_kind and isinstance(got, list) and len(set(map(str, got))) == 1
                    and not changed):
                if_null[key] = got[0]
            else:
                changed = True
                if_null.pop(key, None)
        if changed:
            groups.append({key: default})
            quiet.pop(key, None)
    def changes(**values: Any) -> bool:
        got = read(**values)
        return got is not None and not _same(got, expected)

    together = dict(quiet)
    if together and changes(**together):
        for key in list(together):  # keep only the keys the change needs
            rest = {k: v for k, v in together.items() if k != key}
            if changes(**rest):
                together = rest
        groups.append({key: defaults[key] for key in sorted(together)})
    out: dict[str, Any] = {}
    if if_null:
        out["if_null"] = dict(sorted(if_null.items()))
    if groups:
        out["depends_on"] = groups
    return out


def pattern_dependence(config_name: str, text: Any, field: str, pattern: dict[str, Any]) -> dict[str, Any]:
    """Keys other than the pattern's own ``key`` that change the pattern the class fills in."""
    h = _helpers()

    def read(**values: Any) -> Any:
        value = getattr(h._built(config_name, text, num_hidden_layers=12, **values), field, None)
        return list(value) if isinstance(value, list) else None

    return dependence(config_name, text, read, skip=(pattern.get("key") or "", field), constant_kind=pattern["k"] == 1)


def _posenc_reads(entry: dict[str, Any]) -> set[str]:
    """The top-level keys posenc itself puts into the RoPE parameters (bases, rotated fractions,
    lengths): a default that changes with them is no default posenc relies on. Head widths are not
    among them: a rotated fraction the class computes from them is such a default."""
    keys = {"rope_theta", "partial_rotary_factor", "max_position_embeddings", "original_max_position_embeddings"}
    keys |= set(entry.get("key_aliases", {})) | set(entry.get("base_keys", {}).values())
    keys |= {entry["attribute_map"][k] for k in ("max_position_embeddings",) if k in entry.get("attribute_map", {})}
    keys |= {k for k in (entry.get("rotated_width_key"),) if k}
    keys |= {spec["key"] for spec in entry.get("nested_bases", {}).values() if spec.get("key")}
    return keys


def defaults_dependence(config_name: str, text: Any, entry: dict[str, Any]) -> dict[str, Any]:
    """The keys posenc does not read that change the RoPE defaults a config.json may rely on: the
    default ``rope_parameters``, what the class adds to a flat set (flat classes) or to an entry
    without them (per-layer-type classes). ``defaults_depend_on`` (groups, see `dependence`):
    Mistral 4 computes its rotated fraction from ``qk_rope_head_dim`` and ``qk_nope_head_dim``."""
    h = _helpers()
    defaults = entry.get("default_rope_parameters")
    if isinstance(defaults, dict) and h._nested(defaults):
        bare = {t: None if d is None else {"rope_type": "default", "rope_theta": S} for t, d in defaults.items()}
        forms: list[dict[str, Any]] = [{}, {"rope_parameters": bare}]
    else:
        forms = [{}] + [{source: dict(PROBE)} for source in ("rope_scaling", "rope_parameters")
                        if source not in entry.get("ignored_sources", ())]

    def read(**values: Any) -> Any:  # a form the class refuses with these values reads as None
        found = [h._landing(config_name, text, **copy.deepcopy(form), **values) for form in forms]
        return None if found[0] is None else found

    depends = dependence(config_name, text, read, skip=tuple(sorted(_posenc_reads(entry)))).get("depends_on")
    return {"defaults_depend_on": depends} if depends else {}
