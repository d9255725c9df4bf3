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
