"""The models table's *layers* cell, against the zoo files' own keys.

The expected cells are written from the raw JSON (the model-wide window and
the declared context, the layer count, Qwen3-Next's full-attention interval),
not from `read_config`, which the cell reads.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from posenc._zoo_rows import zoo_row

ZOO = Path(__file__).resolve().parents[1] / "posenc" / "zoo"

# a model-wide window (no layer_types): every layer is masked by it
WHOLE_MODEL_WINDOW = ["mistral-7b-v0.1", "starcoder2-7b",
                      "phi-3.5-mini-instruct", "phi-4-mini-instruct"]


def _entry(name: str) -> dict:
    return json.loads((ZOO / f"{name}.json").read_text())


@pytest.mark.parametrize("name", WHOLE_MODEL_WINDOW)
def test_a_model_wide_window_is_sliding_only_where_it_cuts(name: str) -> None:
    entry = _entry(name)
    assert "layer_types" not in entry
    window, context = entry["sliding_window"], entry["max_position_embeddings"]
    kind = "sliding" if window < context else "full"
    assert window % 1024 == 0  # the cell gives the width in k of 1,024 tokens: 4096 is "4k"
    width = f" ({window // 1024}k)" if kind == "sliding" else ""
    assert zoo_row(entry)[1] == f"{entry['num_hidden_layers']} {kind}{width}"


def test_the_phi_windows_are_longer_than_the_context() -> None:
    # the case the rule is for: without it both would read "32 sliding"
    for name in ("phi-3.5-mini-instruct", "phi-4-mini-instruct"):
        entry = _entry(name)
        assert entry["sliding_window"] > entry["max_position_embeddings"]


def test_linear_attention_layers_are_named_so() -> None:
    entry = _entry("qwen3-next-80b-a3b-instruct")
    layers, every = entry["num_hidden_layers"], entry["full_attention_interval"]
    full = layers // every
    assert zoo_row(entry)[1] == (f"{layers - full} linear attention, "
                                 f"{full} full")
