"""The tables of `posenc.engines`: the engines, the features of the support matrix, each engine's
support of each, the disagreements with transformers, and the config settings that trigger them.

Private: import these from `posenc.engines`, whose docstring says how each entry was established
(``"run"`` here in ``tests/engines/``, or ``"read"`` in the engine's source) and which functions
read them.
"""

from __future__ import annotations

from typing import Any, NamedTuple


class Engine(NamedTuple):
    """One engine: how it is named, how it was checked, and how a reader tells it a config's settings."""

    name: str
    checked: str                 # "run" (installed and run here) or "read" (its source read)
    half: str                    # its spelling of the "half" layout (pairs i, i + d/2)
    interleaved: str             # its spelling of the "interleaved" layout (pairs 2i, 2i + 1)
    settings: str                # how to give it a config's rope settings
    where: str                   # locator of the above


class Disagreement(NamedTuple):
    """A place where an engine computes a config otherwise than transformers does."""

    engine: str
    feature: str                 # a key of FEATURES
    summary: str
    where: str                   # file:line or function locator in the engine's source
    checked: str                 # "run" (the test shows it and its size) or "read"
    test: str | None             # tests/engines/<file>::<test> that shows it, where run
    section: str                 # its section's anchor on the chapter's page (PAGE)


ENGINES: dict[str, Engine] = {
    "llama.cpp": Engine(
        "llama.cpp (ggml)", "run",
        "LLAMA_ROPE_TYPE_NEOX (ggml mode 2)", "LLAMA_ROPE_TYPE_NORM (ggml mode 0)",
        "GGUF keys {arch}.rope.freq_base, {arch}.rope.scaling.type (none, linear, yarn, longrope), "
        "{arch}.rope.scaling.factor, {arch}.rope.scaling.original_context_length; at run time "
        "--rope-scaling, --rope-scale, --rope-freq-base, --yarn-orig-ctx, --yarn-beta-fast/-slow. "
        "The layout is not in the file: llama.cpp picks it per architecture",
        "gguf-py gguf/constants.py Keys.Rope and RopeScalingType (run here); src/llama-model.cpp "
        "llama_model_rope_type; common/arg.cpp (--rope-scaling ...); include/llama.h enum llama_rope_type "
        "and ggml/src/ggml-cpu/ops.cpp ggml_compute_forward_rope_flt (NORMAL pairs 2i, 2i + 1; NEOX, MROPE "
        "and IMROPE pair i, i + d/2)"),
    "mlx-lm": Engine(
        "MLX (mlx-lm)", "run", "traditional=False", "traditional=True",
        "the model's config.json, read by mlx_lm.models.rope_utils.initialize_rope "
        "(rope_scaling / rope_parameters); to change them, edit the file or pass "
        "mlx_lm.load(path, model_config={...}), which updates the config's top-level keys",
        "mlx_lm/models/rope_utils.py initialize_rope; mx.fast.rope(traditional=...): "
        "ml-explore/mlx@846d1762 mlx/backend/metal/kernels/rope.metal:30-36 (traditional pairs 2i, 2i + 1; "
        "else i, i + d/2)"),
    "vllm": Engine(
        "vLLM", "read", "is_neox_style=True", "is_neox_style=False",
        "--hf-overrides '{\"rope_parameters\": {...}}' (the older --rope-scaling is gone)",
        "vLLM's documentation, Features, Context Extension; "
        "vllm/model_executor/layers/rotary_embedding/__init__.py get_rope (is_neox_style, yarn, "
        "deepseek_yarn, mrope_section, mrope_interleaved); vllm-project/vllm@1593f0c1 "
        "rotary_embedding/common.py apply_rotary_emb_torch (is_neox_style: torch.chunk(x, 2); else "
        "x[..., ::2], x[..., 1::2])"),
    "sglang": Engine(
        "SGLang", "read", "is_neox_style=True", "is_neox_style=False",
        "--json-model-override-args '{\"rope_scaling\": {...}}' (a nested config: under \"text_config\")",
        "sgl-project/sglang python/sglang/srt/server_args.py (--json-model-override-args); "
        "python/sglang/srt/layers/rotary_embedding.py _apply_rotary_emb(is_neox_style)"),
    "torchtune": Engine(
        "torchtune", "run", "Qwen2/Phi3RotaryPositionalEmbeddings", "RotaryPositionalEmbeddings",
        "the model builder's arguments (rope_base, scale_factor, ...); no config.json is read",
        "torchtune/modules/position_embeddings.py; torchtune/models/*/_position_embeddings.py"),
    "keras-hub": Engine(
        "Keras Hub", "run", "RotaryEmbedding (its only layout)", "—",
        "RotaryEmbedding(max_wavelength, scaling_factor, rope_type, beta_fast, beta_slow, "
        "original_max_position_embeddings, truncate, sequence_axis, feature_axis, denominator_dim)",
        "keras_hub/src/layers/modeling/rotary_embedding.py RotaryEmbedding.__init__"),
    "llama-models": Engine(
        "Meta llama-models", "run", "—", "apply_rotary_emb (view_as_complex)",
        "params.json: rope_theta, use_scaled_rope, rope_scaling_factor, rope_high_freq_factor, "
        "attn_temperature_tuning, floor_scale, attn_scale",
        "llama_models/llama4/args.py ModelArgs; llama_models/llama3/model.py apply_scaling"),
}

#: The features of the support matrix, in its row order: key -> what the row means.
FEATURES: dict[str, str] = {
    "layouts": "both layouts (half, interleaved)",
    "partial": "partial rotary width",
    "linear": "linear (position interpolation)",
    "dynamic": "dynamic NTK",
    "yarn": "YaRN (frequencies, attention factor)",
    "llama3": "Llama 3",
    "longrope": "LongRoPE",
    "proportional": "proportional (p-RoPE)",
    "mrope": "M-RoPE, blocks",
    "imrope": "M-RoPE, interleaved",
    "vision2d": "2-D RoPE of image patches",
    "alibi": "ALiBi slopes",
    "temperature": "Llama 4 temperature",
}

# (engine, feature) -> (status, test or locator). status: "same" (agrees with posenc, run here),
# "differs" (see DISAGREEMENTS), "half" or
# "interleaved" (only that layout, agrees, run here), "text" (text tokens only), "read" (supported,
# read only), "none" (not supported, read in its source). A missing pair: not checked.
SUPPORT: dict[tuple[str, str], tuple[str, str]] = {
    ("llama.cpp", "layouts"): ("same", "test_ggml.py::test_layouts"),
    ("llama.cpp", "partial"): ("same", "test_ggml.py::test_partial_width"),
    ("llama.cpp", "linear"): ("same", "test_ggml.py::test_linear"),
    ("llama.cpp", "dynamic"): ("none", "gguf RopeScalingType has none, linear, yarn, longrope"),
    ("llama.cpp", "yarn"): ("same", "test_ggml.py::test_yarn"),
    ("llama.cpp", "llama3"): ("same", "test_ggml.py::test_llama3_rope_freqs"),
    ("llama.cpp", "longrope"): ("differs", "test_ggml.py::test_longrope_factors"),
    ("llama.cpp", "mrope"): ("same", "test_ggml.py::test_mrope_blocks"),
    ("llama.cpp", "imrope"): ("differs", "test_ggml.py::test_imrope_fourth_section"),
    ("llama.cpp", "vision2d"): ("same", "test_ggml.py::test_vision_2d"),
    ("llama.cpp", "alibi"): ("same", "test_ggml.py::test_alibi_slopes"),
    ("mlx-lm", "layouts"): ("same", "test_mlx.py::test_layouts"),
    ("mlx-lm", "partial"): ("same", "test_mlx.py::test_partial_width"),
    ("mlx-lm", "linear"): ("same", "test_mlx.py::test_linear"),
    ("mlx-lm", "dynamic"): ("same", "test_mlx.py::test_dynamic"),
    ("mlx-lm", "yarn"): ("differs", "test_mlx.py::test_yarn"),
    ("mlx-lm", "llama3"): ("same", "test_mlx.py::test_llama3"),
    ("mlx-lm", "longrope"): ("differs", "test_mlx.py::test_longrope_long_factors_always"),
    ("mlx-lm", "proportional"): ("same", "test_mlx.py::test_proportional"),
    ("mlx-lm", "temperature"): ("same", "test_mlx.py::test_llama4_temperature"),
    ("mlx-lm", "mrope"): ("text", "initialize_rope: 'mrope' is plain RoPE (text tokens)"),
    ("vllm", "layouts"): ("read", "get_rope(is_neox_style)"),
    ("sglang", "layouts"): ("read", "rotary_embedding.py _apply_rotary_emb(is_neox_style)"),
    ("vllm", "yarn"): ("read", "get_rope: yarn, deepseek_yarn"),
    ("vllm", "mrope"): ("read", "get_rope: mrope_section"),
    ("vllm", "imrope"): ("read", "get_rope: mrope_interleaved"),
    ("torchtune", "layouts"): ("same", "test_torchtune.py::test_layouts"),
    ("torchtune", "llama3"): ("same", "test_torchtune.py::test_llama3_rule_float64"),
    ("torchtune", "vision2d"): ("same", "test_torchtune.py::test_vision_2d"),
    ("torchtune", "linear"): ("none", "its RoPE classes: plain, Llama 3.1 scaled, vision 2-D"),
    ("torchtune", "dynamic"): ("none", "its RoPE classes: plain, Llama 3.1 scaled, vision 2-D"),
    ("torchtune", "yarn"): ("none", "its RoPE classes: plain, Llama 3.1 scaled, vision 2-D"),
    ("torchtune", "longrope"): ("none", "Phi3RotaryPositionalEmbeddings has no factors"),
    ("keras-hub", "layouts"): ("half", "test_keras.py::test_default"),
    ("keras-hub", "partial"): ("none", "RotaryEmbedding turns the whole feature axis"),
    ("keras-hub", "llama3"): ("none", "rope_type: linear, dynamic, yarn only"),
    ("keras-hub", "longrope"): ("none", "rope_type: linear, dynamic, yarn only"),
    ("keras-hub", "proportional"): ("none", "rope_type: linear, dynamic, yarn only"),
    ("keras-hub", "linear"): ("same", "test_keras.py::test_linear"),
    ("keras-hub", "dynamic"): ("differs", "test_keras.py::test_dynamic_scales_every_length"),
    ("keras-hub", "yarn"): ("same", "test_keras.py::test_yarn"),
    ("keras-hub", "alibi"): ("same", "test_keras.py::test_alibi_slopes"),
    ("llama-models", "layouts"): ("interleaved", "test_llama_models.py::test_rotation"),
    ("llama-models", "linear"): ("none", "use_scaled_rope: Llama 3's rule only"),
    ("llama-models", "yarn"): ("none", "use_scaled_rope: Llama 3's rule only"),
    ("llama-models", "llama3"): ("differs", "test_llama_models.py::test_llama32_factor_fixed_at_8"),
    ("llama-models", "temperature"): ("same", "test_llama_models.py::test_llama4_temperature"),
}

DISAGREEMENTS: tuple[Disagreement, ...] = (
    Disagreement(
        "keras-hub", "dynamic",
        "rope_type='dynamic' divides every frequency by factor^(d/(d-2)) at every length: a linear "
        "scaling by more than the factor, where transformers leaves the frequencies unchanged up to "
        "the trained length and then raises the base",
        "keras_hub/src/layers/modeling/rotary_embedding.py RotaryEmbedding._get_inverse_freq "
        "(the 'dynamic' branch)",
        "run", "tests/engines/test_keras.py::test_dynamic_scales_every_length", "keras-dynamic"),
    Disagreement(
        "mlx-lm", "longrope",
        "SuScaledRoPE always divides by long_factor, also within the original length, where "
        "transformers uses short_factor; its attention factor comes from max_position_embeddings / "
        "original_max_position_embeddings, and a config's factor or attention_factor is not read",
        "mlx_lm/models/rope_utils.py SuScaledRoPE.__init__ (self._freqs, self._scale), initialize_rope",
        "run", "tests/engines/test_mlx.py::test_longrope_long_factors_always", "mlx-longrope"),
    Disagreement(
        "mlx-lm", "yarn",
        "initialize_rope passes only original_max_position_embeddings, beta_fast, beta_slow, mscale "
        "and mscale_all_dim: truncate (gpt-oss: false) and attention_factor are dropped, and mscale or "
        "mscale_all_dim given alone changes the factor on cos and sin, where transformers uses their "
        "ratio only when both are given",
        "mlx_lm/models/rope_utils.py initialize_rope (the yarn branch) and YarnRoPE.__init__",
        "run", "tests/engines/test_mlx.py::test_yarn_dropped_keys", "mlx-yarn"),
    Disagreement(
        "llama.cpp", "longrope",
        "the converter writes LongRoPE's attention factor from max_position_embeddings / "
        "original_max_position_embeddings even where the config gives factor (or attention_factor), "
        "and llama.cpp picks the long or short factors once, by the context of one sequence (-c, "
        "divided by -np unless the KV cache is unified), not by the positions present "
        "(transformers: by the sequence)",
        "llama.cpp ggml-org/llama.cpp@051139f5 conversion/phi.py Phi3MiniModel.generate_extra_tensors "
        "(attn_factor from scale = max_pos_embds / orig_max_pos_embds; neither factor nor attention_factor "
        "is read); src/llama-model.cpp "
        "llama_model::get_rope_factors (n_ctx_seq > n_ctx_orig_yarn) and src/llama-context.cpp "
        "(n_ctx_seq = n_ctx, or n_ctx / n_seq_max without a unified KV cache), as vendored by "
        "llama-cpp-python 0.3.36 (llama-model.cpp:2337-2350, llama-context.cpp:292-296)",
        "read", "tests/engines/test_ggml.py::test_longrope_factors", "llama-cpp-longrope"),
    Disagreement(
        "llama.cpp", "imrope",
        "past the interleaved part of ggml's interleaved M-RoPE (with Qwen3-VL's sections (24, 20, 20): "
        "pairs 60-63 of a 128-wide head, which transformers all turns with the temporal position), "
        "ggml keeps only 60 and 63 on time and gives 61 and 62 to a fourth position, which "
        "llama.cpp's multimodal helper sets to 0 for image, video and audio tokens: pairs 61 and 62 "
        "then do not rotate (how llama.cpp fills the fourth position of "
        "text tokens was not checked)",
        "ggml-python 0.0.45 vendor/ggml/src/ggml-cpu/ops.cpp:5786-5795 (ggml_mrope_cache_init, is_imrope); "
        "llama.cpp tools/mtmd/mtmd-helper.cpp decode_embd_batch.set_position_mrope_2d/_3d/_1d "
        "(pos[i + n_tokens * 3] = 0)",
        "run", "tests/engines/test_ggml.py::test_imrope_fourth_section", "ggml-imrope"),
    Disagreement(
        "llama-models", "llama3",
        "Meta's Llama 3 code fixes the rule's settings (factor 8, low_freq_factor 1, high_freq_factor 4, "
        "original length 8192) and reads none of them from the model's parameters: Llama 3.2 1B and 3B "
        "publish factor 32, so their pairs of wavelength above 8192 turn four times faster than in transformers",
        "llama-models 0.3.0 llama3/model.py:45-62 apply_scaling (scale_factor = 8 at line 47), "
        "llama3/args.py ModelArgs (use_scaled_rope only); sku_list.py llama3_2_base_models "
        "(Llama-3.2-1B and -3B: use_scaled_rope True, no factor)",
        "run", "tests/engines/test_llama_models.py::test_llama32_factor_fixed_at_8", "meta-llama3-factor"),
)


#: The chapter's page (the anchors of `Disagreement.section` are its headings' ids).
PAGE = "engines.md"

#: Text model types whose transformers code turns M-RoPE's sections interleaved (t, h, w, t, h, w, ...)
#: whatever the config says: their rotary classes recompose the frequencies with a stride of 3
#: (transformers 5.23.0 models/*/modeling_*.py, ``length = self.mrope_section[dim] * 3``: Qwen3-VL and
#: its MoE, Qwen3.5 and its MoE, Qwen3-Omni's thinker, Cosmos3-Edge, Qwen4-exp).
IMROPE_MODEL_TYPES = ("qwen3_vl", "qwen3_vl_text", "qwen3_vl_moe", "qwen3_vl_moe_text", "qwen3_5", "qwen3_5_text",
                      "qwen3_5_moe", "qwen3_5_moe_text", "qwen3_omni_moe", "qwen3_omni_moe_text", "cosmos3_edge",
                      "cosmos3_edge_text", "qwen4_exp", "qwen4_exp_text")

#: The model types (as read) of the Llama 3 family, which Meta's ``llama_models.llama3`` code runs: Llama 3,
#: 3.1, 3.2 and 3.3 (``llama``) and Llama 3.2 Vision's text model (``mllama``, read as ``mllama_text_model``).
LLAMA3_MODEL_TYPES = ("llama", "mllama_text_model")


class Trigger(NamedTuple):
    """A config setting on which a disagreement shows: the warning's condition, as data (a port reads it too).

    ``rope_type`` names the scaling rule whose settings hold ``key`` (the ``scaling`` dict of a rotating
    layer, as `read_config` gives it); ``None``: ``key`` is ``"model_type"``, the type as read. ``test``
    says when it fires: ``"is"``: the value equals ``value`` (same JSON type: ``false`` is not ``0``);
    ``"in"``: it is one of ``value`` (a list); ``"given"``: the key is there; ``"not"``: the key is there
    with a value other than ``value`` (the only one the engine computes); ``"differs"``: its value
    differs from that of the key ``other``; ``"alone"``: the key is there with a value other than
    ``value`` (where the engine agrees), and ``other`` is missing, null, zero or false.
    ``model_types``: where given, the trigger fires only for these model types as read (the engine
    runs only those models).
    """

    engine: str
    feature: str
    rope_type: str | None
    key: str
    test: str
    value: Any = None
    other: str | None = None
    model_types: tuple[str, ...] | None = None


TRIGGERS: tuple[Trigger, ...] = (
    Trigger("keras-hub", "dynamic", "dynamic", "rope_type", "is", "dynamic"),
    Trigger("mlx-lm", "longrope", "longrope", "short_factor", "differs", other="long_factor"),
    Trigger("mlx-lm", "longrope", "longrope", "factor", "given"),
    Trigger("mlx-lm", "longrope", "longrope", "attention_factor", "given"),
    Trigger("mlx-lm", "yarn", "yarn", "truncate", "is", False),
    Trigger("mlx-lm", "yarn", "yarn", "attention_factor", "given"),
    # mlx-lm: m(s, mscale) / m(s, mscale_all_dim) with defaults 1 and 0; transformers: m(s, 1) unless both given
    Trigger("mlx-lm", "yarn", "yarn", "mscale", "alone", 1.0, "mscale_all_dim"),
    Trigger("mlx-lm", "yarn", "yarn", "mscale_all_dim", "alone", 0.0, "mscale"),
    Trigger("llama.cpp", "longrope", "longrope", "short_factor", "differs", other="long_factor"),
    Trigger("llama.cpp", "longrope", "longrope", "factor", "given"),
    Trigger("llama.cpp", "longrope", "longrope", "attention_factor", "given"),
    # transformers never reads mrope_interleaved (it is only on its ignore lists): the model type decides
    Trigger("llama.cpp", "imrope", None, "model_type", "in", IMROPE_MODEL_TYPES),
    # Meta's Llama 3 code (not its Llama 4 code, which takes the factor) runs Llama 3's model types only
    *(Trigger("llama-models", "llama3", "llama3", key, "not", value, model_types=LLAMA3_MODEL_TYPES)
      for key, value in (("factor", 8.0), ("low_freq_factor", 1.0), ("high_freq_factor", 4.0),
                         ("original_max_position_embeddings", 8192))),
)
