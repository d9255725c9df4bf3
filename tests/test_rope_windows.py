"""Attention spans per layer: `read_config` against the masks transformers' models build.

Model-wide windows (Mistral, StarCoder2, Phi-3, Qwen3-MoE: one sliding-window mask for every layer),
Qwen2-family switches (``use_sliding_window``) and windowed layers (``max_window_layers``: from it
on for Qwen2 / Qwen3, every other layer below it for Qwen2-MoE), per-layer-type windows (Gemma 3,
gpt-oss) and chunks (Llama 4): each read by posenc and run by transformers as a tiny model of the
same layer count (``tests/rope_windows_live.py``), layer by layer. Below them, the contradictory
window keys posenc refuses by name where transformers would run something silently.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("transformers", reason="transformers is a test dependency (requirements.lock)")

from posenc.configs import _table as _rope_table  # noqa: E402
from posenc.configs import read_config  # noqa: E402
from tests import rope_windows_live as live  # noqa: E402
from tests.rope_windows_live import CASES, WINDOWED  # noqa: E402

ZOO = Path(__file__).resolve().parents[1] / "posenc" / "zoo"
SMALL = {"hidden_size": 64, "num_attention_heads": 2, "head_dim": 32, "num_key_value_heads": 1}
ZOO_CASES = ["mistral-7b-v0.1", "mistral-7b-v0.3", "phi-3.5-mini-instruct", "starcoder2-7b", "qwen2-7b-instruct",
             "gemma-3-1b-it", "gpt-oss-120b"]


@pytest.mark.parametrize("name", list(CASES))
def test_spans_are_the_masks_transformers_builds(name: str) -> None:
    assert live.differences({**SMALL, **CASES[name]}) == []


@pytest.mark.parametrize("name", ZOO_CASES)
def test_spans_of_published_configs(name: str) -> None:
    config = {k: v for k, v in json.loads((ZOO / f"{name}.json").read_text()).items() if not k.startswith("_")}
    assert live.differences(config) == []


def test_the_probe_sees_windows() -> None:
    """The comparison can fail: transformers' masks differ between a window and none, and posenc's
    reading of the model-wide window is what makes them agree."""
    on = live.transformers_masks(live.shrunk({**SMALL, **CASES["mistral, a window"]}))
    off = live.transformers_masks(live.shrunk({**SMALL, **CASES["mistral, null"]}))
    assert [m.sum().item() for m in on] != [m.sum().item() for m in off]
    assert [m.sum(1).tolist() for m in on][0] == [min(i + 1, live.WINDOW) for i in range(live.LENGTH)]
    rope = read_config({**SMALL, **CASES["qwen2, switched on"]})
    assert rope.pattern == ("full_attention",) * 2 + ("sliding_attention",) * 4  # configuration_qwen2.py: i >= 2
    assert rope.layers["sliding_attention"].window == 4096 and rope.layers["full_attention"].window is None


def test_the_table_records_where_windows_apply() -> None:
    table = _rope_table.model_types()
    # read by hand in transformers' source (file: what it does)
    assert table["mistral"]["window_all_layers"]        # modeling_mistral.py: create_sliding_window_causal_mask
    assert table["qwen2"]["window_switch"] == {"key": "use_sliding_window", "default": False, "off": None}
    assert table["qwen2"]["window_layers"]["compare"] == ">="  # configuration_qwen2.py: i >= max_window_layers
    assert table["qwen2_moe"]["window_switch"]["off"] == 0     # configuration_qwen2_moe.py: ... else 0
    assert "window_all_layers" not in table["llama"]


@pytest.mark.parametrize(("config", "named"), [
    ({"model_type": "qwen2", "num_hidden_layers": 4, "use_sliding_window": True, "sliding_window": None},
     "config['use_sliding_window'] is true but config['sliding_window'] is null"),
    ({"model_type": "mistral", "num_hidden_layers": 4, "sliding_window": 0}, "config['sliding_window'] must be a positive"),
    ({"model_type": "mistral", "num_hidden_layers": 4, "sliding_window": -5}, "got -5"),
    ({"model_type": "qwen2", "num_hidden_layers": 4, "max_window_layers": -1, **WINDOWED},
     "config['max_window_layers'] must be an integer >= 0"),
    ({"model_type": "qwen2", "num_hidden_layers": 4, "max_window_layers": 4, **WINDOWED},
     "config['max_window_layers'] is 4 with 4 layers, so no layer gets the sliding window"),
    ({"model_type": "llama4_text", "num_hidden_layers": 4, "attention_chunk_size": 0},
     "config['attention_chunk_size'] must be a positive"),
])
def test_contradicting_window_keys_are_refused_by_name(config: dict[str, Any], named: str) -> None:
    with pytest.raises(ValueError, match=named.replace("[", r"\[").replace("]", r"\]")):
        read_config({**SMALL, **config})


def test_what_transformers_accepts_is_read() -> None:
    # a published Qwen2.5-VL-3B-style config: max_window_layers past the layer count, window off
    rope = read_config({**SMALL, "model_type": "qwen2", "num_hidden_layers": 36, "max_window_layers": 70,
                        "use_sliding_window": False, "sliding_window": 32768})
    assert set(rope.layers) == {"full_attention"} and rope.layers["full_attention"].window is None
    assert rope.pattern == ("full_attention",) * 36
    # dots1 has no switch: its class default window with max_window_layers past the layer count
    # windows no layer, as transformers' class does (configuration_dots1.py: i >= max_window_layers)
    dots = read_config({**SMALL, "model_type": "dots1", "num_hidden_layers": 6})
    assert dots.pattern == ("full_attention",) * 6 and dots.layers["full_attention"].window is None
    with pytest.raises(TypeError, match="config\\['use_sliding_window'\\] must be true or false"):
        read_config({**SMALL, "model_type": "qwen2", "num_hidden_layers": 4, "use_sliding_window": "yes"})


# The two notes on a model-wide window, word for word (they share one clause: _windows._ONE_MASK)
MODEL_WIDE = {
    "mistral-7b-v0.1": "config['sliding_window'] (4096) limits every attention layer: transformers' code for this "
                       "model type builds one sliding-window mask for the whole model",
    "phi-3.5-mini-instruct": "config['sliding_window'] (262144) would limit every attention layer (transformers' code "
                             "for this model type builds one sliding-window mask for the whole model), but it reaches "
                             "across the whole declared context (config['max_position_embeddings'] = 131072): no "
                             "effect within it"}


def test_a_model_wide_window_is_said_in_the_same_words_in_python_and_the_browser(tmp_path: Path) -> None:
    import shutil

    from tests.test_explorer_ports import run_js
    zoo = Path(__file__).resolve().parents[1] / "posenc" / "zoo"
    configs = [json.loads((zoo / f"{name}.json").read_text()) for name in MODEL_WIDE]
    for config, words in zip(configs, MODEL_WIDE.values()):
        assert [note for note in read_config(config).notes if "every attention layer" in note] == [words]
    if shutil.which("node") is None:
        pytest.skip("needs node to run the site's JavaScript")
    theirs = run_js(tmp_path, "(cases) => cases.map((c) => window.posencRopeConfig.readConfig(c).notes)", configs)
    assert theirs == [list(read_config(config).notes) for config in configs]
