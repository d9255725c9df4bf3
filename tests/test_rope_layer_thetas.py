"""A base per layer, ``layer_rope_theta`` (0: NoPE), read as the models run it.

Muse Spark's and Muse Glimmer's config classes fill it, when a config leaves it out, with 0 for
every fourth layer counted from the last (configuration_muse_spark.py:174-180), and their models pass
those layers no position embeddings (modeling_muse_spark.py:662-663): read_config read every layer
as rotating. Granite SWA builds one rotary module per distinct base and gives each layer its own
(modeling_granite_swa.py:392-398, 453-455): a 0 is NoPE, another base than the rope parameters' is
refused (posenc reads one base per kind of layer). Molmo2 rotates the layers outside
``rope_scaling_layers`` without the scaling rule (modeling_molmo2.py:98-110, 660-663): a list that leaves
a layer out under a rule is refused. Step 3.7 trims layer lists that legacy configs pad with MTP
entries (configuration_step3p7.py:185-200). Expected values come from transformers: the class's filled list,
and which decoder layers its model hands position embeddings (a forward pre-hook) or which table.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
import torch
import transformers

from posenc.configs import read_config
from posenc.configs._plan import LAYER_THETAS
from tests.test_explorer_ports import needs_node, port_against_posenc, run_js

logging.getLogger("transformers").setLevel(logging.ERROR)

SHAPE = {"hidden_size": 64, "num_attention_heads": 2, "num_key_value_heads": 2, "num_hidden_layers": 8,
         "intermediate_size": 64, "vocab_size": 32}
GIVEN = [0, 10000.0, 0, 10000, 10000.0, 10000.0, 10000.0, 0]


def config_class(model_type: str) -> Any:
    return transformers.models.auto.configuration_auto.CONFIG_MAPPING[model_type]


def rotating_layers(model_type: str, config: dict[str, Any]) -> list[bool]:
    """Which decoder layers transformers' model hands position embeddings, in one forward."""
    model = transformers.AutoModel.from_config(config_class(model_type).from_dict(config))
    seen: dict[int, bool] = {}
    for index, layer in enumerate(model.layers):
        layer.register_forward_pre_hook(
            lambda _m, _a, kwargs, i=index: seen.__setitem__(i, kwargs.get("position_embeddings") is not None),
            with_kwargs=True)
    with torch.no_grad():
        model(input_ids=torch.tensor([[1, 2, 3]]))
    return [seen[i] for i in range(len(seen))]


def read_flags(config: dict[str, Any]) -> list[bool]:
    rope = read_config(config)
    flags = {index: bool(layer.rotates) for layer in rope.layers.values() for index in layer.layers}
    return [flags[i] for i in range(len(flags))]


@pytest.mark.parametrize(("model_type", "given"), [
    ("muse_glimmer_text", None), ("muse_glimmer_text", GIVEN), ("granite_swa", GIVEN), ("granitemoe_swa", GIVEN),
    ("granite_swa", None)])
def test_the_layers_that_rotate_are_those_the_model_hands_positions(model_type: str, given: list | None) -> None:
    config = {**SHAPE, **({} if given is None else {"layer_rope_theta": given})}
    flags = read_flags({**config, "model_type": model_type})
    assert flags == rotating_layers(model_type, config)
    if given is None and model_type.startswith("muse"):
        assert flags == [True, True, True, False, True, True, True, False]  # every fourth from the last


def test_muse_spark_fills_the_same_default() -> None:
    # its model is too large to build here (default expert sizes): the filled list and the model's test
    built = config_class("muse_spark_text").from_dict(SHAPE)
    assert read_flags({**SHAPE, "model_type": "muse_spark_text"}) == [bool(t) for t in built.layer_rope_theta]
    source = Path(transformers.models.muse_spark.modeling_muse_spark.__file__).read_text()
    assert "position_embeddings=position_embeddings if self.config.layer_rope_theta[i] else None" in source
    rope = read_config({**SHAPE, "model_type": "muse_spark_text"})
    assert "every fourth layer counted from the last" in (rope.layers["full_attention"].note or "")


def test_a_layer_with_its_own_base_is_refused_where_the_model_uses_it() -> None:
    config = {**SHAPE, "layer_rope_theta": [0, 10000.0, 500000.0, 10000, 10000, 10000, 10000, 0]}
    model = transformers.AutoModel.from_config(config_class("granite_swa").from_dict(config))
    assert sorted(r.config.rope_parameters["rope_theta"] for r in model.rotary_embs) == [10000.0, 500000.0]
    with pytest.raises(ValueError, match=r"config\['layer_rope_theta'\] gives a layer the base 500000.0, where the "
                                         r"rope parameters' is 10000.0"):
        read_config({**config, "model_type": "granite_swa"})
    # Muse reads only whether it is 0: another base is the rope parameters' there
    muse = read_config({**config, "model_type": "muse_glimmer_text"})
    assert {layer.base for layer in muse.layers.values() if layer.rotates} == {10000.0}


@pytest.mark.parametrize("bad", [[0, 1], "0", [0, None, 0, 0, 0, 0, 0, 0]])
def test_a_list_that_is_not_a_base_per_layer_is_refused(bad: object) -> None:
    with pytest.raises(ValueError, match=r"config\['layer_rope_theta'\] must be a list of 8 numbers"):
        read_config({**SHAPE, "model_type": "granite_swa", "layer_rope_theta": bad})


def test_the_register_covers_every_class_with_the_key() -> None:
    fields = {model_type for model_type in transformers.models.auto.configuration_auto.CONFIG_MAPPING_NAMES
              if "layer_rope_theta" in getattr(config_class(model_type), "__dataclass_fields__", {})}
    assert fields == set(LAYER_THETAS)


@needs_node
def test_the_browser_port_reads_them_alike(tmp_path: Path) -> None:
    assert run_js(tmp_path, "() => window.posencRopePlan.LAYER_THETAS") == LAYER_THETAS
    cases = [{**SHAPE, "model_type": t, **extra} for t in LAYER_THETAS
             for extra in ({}, {"layer_rope_theta": GIVEN}, {"layer_rope_theta": [0, 5e5] * 4},
                           {"layer_rope_theta": [0, 1]})]
    problems, read = port_against_posenc(tmp_path, [(json.dumps(case), None, None) for case in cases])
    assert problems == []
    assert read.count(False) == 6  # the short lists (4) and Granite's other base (2)


# ---------------------------------------------------------------- Molmo2's rope_scaling_layers
MOLMO = {**SHAPE, "num_hidden_layers": 4, "rope_scaling": {"rope_type": "linear", "factor": 2.0}}


def test_molmo2_rotates_the_layers_outside_the_list_without_scaling() -> None:
    config = {**MOLMO, "rope_scaling_layers": [0, 1]}
    model = transformers.AutoModel.from_config(config_class("molmo2_text").from_dict(config))
    assert model.rope_types == ["scaled", "scaled", "unscaled", "unscaled"]
    torch.testing.assert_close(model.rotary_emb_unscaled.inv_freq, 2 * model.rotary_emb.inv_freq)
    with pytest.raises(ValueError, match=r"config\['rope_scaling_layers'\] leaves out layer 2: .*without the "
                                         r"scaling rule"):
        read_config({**config, "model_type": "molmo2_text"})
    # every layer listed (the class's default), or no scaling rule: read
    assert read_config({**MOLMO, "rope_scaling_layers": [0, 1, 2, 3], "model_type": "molmo2_text"}).layers[
        "full_attention"].scaling == {"type": "linear", "factor": 2.0}
    plain = {k: v for k, v in config.items() if k != "rope_scaling"}
    assert read_config({**plain, "model_type": "molmo2_text"}).layers["full_attention"].scaling is None


def test_the_scaled_layers_register_covers_every_class_with_the_key() -> None:
    from posenc.configs._plan import SCALED_LAYERS

    fields = {model_type for model_type in transformers.models.auto.configuration_auto.CONFIG_MAPPING_NAMES
              if "rope_scaling_layers" in getattr(config_class(model_type), "__dataclass_fields__", {})}
    assert fields == set(SCALED_LAYERS)


@needs_node
def test_the_browser_port_reads_molmo2_alike(tmp_path: Path) -> None:
    from posenc.configs._plan import SCALED_LAYERS

    assert run_js(tmp_path, "() => window.posencRopePlan.SCALED_LAYERS") == SCALED_LAYERS
    cases = [{**MOLMO, "model_type": "molmo2_text", **extra} for extra in (
        {}, {"rope_scaling_layers": [0, 1]}, {"rope_scaling_layers": [3, 2, 1, 0]}, {"rope_scaling_layers": "0"},
        {"rope_scaling_layers": [0], "rope_scaling": None}, {"rope_scaling_layers": [0], "num_hidden_layers": None})]
    problems, read = port_against_posenc(tmp_path, [(json.dumps(case), None, None) for case in cases])
    assert problems == []
    assert read == [True, False, True, False, True, False]


# ---------------------------------------------------------------- Step 3.7's padded layer lists
STEP = {"model_type": "step3p5", **SHAPE, "num_hidden_layers": 3, "head_dim": 32,
        "rope_parameters": {kind: {"rope_type": "default", "rope_theta": 10000.0}
                            for kind in ("full_attention", "sliding_attention")}}


@pytest.mark.parametrize("extra", [0, 1, 2])
def test_step3p7_trims_a_layer_list_padded_with_mtp_entries(extra: int) -> None:
    # legacy configs pad layer_types with num_nextn_predict_layers trailing entries; the class trims them
    # (configuration_step3p7.py:185-200): read_config read the padding as more layers
    from transformers.models.step3p7 import configuration_step3p7

    types = ["full_attention", "sliding_attention", "sliding_attention"] + ["full_attention"] * extra
    config = {**STEP, "layer_types": types, **({"num_nextn_predict_layers": extra} if extra else {})}
    built = configuration_step3p7.Step3p7TextConfig(**{k: v for k, v in config.items() if k != "model_type"})
    assert list(built.layer_types) == types[:3]
    assert list(read_config(config).pattern) == types[:3]


@needs_node
def test_the_browser_port_trims_step3p7_alike(tmp_path: Path) -> None:
    from posenc.configs._plan import PADDED_LAYERS

    assert run_js(tmp_path, "() => window.posencRopePlan.PADDED_LAYERS") == PADDED_LAYERS
    types = ["full_attention", "sliding_attention", "sliding_attention", "full_attention"]
    cases = [{**STEP, "layer_types": types, "num_nextn_predict_layers": n} for n in (1, 2, 1.0, True, "1")]
    problems, _ = port_against_posenc(tmp_path, [(json.dumps(case), None, None) for case in cases])
    assert problems == []
