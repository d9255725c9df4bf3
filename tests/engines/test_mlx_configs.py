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
# zoo config -> (mlx-lm module, attention class, positions where mlx-lm reads it otherwise)
CASES = {
    "llama-3.1-8b": ("llama", "Attention", ()),
    "llama-3.2-1b": ("llama", "Attention", ()),
    "qwen2.5-7b-instruct-yarn": ("qwen2", "Attention", ()),
    "qwen3-1.7b-yarn": ("qwen3", "Attention", ()),
    "qwen3-0.6b": ("qwen3", "Attention", ()),
    "phi-3.5-mini-instruct": ("phi3", "Attention", (1, 100, 4095)),
    "phi-4-mini-instruct": ("phi3", "Attention", (1, 100, 4095)),
    "gpt-oss-120b": ("gpt_oss", "AttentionBlock", POSITIONS),  # other frequencies: every position
}


# The zoo keeps the keys that bear on positions; mlx-lm's ModelArgs also requires these, which do not.
_NOT_POSITIONS = {"intermediate_size": 8, "rms_norm_eps": 1e-5, "vocab_size": 8, "tie_word_embeddings": False}


def zoo(name: str) -> dict:
    entry = json.loads(files("posenc").joinpath(f"zoo/{name}.json").read_text())
    return {**_NOT_POSITIONS, **{k: v for k, v in entry.items() if not k.startswith("_")}}


def mlx_angles(rope, width: int, p: int) -> np.ndarray:
    """The angle each pair (i, i + width/2) turns at position p, from the module's output."""
    x = np.zeros(width, dtype=np.float32)
    x[: width // 2] = 1.0
    out = np.array(rope(mx.array(x[None, None, None]), offset=p), dtype=np.float64).reshape(-1)
    return np.arctan2(out[width // 2:], out[: width // 2])


@pytest.mark.parametrize("name", sorted(CASES))
def test_mlx_reads_the_config(name):
    module_name, attention_name, differs = CASES[name]
    models = importlib.import_module(f"mlx_lm.models.{module_name}")
    config = zoo(name)
    attention = getattr(models, attention_name)(models.ModelArgs.from_dict(config))
    rope = attention.rope
    assert not getattr(rope, "traditional", False)  # these models use the half layout
    rotating = [layer for layer in read_config(config).layers.values() if layer.rotates]
    layer = rotating[0]  # gpt-oss: sliding and full layers, one RoPE
    assert all((r.dim, r.rotary_dim, r.base, r.scaling) == (layer.dim, layer.rotary_dim, layer.base, layer.scaling)
               for r in rotating)
    assert layer.layout == "half"
    width = layer.rotary_dim or layer.dim
    for p in POSITIONS:
        theta = rope_inverse_frequencies(layer.dim, base=layer.base, scaling=layer.scaling, seq_len=p + 1,
                                         rotary_dim=layer.rotary_dim).numpy()
        want = p * theta
        gap = np.abs(np.mod(mlx_angles(rope, width, p) - want + math.pi, 2 * math.pi) - math.pi)
        budget = 8 * EPS32 * (want + 1) + 1e-6
        assert bool((gap <= budget).all()) == (p not in differs), (name, p, float(gap.max()))
        if p in differs:
            assert (gap / budget).max() > 100, (name, p, float(gap.max()))  # far outside float32 rounding
