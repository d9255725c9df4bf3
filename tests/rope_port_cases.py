"""The configs the JavaScript port must read as posenc reads them (tests/test_explorer_ports.py):
what the fuzz and the reports found, each window rule, layer kind and legacy config the reader
follows, and their bad inputs."""

from __future__ import annotations

import json

from tests.rope_windows_live import CASES as _WINDOWS
from tests.test_rope_config_fuzz import CONFIGS, SMALL

WINDOW_CASES = list(_WINDOWS.values())


def _case(config: dict[str, object], layout: str | None = None, length: int | None = None) -> tuple[str, str | None, int | None]:
    return json.dumps({**SMALL, **config}), layout, length


# What the fuzz (tests/test_rope_config_fuzz.py) and the reports found, each as the JavaScript must read it.
FOUND = [
    _case({"model_type": "beam"}),                                # a NoPE layer type marked None by its class
    _case({"model_type": "beam", "rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 5e5},
                                                     "full_attention": None}}, None, 300000),
    _case({"model_type": "gemma3_text", "rope_parameters": {"sliding_attention": {"rope_type": "default"},
                                                            "full_attention": None}}),
    _case({"model_type": "laguna", "layer_types": ["full_attention", "sliding_attention"],
           "rope_parameters": {"sliding_attention": None, "full_attention": {"rope_type": "default"}}}),
    _case({"model_type": "gemma4_text", "rope_parameters": {"rope_type": "linear", "factor": 2.0}}),
    # a rotated fraction in an entry: ignored by Gemma 3's module (refused), copied in by Step 3.5's class
    _case({"model_type": "gemma3_text", "rope_parameters": {
        t: {"rope_type": "default", "rope_theta": 1e4, "partial_rotary_factor": 0.5} for t in ("full_attention",
                                                                                              "sliding_attention")}}),
    _case({"model_type": "step3p5", "partial_rotary_factor": 0.5,
           "rope_parameters": {"full_attention": {"rope_type": "default", "rope_theta": 1e4}}}),
    # Llama 4 names its layers from a given no_rope_layers (tests/test_rope_sweep.py)
    *(_case({"model_type": "llama4_text", "no_rope_layers": flags}) for flags in ([1, 0, 0, 1, 1, 0], [1, 0], "10", [])),
    _case({"model_type": "llama", "head_dim": 10**320, "partial_rotary_factor": 0.5}),
    _case({"model_type": "llama", "head_dim": 65538}),
    _case({"model_type": "llama", "hidden_size": 2**40, "num_attention_heads": 1}),
    _case({"model_type": "llama", "hidden_size": 2**20, "num_attention_heads": 8}),
    _case({"model_type": "llama", "hidden_size": 2**20, "num_attention_heads": 16}),
    _case({"model_type": "llama", "num_attention_heads": 10**320}),
    _case({"model_type": "deepseek_v3", "qk_rope_head_dim": 2**17}),
    *(_case({"model_type": "gemma4_text", "num_hidden_layers": 2, "layer_types": ["full_attention", "sliding_attention"],
             "per_layer_config": overrides})
      for overrides in ({"00": {"head_dim": 2**17}}, {"0": 5}, {"0": {"head_dim": [1]}}, {"1": {"head_dim": 2.0}},
                        {"00": {"head_dim": 8}, "\u00b2": 5}, {"0": None})),
    *(_case({"model_type": "deepseek_v3", "qk_rope_head_dim": 16, "rope_scaling": scaling}, None, 9999999)
      for scaling in ({"rope_type": "dynamic", "factor": 1e300}, {"rope_type": "yarn", "factor": 2.0, "beta_fast": 1e308},
                      {"rope_type": "yarn", "factor": 2.0, "beta_slow": 1e-300},
                      {"rope_type": "yarn", "factor": 4.0, "mscale": 1.0, "mscale_all_dim": 1e300},
                      {"rope_type": "yarn", "factor": 1e6, "mscale": 1e6, "mscale_all_dim": 1.0},
                      {"rope_type": "longrope", "factor": 2.0, "short_factor": [1e-320] * 8, "long_factor": [1.0] * 8})),
    _case({"model_type": "llama", "rope_scaling": {"rope_type": "dynamic", "factor": 1e6}}, None, 2**53),
    _case({**CONFIGS[[c["model_type"] for c in CONFIGS].index("ministral3")],
           "rope_parameters": {"rope_type": "yarn", "factor": 2.0, "llama_4_scaling_beta": 1e7,
                               "original_max_position_embeddings": 16384}}),
    _case({"model_type": "llama", "rope_scaling": {"rope_type": "linear", "factor": 2.0,
                                                   "x": json.loads("[" * 150 + "]" * 150)}}),
    ("[" * 150 + "]" * 150, None, None),
    ("[" * 3000 + "]" * 3000, None, None),
    # layer patterns a class forces at the last layer or counts from it (tests/test_rope_layer_patterns.py)
    *(_case({"model_type": model_type, "num_hidden_layers": layers}, layout)
      for model_type, layout in (("gemma4_text", None), ("beam", None), ("muse_spark_text", "half"),
                                 ("olmo_hybrid", "half"), ("neomme", "half"))
      for layers in (2, 5, 8, 13)),
    # attention spans (tests/test_rope_windows.py): model-wide windows, switches, windowed layers, and
    # the window keys posenc refuses; each with and without a sliding window of another size
    *(_case({**config, **extra}) for config in WINDOW_CASES
      for extra in ({}, {"sliding_window": 5}, {"sliding_window": 0}, {"sliding_window": "4096"},
                    {"use_sliding_window": True, "sliding_window": None}, {"use_sliding_window": 1},
                    {"max_window_layers": -1}, {"max_window_layers": 99, "use_sliding_window": True},
                    {"attention_chunk_size": 0})),
    # a model type that rotates without settings posenc reads is refused, not said to use no RoPE
    *(_case({"model_type": model_type}) for model_type in ("dinov3_vit", "vjepa2", "esm", "bert", "pi0", "chmv2",
                                                           "nemo_speechlm", "wav2vec2-conformer")),
    # SmolLM3 with its window switched on and no layer lists: its NoPE layers are the sliding ones
    *(_case({"model_type": "smollm3", "num_hidden_layers": 4, "use_sliding_window": True, "sliding_window": 16, **extra})
      for extra in ({}, {"num_hidden_layers": 9, "no_rope_layer_interval": 3}, {"no_rope_layers": [0, 1, 0, 1]},
                    {"use_sliding_window": 1}, {"no_rope_layer_interval": 0}, {"no_rope_layers": [1, 1]},
                    {"sliding_window": 0}, {"use_sliding_window": False}, {"sliding_window": None},
                    {"layer_types": ["full_attention"] * 4},
                    {"layer_types": ["full_attention"] * 3 + ["sliding_attention"], "use_sliding_window": False},
                    {"layer_types": ["sliding_attention"] * 4, "use_sliding_window": None})),
    # windows on both sides of a query (posenc.configs._windows.TWO_SIDED), ModernBERT's from local_attention
    *(_case({"model_type": model_type, "num_hidden_layers": 6, "local_attention": value, **extra})
      for model_type in ("modernbert", "modernbert-decoder") for value in (9, 128, 1, "x", None, 2.0)
      for extra in ({}, {"sliding_window": 10})),
    *(_case({"model_type": model_type}) for model_type in ("ultrabert", "muse_glimmer_assistant", "openai_privacy_filter",
                                                           "embedding_gemma2_text")),
    _case({"model_type": "neomme", "num_hidden_layers": 7}, "half"),
    _case({"model_type": "openai_privacy_filter", "sliding_window": None}),
    # T5Gemma2's encoder: a window centred on the query (posenc.configs._windows.CENTRED); its decoder's is causal
    *(_case({"model_type": model_type, "num_hidden_layers": 6, **extra})
      for model_type in ("t5gemma2_text", "t5gemma2_decoder")
      for extra in ({}, {"sliding_window": 5}, {"sliding_window": 1}, {"sliding_window": None}, {"sliding_window": 0})),
    _case({"model_type": "t5gemma2_encoder", "text_config": {**SMALL, "model_type": "t5gemma2_text", "sliding_window": 9}}),
    # encoder-decoder configs: the language model in 'decoder', 'generator' or 'decoder_config'
    # (posenc.configs._params.TEXT_CONFIG_KEYS), with a note naming the part read
    *(_case({"model_type": "t5gemma2", "decoder": {**SMALL, "model_type": "t5gemma2_decoder", "sliding_window": 1024,
                                                   "num_hidden_layers": 6}, **extra})
      for extra in ({}, {"encoder": {"model_type": "t5gemma2_encoder"}}, {"text_config": {**SMALL, "model_type": "gemma3_text"}})),
    _case({"model_type": "dia", "decoder_config": {**SMALL, "model_type": "dia_decoder", "rope_theta": 5000.0},
           "encoder_config": {}}),
    _case({"model_type": "vision-encoder-decoder", "decoder": {**SMALL, "model_type": "llama", "rope_theta": 5e5}}),
    _case({"model_type": "rag", "generator": {**SMALL, "model_type": "bart"}}),
    _case({"model_type": "t5gemma2", "decoder": {"model_type": 5}}),
    _case({"model_type": "t5gemma2", "decoder": "not a dict"}),
    # inspect's base check: p-RoPE spared, a window longer than the context bounded by the context
    _case({"model_type": "gemma4_text", "layer_types": ["full_attention"], "head_dim": 256, "global_head_dim": 512,
           "max_position_embeddings": 131072, "rope_parameters": {"full_attention": {
               "rope_type": "proportional", "rope_theta": 1e6, "partial_rotary_factor": 0.25}}}),
    *(_case({"model_type": "qwen2", "use_sliding_window": True, "max_window_layers": 1, "num_hidden_layers": 2,
             "sliding_window": 131072, "max_position_embeddings": 32768, "rope_theta": 10000.0}, None, length)
      for length in (None, 60000)),
    # Gemma 3 made bidirectional by its flag (EmbeddingGemma; posenc.configs._windows.BIDIRECTIONAL)
    *(_case({"model_type": "gemma3_text", "use_bidirectional_attention": flag, **extra})
      for flag in (True, False, None, 1)
      for extra in ({}, {"sliding_window": 9}, {"sliding_window": 1}, {"sliding_window": None})),
    _case({"model_type": "gemma3_text", "use_bidirectional_attention": True, "sliding_window": 1}, None, 300000),
    _case({"model_type": "gemma3", "text_config": {**SMALL, "model_type": "gemma3_text", "use_bidirectional_attention": True,
                                                   "sliding_window": 512}}),
    *(_case({"model_type": model_type, "use_bidirectional_attention": flag, **extra})
      for model_type in ("gemma4_text", "diffusion_gemma_text") for flag in ("all", "vision", None, True, "both")
      for extra in ({}, {"sliding_window": 9}, {"sliding_window": None}, {"sliding_window": 1234567})),
    _case({"model_type": "gemma4_text", "use_bidirectional_attention": "all", "layer_types": ["full_attention"] * 6,
           "sliding_window": None}),
    # Gemma and Gemma 2 take the same flag but keep the causal mask (posenc.configs._windows.CAUSAL_KEPT): a note
    *(_case({"model_type": model_type, "use_bidirectional_attention": flag})
      for model_type in ("gemma", "gemma2") for flag in (True, False, None, "all", 1)),
    # Step 3p7's flag (W - 1 each side, not halved) and a config's own is_causal (posenc.configs._two_way)
    *(_case({"model_type": "step3p5", "layer_types": ["full_attention", "sliding_attention"],
             "use_bidirectional_attention": flag, **extra, "rope_parameters": {kind: {"rope_type": "default"}
                                                                              for kind in ("full_attention", "sliding_attention")}})
      for flag in (True, False, None, 1) for extra in ({"sliding_window": 9}, {"sliding_window": 1}, {"sliding_window": None},
                                                     {"sliding_window": 9, "is_causal": False})),
    *(_case({"model_type": model_type, "is_causal": causal, **extra})
      for model_type in ("llama", "mistral", "gemma", "gemma3_text", "gemma4_text", "llama4_text", "modernbert",
                         "t5gemma2_text", "dots3_note_text")
      for causal in (False, True, None, 0)
      for extra in ({}, {"sliding_window": 5, "use_bidirectional_attention": True})),
    *(_case({"model_type": model_type, "is_causal": causal}) for model_type in ("gte", "nomic_bert", "eurobert")
      for causal in (False, True)),  # encoders (ENCODERS): every layer both ways
    *(_case({"model_type": model_type, "is_decoder": decoder, **causal, **extra})  # DECODER_SWITCH
      for model_type, extra in (("roformer", {}), ("esm", {"position_embedding_type": "rotary"}))
      for decoder in (False, True, None, 1) for causal in ({}, {"is_causal": False})),
    *(_case({"model_type": "deepseek_v4", "num_hidden_layers": 3, "is_causal": causal}, layout)  # refused if false
      for causal in (False, True, None) for layout in (None, "half")),
    _case({"model_type": "embedding_gemma2", "text_config": {**SMALL, "model_type": "embedding_gemma2_text"}}),
    _case({"model_type": "deepseek_v32", "qk_rope_head_dim": 16, "num_hidden_layers": 2}),  # two rotary sites
    *(_case({"model_type": model_type, "num_hidden_layers": 2}) for model_type in ("axk2", "glm_moe_dsa",
                                                                                   "mistral_large4_text", "hy_v4")),
    # DeepSeek-V4, read per kind of layer (posenc.configs.sites.read_deepseek_v4), and its bad input named alike
    *(_case({"model_type": "deepseek_v4", **config}, layout, length) for config, layout, length in (
        ({}, None, None), ({"num_hidden_layers": 5, "compress_ratios": [0, 4, 128, 4, 0]}, None, 300000),
        ({"rope_scaling": {"type": "yarn", "factor": 16, "original_max_position_embeddings": 65536}}, None, None),
        ({"rope_parameters": {"rope_type": "yarn", "factor": 4.0, "attention_factor": 1.5}}, None, None),
        ({"num_hidden_layers": 1, "qk_rope_head_dim": 512, "head_dim": 512}, "interleaved", None),
        ({"num_hidden_layers": 3, "layer_types": ["sliding_attention"] * 3, "rope_parameters": {
            "main": {"rope_type": "default", "rope_theta": 300.0},
            "compress": {"rope_type": "linear", "factor": 2.0, "rope_theta": 900.0}}}, None, None),
        ({"sliding_window": None}, None, None), ({}, "half", None), ({"compress_ratios": [0, 3]}, None, None),
        ({"compress_ratios": [0, 4.0], "num_hidden_layers": 2}, None, None), ({"compress_ratios": [0]}, None, None),
        ({"layer_types": ["full_attention"], "num_hidden_layers": 1}, None, None), ({"sliding_window": 0}, None, None),
        ({"compress_rope_theta": 0}, None, None), ({"qk_rope_head_dim": "x"}, None, None),
        ({"rope_parameters": [1]}, None, None), ({"max_position_embeddings": "x"}, None, None))),
    _case({"model_type": "minimax", "rotary_dim": 64, "num_hidden_layers": 2}),  # a registered divergence
    # Dots3's window filled by its class (posenc.configs._windows.FILLED), and Unlimited-OCR's R-SWA layers
    *(_case({"model_type": "dots3_note_text", "num_hidden_layers": 2, "layer_types": ["indexed_attention",
                                                                                   "sliding_attention"], **extra})
      for extra in ({}, {"sliding_window_size": 100}, {"sliding_window": None, "sliding_window_size": 7},
                    {"sliding_window": 9, "sliding_window_size": 7}, {"sliding_window_size": None},
                    {"sliding_window_size": 0}, {"sliding_window_size": "x"}, {"sliding_window_size": True},
                    {"sliding_window_size": 2**60})),
    # legacy Dots3 configs: layers named full_attention, or none named (posenc.configs._plan.LEGACY_LAYER_TYPES)
    *(_case({"model_type": "dots3_note_text", "num_hidden_layers": 6, **extra})
      for extra in ({}, {"layer_types": ["full_attention", "sliding_attention"] * 3}, {"use_dsa": False},
                    {"layer_types": ["full_attention", "sliding_attention"] * 3, "use_dsa": False},
                    {"use_sliding_window": False}, {"use_dsa": None}, {"use_dsa": 1}, {"use_sliding_window": None}, {"use_sliding_window": "yes"},
                    {"per_layer_config": {}, "layer_types": ["full_attention"] * 6}, {"num_hidden_layers": "6"},
                    {"layer_types": "full_attention"})),
    _case({"model_type": "dots3_note", "text_config": {**SMALL, "model_type": "dots3_note_text", "use_dsa": False}}),
    # legacy layer names every config class renames last (posenc.configs._plan.LEGACY_NAMES)
    *(_case({"model_type": model_type, "num_hidden_layers": 4, **extra})
      for model_type, extra in (("qwen3_next", {"layer_types": ["linear_attention"] * 3 + ["attention"]}),
                                ("qwen3_5_text", {"layer_types": ["mamba", "linear_attention", "conv", "attention"]}),
                                ("glm_moe_dsa", {"layer_types": ["deepseek_sparse_attention", "qwen_sparse_attention"] * 2}),
                                ("zamba2", {"layers_block_type": ["mamba", "hybrid", "attention", "mamba"],
                                            "use_mem_rope": True}),
                                ("dots3_note_text", {"layer_types": ["attention", "full_attention", "sliding_attention",
                                                                     "sliding_attention"]}),
                                ("dots3_note_text", {"layer_types": ["attention", "indexed_attention"] * 2, "use_dsa": False}),
                                ("llama", {"layer_types": ["attention", 7, None, "mamba"]}))),
    *(_case({"model_type": "unlimited_ocr_text", **extra})
      for extra in ({}, {"sliding_window": 3}, {"sliding_window": None}, {"sliding_window": 0},
                    {"num_hidden_layers": 2, "layer_types": ["full_attention", "reference_sliding_attention"]},
                    {"num_hidden_layers": 1, "layer_types": ["full_attention"]})),
    _case({"model_type": "unlimited_ocr", "text_config": {**SMALL, "model_type": "unlimited_ocr_text", "sliding_window": 64}}),
    # ZAYA's hybrid and hybrid_sliding layers, read as the attention they run (posenc.configs._windows.LAYER_KINDS)
    *(_case({"model_type": "zaya", "num_hidden_layers": 3, **extra})
      for extra in ({}, {"layer_types": ["hybrid", "hybrid_sliding", "hybrid"], "sliding_window": 5},
                    {"layer_types": ["hybrid_sliding"] * 3}, {"layer_types": ["hybrid", "hybrid_sliding", "hybrid"],
                                                              "sliding_window": 0},
                    {"layer_types": ["hybrid", "sliding_attention", "hybrid"], "sliding_window": 5})),
    *(_case({"model_type": "falcon_h1", "num_hidden_layers": 2, **extra})
      for extra in ({}, {"layers_block_type": ["hybrid", "hybrid"]}, {"layers_block_type": ["hybrid", "mamba"]})),
    # Zamba2's hybrid layers rotate only with use_mem_rope, over 2 * hidden_size // heads features unless given
    *(_case({"model_type": "zamba2", "num_hidden_layers": 3, "layers_block_type": ["mamba", "hybrid", "hybrid"], **extra})
      for extra in ({}, {"use_mem_rope": True}, {"use_mem_rope": False}, {"use_mem_rope": 1}, {"use_mem_rope": None},
                    {"use_mem_rope": True, "attention_head_dim": 8}, {"use_mem_rope": True, "num_attention_heads": 3},
                    {"use_mem_rope": True, "hidden_size": 2**23, "num_attention_heads": 1},
                    {"use_mem_rope": True, "use_long_context": True}, {"use_long_context": None},
                    {"use_mem_rope": True, "use_long_context": False, "max_position_embeddings": 100})),
    # text models issue 33 left unread: a rotation turned the other way, a text model that does not rotate,
    # a config whose parts rotate, M-RoPE sections transformers fails on, a vision part's reason
    *(_case({"model_type": t}) for t in ("nanochat", "glm5_next_text", "inkling2_text", "blt", "deepseek_ocr2_vision",
                                         "glm_image_vision", "lightglue", "esm", "ernie4_5_vl_moe_text",
                                         "granite4_vision_text")),
    _case({"model_type": "nanochat"}, "half"),
    _case({"model_type": "cohere_compass_text", "layer_types": ["full_attention"], "rope_parameters": {
        "full_attention": {"rope_type": "default", "rope_theta": 1e4}}}),
    _case({"model_type": "glm5_next"}), _case({"model_type": "inkling2", "text_config": {"model_type": "inkling2_text"}}),
    *(_case({"model_type": t, **extra}) for t in ("glm4v_text", "glm_image_text", "hunyuan_vl_text", "qwen2_vl_text")
      for extra in ({}, {"rope_parameters": {"rope_type": "default", "mrope_section": [2, 3, 3]}},
                    {"rope_parameters": {"rope_type": "default", "mrope_section": [2, 3, 4]}},
                    {"rope_parameters": {"rope_type": "default", "mrope_section": [2, 3, 3.0]}},
                    {"rope_parameters": {"rope_type": "default", "mrope_section": [True, 3, 4]}},
                    {"rope_parameters": {"rope_type": "default", "mrope_section": None}},
                    {"rope_scaling": {"type": "mrope", "mrope_section": [4, 2, 2]}})),
    *(_case({"model_type": "glm4v_moe_text", **extra}) for extra in ({}, {"rope_parameters": {
        "rope_type": "default", "partial_rotary_factor": 0.5, "mrope_section": [1, 2, 1]}})),
]
