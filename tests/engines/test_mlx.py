"""posenc against MLX (``mx.fast.rope``) and mlx-lm's RoPE modules (``mlx_lm.models.rope_utils``), run live.

MLX computes RoPE's angles in float32 even for float64 input (checked below), so each comparison
uses the float32 budget of ``_common`` with k = 8: an angle a is allowed 8 * 2^-23 * (a + 1)
(MLX computes each frequency in float32 too, a few ulp off, and the error grows with the position).
Where mlx-lm computes a config otherwise than transformers (LongRoPE's factors, YaRN's dropped
keys), the test shows the disagreement and its size, and that it is not float32 rounding.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from tests.engines._common import (
    POSITIONS,
    TRAINED,
    assert_within,
    budget,
    reference,
    theta_of,
    vectors,
)

mx = pytest.importorskip("mlx.core", reason="mlx (the mlx[cpu] wheel) is not installed: make install installs it")
rope_utils = pytest.importorskip("mlx_lm.models.rope_utils", reason="mlx-lm is not installed: make install installs it")
nn = pytest.importorskip("mlx.nn", reason="mlx is not installed")

K = 8.0  # the float32 budget's k for MLX (module docstring)
DIM = 64


def run(module, x: np.ndarray, positions) -> np.ndarray:
    """Rotate row i of ``x [rows, dim]`` to ``positions[i]`` with an mlx module (one batch row each)."""
    out = module(mx.array(x[:, None, None, :].astype(np.float32)), offset=mx.array(list(positions)))
    return np.array(out, dtype=np.float64)[:, 0, 0, :]


def check(module, *, layout="half", scaling=None, base=10000.0, rotary_dim=None, seq_len=None, dim=DIM,
          positions=POSITIONS):
    x = vectors(len(positions), dim)
    want = reference(x, positions, layout=layout, base=base, scaling=scaling, rotary_dim=rotary_dim,
                     seq_len=seq_len)
    theta = theta_of(dim, base=base, scaling=scaling, rotary_dim=rotary_dim, seq_len=seq_len)
    from posenc.rope_scaling import rope_attention_scaling
    tol = budget(x, positions, theta, layout=layout, k=K, factor=rope_attention_scaling(scaling))
    return assert_within(run(module, x, positions), want, tol, f"{type(module).__name__} {scaling}")


def test_angles_are_float32_even_for_float64_input():
    # Why the budget: at position 500000 the rounding of a float32 angle is visible.
    x = vectors(1, DIM)
    out = mx.fast.rope(mx.array(x[:, None, None, :]).astype(mx.float64), DIM, traditional=False,
                       base=10000.0, scale=1.0, offset=500_000)
    err = np.abs(np.array(out)[:, 0, 0, :] - reference(x, [500_000])).max()
    assert 1e-4 < err < 0.1


@pytest.mark.parametrize(("traditional", "layout"), [(False, "half"), (True, "interleaved")])
def test_layouts(traditional, layout):
    check(nn.RoPE(DIM, traditional=traditional, base=10000.0), layout=layout)


@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_partial_width(layout):
    # dims < the row: the first `dims` features turn, over frequencies of that width; the rest pass.
    check(nn.RoPE(32, traditional=layout == "interleaved", base=10000.0), layout=layout, rotary_dim=32)


def test_linear():
    module = rope_utils.initialize_rope(DIM, 10000.0, False, {"type": "linear", "factor": 4.0}, TRAINED)
    check(module, scaling={"type": "linear", "factor": 4.0})


def test_dynamic():
    # Dynamic NTK looks at the sequence length, so each position is its own sequence ending there.
    module = rope_utils.initialize_rope(DIM, 10000.0, False, {"type": "dynamic", "factor": 4.0}, TRAINED)
    scaling = {"type": "dynamic", "factor": 4.0, "original_max_position_embeddings": TRAINED}
    x = vectors(len(POSITIONS), DIM)
    for i, p in enumerate(POSITIONS):
        out = module(mx.array(x[i][None, None, None, :].astype(np.float32)), offset=p)
        want = reference(x[i:i + 1], [p], scaling=scaling)
        tol = budget(x[i:i + 1], [p], theta_of(DIM, scaling=scaling, seq_len=p + 1), k=K)
        assert_within(np.array(out, dtype=np.float64)[:, 0, 0, :], want, tol, f"dynamic at {p}")


LLAMA31 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
           "original_max_position_embeddings": 8192}


def test_llama3():
    module = rope_utils.initialize_rope(128, 500000.0, False, LLAMA31, 131072)
    scaling = {"type": "llama3", **{k: v for k, v in LLAMA31.items() if k != "rope_type"}}
    check(module, scaling=scaling, base=500000.0, dim=128)


YARN = {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": TRAINED}


@pytest.mark.parametrize("extra", [{}, {"beta_fast": 16.0, "beta_slow": 2.0},
                                   {"mscale": 1.0, "mscale_all_dim": 0.5}])
def test_yarn(extra):
    # The frequencies, the ramp between beta_fast and beta_slow, and the factor on cos and sin.
    config = {**YARN, **extra}
    check(rope_utils.initialize_rope(DIM, 10000.0, False, config, 4 * TRAINED), scaling=config)


def test_yarn_dropped_keys():
    """Lead 3: truncate and attention_factor are dropped (mlx-lm computes the config without them);
    mscale alone, or mscale_all_dim alone, changes the factor where transformers ignores it."""
    x = vectors(len(POSITIONS), DIM)
    for extra in ({"truncate": False}, {"attention_factor": 1.0}):
        module = rope_utils.initialize_rope(DIM, 10000.0, False, {**YARN, **extra}, 4 * TRAINED)
        check(module, scaling=YARN)  # what mlx-lm computes: the config without the key
        gap = np.abs(run(module, x, POSITIONS) - reference(x, POSITIONS, scaling={**YARN, **extra})).max()
        assert gap > 0.05, (extra, gap)  # what transformers computes with it: far outside the budget
    # mscale = 0.707 alone: transformers keeps 0.1 ln 4 + 1 = 1.1386; mlx-lm puts 0.1 * 0.707 ln 4 + 1.
    module = rope_utils.initialize_rope(DIM, 10000.0, False, {**YARN, "mscale": 0.707}, 4 * TRAINED)
    assert module.mscale == pytest.approx(0.1 * 0.707 * math.log(4) + 1, rel=1e-6)
    from posenc.rope_scaling import rope_attention_scaling
    assert rope_attention_scaling({**YARN, "mscale": 0.707}) == pytest.approx(0.1 * math.log(4) + 1)
    # mscale_all_dim = 1 alone: transformers 1.1386, mlx-lm m(s, 1) / m(s, 1) = 1.
    module = rope_utils.initialize_rope(DIM, 10000.0, False, {**YARN, "mscale_all_dim": 1.0}, 4 * TRAINED)
    assert module.mscale == 1.0


def _phi3_like(dim: int = DIM) -> dict:
    pairs = dim // 2
    short = [1.0 + 0.05 * i for i in range(pairs)]
    long = [1.0 + 1.5 * i for i in range(pairs)]
    return {"type": "longrope", "short_factor": short, "long_factor": long,
            "original_max_position_embeddings": TRAINED, "max_position_embeddings": 32 * TRAINED}


def _mlx_longrope(config: dict):
    return rope_utils.initialize_rope(DIM, 10000.0, False, {**config, "type": "longrope"},
                                      config["max_position_embeddings"])


def test_longrope_long_factors_always():
    """Lead 2: mlx-lm divides by long_factor at every length; transformers by short_factor while the
    sequence is within original_max_position_embeddings. Past it the two agree."""
    config = _phi3_like()
    module = _mlx_longrope(config)
    # Past the original length (a sequence of 4 * 4096): the same as posenc and transformers.
    far = [p for p in POSITIONS if p >= TRAINED]
    check(module, scaling=config, seq_len=4 * TRAINED, positions=far)
    # Within it (a 4096-token prompt): mlx-lm still uses the long factors.
    near = [p for p in POSITIONS if p < TRAINED]
    x = vectors(len(near), DIM)
    got = run(module, x, near)
    check(module, scaling=config, seq_len=4 * TRAINED, positions=near)  # = posenc's long-factor rotation
    short = reference(x, near, scaling=config, seq_len=TRAINED)  # what transformers computes here
    assert np.abs(got - short).max() > 0.5


def test_longrope_attention_factor_from_lengths():
    # mlx-lm's factor on cos and sin: sqrt(1 + ln(max / original) / ln(original)), whatever 'factor' says.
    config = {**_phi3_like(), "factor": 4.0}
    module = _mlx_longrope(config)
    from posenc.rope_scaling import rope_attention_scaling
    assert module._scale == pytest.approx(math.sqrt(1 + math.log(32) / math.log(TRAINED)), rel=1e-12)
    assert rope_attention_scaling(config) == pytest.approx(math.sqrt(1 + math.log(4) / math.log(TRAINED)))


@pytest.mark.parametrize(("fraction", "factor"), [(0.25, 1.0), (0.5, 8.0)])
def test_proportional(fraction, factor):
    config = {"type": "proportional", "partial_rotary_factor": fraction, "factor": factor}
    module = rope_utils.initialize_rope(DIM, 10000.0, False, config, TRAINED)
    check(module, scaling=config)


class _Cache:
    """The two things mlx-lm's attention reads from a KV cache: the offset, and an update."""

    def __init__(self, offset: int):
        self.offset = offset

    def update_and_fetch(self, keys, values):
        return keys, values


def test_llama4_temperature(monkeypatch):
    """Llama 4's NoPE layers scale each query by 1 + 0.1 ln(1 + floor((p + 1) / 8192)): posenc's
    attention_temperature(beta=0.1, length=8192, offset=1), read off mlx-lm's own attention."""
    llama4 = pytest.importorskip("mlx_lm.models.llama4", reason="mlx-lm is not installed")
    from posenc.temperature import attention_temperature
    args = llama4.TextArgs(attention_bias=False, attention_chunk_size=8192, head_dim=8, hidden_size=16,
                           interleave_moe_layer_step=1, intermediate_size=16, intermediate_size_mlp=16,
                           max_position_embeddings=2**20, model_type="llama4_text", num_attention_heads=2,
                           num_experts_per_tok=1, num_hidden_layers=4, num_key_value_heads=2,
                           num_local_experts=1, rms_norm_eps=1e-5, rope_scaling=None, rope_theta=500000.0,
                           use_qk_norm=True, vocab_size=8)
    attention = llama4.Attention(args, layer_idx=3)  # (3 + 1) % 4 == 0: a NoPE layer
    seen = {}

    def capture(queries, keys, values, **kwargs):
        seen["q"] = queries
        return values

    monkeypatch.setattr(llama4, "scaled_dot_product_attention", capture)
    x = mx.array(vectors(3, 16)[None].astype(np.float32))
    plain = np.array(attention.q_proj(x)).reshape(1, 3, 2, 8).transpose(0, 2, 1, 3)
    for offset in (0, 8188, 16382, 10**6):
        attention(x, cache=_Cache(offset))
        ratio = (np.array(seen["q"]) / plain)[0, 0, :, 0]
        want = attention_temperature(torch.arange(offset, offset + 3), beta=0.1, length=8192, offset=1)
        np.testing.assert_allclose(ratio, want.numpy(), rtol=1e-6)
