"""The inspector's engine warnings (`posenc.engines.TRIGGERS`, shown by ``posenc.inspect --engines``).

For each disagreement of `posenc.engines.DISAGREEMENTS`: configs that trigger exactly the expected
warnings, and configs beside them that do not. Then, where the engine runs here, the warnings are
checked against the engine itself: mlx-lm's own model code reads each config (as ``mlx_lm.load``
does) and its rotation differs from posenc's reading (transformers') exactly where the inspector
warns. (llama.cpp's LongRoPE warning rests on reading its source, see the chapter; ggml's IMROPE and
Keras's dynamic rule are run in test_ggml.py and test_keras.py.)
"""

from __future__ import annotations

import importlib
import json
import math
import re
from importlib.resources import files
from pathlib import Path

import numpy as np
import pytest

from posenc.engines import (
    DISAGREEMENTS,
    ENGINES,
    IMROPE_MODEL_TYPES,
    LLAMA3_MODEL_TYPES,
    PAGE,
    TRIGGERS,
    engine_data,
)
from posenc.inspect import describe

PAGE_TEXT = (Path(__file__).resolve().parents[2] / "docs" / PAGE).read_text()
LLAMA = {"model_type": "llama", "hidden_size": 2048, "num_attention_heads": 32, "num_hidden_layers": 4,
         "rope_theta": 10000.0, "max_position_embeddings": 32768}
YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 8192}
_NAMES = {engine.name: key for key, engine in ENGINES.items()}


def zoo(name: str) -> dict:
    entry = json.loads(files("posenc").joinpath(f"zoo/{name}.json").read_text())
    return {k: v for k, v in entry.items() if not k.startswith("_")}


def phi(**scaling) -> dict:
    config = zoo("phi-3.5-mini-instruct")
    return {**config, "rope_scaling": {**config["rope_scaling"], **scaling}}


def same_factors() -> dict:
    """Phi-3.5 with its short factors copied into long_factor (no other change)."""
    config = zoo("phi-3.5-mini-instruct")
    return phi(long_factor=list(config["rope_scaling"]["short_factor"]))


def yarn(**extra) -> dict:
    return {**LLAMA, "rope_scaling": {**YARN, **extra}}


def warned(config: dict) -> dict[tuple[str, str], str]:
    """(engine, feature) -> the warning line, from the inspector's output."""
    text = describe(config, engines=True)
    lines = text.split("engine warnings:\n")[1].splitlines() if "engine warnings:" in text else []
    found = {}
    for line in lines:
        name, feature = re.match(r"- (.+?) computes this config otherwise \((.+?):", line).groups()
        key = next(k for k, label in ENGINE_FEATURES.items() if label == (name, feature))
        found[key] = line
    return found


ENGINE_FEATURES = {(d.engine, d.feature): (ENGINES[d.engine].name, dict(engine_data()["features"])[d.feature])
                   for d in DISAGREEMENTS}
KERAS, MLX_LONG, MLX_YARN = ("keras-hub", "dynamic"), ("mlx-lm", "longrope"), ("mlx-lm", "yarn")
CPP_LONG, CPP_IMROPE = ("llama.cpp", "longrope"), ("llama.cpp", "imrope")
META_LLAMA3 = ("llama-models", "llama3")


def llama3(model_type: str = "llama", **settings) -> dict:
    rule = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192}
    return {**LLAMA, "model_type": model_type, "rope_theta": 500000.0, "max_position_embeddings": 131072,
            "rope_scaling": {**rule, **settings}}

# name -> (config, the warnings expected, the setting each names)
CASES = {
    "dynamic": ({**LLAMA, "rope_scaling": {"rope_type": "dynamic", "factor": 2.0}}, {KERAS: "rope_type 'dynamic'"}),
    "linear": ({**LLAMA, "rope_scaling": {"rope_type": "linear", "factor": 2.0}}, {}),
    "plain": (LLAMA, {}),
    "yarn truncate false": (yarn(truncate=False), {MLX_YARN: "truncate false"}),
    "yarn truncate true": (yarn(truncate=True), {}),
    "yarn plain": (yarn(), {}),
    "yarn attention_factor": (yarn(attention_factor=1.2), {MLX_YARN: "attention_factor 1.2"}),
    "yarn mscale alone": (yarn(mscale=0.707), {MLX_YARN: "mscale 0.707 without mscale_all_dim"}),
    "yarn mscale 1 alone": (yarn(mscale=1.0), {}),
    "yarn mscale_all_dim alone": (yarn(mscale_all_dim=0.5), {MLX_YARN: "mscale_all_dim 0.5 without mscale"}),
    "yarn both mscales": (yarn(mscale=0.707, mscale_all_dim=0.707), {}),
    "longrope phi-3.5": (phi(), {MLX_LONG: "short_factor differs from long_factor",
                                 CPP_LONG: "short_factor differs from long_factor"}),
    "longrope same factors": (same_factors(), {}),
    "longrope factor": ({**same_factors(), "rope_scaling": {**same_factors()["rope_scaling"], "factor": 4.0}},
                        {MLX_LONG: "factor 4.0", CPP_LONG: "factor 4.0"}),
    "imrope qwen3-vl": (zoo("qwen3-vl-yarn"), {CPP_IMROPE: "model_type 'qwen3_vl_text'"}),
    "mrope blocks qwen2.5-vl": (zoo("qwen2.5-vl-7b-instruct-yarn"), {}),
    "llama3 llama-3.2-1b": (zoo("llama-3.2-1b"), {META_LLAMA3: "factor 32.0"}),
    "llama3 llama-3.1-8b": (zoo("llama-3.1-8b"), {}),
    "llama3 factor 8 as an int": (llama3(factor=8), {}),
    "llama3 high_freq_factor 2": (llama3(high_freq_factor=2.0), {META_LLAMA3: "high_freq_factor 2.0"}),
    "llama3 two settings": (llama3(factor=16.0, original_max_position_embeddings=4096),
                            {META_LLAMA3: "factor 16.0; original_max_position_embeddings 4096"}),
    "llama3 llama 4 scout": (zoo("llama-4-scout-17b-16e-instruct"), {}),  # Meta's Llama 4 code takes the factor
    "llama3 factor 32 not a llama": (llama3("mistral", factor=32.0), {}),  # Meta's code does not run it
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_disagreement_fires_exactly(name: str) -> None:
    config, expected = CASES[name]
    found = warned(config)
    assert set(found) == set(expected), (name, list(found))
    for key, setting in expected.items():
        line = found[key]
        section = next(d.section for d in DISAGREEMENTS if (d.engine, d.feature) == key)
        assert f": {setting}" in line or f"; {setting}" in line, line   # names the key and its value
        assert line.endswith(f"(see {PAGE}#{section})"), line
        assert f"{{#{section}}}" in PAGE_TEXT  # the chapter has that section


def test_every_disagreement_has_a_trigger_and_a_case() -> None:
    keys = {(d.engine, d.feature) for d in DISAGREEMENTS}
    assert {(t.engine, t.feature) for t in TRIGGERS} == keys
    assert set().union(*(expected for _, expected in CASES.values())) == keys
    assert "qwen2_5_vl_text" not in IMROPE_MODEL_TYPES and "qwen3_vl_text" in IMROPE_MODEL_TYPES
    assert "llama4_text" not in LLAMA3_MODEL_TYPES
    json.dumps(engine_data())  # the data a port reads is plain JSON


def test_only_with_engines() -> None:
    assert "engine warnings" not in describe(yarn(truncate=False))


# ---- against Meta's llama-models itself ----------------------------------------------------------------------

def _meta_differs(config: dict) -> bool:
    """Whether Meta's Llama 3 rule (llama_models.llama3.model.apply_scaling, compiled alone from the
    installed file: the module imports fairscale at the top, the function needs only torch) gives
    other frequencies than posenc's reading of the config (transformers')."""
    import ast
    import importlib.util

    import torch

    from posenc import read_config
    from posenc.rope_scaling import rope_inverse_frequencies

    spec = importlib.util.find_spec("llama_models")
    if spec is None:
        pytest.skip("llama-models is not installed: make install installs it")
    source = Path(spec.submodule_search_locations[0]) / "llama3" / "model.py"
    function = next(node for node in ast.parse(source.read_text()).body
                    if isinstance(node, ast.FunctionDef) and node.name == "apply_scaling")
    namespace: dict = {"torch": torch}
    exec(compile(ast.Module([function], []), str(source), "exec"), namespace)  # noqa: S102 (Meta's installed code)
    layer = next(layer for layer in read_config(config).layers.values() if layer.rotates)
    plain = rope_inverse_frequencies(layer.dim, base=layer.base)
    ours = rope_inverse_frequencies(layer.dim, base=layer.base, scaling=layer.scaling)
    return not torch.allclose(namespace["apply_scaling"](plain), ours, rtol=1e-12, atol=0)


META_CASES = [name for name, (config, _) in CASES.items() if config.get("rope_scaling", {}).get("rope_type") == "llama3"
              and config["model_type"] in LLAMA3_MODEL_TYPES]


@pytest.mark.parametrize("name", META_CASES)
def test_meta_differs_exactly_where_warned(name: str) -> None:
    config, expected = CASES[name]
    assert _meta_differs(config) == (META_LLAMA3 in expected), name


# ---- against mlx-lm itself ---------------------------------------------------------------------------

_NOT_POSITIONS = {"intermediate_size": 8, "rms_norm_eps": 1e-5, "vocab_size": 8, "tie_word_embeddings": False}
POSITIONS = (1, 100, 4095, 20_000)


def _mlx_differs(config: dict) -> bool:
    """Whether mlx-lm's own attention module, built from the config, turns any pair by another angle or
    scales it by another factor than posenc's reading (transformers) does, at a sequence ending at p."""
    mx = pytest.importorskip("mlx.core", reason="mlx (the mlx[cpu] wheel) is not installed: make install installs it")
    pytest.importorskip("mlx_lm", reason="mlx-lm is not installed: make install installs it")
    from posenc import read_config
    from posenc.rope_scaling import rope_inverse_frequencies

    module = importlib.import_module(f"mlx_lm.models.{config['model_type']}")
    rope = module.Attention(module.ModelArgs.from_dict({**_NOT_POSITIONS, **config})).rope
    layer = next(layer for layer in read_config(config).layers.values() if layer.rotates)
    width = layer.rotary_dim
    x = np.zeros(width, dtype=np.float32)
    x[: width // 2] = 1.0
    for p in POSITIONS:
        out = np.array(rope(mx.array(x[None, None, None]), offset=p), dtype=np.float64).reshape(-1)
        first, second = out[: width // 2], out[width // 2:]
        want = p * rope_inverse_frequencies(layer.dim, base=layer.base, scaling=layer.scaling, seq_len=p + 1,
                                            rotary_dim=layer.rotary_dim).numpy()
        gap = np.abs(np.mod(np.arctan2(second, first) - want + math.pi, 2 * math.pi) - math.pi)
        if (gap > 8 * 2.0**-23 * (want + 1) + 1e-6).any():
            return True
        if np.abs(np.hypot(first, second) - layer.attention_factor).max() > 1e-5:
            return True
    return False


MLX_CASES = [name for name, (config, _) in CASES.items() if config["model_type"] in ("llama", "phi3")
             and config.get("rope_scaling", {}).get("rope_type", config.get("rope_scaling", {}).get("type"))
             in ("yarn", "longrope", None)]


@pytest.mark.parametrize("name", MLX_CASES)
def test_mlx_differs_exactly_where_warned(name: str) -> None:
    config, expected = CASES[name]
    assert _mlx_differs(config) == any(engine == "mlx-lm" for engine, _ in expected), name
