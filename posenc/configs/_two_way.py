"""Which layers of a model see the tokens after the query too, as transformers' code decides it.

The two-way half of `posenc.configs._windows` (which re-exports these names): encoders whose
windows reach both ways (`TWO_SIDED`) or are centred on the query (`CENTRED`), or that have no
window (`ENCODERS`, and `DECODER_SWITCH`'s unless the config makes them decoders), the config flags
that open a decoder's masks both ways (`BIDIRECTIONAL`) or leave them causal (`CAUSAL_KEPT`), and a
config's own ``is_causal`` (false: transformers' mask builders build bidirectional masks).
A layer that sees every token, before and after, is read with no window and ``window_sides``
``"both"``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


# Model types (as read_config reads them: the text model's) whose modeling file builds transformers'
# bidirectional sliding-window mask for their sliding_attention layers, or with "every_layer" one
# such mask for all layers. tests/test_rope_sites_windows.py finds every modeling file that builds
# the mask and runs it for each model type here. Three others build it and are not here: T5Gemma (its encoder's
# windows are two-sided, its decoder's causal, from one model type: `PARTS` tells them apart)
# and the two Gemma 4 assistants (the mask there covers the target model's cached keys, flipped to
# look back: modeling_gemma4_assistant.py:226-244). T5Gemma2's encoder masks with a function of its own: `CENTRED`.
TWO_SIDED: dict[str, dict[str, Any]] = {
    "modernbert": {"where": "modeling_modernbert.py:450"},
    "embedding_gemma2_text": {"where": "modeling_embedding_gemma2.py:541"},
    "muse_glimmer_assistant": {"where": "modeling_muse_glimmer_assistant.py:426"},
    "neomme": {"where": "modeling_neomme.py:575"},
    "ultrabert": {"where": "modeling_ultrabert.py:395"},
    "openai_privacy_filter": {"where": "modeling_openai_privacy_filter.py:467", "every_layer": True},
}

# Model types (the text model's, as read_config reads them) whose sliding_attention layers see a window of W
# tokens centred on the query: (W + 1) // 2 up to and including it, so (W - 1) // 2 before it, and W // 2
# after it. T5Gemma2's encoder (T5Gemma2TextConfig; the decoder's windows are causal) builds this mask with
# a function of its own, sliding_window_mask_function(W, is_causal=False) (modeling_t5gemma2.py:708-724,
# called at :795-798).
CENTRED: dict[str, dict[str, Any]] = {"t5gemma2_text": {"where": "modeling_t5gemma2.py:708"}}

# Model types (as read_config reads them) whose modeling file builds only bidirectional masks
# (create_bidirectional_mask, no causal mask builder), with no window: encoders, every layer seeing every
# token before and after. tests/test_rope_windows_bidirectional.py derives the set from the pinned
# transformers' modeling files (with TWO_SIDED's) and runs some of them.
# Three more are the encoder configs of files that also build causal masks for another part: Dia's
# encoder (DiaEncoder, modeling_dia.py:463) and Nemotron 3.5 Transcribe's audio and word-timestamp
# models (modeling_nemotron3_5_transcribe.py:424, 492).
ENCODERS = ("esmc", "eurobert", "gte", "jina_embeddings_v3", "lasr_encoder", "nemotron3_diarization_audio",
            "neucodec", "nomic_bert", "pe_audio_encoder", "pe_audio_video_encoder", "pe_video_encoder",
            "dia_encoder", "nemotron3_5_transcribe_asr_audio", "nemotron3_5_transcribe_word_timestamp")


# Model types whose model builds the causal mask only with config['is_decoder'] true, else the
# bidirectional one (``create_causal_mask if self.config.is_decoder else create_bidirectional_mask``:
# modeling_roformer.py:725; ESM's _create_attention_masks, modeling_esm.py:758-769); false by default.
# Not here: T5Gemma's module config, whose is_decoder T5GemmaConfig sets itself for each part
# (configuration_t5gemma.py:147, 151), so a decoder part read without the key is still a decoder.
DECODER_SWITCH: dict[str, str] = {"esm": "is_decoder", "roformer": "is_decoder"}


# Model types one config class of which serves two stacks: T5Gemma's module config is its encoder's and its
# decoder's, T5GemmaConfig setting is_decoder false and true on them (configuration_t5gemma.py:147, 151; a strict
# bool, false by default: :93). The encoder builds bidirectional masks for every layer, its sliding layers'
# |q - k| <= W (create_bidirectional_sliding_window_mask, modeling_t5gemma.py:670-672; masking_utils.py:137-147);
# the decoder causal ones (:765-767). read_config gives a whole T5Gemma config's decoder is_decoder true, as the
# class does (posenc.configs._params._text_part), and reads a module config given alone by its own flag.
PARTS: dict[str, dict[str, Any]] = {
    "t5_gemma_module": {"key": "is_decoder", "default": False, "where": "modeling_t5gemma.py:670-672"}}


def encoder_part(config: Mapping[str, Any], model_type: str | None) -> bool:
    """Whether the config is the encoder of a `PARTS` model type (its flag false, or left at the default)."""
    rule = PARTS.get(model_type or "")
    if rule is None:
        return False
    on = config.get(rule["key"], rule["default"])
    if not isinstance(on, bool):
        raise TypeError(f"config[{rule['key']!r}] must be true or false, got {type(on).__name__} {on!r:.40}")
    return not on


def two_sided(config: Mapping[str, Any], model_type: str | None) -> dict[str, Any]:
    """The `TWO_SIDED` rule of the model type, or the encoder part's (`PARTS`); {} for none."""
    if encoder_part(config, model_type):
        return {"where": PARTS[str(model_type)]["where"]}
    return TWO_SIDED.get(model_type or "") or {}


def part_notes(config: Mapping[str, Any], model_type: str | None) -> list[str]:
    """Which stack a `PARTS` config given without its flag is read as (the class's default)."""
    rule = PARTS.get(model_type or "")
    if rule is None or rule["key"] in config:
        return []
    return [(f"config[{rule['key']!r}] is not given: read at the config class's default "
             f"({str(rule['default']).lower()}), the encoder, whose layers see both ways ({rule['where']}); a whole "
             f"config gives its decoder true")]


def _encoder(config: Mapping[str, Any], model_type: str | None) -> bool:
    """Whether every layer of the model type sees both ways whatever the config's is_causal says."""
    key = DECODER_SWITCH.get(model_type or "")
    if key is not None:
        on = config.get(key)
        if on is not None and not isinstance(on, bool):
            raise TypeError(f"config[{key!r}] must be true, false or null, got {type(on).__name__} {on!r:.40}")
        if not on:
            return True
    return model_type in CENTRED or model_type in TWO_SIDED or model_type in ENCODERS or encoder_part(config, model_type)


# Model types whose config class takes a flag ("on": the value that turns it on) that opens every
# attention layer both ways: the full layers to every token, the sliding ones to W' tokens on each side
# of the query with "sets_is_causal" (the class sets is_causal False, and transformers' causal mask
# builders then build their bidirectional masks, the sliding one |q - k| <= W': masking_utils.py:954-963,
# 1180-1189, 137-147), else W' - 1 (the model ORs the sliding causal mask with |q - k| < W'). W' is the
# window after the class: W // 2 + 1 where it "halves" the given W "due to fa" (to_dict writes back
# (W' - 1) * 2), else W. Gemma 3's text model (EmbeddingGemma's config.json sets it,
# configuration_gemma3.py:102-103; masks modeling_gemma3.py:460-470, 536-538): W // 2 each side. Gemma 4's
# "all" (configuration_gemma4.py:185-187; the same in Gemma 4 Unified and DiffusionGemma's text models):
# W // 2 + 1. Step 3p7's text model (configuration_step3p7.py:170, a plain class attribute its forward
# tests for truth; _bidirectional_window_overlay, modeling_step3p7.py:800-808, 885-892): W - 1.
_FLAG = "use_bidirectional_attention"
_ALL = {"key": _FLAG, "on": "all", "allowed": ["all", "vision", None], "halves": True, "sets_is_causal": True}
_TRUE = {"key": _FLAG, "on": True, "allowed": [True, False, None], "sets_is_causal": False}
BIDIRECTIONAL: dict[str, dict[str, Any]] = {
    "gemma3_text": {**_TRUE, "halves": True}, "step3p5": {**_TRUE, "halves": False},
    "gemma4_text": _ALL, "gemma4_unified_text": _ALL, "diffusion_gemma_text": _ALL}


def _json(value: Any) -> str:
    """A flag's value as a config.json writes it (true, null, 'all')."""
    return "null" if value is None else repr(value).lower() if isinstance(value, bool) else repr(value)


def bidirectional(config: Mapping[str, Any], model_type: str | None) -> dict[str, Any] | None:
    """`BIDIRECTIONAL`'s rule where the config turns its flag on (null or left out: off, as the class)."""
    rule = BIDIRECTIONAL.get(model_type or "")
    if rule is None:
        return None
    on = config.get(rule["key"])
    if not any(type(on) is type(value) and on == value for value in rule["allowed"]):
        shown = ", ".join(map(_json, rule["allowed"]))
        kind = ValueError if any(type(on) is type(value) for value in rule["allowed"]) else TypeError
        raise kind(f"config[{rule['key']!r}] must be one of {shown}, got {type(on).__name__} {on!r:.40}")
    return rule if type(on) is type(rule["on"]) and on == rule["on"] else None


# A config's own is_causal: transformers' causal mask builders return their bidirectional masks for a
# config whose is_causal is false (`not getattr(config, "is_causal", True)`, masking_utils.py:954-963 and
# 1180-1189; a config class keeps an unknown key as an attribute), so every model type whose forward
# builds its masks with them from its config honours it: full layers see every token, sliding ones
# |q - k| <= W. The chunked builder has no such branch (create_chunked_causal_mask, masking_utils.py:1371).
# tests/test_rope_windows_bidirectional.py checks which modeling files build their masks so and runs them.
# The encoders (TWO_SIDED, CENTRED, ENCODERS) build bidirectional masks whatever the key says. No text
# model's config class drops the key (Dots3's vision config pops it: configuration_dots3_note.py:100).
IS_CAUSAL = "is_causal"
IS_CAUSAL_KINDS = ("full_attention", "sliding_attention", "chunked_attention")


def not_causal(config: Mapping[str, Any], model_type: str | None) -> bool:
    """Whether the config's own ``is_causal`` (false) opens the model's causal masks both ways."""
    if IS_CAUSAL not in config:
        return False
    on = config[IS_CAUSAL]
    if not isinstance(on, bool):
        raise TypeError(f"config['is_causal'] must be true or false, got {type(on).__name__} {on!r:.40} "
                        f"(transformers tests it for truth: null would open the masks both ways)")
    return not on and not _encoder(config, model_type)


def sides_of_full(config: Mapping[str, Any], model_type: str | None) -> str:
    """The sides a layer with no window sees: "both" where its mask opens both ways, else "before"."""
    if _encoder(config, model_type) or not_causal(config, model_type):
        return "both"
    return "both" if bidirectional(config, model_type) else "before"


# Model types whose config class takes the same flag but whose model keeps building the causal mask, the
# flag only setting the attention's is_causal (modeling_gemma.py:228, modeling_gemma2.py:223): eager
# attention stays causal (read so), while an implementation that skips the mask and takes is_causal from
# the layer runs both ways (Gemma's sdpa on a batch without padding; tests/test_rope_sites_windows.py).
CAUSAL_KEPT: dict[str, str] = {"gemma": _FLAG, "gemma2": _FLAG}


def causal_kept_notes(config: Mapping[str, Any], model_type: str | None) -> list[str]:
    """A note where a `CAUSAL_KEPT` flag is on: the reading follows the mask, as eager attention does."""
    key = CAUSAL_KEPT.get(model_type or "")
    on = config.get(key) if key else None
    if on is not None and not isinstance(on, bool):
        raise TypeError(f"config[{key!r}] must be one of true, false, null, got {type(on).__name__} {on!r:.40}")
    if not on or not_causal(config, model_type):  # config['is_causal'] false opens the mask itself
        return []
    return [f"config[{key!r}] is true, but transformers' code for this model type keeps building the causal mask and "
            f"only sets its attention's is_causal to false: eager attention stays causal (as read here), while an "
            f"implementation that skips the mask runs both ways (Gemma's sdpa on a batch without padding)"]


def _opened(window: int, rule: Mapping[str, Any], open_mask: bool) -> int:
    """The tokens on each side of a query in a sliding layer that `BIDIRECTIONAL`'s ``rule`` opens."""
    after_class = window // 2 + 1 if rule["halves"] else window
    return after_class if rule["sets_is_causal"] or open_mask else after_class - 1


def is_causal_notes(config: Mapping[str, Any], model_type: str | None, plan: Sequence[str] = ()) -> list[str]:
    """What a config's own ``is_causal`` false does (nothing for the encoders)."""
    if config.get(IS_CAUSAL, True) is not False or _encoder(config, model_type):
        return []
    chunks = (" (chunked_attention layers keep their causal chunks: transformers' chunked mask builder has no such "
              "branch)" if "chunked_attention" in plan else "")
    return [f"config['is_causal'] is false: transformers' mask builders then build bidirectional masks "
            f"(masking_utils.py:954, 1180), so every attention layer also sees the tokens after the query, the full "
            f"layers all of them, a sliding layer as many on each side as its window (|q - k| <= W){chunks}: so in "
            f"eager and sdpa attention; flash attention takes is_causal from the attention module instead "
            f"(flash_attention.py:86), not checked here"]
