"""Published configs read by mlx-lm's own model code, against posenc's `read_config`, run live.

For each config of posenc's zoo whose model type mlx-lm implements, the test builds mlx-lm's
attention module from the config (``ModelArgs.from_dict``, as ``mlx_lm.load`` does; MLX creates the
weights lazily, so nothing of the model's size is computed) and reads off the angle each rotary
pair turns at positions inside and beyond the trained context, each position the last of its
sequence. posenc's angles come from `read_config` alone. The budget is float32's, k = 8, on the
angle. Two configs are read otherwise by mlx-lm (the chapter "Positions in the engines you run"):
Phi-3.5 and Phi-4-mini (LongRoPE: the long factors within the original length) and gpt-oss
(YaRN: truncate dropped); the test asserts where they differ and that they agree elsewhere.
"""

from __future__ import annotations

import importlib
import json
import math
from importlib.resources import files

import numpy as np
import pytest

from posenc.configs import read_config
from posenc.rope_scaling import rope_inverse_frequencies
from tests.engines._common import EPS32

mx = pytest.importorskip("mlx.core", reason="mlx (the mlx[cpu] wheel) is not installed: make install installs it")
pytest.importorskip("mlx_lm", reason="mlx-lm is not installed: make install installs it")

POSITIONS = (1, 100, 4095, 4096, 8192, 50_000, 131_071)
# zoo config -> (mlx-lm module, attention class, positions where mlx-lm reads it otherwise); every zoo
# config whose model type mlx-lm implements and whose ModelArgs the zoo's keys fill (checked: falcon,
# mistral, modernbert, kimi_k2, minimax_m2, qwen2_5_vl and qwen3_vl_text have no mlx-lm module of that
# name; glm4, glm4_moe, granite, llama4_text, gpt_neox, stablelm and qwen3_next require keys that do not
# bear on positions, which the zoo does not keep; smollm3's attention has no rope attribute).
CASES = {
    "llama-3.1-8b": ("llama", "Attention", ()),
    "llama-3.2-1b": ("llama", "Attention", ()),
    "llama-3.2-3b": ("llama", "Attention", ()),
    "qwen2-7b-instruct": ("qwen2", "Attention", ()),
    "qwen2.5-3b-instruct": ("qwen2", "Attention", ()),
    "qwen2.5-7b-instruct-yarn": ("qwen2", "Attention", ()),
    "qwen3-1.7b-yarn": ("qwen3", "Attention", ()),
    "qwen3-1.7b": ("qwen3", "Attention", ()),
    "qwen3-0.6b": ("qwen3", "Attention", ()),
    "phi-3.5-mini-instruct": ("phi3", "Attention", (1, 100, 4095)),
    "phi-4-mini-instruct": ("phi3", "Attention", (1, 100, 4095)),
    "phi-4": ("phi3", "Attention", ()),
    "gpt-oss-120b": ("gpt_oss", "AttentionBlock", POSITIONS),  # other frequencies: every position
    "gemma-2-2b": ("gemma2", "Attention", ()),
    "gemma-2-9b": ("gemma2", "Attention", ()),
    "gemma-3-1b-it": ("gemma3_text", "Attention", ()),
    "gemma-3-27b-it": ("gemma3_text", "Attention", ()),
    "ministral-3-3b-2512": ("ministral3", "Attention", ()),
    "devstral-small-2-24b-instruct-2512": ("ministral3", "Attention", ()),
    "mixtral-8x7b-v0.1": ("mixtral", "MixtralAttention", ()),
    "olmo-2-1124-7b": ("olmo2", "Attention", ()),
    "starcoder2-7b": ("starcoder2", "Attention", ()),
    "aya-23-8b": ("cohere", "Attention", ()),
    "command-r-v01": ("cohere", "Attention", ()),
    "c4ai-command-r7b-12-2024": ("cohere2", "Attention", ()),
    "gpt-j-6b": ("gptj", "GPTJAttention", ()),
    "deepseek-v2-lite": ("deepseek_v2", "DeepseekV2Attention", ()),
    "deepseek-v3": ("deepseek_v3", "DeepseekV3Attention", ()),
}


# The zoo keeps the keys that bear on positions; mlx-lm's ModelArgs also requires these, which do not.
_NOT_POSITIONS = {"intermediate_size": 8, "rms_norm_eps": 1e-5, "vocab_size": 8, "tie_word_embeddings": False}


def zoo(name: str) -> dict:
    entry = json.loads(files("posenc").joinpath(f"zoo/{name}.json").read_text())
    return {**_NOT_POSITIONS, **{k: v for k, v in entry.items() if not k.startswith("_")}}


def mlx_config(config: dict) -> dict:
    """The dict mlx-lm's text model reads: a text_config's keys over the outer ones (mlx-lm's
    multimodal wrappers pass text_config on to the text model)."""
    inner = config.get("text_config")
    return {**config, **inner} if isinstance(inner, dict) else config


def mlx_angles(rope, width: int, p: int, layout: str = "half") -> tuple[np.ndarray, np.ndarray]:
    """The angle each pair turns at position p (pairs (i, i + width/2), or (2i, 2i + 1) interleaved),
    and its length: the factor on cos and sin (each pair goes in as (1, 0))."""
    x = np.zeros(width, dtype=np.float32)
    first = np.arange(width // 2) if layout == "half" else 2 * np.arange(width // 2)
    second = first + width // 2 if layout == "half" else first + 1
    x[first] = 1.0
    out = np.array(rope(mx.array(x[None, None, None]), offset=p), dtype=np.float64).reshape(-1)
    return np.arctan2(out[second], out[first]), np.hypot(out[second], out[first])


def _rope_of(models, attention_name: str, args, index: int):
    cls = getattr(models, attention_name)
    try:
        return cls(args, index).rope   # most take the layer's index (sliding or full, per layer)
    except TypeError:
        return cls(args).rope


@pytest.mark.parametrize("name", sorted(CASES))
def test_mlx_reads_the_config(name):
    module_name, attention_name, differs = CASES[name]
    models = importlib.import_module(f"mlx_lm.models.{module_name}")
    config = zoo(name)
    args = models.ModelArgs.from_dict(mlx_config(config))
    rotating = [layer for layer in read_config(config).layers.values() if layer.rotates]
    assert rotating
    for layer in rotating:  # one layer of each kind (gemma: sliding and full layers, their own bases)
        rope = _rope_of(models, attention_name, args, layer.layers[0] if layer.layers else 0)
        assert getattr(rope, "traditional", layer.layout == "interleaved") == (layer.layout == "interleaved")
        width = layer.rotary_dim or layer.dim
        for p in POSITIONS:
            theta = rope_inverse_frequencies(layer.dim, base=layer.base, scaling=layer.scaling, seq_len=p + 1,
                                             rotary_dim=layer.rotary_dim).numpy()
            want = p * theta
            got, radius = mlx_angles(rope, width, p, layer.layout)
            assert np.allclose(radius, layer.attention_factor, rtol=1e-6), (name, p, radius.max())
            gap = np.abs(np.mod(got - want + math.pi, 2 * math.pi) - math.pi)
            budget = 8 * EPS32 * (want + 1) + 1e-6
            assert bool((gap <= budget).all()) == (p not in differs), (name, layer.layer_type, p, float(gap.max()))
            if p in differs:
                assert (gap / budget).max() > 100, (name, p, float(gap.max()))  # far outside float32 rounding
