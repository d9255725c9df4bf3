"""HunYuan's fixed NTK ``alpha``, read as transformers 5.23.0 runs it, against its rotary modules.

HunYuan's checkpoints label their scaling ``"dynamic"`` and give an ``alpha``; the model types whose
rotary module defines ``compute_ntk_alpha_rope_parameters`` (derived below from the pinned source)
run such a set as their own type "ntk_alpha": the base ``rope_theta * alpha ** (d / (d - 2))`` with
``d = config.head_dim``, attention factor 1, and no growth with the sequence
(modeling_hunyuan_v1_dense.py:296-356; modeling_rope_utils.py:121-128 regrows only types named
"dynamic"). read_config reads it as posenc's "ntk" rule with factor alpha (posenc/configs/_ntk_alpha.py).

The model-type table marks those types with ``ntk_alpha`` (derived by its generator,
tools/rope_model_types/); `test_the_table_marks_exactly_those_types` ties the two.

The published configs are not reachable from here (huggingface.co): the "published-shaped" configs
are ASSUMED, built from the config classes' defaults plus the rope keys Hunyuan-7B and
Hunyuan-A13B's config.json are reported to carry (a ``rope_scaling`` of type "dynamic" with
``alpha`` 1000 and the unused YaRN-style keys beside it, ``rope_theta`` 10000, ``head_dim`` 128);
the exact key values of the published files were not checked.
"""

from __future__ import annotations

import copy
import importlib
import inspect
import json
import logging
import math
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import torch
import transformers

from posenc.configs import _table, from_config, read_config
from posenc.configs._ntk_alpha import ALPHA_NOTE
from posenc.rope import RotaryEmbedding, rope_inverse_frequencies

logging.getLogger("transformers").setLevel(logging.ERROR)  # the classes warn on the keys they do not read

MODELS = Path(transformers.__file__).parent / "models"
PUBLISHED_SCALING = {"alpha": 1000.0, "beta_fast": 32, "beta_slow": 1, "factor": 1.0, "mscale": 1.0,
                     "mscale_all_dim": 1.0, "type": "dynamic"}
SHAPE = {"head_dim": 128, "max_position_embeddings": 32768, "rope_theta": 10000.0}
POSITIONS = (0, 1, 7, 2048, 32767, 100000)  # the last two at and past max_position_embeddings


def ntk_alpha_modules() -> dict[str, tuple[Any, Any]]:
    """model type -> (config class, rotary class), for every rotary module of the pinned transformers
    that defines its own ``compute_ntk_alpha_rope_parameters``, by the config class its __init__ takes."""
    found: dict[str, tuple[Any, Any]] = {}
    for path in sorted(MODELS.glob("*/modeling_*.py")):
        if "def compute_ntk_alpha_rope_parameters" not in path.read_text():
            continue
        module = importlib.import_module(f"transformers.models.{path.parent.name}.{path.stem}")
        for name, cls in vars(module).items():
            if name.endswith("RotaryEmbedding") and "compute_ntk_alpha_rope_parameters" in vars(cls):
                config_class = inspect.signature(cls.__init__).parameters["config"].annotation
                config_class = getattr(module, config_class) if isinstance(config_class, str) else config_class
                found[config_class.model_type] = (config_class, cls)
    return found


MODULES = ntk_alpha_modules()


def reference(theta: float, alpha: float, dim: int) -> torch.Tensor:
    """float64, from the formula: theta_i = (rope_theta * alpha^(d/(d-2)))^(-2i/d)."""
    base = theta * alpha ** (dim / (dim - 2))
    return torch.tensor([base ** (-2 * i / dim) for i in range(dim // 2)], dtype=torch.float64)


def published_shaped(model_type: str, **rope: Any) -> dict[str, Any]:
    """The class defaults plus the (assumed) published rope keys, as a config.json gives them."""
    config_class, _ = MODULES[model_type]
    config = {k: v for k, v in config_class().to_dict().items() if k != "rope_parameters"}
    return {**config, **SHAPE, "rope_scaling": dict(PUBLISHED_SCALING), **rope, "model_type": model_type}


def transformers_rotary(model_type: str, config: dict[str, Any]) -> Any:
    config_class, rotary_class = MODULES[model_type]
    return rotary_class(config_class.from_dict(copy.deepcopy(config)))


def test_which_model_types_read_alpha() -> None:
    # HunYuan dense and MoE, and HunYuan-VL's text model: the modules that turn "dynamic" with alpha into
    # "ntk_alpha" (modeling_utils.py:2352 initialises such a module's tables with the same function)
    assert sorted(MODULES) == ["hunyuan_v1_dense", "hunyuan_v1_moe", "hunyuan_vl_text"]
    for _, rotary_class in MODULES.values():
        source = inspect.getsource(rotary_class.__init__)
        assert re.search(r'rope_type == "dynamic" and self\.config\.rope_parameters\.get\("alpha"\)', source)


def test_the_table_marks_exactly_those_types() -> None:
    marked = sorted(t for t, entry in _table.model_types().items() if entry.get("ntk_alpha"))
    assert marked == sorted(MODULES)


@pytest.mark.parametrize("model_type", ["hunyuan_v1_dense", "hunyuan_v1_moe"])
def test_a_published_shaped_config_reads_as_its_rotary_module(model_type: str) -> None:
    config = published_shaped(model_type)
    rope = read_config(config)
    (layer,) = rope.layers.values()
    assert (layer.dim, layer.rotary_dim, layer.base) == (128, 128, 10000.0)
    assert layer.scaling == {"type": "ntk", "factor": 1000.0} and layer.attention_factor == 1.0
    assert ALPHA_NOTE in rope.notes
    expected = reference(10000.0, 1000.0, 128)
    rotary = transformers_rotary(model_type, config)
    assert rotary.rope_type == "ntk_alpha" and rotary.attention_scaling == 1.0
    torch.testing.assert_close(rotary.inv_freq.double(), expected, rtol=4e-6, atol=0)  # float32 frequencies
    ours = RotaryEmbedding(**from_config(config))
    torch.testing.assert_close(ours.inv_freq.double(), expected, rtol=1e-12, atol=0)
    assert_tables_match(ours, rotary, 128)
    # no growth: the frequencies past max_position_embeddings are those of the trained length, in both
    long = rope_inverse_frequencies(128, base=10000.0, scaling=layer.scaling, seq_len=100001)
    torch.testing.assert_close(long, expected, rtol=1e-12, atol=0)


def assert_tables_match(ours: RotaryEmbedding, rotary: Any, width: int) -> None:
    positions = torch.tensor([POSITIONS])
    before = rotary.inv_freq.clone()
    their_cos, their_sin = rotary(torch.zeros(1, len(POSITIONS), width), positions)
    assert torch.equal(rotary.inv_freq, before)  # dynamic_rope_update did not regrow them at 100,000
    cos, sin = ours.tables(positions[0])
    angles = torch.tensor(POSITIONS, dtype=torch.float64)[:, None] * ours.inv_freq.double()
    torch.testing.assert_close(cos.double(), angles.cos(), rtol=0, atol=1e-9)
    tolerance = 8 * 2**-24 * max(POSITIONS) * float(ours.inv_freq.max()) + 1e-6  # float32 angles in transformers
    for a, b in ((cos, their_cos), (sin, their_sin)):
        b = b.reshape(-1, len(POSITIONS), b.shape[-1])[0]
        torch.testing.assert_close(a.double(), b[:, : width // 2].double(), rtol=0, atol=tolerance)


def test_hunyuan_vl_text_reads_alpha_for_text_tokens() -> None:
    # M-RoPE with four sections: a text token has the same position on every axis (the module's
    # recomposition then gives each frequency its own position)
    config = {**SHAPE, "hidden_size": 1024, "num_attention_heads": 8, "model_type": "hunyuan_vl_text",
              "rope_scaling": {**PUBLISHED_SCALING, "mrope_section": [16, 16, 16, 16]}}
    layer = next(iter(read_config(config).layers.values()))
    assert layer.scaling == {"type": "ntk", "factor": 1000.0}
    wrapped = read_config({"model_type": "hunyuan_vl", "text_config": config})
    assert next(iter(wrapped.layers.values())).scaling == layer.scaling
    rotary = transformers_rotary("hunyuan_vl_text", config)
    assert rotary.rope_type == "ntk_alpha"
    torch.testing.assert_close(rotary.inv_freq.double(), reference(10000.0, 1000.0, 128), rtol=4e-6, atol=0)
    assert_tables_match(RotaryEmbedding(**from_config(config)), rotary, 128)


def transformers_outcome(model_type: str, config: dict[str, Any]) -> str:
    """What transformers makes of ``config``: the rope type its rotary module runs, or its error."""
    try:
        rotary = transformers_rotary(model_type, config)
        return "complex" if rotary.inv_freq.is_complex() else f"{rotary.rope_type} {rotary.inv_freq.shape[-1]}"
    except Exception as error:  # noqa: BLE001 (what transformers raises is the point)
        return type(error).__name__


def _without(mapping: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in mapping.items() if k != key}


# (what changes in the published-shaped dense config, what transformers does, posenc's error and message)
REFUSED: list[tuple[dict[str, Any], str, type[Exception], str]] = [
    ({"rope_scaling": {**PUBLISHED_SCALING, "alpha": 0.0, "factor": 2.0}}, "dynamic 64",  # alpha falsy: plain dynamic
     ValueError, r"rope_parameters\['alpha'\] must be >= 1.0, got 0.0"),
    ({"rope_scaling": {**PUBLISHED_SCALING, "alpha": 0.5}}, "ntk_alpha 64",  # a smaller base: not a longer context
     ValueError, r"rope_parameters\['alpha'\] must be >= 1.0, got 0.5"),
    ({"rope_scaling": {**PUBLISHED_SCALING, "alpha": -2.0}}, "complex",
     ValueError, r"rope_parameters\['alpha'\] must be >= 1.0, got -2.0"),
    ({"rope_scaling": {**PUBLISHED_SCALING, "alpha": "1000"}}, "TypeError",
     TypeError, r"rope_parameters\['alpha'\] must be a real number, got str '1000'"),
    ({"rope_scaling": {"type": "linear", "factor": 2.0, "alpha": 1000.0}}, "linear 64",  # alpha ignored
     ValueError, r"rope_parameters\['alpha'\] = 1000.0 is read only with rope type 'dynamic'.*'linear'"),
    ({"rope_scaling": _without(PUBLISHED_SCALING, "factor")}, "KeyError",
     ValueError, r"need 'factor' beside rope_parameters\['alpha'\] = 1000.0"),
    ({"head_dim": None, "hidden_size": 4096, "num_attention_heads": 32}, "TypeError",
     ValueError, r"config needs 'head_dim' with rope_parameters\['alpha'\]"),
    ({"partial_rotary_factor": 0.5}, "ntk_alpha 64",  # the whole head turns, whatever the fraction says
     ValueError, r"partial_rotary_factor is 0.5, but with rope_parameters\['alpha'\].*whole head"),
]


@pytest.mark.parametrize(("change", "theirs", "error", "message"), REFUSED)
def test_bad_alpha_is_refused_where_transformers_fails_or_runs_otherwise(
        change: dict[str, Any], theirs: str, error: type[Exception], message: str) -> None:
    config = {**published_shaped("hunyuan_v1_dense"), **change}
    assert transformers_outcome("hunyuan_v1_dense", config) == theirs
    with pytest.raises(error, match=message):
        read_config(config)


def test_alpha_where_no_rotary_module_reads_it_stays_unknown() -> None:
    # Llama's rotary module runs "dynamic" and ignores alpha: posenc refuses the key, as before
    config = {**SHAPE, "model_type": "llama", "rope_scaling": {"type": "dynamic", "factor": 2.0, "alpha": 1000.0}}
    rotary = transformers.models.llama.modeling_llama.LlamaRotaryEmbedding(
        transformers.LlamaConfig.from_dict(copy.deepcopy(config)))
    assert rotary.rope_type == "dynamic"
    with pytest.raises(ValueError, match=r"rope parameters of type 'dynamic' got the unknown key 'alpha'"):
        read_config(config)


def test_alpha_one_is_the_plain_base() -> None:
    config = published_shaped("hunyuan_v1_moe", rope_scaling={**PUBLISHED_SCALING, "alpha": 1.0})
    ours = RotaryEmbedding(**from_config(config)).inv_freq.double()
    torch.testing.assert_close(ours, reference(10000.0, 1.0, 128), rtol=1e-12, atol=0)
    assert math.isclose(float(transformers_rotary("hunyuan_v1_moe", config).inv_freq[1]), float(ours[1]), rel_tol=4e-6)


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the site's JavaScript")
def test_the_browser_port_reads_alpha_as_posenc(tmp_path: Path) -> None:
    from tests.test_explorer_ports import port_against_posenc
    dense = published_shaped("hunyuan_v1_dense")
    vl_text: dict[str, Any] = {**SHAPE, "hidden_size": 1024, "num_attention_heads": 8,
               "rope_scaling": {**PUBLISHED_SCALING, "mrope_section": [16, 16, 16, 16]}}
    configs = [dense, published_shaped("hunyuan_v1_moe"), {"model_type": "hunyuan_vl", "text_config": vl_text},
               {**vl_text, "model_type": "hunyuan_vl_text", "rope_scaling": {**vl_text["rope_scaling"], "alpha": 0.0}},
               {**dense, "rope_scaling": {"type": "dynamic", "alpha": None, "factor": 2.0}},  # plain dynamic
               {**dense, "rope_scaling": {**PUBLISHED_SCALING, "alpha": None}},  # plain dynamic: unknown keys
               {**dense, "rope_scaling": {**PUBLISHED_SCALING, "alpha": True}},
               {**dense, "rope_scaling": {**PUBLISHED_SCALING, "alpha": 2e6}},
               {**dense, "rope_scaling": {**PUBLISHED_SCALING, "foo": 1}},
               {**dense, "rope_parameters": {"rope_type": "dynamic", "alpha": 50.0, "factor": 1.0}, "rope_scaling": None},
               {**SHAPE, "model_type": "llama", "rope_scaling": {"type": "dynamic", "factor": 2.0, "alpha": 1000.0}},
               *({**dense, **change} for change, *_ in REFUSED)]
    cases = [(json.dumps(config), None, length) for config in configs for length in (None, 100000)]
    problems, outcomes = port_against_posenc(tmp_path, cases)
    read = outcomes.count(True)
    assert not problems, "\n".join(problems[:10])
    assert read == 2 * 5  # dense, MoE, VL, plain dynamic, rope_parameters with alpha: read; the rest refused


def test_a_null_alpha_is_plain_dynamic_ntk() -> None:
    # transformers' `.get("alpha")` is None: the module keeps "dynamic" and grows past the trained length
    config = published_shaped("hunyuan_v1_dense", rope_scaling={"type": "dynamic", "factor": 2.0, "alpha": None})
    assert transformers_outcome("hunyuan_v1_dense", config) == "dynamic 64"
    (layer,) = read_config(config).layers.values()
    assert layer.scaling == {"type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 32768}
    assert ALPHA_NOTE not in read_config(config).notes
