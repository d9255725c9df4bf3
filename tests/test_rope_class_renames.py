"""Rope keys and types a config class renames in its own code, read as the class keeps them.

HunYuan-VL's text config renames a legacy ``xdrope_section`` to ``mrope_section`` (refusing both
when they differ as floats), turns the sections into ints (refusing non-integers) and renames rope
type "xdrope" to "dynamic" (configuration_hunyuan_vl.py:171-222); read_config refused such a config
with "mrope_section is needed". posenc keeps the rename in a register,
`posenc.configs._class_rope.ROPE_RENAMES`; here it is checked against the class built from the same
dict and its rotary module's frequencies. The shape of the published HunyuanOCR config (a flat
config whose ``rope_scaling`` has type "xdrope", ``alpha`` 1000 and ``xdrope_section``) is ASSUMED
from the class's own comments (legacy keys "that some Tencent checkpoints persist on disk",
:279-283); huggingface.co is not reachable from here.
"""

from __future__ import annotations

import copy
import logging
from pathlib import Path
from typing import Any

import pytest
import torch
import transformers
from transformers.models.hunyuan_vl import modeling_hunyuan_vl

from posenc.configs import from_config, read_config
from posenc.configs._class_rope import ROPE_RENAMES
from posenc.rope import RotaryEmbedding, rope_inverse_frequencies
from tests.test_explorer_ports import needs_node, port_against_posenc, run_js
from tests.test_rope_ntk_alpha import PUBLISHED_SCALING, assert_tables_match, reference

logging.getLogger("transformers").setLevel(logging.ERROR)  # the classes warn on the keys they do not read

SCALING = {**PUBLISHED_SCALING, "type": "xdrope", "xdrope_section": [16.0, 16.0, 16.0, 16.0]}
FLAT = {"model_type": "hunyuan_vl", "hidden_size": 1024, "num_attention_heads": 8, "head_dim": 128,
        "num_hidden_layers": 2, "max_position_embeddings": 32768, "rope_theta": 10000.0, "rope_scaling": SCALING}
TEXT = {**{k: v for k, v in FLAT.items() if k != "rope_scaling"}, "model_type": "hunyuan_vl_text",
        "rope_parameters": {"rope_type": "xdrope", "rope_theta": 10000.0, "factor": 2.0,
                            "xdrope_section": [16, 16, 16, 16]}}


def built(config: dict[str, Any]) -> Any:
    """The text config transformers builds from ``config`` (a wrapper's text_config)."""
    rest = {key: value for key, value in copy.deepcopy(config).items() if key != "model_type"}
    whole = transformers.AutoConfig.for_model(config["model_type"]).__class__.from_dict(rest)
    return whole.get_text_config(decoder=True)


READ = {  # config -> the rope type and sections the class keeps, and the rope type its rotary module runs
    "flat, rope_scaling xdrope with alpha": (FLAT, "dynamic", "ntk_alpha"),
    "text_config, rope_parameters xdrope, factor 2": ({"model_type": "hunyuan_vl", "text_config": TEXT},
                                                      "dynamic", "dynamic"),
    "text alone, both names equal as floats": (
        {**TEXT, "rope_parameters": {**TEXT["rope_parameters"], "mrope_section": [16.0, 16, 16, 16]}},
        "dynamic", "dynamic"),
    "type xdrope under rope_type dynamic": (  # the class makes 'type' follow rope_type
        {**FLAT, "rope_scaling": {**SCALING, "rope_type": "dynamic"}}, "dynamic", "ntk_alpha"),
    "float mrope_section, rope type default": (
        {**TEXT, "rope_parameters": {"rope_type": "default", "mrope_section": [16.0, 16.0, 16.0, 16.0]}},
        "default", "default"),
}


@pytest.mark.parametrize("name", READ)
def test_read_as_the_class_keeps_it_and_its_rotary_module_runs_it(name: str) -> None:
    config, kind, runs = READ[name]
    text = built(config)
    assert text.rope_parameters["rope_type"] == kind and text.rope_parameters["mrope_section"] == [16] * 4
    assert "xdrope_section" not in text.rope_parameters
    rotary = modeling_hunyuan_vl.HunYuanVLRotaryEmbedding(text)
    assert rotary.rope_type == runs
    rope = read_config(config)
    (layer,) = rope.layers.values()
    assert (layer.dim, layer.rotary_dim, layer.base) == (text.head_dim, 2 * rotary.inv_freq.numel(), 10000.0)
    ours = RotaryEmbedding(**from_config(config))
    if runs == "ntk_alpha":  # a fixed NTK base, from the formula and from transformers alike
        assert layer.scaling == {"type": "ntk", "factor": 1000.0}
        torch.testing.assert_close(ours.inv_freq.double(), reference(10000.0, 1000.0, 128), rtol=1e-12, atol=0)
    else:
        assert (layer.scaling or {"type": "default"})["type"] == runs
    torch.testing.assert_close(ours.inv_freq.double(), rotary.inv_freq.double(), rtol=4e-6, atol=0)
    if runs != "dynamic":
        assert_tables_match(ours, rotary, 128)
        return
    # transformers regrows a dynamic rule's base past the context: at 100,001 tokens, as posenc's rule does
    rotary(torch.zeros(1, 1, 128), torch.tensor([[100000]]))
    longer = rope_inverse_frequencies(128, base=layer.base, scaling=layer.scaling, seq_len=100001)
    torch.testing.assert_close(longer, rotary.inv_freq.double(), rtol=4e-6, atol=0)
    assert float(longer[-1]) < 0.5 * float(ours.inv_freq[-1])  # the base did grow


REFUSED = {  # config -> posenc's error and message; transformers' class refuses each too
    "the two names differ": ({**FLAT, "rope_scaling": {**SCALING, "mrope_section": [16, 16, 16, 15]}}, ValueError,
                             r"gives both 'mrope_section' \(\[16, 16, 16, 15\]\) and the legacy 'xdrope_section'"),
    "a section is not whole": ({**FLAT, "rope_scaling": {**SCALING, "xdrope_section": [16, 16, 16.5, 15.5]}},
                               ValueError, r"config\['rope_scaling'\]\['xdrope_section'\] must hold whole numbers"),
    "the sum is not half the head": ({**FLAT, "rope_scaling": {**SCALING, "xdrope_section": [16, 16, 16, 8]}},
                                     ValueError, r"must sum to 64"),
    "a section is not a number": ({**FLAT, "rope_scaling": {**SCALING, "xdrope_section": [16, 16, 16, None]}},
                                  TypeError, r"config\['rope_scaling'\]\['xdrope_section'\] must be a list of numbers"),
}


@pytest.mark.parametrize("name", REFUSED)
def test_what_the_class_refuses_is_refused(name: str) -> None:
    config, error, message = REFUSED[name]
    with pytest.raises((ValueError, TypeError)):
        built(config)
    with pytest.raises(error, match=message):
        read_config(config)


def test_the_register_says_what_the_class_code_does() -> None:
    # each renamed key and type, found in the class's own code (the live tests above run it)
    import inspect

    cls = transformers.HunYuanVLTextConfig
    source = inspect.getsource(cls._normalize_mrope_section_alias) + inspect.getsource(cls.convert_rope_params_to_dict)
    (rule,) = ROPE_RENAMES.values()
    for old, new in rule["keys"].items():
        assert f'pop("{old}", None)' in source and f'rope_parameters["{new}"] = legacy_section' in source
    for old, new in rule["types"].items():
        assert f'if rope_type == "{old}":\n            rope_type = "{new}"' in source
    assert "section_ints = [int(section) for section in section_values]" in inspect.getsource(
        cls._validate_mrope_section)


@needs_node
def test_the_browser_port_reads_and_refuses_them_alike(tmp_path: Path) -> None:
    import json

    from posenc.configs import _class_rope
    assert run_js(tmp_path, "() => window.posencRopePlan.ROPE_RENAMES") == _class_rope.ROPE_RENAMES
    configs = [config for config, *_ in READ.values()] + [config for config, *_ in REFUSED.values()]
    problems, read = port_against_posenc(tmp_path, [(json.dumps(config), None, None) for config in configs])
    assert problems == []
    assert read == [True] * len(READ) + [False] * len(REFUSED)


# ---------------------------------------------------------------- rope types a class refuses or runs its own way
def _class_refuses(model_type: str, config: dict[str, Any]) -> bool:
    cls = transformers.models.auto.configuration_auto.CONFIG_MAPPING[model_type]
    try:
        cls.from_dict(copy.deepcopy({k: v for k, v in config.items() if k != "model_type"}))
    except Exception:  # noqa: BLE001 (strict validation wraps the ValueError / TypeError it raises)
        return True
    return False


SMALL = {"hidden_size": 256, "num_attention_heads": 4, "num_hidden_layers": 2}
LONGROPE = {"rope_type": "longrope", "short_factor": [1.0] * 32, "long_factor": [2.0] * 32,
            "original_max_position_embeddings": 4096}
CLASS_TYPES = {  # config -> whether transformers' class refuses it, posenc's message (None: read)
    "phi3, linear": ({"model_type": "phi3", **SMALL, "rope_scaling": {"rope_type": "linear", "factor": 2.0}}, True,
                     r"config\['rope_scaling'\] has rope type 'linear': .* accepts only 'default' and 'longrope'"),
    "phi3, su (renamed longrope)": ({"model_type": "phi3", **SMALL, "max_position_embeddings": 131072,
                                     "rope_scaling": {**LONGROPE, "rope_type": "su"}}, False, None),
    "phi4_multimodal, dynamic": ({"model_type": "phi4_multimodal", **SMALL,
                                  "rope_scaling": {"rope_type": "dynamic", "factor": 2.0}}, True, r"accepts only"),
    "phimoe, longrope with its mscales": (
        {"model_type": "phimoe", **SMALL, "max_position_embeddings": 131072,
         "rope_scaling": {**LONGROPE, "short_mscale": 1.2, "long_mscale": 1.3}}, False,
        r"multiplies cos and sin by short_mscale or long_mscale"),
    "phimoe, longrope without them": ({"model_type": "phimoe", **SMALL, "rope_scaling": LONGROPE}, True,
                                      r"short_mscale or long_mscale"),
    "cosmos3_edge_text, linear": (
        {"model_type": "cosmos3_edge_text", **SMALL, "head_dim": 128,
         "rope_parameters": {"rope_type": "linear", "factor": 2.0, "rope_theta": 1e6, "mrope_section": [24, 20, 20]}},
        True, r"accepts only 'default'"),
    "cosmos3_edge_text, sections off by one": (
        {"model_type": "cosmos3_edge_text", **SMALL, "head_dim": 128,
         "rope_parameters": {"rope_type": "default", "rope_theta": 1e6, "mrope_section": [24, 20, 19]}},
        True, r"must be 3 sections summing to head_dim / 2"),
    "cosmos3_edge_text, as its default": (
        {"model_type": "cosmos3_edge_text", **SMALL, "head_dim": 128,
         "rope_parameters": {"rope_type": "default", "rope_theta": 1e6, "mrope_section": [24, 20, 20]}}, False, None),
}


@pytest.mark.parametrize("name", CLASS_TYPES)
def test_rope_types_the_class_refuses_are_refused(name: str) -> None:
    config, refused, message = CLASS_TYPES[name]
    assert _class_refuses(config["model_type"], config) == refused
    if message is None:
        read_config(config)
    else:  # PhiMoE's mscales: the class takes them, posenc cannot read them (one factor for every length)
        with pytest.raises(ValueError, match=message):
            read_config(config)


def test_phimoe_multiplies_by_its_mscales() -> None:
    # the reason posenc refuses PhiMoE's scaled configs: cos and sin carry short_mscale or long_mscale by length
    config, _, _ = CLASS_TYPES["phimoe, longrope with its mscales"]
    built = transformers.PhimoeConfig.from_dict({k: v for k, v in config.items() if k != "model_type"})
    rotary = transformers.models.phimoe.modeling_phimoe.PhimoeRotaryEmbedding(built)
    short_cos, _ = rotary(torch.zeros(1, 1, 64), torch.tensor([[0]]))
    long_cos, _ = rotary(torch.zeros(1, 1, 64), torch.tensor([[5000]]))
    assert float(short_cos[0, 0, 0]) == pytest.approx(1.2) and float(long_cos.abs().max()) == pytest.approx(1.3, rel=1e-3)


@needs_node
def test_the_browser_port_refuses_class_rope_types_alike(tmp_path: Path) -> None:
    import json

    from posenc.configs._class_rope import CLASS_ROPE_TYPES

    assert run_js(tmp_path, "() => window.posencRopePlan.CLASS_ROPE_TYPES") == json.loads(json.dumps(CLASS_ROPE_TYPES))
    cases = [config for config, *_ in CLASS_TYPES.values()]
    cases += [{**cases[0], "rope_scaling": {"rope_type": 5}}, {**cases[-1], "rope_parameters": {
        "rope_type": "default", "rope_theta": 1e6, "mrope_section": [True, 20, 20]}}]
    problems, read = port_against_posenc(tmp_path, [(json.dumps(config), None, None) for config in cases])
    assert problems == []
    assert read[:len(CLASS_TYPES)] == [message is None for _, _, message in CLASS_TYPES.values()]
