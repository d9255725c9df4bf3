"""posenc.inspect on vision and video encoders: the reading of `read_vision_config` in words, alone for
an encoder's own config, after the text reading for a parent with a language model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from posenc._inspect_vision import is_encoder, reads_vision
from posenc.configs.vision import (
    BY_INPUT_KIND,
    ENCODER_MODEL_TYPES,
    VISION_MODEL_TYPES,
    read_vision_config,
)
from posenc.inspect import describe, main

QWEN25_VL = {"model_type": "qwen2_5_vl", "hidden_size": 3584, "num_attention_heads": 28, "num_hidden_layers": 28,
             "rope_theta": 1000000.0, "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]}}


def test_an_encoder_gets_its_vision_reading_instead_of_a_refusal() -> None:
    text = describe({"model_type": "dinov3_vit", "hidden_size": 384, "num_attention_heads": 6})
    lines = text.splitlines()
    assert lines[0] == "vision encoder dinov3_vit: 2-D RoPE over row, column"
    rope = read_vision_config({"model_type": "dinov3_vit", "hidden_size": 384, "num_attention_heads": 6})
    assert f"  axes: row {rope.sections[0]} pairs, column {rope.sections[1]} pairs (in this order in the head)" in lines
    assert f"  rotated width: {rope.rotary_dim} of {rope.head_dim} features, 6 heads" in lines
    assert "  base: 100; every angle x 2 pi" in lines  # DINOv3's coordinates in [-1, 1]
    assert all(f"  note: {note}" in lines for note in rope.notes)


def test_a_parent_keeps_its_text_reading_and_adds_the_vision_one() -> None:
    text = describe(QWEN25_VL)
    first, vision = text.split("\nvision encoder ")
    assert first.startswith("model type qwen2_5_vl")  # the language model, as before
    assert vision.startswith("qwen2_5_vl_vision: 2-D RoPE over row, column")


def test_sam3s_windowed_layers_are_a_reading_of_their_own() -> None:
    lines = describe({"model_type": "sam3"}).splitlines()
    windowed = [line for line in lines if line.startswith("windowed layers of")]
    assert len(windowed) == 1 and "2-D RoPE" in windowed[0]


@pytest.mark.parametrize("model_type", VISION_MODEL_TYPES)
def test_every_vision_model_type_is_described(model_type: str) -> None:
    config = {"model_type": model_type}
    assert reads_vision(config) and is_encoder(config) == (model_type in ENCODER_MODEL_TYPES)
    text = describe(config)
    vision = read_vision_config(config, "image" if model_type in BY_INPUT_KIND else None)
    assert f"vision encoder {vision.model_type}" in text and f"{len(vision.axes)}-D RoPE over" in text
    if model_type in ENCODER_MODEL_TYPES:  # read_config refuses an encoder: the vision reading alone
        assert text.startswith("vision encoder ")
    else:  # a parent: its language model's reading, or why posenc does not read it, first
        assert text.startswith(("model type ", "language model not read: "))


def test_a_parent_whose_language_model_is_not_read_still_shows_its_encoder() -> None:
    # GLM-5-Next's language model does not rotate (only its vision tower does): read_config refuses it
    text = describe({"model_type": "glm5_next"})
    first = text.splitlines()[0]
    assert first.startswith("language model not read: ") and "does not rotate" in first
    assert "\nvision encoder glm5_next_vision: 2-D RoPE" in text


def test_layer_type_asks_for_the_text_reading_alone() -> None:
    with pytest.raises(ValueError, match="read_vision_config"):
        describe({"model_type": "dinov3_vit"}, layer_type="full_attention")
    text = describe(QWEN25_VL, layer_type="full_attention")
    assert "vision encoder" not in text


def test_a_bad_vision_config_is_named_on_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "dinov3_vit", "hidden_size": 384, "num_attention_heads": 5}))
    assert main([str(path)]) == 2
    assert "num_attention_heads" in capsys.readouterr().err


def test_videollama_3_is_described_for_images_then_for_videos() -> None:
    """Its ids depend on the kind of input (tests/test_config_vision_inputs.py): both readings, each labelled."""
    lines = describe({"model_type": "video_llama_3_vision"}).splitlines()
    heads = [line for line in lines if line.startswith("vision encoder ")]
    assert heads == ["vision encoder video_llama_3_vision, for images: 2-D RoPE over row, column",
                     "vision encoder video_llama_3_vision, for videos: 2-D RoPE over row, column"]
    image, video = lines[lines.index(heads[0]):lines.index(heads[1])], lines[lines.index(heads[1]):]
    assert "  grid: each input's own" in image
    assert "  grid: each input's own (rows and columns multiples of 2); tokens in 2 x 2 blocks, each row by row" in video
    for kind, part in (("image", image), ("video", video)):
        reading = read_vision_config({"model_type": "video_llama_3_vision"}, input_kind=kind)
        assert [line for line in part if line.startswith("  note: ")] == [f"  note: {n}" for n in reading.notes]
