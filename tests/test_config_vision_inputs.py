"""Encoders whose reading depends on the kind of input: VideoLLaMA 3's vision tower against transformers.

VideoLLaMA 3 builds an image's ids with a merge size of 1 and a video's with 2 (its processors'
defaults; the model takes them with each input), and its config holds neither, so
``read_vision_config`` reads it only with ``input_kind``. Live: the vision model built tiny, run
whole on non-square grids with each kind's merge size, the cos and sin its layers get (captured
from its rotary module) against ``angles``, its ``apply_rotary_pos_emb_vision`` against ``rotate``;
the processors' merge sizes read from their classes. Tolerances: tests/vision_live.py.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import numpy as np
import pytest
import torch

from posenc.configs._vision_towers import BY_INPUT
from posenc.configs.vision import BY_INPUT_KIND, INPUT_KINDS, read_vision_config
from tests.vision_live import ROTATED, TABLE, close

pytestmark = pytest.mark.slow

MERGES = {"image": 1, "video": 2}  # the processors' class attributes, checked below


def _package_file(name: str) -> Path:
    spec = importlib.util.find_spec("transformers.models.video_llama_3")
    assert spec is not None and spec.submodule_search_locations
    return Path(next(iter(spec.submodule_search_locations))) / name


def _class_attribute(file: str, class_name: str, attribute: str) -> object:
    """A literal class attribute, read from the source (the torchvision processors cannot be imported here)."""
    tree = ast.parse(_package_file(file).read_text())
    node = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name)
    found = [s.value for s in node.body if isinstance(s, ast.Assign)
             and any(isinstance(t, ast.Name) and t.id == attribute for t in s.targets)]
    assert len(found) == 1, (class_name, attribute)
    return ast.literal_eval(found[0])


def test_the_merge_sizes_are_the_processors():
    from transformers.models.video_llama_3.image_processing_pil_video_llama_3 import (
        VideoLlama3ImageProcessorPil,
    )

    assert BY_INPUT == {"video_llama_3_vision": MERGES}
    assert VideoLlama3ImageProcessorPil.merge_size == MERGES["image"]
    assert _class_attribute("image_processing_video_llama_3.py", "VideoLlama3ImageProcessor", "merge_size") == 1
    assert _class_attribute("video_processing_video_llama_3.py", "VideoLlama3VideoProcessor", "merge_size") == 2
    # each frame is patched on its own (the video processor's temporal patch is one frame)
    assert _class_attribute("video_processing_video_llama_3.py", "VideoLlama3VideoProcessor", "temporal_patch_size") == 1


def _run_tower(config, grid: tuple[int, int, int], merge: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The cos and sin the tower's layers get on one input of ``grid`` (frames, rows, columns) at ``merge``."""
    from transformers import VideoLlama3VisionModel

    model = VideoLlama3VisionModel(config).eval()
    captured: list[tuple[torch.Tensor, torch.Tensor]] = []
    model.rotary_pos_emb.register_forward_hook(lambda module, args, out: captured.append(out))
    tokens = int(np.prod(grid))
    pixels = torch.randn(tokens, config.num_channels * config.patch_size ** 2)
    with torch.no_grad():
        model(pixel_values=pixels, grid_thw=torch.tensor([grid]), merge_sizes=torch.tensor([merge]))
    assert len(captured) == 1
    return captured[0]


@pytest.mark.parametrize("kind", INPUT_KINDS)
@pytest.mark.parametrize("grid", [(1, 4, 6), (2, 6, 4)])
def test_video_llama_3_live(kind: str, grid: tuple[int, int, int]):
    from transformers import VideoLlama3Config, VideoLlama3VisionConfig
    from transformers.models.video_llama_3 import modeling_video_llama_3 as modeling

    config = VideoLlama3VisionConfig(hidden_size=48, num_attention_heads=3, num_hidden_layers=1, patch_size=2,
                                     rope_parameters={"rope_type": "default", "rope_theta": 500.0})
    reading = read_vision_config(config, input_kind=kind)
    assert (reading.input_kind, reading.spatial_merge_size) == (kind, MERGES[kind])
    assert (reading.axes, reading.sections, reading.rotary_dim, reading.base) == (("row", "column"), (4, 4), 16, 500.0)
    cos, sin = _run_tower(config, grid, MERGES[kind])
    close(np.cos(reading.angles(grid)), cos, **TABLE)
    close(np.sin(reading.angles(grid)), sin, **TABLE)
    torch.manual_seed(9)
    q = torch.randn(int(np.prod(grid)), 3, 16)  # [tokens, heads, head_dim], as the attention holds them
    theirs, _ = modeling.apply_rotary_pos_emb_vision(q, q, cos, sin)
    close(reading.rotate(q.transpose(0, 1).double().numpy(), grid), theirs.transpose(0, 1), **ROTATED)
    # the parent reads its vision_config the same way, whatever that dict's model_type says
    parent = VideoLlama3Config(vision_config={**config.to_dict(), "model_type": "siglip_vision_model"}).to_dict()
    assert read_vision_config(parent, input_kind=kind) == reading


def test_the_two_kinds_differ_only_in_the_order_and_blocks_of_the_ids():
    image, video = (read_vision_config({"model_type": "video_llama_3_vision"}, input_kind=k) for k in INPUT_KINDS)
    assert image.positions((4, 6)).tolist()[:7] == [[0, 0], [0, 1], [0, 2], [0, 3], [0, 4], [0, 5], [1, 0]]
    assert video.positions((4, 6)).tolist()[:5] == [[0, 0], [0, 1], [1, 0], [1, 1], [0, 2]]  # 2 x 2 blocks
    assert sorted(map(tuple, image.positions((4, 6)))) == sorted(map(tuple, video.positions((4, 6))))
    assert (image.speeds, image.layout, image.rotary_dim) == (video.speeds, video.layout, video.rotary_dim)
    assert any("input_kind='video'" in note for note in image.notes)
    assert any("input_kind='image'" in note for note in video.notes)
    with pytest.raises(ValueError, match="multiples of spatial_merge_size=2"):
        video.positions((3, 6))
    assert image.positions((3, 5)).shape == (15, 2)  # an image's grid: any


@pytest.mark.parametrize("model_type", BY_INPUT_KIND)
def test_without_input_kind_it_is_refused_by_name(model_type: str):
    with pytest.raises(ValueError) as refused:
        read_vision_config({"model_type": model_type})
    message = str(refused.value)
    assert "input_kind is needed" in message and "input_kind='image'" in message and "input_kind='video'" in message
    with pytest.raises(ValueError, match="input_kind must be one of 'image', 'video', got 'frames'"):
        read_vision_config({"model_type": model_type}, input_kind="frames")


def test_input_kind_elsewhere_is_checked_and_changes_nothing():
    config = {"model_type": "qwen2_5_vl_vision"}
    assert read_vision_config(config, input_kind="video") == read_vision_config(config) \
        == read_vision_config(config, input_kind="image")
    with pytest.raises(ValueError, match="input_kind must be one of"):
        read_vision_config(config, input_kind="Image")


def test_a_head_dim_the_attention_does_not_use_is_refused_and_breaks_transformers_too():
    from transformers import VideoLlama3VisionConfig

    with pytest.raises(ValueError, match="head_dim=32 must equal hidden_size / num_attention_heads = 16"):
        read_vision_config({"model_type": "video_llama_3_vision", "hidden_size": 48, "num_attention_heads": 3,
                            "head_dim": 32}, input_kind="image")
    config = VideoLlama3VisionConfig(hidden_size=48, num_attention_heads=3, num_hidden_layers=1, patch_size=2,
                                     head_dim=32)
    with pytest.raises(RuntimeError):  # the rotary table is 32 wide, the attention's heads 16
        _run_tower(config, (1, 2, 2), 1)


def test_read_config_points_the_tower_here_and_reads_the_parents_language_model():
    from posenc.configs import read_config

    with pytest.raises(ValueError, match="read_vision_config reads it"):
        read_config({"model_type": "video_llama_3_vision", "hidden_size": 64, "num_attention_heads": 4})
    rope = read_config({"model_type": "video_llama_3", "text_config": {"model_type": "qwen2", "hidden_size": 64,
                                                                        "num_attention_heads": 4}})
    assert any(layer.rotates for layer in rope.layers.values())
