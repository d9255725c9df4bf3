"""Positions in the engines people run models with: their names for RoPE's layouts and scaling rules,
what each supports, and where one computes a config otherwise than ``transformers`` does.

This module is data, read by the chapter "Positions in the engines you run" (its support matrix is
`support_table`) and by `posenc.inspect` (`layout_flags`, `known_disagreements`). Every entry says
how it was established:

* ``"run"``: checked by running the engine here, beside posenc, in ``tests/engines/`` (the test is
  named); the engine is pinned in ``requirements.lock`` or ``tools/engines-nodeps.txt``;
* ``"read"``: read in the engine's source (the locator is given), not run here (vLLM and SGLang need
  a GPU build; llama.cpp's converter and server are not packaged; ggml itself runs, through
  ``ggml-python``).

posenc's side of every comparison is `posenc.rope_scaling` (which agrees with transformers'
``modeling_rope_utils``), `posenc.rope_nd`, `posenc.alibi` and `posenc.temperature`.

Inside: the tables (engines, features, support, disagreements, triggers) live in
``_engine_tables.py``; this module gives them and the functions that read them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from posenc._checks import check_choice
from posenc._engine_tables import (
    DISAGREEMENTS,
    ENGINES,
    FEATURES,
    IMROPE_MODEL_TYPES,
    LLAMA3_MODEL_TYPES,
    PAGE,
    SUPPORT,
    TRIGGERS,
    Disagreement,
    Engine,
    Trigger,
)

__all__ = ["DISAGREEMENTS", "ENGINES", "FEATURES", "IMROPE_MODEL_TYPES", "LLAMA3_MODEL_TYPES", "PAGE", "SUPPORT", "TRIGGERS", "Disagreement",
           "Engine", "Trigger", "engine_data", "engine_warnings", "known_disagreements", "layout_flags",
           "support_table", "triggered"]

_STATUS_WORDS = {"same": "yes", "differs": "differs", "half": "half only",
                 "interleaved": "interleaved only", "text": "text only", "read": "yes (read)", "none": "no"}


def support_table() -> tuple[list[str], list[list[str]]]:
    """The support matrix: one row per feature, one column per engine (``[[table ...]]`` renders it).

    "yes": agrees with posenc (and transformers) where run here; "differs": see the disagreements;
    "half only", "interleaved only": one layout
    (agrees); "text only": text tokens only; "yes (read)": supported, read in its source, not run;
    "no": not supported; "?": not checked.
    """
    header = ["Feature", *(engine.name for engine in ENGINES.values())]
    rows = [[label, *(_STATUS_WORDS[SUPPORT[(key, feature)][0]] if (key, feature) in SUPPORT else "?"
                      for key in ENGINES)]
            for feature, label in FEATURES.items()]
    return header, rows


def layout_flags(layout: str) -> dict[str, str]:
    """Each engine's spelling of a layout, ``"half"`` or ``"interleaved"`` ("—": it has no such layout).

    Examples:
        >>> layout_flags("interleaved")["mlx-lm"]
        'traditional=True'
    """
    layout = check_choice("layout", layout, ("half", "interleaved"))
    return {key: getattr(engine, layout) for key, engine in ENGINES.items()}


def known_disagreements(feature: str) -> list[Disagreement]:
    """The disagreements with transformers known for a feature (a key of `FEATURES`, e.g. a scaling type).

    Examples:
        >>> [d.engine for d in known_disagreements("longrope")]
        ['mlx-lm', 'llama.cpp']
    """
    feature = check_choice("feature", feature, tuple(FEATURES))
    return [d for d in DISAGREEMENTS if d.feature == feature]


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON values are: a bool equals only a bool (Python's False == 0 does not count)."""
    return isinstance(a, bool) == isinstance(b, bool) and a == b


def _fires(trigger: Trigger, settings: Mapping[str, Any]) -> bool:
    if trigger.key not in settings:
        return False
    value = settings[trigger.key]
    if trigger.test == "is":
        return _same(value, trigger.value)
    if trigger.test == "in":
        return any(_same(value, v) for v in trigger.value)
    if trigger.test == "given":
        return True
    if trigger.test == "not":
        return not _same(value, trigger.value)
    if trigger.test == "differs":
        return trigger.other is not None and trigger.other in settings and not _same(value, settings[trigger.other])
    other = settings.get(trigger.other) if trigger.other is not None else None
    return not _same(value, trigger.value) and (other is None or other is False or other == 0)  # "alone"


def triggered(model_type: str | None, scalings: Iterable[Mapping[str, Any] | None]) -> list[tuple[Trigger, Any]]:
    """The triggers a config meets, each once, with the value that fired it.

    Args:
        model_type: the model type as read (`read_config`'s ``model_type``).
        scalings: the ``scaling`` dicts of the rotating layers as read (``None``: no scaling).

    Examples:
        >>> [(t.engine, t.key, v)
        ...  for t, v in triggered("llama", [{"type": "dynamic", "factor": 2.0}])]
        [('keras-hub', 'rope_type', 'dynamic')]
    """
    settings: list[dict[str, Any]] = [{**s, "rope_type": s.get("type")} for s in _scalings(model_type, scalings) if s]
    found: list[tuple[Trigger, Any]] = []
    for trigger in TRIGGERS:
        if trigger.model_types is not None and model_type not in trigger.model_types:
            continue
        pools: list[dict[str, Any]] = ([s for s in settings if s["rope_type"] == trigger.rope_type]
                                       if trigger.rope_type is not None else [{"model_type": model_type}])
        hit = next((pool for pool in pools if _fires(trigger, pool)), None)
        if hit is not None:
            found.append((trigger, hit[trigger.key]))
    return found


def _scalings(model_type: Any, scalings: Any) -> list[Mapping[str, Any] | None]:
    """The caller's arguments checked at the boundary: a model type (or None) and scaling dicts (or None)."""
    if model_type is not None and not isinstance(model_type, str):
        raise TypeError(f"model_type must be a string or None, got {model_type!r}")
    if isinstance(scalings, (str, bytes, Mapping)) or not isinstance(scalings, Iterable):
        raise TypeError(f"scalings must be a list of scaling dicts (or None per layer), got {scalings!r}")
    items = list(scalings)
    for item in items:
        if item is not None and not isinstance(item, Mapping):
            raise TypeError(f"scalings must hold scaling dicts or None, got {item!r}")
    return items


def _spell(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else repr(value) if isinstance(value, str) else f"{value}"


def engine_warnings(model_type: str | None, scalings: Iterable[Mapping[str, Any] | None]) -> list[str]:
    """One warning per known disagreement the config meets: the engine, the setting(s) that trigger it
    and the section of the chapter that shows it (see `triggered`)."""
    by_disagreement: dict[tuple[str, str], list[str]] = {}
    for trigger, value in triggered(model_type, scalings):
        shown = f"{trigger.key} {_spell(value)}"
        if trigger.test == "differs":
            shown = f"{trigger.key} differs from {trigger.other}"
        elif trigger.test == "alone":
            shown += f" without {trigger.other}"
        by_disagreement.setdefault((trigger.engine, trigger.feature), []).append(shown)
    lines = []
    for d in DISAGREEMENTS:
        keys = by_disagreement.get((d.engine, d.feature))
        if keys:
            what = "; ".join(keys)
            lines.append(f"{ENGINES[d.engine].name} computes this config otherwise ({FEATURES[d.feature]}: {what}): "
                         f"{d.summary} (see {PAGE}#{d.section})")
    return lines


def engine_data() -> dict[str, Any]:
    """What a port of the inspector needs, as JSON-ready data: engine names and layout spellings, the
    disagreements (with their page anchors) and the triggers (`Trigger`'s fields, by name)."""
    return {"page": PAGE,
            "engines": {key: {"name": e.name, "half": e.half, "interleaved": e.interleaved}
                        for key, e in ENGINES.items()},
            "features": dict(FEATURES),
            "disagreements": [{"engine": d.engine, "feature": d.feature, "summary": d.summary, "section": d.section,
                               "checked": d.checked} for d in DISAGREEMENTS],
            "triggers": [{**t._asdict(), "value": list(t.value) if isinstance(t.value, tuple) else t.value,
                          "model_types": list(t.model_types) if t.model_types is not None else None}
                         for t in TRIGGERS]}
