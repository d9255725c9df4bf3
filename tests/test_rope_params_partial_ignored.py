"""A rotated fraction that the model's own default rule ignores is refused, not read as a narrower rotation.

Many rotary modules compute the default rule (rope_type "default") themselves, over the whole head:
Llama's ``dim = getattr(config, "head_dim", None) or hidden_size // num_attention_heads``
(transformers 5.23.0, modeling_llama.py:100-105), HunYuan's the same (modeling_hunyuan_v1_dense.py:
313-327), with no ``partial_rotary_factor``; the rope utils' scaled rules read it. A config with
rope_type "default" and a fraction below 1 therefore turns the whole head in transformers, where
read_config read a rotated width of ``head_dim * fraction``. The table's ``partial_ignored`` (derived
by its generator by building the class with the fraction 1 and 0.5 and counting the rotary module's
frequencies) marks those model types; read_config and the browser port refuse the fraction there.
"""

from __future__ import annotations

import copy
import json
import logging
import shutil
from pathlib import Path
from typing import Any

import pytest
import torch
import transformers

from posenc.configs import _table, read_config

logging.getLogger("transformers").setLevel(logging.ERROR)

# model type -> (config class, rotary class) of two types whose default rule turns the whole head, and
# one whose own default rule narrows it (GPT-NeoX: int(head_dim * partial_rotary_factor))
MODULES = {
    "llama": (transformers.LlamaConfig, transformers.models.llama.modeling_llama.LlamaRotaryEmbedding),
    "hunyuan_v1_dense": (transformers.HunYuanDenseV1Config,
                         transformers.models.hunyuan_v1_dense.modeling_hunyuan_v1_dense.HunYuanDenseV1RotaryEmbedding),
    "gpt_neox": (transformers.GPTNeoXConfig, transformers.models.gpt_neox.modeling_gpt_neox.GPTNeoXRotaryEmbedding),
}
SHAPE = {"hidden_size": 512, "num_attention_heads": 8, "head_dim": 64, "max_position_embeddings": 4096}


def config_with(model_type: str, fraction: float, kind: str = "default", **more: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"rope_type": kind, "rope_theta": 10000.0, "partial_rotary_factor": fraction, **more}
    return {**SHAPE, "model_type": model_type, "rope_parameters": params}


def frequencies(model_type: str, config: dict[str, Any]) -> int:
    """How many frequencies transformers' rotary module builds (the rotated width / 2)."""
    config_class, rotary_class = MODULES[model_type]
    return int(rotary_class(config_class.from_dict(copy.deepcopy(config))).inv_freq.shape[-1])


@pytest.mark.parametrize("model_type", ["llama", "hunyuan_v1_dense"])
def test_the_table_marks_types_whose_default_rule_turns_the_whole_head(model_type: str) -> None:
    assert frequencies(model_type, config_with(model_type, 0.5)) == 32  # head_dim 64: every feature turns
    assert _table.model_types()[model_type].get("partial_ignored") is True


def test_a_type_whose_own_rule_narrows_the_width_is_not_marked() -> None:
    assert frequencies("gpt_neox", config_with("gpt_neox", 0.5)) == 16  # int(64 * 0.5) / 2
    assert not _table.model_types()["gpt_neox"].get("partial_ignored")
    (layer,) = read_config(config_with("gpt_neox", 0.5)).layers.values()
    assert layer.rotary_dim == 32


@pytest.mark.parametrize("model_type", ["llama", "hunyuan_v1_dense"])
@pytest.mark.parametrize("where", ["rope_parameters", "top level"])
def test_a_fraction_with_the_default_rule_is_refused(model_type: str, where: str) -> None:
    config = config_with(model_type, 0.5)
    if where == "top level":
        config["partial_rotary_factor"] = config["rope_parameters"].pop("partial_rotary_factor")
    assert frequencies(model_type, config) == 32
    with pytest.raises(ValueError, match=r"partial_rotary_factor is 0.5, which transformers' code for this model type "
                                         r"does not apply with rope_type 'default'"):
        read_config(config)


def test_a_fraction_of_one_still_reads() -> None:
    (layer,) = read_config(config_with("llama", 1.0)).layers.values()
    assert layer.rotary_dim == 64


@pytest.mark.xfail(strict=True, reason="not refused yet: Llama's rope utils narrow a scaled rule's frequencies but "
                   "its attention rotates whole heads and fails on them; the table does not say so yet "
                   "(requests-TABLE.md, 04:08 UTC)")
def test_a_fraction_with_a_scaled_rule_where_the_attention_fails_is_refused() -> None:
    config = config_with("llama", 0.5, "linear", factor=2.0)
    assert frequencies("llama", config) == 16  # the rope utils' linear rule reads the fraction
    layers = {**{k: v for k, v in config.items() if k != "model_type"}, "num_hidden_layers": 1,
              "intermediate_size": 64, "vocab_size": 32}
    model = transformers.LlamaModel(transformers.LlamaConfig.from_dict(layers))
    with pytest.raises(RuntimeError, match="must match the size"):  # q has 64 features, cos 32
        model(torch.tensor([[1, 2, 3]]))
    with pytest.raises(ValueError, match="partial_rotary_factor"):
        read_config(config)


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the site's JavaScript")
def test_the_browser_port_refuses_it_alike(tmp_path: Path) -> None:
    from tests.test_explorer_ports import port_against_posenc
    configs = [config_with(t, f, k, **({"factor": 2.0} if k == "linear" else {}))
               for t in MODULES for f in (0.5, 1.0) for k in ("default", "linear")]
    configs.append({**SHAPE, "model_type": "llama", "partial_rotary_factor": 0.25})
    cases = [(json.dumps(config), None, None) for config in configs]
    problems, outcomes = port_against_posenc(tmp_path, cases)
    refused = outcomes.count(False)
    assert not problems, "\n".join(problems[:10])
    assert refused == 3  # llama and HunYuan with 0.5 and the default rule, and llama's top-level 0.25
