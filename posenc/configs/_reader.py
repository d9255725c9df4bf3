"""Read a model's RoPE settings from its config, as Hugging Face ``transformers`` reads them.

`read_config` turns a ``config.json`` (a dict, or a ``transformers`` config object) into what each
kind of layer does with positions: whether it rotates at all, the head and rotated widths, the
layout, the base, the scaling rule, the attention factor, and what acts outside the rotation (a
query temperature, DeepSeek's softmax scale). `from_config` gives one layer type's settings as the
keyword arguments of `posenc.rope.RotaryEmbedding`.

What differs between model types (the layout, where per-layer bases and scaling live, renamed rope
types, ignored keys, layer patterns, the class defaults a config may leave out) comes from a table
derived from the pinned ``transformers``' own code for every model type it registers
(``posenc/configs/model_types.json``, its entries typed in `posenc.configs.schema`); the tests compare the result with transformers' rotary modules.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

# No torch on this path: the reader, `posenc-inspect` and the site's build read configs without it.
from posenc._checks import check_choice, check_int
from posenc.configs import _table as table
from posenc.configs import _windows as windows
from posenc.configs._class_rope import class_rope, class_rope_types, indexer_fit
from posenc.configs._divergences import divergence_notes
from posenc.configs._layer import (
    LAYOUTS,
    MAX_LENGTH,
    ROPE_TYPES,
    _head_dim,
    defaults_note,
    _layout,
    _length,
    _mrope_fit,
    _rotary_width,
    _scaling,
    _softmax_scale,
    _temperature,
)
from posenc.configs._params import _as_mapping, _parameters, _text_key, _text_part, refuse_ignored
from posenc.configs._plan import (class_layer_types, class_length, class_names, layer_plan, legacy_layer_key,
                                  nope_note)
from posenc.configs._refusals import class_switches, refuse, switched_off, theta_only
from posenc.configs._schema import ModelTypeEntry
from posenc.configs._two_way import part_notes
from posenc.configs.vision import ENCODER_MODEL_TYPES
from posenc.rope_scaling import _real, rope_attention_scaling

__all__ = ["ROPE_TYPES", "ConfigRope", "LayerRope", "from_config", "query_temperature", "read_config"]


@dataclasses.dataclass(frozen=True)
class LayerRope:
    """What one kind of layer does with positions.

    Attributes:
        layer_type: the config's name for these layers (``"full_attention"``, ...; ``":nope"`` added
            to the layers of a type that do not rotate when others of it do).
        rotates: whether these layers rotate q and k at all (False: NoPE, or not attention; None:
            a layer type posenc does not know).
        dim, rotary_dim: the head width that carries positions and the rotated part of it.
        layout, base, scaling: as `posenc.rope.RotaryEmbedding` takes them (scaling as a dict).
        attention_factor: the factor on cos and sin (`posenc.rope.rope_attention_scaling`).
        temperature: a factor on the queries that depends on the position, applied after the
            rotation, as a dict (``rule`` and its settings; see `read_config`), or None.
        softmax_scale: a factor on the usual ``1/sqrt(head_dim)`` of the attention logits (DeepSeek's
            YaRN ``mscale``), 1.0 for most models.
        window: the sliding window or chunk these layers attend within, or None, as transformers'
            code applies it (`posenc.configs._windows`): a window of W tokens lets a query see itself and
            the W - 1 tokens before it; a chunk (``chunked_attention`` layers) of C tokens, the tokens
            of its own block of C positions up to itself.
        layers: the indices of the layers of this kind (empty when the config gives no count).
        note: anything else a reader of the config should know about these layers.
        window_sides: how a window of W reaches: ``"before"`` (a causal window, as above),
            ``"both"`` (an encoder's two-sided window: a query sees the tokens within W positions on
            each side, ``|q - k| <= W``, transformers' bidirectional sliding-window mask; ModernBERT's
            ``local_attention`` of 128 is a window of 64 each way) or ``"centred"`` (W tokens in all,
            the query among them: ``(W - 1) // 2`` before it and ``W // 2`` after, T5Gemma2's encoder;
            a window of 4 sees 1 token before and 2 after). `posenc.configs._windows.reach` gives the
            two counts for each. A layer with no window is ``"both"`` where it sees every token before
            and after (an encoder's full layers, a decoder whose masks a flag or the config's own
            ``is_causal`` false opens both ways: `posenc.configs._two_way`), else ``"before"``.
    """

    layer_type: str
    rotates: bool | None
    dim: int | None = None
    rotary_dim: int | None = None
    layout: str | None = None
    base: float | None = None
    scaling: dict[str, Any] | None = None
    attention_factor: float = 1.0
    temperature: dict[str, Any] | None = None
    softmax_scale: float = 1.0
    window: int | None = None
    layers: tuple[int, ...] = ()
    note: str | None = None
    window_sides: str = "before"

    def rotary_kwargs(self) -> dict[str, Any]:
        """The keyword arguments of `posenc.rope.RotaryEmbedding` for these layers."""
        if not self.rotates or self.dim is None:
            raise ValueError(f"layers of type {self.layer_type!r} use no RoPE"
                             + (f" ({self.note})" if self.note else ""))
        return {"dim": self.dim, "base": self.base, "layout": self.layout, "scaling": self.scaling,
                "rotary_dim": None if self.rotary_dim == self.dim else self.rotary_dim}


@dataclasses.dataclass(frozen=True)
class ConfigRope:
    """A model's positions, read from its config: one `LayerRope` per kind of layer.

    Attributes:
        model_type: the config's ``model_type`` (None if it has none).
        layers: `LayerRope` by layer type, in the order the layers first use them.
        pattern: the layer type of each layer, in order (empty when the config gives no count).
        max_position_embeddings: the context the config declares.
        original_max_position_embeddings: the trained context a scaling rule extends (None without one).
        notes: what posenc could not read from transformers' code for this model type.
        sinks: whether the model type's attention adds a learned sink logit per head (gpt-oss).
    """

    model_type: str | None
    layers: dict[str, LayerRope]
    pattern: tuple[str, ...] = ()
    max_position_embeddings: int | None = None
    original_max_position_embeddings: int | None = None
    notes: tuple[str, ...] = ()
    sinks: bool = False


def query_temperature(temperature: Mapping[str, Any] | None, position: int) -> float:
    """The factor `LayerRope.temperature` puts on the query at ``position`` (0-based).

    * ``llama_4_scaling_beta`` (Ministral 3, Mistral 4): ``1 + beta * ln(1 + floor(position / length))``;
    * ``llama4_nope_tuning`` (Llama 4's NoPE layers): ``attn_scale * ln(1 + floor((position + 1) /
      floor_scale)) + 1``;
    * None: 1.

    Both are `posenc.temperature.attention_temperature` (offset 0 and 1) at one position, computed
    here without torch (``tests/test_temperature.py`` checks the two agree).

    Examples:
        >>> t = {"rule": "llama_4_scaling_beta", "beta": 0.1, "length": 16384}
        >>> [round(query_temperature(t, p), 4) for p in (0, 16383, 16384, 100000)]
        [1.0, 1.0, 1.0693, 1.1946]
    """
    position = check_int("position", position, minimum=0, maximum=MAX_LENGTH)
    if temperature is None:
        return 1.0
    if not isinstance(temperature, Mapping):
        raise TypeError(f"temperature must be a dict (LayerRope.temperature) or None, got {type(temperature).__name__}")
    rule = check_choice("temperature['rule']", temperature.get("rule"), ("llama_4_scaling_beta", "llama4_nope_tuning"))
    if rule == "llama_4_scaling_beta":
        beta = _real("temperature['beta']", temperature.get("beta"), minimum=0.0, maximum=1e6)
        length = check_int("temperature['length']", temperature.get("length"), minimum=1, maximum=MAX_LENGTH)
        offset = 0
    else:  # Llama 4's NoPE layers: the same formula, one position later
        beta = _real("temperature['attn_scale']", temperature.get("attn_scale"), minimum=0.0, maximum=1e6)
        length = check_int("temperature['floor_scale']", temperature.get("floor_scale"), minimum=1, maximum=MAX_LENGTH)
        offset = 1
    # the scalar form of posenc.temperature's formula: an exact integer floor, then log1p in float64
    return 1.0 + beta * math.log1p((position + offset) // length)


# ---------------------------------------------------------------- the layers
def _rotates(config: Mapping[str, Any], found: ModelTypeEntry, layer_type: str) -> tuple[bool | None, str | None]:
    conditions = found.get("rope_condition", ())
    if layer_type in table.NOT_ATTENTION_LAYER_TYPES:
        order = table.NOT_ATTENTION_ORDER[layer_type]
        return False, f"{layer_type} layers are not attention and take no rotation: {order}"
    if "sliding_only" in conditions and layer_type != "sliding_attention":
        return False, "only the sliding-window layers of this model type rotate (NoPE)"
    if ("sliding_or_no_window" in conditions and layer_type != "sliding_attention"
            and table.field(found, config, "sliding_window") is not None):
        return False, "with a sliding window, only the sliding-window layers of this model type rotate (NoPE)"
    if layer_type not in table.ATTENTION_LAYER_TYPES:
        return None, f"posenc does not know what layers of type {layer_type!r} do"
    if "use_mem_rope" in conditions:  # Zamba2: `if self.config.use_mem_rope:` around the rotation
        # null is refused too: the class's strict field takes only true or false
        on = config["use_mem_rope"] if "use_mem_rope" in config else table.field(found, config, "use_mem_rope")
        if not isinstance(on, bool):
            raise TypeError(f"config['use_mem_rope'] must be true or false, got {type(on).__name__} {on!r:.40}")
        if not on:
            return False, "config['use_mem_rope'] is false: this model type's attention does not rotate (NoPE)"
    if (off := switched_off(config, found)) is not None:  # ESM's position_embedding_type
        return False, off
    return True, None


def _layer(config: Mapping[str, Any], found: ModelTypeEntry, model_type: str | None, layer_type: str,
           params: dict[str, Any] | None, rotates: bool | None, note: str | None, layout: str | None,
           layers: tuple[int, ...], defaulted: list[str] | None = None) -> LayerRope:
    window, sides = windows.layer_window(config, found, layer_type, model_type)
    if rotates and params is None:
        rotates, note = False, f"config['rope_parameters'][{layer_type!r}] is None (NoPE)"
    if not rotates or params is None:
        return LayerRope(layer_type, rotates, temperature=_temperature(config, found, params, False),
                         window=window, layers=layers, note=note, window_sides=sides)
    head_dim = _head_dim(config, found, layer_type, defaulted)
    proportional = params["rope_type"] == "proportional"
    width = head_dim if proportional else _rotary_width(config, found, params, head_dim, model_type, layer_type)
    _mrope_fit(found, params, width, model_type)  # GLM-4V's and Qwen2-VL's split fails on sections that do not fit
    base = _real("rope_theta", params["rope_theta"], positive=True)
    scaling = _scaling(config, found, params, head_dim)
    return LayerRope(layer_type, True, head_dim, width, layout, base, scaling,
                     rope_attention_scaling(scaling), _temperature(config, found, params, True),
                     _softmax_scale(found, params), window, layers, note, sides)


def _site_notes(model_type: str | None, found: ModelTypeEntry, layout: str) -> list[str]:
    """Every rotary site of a layer that rotates at more than one (posenc.configs.sites.site_notes)."""
    from posenc.configs.sites import site_notes  # sites imports this module
    return site_notes(model_type, found, layout)


def _null_is_nope(found: ModelTypeEntry) -> bool:
    # Beam: its config class sets rope_parameters[layer_type] = None for NoPE layer types, and its model
    # passes those layers no position embeddings; other classes fill a None in or fail on it.
    return any(value is None for value in (found.get("default_rope_parameters") or {}).values())


#: The encoder's key beside a decoder's (T5Gemma, T5Gemma 2; Dia).
_ENCODER_KEYS = {"decoder": "encoder", "decoder_config": "encoder_config"}


def _part_notes(config: Mapping[str, Any]) -> list[str]:
    """Which part of an encoder-decoder config was read: a whole T5Gemma 2 config is read as its
    decoder, and its encoder (a window reaching both ways) only when given alone."""
    key = _text_key(config)
    if key in (None, "text_config"):
        return []
    encoder = _ENCODER_KEYS.get(str(key))
    other = (f"; its encoder, config[{encoder!r}], is read when given on its own"
             if encoder and isinstance(config.get(encoder), Mapping) else "")
    read = f"read: config[{key!r}], the language model transformers' get_text_config(decoder=True) returns"
    return [read + other]


def read_config(config: Mapping[str, Any], *, layout: str | None = None) -> ConfigRope:
    """What every kind of layer of a model does with positions, read from its config.

    Reads the keys transformers reads: ``rope_parameters`` (or the older ``rope_scaling``; both are
    merged and must agree), ``rope_theta``, ``partial_rotary_factor`` (GPT-NeoX: ``rotary_pct``,
    ``rotary_emb_base``; GPT-J: ``rotary_dim``), ``head_dim`` (DeepSeek's ``qk_rope_head_dim`` first;
    else the config class's default, else ``hidden_size / num_attention_heads``), ``layer_types``,
    ``no_rope_layers``, ``max_position_embeddings``, ``original_max_position_embeddings``, and
    whatever the model type's config class reads instead (Gemma 3's ``rope_local_base_freq``,
    ModernBERT's ``global_rope_theta`` and ``local_rope_theta``, a flat ``rope_scaling`` on the
    layer types the class puts it on, renamed rope types such as Phi-3's ``"su"``), completing what
    the config leaves out with the class's defaults. The layout is the one transformers' code for
    the model type uses (``rope_interleave`` where it reads that flag).

    What acts outside the rotation is returned beside it: ``temperature`` is a factor on the
    queries by position (`query_temperature` evaluates it), ``softmax_scale`` a factor on the
    logits' ``1/sqrt(head_dim)``; NoPE layers and layers that are not attention have
    ``rotates=False``.

    Unknown RoPE keys, two places that disagree, and impossible values are errors. A model type
    whose layout posenc cannot derive (or a config with no ``model_type``) needs ``layout``.

    Args:
        config: a model's ``config.json`` as a dict, or a ``transformers`` config object.
        layout: ``"half"`` or ``"interleaved"``, needed only where the model type does not say.

    Examples:
        >>> rope = read_config({"model_type": "llama", "hidden_size": 4096,
        ...                     "num_attention_heads": 32, "num_hidden_layers": 32,
        ...                     "rope_theta": 500000.0})
        >>> layer = rope.layers["full_attention"]
        >>> layer.rotates, layer.dim, layer.base, layer.layout, len(layer.layers)
        (True, 128, 500000.0, 'half', 32)
    """
    config = _as_mapping(config)
    given = None if layout is None else check_choice("layout", layout, LAYOUTS)
    if config.get("model_type") in ENCODER_MODEL_TYPES:  # rotates over patches: posenc.configs.vision reads it
        # first: SAM 3's own type, not its CLIP text model's (whose keys its class ignores at the top)
        raise ValueError(f"model type {config['model_type']!r}: a vision or video encoder that rotates over patches "
                         f"in 2-D or 3-D; posenc.configs.vision.read_vision_config reads it (axes, sections, "
                         f"coordinates, base, layout); read_config and from_config read 1-D RoPE")
    refuse_ignored(config, lambda kept: _read(kept, given))  # a wrapper without its text part: what its class drops
    return _read(config, given)


def _read(config: Mapping[str, Any], given: str | None) -> ConfigRope:
    """`read_config` after its checks of the whole config (``given``: the layout passed, checked)."""
    model_type, text = _text_part(config)
    found = table.entry(model_type) if model_type is not None else None
    found = found or {}
    if model_type == "deepseek_v4":  # rope parameters keyed by rope kind (main, compress), not by layer type
        from posenc.configs.sites import read_deepseek_v4  # sites imports this module
        return read_deepseek_v4(text, layout=given)
    found = class_switches(found, model_type)  # Granite 4's position_embedding_type
    refuse(config, text, found, model_type)  # what the code does, where posenc does not read it
    text = legacy_layer_key(text, model_type)  # Granite 4's layers_block_type
    text, found = class_layer_types(text, found, model_type)  # Dots3's legacy layer names
    text = class_length(text, model_type)  # Zamba2's use_long_context
    text = class_names(text, found, model_type)  # HunYuan-VL's attention_head_dim for head_dim
    text = class_rope(text, model_type)  # HunYuan-VL's xdrope_section and rope type 'xdrope'
    class_rope_types(text, model_type)  # Phi-3's, Cosmos3 Edge's and PhiMoE's refused rope types
    given = _layout(text, found, model_type, given)  # first: without it nothing below can be trusted
    notes = list(found.get("notes", ()))
    text = theta_only(text, found, notes)  # ESM: rope_parameters and rope_scaling are not read
    params = _parameters(text, found, [t for t in table.get(found, text, "layer_types") or [] if isinstance(t, str)],
                         notes)
    types, flags = layer_plan(text, found, model_type, params)
    kinds: dict[str, list[int]] = {}
    for index, (layer_type, flag) in enumerate(zip(types, flags)):
        kinds.setdefault(layer_type if flag else f"{layer_type}:nope", []).append(index)
    if not kinds:
        kinds = {k: [] for k in params if k is not None} or {"full_attention": []}
    # a layer type whose layers all skip RoPE keeps its own name
    kinds = {(name.removesuffix(":nope") if name.removesuffix(":nope") not in kinds else name): indices
             for name, indices in kinds.items()}
    result: dict[str, LayerRope] = {}
    defaulted: list[str] = []  # head sizes taken from the class defaults
    for name, indices in kinds.items():
        layer_type = name.removesuffix(":nope")
        rotates, note = _rotates(text, found, windows.layer_kind(model_type, layer_type))
        if name.endswith(":nope") or (indices and not flags[indices[0]]):
            rotates, note = False, nope_note(text, model_type)
        if rotates and layer_type not in params and None not in params:
            raise ValueError(f"config['rope_parameters'] has no entry for layer type {layer_type!r} (it has "
                             f"{', '.join(map(repr, params))})")
        kind_params = params.get(layer_type, params.get(None))
        if rotates and kind_params is None and found and not _null_is_nope(found):
            raise ValueError(f"config['rope_parameters'][{layer_type!r}] is None, which transformers' code for model "
                             f"type {model_type!r} does not run as layers without RoPE (only model types whose "
                             f"config class marks NoPE layers with None do, such as 'beam'); give its parameters")
        result[name] = _layer(text, found, model_type, name, kind_params, rotates, note, given, tuple(indices),
                              defaulted)
    indexer_fit(text, model_type, [layer.rotary_dim for layer in result.values() if layer.rotary_dim])  # Qwen4-Exp
    originals = [layer.scaling["original_max_position_embeddings"] for layer in result.values()
                 if layer.scaling and "original_max_position_embeddings" in layer.scaling and
                 layer.scaling["type"] != "dynamic"]
    if any(isinstance(p, Mapping) and "mrope_section" in p for p in params.values()):
        notes.append("M-RoPE (mrope_section): a text token has the same position on all three axes, so text "
                     "rotates as the 1-D RoPE given here; image and video tokens get 3-D positions")
    notes += defaults_note(found, model_type, defaulted)
    notes += windows.window_notes(text, found, model_type, types) + windows.causal_kept_notes(text, model_type)
    notes += part_notes(text, model_type)  # T5Gemma's module config without is_decoder
    notes += divergence_notes(model_type, text) + _site_notes(model_type, found, given) + _part_notes(config)
    pattern = {index: name for name, indices in kinds.items() for index in indices}
    return ConfigRope(model_type, result, tuple(pattern[i] for i in sorted(pattern)), _length(text, found),
                      originals[0] if originals else None, tuple(notes), bool(found.get("attention_sinks")))


def from_config(config: Mapping[str, Any], layer_type: str | None = None, *,
                layout: str | None = None) -> dict[str, Any]:
    """The keyword arguments of `RotaryEmbedding` that reproduce a model's RoPE (one layer type's).

    `read_config` reads the config (see there for the keys and rules); this returns the settings of
    the layers of ``layer_type`` in the form ``RotaryEmbedding(**result)`` takes. Without
    ``layer_type``, the model's layers must all rotate alike (layers without RoPE aside).

    Args:
        config: a model's ``config.json`` as a dict, or a ``transformers`` config object.
        layer_type: for models whose layers differ (Gemma 3's ``"sliding_attention"`` and
            ``"full_attention"``), which ones to read; the names are the keys of `read_config`'s
            ``layers``.
        layout: ``"half"`` or ``"interleaved"``, needed only where the model type does not say.

    Returns:
        ``{"dim", "base", "layout", "scaling", "rotary_dim"}`` for ``RotaryEmbedding(**result)``.

    Examples:
        >>> kwargs = from_config({"model_type": "llama", "hidden_size": 4096,
        ...                       "num_attention_heads": 32, "rope_theta": 500000.0,
        ...                       "max_position_embeddings": 8192})
        >>> for key, value in kwargs.items():
        ...     print(key, value)
        dim 128
        base 500000.0
        layout half
        scaling None
        rotary_dim None
    """
    if layer_type is not None and not isinstance(layer_type, str):
        raise TypeError(f"layer_type must be a string or None, got {type(layer_type).__name__}")
    layers = read_config(config, layout=layout).layers
    if layer_type is not None:
        if layer_type not in layers:
            raise ValueError(f"layer_type must be one of {', '.join(map(repr, layers))} (the layer types of this "
                             f"config), got {layer_type!r}")
        return layers[layer_type].rotary_kwargs()
    rotating = {repr(layer.rotary_kwargs()): layer for layer in layers.values() if layer.rotates}
    if len(rotating) == 1:
        return next(iter(rotating.values())).rotary_kwargs()
    if not rotating:
        raise ValueError("no layer of this config uses RoPE: "
                         + "; ".join(f"{name}: {layer.note}" for name, layer in layers.items()))
    raise ValueError(f"this config has more than one RoPE: pass layer_type, one of "
                     f"{', '.join(map(repr, sorted(layers)))}, got layer_type=None")
