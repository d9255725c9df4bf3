"""Every checkpoint of the zoo (``posenc/zoo/*.json``, published configs with their sources) read by
`posenc.configs.read_config` exactly as transformers' own code for its model type runs it.

For each zoo file and each kind of layer: the inverse frequencies, the attention factor and the
rotated queries and keys (float64 on posenc's side) at positions inside and past the trained
context equal transformers' rotary module and rotation function (``tests/rope_live.py``); NoPE
layers are the ones transformers' config leaves unrotated; Ministral's query temperature and
DeepSeek's softmax scale equal transformers' own functions. A model type the pinned transformers
lacks is an expected failure that says so; a zoo file whose model type the table does not know
at all fails.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("transformers", reason="transformers is a test dependency (requirements.lock)")

from posenc.configs import _table as _rope_table
from posenc.configs import from_config, read_config
from tests import rope_live

ZOO = sorted((Path(__file__).resolve().parents[1] / "posenc" / "zoo").glob("*.json"))


def load(path: Path) -> dict[str, Any]:
    entry = json.loads(path.read_text())
    return {k: v for k, v in entry.items() if not k.startswith("_")}


def test_the_zoo_is_large_and_sourced() -> None:
    entries = [json.loads(path.read_text()) for path in ZOO]
    assert len(entries) >= 35
    assert len({e["_family"] for e in entries}) >= 25
    for entry in entries:
        assert entry["_source"].startswith("https://"), entry["_name"]
        assert entry["_provenance"]["sha256"], entry["_name"]  # where it comes from: test_zoo_provenance.py
        assert entry["model_type"], entry["_name"]


@pytest.mark.parametrize("path", ZOO, ids=[p.stem for p in ZOO])
def test_zoo_entry_matches_transformers(path: Path) -> None:
    config = load(path)
    model_type = config["model_type"]
    if model_type not in _rope_table.model_types():
        with pytest.raises(ValueError, match="layout is needed: the pinned transformers has no model type"):
            read_config(config)
        pytest.xfail(f"the pinned transformers has no model type {model_type!r}: read_config asks for the layout")
    rope_live.check_config(config)


def test_kimi_k2_runs_as_the_deepseek_v3_architecture_it_declares() -> None:
    # Kimi K2 ships model_type kimi_k2 (no transformers model type) with DeepseekV3ForCausalLM's code.
    config = load(next(p for p in ZOO if p.stem == "kimi-k2-instruct"))
    assert config["architectures"] == ["DeepseekV3ForCausalLM"]
    rope = rope_live.check_config({**config, "model_type": "deepseek_v3"})
    layer = rope.layers["full_attention"]
    assert layer.scaling and layer.scaling["beta_fast"] == layer.scaling["beta_slow"] == 1.0
    assert from_config(config, layout="interleaved") == layer.rotary_kwargs()


def test_what_the_issue_found_wrong_is_right() -> None:
    """The silent wrong answers of the old from_config, each read from its zoo file."""
    def layers(name: str) -> dict[str, Any]:
        return read_config(load(next(p for p in ZOO if p.stem == name))).layers

    assert layers("llama-4-scout-17b-16e-instruct")["chunked_attention"].layout == "interleaved"
    assert layers("llama-4-scout-17b-16e-instruct")["full_attention"].rotates is False
    assert layers("deepseek-v3")["full_attention"].layout == "interleaved"
    assert layers("glm-4.5-air")["full_attention"].layout == "half"
    assert layers("command-r-v01")["full_attention"].layout == "interleaved"
    gemma = layers("gemma-3-27b-it")
    assert (gemma["sliding_attention"].base, gemma["full_attention"].base) == (10000.0, 1000000.0)
    assert gemma["sliding_attention"].scaling is None and gemma["full_attention"].scaling == {
        "type": "linear", "factor": 8.0}
    bert = layers("modernbert-base")
    assert (bert["sliding_attention"].base, bert["full_attention"].base) == (10000.0, 160000.0)
    temperature = layers("ministral-3-3b-2512")["full_attention"].temperature
    assert temperature == {"rule": "llama_4_scaling_beta", "beta": 0.1, "length": 16384}
    assert layers("deepseek-v3")["full_attention"].softmax_scale > 1.0
    assert layers("kimi-k2.5")["full_attention"].layout == "interleaved"   # no rope_interleave key
    assert layers("glm-4-9b-0414")["full_attention"].layout == "interleaved"
    assert layers("glm-4-9b-0414")["full_attention"].rotary_dim == 64      # half of each 128-wide head
    devstral = layers("devstral-small-2-24b-instruct-2512")["full_attention"]
    assert devstral.temperature == {"rule": "llama_4_scaling_beta", "beta": 0.1, "length": 8192}


# The configs issue 22 names as read wrong (silently or by refusal), by zoo file: each must now be
# read exactly as transformers runs it, every kind of layer (Kimi K2 itself is a model type the
# pinned transformers lacks; it is checked above as the DeepSeek-V3 code it declares).
ISSUE_22 = ["llama-4-scout-17b-16e-instruct", "llama-4-maverick-17b-128e-instruct", "deepseek-v3", "kimi-k2.5",
            "glm-4-9b-0414", "command-r-v01", "gemma-3-27b-it", "modernbert-base", "ministral-3-3b-2512",
            "devstral-small-2-24b-instruct-2512", "qwen2.5-vl-7b-instruct-yarn", "qwen3-vl-yarn",
            "phi-3.5-mini-instruct", "phi-4-mini-instruct"]


@pytest.mark.parametrize("name", ISSUE_22)
def test_the_configs_the_issue_names_read_exactly(name: str) -> None:
    config = load(next(p for p in ZOO if p.stem == name))
    published = copy.deepcopy(config)
    rope = rope_live.check_config(config)
    assert config == published, "transformers' config class must not change what posenc reads"
    assert any(layer.rotates for layer in rope.layers.values())


def test_kimi_k25_reads_its_text_model_as_transformers_renames_it() -> None:
    # the published wrapper names its text model kimi_k2, which Kimi_K25Config builds as deepseek_v3
    config = load(next(p for p in ZOO if p.stem == "kimi-k2.5"))
    assert config["text_config"]["model_type"] == "kimi_k2"
    rope = read_config(config)
    assert rope.model_type == "deepseek_v3"
    layer = rope.layers["full_attention"]
    assert (layer.dim, layer.base, layer.scaling and layer.scaling["factor"]) == (64, 50000.0, 64.0)
    with pytest.raises(ValueError, match="layout is needed"):  # the text part alone: no such model type
        read_config(config["text_config"])


def test_minimax_m2_rotates_the_rotary_dim_it_declares() -> None:
    # MiniMax-M2 gives partial RoPE as rotary_dim (transformers: partial_rotary_factor = 64 / 128)
    layer = read_config(load(next(p for p in ZOO if p.stem == "minimax-m2"))).layers["full_attention"]
    assert (layer.dim, layer.rotary_dim, layer.base) == (128, 64, 5000000.0)
