"""A model type whose rotary module accepts no scaling rule is refused a scaling rule, not read with one.

RecurrentGemma's rotary module raises for any rope type but "default" ("does not support RoPE types
other than `default`", transformers 5.23.0 modeling_recurrent_gemma.py:71-74), and so does Ernie 4.5
VL's text module ("requires the `default` rope type", modeling_ernie4_5_vl_moe.py:65-66); read_config
read a "linear" rule there as posenc's linear scaling. The table's ``scaled_rules_refused`` (derived
by tools/rope_model_types/partial.py: the rotary module builds with the default rule and with none of
the scaled ones) marks them; read_config and the browser port refuse.
"""

from __future__ import annotations

import copy
import importlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

transformers = pytest.importorskip("transformers", reason="transformers is a test dependency (requirements.lock)")

from posenc.configs import _table, read_config

SHAPE = {"hidden_size": 512, "num_attention_heads": 8, "head_dim": 64, "max_position_embeddings": 4096}
# model type -> (its config class and rotary module, the keys it needs beside SHAPE)
MODULES = {
    "recurrent_gemma": ("RecurrentGemmaConfig", "recurrent_gemma", "RecurrentGemmaRotaryEmbedding", {}),
    "ernie4_5_vl_moe_text": ("Ernie4_5_VLMoeTextConfig", "ernie4_5_vl_moe", "Ernie4_5_VLMoeTextRotaryEmbedding",
                             {"mrope_section": [10, 10, 12]}),
}


def config_with(model_type: str, kind: str) -> dict[str, Any]:
    more = MODULES[model_type][3] if model_type in MODULES else {}
    params = {"rope_type": kind, "rope_theta": 10000.0, **({"factor": 2.0} if kind != "default" else {}), **more}
    return {**SHAPE, "model_type": model_type, "rope_parameters": params}


def rotary(model_type: str, kind: str) -> Any:
    """transformers' rotary module of ``model_type`` built from the config."""
    config_name, package, rotary_name, _ = MODULES[model_type]
    config = config_with(model_type, kind)
    built = getattr(transformers, config_name).from_dict(copy.deepcopy({k: v for k, v in config.items()
                                                                        if k != "model_type"}))
    module = importlib.import_module(f"transformers.models.{package}.modeling_{package}")
    return getattr(module, rotary_name)(config=built)


@pytest.mark.parametrize("model_type", list(MODULES))
def test_a_rotary_module_that_refuses_scaling_rules_is_marked_and_its_config_refused(model_type: str) -> None:
    assert _table.model_types()[model_type].get("scaled_rules_refused") is True
    module = rotary(model_type, "default")  # RecurrentGemma's class fills the fraction 0.5: 16 of 32
    (layer,) = read_config(config_with(model_type, "default")).layers.values()
    assert layer.scaling is None and layer.rotary_dim == 2 * module.inv_freq.numel()
    with pytest.raises(ValueError, match="default"):
        rotary(model_type, "linear")
    with pytest.raises(ValueError, match=r"rope_type is 'linear', and transformers' rotary module for this model type "
                                         r"accepts only rope type 'default'"):
        read_config(config_with(model_type, "linear"))


def test_the_mark_is_where_the_probe_finds_it_and_not_on_llama() -> None:
    """Text model types marked are exactly these two (the rest are vision towers, read elsewhere); Llama's
    module takes every rule."""
    table = _table.model_types()
    marked = {t for t, e in table.items() if e.get("scaled_rules_refused")}
    assert {t for t in marked if "vision" not in t and t not in ("pixtral", "eomt_dinov3", "sam3_vit_model")} == set(
        MODULES)
    assert not table["llama"].get("scaled_rules_refused")
    (layer,) = read_config(config_with("llama", "linear")).layers.values()
    assert layer.scaling == {"type": "linear", "factor": 2.0}


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the site's JavaScript")
def test_the_browser_port_refuses_it_alike(tmp_path: Path) -> None:
    from tests.test_explorer_ports import port_against_posenc
    configs = [config_with(t, k) for t in (*MODULES, "llama") for k in ("default", "linear", "yarn", "proportional")]
    for config in configs:  # yarn needs its original length
        if config["rope_parameters"]["rope_type"] == "yarn":
            config["rope_parameters"]["original_max_position_embeddings"] = 1024
    problems, outcomes = port_against_posenc(tmp_path, [(json.dumps(c), None, None) for c in configs])
    assert not problems, "\n".join(problems[:10])
    assert outcomes.count(False) == 6  # the two marked types with each of the three rules
