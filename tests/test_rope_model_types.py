"""The per-model-type table `posenc.configs` reads is what the pinned transformers' code says.

``posenc/configs/model_types.json`` is derived by ``tools/rope_model_types`` from every model type
transformers registers (its config class and modeling code, run on probes). Deriving it again must
give the committed file: a transformers upgrade that changes a model type, or adds one, fails here
with the model types that changed; ``python -m tools.rope_model_types`` rewrites the file (review
the diff).
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("transformers", reason="transformers is a test dependency (requirements.lock)")

from tools.rope_model_types import derive


def test_the_committed_table_is_what_transformers_says() -> None:
    committed = json.loads(derive.TABLE_PATH.read_text())
    derived = derive.derive_all()
    assert committed["_source"] == derived["_source"], "the table was derived from another transformers"
    old, new = committed["model_types"], derived["model_types"]
    added, removed = sorted(set(new) - set(old)), sorted(set(old) - set(new))
    changed = sorted(k for k in set(old) & set(new) if old[k] != new[k])
    assert not (added or removed or changed), (
        f"transformers' model types differ from posenc/configs/model_types.json: added {added}, removed {removed}, "
        f"changed {changed}; run `python -m tools.rope_model_types` and review the diff")


def test_the_table_covers_the_families_people_run() -> None:
    table = json.loads(derive.TABLE_PATH.read_text())["model_types"]
    rope = [k for k, v in table.items() if v.get("rope", True) and "layout" in v]
    assert len(rope) > 200
    # spot checks against transformers' source, read by hand (file: what it does)
    assert table["llama"]["layout"] == "half"                    # modeling_llama.py: rotate_half
    assert table["gptj"]["layout"] == "interleaved"              # modeling_gptj.py: rotate_every_two
    assert table["cohere"]["layout"] == "interleaved"            # modeling_cohere.py: repeat_interleave(freqs, 2)
    assert table["glm4"]["layout"] == "interleaved"              # modeling_glm4.py: cos[..., :d/2].repeat_interleave
    assert table["llama4_text"]["layout"] == "interleaved"       # modeling_llama4.py: view_as_complex
    assert table["deepseek_v3"]["layout"] == {"key": "rope_interleave", "default": True, "true": "interleaved",
                                              "false": "half"}   # modeling_deepseek_v3.py: if rope_interleave
    assert table["gemma3_text"]["base_keys"]["sliding_attention"] == "rope_local_base_freq"
    assert table["modernbert"]["base_keys"] == {"full_attention": "global_rope_theta",
                                                "sliding_attention": "local_rope_theta"}
    assert table["phi3"]["type_aliases"]["su"] == "longrope"      # configuration_phi3.py
    assert table["minimax_m2"]["rotated_width_key"] == "rotary_dim"  # configuration_minimax_m2.py: rotary_dim / head_dim
    assert table["kimi_k25"]["text_model_type_aliases"] == {"kimi_k2": "deepseek_v3"}  # Kimi_K25Config.__post_init__
    assert table["bert"] == {"rope": False}
    # the generator's one override (READ_ELSEWHERE): DeepSeek-V4 is read by a reader of its own
    assert {k: v["read_by"] for k, v in table.items() if "read_by" in v} == {
        "deepseek_v4": "posenc.configs.sites.read_deepseek_v4"}


def test_read_by_names_the_reader_read_config_uses() -> None:
    import importlib

    from posenc.configs import read_config

    table = json.loads(derive.TABLE_PATH.read_text())["model_types"]
    for model_type, entry in table.items():
        if "read_by" in entry:
            module, name = entry["read_by"].rsplit(".", 1)
            config = {"model_type": model_type, "num_hidden_layers": 3}
            assert read_config(config) == getattr(importlib.import_module(module), name)(config)


def test_no_model_type_that_rotates_is_said_to_use_no_rope() -> None:
    """Vision and audio encoders rotate without rotary settings posenc reads (DINOv3's
    DINOv3ViTRopePositionEmbedding, V-JEPA 2's rotate_queries_or_keys): the table records the
    rotation calls and read_config refuses them by name. ESM's switch and RoFormer's sinusoidal
    table are read (tests/test_rope_legacy_rotations.py)."""
    from posenc.configs import read_config

    table = json.loads(derive.TABLE_PATH.read_text())["model_types"]
    assert "apply_rotary_pos_emb" in table["dinov3_vit"]["rotation_calls"]   # modeling_dinov3_vit.py: attention
    assert table["vjepa2"]["rotation_calls"]  # modeling_vjepa2.py: VJEPA2RopeAttention rotates q and k
    assert table["esm"]["rope_switch"]["rotary"] == "rotary" and table["roformer"]["fixed_tables"]
    assert "rotation_calls" not in table["bert"]                              # learned absolute positions
    # modeling_wav2vec2_conformer.py: _apply_rotary_embedding, hidden * cos + rotated * sin (found by what it computes)
    assert table["wav2vec2-conformer"]["rotation_calls"]
    assert table["pi0"]["rotating_parts"]["dit_config"] == "gemma"  # configuration_pi0.py: sub_configs_defaults
    with pytest.raises(ValueError, match="its own code does not rotate, but its parts do"):
        read_config({"model_type": "pi0", "hidden_size": 64, "num_attention_heads": 4})
    for model_type in ("dinov3_vit", "vjepa2"):  # read by posenc.configs.vision (tests/test_config_vision.py)
        with pytest.raises(ValueError, match="read_vision_config reads it"):
            read_config({"model_type": model_type, "hidden_size": 64, "num_attention_heads": 4})
    with pytest.raises(ValueError, match="posenc does not read its rotary position embedding") as refused:
        read_config({"model_type": "wav2vec2-conformer", "hidden_size": 64, "num_attention_heads": 4})
    assert "uses no rotary position embedding" not in str(refused.value)
    with pytest.raises(ValueError, match="uses no rotary position embedding"):
        read_config({"model_type": "bert", "hidden_size": 64, "num_attention_heads": 4})


def test_a_second_rotary_site_is_named() -> None:
    """DeepSeek-V3.2's sparse-attention indexer rotates its q and k in the half layout while the
    latent attention of the same layer is interleaved (modeling_deepseek_v32.py: the indexer calls
    apply_rotary_pos_emb, rotate_half; the attention apply_rotary_pos_emb_interleave)."""
    from posenc.configs import read_config

    table = json.loads(derive.TABLE_PATH.read_text())["model_types"]
    assert table["deepseek_v32"]["rotary_sites"] == {"DeepseekV32Attention": "interleaved", "DeepseekV32Indexer": "half"}
    assert "rotary_sites" not in table["deepseek_v3"] and "rotary_sites" not in table["llama"]
    rope = read_config({"model_type": "deepseek_v32", "hidden_size": 64, "num_attention_heads": 4,
                        "qk_rope_head_dim": 16, "num_hidden_layers": 2})
    assert rope.layers["indexed_attention"].layout == "interleaved"
    # the note names both sites (posenc.configs.sites.site_notes, from its rules)
    assert any("indexer: the first qk_rope_head_dim features of each index_head_dim head, half" in note
               for note in rope.notes)


def test_a_model_type_automodel_cannot_build_is_judged_by_its_own_model_classes() -> None:
    """Qwen2.5-Omni's audio encoder and vocoder (no AutoModel class): their own model classes, built
    on the meta device, rotate nowhere (the audio encoder adds a sinusoidal table,
    modeling_qwen2_5_omni.py:837; its attention, :547, calls no rotation), so read_config says they use
    no RoPE and names the classes of the file that rotate; Dots3-Note's audio encoder and PocketTTS's
    audio tokenizer get the layout of the attention their own config builds (read live by
    tests/test_transformers_parity.py)."""
    import inspect

    import torch
    from transformers.models.qwen2_5_omni import modeling_qwen2_5_omni as omni

    from posenc.configs import read_config

    table = json.loads(derive.TABLE_PATH.read_text())["model_types"]
    for model_type in ("qwen2_5_omni_audio_encoder", "qwen2_5_omni_bigvgan", "qwen3_omni_moe_audio_encoder"):
        assert "DiTAttention" in table[model_type]["rotates_elsewhere"] or model_type.startswith("qwen3")
        with pytest.raises(ValueError, match=f"model type '{model_type}' uses no rotary position embedding: no module"):
            read_config({"model_type": model_type})
    with torch.device("meta"):
        encoder = omni.Qwen2_5OmniAudioEncoder(derive._text_config("Qwen2_5OmniAudioEncoderConfig"))
    kinds = {type(m).__name__ for m in encoder.modules()}
    assert "SinusoidsPositionEmbedding" in kinds and "Qwen2_5OmniAudioAttention" in kinds
    assert "rotary" not in inspect.getsource(omni.Qwen2_5OmniAudioAttention).lower()
    assert table["dots3_note_audio_encoder"]["layout"] == "half"
    assert table["pocket_tts_audio_tokenizer_decoder"]["layout"] == "half"


def test_deepseek_v4_with_is_causal_false_is_refused() -> None:
    """DeepSeek-V4 masks every layer with create_sliding_window_causal_mask
    (modeling_deepseek_v4.py:1357), which builds a mask open both ways for a config whose is_causal
    is false (masking_utils.py:1180-1189): read_deepseek_v4 refuses that rather than read it causal."""
    import inspect

    from transformers import masking_utils

    from posenc.configs import read_config

    assert 'if not getattr(config, "is_causal", True):' in inspect.getsource(
        masking_utils.create_sliding_window_causal_mask)
    config = {"model_type": "deepseek_v4", "num_hidden_layers": 2}
    assert read_config({**config, "is_causal": True}) == read_config(config)
    with pytest.raises(ValueError, match=r"config\['is_causal'\] is false, and posenc does not know which mask"):
        read_config({**config, "is_causal": False})
    with pytest.raises(TypeError, match=r"config\['is_causal'\] must be true or false"):
        read_config({**config, "is_causal": None})


def test_a_rotary_module_that_ignores_the_rotated_fraction_is_marked() -> None:
    """``partial_ignored``: Llama's own default rule builds head_dim / 2 frequencies whatever
    partial_rotary_factor says (modeling_llama.py:100-105), Phi's reads it (modeling_phi.py's
    compute_default_rope_parameters: dim = int(head_dim * partial_rotary_factor)); the reader's
    refusal is tested in tests/test_rope_params_partial_ignored.py."""
    import transformers
    from transformers.models.llama import modeling_llama
    from transformers.models.phi import modeling_phi

    table = json.loads(derive.TABLE_PATH.read_text())["model_types"]
    assert table["llama"].get("partial_ignored") and table["qwen2"].get("partial_ignored")
    assert not any(table[t].get("partial_ignored") for t in ("phi", "persimmon", "glm", "bamba", "nemotron", "gptj"))
    half = {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.5}
    llama = transformers.LlamaConfig(hidden_size=256, num_attention_heads=4, rope_parameters=dict(half))
    phi = transformers.PhiConfig(hidden_size=256, num_attention_heads=4, rope_parameters=dict(half),
                                 partial_rotary_factor=0.5)
    assert modeling_llama.LlamaRotaryEmbedding(llama).inv_freq.numel() == 32  # the whole head of 64
    assert modeling_phi.PhiRotaryEmbedding(phi).inv_freq.numel() == 16       # half of it


def test_a_scaled_rule_with_a_fraction_is_marked_where_the_rotation_fails() -> None:
    """``partial_scaled``: on a partial_ignored type, a scaled rule of the rope utils narrows cos and sin
    to head_dim * fraction (modeling_rope_utils.py:181); Llama's rotation multiplies them with q of the
    whole head and fails (modeling_llama.py:147-148), GPT-NeoX's turns the first features and passes
    the rest (its apply_rotary_pos_emb slices q by cos's width). The key is written on partial_ignored
    types only, and "fails" on Llama's family; the forward of whole models is checked in
    tests/test_rope_params_partial_ignored.py."""
    import torch
    from transformers.models.gpt_neox import modeling_gpt_neox
    from transformers.models.llama import modeling_llama

    table = json.loads(derive.TABLE_PATH.read_text())["model_types"]
    marked = {t for t, e in table.items() if "partial_scaled" in e}
    assert marked <= {t for t, e in table.items() if e.get("partial_ignored")}
    assert all(table[t]["partial_scaled"] == "fails" for t in ("llama", "qwen2", "mistral", "deepseek_v3", "gemma"))
    assert len(marked) > 100
    q = torch.randn(1, 2, 5, 64, dtype=torch.float64)
    cos, sin = torch.randn(1, 5, 32, dtype=torch.float64), torch.randn(1, 5, 32, dtype=torch.float64)
    with pytest.raises(RuntimeError, match="must match the size"):
        modeling_llama.apply_rotary_pos_emb(q, q, cos, sin)
    turned, _ = modeling_gpt_neox.apply_rotary_pos_emb(q, q, cos, sin)
    assert torch.equal(turned[..., 32:], q[..., 32:]) and not torch.equal(turned[..., :32], q[..., :32])


def test_the_scaled_probe_answers_reads_where_the_rotation_turns_the_narrower_width() -> None:
    """partial.scaled_partial's other answer, on types it is not run on (their own default rule reads the
    fraction): GLM's rotation turns the first features by cos's width and passes the rest ("reads");
    Phi's attention cuts q itself by partial_rotary_factor (modeling_phi.py:168, 200-205), so the
    probe says nothing there; Llama's fails."""
    import inspect

    from tools.rope_model_types import modeling, partial

    def probe(model_type: str) -> dict[str, str]:
        config_name = derive._model_types()[model_type]
        text = derive._text_config(config_name)
        module = derive._module(text.model_type)
        used = modeling._called_in_attention(inspect.getsource(module), modeling.own_name(text), type(text).__name__)
        functions = {n: f for n, f in modeling._rotation_functions(module).items() if n in used}
        return partial.scaled_partial(config_name, text, functions)

    assert probe("glm") == {"partial_scaled": "reads"}
    assert probe("phi") == {}
    assert probe("llama") == {"partial_scaled": "fails"}
