"""Keys a config gives under a legacy name its class maps onto them (``legacy_names``).

HunYuan-VL's text config maps ``attention_head_dim`` onto ``head_dim``
(configuration_hunyuan_vl.py:156, "legacy aliases that some Tencent checkpoints
persist on disk"), and Voxtral Realtime's encoder ``d_model``,
``encoder_attention_heads`` and ``encoder_layers`` onto the canonical sizes. Read
without the map, a head width given as ``attention_head_dim`` fell back to
hidden_size / heads, and the encoder's layers were not counted. Expected values
come from transformers itself: the class built from the same dict, and its
rotary module's frequencies.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import transformers

from posenc.configs import read_config
from tests.test_explorer_ports import needs_node, run_js

ROOT = Path(__file__).resolve().parents[1]
HUNYUAN = {"model_type": "hunyuan_vl_text", "hidden_size": 1024, "num_attention_heads": 8,
           "attention_head_dim": 64,
           "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [16, 8, 8]}}
VOXTRAL = {"model_type": "voxtral_realtime_encoder", "d_model": 512, "encoder_attention_heads": 8,
           "encoder_layers": 4}


def _built(config: dict) -> transformers.PretrainedConfig:
    rest = {key: value for key, value in config.items() if key != "model_type"}
    return transformers.AutoConfig.for_model(config["model_type"]).__class__.from_dict(rest)


def test_hunyuan_vl_reads_attention_head_dim_as_its_class_does() -> None:
    from transformers.models.hunyuan_vl import modeling_hunyuan_vl

    built = _built(HUNYUAN)
    rotary = modeling_hunyuan_vl.HunYuanVLRotaryEmbedding(built)
    layer = read_config(HUNYUAN).layers["full_attention"]
    assert built.head_dim == 64 != 1024 // 8
    assert layer.dim == layer.rotary_dim == 2 * rotary.inv_freq.numel() == built.head_dim


def test_voxtral_encoder_counts_its_layers_under_their_legacy_name() -> None:
    built = _built(VOXTRAL)
    rope = read_config(VOXTRAL)
    (layer,) = rope.layers.values()
    assert len(layer.layers) == built.num_hidden_layers == 4
    assert layer.dim == built.head_dim


def test_two_legacy_names_that_disagree_are_refused() -> None:
    # transformers keeps whichever comes last: the answer depends on the order of the keys
    cls = transformers.AutoConfig.for_model("voxtral_realtime_encoder").__class__
    first = cls.from_dict({"encoder_attention_heads": 8, "num_key_value_heads": 4})
    second = cls.from_dict({"num_key_value_heads": 4, "encoder_attention_heads": 8})
    assert (first.num_attention_heads, second.num_attention_heads) == (4, 8)
    with pytest.raises(ValueError, match=r"config\['encoder_attention_heads'\] \(8\) and "
                                         r"config\['num_key_value_heads'\] \(4\) both set "
                                         r"'num_attention_heads'.*give one"):
        read_config({**VOXTRAL, "num_key_value_heads": 4})


def test_the_table_marks_the_classes_whose_map_renames_a_size() -> None:
    table = json.loads((ROOT / "posenc" / "configs" / "model_types.json").read_text())["model_types"]
    sizes = {"hidden_size", "num_attention_heads", "head_dim", "max_position_embeddings", "num_hidden_layers"}
    for model_type in ("hunyuan_vl_text", "voxtral_realtime_encoder"):
        names = transformers.AutoConfig.for_model(model_type).__class__.attribute_map
        expected = {alias: key for alias, key in names.items() if key in sizes and alias not in sizes}
        assert table[model_type]["legacy_names"] == expected


@needs_node
@pytest.mark.parametrize("config", [HUNYUAN, VOXTRAL, {**VOXTRAL, "num_key_value_heads": 4}])
def test_the_browser_port_reads_them_alike(tmp_path: Path, config: dict) -> None:
    code = ("(c) => { try { const r = window.posencExplorer.ropeReadConfig(c); "
            "return Object.values(r.layers).map((l) => [l.dim, l.layers.length]); } "
            "catch (e) { return e.message; } }")
    try:
        expected: object = [[layer.dim, len(layer.layers)] for layer in read_config(config).layers.values()]
    except ValueError as error:
        expected = str(error)
    assert run_js(tmp_path, code, config) == expected


# ---------------------------------------------------------------- a legacy key for layer_types (Granite 4)
GRANITE = {"model_type": "granitemoehybrid", "hidden_size": 256, "num_attention_heads": 4, "num_hidden_layers": 4,
           "position_embedding_type": "rope", "layers_block_type": ["mamba", "attention", "mamba", "attention"]}


def test_granite4s_layers_block_type_is_its_layer_types() -> None:
    # Granite 4's class maps layers_block_type onto layer_types (configuration_granitemoehybrid.py:54) and the
    # base class renames mamba and attention; read_config read every layer as the class default, mamba
    built = _built(GRANITE)
    rope = read_config(GRANITE)
    assert [name.removesuffix(":nope") for name in rope.pattern] == list(built.layer_types) == [
        "linear_attention", "full_attention", "linear_attention", "full_attention"]
    assert rope.layers["full_attention"].rotates and not rope.layers["linear_attention"].rotates
    # given beside layer_types, the legacy key wins, in either order, as in the class
    for config in ({**GRANITE, "layer_types": ["full_attention"] * 4},
                   {"layer_types": ["full_attention"] * 4, **GRANITE}):
        assert list(_built(config).layer_types) == list(built.layer_types)
        assert read_config(config).pattern == rope.pattern


def test_the_legacy_layer_keys_are_every_class_that_maps_one_onto_layer_types() -> None:
    from transformers.models.auto.configuration_auto import (
        CONFIG_MAPPING,
        CONFIG_MAPPING_NAMES,
    )

    from posenc.configs._plan import LEGACY_LAYER_KEYS

    found = {model_type: key for model_type in CONFIG_MAPPING_NAMES
             for key, name in (getattr(CONFIG_MAPPING[model_type], "attribute_map", None) or {}).items()
             if name == "layer_types"}
    assert found == LEGACY_LAYER_KEYS


@pytest.mark.parametrize("value", ["rope", "nope", None, "absent"])
def test_granite4_rotates_only_with_position_embedding_type_rope(value: object) -> None:
    # its model builds the rotary module only for "rope" (modeling_granitemoehybrid.py:1056, default None) and
    # its attention rotates only with position embeddings: built live, the module is there exactly then
    config = {k: v for k, v in GRANITE.items() if k != "position_embedding_type"}
    if value != "absent":
        config["position_embedding_type"] = value
    small = {"vocab_size": 32, "intermediate_size": 64, "mamba_n_heads": 8, "mamba_d_state": 8}
    model = transformers.AutoModel.from_config(_built({**config, **small}))
    rotates = read_config(config).layers["full_attention"].rotates
    assert rotates == (model.rotary_emb is not None) == (value == "rope")
    with pytest.raises(TypeError, match=r"config\['position_embedding_type'\] must be a string such as 'rope'"):
        read_config({**config, "position_embedding_type": 5})


@needs_node
def test_the_browser_port_reads_granite4_alike(tmp_path: Path) -> None:
    from posenc.configs._plan import LEGACY_LAYER_KEYS
    from posenc.configs._refusals import ROPE_SWITCHES
    from tests.test_explorer_ports import port_against_posenc

    assert run_js(tmp_path, "() => window.posencRopePlan.LEGACY_LAYER_KEYS") == LEGACY_LAYER_KEYS
    assert run_js(tmp_path, "() => window.posencRopePlan.ROPE_SWITCHES") == ROPE_SWITCHES
    cases = [GRANITE, {**GRANITE, "layer_types": ["full_attention"] * 4}, {**GRANITE, "layers_block_type": "mamba"},
             {**GRANITE, "layers_block_type": [5, 6, 7, 8]}, {**GRANITE, "position_embedding_type": "nope"},
             {**GRANITE, "position_embedding_type": None}, {**GRANITE, "position_embedding_type": 5}]
    problems, read = port_against_posenc(tmp_path, [(json.dumps(case), None, None) for case in cases])
    assert problems == []
    assert read == [True, True, False, False, True, True, False]
