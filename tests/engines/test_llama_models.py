"""posenc against Meta's reference code (``llama-models``): Llama 3's and Llama 4's frequency rules,
the rotation, and Llama 4's attention temperature, run live.

Meta's model files import fairscale (model parallelism) at the top; with one process none of it
does anything, so the tests put a small stand-in in ``sys.modules`` (linear layers that ignore the
parallel arguments, a world of size 1) and import the installed files unchanged. The attention
allocates its KV cache with ``.cuda()``, which the test turns into a no-op on this CPU machine.
The rules take their input's dtype and are compared in float64; the rotation uses complex64
(float32 budget of ``_common``, k = 8).
"""

from __future__ import annotations

import importlib
import json
import math
import sys
import types
from importlib.resources import files

import pytest
import torch
from torch import nn

from posenc import read_config
from posenc.rope_scaling import rope_inverse_frequencies
from posenc.temperature import attention_temperature
from tests.engines._common import assert_within, budget, reference, theta_of, vectors

pytest.importorskip("llama_models", reason="llama-models is not installed: make install installs it")

POSITIONS = (0, 1, 7, 1000, 8191, 8192, 8193, 16384, 100_000)


class _Linear(nn.Linear):
    def __init__(self, n_in, n_out, bias=False, **parallel):  # gather_output, init_method, ...: one process
        super().__init__(n_in, n_out, bias=bias)


def _fairscale() -> dict[str, types.ModuleType]:
    names = ["fairscale", "fairscale.nn", "fairscale.nn.model_parallel", "fairscale.nn.model_parallel.initialize",
             "fairscale.nn.model_parallel.layers", "fairscale.nn.model_parallel.mappings"]
    mods = {name: types.ModuleType(name) for name in names}
    init = mods["fairscale.nn.model_parallel.initialize"]
    init.get_model_parallel_world_size = lambda: 1
    init.get_model_parallel_rank = lambda: 0
    layers = mods["fairscale.nn.model_parallel.layers"]
    layers.ColumnParallelLinear = layers.RowParallelLinear = _Linear
    layers.VocabParallelEmbedding = nn.Embedding
    mods["fairscale.nn.model_parallel.mappings"].reduce_from_model_parallel_region = lambda x: x
    return mods


@pytest.fixture(scope="module")
def meta():
    """llama_models.llama3.model and llama_models.llama4.model, imported with the fairscale stand-in."""
    saved = {name: sys.modules.get(name) for name in _fairscale()}
    sys.modules.update(_fairscale())
    try:
        yield (importlib.import_module("llama_models.llama3.model"),
               importlib.import_module("llama_models.llama4.model"))
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


def _llama3(factor, low, high, length=8192):
    return {"type": "llama3", "factor": factor, "low_freq_factor": low, "high_freq_factor": high,
            "original_max_position_embeddings": length}


def test_llama3_rule_float64(meta):
    llama3, _ = meta
    plain = rope_inverse_frequencies(128, base=500000.0)
    got = llama3.apply_scaling(plain)  # Meta fixes factor 8, low 1, high 4, 8192 in the function
    assert got.dtype == torch.float64
    torch.testing.assert_close(got, rope_inverse_frequencies(128, base=500000.0, scaling=_llama3(8, 1, 4)),
                               rtol=1e-15, atol=0)


@pytest.mark.parametrize("name", ["llama-3.2-1b", "llama-3.2-3b"])
def test_llama32_factor_fixed_at_8(meta, name):
    """Llama 3.2 1B and 3B publish factor 32 (the zoo's config.json); Meta's entry for each model turns
    the rule on (use_scaled_rope) with no factor, its ModelArgs has no field for one, and apply_scaling
    divides by 8: the pairs of wavelength above 8192 turn 4 times faster than in transformers (which
    reads 32, as posenc does), the pairs below 2048 alike, the ramp between by a factor in (1, 4)."""
    llama3, _ = meta
    from llama_models.sku_list import all_registered_models
    from transformers import LlamaConfig
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    entry = json.loads(files("posenc").joinpath(f"zoo/{name}.json").read_text())
    config = {k: v for k, v in entry.items() if not k.startswith("_")}
    repo = entry["_source"].removeprefix("https://huggingface.co/").removesuffix("/blob/main/config.json")
    arch = next(m.arch_args for m in all_registered_models() if m.huggingface_repo == repo)
    assert arch["use_scaled_rope"] is True and not any("factor" in key for key in arch)
    assert not any("scal" in field and field != "use_scaled_rope" for field in llama3.ModelArgs.__dataclass_fields__)
    layer = read_config(config).layers["full_attention"]
    assert (arch["dim"] // arch["n_heads"], arch["rope_theta"]) == (layer.dim, layer.base)
    assert layer.scaling["factor"] == 32.0

    plain = rope_inverse_frequencies(layer.dim, base=layer.base)
    meta_freqs = llama3.apply_scaling(plain)
    ours = rope_inverse_frequencies(layer.dim, base=layer.base, scaling=layer.scaling)
    theirs, _ = ROPE_INIT_FUNCTIONS["llama3"](LlamaConfig(**config), "cpu")
    torch.testing.assert_close(theirs.double(), ours, rtol=1e-6, atol=0)  # transformers reads 32 too (float32)
    torch.testing.assert_close(meta_freqs, rope_inverse_frequencies(layer.dim, base=layer.base,
                                                                    scaling={**layer.scaling, "factor": 8.0}),
                               rtol=1e-15, atol=0)
    ratio, wavelength = meta_freqs / ours, 2 * math.pi / plain
    slow, fast = wavelength > 8192, wavelength < 2048
    torch.testing.assert_close(ratio[slow], torch.full_like(ratio[slow], 4.0), rtol=1e-14, atol=0)
    torch.testing.assert_close(ratio[fast], torch.ones_like(ratio[fast]), rtol=1e-14, atol=0)
    ramp = ratio[~slow & ~fast]
    assert slow.sum() > 0 and fast.sum() > 0 and ((ramp > 1) & (ramp < 4)).all()


@pytest.mark.parametrize(("factor", "high"), [(16.0, 1.0), (8.0, 4.0), (32.0, 2.0)])
def test_llama4_rule_float64(meta, factor, high):
    # Llama 4 Scout: factor 16 and high_freq_factor 1 (= low_freq_factor: a step at 8192 positions).
    _, llama4 = meta
    plain = rope_inverse_frequencies(128, base=500000.0)
    got = llama4.apply_scaling(plain, factor, high)
    torch.testing.assert_close(got, rope_inverse_frequencies(128, base=500000.0, scaling=_llama3(factor, 1.0, high)),
                               rtol=1e-15, atol=0)


@pytest.mark.parametrize("scaled", [False, True])
def test_rotation(meta, scaled):
    llama3, _ = meta
    dim = 64
    table = llama3.precompute_freqs_cis(dim, max(POSITIONS) + 1, 500000.0, use_scaled=scaled)
    x = vectors(len(POSITIONS), dim)
    q = torch.tensor(x[:, None, None, :], dtype=torch.float32)  # [batch, seq, heads, head_dim]
    rows = [llama3.apply_rotary_emb(q[i:i + 1], q[i:i + 1], table[p:p + 1])[0] for i, p in enumerate(POSITIONS)]
    got = torch.cat(rows).double().numpy()[:, 0, 0, :]
    scaling = _llama3(8, 1, 4) if scaled else None
    want = reference(x, POSITIONS, layout="interleaved", base=500000.0, scaling=scaling)
    tol = budget(x, POSITIONS, theta_of(dim, base=500000.0, scaling=scaling), layout="interleaved", k=8.0)
    assert_within(got, want, tol, f"Meta's rotation, scaled={scaled}")


def test_llama4_temperature(meta, monkeypatch):
    """The NoPE layers' query factor 0.1 ln(floor((p + 1) / 8192) + 1) + 1, read off Meta's attention:
    posenc's attention_temperature(beta=0.1, length=8192, offset=1)."""
    _, llama4 = meta
    args = llama4.ModelArgs(dim=16, n_layers=4, n_heads=2, n_kv_heads=2, vocab_size=8, max_batch_size=1,
                            max_seq_len=40_000, attn_temperature_tuning=True)
    monkeypatch.setattr(torch.Tensor, "cuda", lambda self, *a, **k: self)  # no GPU here: the cache stays put
    attention = llama4.Attention(args, use_qk_norm=False, use_rope=False)
    seen = {}

    def capture(xq, xk, xv, **kwargs):
        seen["q"] = xq
        return torch.zeros_like(xq)  # the output is not what is checked

    monkeypatch.setattr(llama4, "F", types.SimpleNamespace(scaled_dot_product_attention=capture))
    x = torch.tensor(vectors(3, 16)[None], dtype=torch.float32)
    plain = attention.wq(x).view(1, 3, 2, 8).transpose(1, 2)
    for start in (0, 8189, 16381, 39_990):
        with torch.no_grad():
            attention(x, start, freqs_cis=None)
        ratio = (seen["q"] / plain).detach()[0, 0, :, 0].double()
        want = attention_temperature(torch.arange(start, start + 3), beta=0.1, length=8192, offset=1)
        torch.testing.assert_close(ratio, want, rtol=1e-6, atol=0)
