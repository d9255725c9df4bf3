"""The layer pattern `read_config` computes for a config.json without ``layer_types``, against the
pinned transformers' config classes, at every layer count from 1 to 14.

The model-type table records each class's rule ("every k-th layer is full attention", counted from
the first or the last layer, the last layer forced where the class forces it). The table is derived
at 12 layers and checked at a few other counts (tools/rope_model_types); this checks every count
here, for every model type with such a rule, and read_config's layers for the RoPE ones.
"""

from __future__ import annotations

import logging
import warnings

import pytest

pytest.importorskip("transformers", reason="transformers is a test dependency (requirements.lock)")

from posenc.configs import _table as _rope_table
from posenc.configs import read_config

PATTERNS = sorted((model_type, name) for model_type, found in _rope_table.model_types().items()
                  for name in ("layer_pattern", "nope_pattern") if name in found)
FIELDS = {"layer_pattern": "layer_types", "nope_pattern": "no_rope_layers"}


def _transformers(model_type: str, layers: int) -> object:
    import transformers

    logging.getLogger("transformers").setLevel(logging.ERROR)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = transformers.AutoConfig.for_model(model_type, num_hidden_layers=layers)
    return config.get_text_config(decoder=True)


def test_the_model_types_whose_class_forces_or_counts_from_the_last_layer_are_in_the_table() -> None:
    table = _rope_table.model_types()
    assert {m for m, _ in PATTERNS if "last" in table[m].get("layer_pattern", {})} >= {"beam", "gemma4_text", "neomme"}
    assert {m for m, _ in PATTERNS if table[m].get("layer_pattern", {}).get("from_end")} >= {"muse_spark_text"}


@pytest.mark.parametrize(("model_type", "name"), PATTERNS, ids=[f"{m}-{n}" for m, n in PATTERNS])
def test_every_layer_count(model_type: str, name: str) -> None:
    found = _rope_table.model_types()[model_type]
    checked = 0
    for layers in range(1, 15):
        try:
            text = _transformers(model_type, layers)
        except Exception:  # noqa: BLE001 - some classes refuse some counts (OLMo-Hybrid: no linear layer at 1 to 3)
            continue
        expected = list(getattr(text, FIELDS[name]))
        assert _rope_table.every_k(found[name], {}, layers) == expected, (layers, expected)
        checked += 1
    assert checked >= 8, f"transformers built {model_type} at only {checked} layer counts"


@pytest.mark.parametrize("layers", [5, 7, 8])
def test_read_config_finds_the_full_attention_layers_transformers_builds(layers: int) -> None:
    # Gemma 4 with 5 layers: transformers makes the last one full attention; the plain every-6th
    # rule had none, and from_config without a layer type answered for the sliding layers alone.
    config = {"model_type": "gemma4_text", "hidden_size": 64, "num_attention_heads": 4, "head_dim": 16,
              "num_hidden_layers": layers}
    rope = read_config(config)
    expected = list(_transformers("gemma4_text", layers).layer_types)  # type: ignore[attr-defined]
    assert list(rope.pattern) == expected
    assert rope.layers["full_attention"].layers[-1] == layers - 1
