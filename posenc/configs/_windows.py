"""Which layers of a model attend within a window, as transformers' code decides it.

The helpers of `posenc.configs._reader` for a layer's attention span. Three table fields (derived by
``tools/rope_model_types/windows.py`` from the pinned transformers) say where a model type's window
applies: ``window_all_layers`` (one sliding-window mask for every layer: Mistral, Mixtral,
StarCoder2, Phi-3), ``window_switch`` (a boolean key without which the config class drops the
window: Qwen2's ``use_sliding_window``) and ``window_layers`` (the layers the class names
``sliding_attention`` once the window is on: Qwen2's ``max_window_layers``). Layers of type
``sliding_attention`` take ``sliding_window``, ``chunked_attention`` ``attention_chunk_size``.

A window of W tokens: a query attends to itself and the W - 1 tokens before it (transformers'
``sliding_window_overlay``: ``kv_idx > q_idx - W``); a chunk of C tokens: to the tokens of its own
block of C positions up to itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from posenc.configs import _table as table

MAX_WINDOW = 2**53


def _given(config: Mapping[str, Any], found: Mapping[str, Any], key: str) -> Any:
    """``config[key]`` as the config gives it (an explicit null stays None), else the class default."""
    if key in config:
        return config[key]
    mapped = found.get("attribute_map", {}).get(key)
    if mapped is not None and mapped in config:
        return config[mapped]
    return found.get("field_defaults", {}).get(key)


def _size(name: str, value: Any) -> int | None:
    """A window or chunk size: a positive integer, or None (no window)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be a positive integer or null, got {type(value).__name__} {value!r:.40}")
    if not 1 <= value <= MAX_WINDOW:
        raise ValueError(f"{name} must be a positive integer or null (a window of that many tokens), got {value!r}; "
                         f"transformers builds a mask from it without checking (a window of 0 or less leaves a "
                         f"query nothing to attend to)")
    return value


def sliding_window(config: Mapping[str, Any], found: Mapping[str, Any]) -> int | None:
    """The window the model's attention receives after the config class's switch (None: no window)."""
    window = _size("config['sliding_window']", _given(config, found, "sliding_window"))
    switch = found.get("window_switch")
    if not switch:
        return window
    key = switch["key"]
    on = config[key] if config.get(key) is not None else switch["default"]
    if not isinstance(on, bool):
        raise TypeError(f"config[{key!r}] must be true or false, got {type(on).__name__} {on!r:.40}")
    if on and window is None:
        raise ValueError(f"config[{key!r}] is true but config['sliding_window'] is null: no window to apply "
                         f"(transformers then applies none, silently); give the window or set {key!r} to false")
    return window if on else None


def window_types(config: Mapping[str, Any], found: Mapping[str, Any], layers: int) -> list[str] | None:
    """The layer types the config class names from ``window_layers`` (Qwen2's ``max_window_layers``)
    when the config gives no ``layer_types``; None where the model type has no such rule."""
    rule = found.get("window_layers")
    if not rule or not layers:
        return None
    window = sliding_window(config, found)
    key = rule["key"]
    count = config[key] if config.get(key) is not None else rule["default"]
    if isinstance(count, bool) or not isinstance(count, int):
        raise TypeError(f"config[{key!r}] must be an integer, got {type(count).__name__} {count!r:.40}")
    if count < 0:
        raise ValueError(f"config[{key!r}] must be an integer >= 0 (a number of layers), got {count}")
    if window is None:
        return ["full_attention"] * layers
    below = rule["compare"] == "<"
    types = ["sliding_attention" if ((i < count) if below else (i >= count)) and (i + rule["offset"]) % rule["k"] == 0
             else "full_attention" for i in range(layers)]
    if "sliding_attention" not in types and found.get("window_switch"):  # turned on, and on no layer
        raise ValueError(f"config[{key!r}] is {count} with {layers} layers, so no layer gets the sliding window the "
                         f"config turns on (transformers silently uses full attention everywhere); lower {key!r} "
                         f"or turn the window off")
    return types


def layer_window(config: Mapping[str, Any], found: Mapping[str, Any], layer_type: str) -> int | None:
    """The window (or chunk) the layers of ``layer_type`` attend within, None for the whole context."""
    kind = layer_type.removesuffix(":nope")
    if kind in table.NOT_ATTENTION_LAYER_TYPES:
        return None
    if kind == "chunked_attention":
        return _size("config['attention_chunk_size']", _given(config, found, "attention_chunk_size"))
    if kind == "sliding_attention" or found.get("window_all_layers"):
        return sliding_window(config, found)
    return None


def window_notes(config: Mapping[str, Any], found: Mapping[str, Any]) -> list[str]:
    """What a reader should know about where the window applies (a model-wide window)."""
    window = sliding_window(config, found) if found.get("window_all_layers") else None
    if window is None:
        return []
    return [f"config['sliding_window'] ({window}) limits every attention layer: transformers' code for this model "
            f"type builds one sliding-window mask for the whole model"]
