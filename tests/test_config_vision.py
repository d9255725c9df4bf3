"""Tests of posenc.configs.vision: each reading against transformers' own modules (tiny random
configs, no weights), on patch grids that are not square where the model allows, and the configs
transformers would not run refused by key and value. Tolerances: tests/vision_live.py.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest
import torch

from posenc.configs.vision import (
    _DEFAULTS,
    BY_INPUT_KIND,
    INPUT_KINDS,
    VISION_MODEL_TYPES,
    read_vision_config,
)
from tests.vision_live import ROTATED, TABLE, check_tower_rotation, close


def _kinds(model_type: str) -> tuple[str | None, ...]:
    """The input kinds to read ``model_type`` with: both where the reading needs one (tests/test_config_vision_inputs.py)."""
    return INPUT_KINDS if model_type in BY_INPUT_KIND else (None,)


def _modeling(model: str):
    return importlib.import_module(f"transformers.models.{model}.modeling_{model}")


# ---------------------------------------------------------------- DINOv3 and EoMT-DINOv3

@pytest.mark.parametrize("model_type", ["dinov3_vit", "eomt_dinov3"])
def test_dinov3_style_live(model_type):
    import transformers

    m = _modeling(model_type)
    cls = transformers.DINOv3ViTConfig if model_type == "dinov3_vit" else transformers.EomtDinov3Config
    kwargs = dict(hidden_size=32, num_attention_heads=2, image_size=32, patch_size=8, num_register_tokens=2,
                  pos_embed_shift=0.1, pos_embed_jitter=1.5)
    kwargs.update(rope_theta=50.0) if model_type == "dinov3_vit" else kwargs.update(
        rope_parameters={"rope_type": "default", "rope_theta": 50.0})
    config = cls(**kwargs)
    reading = read_vision_config(config.to_dict())
    assert (reading.axes, reading.sections, reading.base, reading.layout) == (("row", "column"), (4, 4), 50.0, "half")
    assert reading.augmentation == {"shift": 0.1, "jitter": 1.5, "rescale": 2.0}
    rope_cls = m.DINOv3ViTRopePositionEmbedding if model_type == "dinov3_vit" else m.EomtDinov3RotaryEmbedding
    rope = rope_cls(config).eval()
    cos, sin = rope(torch.zeros(1, 3, 24, 40))  # a 3 x 5 grid, not the configured 4 x 4
    angles = reading.angles((3, 5))
    close(np.cos(angles), cos, **TABLE)
    close(np.sin(angles), sin, **TABLE)
    torch.manual_seed(0)
    q = torch.randn(1, 2, 3 + 15, 16)  # class and two register tokens first
    theirs, _ = m.apply_rotary_pos_emb(q, q, cos, sin)
    close(reading.rotate(q[:, :, 3:].double().numpy(), (3, 5)), theirs[:, :, 3:], **ROTATED)
    torch.testing.assert_close(theirs[:, :, :3], q[:, :, :3])  # the prefix is left alone, as the reading says
    assert "first 3 tokens" in reading.unrotated


# ---------------------------------------------------------------- V-JEPA 2

def test_vjepa2_live():
    from transformers import VJEPA2Config

    m = _modeling("vjepa2")
    config = VJEPA2Config(crop_size=16, patch_size=4, frames_per_clip=6, tubelet_size=2, hidden_size=40,
                          num_attention_heads=2, pred_hidden_size=28, pred_num_attention_heads=2)
    reading = read_vision_config(config)
    assert reading.grid == (3, 4, 4) and reading.sections == (3, 3, 3) and reading.rotary_dim == 18
    for hidden, heads in ((40, 2), (28, 2)):  # the encoder, then the predictor's heads (their own thirds)
        attention = m.VJEPA2RopeAttention(config, hidden_size=hidden, num_attention_heads=heads)
        tokens = 3 * 4 * 4
        ids = attention.get_position_ids(torch.zeros(1, tokens, hidden))
        torch.manual_seed(1)
        qk = torch.randn(1, heads, tokens, hidden // heads)
        theirs = attention.apply_rotary_embeddings(qk, ids)
        if hidden == 40:
            np.testing.assert_array_equal(reading.positions(), torch.stack(ids, -1).double().numpy())
            close(reading.rotate(qk.double().numpy()), theirs, **ROTATED)
        else:
            pred = read_vision_config({**config.to_dict(), "hidden_size": 28, "num_attention_heads": 2})
            close(pred.rotate(qk.double().numpy()), theirs, **ROTATED)
    assert "predictor" in reading.notes[-1] and "28" not in reading.notes[-1].split("features")[0][-4:]


# ---------------------------------------------------------------- Pixtral

def test_pixtral_live():
    from transformers import Mistral3Config, PixtralVisionConfig

    m = _modeling("pixtral")
    config = PixtralVisionConfig(hidden_size=64, num_attention_heads=4, image_size=64, patch_size=8,
                                 rope_parameters={"rope_type": "axial", "rope_theta": 1000.0})
    reading = read_vision_config(config)
    assert reading.base == 1000.0 and reading.coordinates == "index" and reading.sections == (4, 4)
    rows, cols = torch.meshgrid(torch.arange(3), torch.arange(5), indexing="ij")  # modeling_pixtral.py:428-435
    pos = torch.stack((rows.flatten(), cols.flatten()), -1)
    np.testing.assert_array_equal(reading.positions((3, 5)), pos.double().numpy())
    q = torch.randn(1, 4, 15, 16)
    cos, sin = m.PixtralVisionRotaryEmbedding(config)(q, pos)
    close(np.cos(reading.angles((3, 5))), cos, **TABLE)
    close(np.sin(reading.angles((3, 5))), sin, **TABLE)
    theirs, _ = m.apply_rotary_pos_emb(q, q, cos, sin, unsqueeze_dim=0)
    close(reading.rotate(q.double().numpy(), (3, 5)), theirs, **ROTATED)
    # Mistral 3 is read through its vision sub-config
    parent = Mistral3Config(vision_config=config.to_dict()).to_dict()
    assert read_vision_config(parent) == reading


# ---------------------------------------------------------------- Llama 4's vision encoder

def test_llama4_vision_live():
    from transformers import Llama4Config, Llama4VisionConfig

    m = _modeling("llama4")
    config = Llama4VisionConfig(hidden_size=32, num_attention_heads=2, image_size=20, patch_size=4,
                                num_hidden_layers=1, intermediate_size=32, vision_output_dim=32)
    reading = read_vision_config(config)
    assert reading.axes == ("column", "row") and reading.layout == "interleaved" and reading.grid == (5, 5)
    freqs = m.Llama4VisionRotaryEmbedding(config)(torch.zeros(1))[:, 0]  # [26 tokens, 8 pairs], complex
    pairs = reading.angles()[:, ::2]  # interleaved: one angle per pair, on both of its features
    close(np.cos(pairs), freqs.real[:-1], **TABLE)
    close(np.sin(pairs), freqs.imag[:-1], **TABLE)
    assert torch.equal(freqs[-1], torch.ones(8, dtype=freqs.dtype))  # the class token, last: angle 0
    torch.manual_seed(2)
    q = torch.randn(1, 26, 2, 16)
    theirs, _ = m.vision_apply_rotary_emb(q, q, m.Llama4VisionRotaryEmbedding(config)(torch.zeros(1)))
    close(reading.rotate(q[:, :-1].transpose(1, 2).double().numpy()), theirs[:, :-1].transpose(1, 2), **ROTATED)
    assert read_vision_config(Llama4Config(vision_config=config.to_dict())) == reading


# ---------------------------------------------------------------- the Qwen-style towers

QWEN_STYLE = [  # (model type, transformers package, config class, rotary class, parent config class)
    ("qwen2_vl_vision", "qwen2_vl", "Qwen2VLVisionConfig", "Qwen2VLVisionRotaryEmbedding", "Qwen2VLConfig"),
    ("qwen2_5_vl_vision", "qwen2_5_vl", "Qwen2_5_VLVisionConfig", "Qwen2_5_VLVisionRotaryEmbedding", "Qwen2_5_VLConfig"),
    ("qwen3_vl_vision", "qwen3_vl", "Qwen3VLVisionConfig", "Qwen3VLVisionRotaryEmbedding", "Qwen3VLConfig"),
    ("qwen3_vl_moe_vision", "qwen3_vl_moe", "Qwen3VLMoeVisionConfig", "Qwen3VLMoeVisionRotaryEmbedding",
     "Qwen3VLMoeConfig"),
    ("glm4v_vision", "glm4v", "Glm4vVisionConfig", "Glm4vVisionRotaryEmbedding", "Glm4vConfig"),
    ("glm4v_moe_vision", "glm4v_moe", "Glm4vMoeVisionConfig", "Glm4vMoeVisionRotaryEmbedding", "Glm4vMoeConfig"),
    ("qwen3_5_vision", "qwen3_5", "Qwen3_5VisionConfig", "Qwen3_5VisionRotaryEmbedding", "Qwen3_5Config"),
    ("qwen3_5_moe_vision", "qwen3_5_moe", "Qwen3_5MoeVisionConfig", "Qwen3_5MoeVisionRotaryEmbedding",
     "Qwen3_5MoeConfig"),
    ("qwen2_5_omni_vision_encoder", "qwen2_5_omni", "Qwen2_5OmniVisionEncoderConfig",
     "Qwen2_5OmniVisionRotaryEmbedding", None),
    ("qwen3_omni_moe_vision_encoder", "qwen3_omni_moe", "Qwen3OmniMoeVisionEncoderConfig",
     "Qwen3OmniMoeVisionRotaryEmbedding", None),
    ("glm_ocr_vision", "glm_ocr", "GlmOcrVisionConfig", "GlmOcrVisionRotaryEmbedding", "GlmOcrConfig"),
    ("glm5_next_vision", "glm5_next", "Glm5NextVisionConfig", "Glm5NextVisionRotaryEmbedding", "Glm5NextConfig"),
]


@pytest.mark.parametrize("model_type, package, config_name, rotary_name, parent_name", QWEN_STYLE)
def test_qwen_style_tower_live(model_type, package, config_name, rotary_name, parent_name):
    import transformers
    from transformers.vision_utils import get_vision_position_ids

    m = _modeling(package)
    width = {"embed_dim": 48} if model_type == "qwen2_vl_vision" else {"hidden_size": 48}
    config = _config_class(model_type)(**width, num_heads=3, depth=1, spatial_merge_size=2,
                                                rope_parameters={"rope_type": "axial", "rope_theta": 500.0})
    reading = read_vision_config(config)
    assert (reading.head_dim, reading.sections, reading.base, reading.layout) == (16, (4, 4), 500.0, "half")
    grid_thw = torch.tensor([[2, 4, 6]])  # two frames of a 4 x 6 grid
    ids = get_vision_position_ids(grid_thw, 2)
    np.testing.assert_array_equal(reading.positions((2, 4, 6)), ids.double().numpy())
    rope = getattr(m, rotary_name)(config)
    check_tower_rotation(reading, rope, m.apply_rotary_pos_emb_vision, ids, seed=3)
    assert type(config).__name__ == config_name
    if parent_name is not None:  # the omni models nest it deeper (thinker_config); read from the encoder's own
        parent = getattr(transformers, parent_name)(vision_config=config.to_dict())
        assert read_vision_config(parent.to_dict()) == reading


# ---------------------------------------------------------------- SAM 2 / SAM 3 video memory attention

@pytest.mark.parametrize("package, config_name", [("sam2_video", "Sam2VideoConfig"),
                                                  ("sam3_tracker_video", "Sam3TrackerVideoConfig")])
def test_sam_video_memory_attention_live(package, config_name):
    import transformers

    m = _modeling(package)
    kwargs = dict(memory_attention_hidden_size=32, memory_attention_num_attention_heads=2,
                  memory_attention_rope_feat_sizes=[6, 4])  # 6 wide, 4 high
    if package == "sam3_tracker_video":  # its image_size (56 // patch 14 = 4) overrides the feature sizes
        kwargs["image_size"] = 56
    config = getattr(transformers, config_name)(**kwargs)
    reading = read_vision_config(config)
    grid = (4, 6) if package == "sam2_video" else (4, 4)
    assert reading.grid == grid and reading.axes == ("column", "row") and reading.layout == "interleaved"
    assert read_vision_config({**config.to_dict(), "memory_attention_rope_feat_sizes": [6, 4]}) == reading
    attention_cls = next(v for k, v in vars(m).items() if k.endswith("MemoryAttention") and hasattr(v, "precompute_positions"))
    ids = attention_cls.precompute_positions(config)
    np.testing.assert_array_equal(reading.positions(), ids.double().numpy())
    rotary_cls = next(v for k, v in vars(m).items() if k.endswith("VisionRotaryEmbedding"))
    cos, sin = rotary_cls(config)(torch.zeros(1), ids)
    close(np.cos(reading.angles()), cos[0], **TABLE)
    close(np.sin(reading.angles()), sin[0], **TABLE)
    torch.manual_seed(4)
    q = torch.randn(1, 2, grid[0] * grid[1], 16)
    theirs, _ = m.apply_rotary_pos_emb_2d(q, q, cos, sin)
    close(reading.rotate(q.double().numpy()), theirs, **ROTATED)


# ---------------------------------------------------------------- the class defaults the reader falls back on

def _config_class(model_type: str):
    from transformers import CONFIG_MAPPING

    return CONFIG_MAPPING[model_type]


@pytest.mark.parametrize("model_type", sorted(_DEFAULTS))
def test_defaults_are_transformers_class_defaults(model_type):
    config = _config_class(model_type)()
    for key, value in _DEFAULTS[model_type].items():
        if key == "rope_theta":
            theirs = getattr(config, "rope_parameters", None)
            theirs = theirs["rope_theta"] if theirs else config.rope_theta
        else:
            theirs = getattr(config, key)
        assert (list(theirs) if isinstance(theirs, (list, tuple)) else theirs) == value, key
    # and the reading of an empty config is the reading of the class's own config
    # (MLCD's class says mlcd_vision_model also under its alias mlcd: read under the name given)
    for kind in _kinds(model_type):
        assert read_vision_config({"model_type": model_type}, kind) == \
            read_vision_config({**config.to_dict(), "model_type": model_type}, kind)


def test_every_model_type_reads():
    for model_type in VISION_MODEL_TYPES:
        for kind in _kinds(model_type):
            reading = read_vision_config({"model_type": model_type}, kind)
            assert sum(reading.sections) * 2 == reading.rotary_dim <= reading.head_dim
            assert reading.input_kind == kind


# ---------------------------------------------------------------- bad input

@pytest.mark.parametrize("config, words", [
    ({"model_type": "dinov3_vit", "hidden_size": 36, "num_attention_heads": 2}, ["hidden_size=36", "multiple of 4"]),
    ({"model_type": "dinov3_vit", "hidden_size": 30, "num_attention_heads": 4}, ["hidden_size=30", "num_attention_heads=4"]),
    ({"model_type": "pixtral", "hidden_size": 24, "num_attention_heads": 4}, ["hidden_size=24"]),
    ({"model_type": "qwen2_5_vl_vision", "hidden_size": 40, "num_heads": 4}, ["hidden_size=40", "num_heads=4"]),
    ({"model_type": "qwen2_5_vl_vision", "hidden_size": 64, "num_heads": 4, "head_dim": 32}, ["head_dim=32"]),
    ({"model_type": "llama4_vision_model", "image_size": [448, 336]}, ["image_size", "[448, 336]"]),
    ({"model_type": "vjepa2", "crop_size": [256, 384]}, ["crop_size", "[256, 384]"]),
    ({"model_type": "vjepa2", "hidden_size": 8, "num_attention_heads": 2}, ["hidden_size=8", "at least 6"]),
    ({"model_type": "sam2_video", "memory_attention_hidden_size": 36, "memory_attention_num_attention_heads": 2},
     ["memory_attention_hidden_size=36"]),
    ({"model_type": "pixtral", "rope_parameters": {"rope_type": "yarn", "rope_theta": 1e4}}, ["rope_type", "'yarn'"]),
    ({"model_type": "pixtral", "rope_theta": -1.0}, ["rope_theta", "-1.0"]),
    ({"model_type": "siglip"}, ["'siglip'"]),
    ({"model_type": "sam3_vit_model", "image_size": [1008, 672]}, ["image_size", "[1008, 672]", "square"]),
])
def test_bad_configs_name_the_key_and_value(config, words):
    with pytest.raises(ValueError) as error:
        read_vision_config(config)
    for word in words:
        assert word in str(error.value)


def test_transformers_fails_on_the_odd_head_split_too():
    """The head splits refused above are ones transformers' own module cannot run."""
    from transformers import DINOv3ViTConfig

    m = _modeling("dinov3_vit")
    config = DINOv3ViTConfig(hidden_size=36, num_attention_heads=2, image_size=16, patch_size=8)
    cos, sin = m.DINOv3ViTRopePositionEmbedding(config)(torch.zeros(1, 3, 16, 16))
    q = torch.randn(1, 2, 4, 18)
    with pytest.raises(RuntimeError):
        m.apply_rotary_pos_emb(q, q, cos, sin)


@pytest.mark.parametrize("config, grid, words", [
    ({"model_type": "vjepa2", "crop_size": 64, "patch_size": 16}, (2, 4, 6), ["grid", "4 x 4", "4 x 6"]),
    ({"model_type": "llama4_vision_model", "image_size": 32, "patch_size": 8}, (3, 4), ["grid", "4 x 4", "3 x 4"]),
    ({"model_type": "qwen2_5_vl_vision"}, (5, 6), ["spatial_merge_size=2", "5 x 6"]),
    ({"model_type": "qwen2_5_vl_vision"}, None, ["grid is needed"]),
    ({"model_type": "dinov3_vit"}, (0, 4), ["grid[0]", "0"]),
])
def test_bad_grids_name_the_grid(config, grid, words):
    reading = read_vision_config(config)
    with pytest.raises(ValueError) as error:
        reading.positions(grid)
    for word in words:
        assert word in str(error.value)


# ---------------------------------------------------------------- SAM 3's ViT: windowed and global layers

def test_sam3_vit_live():
    import transformers

    m = _modeling("sam3")
    config = transformers.Sam3ViTConfig(hidden_size=32, num_attention_heads=2, image_size=48, patch_size=4,
                                        window_size=4, num_hidden_layers=4, global_attn_indexes=[1, 3],
                                        rope_parameters={"rope_type": "axial", "rope_theta": 300.0})
    reading = read_vision_config(config)
    assert reading.grid == (12, 12) and reading.layers == (1, 3) and reading.coordinate_scale == pytest.approx(1 / 3)
    assert reading.windowed.grid == (4, 4) and reading.windowed.layers == (0, 2)
    torch.manual_seed(5)
    for window, ours in ((0, reading), (4, reading.windowed)):
        layer = m.Sam3ViTLayer(config, window_size=window)
        np.testing.assert_allclose(ours.positions(), layer.position_ids.double().numpy(), rtol=0, atol=1e-6)
        cos, sin = layer.rotary_emb(torch.zeros(1), layer.position_ids)
        close(np.cos(ours.angles()), cos[0], **TABLE)
        close(np.sin(ours.angles()), sin[0], **TABLE)
        q = torch.randn(1, 2, ours.grid[0] * ours.grid[1], 16)
        theirs, _ = m.apply_rotary_pos_emb_2d(q, q, cos, sin)
        close(ours.rotate(q.double().numpy()), theirs, **ROTATED)
    # SAM 3, its tracker and its video model hold this ViT a few sub-configs down
    vision = {"model_type": "sam3_vision_model", "backbone_config": config.to_dict()}
    for parent in (transformers.Sam3Config(vision_config=vision), transformers.Sam3TrackerConfig(vision_config=vision),
                   transformers.Sam3VideoConfig(detector_config={"model_type": "sam3", "vision_config": vision})):
        assert read_vision_config(parent.to_dict()) == reading, parent.model_type


def test_reading_loads_neither_torch_nor_numpy():
    import subprocess
    import sys

    code = ("import sys, posenc.configs.vision as v; v.read_vision_config({'model_type': 'qwen2_5_vl'}); "
            "print('torch' in sys.modules, 'numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_a_published_vision_config_with_the_parent_model_type():
    """Published Qwen2.5-VL files say "model_type": "qwen2_5_vl" inside vision_config; transformers
    builds Qwen2_5_VLVisionConfig from it all the same, and so does the reader."""
    from transformers import Qwen2_5_VLConfig

    vision = {"model_type": "qwen2_5_vl", "hidden_size": 1280, "num_heads": 16, "patch_size": 14,
              "spatial_merge_size": 2, "temporal_patch_size": 2, "window_size": 112, "depth": 32}
    theirs = Qwen2_5_VLConfig(vision_config=dict(vision)).vision_config
    assert theirs.model_type == "qwen2_5_vl_vision"
    reading = read_vision_config({"model_type": "qwen2_5_vl", "vision_config": vision})
    assert reading == read_vision_config(theirs) and reading.head_dim == 80


@pytest.mark.parametrize("model_type", sorted(set(VISION_MODEL_TYPES)))
def test_read_config_points_encoders_here_and_reads_parents_text(model_type):
    """read_config never says an encoder that rotates uses no RoPE (SAM 3's table entry names its CLIP
    text model, which does not rotate): it names read_vision_config; the parents with a language
    model keep their text reading."""
    from posenc.configs import read_config
    from posenc.configs.vision import ENCODER_MODEL_TYPES

    config = {"model_type": model_type, "hidden_size": 64, "num_attention_heads": 4}
    if model_type in ENCODER_MODEL_TYPES:
        with pytest.raises(ValueError, match="read_vision_config reads it") as refused:
            read_config(config)
        assert "uses no rotary" not in str(refused.value)
        read_vision_config({"model_type": model_type}, _kinds(model_type)[0])  # and it does
    else:  # the language model: read, or refused by name (GLM-4V's text layout), never "no RoPE"
        try:  # EXAONE 4.5's language model rotates only its sliding-window layers, none with this config: said so
            layers = read_config(config).layers.values()
            assert any(layer.rotates for layer in layers) or all(layer.note for layer in layers)
        except ValueError as refused:
            assert "uses no rotary" not in str(refused) and model_type in str(refused)


@pytest.mark.parametrize("keys", [{"num_heads": 4}, {"num_attention_heads": 4}, {"num_heads": 8, "num_attention_heads": 4}])
def test_a_tower_reads_its_heads_under_either_name_as_transformers_does(keys):
    from transformers import Qwen2_5_VLVisionConfig

    config = {"model_type": "qwen2_5_vl_vision", "hidden_size": 64, **keys}
    theirs = Qwen2_5_VLVisionConfig.from_dict(config)
    assert read_vision_config(config).num_heads == theirs.num_heads == 4


@pytest.mark.parametrize("extra", [{}, {"hidden_size": 64, "num_attention_heads": 4}, {"vision_config": {}},
                                   {"vision_config": None, "text_config": {}}])
def test_read_config_of_any_bare_model_type_reads_or_refuses_by_name(extra):
    """Reported: read_config({"model_type": "kimi_k25"}) and {"model_type": "step3p5"} raised a bare
    KeyError: 0. Not reproduced at 7745252 (both read: Kimi K2.5's text model as DeepSeek-V3, Step 3.5
    as one rotating full-attention type); pinned here for every model type of the table, bare and with a
    few keys: a reading, or a ValueError/TypeError, and never another exception."""
    from posenc.configs import from_config, read_config
    from posenc.configs._table import model_types

    for model_type in ("kimi_k25", "step3p5"):
        if model_type == "kimi_k25" and "hidden_size" in extra:  # its class ignores a top-level width, which
            # changes nothing here (DeepSeek-V3's rotated width is qk_rope_head_dim): read as without it
            assert read_config({"model_type": model_type, **extra}) == read_config({"model_type": model_type})
            continue
        assert any(layer.rotates for layer in read_config({"model_type": model_type, **extra}).layers.values())
    for model_type in [*model_types(), *VISION_MODEL_TYPES]:
        for read in (read_config, from_config, read_vision_config):
            try:
                read({"model_type": model_type, **extra})
            except (ValueError, TypeError):
                pass
