"""The Qwen-style vision towers of posenc/configs/_vision_towers.py against transformers' own code.

For each tower: its vision model built tiny from its config class (one layer), the merge size that
model builds its ids with (its own ``spatial_merge_size`` attribute, which some set to 1 whatever the
config says), those ids on two frames of a 4 x 6 grid compared with ``positions``, the model's own
rotary module's cos and sin with ``angles``, and its ``apply_rotary_pos_emb_vision`` with ``rotate``;
then the parent config read through its vision_config. Tolerances: tests/vision_live.py.
"""

from __future__ import annotations

import importlib
import inspect
import re

import numpy as np
import pytest
import torch

from posenc.configs._vision_towers import IDS_ROW_MAJOR, TOWER_PARENTS
from posenc.configs.vision import read_vision_config
from tests.vision_live import ROTATED, TABLE, check_tower_rotation, close

pytestmark = pytest.mark.slow



def _vision_model(package: str, config):
    """The model class of the tower's config (the one whose config_class it is), built tiny."""
    from transformers import PreTrainedModel

    module = importlib.import_module(f"transformers.models.{package}.modeling_{package}")
    found = [c for _, c in inspect.getmembers(module, inspect.isclass)
             if issubclass(c, PreTrainedModel) and getattr(c, "config_class", None) is type(config)
             and c.__module__ == module.__name__]
    assert found, f"no model class for {type(config).__name__}"
    return module, min(found, key=lambda c: len(c.__name__))(config).eval()


def _ids_merge(module, model) -> int:
    """The merge size the model builds its ids with: the literal in its call of get_vision_position_ids,
    or the model's own spatial_merge_size attribute where the call passes that."""
    calls = re.findall(r"position_ids = get_vision_position_ids\(\s*\w+,\s*(?:spatial_merge_size=)?([\w.]+)",
                       inspect.getsource(module))
    assert len(calls) == 1, calls
    if calls[0] == "1":
        return 1
    if calls[0] == "merge":  # Inkling 2: merge = self.config.spatial_merge_size, just before
        assert "merge = self.config.spatial_merge_size" in inspect.getsource(module)
        return model.config.spatial_merge_size
    assert calls[0] == "self.spatial_merge_size", calls
    return next(m.spatial_merge_size for m in model.modules() if hasattr(m, "spatial_merge_size"))


@pytest.mark.parametrize("parent, tower", sorted(TOWER_PARENTS.items()))
def test_tower_live(parent, tower):
    import transformers
    from transformers import CONFIG_MAPPING
    from transformers.vision_utils import get_vision_position_ids

    heads_key = "num_heads" if "num_heads" in CONFIG_MAPPING[tower]().to_dict() else "num_attention_heads"
    defaults = CONFIG_MAPPING[tower]().to_dict()
    kwargs = dict(hidden_size=48, **{heads_key: 3}, depth=1, num_hidden_layers=1,
                  rope_parameters={"rope_type": "axial", "rope_theta": 500.0})
    kwargs.update({key: value for key, value in (("adapter_in_dim", 48), ("per_layer_config", {})) if key in defaults})
    config = CONFIG_MAPPING[tower](**kwargs)  # Dots3 ties its adapter to the width and sets layers 25+ by default
    reading = read_vision_config(config)
    layout = "interleaved" if tower == "inkling2_vision" else "half"  # Inkling 2 rotates pairwise
    assert (reading.head_dim, reading.sections, reading.base, reading.layout) == (16, (4, 4), 500.0, layout)
    module, model = _vision_model(parent, config)
    merge = _ids_merge(module, model)
    assert (merge == 1) == (tower in IDS_ROW_MAJOR) and reading.spatial_merge_size in (merge, None)
    grid_thw = torch.tensor([[2, 4, 6]])  # two frames of a 4 x 6 grid
    ids = get_vision_position_ids(grid_thw, merge) + (reading.coordinates == "index_from_one")  # Inkling 2 adds 1
    order = [("row", "column").index(axis) for axis in reading.axes]  # the ids are (row, column)
    np.testing.assert_array_equal(reading.positions((2, 4, 6)), ids[:, order].double().numpy())
    rotary = next(m for m in model.modules() if type(m).__name__.endswith("VisionRotaryEmbedding"))
    check_tower_rotation(reading, rotary, module.apply_rotary_pos_emb_vision, ids, seed=7)
    parent_config = CONFIG_MAPPING[parent](vision_config=config.to_dict())
    assert type(parent_config.vision_config) is type(config)  # a fixed class, as _FIXED_CHILDREN says
    assert read_vision_config(parent_config.to_dict()) == reading
    assert hasattr(transformers, type(config).__name__)


def test_an_alias_is_what_the_class_keeps():
    """Inkling 2's config maps adapter_merge_size onto spatial_merge_size (attribute_map): given both, the alias wins."""
    from transformers import CONFIG_MAPPING

    config = {"model_type": "inkling2_vision", "adapter_merge_size": 3, "spatial_merge_size": 4, "native_patch_size": 10}
    theirs = CONFIG_MAPPING["inkling2_vision"].from_dict(config)
    reading = read_vision_config(config)
    assert reading.spatial_merge_size == theirs.spatial_merge_size == 3 and reading.patch_size == (10, 10) == (
        theirs.patch_size, theirs.patch_size)


def test_row_major_towers_ignore_the_configs_merge_size():
    """PaddleOCR-VL keeps spatial_merge_size 2 for its projector, yet its ids are row-major."""
    reading = read_vision_config({"model_type": "paddleocr_vl", "vision_config": {"spatial_merge_size": 2}})
    assert reading.token_order == "row_major" and reading.spatial_merge_size is None
    assert reading.positions((3, 5))[:6].tolist() == [[0, 0], [0, 1], [0, 2], [0, 3], [0, 4], [1, 0]]


def test_minimax_m3_vl_tower_live():
    """MiniMax-M3-VL's tower rotates in 3-D: a third of the pairs each for frame, row and column, the rest unturned."""
    from transformers import MiniMaxM3VLConfig, MiniMaxM3VLVisionConfig
    from transformers.vision_utils import get_vision_position_ids

    config = MiniMaxM3VLVisionConfig(hidden_size=48, num_attention_heads=3, num_hidden_layers=1,
                                     rope_parameters={"rope_type": "axial", "rope_theta": 300.0})
    reading = read_vision_config(config)
    assert (reading.axes, reading.sections, reading.rotary_dim, reading.head_dim) == (("frame", "row", "column"),
                                                                                      (2, 2, 2), 12, 16)
    module, model = _vision_model("minimax_m3_vl", config)
    assert model.include_temporal and model.spatial_merge_size == 2  # modeling_minimax_m3_vl.py:1215-1217
    ids = get_vision_position_ids(torch.tensor([[2, 4, 6]]), 2, include_temporal=True)
    np.testing.assert_array_equal(reading.positions((2, 4, 6)), ids.double().numpy())
    cos, sin = model.rotary_emb(torch.zeros(1), ids)
    close(np.cos(reading.angles((2, 4, 6))), cos, **TABLE)
    close(np.sin(reading.angles((2, 4, 6))), sin, **TABLE)
    torch.manual_seed(8)
    q = torch.randn(48, 3, 16)
    theirs, _ = module.apply_rotary_pos_emb_vision(q, q, cos, sin)
    close(reading.rotate(q.transpose(0, 1).double().numpy(), (2, 4, 6)), theirs.transpose(0, 1), **ROTATED)
    torch.testing.assert_close(theirs[..., 12:], q[..., 12:])  # the last 4 features pass, as the notes say
    assert read_vision_config(MiniMaxM3VLConfig(vision_config=config.to_dict()).to_dict()) == reading


@pytest.mark.parametrize("model_type", ["mlcd_vision_model", "mlcd"])
def test_mlcd_live(model_type):
    """MLCD's encoder run whole on a 3 x 5 grid: the cos and sin its layers get (captured) are the reading's, after
    the class token's learned angles."""
    from transformers import CONFIG_MAPPING, MLCDVisionModel

    config = CONFIG_MAPPING[model_type](hidden_size=48, num_attention_heads=3, num_hidden_layers=1, intermediate_size=32,
                                        image_size=16, patch_size=4,
                                        rope_parameters={"rope_type": "axial", "rope_theta": 500.0})
    reading = read_vision_config(config.to_dict() | {"model_type": model_type})
    assert (reading.token_order, reading.layout, reading.sections) == ("row_major", "half", (4, 4))
    model = MLCDVisionModel(config).eval()
    seen = {}
    model.encoder.register_forward_pre_hook(lambda m, a, kw: seen.update(kw), with_kwargs=True)
    with torch.no_grad():
        model(torch.randn(1, 3, 12, 20))  # 3 x 5 patches of 4 pixels
    cos, sin = seen["position_embeddings"]
    close(np.cos(reading.angles((3, 5))), cos[1:], **TABLE)
    close(np.sin(reading.angles((3, 5))), sin[1:], **TABLE)
    learned = torch.cat([model.class_pos_emb, model.class_pos_emb], -1)[0]
    torch.testing.assert_close(cos[0], learned.cos())  # the class token: learned angles, as `unrotated` says
    torch.manual_seed(9)
    q = torch.randn(16, 3, 16)
    module = importlib.import_module("transformers.models.mlcd.modeling_mlcd")
    theirs, _ = module.apply_rotary_pos_emb_vision(q, q, cos, sin)
    close(reading.rotate(q[1:].transpose(0, 1).double().numpy(), (3, 5)), theirs[1:].transpose(0, 1), **ROTATED)


def test_gemma4_vision_live():
    """Gemma 4's encoder: (x, y) ids from its image processor's meshgrid, a table [x, x, y, y], each half of the head
    rotated on its own (apply_multidimensional_rope), on a 3 x 5 grid."""
    from transformers import Gemma4Config, Gemma4VisionConfig

    m = importlib.import_module("transformers.models.gemma4.modeling_gemma4")
    config = Gemma4VisionConfig(hidden_size=48, num_attention_heads=3, head_dim=16, patch_size=4,
                                rope_parameters={"rope_type": "default", "rope_theta": 300.0})
    reading = read_vision_config(config)
    assert (reading.axes, reading.sections, reading.layout, reading.base) == (("column", "row"), (4, 4), "half_per_axis",
                                                                                 300.0)
    rows, cols = 3, 5  # image_processing_gemma4.py:252-257
    ids = torch.stack(torch.meshgrid(torch.arange(cols), torch.arange(rows), indexing="xy"), dim=-1).reshape(-1, 2)
    np.testing.assert_array_equal(reading.positions((rows, cols)), ids.double().numpy())
    cos, sin = m.Gemma4VisionRotaryEmbedding(config)(torch.zeros(1), ids[None])
    close(np.cos(reading.angles((rows, cols))), cos[0], **TABLE)
    close(np.sin(reading.angles((rows, cols))), sin[0], **TABLE)
    torch.manual_seed(10)
    q = torch.randn(1, 15, 3, 16)  # [batch, tokens, heads, head_dim], as its attention holds them
    theirs = m.apply_multidimensional_rope(q, cos, sin, ids[None], unsqueeze_dim=2)
    close(reading.rotate(q[0].transpose(0, 1).double().numpy(), (rows, cols)), theirs[0].transpose(0, 1), **ROTATED)
    assert read_vision_config(Gemma4Config(vision_config=config.to_dict()).to_dict()) == reading


def test_glm46v_reads_its_vision_config_as_transformers_builds_it():
    """GLM-4.6V's vision_config is an AutoConfig, GLM-4V's tower by default (configuration_glm46v.py:55-58), built by
    AutoModel (modeling_glm46v.py:68): read as that tower, from the dict's own model_type."""
    from transformers import MODEL_MAPPING, Glm4vVisionConfig, Glm46VConfig

    vision = Glm4vVisionConfig(hidden_size=48, num_heads=3, depth=1).to_dict()
    parent = Glm46VConfig(vision_config=vision)
    assert type(parent.vision_config) is Glm4vVisionConfig
    assert MODEL_MAPPING[Glm4vVisionConfig].__name__ == "Glm4vVisionModel"
    assert read_vision_config(parent.to_dict()) == read_vision_config(vision)
    assert read_vision_config({"model_type": "glm46v"}) == read_vision_config(Glm46VConfig().vision_config)


def test_edgetam_video_memory_attention_live():
    """EdgeTAM's memory attention: queries on one grid (6 wide, 4 high), the cross-attention's keys on another (3 x 2),
    each memory frame's spatial tokens turned at the key ids, the tokens before them and the object pointers not."""
    from transformers import EdgeTamVideoConfig

    m = importlib.import_module("transformers.models.edgetam_video.modeling_edgetam_video")
    config = EdgeTamVideoConfig(memory_attention_hidden_size=32, memory_attention_num_attention_heads=2,
                                memory_attention_num_layers=1, memory_attention_rope_feat_sizes=[6, 4],
                                memory_attention_rope_k_sizes=[3, 2])
    reading = read_vision_config(config)
    assert (reading.grid, reading.keys.grid, reading.axes, reading.head_dim) == ((4, 6), (2, 3), ("column", "row"), 16)
    attention = m.EdgeTamVideoMemoryAttention(config)
    np.testing.assert_array_equal(reading.positions(), attention.position_ids.double().numpy())
    np.testing.assert_array_equal(reading.keys.positions(), attention.position_ids_k.double().numpy())
    cos, sin = attention.rotary_emb(torch.zeros(1), attention.position_ids)
    cos_k, sin_k = attention.rotary_emb(torch.zeros(1), attention.position_ids_k)
    close(np.cos(reading.angles()), cos[0], **TABLE)
    close(np.sin(reading.keys.angles()), sin_k[0], **TABLE)
    torch.manual_seed(11)
    q = torch.randn(1, 2, 24, 16)
    k = torch.randn(1, 2, 2 * (1 + 6) + 2, 16)  # two memory frames of 1 + 6 tokens, then 2 object pointers
    q_rot, k_rot = m.apply_rotary_pos_emb_2d_cross_attn(q, k, cos, sin, cos_k, sin_k, num_k_exclude_rope=2,
                                                        repeat_freqs_k=2)
    close(reading.rotate(q.double().numpy()), q_rot, **ROTATED)
    for frame in range(2):  # each frame's spatial tokens at the key ids; the token before them unturned
        start = frame * 7
        close(reading.keys.rotate(k[:, :, start + 1:start + 7].double().numpy()), k_rot[:, :, start + 1:start + 7],
               **ROTATED)
        torch.testing.assert_close(k_rot[:, :, start], k[:, :, start])
    torch.testing.assert_close(k_rot[:, :, -2:], k[:, :, -2:])  # the object pointers
