"""Ministral 3's and Mistral 4's query scale needs two rope parameters whatever the rope type: their
attention multiplies the queries by ``get_llama_4_attn_scale(position_ids, llama_4_scaling_beta,
original_max_position_embeddings)`` after the rotation, unconditionally (modeling_ministral3.py:145-149,
modeling_mistral4.py:476-480), so transformers' model fails (a TypeError on None) where either is
missing, whichever rope type the config gives. read_config read such configs without a temperature,
and refused ``original_max_position_embeddings`` with rope type "default" (an unknown key of that
type), where the model runs and reads it. Now: refused by name where a key is missing; read, with the
temperature, where both are given.

Checked live: each config built and run by transformers' own model; where it runs, read_config's
temperature equals the modeling file's get_llama_4_attn_scale at several positions and from_config's
frequencies equal the rotary module's; where it fails, refused naming the missing keys; the browser's
port alike."""

from __future__ import annotations

import copy
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import torch

transformers = pytest.importorskip("transformers", reason="transformers is a test dependency (requirements.lock)")

from posenc.configs import from_config, query_temperature, read_config
from posenc.rope_scaling import rope_inverse_frequencies
from tests.test_rope_params_partial_ignored import mistral4, run_model

M3 = {"model_type": "ministral3", "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2,
      "num_hidden_layers": 1, "intermediate_size": 32, "vocab_size": 64, "head_dim": 16}
SCALE = {"llama_4_scaling_beta": 0.1, "original_max_position_embeddings": 64}
DEFAULT = {"rope_type": "default", "rope_theta": 10000.0}
LINEAR = {"rope_type": "linear", "rope_theta": 10000.0, "factor": 2.0}
CASES: dict[str, tuple[dict[str, Any], list[str]]] = {  # name: (config, the keys it lacks; [] where it runs)
    "mistral4 default": ({**mistral4(None, head_dim=64), "rope_parameters": {**DEFAULT, **SCALE}}, []),
    "mistral4 default, no scale keys": ({**mistral4(None, head_dim=64), "rope_parameters": DEFAULT},
                                        list(SCALE)),
    "mistral4 default, no length": ({**mistral4(None, head_dim=64), "rope_parameters": {
        **DEFAULT, "llama_4_scaling_beta": 0.1}}, ["original_max_position_embeddings"]),
    "mistral4 linear": ({**mistral4(None), "rope_parameters": {**LINEAR, **SCALE}}, []),
    "mistral4 linear, no scale keys": ({**mistral4(None), "rope_parameters": LINEAR}, list(SCALE)),
    "ministral3 default": ({**M3, "rope_parameters": {**DEFAULT, **SCALE}}, []),
    "ministral3 default, no beta": ({**M3, "rope_parameters": {**DEFAULT, "original_max_position_embeddings": 64}},
                                    ["llama_4_scaling_beta"]),
    "ministral3 at its defaults": (M3, []),
}


def words(missing: list[str]) -> str:
    return (f"config['rope_parameters'] needs {' and '.join(map(repr, missing))}, whatever its rope_type: this "
            f"model type's attention multiplies its queries by 1 + llama_4_scaling_beta * ln(1 + floor(position / "
            f"original_max_position_embeddings)), and transformers' model fails without them")


def _module(config: dict[str, Any]) -> tuple[Any, Any]:
    """The config class's build, and the modeling module of the model type."""
    built = transformers.AutoConfig.for_model(**copy.deepcopy(config))
    name = config["model_type"]
    return built, __import__(f"transformers.models.{name}.modeling_{name}", fromlist=["x"])


@pytest.mark.parametrize("name", CASES)
def test_read_where_the_model_runs_and_refused_where_it_fails(name: str) -> None:
    config, missing = CASES[name]
    if missing:
        with pytest.raises(TypeError):
            run_model(config)
        with pytest.raises(ValueError, match=re.escape(words(missing))):
            read_config(config)
        return
    run_model(config)
    built, module = _module(config)
    (layer,) = read_config(config).layers.values()
    params = built.rope_parameters
    positions = [0, 63, 64, 200, 5000]
    theirs = module.get_llama_4_attn_scale(torch.tensor([positions]), params["llama_4_scaling_beta"],
                                           params["original_max_position_embeddings"]).flatten()
    ours = torch.tensor([query_temperature(layer.temperature, p) for p in positions], dtype=theirs.dtype)
    torch.testing.assert_close(ours, theirs, rtol=1e-6, atol=0.0)
    rotary = next(m for n, m in vars(module).items() if n.endswith("RotaryEmbedding"))(built)
    kwargs = from_config(config)
    freqs = rope_inverse_frequencies(kwargs["dim"], base=kwargs["base"], scaling=kwargs["scaling"],
                                     rotary_dim=kwargs["rotary_dim"])
    torch.testing.assert_close(freqs.double(), rotary.inv_freq.double(), rtol=1e-6, atol=0.0)


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the site's JavaScript")
def test_the_browser_port_reads_alike(tmp_path: Path) -> None:
    from tests.site.check_inspector import API_READING, posenc_reading
    from tests.test_explorer_ports import port_against_posenc, run_js
    cases = [(json.dumps(config), None, None) for config, _ in CASES.values()]
    problems, outcomes = port_against_posenc(tmp_path, cases)
    assert not problems, "\n".join(problems[:10])
    assert outcomes == [not missing for _, missing in CASES.values()]
    refused = [case for case, ok in zip(cases, outcomes) if not ok]
    theirs = run_js(tmp_path, API_READING.replace("([cases])", "(cases)"), refused)
    assert isinstance(theirs, list)
    assert [json.loads(t)["error"] for t in theirs] == [posenc_reading(*c)["error"] for c in refused]
