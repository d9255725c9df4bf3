"""Every checkpoint of the zoo (``posenc/zoo/*.json``, published configs with their sources) read by
`posenc.rope_config.read_config` exactly as transformers' own code for its model type runs it.

For each zoo file and each kind of layer: the inverse frequencies, the attention factor and the
rotated queries and keys (float64 on posenc's side) at positions inside and past the trained
context equal transformers' rotary module and rotation function (``tests/rope_live.py``); NoPE
layers are the ones transformers' config leaves unrotated; Ministral's query temperature and
DeepSeek's softmax scale equal transformers' own functions. A model type the pinned transformers
lacks is an expected failure that says so; a zoo file whose model type the table does not know
at all fails.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("transformers", reason="transformers is a test dependency (requirements.lock)")

from posenc import _rope_table
from posenc.rope_config import from_config, read_config
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
        assert entry["_checked_against"], entry["_name"]
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
