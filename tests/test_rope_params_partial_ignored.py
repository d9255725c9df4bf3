"""A rotated fraction that the model's own default rule ignores is refused, not read as a narrower rotation.

Many rotary modules compute the default rule (rope_type "default") themselves, over the whole head:
Llama's ``dim = getattr(config, "head_dim", None) or hidden_size // num_attention_heads``
(transformers 5.23.0, modeling_llama.py:100-105), HunYuan's the same (modeling_hunyuan_v1_dense.py:
313-327), with no ``partial_rotary_factor``; the rope utils' scaled rules read it. A config with
rope_type "default" and a fraction below 1 therefore turns the whole head in transformers, where
read_config read a rotated width of ``head_dim * fraction``. The table's ``partial_ignored`` (derived
by its generator by building the class with the fraction 1 and 0.5 and counting the rotary module's
frequencies) marks those model types; read_config and the browser port refuse the fraction there.

With a scaled rule the rope utils do read the fraction, and on those types the attention then rotates
q and k of the whole head with the narrower cos and sin: transformers fails (Llama: "must match the
size"). The table's ``partial_scaled`` ("fails", derived by tools/rope_model_types/partial.py) marks
them (``nested_partial_scaled`` per layer type: Gemma 3's, OLMo 3's entries); read_config and the port
refuse the fraction there too, rather than read a narrower rotation. Mistral 4's attention rotates the
width of its class's own fraction (0.5): there any other fraction is refused.
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


# settings each scaled rule of the rope utils accepts (longrope's factor lists: `rule`)
RULES = {"linear": {"factor": 2.0}, "dynamic": {"factor": 2.0},
         "yarn": {"factor": 2.0, "original_max_position_embeddings": 1024},
         "longrope": {"factor": 2.0, "original_max_position_embeddings": 1024},
         "llama3": {"factor": 8.0, "original_max_position_embeddings": 1024, "low_freq_factor": 1.0,
                    "high_freq_factor": 4.0}}
TINY = {"hidden_size": 64, "num_attention_heads": 2, "num_key_value_heads": 2, "head_dim": 32, "num_hidden_layers": 1,
        "intermediate_size": 64, "vocab_size": 32, "max_position_embeddings": 4096}


def rule(kind: str, frequencies: int) -> dict[str, Any]:
    """The settings of a scaled rule for a rotated width of ``frequencies`` pairs (longrope: one factor each)."""
    more = {"short_factor": [1.0] * frequencies, "long_factor": [2.0] * frequencies} if kind == "longrope" else {}
    return {**RULES.get(kind, {}), **more}


def forward(model_type: str, kind: str, fraction: float, **more: Any) -> None:
    """A one-layer model of ``model_type`` (transformers' own classes, head_dim 32) run on three tokens."""
    params = {"rope_type": kind, "rope_theta": 10000.0, "partial_rotary_factor": fraction,
              **rule(kind, int(16 * fraction))}
    config = transformers.AutoConfig.for_model(model_type, **{**TINY, **more}, rope_parameters=params)
    torch.manual_seed(0)
    model = transformers.AutoModel.from_config(config, attn_implementation="eager").eval()
    with torch.no_grad():
        model(input_ids=torch.tensor([[1, 2, 3]]), use_cache=False)


@pytest.mark.parametrize("kind", list(RULES))
def test_a_fraction_with_a_scaled_rule_where_the_attention_fails_is_refused(kind: str) -> None:
    """The rope utils' scaled rules read the fraction (``dim = int(head_dim * partial_rotary_factor)``,
    modeling_rope_utils.py:181, 325, 416, 549, 639) where Llama's own default rule does not, and
    Llama's attention rotates q and k of the whole head with those narrower cos and sin
    (modeling_llama.py:147-148): its forward fails. The table says so (``partial_scaled``, derived by
    tools/rope_model_types/partial.py from the rotary module and the rotation function); read_config
    refuses the fraction."""
    forward("llama", kind, 1.0)  # the whole head: runs
    with pytest.raises(RuntimeError, match="must match the size"):  # q has 32 features, cos 16
        forward("llama", kind, 0.5)
    assert _table.model_types()["llama"].get("partial_scaled") == "fails"
    config = {**config_with("llama", 0.5, kind, **rule(kind, 8)), "head_dim": 32}
    with pytest.raises(ValueError, match=rf"partial_rotary_factor is 0.5 with rope_type '{kind}': transformers' "
                                         r"attention for model type 'llama' rotates whole heads and "
                                         r"fails on the narrower frequencies a scaled rule computes for this fraction"):
        read_config(config)


# Model types of other families the table marks "fails", run live as whole models: a route of its own
# (the generator calls only the rotary module and the rotation function the attention names)
FAMILIES = {"qwen2": {}, "mistral": {}, "gemma": {}, "cohere": {}, "granite": {}, "olmo2": {},
            "deepseek_v3": {"qk_rope_head_dim": 32, "qk_nope_head_dim": 16, "v_head_dim": 16, "kv_lora_rank": 16,
                            "q_lora_rank": 16, "n_routed_experts": 2, "num_experts_per_tok": 1, "n_group": 1,
                            "topk_group": 1, "moe_intermediate_size": 16, "first_k_dense_replace": 1}}


@pytest.mark.parametrize("model_type", list(FAMILIES))
def test_the_table_says_fails_where_the_model_fails(model_type: str) -> None:
    assert _table.model_types()[model_type].get("partial_scaled") == "fails"
    forward(model_type, "linear", 1.0, **FAMILIES[model_type])
    with pytest.raises(RuntimeError, match="must match the size"):
        forward(model_type, "linear", 0.5, **FAMILIES[model_type])
    config = {**config_with(model_type, 0.5, "linear", factor=2.0), **FAMILIES[model_type]}
    with pytest.raises(ValueError, match="partial_rotary_factor is 0.5 with rope_type 'linear'"):
        read_config(config)


# Mistral 4 at its class's widths (qk_rope_head_dim = qk_nope_head_dim = 64, so head_dim 128) with small
# other sizes; its class fills the fraction qk_rope_head_dim / head_dim = 0.5 (configuration_mistral4.py:131-132)
MISTRAL4 = {"hidden_size": 256, "num_attention_heads": 2, "num_key_value_heads": 2, "num_hidden_layers": 1,
            "intermediate_size": 32, "moe_intermediate_size": 16, "n_routed_experts": 2, "num_experts_per_tok": 1,
            "n_group": 1, "topk_group": 1, "first_k_dense_replace": 1, "vocab_size": 32, "v_head_dim": 16,
            "kv_lora_rank": 16, "q_lora_rank": 16, "max_position_embeddings": 256}


def mistral4(fraction: float | None, **more: Any) -> dict[str, Any]:
    params = {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 4.0, "original_max_position_embeddings": 64,
              "llama_4_scaling_beta": 0.1, **({} if fraction is None else {"partial_rotary_factor": fraction})}
    return {"model_type": "mistral4", **MISTRAL4, **more, "rope_parameters": params}


def run_model(config: dict[str, Any]) -> None:
    """transformers' own model of a config dict (with its model_type), run on three tokens."""
    built = transformers.AutoConfig.for_model(**copy.deepcopy(config))
    model = transformers.AutoModel.from_config(built, attn_implementation="eager").eval()
    with torch.no_grad():
        model(input_ids=torch.tensor([[1, 2, 3]]), use_cache=False)


def test_mistral_4_runs_its_own_fraction_only() -> None:
    """Mistral 4's attention rotates its qk_rope_head_dim part (modeling_mistral4.py:457-469) with cos and
    sin of head_dim * fraction features: it runs at its class's own fraction, 0.5, and fails at any other.
    The table's partial_scaled holds for it with that fraction as the control (absent_defaults)."""
    assert _table.model_types()["mistral4"].get("partial_scaled") == "fails"
    for fraction in (None, 0.5):
        run_model(mistral4(fraction))
        (layer,) = read_config(mistral4(fraction)).layers.values()
        assert (layer.dim, layer.rotary_dim) == (128, 64)
    for fraction, word in ((0.25, "narrower"), (1.0, "other")):
        with pytest.raises(RuntimeError, match="must match the size"):
            run_model(mistral4(fraction))
        built = int(128 * fraction)
        words = (rf"transformers' rotary module for model type 'mistral4' builds cos and sin for {built} features "
                 rf"\(int\(head_dim \* partial_rotary_factor\) = int\(128 \* {fraction}\)\), {word} than the "
                 r"config\['qk_rope_head_dim'\] = 64 features its attention turns, and the model fails on it")
        with pytest.raises(ValueError, match=words):
            read_config(mistral4(fraction))
    # other widths: the module builds 96 * 0.25 = 24 features, the attention turns 32 (the sizes' own
    # fractions are read: tests/test_rope_rotated_part.py)
    with pytest.raises(RuntimeError, match="must match the size"):
        run_model(mistral4(0.25, qk_rope_head_dim=32))
    with pytest.raises(ValueError, match=r"builds cos and sin for 24 features .*, narrower than the "
                                         r"config\['qk_rope_head_dim'\] = 32 features"):
        read_config(mistral4(0.25, qk_rope_head_dim=32))


# Per-layer-type classes whose rotary module ignores an entry's fraction with the default rule (Gemma 3's,
# OLMo 3's: nested_partial_ignored): an entry with a scaled rule narrows that layer type's cos and sin,
# and its attention fails on them, as Llama's does
NESTED = {"hidden_size": 64, "num_attention_heads": 2, "num_key_value_heads": 2, "head_dim": 32, "num_hidden_layers": 2,
          "intermediate_size": 32, "vocab_size": 32, "max_position_embeddings": 256, "sliding_window": 4,
          "layer_types": ["sliding_attention", "full_attention"]}


def nested(model_type: str, layer_type: str, fraction: float) -> dict[str, Any]:
    other = "full_attention" if layer_type == "sliding_attention" else "sliding_attention"
    scaled = {"rope_type": "linear", "factor": 2.0, "rope_theta": 10000.0, "partial_rotary_factor": fraction}
    params = {layer_type: scaled, other: {"rope_type": "default", "rope_theta": 10000.0}}
    return {"model_type": model_type, **NESTED, "rope_parameters": params}


@pytest.mark.parametrize("model_type", ["gemma3_text", "olmo3"])
@pytest.mark.parametrize("layer_type", ["sliding_attention", "full_attention"])
def test_an_entry_with_a_scaled_rule_and_a_fraction_is_refused_where_the_attention_fails(
        model_type: str, layer_type: str) -> None:
    assert _table.model_types()[model_type]["nested_partial_scaled"][layer_type] == "fails"
    run_model(nested(model_type, layer_type, 1.0))
    with pytest.raises(RuntimeError, match="must match the size"):  # q has 32 features, cos 16
        run_model(nested(model_type, layer_type, 0.5))
    assert {layer.rotary_dim for layer in read_config(nested(model_type, layer_type, 1.0)).layers.values()} == {32}
    with pytest.raises(ValueError, match=rf"partial_rotary_factor is 0.5 with rope_type 'linear': transformers' "
                                         rf"attention for model type '{model_type}' rotates whole heads"):
        read_config(nested(model_type, layer_type, 0.5))


def test_a_fraction_with_a_scaled_rule_reads_where_the_default_rule_narrows() -> None:
    """GPT-NeoX's own rule reads the fraction too, and its attention rotates the first features only:
    not partial_ignored, no partial_scaled; read_config reads the narrower width."""
    assert not _table.model_types()["gpt_neox"].get("partial_scaled")
    (layer,) = read_config(config_with("gpt_neox", 0.5, "linear", factor=2.0)).layers.values()
    assert layer.rotary_dim == 32


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the site's JavaScript")
def test_the_browser_port_refuses_it_alike(tmp_path: Path) -> None:
    from tests.test_explorer_ports import port_against_posenc
    configs = [config_with(t, f, k, **rule(k, int(32 * f))) for t in MODULES for f in (0.5, 1.0)
               for k in ("default", *RULES)]
    configs.append({**SHAPE, "model_type": "llama", "partial_rotary_factor": 0.25})
    configs.append({**SHAPE, "model_type": "llama", "partial_rotary_factor": 0.25,
                    "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 1024}})
    configs += [mistral4(f) for f in (None, 0.5, 0.25, 1.0)] + [mistral4(0.25, qk_rope_head_dim=32)]
    configs += [nested(t, k, f) for t in ("gemma3_text", "olmo3") for k in ("sliding_attention", "full_attention")
                for f in (1.0, 0.5)]
    cases = [(json.dumps(config), None, None) for config in configs]
    problems, outcomes = port_against_posenc(tmp_path, cases)
    refused = outcomes.count(False)
    assert not problems, "\n".join(problems[:10])
    # llama and HunYuan at 0.5 with each of the six rules, llama's top-level 0.25 with and without yarn,
    # Mistral 4 at 0.25, 1.0 and with another qk_rope_head_dim, Gemma 3's and OLMo 3's entries at 0.5
    assert refused == 21
