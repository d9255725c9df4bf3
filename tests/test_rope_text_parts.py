"""Text models whose rotation the table's generator derives from what their code does, and the
refusals where posenc's reading cannot express it (issue 33).

* NanoChat turns each pair the other way (``rotate_half`` with both signs flipped,
  modeling_nanochat.py:169-173): refused, with the reason.
* GLM-5-Next's and Inkling 2's text models do not rotate (GLM-5-Next's config demands
  ``qk_rope_head_dim`` 0, configuration_glm5_next.py:223-225; Inkling 2 adds a learned bias by
  distance, modeling_inkling2.py:165-188); only their vision towers rotate.
* BLT's own settings reach no rotary module: its patcher, local encoder and decoder and global
  transformer rotate, each with its own config (modeling_blt.py:573, 684, 761, 852).
* M-RoPE sections that transformers' rotary module fails on are refused (GLM-4V's and Qwen2-VL's
  ``split``, HunYuan-VL's ``len(None)``); with sections that fit, the reading is checked live.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
import torch

from posenc.configs import read_config
from posenc.configs._table import TABLE_PATH

pytest.importorskip("transformers")

from tests import rope_live
from tools.rope_model_types import derive


def _table() -> dict[str, Any]:
    return json.loads(TABLE_PATH.read_text())["model_types"]


def _defaults(model_type: str) -> Any:
    return derive._text_config(derive._model_types()[model_type])


def test_nanochat_turns_its_pairs_the_other_way_and_is_refused() -> None:
    from posenc.rope import RotaryEmbedding

    assert _table()["nanochat"]["turns_backward"] == "half" and _table()["nanochat"]["layout"] is None
    text = _defaults("nanochat")
    dim = text.hidden_size // text.num_attention_heads
    ref = rope_live.Reference(text)
    positions = torch.tensor([0, 1, 5, 100, 2047])
    generator = torch.Generator().manual_seed(1)
    q, k = (torch.randn(1, 2, 5, dim, dtype=torch.float64, generator=generator) for _ in "qk")
    theirs, _ = ref.rotate(q, k, positions, None)
    ours = RotaryEmbedding(dim=dim, base=text.rope_parameters["rope_theta"], layout="half").double()
    half = dim // 2
    swap = torch.cat([torch.arange(half, 2 * half), torch.arange(half)])  # (a, b) -> (b, a)
    # the other way round: posenc's rotation of the halves swapped, swapped back; not posenc's rotation
    backward = ours(q[..., swap], k[..., swap], positions)[0][..., swap]
    tolerance = rope_live._tolerance(positions, ours.inv_freq)  # transformers' angles are float32
    torch.testing.assert_close(theirs.double(), backward, atol=tolerance, rtol=0)
    assert not torch.allclose(theirs.double(), ours(q, k, positions)[0], atol=1e-2)
    for layout in (None, "half", "interleaved"):
        with pytest.raises(ValueError, match=r"turns each pair of the 'half' layout the other way, by -m theta") as no:
            read_config(text, layout=layout)
        assert "layout is needed" not in str(no.value)


@pytest.mark.parametrize("model_type", ["glm5_next_text", "inkling2_text"])
def test_a_text_model_whose_attention_does_not_rotate_says_so(model_type: str) -> None:
    entry = _table()[model_type]
    tower = model_type.removesuffix("_text").title().replace("_", "") + "VisionAttention"
    assert entry["rope"] is False and entry["rotates_elsewhere"] == [tower]
    with pytest.raises(ValueError, match="uses no rotary position embedding: no module of the model transformers "
                                         "builds from it rotates") as no:
        read_config(_defaults(model_type))
    assert entry["rotates_elsewhere"][0] in str(no.value)


def test_glm5_next_text_demands_no_rope() -> None:
    import transformers

    with pytest.raises(Exception, match="Expecting NoPE"):  # configuration_glm5_next.py:223-225
        transformers.AutoConfig.for_model("glm5_next_text", qk_rope_head_dim=64)


def test_a_vision_part_refusal_gives_its_reason() -> None:
    """read_config appends posenc.configs._vision_refused.refusal to its refusal of those types."""
    from posenc.configs._vision_refused import refusal

    for model_type in ("deepseek_ocr2_vision", "glm_image_vision", "lightglue"):
        with pytest.raises(ValueError) as no:
            read_config({"model_type": model_type, "hidden_size": 64, "num_attention_heads": 4})
        assert refusal(model_type) and str(no.value).endswith(refusal(model_type))


def test_blt_points_to_its_four_parts_each_read_live() -> None:
    import transformers

    assert _table()["blt"]["rotating_parts"] == {"patcher_config": "blt_patcher", "encoder_config": "blt_local_encoder",
                                                 "decoder_config": "blt_local_decoder",
                                                 "global_config": "blt_global_transformer"}
    config = transformers.BltConfig().to_dict()
    with pytest.raises(ValueError, match="its own code does not rotate, but its parts do .patcher_config: blt_patcher"):
        read_config(config)
    for key in _table()["blt"]["rotating_parts"]:
        rope_live.check_config(config[key], torch.tensor([0, 1, 7, 600, 30000]))


# M-RoPE models whose class defaults transformers' own rotary module fails on
SECTIONS_DO_NOT_FIT = {
    "glm4v_text": r"the sections transformers' rotary module uses without .* \(\[8, 12, 12\]\) must sum to 64",
    "glm_image_text": r"the sections transformers' rotary module uses without .* \(\[8, 12, 12\]\) must sum to 64",
    "hunyuan_vl_text": r"config\['rope_parameters'\]\['mrope_section'\] is needed for model type 'hunyuan_vl_text'",
}


def _fitted(text: Any, sections: list[int]) -> Any:
    fitted = copy.deepcopy(text)
    fitted.rope_parameters = {**text.rope_parameters, "mrope_section": sections}
    return fitted


@pytest.mark.parametrize("model_type", sorted(SECTIONS_DO_NOT_FIT))
def test_m_rope_sections_transformers_fails_on_are_refused(model_type: str) -> None:
    text = _defaults(model_type)
    with pytest.raises((RuntimeError, TypeError)):  # transformers' own module, at the class defaults
        rope_live.Reference(text).runs("full_attention", 128)
    with pytest.raises(ValueError, match=SECTIONS_DO_NOT_FIT[model_type]):
        read_config(text)
    rope = rope_live.check_config(_fitted(text, [16, 24, 24]), torch.tensor([0, 1, 5, 100, 5000, 40000]))
    assert rope.layers["full_attention"].layout == _table()[model_type]["layout"]


def test_given_m_rope_sections_are_checked_as_transformers_splits_them() -> None:
    text = _defaults("qwen2_vl_text")
    assert _table()["qwen2_vl_text"]["mrope_sections"] == {"default": [16, 24, 24], "sum": True}
    wrong = _fitted(text, [16, 24, 23])
    with pytest.raises(RuntimeError, match="split_with_sizes"):
        rope_live.Reference(wrong).runs("full_attention", 128)
    with pytest.raises(ValueError, match=r"config\['rope_parameters'\]\['mrope_section'\] \(\[16, 24, 23\]\) must "
                                         r"sum to 64, the number of frequencies of the rotated width 128"):
        read_config(wrong)
    with pytest.raises(TypeError, match=r"must be a list of integers >= 0, got \[16, 24, 24.0\]"):
        read_config(_fitted(text, [16, 24, 24.0]))  # type: ignore[list-item]
    rope_live.check_config(_fitted(text, [8, 28, 28]), torch.tensor([0, 3, 4000]))
    # Qwen3-VL's strided slices take any sections: nothing recorded, nothing refused
    assert "mrope_sections" not in _table()["qwen3_vl_text"]


def test_cohere_compass_text_rotates_with_given_parameters_only_and_is_refused_saying_so() -> None:
    """Its text model rotates (half layout, the usual rungs, for text tokens) with rope_parameters a
    config gives per layer type; at the class defaults there are none and its rotary module fails."""
    import transformers
    from transformers.models.cohere_compass import modeling_cohere_compass as theirs

    from posenc.rope import RotaryEmbedding

    assert _table()["cohere_compass_text"]["rope_parameters_given_only"] is True
    text = _defaults("cohere_compass_text")
    assert text.rope_parameters == {}
    with pytest.raises(KeyError):
        theirs.CohereCompassRotaryEmbedding(text)
    with pytest.raises(ValueError, match="its attention rotates q and k with the rope_parameters a config gives, and "
                                         "its config class fills none"):
        read_config(text)
    given = transformers.AutoConfig.for_model(
        "cohere_compass_text", hidden_size=64, num_attention_heads=4, head_dim=16, num_hidden_layers=2,
        layer_types=["full_attention", "full_attention"],
        rope_parameters={"full_attention": {"rope_type": "default", "rope_theta": 1e4}})
    rotary = theirs.CohereCompassRotaryEmbedding(given).double()
    positions = torch.tensor([0, 1, 9, 300])
    cos, sin = rotary(torch.zeros(1, 4, 1, dtype=torch.float64), positions[None, :], "full_attention")
    generator = torch.Generator().manual_seed(2)
    q, k = (torch.randn(1, 2, 4, 16, dtype=torch.float64, generator=generator) for _ in "qk")
    their_q, _ = theirs.apply_rotary_pos_emb(q, k, cos, sin)
    our_q, _ = RotaryEmbedding(dim=16, base=1e4, layout="half").double()(q, k, positions)
    torch.testing.assert_close(their_q.double(), our_q, atol=1e-5, rtol=0)
    with pytest.raises(ValueError, match="posenc does not read it yet"):
        read_config(given)


def test_ernie_4_5_vl_stores_its_rungs_permuted_and_rotates_text_in_rung_order() -> None:
    """Its rotary module keeps the rungs of its first two sections split by parity (even ones, then odd
    ones: modeling_ernie4_5_vl_moe.py:94-100) and its forward interleaves the two back (:119-126): for
    text tokens the rotation is posenc's interleaved layout, rungs in order."""
    import transformers
    from transformers.models.ernie4_5_vl_moe import modeling_ernie4_5_vl_moe as theirs

    assert _table()["ernie4_5_vl_moe_text"]["layout"] == "interleaved"
    # paired: its forward stacks the first two sections (torch.stack), so they must be equal (:123-126)
    assert _table()["ernie4_5_vl_moe_text"]["mrope_sections"] == {"default": [22, 22, 20], "sum": True, "paired": True}
    text = _defaults("ernie4_5_vl_moe_text")
    stored = theirs.Ernie4_5_VLMoeTextRotaryEmbedding(text).inv_freq
    assert not torch.equal(stored, stored.sort(descending=True).values)  # permuted, as read above
    rope_live.check_config(text, torch.tensor([0, 1, 5, 100, 5000, 40000]))
    small = transformers.AutoConfig.for_model("ernie4_5_vl_moe_text", hidden_size=64, num_attention_heads=4)
    with pytest.raises(RuntimeError):  # 8 rungs: the default sections do not fit
        theirs.Ernie4_5_VLMoeTextRotaryEmbedding(small)
    with pytest.raises(ValueError, match=r"\(\[22, 22, 20\]\) must sum to 8"):
        read_config(small)
    rope_live.check_config(_fitted(small, [2, 2, 4]), torch.tensor([0, 3, 4000]))
