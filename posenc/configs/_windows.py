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
block of C positions up to itself. The encoders of `TWO_SIDED` see a window on both sides instead:
the keys within W positions of the query, before or after (``|q_idx - kv_idx| <= W``, transformers'
``sliding_window_bidirectional_overlay``, masking_utils.py:137-147); the encoders of `CENTRED` see
a window of W tokens centred on the query, (W - 1) // 2 before it and W // 2 after; `LayerRope.window_sides`
says which (`reach` gives the tokens before and after). The flags that open a decoder's masks both
ways (Gemma 3's, Gemma 4's and Step 3p7's ``use_bidirectional_attention``) and a config's own
``is_causal`` are read in `posenc.configs._two_way`; a layer with no window that sees every token,
before and after, has ``window_sides`` ``"both"``.
Unlimited-OCR's `REFERENCE_SLIDING` layers keep the whole prompt in view and slide over the generated
tokens only: read with no window, and a note.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from posenc.configs import _table as table
from posenc.configs._two_way import (CENTRED, IS_CAUSAL_KINDS, PARTS, TWO_SIDED, _json, _opened, bidirectional,
                                     is_causal_notes, not_causal, sides_of_full)
from posenc.configs._two_way import two_sided as two_sided_rule
# read from here by _reader.py and hooks/rope_data.py (the browser's data)
from posenc.configs._two_way import BIDIRECTIONAL as BIDIRECTIONAL
from posenc.configs._two_way import CAUSAL_KEPT as CAUSAL_KEPT
from posenc.configs._two_way import causal_kept_notes as causal_kept_notes

MAX_WINDOW = 2**53

SIDES = ("before", "both", "centred")


def reach(window: int | None, sides: str) -> tuple[int | None, int | None]:
    """How far a query sees: the tokens before it and after it (None: all of them), from a
    `LayerRope`'s ``window`` and ``window_sides`` (the query itself is seen too). ``"before"``: a
    causal window of ``window`` tokens, the query among them; ``"both"``: ``window`` tokens on each
    side (``|q - k| <= window``); ``"centred"``: ``window`` tokens centred on the query, one more
    after it than before when ``window`` is even. No window: every earlier token, or every token.

    Examples:
        >>> from posenc.configs import reach
        >>> reach(4, "before"), reach(4, "both")
        ((3, 0), (4, 4))
        >>> reach(4, "centred"), reach(5, "centred")
        ((1, 2), (2, 2))
        >>> reach(None, "before"), reach(None, "both")
        ((None, 0), (None, None))
    """
    if sides not in SIDES:
        raise ValueError(f"sides must be one of {', '.join(map(repr, SIDES))}, got {sides!r:.40}")
    if window is None:
        if sides == "centred":
            raise ValueError("window must be a positive integer when sides is 'centred', got None")
        return (None, None) if sides == "both" else (None, 0)
    if isinstance(window, bool) or not isinstance(window, int):
        raise TypeError(f"window must be an integer or None, got {type(window).__name__} {window!r:.40}")
    if window < (0 if sides == "both" else 1):
        raise ValueError(f"window must be an integer >= {0 if sides == 'both' else 1} with sides {sides!r} "
                         f"(tokens on each side, or in the window), got {window}")
    if sides == "centred":
        return (window - 1) // 2, window // 2
    return (window, window) if sides == "both" else (window - 1, 0)


# Model types whose modeling code gives its softmax-attention layers names of its own: each name -> the
# kind it runs as. ZAYA's "hybrid" layers are causal attention beside its CCA projection, its
# "hybrid_sliding" ones sliding-window attention: the masks (modeling_zaya.py:740-741), the window
# given to the latter only (:374) and the rotation at both (:402). Falcon-H1's layers are all "hybrid"
# (configuration_falcon_h1.py:133-134): attention, rotated (modeling_falcon_h1.py:212), beside a Mamba
# mixer in the same block (:873-875). Zamba2's "hybrid" layers are a shared attention block (causal,
# modeling_zamba2.py:240) before a Mamba layer (:1017-1060); it rotates only with config['use_mem_rope']
# (:305-307, the table's rope_condition "use_mem_rope"), the whole attention_head_dim (:119, the config's
# head_dim is attention_head_dim: configuration_zamba2.py:71, 2 * hidden_size // num_attention_heads when
# the config gives none, :115). The table generator probes them so.
LAYER_KINDS: dict[str, dict[str, str]] = {"zaya": {"hybrid": "full_attention", "hybrid_sliding": "sliding_attention"},
                                         "falcon_h1": {"hybrid": "full_attention"},
                                         "zamba2": {"hybrid": "full_attention"}}


def layer_kind(model_type: str | None, layer_type: str) -> str:
    """The kind of layer ``layer_type`` runs as (itself, unless `LAYER_KINDS` names it for the model type)."""
    return (LAYER_KINDS.get(model_type or "") or {}).get(layer_type, layer_type)


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


# Model types whose config class fills sliding_window when the config gives none (or null), from
# another key (divided by ``divisor``) or else ``default``: ModernBERT's ``sliding_window`` is a property,
# ``local_attention // 2`` (configuration_modernbert.py:158-167: a given sliding_window sets
# local_attention to twice it), its decoder's is set from it in __post_init__
# (configuration_modernbert_decoder.py:112-113); Dots3's __post_init__ takes the older
# ``sliding_window_size``, else 512 (configuration_dots3_note.py:305-306). ``means`` ends the error.
FILLED: dict[str, dict[str, Any]] = {
    "modernbert": {"key": "local_attention", "default": 128, "divisor": 2,
                   "means": "a local window of local_attention // 2 tokens on each side of a query"},
    "modernbert-decoder": {"key": "local_attention", "default": 128, "divisor": 2,
                           "means": "a window of local_attention // 2 tokens"},
    "dots3_note_text": {"key": "sliding_window_size", "default": 512, "divisor": 1,
                        "means": "the window of the sliding_attention layers when config gives no sliding_window"},
}

# Model types whose config class, given no layer_types, names a layer sliding_attention when the
# window is switched on (this key true and sliding_window set) and the layer is NoPE: SmolLM3
# (configuration_smollm3.py:100-112; its no_rope_layers from no_rope_layer_interval, lines 100-104).
NOPE_LAYERS_SLIDE: dict[str, str] = {"smollm3": "use_sliding_window"}


def nope_sliding_types(config: Mapping[str, Any], model_type: str | None, flags: list[bool] | None) -> list[str] | None:
    """The layer types of `NOPE_LAYERS_SLIDE`'s rule from each layer's NoPE flag (True: it rotates)."""
    key = NOPE_LAYERS_SLIDE.get(model_type or "")
    if key is None or flags is None:
        return None
    on = config.get(key, False)
    if not isinstance(on, bool):
        raise TypeError(f"config[{key!r}] must be true or false, got {type(on).__name__} {on!r:.40}")
    window = on and config.get("sliding_window") is not None
    return ["sliding_attention" if window and not rotates else "full_attention" for rotates in flags]


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


def layer_window(config: Mapping[str, Any], found: Mapping[str, Any], layer_type: str,
                 model_type: str | None = None) -> tuple[int | None, str]:
    """The window (or chunk) the layers of ``layer_type`` attend within (None for the whole context),
    and its sides: ``"before"`` (causal), ``"both"`` (W positions each way; with no window: every
    token, before and after) or ``"centred"`` (`CENTRED`)."""
    # a wrapper read without its text_config: the rules of the text model it builds (its code's masks), but
    # for a PARTS model, whose stack the wrapper's class picks (T5Gemma's decoder: _params.WRAPPER_SETS)
    inner = table.text_model_type(model_type) if model_type is not None else None
    model_type = model_type if inner in PARTS else inner
    kind = layer_kind(model_type, layer_type.removesuffix(":nope"))
    two_sided = two_sided_rule(config, model_type)  # TWO_SIDED's, or T5Gemma's encoder's (PARTS)
    if kind in table.NOT_ATTENTION_LAYER_TYPES:
        return None, "before"
    opened, open_mask = bidirectional(config, model_type), not_causal(config, model_type)
    if open_mask and kind not in IS_CAUSAL_KINDS:
        raise ValueError(f"config['is_causal'] is false, and posenc does not know which mask layers of type "
                         f"{layer_type!r} then get (transformers opens its causal and sliding masks both ways)")
    if kind == "chunked_attention":
        return _size("config['attention_chunk_size']", _given(config, found, "attention_chunk_size")), "before"
    if kind != "sliding_attention" and not two_sided.get("every_layer") and not found.get("window_all_layers"):
        return None, sides_of_full(config, model_type)
    filled = FILLED.get(model_type or "")
    if kind == "sliding_attention" and filled and config.get("sliding_window") is None:
        window: int | None = _filled(config, filled)
    else:
        window = sliding_window(config, found)
    if opened and kind == "sliding_attention":
        if window is None:
            raise ValueError(f"config['sliding_window'] is null while config[{opened['key']!r}] opens the masks both "
                             f"ways: transformers' code fails on null; give the window")
        return _opened(window, opened, open_mask), "both"
    if window is None:
        return None, sides_of_full(config, model_type)
    if open_mask:  # |q - k| <= W (masking_utils.py:137-147)
        return window, "both"
    return window, "both" if two_sided else "centred" if model_type in CENTRED else "before"


def _filled(config: Mapping[str, Any], rule: Mapping[str, Any]) -> int:
    """The window a `FILLED` class sets: ``config[key] // divisor``, or the class's default."""
    key, divisor = rule["key"], rule["divisor"]
    value = config[key] if key in config else rule["default"]  # null: no window transformers could use
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"config[{key!r}] must be an integer, got {type(value).__name__} {value!r:.40}")
    if not divisor <= value <= MAX_WINDOW:
        raise ValueError(f"config[{key!r}] must be an integer >= {divisor} ({rule['means']}), got {value!r}")
    return value // divisor


# Unlimited-OCR's reference sliding-window attention (R-SWA): its mask (create_reference_sliding_window_causal_mask,
# modeling_unlimited_ocr.py:1679-1722) lets a query see every prefill (prompt) token, causally, or else
# one of the last sliding_window tokens; its cache keeps the prefill and a window of generated tokens
# (:1297-1377). Without a cache the prefill is the whole sequence: a plain causal mask.
REFERENCE_SLIDING = "reference_sliding_attention"


def reference_note(config: Mapping[str, Any], found: Mapping[str, Any]) -> str:
    """What `REFERENCE_SLIDING` layers see, with the config's window (which the config class requires)."""
    window = _size("config['sliding_window']", _given(config, found, "sliding_window"))
    if window is None:
        raise ValueError("config['sliding_window'] is null, which this model type's reference_sliding_attention layers "
                         "cannot run without (transformers' config class refuses it): give the window")
    return (f"{REFERENCE_SLIDING} layers (R-SWA) attend to every token of the prompt and to the last {window} "
            f"generated tokens (config['sliding_window']), the query itself among them: the window drops old "
            f"generated tokens only, so a query sees keys at every distance, as read here (no window); one pass over a "
            f"sequence without a cache is plain causal attention")


def window_notes(config: Mapping[str, Any], found: Mapping[str, Any], model_type: str | None = None,
                 plan: Sequence[str] = ()) -> list[str]:
    """What a reader should know about where the window applies (a model-wide window; ``plan``: the
    layer type of each layer, as read) and which way the masks open."""
    return _span_notes(config, found, model_type, plan) + is_causal_notes(config, model_type, plan)


# Why a model-wide window limits every layer (Mistral's, Phi-3's): said by both of _span_notes' notes on it.
_ONE_MASK = "transformers' code for this model type builds one sliding-window mask for the whole model"


def _span_notes(config: Mapping[str, Any], found: Mapping[str, Any], model_type: str | None,
                plan: Sequence[str]) -> list[str]:
    if REFERENCE_SLIDING in plan:
        return [reference_note(config, found)]
    opened, open_mask = bidirectional(config, model_type), not_causal(config, model_type)
    if opened:
        window = sliding_window(config, found)
        halves = (" (the config class halves config['sliding_window'])" if opened["halves"] else
                  f" (|q - k| {'<=' if opened['sets_is_causal'] or open_mask else '<'} config['sliding_window'])")
        sliding = "" if window is None else (f", the sliding layers the {_opened(window, opened, open_mask):,} on "
                                             f"each side{halves}")
        return [f"config[{opened['key']!r}] is {_json(opened['on'])}: every attention layer also sees the tokens after the "
                f"query, the full layers all of them{sliding}"]
    if open_mask:
        return []
    if (TWO_SIDED.get(model_type or "") or {}).get("every_layer"):
        window = sliding_window(config, found)
        return [] if window is None else [
            f"config['sliding_window'] ({window}) limits every attention layer on both sides of each query (|q - k| "
            f"<= {window}): transformers' code for this model type builds one bidirectional sliding-window mask for "
            f"the whole model"]
    switch, types = NOPE_LAYERS_SLIDE.get(model_type or ""), config.get("layer_types")
    if (switch and not config.get(switch) and isinstance(types, (list, tuple)) and "sliding_attention" in types
            and config.get("sliding_window") is not None):  # SmolLM3: sliding layers named, the switch off
        return [f"config[{switch!r}] is off while config['layer_types'] names sliding_attention layers: transformers' "
                f"eager and sdpa attention apply config['sliding_window'] to them through the mask (as read here), "
                f"its flash attention does not (the layer passes the window only with {switch!r} on: "
                f"modeling_smollm3.py:193-197 against 401-403)"]
    window = sliding_window(config, found) if found.get("window_all_layers") else None
    if window is None:
        return []
    context = config.get("max_position_embeddings")
    if type(context) is int and window >= context:  # Phi-3.5 mini: 262144 against 131072, nothing masked
        return [f"config['sliding_window'] ({window}) would limit every attention layer ({_ONE_MASK}), but it reaches "
                f"across the whole declared context (config['max_position_embeddings'] = {context}): no effect within it"]
    return [f"config['sliding_window'] ({window}) limits every attention layer: {_ONE_MASK}"]
