"""Probes of the table generator (``derive.py``): where a model type's attention is limited to a window.

Three things decide which layers attend within ``sliding_window`` tokens, and each is derived from
the pinned transformers, not from model names:

* **the whole model** (``window_all_layers``): the model's forward builds one mask for every layer,
  a sliding-window mask whenever ``config.sliding_window`` is set (Mistral, Mixtral, StarCoder2,
  Phi-3, Qwen3-MoE: ``create_causal_mask if self.config.sliding_window is None else
  create_sliding_window_causal_mask``), read from the model's source;
* **a switch** (``window_switch``): a boolean key without which the config class replaces the window
  (Qwen2: ``sliding_window if use_sliding_window else None``; Qwen2-MoE: ``... else 0``), found by
  building the class with each boolean key flipped and a probe window;
* **the windowed layers** (``window_layers``): a count key that decides which layers the class names
  ``sliding_attention`` once the window is on (Qwen2, Qwen3: layer ``i >= max_window_layers``;
  Qwen2-MoE: every other layer ``i < max_window_layers``), fitted on the built class at several layer
  counts and key values.

Layer types the class names ``sliding_attention`` / ``chunked_attention`` take ``sliding_window`` /
``attention_chunk_size``; `tests/test_rope_windows.py` checks every reading against the masks
transformers' models build.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

_PROBE_WINDOW = 777
_ALL_LAYERS = re.compile(r"create_causal_mask\s+if\s+self\.config\.sliding_window\s+is\s+None\s+else\s+"
                         r"create_sliding_window_causal_mask")


def _built(config_name: str, text: Any, **kwargs: Any) -> Any:
    from tools.rope_model_types import derive
    return derive._built(config_name, text, **kwargs)


def _fields(text: Any) -> dict[str, Any]:
    cls = type(text)
    if not dataclasses.is_dataclass(cls):
        return {}
    return {f.name: f.default for f in dataclasses.fields(cls) if f.default is not dataclasses.MISSING}


def _switch(config_name: str, text: Any) -> dict[str, Any] | None:
    """The boolean key without which the class drops the window, and what it puts there instead."""
    for key, default in _fields(text).items():
        if not isinstance(default, bool) or "window" not in key:
            continue
        on = _built(config_name, text, sliding_window=_PROBE_WINDOW, **{key: True})
        off = _built(config_name, text, sliding_window=_PROBE_WINDOW, **{key: False})
        got_on, got_off = getattr(on, "sliding_window", None), getattr(off, "sliding_window", None)
        if got_on == _PROBE_WINDOW and got_off != _PROBE_WINDOW:
            return {"key": key, "default": default, "off": got_off}
    return None


def _rule(n: int, m: int, spec: dict[str, Any]) -> list[str]:
    below = spec["compare"] == "<"
    return ["sliding_attention" if ((i < m) if below else (i >= m)) and (i + spec["offset"]) % spec["k"] == 0
            else "full_attention" for i in range(n)]


def _layers_rule(config_name: str, text: Any, switch: dict[str, Any] | None) -> dict[str, Any] | None:
    """Which layers the class names sliding once the window is on: a count key ``m`` and a rule
    "layer i < m (or i >= m), every k-th", checked at several layer counts and values of ``m``."""
    on = {switch["key"]: True} if switch else {}
    for key, default in _fields(text).items():
        if not isinstance(default, int) or isinstance(default, bool) or key in ("num_hidden_layers", "sliding_window"):
            continue
        if "window" not in key:
            continue
        built = {}
        for n in (5, 12):
            for m in (0, 3, 6, n):
                got = _built(config_name, text, num_hidden_layers=n, sliding_window=_PROBE_WINDOW, **on, **{key: m})
                types = getattr(got, "layer_types", None)
                if not isinstance(types, list):
                    break
                built[(n, m)] = list(types)
        if len(built) < 8:
            continue
        for compare in (">=", "<"):
            for k, offset in ((1, 0), (2, 0), (2, 1)):
                spec = {"key": key, "default": default, "compare": compare, "k": k, "offset": offset}
                if all(_rule(n, m, spec) == types for (n, m), types in built.items()):
                    return spec
    return None


def windows(config_name: str, text: Any, source: str) -> dict[str, Any]:
    """The table fields of one model type that say which layers attend within a window."""
    entry: dict[str, Any] = {}
    if _ALL_LAYERS.search(source):
        entry["window_all_layers"] = True
    if "sliding_window" in _fields(text):
        switch = _switch(config_name, text)
        if switch is not None:
            entry["window_switch"] = switch
        rule = _layers_rule(config_name, text, switch)
        if rule is not None:
            entry["window_layers"] = rule
    return entry
