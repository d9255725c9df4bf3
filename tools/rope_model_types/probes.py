"""Probes of the table generator (``derive.py``): what a config class does with what a config.json gives.

Each function builds the model type's config class on probe values and reads back what it made, so
that the table records behaviour, not names. What a probe cannot fit to the small vocabulary
`posenc.configs` implements is left out of the table, and posenc then refuses that form of
config with a named error rather than guess.

* **a given list** (``given_lists``): whether the class keeps a ``layer_types`` (or
  ``no_rope_layers``) list a config gives as it is, forces its last entry (Gemma 4: the last layer is
  full attention, ``{"last": ...}``), or rewrites it some other way (``{"rewritten": true}``).
* **layer kinds from the NoPE flags** (``layer_types_from_flags``): a class that names each layer's
  kind from a given ``no_rope_layers`` (Llama 4), and the kind of each flag.
* **one RoPE per layer type** (``per_layer_type``), for classes whose default ``rope_parameters``
  map layer types to their settings:
  ``flat_landing``: where a flat ``rope_scaling`` or ``rope_parameters`` lands, per source: the layer
  types whose entry it updates (``layer_types``; others keep their defaults) and those where a
  ``rope_theta`` inside it lands (``theta``, winning over the config's base keys); a source the
  class keeps flat, or spreads some other way, is not recorded.
  ``nested_bases``: for an entry without ``rope_theta``, the top-level key that gives each layer
  type its base and the base it gets without one; ``nested_theta_required`` where the class leaves
  such an entry without a base. ``nested_fill``: other settings the class adds to an entry that
  lacks them, and ``nested_forced`` those it sets whatever the entry says.
  ``null_filled``: the layer types whose ``None`` entry the class fills in as an entry without a base.
* **a rotated fraction in an entry** (``nested_partial``): the layer types whose rotary module
  ignores an entry's ``partial_rotary_factor`` (``nested_partial_ignored``; with a scaled rule,
  ``nested_partial_scaled``, in ``partial.py``), and the top-level keys
  the class copies into the entries (``nested_top_level``).
* **per-layer head widths** (``per_layer_head_dim``): a key whose value the class writes into
  ``per_layer_config`` as the head width of one layer type when the config gives no
  ``per_layer_config`` (Gemma 4's ``global_head_dim``), and its default.
* **one RoPE for every layer** (``flat_class``): a source the class ignores, and the base and
  rotated fraction it adds to a flat set that lacks them.
  Its rotary module's own default rule and a rotated fraction: ``partial.py``.

What other keys the defaults depend on is probed in ``dependence.py``.
"""

from __future__ import annotations

import copy
from typing import Any

from tools.rope_model_types import partial

S = 123457.0  # bases no class uses
T = 234567.0
PROBE = {"rope_type": "linear", "factor": 3.0}
_BASE_ENTRY = ("rope_type", "rope_theta")


def _helpers() -> Any:
    from tools.rope_model_types import derive  # imported late: derive imports this module
    return derive


def _entries(params: Any, names: list[str]) -> dict[str, Any] | None:
    """The per-layer-type entries of a built rope_parameters (None if it has not all of them)."""
    if not isinstance(params, dict):
        return None
    found = {k: v for k, v in params.items() if k in names}
    if set(found) != set(names) or not all(isinstance(v, dict) or v is None for v in found.values()):
        return None
    return found


# ---------------------------------------------------------------- a given layer_types / no_rope_layers
def _list_probes(kinds: list[Any], layers: int) -> list[list[Any]]:
    probes = [[kind] * layers for kind in kinds]
    probes += [[a if i % 2 else b for i in range(layers)] for a in kinds for b in kinds if a != b]
    return probes


def _fit_given(results: list[tuple[list[Any], list[Any]]], renames: bool) -> dict[str, Any] | None:
    """What the class did to the lists it was given: nothing (None), a renaming of kinds
    (``renamed``) and/or the last entry forced (``last``), or anything else (``rewritten``)."""
    mapping: dict[Any, Any] = {}
    for probe, got in results:
        if len(got) != len(probe):
            return {"rewritten": True}
        for a, b in zip(probe[:-1], got[:-1]):
            if mapping.setdefault(a, b) != b:
                return {"rewritten": True}
    out: dict[str, Any] = {}
    if not all(mapping.get(probe[-1], probe[-1]) == got[-1] for probe, got in results):
        lasts = {got[-1] for _, got in results}
        if len(lasts) != 1:
            return {"rewritten": True}
        out["last"] = lasts.pop()
    renamed = {a: b for a, b in mapping.items() if a != b}
    if renamed and not renames:
        return {"rewritten": True}
    if renamed:
        out["renamed"] = dict(sorted(renamed.items()))
    return out or None


def given_lists(config_name: str, text: Any) -> dict[str, Any]:
    """How the class treats a ``layer_types`` / ``no_rope_layers`` list the config gives: kept as it
    is (nothing recorded), kinds renamed, the last entry forced, or rewritten otherwise."""
    h = _helpers()
    entry: dict[str, Any] = {}
    layers = 7
    for field, name in (("layer_types", "given_layer_types"), ("no_rope_layers", "given_no_rope_layers")):
        default = getattr(h._built(config_name, text, num_hidden_layers=layers), field, None)
        if not isinstance(default, list) or len(default) != layers:
            continue
        kinds = list(dict.fromkeys(default))
        if len(kinds) == 1:  # a second kind, so that a forced or renamed entry shows
            extra = ("full_attention", "sliding_attention") if field == "layer_types" else (0, 1)
            kinds.append(next(k for k in extra if k != kinds[0]))
        results = []
        for probe in _list_probes(kinds, layers):
            built = h._built(config_name, text, num_hidden_layers=layers, **{field: list(probe)})
            got = getattr(built, field, None)
            if isinstance(got, list):
                results.append((probe, list(got)))
        if results and (fit := _fit_given(results, renames=field == "layer_types")) is not None:
            entry[name] = fit
    return entry


def layer_types_from_flags(config_name: str, text: Any) -> dict[str, Any]:
    """Whether the class names each layer's kind from a ``no_rope_layers`` list the config gives
    (Llama 4: 1, the layer rotates, chunked attention; 0, NoPE, full attention) when it gives no
    ``layer_types``: ``layer_types_from``, the key and the kind of each flag."""
    h = _helpers()
    layers = 7
    base = h._built(config_name, text, num_hidden_layers=layers)
    defaults, flags = getattr(base, "layer_types", None), getattr(base, "no_rope_layers", None)
    if not isinstance(defaults, list) or not isinstance(flags, list) or len(flags) != layers:
        return {}
    kinds: dict[str, Any] = {}
    for probe in ([1, 0] * 4)[:layers], ([0, 1] * 4)[:layers], [1, 1, 0, 0, 1, 1, 0]:
        got = getattr(h._built(config_name, text, num_hidden_layers=layers, no_rope_layers=list(probe)), "layer_types",
                      None)
        if not isinstance(got, list) or len(got) != layers:
            return {}
        for flag, kind in zip(probe, got):
            if kinds.setdefault(str(flag), kind) != kind:
                return {}
    if len(set(kinds.values())) != 2 or [kinds["1" if f else "0"] for f in flags] != defaults:
        return {}  # layer types that do not follow the flags, or follow them by another rule
    return {"layer_types_from": {"key": "no_rope_layers", "kinds": dict(sorted(kinds.items()))}}


# ---------------------------------------------------------------- one RoPE per layer type
def _flat_landing(config_name: str, text: Any, defaults: dict[str, Any], base_keys: dict[str, str],
                  source: str) -> dict[str, list[str]] | None:
    h = _helpers()
    names = list(defaults)
    plain = _entries(h._landing(config_name, text, **{source: dict(PROBE)}), names)
    themed = _entries(h._landing(config_name, text, **{source: {**PROBE, "rope_theta": S}}), names)
    if plain is None or themed is None:
        return None  # the class keeps the flat set as it is (its model then fails) or refuses it
    updated, theta = [], []
    for layer_type in names:
        default, got, with_theta = defaults[layer_type], plain[layer_type], themed[layer_type]
        if default is None:  # a NoPE layer type stays one
            if got is not None or with_theta is not None:
                return None
            continue
        if got is None or with_theta is None:
            return None
        if got == {**default, **PROBE}:
            updated.append(layer_type)
        elif got != default:
            return None  # spread some other way (DeepSeek-V4, Dots): not in posenc's vocabulary
        if with_theta.get("rope_theta") == S:
            theta.append(layer_type)
        elif with_theta != got:
            return None
    if theta and base_keys:  # the flat set's base must win over the config's base keys
        over = _entries(h._landing(config_name, text, **{source: {**PROBE, "rope_theta": S}},
                                   **{key: T for key in set(base_keys.values())}), names)
        if over is None or any((over[t] or {}).get("rope_theta") != S for t in theta):
            return None
    return {"layer_types": updated, "theta": theta}


def _bases(config_name: str, text: Any, defaults: dict[str, Any], rope_parameters: dict[str, Any],
           keys: list[str]) -> tuple[dict[str, Any] | None, dict[str, str]]:
    """The entries the class makes of ``rope_parameters``, and the top-level key whose value lands as
    each layer type's base (probed one key at a time)."""
    h = _helpers()
    names = list(defaults)
    got = _entries(h._landing(config_name, text, rope_parameters=copy.deepcopy(rope_parameters)), names)
    landed: dict[str, str] = {}
    for key in keys:
        probe = _entries(h._landing(config_name, text, rope_parameters=copy.deepcopy(rope_parameters), **{key: S}),
                         names)
        for layer_type, value in (probe or {}).items():
            if isinstance(value, dict) and value.get("rope_theta") == S and layer_type not in landed:
                landed[layer_type] = key
    return got, landed


def per_layer_type(config_name: str, text: Any, defaults: dict[str, Any], base_keys: dict[str, str]) -> dict[str, Any]:
    """What the class does with a flat set, an entry without a base, and a None entry (see the module)."""
    h = _helpers()
    entry: dict[str, Any] = {}
    landing = {source: found for source in ("rope_scaling", "rope_parameters")
               if (found := _flat_landing(config_name, text, defaults, base_keys, source)) is not None}
    if landing:
        entry["flat_landing"] = landing
    keys = sorted(set(h._read_keys(type(text))) | {"rope_theta"} | set(base_keys.values()))
    keys = [k for k in keys if "theta" in k or "base" in k or "freq" in k]
    bare = {t: None if d is None else {"rope_type": "default"} for t, d in defaults.items()}
    got, landed = _bases(config_name, text, defaults, bare, keys)
    if got is None or any(v is not None and "rope_theta" not in v for v in got.values()):
        entry["nested_theta_required"] = True
        return entry
    entry["nested_bases"] = {t: {"key": landed.get(t), "default": v["rope_theta"]}
                             for t, v in got.items() if v is not None}
    fill = {t: {k: x for k, x in v.items() if k not in _BASE_ENTRY} for t, v in got.items() if v is not None}
    fill = {t: v for t, v in fill.items() if v}
    if fill:
        entry["nested_fill"] = fill
        given = {t: None if d is None else {"rope_type": "default", "rope_theta": S,
                                            **{k: 0.375 for k in fill.get(t, {})}} for t, d in defaults.items()}
        kept = _entries(h._landing(config_name, text, rope_parameters=given), list(defaults)) or {}
        forced = {t: sorted(k for k in keys_ if (kept.get(t) or {}).get(k) != 0.375) for t, keys_ in fill.items()}
        forced = {t: v for t, v in forced.items() if v}
        if forced:
            entry["nested_forced"] = forced
    filled = []
    for layer_type, default in defaults.items():
        if default is None:
            continue
        with_null = {**bare, layer_type: None}
        # with the top-level base too: Step 3.5 rebuilds every entry from it once one is None
        for key_values in ({}, {key: S for key in set(landed.values()) | {"rope_theta"}}):
            nulled = _entries(h._landing(config_name, text, rope_parameters=copy.deepcopy(with_null), **key_values),
                              list(defaults))
            plain = _entries(h._landing(config_name, text, rope_parameters=copy.deepcopy(bare), **key_values),
                             list(defaults))
            if nulled is None or plain is None or nulled != plain:
                break
        else:
            filled.append(layer_type)
    if filled:
        entry["null_filled"] = filled
    return entry


def _widths(config_name: str, text: Any, entries: dict[str, Any]) -> dict[str, int] | None:
    """The number of frequencies the model's rotary module makes for each layer type, built from a
    config with ``entries`` as its rope_parameters (None if it cannot be built)."""
    h = _helpers()
    built = h._built(config_name, text, rope_parameters=copy.deepcopy(entries))
    rotaries = h._rotary_candidates(h._module(built.model_type), built) if built is not None else []
    if not rotaries:
        return None
    found = {t: h._inv_freq(rotaries[0], t) for t, v in entries.items() if v is not None}
    return None if any(v is None for v in found.values()) else {t: v.numel() for t, v in found.items()}


def nested_partial(config_name: str, text: Any, defaults: dict[str, Any], fill: dict[str, Any],
                   functions: dict[str, Any]) -> dict[str, Any]:
    """Layer types whose rotary module rotates the whole head whatever ``partial_rotary_factor`` an
    entry of rope type "default" gives (Gemma 3's own default rule reads only the base; not where
    the class sets the fraction itself, ``fill``: Dots3's module reads the width it stands for from
    ``qk_rope_head_dim``), and
    ``nested_top_level``: the top-level keys the class copies into entries that lack them
    (Step 3.5's ``partial_rotary_factor``)."""
    h = _helpers()
    entry: dict[str, Any] = {}
    bare = {t: None if d is None else {"rope_type": "default", "rope_theta": S} for t, d in defaults.items()}
    landed = _entries(h._landing(config_name, text, rope_parameters=copy.deepcopy(bare), partial_rotary_factor=0.375),
                      list(defaults)) or {}
    if any(isinstance(v, dict) and v.get("partial_rotary_factor") == 0.375 for v in landed.values()):
        entry["nested_top_level"] = ["partial_rotary_factor"]
    whole = _widths(config_name, text, bare)
    half = _widths(config_name, text, {t: None if d is None else {**d, "partial_rotary_factor": 0.5}
                                       for t, d in bare.items()})
    if whole and half:
        ignored = sorted(t for t in whole if half.get(t) == whole[t]
                         and "partial_rotary_factor" not in (fill.get(t) or {}))
        if ignored:
            entry["nested_partial_ignored"] = ignored
            entry.update(partial.nested_scaled(config_name, text, defaults, ignored, functions))
    return entry


# ---------------------------------------------------------------- per-layer head widths
def _by_index(overrides: dict[Any, Any]) -> dict[int, Any]:
    """per_layer_config by layer index (its keys are ints, or digit strings such as "05")."""
    return {int(k): v for k, v in overrides.items() if isinstance(k, int) or (isinstance(k, str) and k.isdigit())}


def per_layer_head_dim(config_name: str, text: Any) -> dict[str, Any]:
    """A key the class writes into ``per_layer_config`` as one layer type's head_dim (Gemma 4's
    ``global_head_dim``) when the config gives no ``per_layer_config``."""
    h = _helpers()
    layers = 12
    built = h._built(config_name, text, num_hidden_layers=layers)
    if built is None:
        return {}
    overrides = built.to_dict().get("per_layer_config")
    types = getattr(built, "layer_types", None)
    if not isinstance(overrides, dict) or not isinstance(types, list):
        return {}
    found: dict[str, Any] = {}
    for layer_type in dict.fromkeys(types):
        dims = {(_by_index(overrides).get(i) or {}).get("head_dim") for i, t in enumerate(types) if t == layer_type}
        if len(dims) != 1 or (dim := dims.pop()) is None:
            continue
        for key in h._read_keys(type(text)):
            changed = h._built(config_name, text, num_hidden_layers=layers, **{key: dim + 6})
            again = changed.to_dict().get("per_layer_config") if changed is not None else None
            if isinstance(again, dict) and all((_by_index(again).get(i) or {}).get("head_dim") == dim + 6
                                               for i, t in enumerate(types) if t == layer_type):
                found[layer_type] = {"key": key, "default": dim}
                break
    return {"per_layer_head_dim": found} if found else {}


# ---------------------------------------------------------------- one RoPE for every layer
def flat_class(config_name: str, text: Any) -> dict[str, Any]:
    """For a class with one RoPE for every layer: a source (``rope_scaling``, ``rope_parameters``) the
    class ignores (``ignored_sources``); the base and rotated fraction it adds to a flat set that
    lacks them (``absent_defaults``, from ``rope_parameters``; ``absent_defaults_scaling`` where a
    ``rope_scaling`` gets other ones; the base only where it is not the class's default_theta)."""
    h = _helpers()
    entry: dict[str, Any] = {}
    ignored, fills = [], {}
    theta = getattr(type(text), "default_theta", 10000.0)
    for source in ("rope_scaling", "rope_parameters"):
        got = h._landing(config_name, text, **{source: dict(PROBE)})
        if not isinstance(got, dict) or h._nested(got):
            continue
        if any(got.get(k) != v for k, v in PROBE.items()):
            ignored.append(source)
            continue
        fill = {k: got[k] for k in ("rope_theta", "partial_rotary_factor") if got.get(k) is not None}
        if fill.get("rope_theta") == theta:
            del fill["rope_theta"]
        fills[source] = fill
    if ignored:
        entry["ignored_sources"] = ignored
    if fills.get("rope_parameters"):
        entry["absent_defaults"] = fills["rope_parameters"]
    if "rope_scaling" in fills and fills["rope_scaling"] != fills.get("rope_parameters", {}):
        entry["absent_defaults_scaling"] = fills["rope_scaling"]
    return entry

