"""One layer type per layer: a ``layer_types`` list of another length than ``num_hidden_layers`` is
refused, as transformers' config classes refuse it (``validate_layer_type``,
configuration_utils.py:703-718; DeepSeek-V4's and NeoMME's own versions check the same; Nemotron-H
counts its layers from its list, num_hidden_layers being a property). read_config read such a list
as a shorter pattern of layers.

Checked live on every model type whose class defaults give a list of layer types: the class built
with half its layers' types refuses it, and so does read_config (where it reads that model type at
all), in Python and in the browser's port alike."""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path
from typing import Any

import pytest

transformers = pytest.importorskip("transformers")
from huggingface_hub.errors import StrictDataclassClassValidationError

from posenc.configs import read_config
from posenc.configs._table import model_types

MESSAGE = r"config\['layer_types'\] must have one entry per layer \((?P<n>\d+), num_hidden_layers\), got (?P<got>\d+)"


def _refuses(cls: Any, types: list[str], layers: int) -> bool:
    """Whether the config class, given ``layers`` and these layer types, refuses their count."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cls(num_hidden_layers=layers, layer_types=types)
    except (ValueError, StrictDataclassClassValidationError) as error:
        return "layer_types" in str(error) and str(layers) in str(error)
    except Exception:  # noqa: BLE001 - another failure says nothing of the count
        return False
    return False


def _short_configs() -> list[tuple[str, dict[str, Any]]]:
    """(model type, its class defaults with the layer types of the first half of its layers only)
    for every model type whose class, built so, refuses the count (shown live here)."""
    out = []
    for model_type in sorted(model_types()):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                cls = transformers.CONFIG_MAPPING[model_type]
                base = cls()
            except Exception:  # noqa: BLE001, S112 - not in this release, or a class with no defaults to try
                continue
        types, layers = getattr(base, "layer_types", None), getattr(base, "num_hidden_layers", None)
        if not (isinstance(types, list) and isinstance(layers, int) and layers >= 2 and len(types) == layers):
            continue
        if _refuses(cls, types[: layers // 2], layers):
            out.append((model_type, {**base.to_dict(), "layer_types": types[: layers // 2],
                                     "num_hidden_layers": layers}))
    return out


SHORT = _short_configs()


def test_read_config_refuses_what_the_classes_refuse() -> None:
    assert len(SHORT) > 60  # Gemma 2-4, Qwen3, Mistral 4, OLMo 3, ModernBERT, ... (in 5.23)
    counted = []
    for model_type, config in SHORT:
        with pytest.raises(ValueError) as refused:
            read_config({**config, "model_type": model_type})
        if "must have one entry per layer" in str(refused.value):
            counted.append(model_type)
    # The rest are refused before their layers are read (no RoPE, a vision tower, per-layer bases or
    # NoPE flags of the full length); every model type that reads layer types says the count.
    assert len(counted) > 55, counted
    for model_type in ("gemma2", "gemma3_text", "qwen3", "olmo3", "modernbert", "deepseek_v4"):
        assert model_type in counted


def test_the_message_names_both_counts() -> None:
    config = {"model_type": "qwen3", "num_hidden_layers": 4, "head_dim": 64, "num_attention_heads": 4,
              "hidden_size": 256, "layer_types": ["full_attention"] * 2}
    with pytest.raises(ValueError, match=MESSAGE) as refused:
        read_config(config)
    assert "(4, num_hidden_layers), got 2" in str(refused.value)
    assert read_config({**config, "layer_types": ["full_attention"] * 4}).layers is not None


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the site's JavaScript")
def test_the_browser_port_refuses_it_alike(tmp_path: Path) -> None:
    from tests.test_explorer_ports import port_against_posenc
    cases = [(json.dumps({**config, "model_type": model_type}), None, None) for model_type, config in SHORT]
    assert len(cases) > 60
    problems, outcomes = port_against_posenc(tmp_path, cases)
    assert not problems, "\n".join(problems[:10])
    assert outcomes.count(True) == 0
