"""posenc against ggml, the tensor library under llama.cpp (``ggml-python`` builds it from source), run live.

``ggml_rope_ext`` and ``ggml_rope_multi`` are the kernels llama.cpp calls for every model; its
modes are the layouts (``GGML_ROPE_TYPE_NORM`` = interleaved, ``NEOX`` = half, ``MROPE`` and
``IMROPE`` = M-RoPE in blocks or interleaved), its YaRN arguments the rule, ``freq_factors`` the
per-pair divisors of LongRoPE and Llama 3. ggml computes in float32 and builds each frequency by
repeated multiplication (theta *= base^(-2/d), ``ggml-cpu/ops.cpp`` ``ggml_rope_cache_init``),
so pair i carries about i more roundings: the float32 budget of ``_common`` with k = 64.
Locators below are in the ggml that ``ggml-python`` 0.0.45 vendors (``vendor/ggml``).
"""

from __future__ import annotations

import ctypes
import math

import numpy as np
import pytest
import torch

from posenc.alibi import alibi_bias
from posenc.rope_nd import apply_rope_nd
from posenc.rope_scaling import rope_attention_scaling
from tests.engines._common import (
    POSITIONS,
    TRAINED,
    assert_within,
    budget,
    reference,
    theta_of,
    vectors,
)

ggml = pytest.importorskip("ggml", reason="ggml-python is not installed: make install builds it from source "
                           "(about 2 minutes on 2 cores)")
import ggml.utils as gutils

K = 64.0
DIM = 64


def _compute(build) -> np.ndarray:
    """Run one ggml graph: ``build(ctx)`` returns the output tensor; its values come back as numpy."""
    ctx = ggml.ggml_init(ggml.ggml_init_params(mem_size=64 * 1024 * 1024, mem_buffer=None))
    try:
        out = build(ctx)
        graph = ggml.ggml_new_graph(ctx)
        ggml.ggml_build_forward_expand(graph, out)
        ggml.ggml_graph_compute_with_ctx(ctx, graph, 1)
        return gutils.to_numpy(out).astype(np.float64)
    finally:
        ggml.ggml_free(ctx)


def rope(x: np.ndarray, pos: np.ndarray, mode: int, *, n_dims: int = DIM, base: float = 10000.0,
         freq_scale: float = 1.0, ext_factor: float = 0.0, attn_factor: float = 1.0, n_ctx_orig: int = 0,
         beta_fast: float = 32.0, beta_slow: float = 1.0, factors=None, sections=None) -> np.ndarray:
    """ggml's RoPE of row i of ``x [rows, dim]`` at ``pos`` (``[rows]``, or ``[4 * rows]`` for M-RoPE)."""
    def build(ctx):
        a = gutils.from_numpy(np.ascontiguousarray(x[:, None, :], dtype=np.float32), ctx)  # ne: dim, 1 head, rows
        p = gutils.from_numpy(np.ascontiguousarray(pos, dtype=np.int32), ctx)
        c = None if factors is None else gutils.from_numpy(np.asarray(factors, dtype=np.float32), ctx)
        args = (n_ctx_orig, base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow)
        if sections is None:
            return ggml.ggml_rope_ext(ctx, a, p, c, n_dims, mode, *args)
        return ggml.ggml_rope_multi(ctx, a, p, c, n_dims, (ctypes.c_int * 4)(*sections), mode, *args)
    return _compute(build)[:, 0, :]


def check(got, x, positions, *, layout="half", scaling=None, rotary_dim=None, seq_len=None, base=10000.0):
    want = reference(x, positions, layout=layout, base=base, scaling=scaling, rotary_dim=rotary_dim, seq_len=seq_len)
    theta = theta_of(x.shape[1], base=base, scaling=scaling, rotary_dim=rotary_dim, seq_len=seq_len)
    tol = budget(x, positions, theta, layout=layout, k=K, factor=rope_attention_scaling(scaling))
    return assert_within(got, want, tol, f"ggml {layout} {scaling}")


X = vectors(len(POSITIONS), DIM)
POS = np.array(POSITIONS)


@pytest.mark.parametrize(("mode", "layout"), [(0, "interleaved"), (2, "half")])
def test_layouts(mode, layout):
    assert (ggml.GGML_ROPE_TYPE_NORMAL, ggml.GGML_ROPE_TYPE_NEOX) == (0, 2)
    check(rope(X, POS, mode), X, POSITIONS, layout=layout)


@pytest.mark.parametrize(("mode", "layout"), [(0, "interleaved"), (2, "half")])
def test_partial_width(mode, layout):
    check(rope(X, POS, mode, n_dims=16), X, POSITIONS, layout=layout, rotary_dim=16)


def test_linear():
    # llama.cpp's --rope-scaling linear --rope-scale 4 is freq_scale = 1/4.
    check(rope(X, POS, 2, freq_scale=0.25), X, POSITIONS, scaling={"type": "linear", "factor": 4.0})


@pytest.mark.parametrize(("fast", "slow"), [(32.0, 1.0), (16.0, 2.0)])
def test_yarn(fast, slow):
    # ext_factor 1 turns the ramp on; ggml multiplies attn_factor by 1 + 0.1 ln(1 / freq_scale)
    # (ops.cpp:5728), transformers' default factor; its correction range is truncated (floor, ceil).
    scaling = {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": TRAINED,
               "beta_fast": fast, "beta_slow": slow}
    got = rope(X, POS, 2, freq_scale=0.25, ext_factor=1.0, n_ctx_orig=TRAINED, beta_fast=fast, beta_slow=slow)
    check(got, X, POSITIONS, scaling=scaling)


def _longrope(pairs: int = DIM // 2) -> dict:
    return {"type": "longrope", "short_factor": [1.0 + 0.05 * i for i in range(pairs)],
            "long_factor": [1.0 + 1.5 * i for i in range(pairs)], "original_max_position_embeddings": TRAINED,
            "max_position_embeddings": 32 * TRAINED}


def test_longrope_factors():
    """Lead 4. ggml divides each pair by the factor tensor llama.cpp hands it; llama.cpp hands
    rope_long whenever the context of one sequence (-c, divided by -np unless the KV cache is
    unified) exceeds the original length (src/llama-model.cpp llama_model::get_rope_factors,
    src/llama-context.cpp n_ctx_seq: read, not run here), so a short prompt in a
    long context is rotated with the long factors where transformers uses the short ones."""
    config = _longrope()
    attention = math.sqrt(1 + math.log(32) / math.log(TRAINED))  # the converter's: max / original
    got = rope(X, POS, 2, factors=config["long_factor"], attn_factor=attention)
    check(got, X, POSITIONS, scaling=config, seq_len=8 * TRAINED)  # = transformers past the original length
    near = POS < TRAINED
    short = reference(X[near], POS[near], scaling=config, seq_len=TRAINED)  # transformers within it
    assert np.abs(got[near] - short).max() > 0.5
    # With 'factor' in the config, transformers' attention factor follows it; the converter's does not.
    assert rope_attention_scaling({**config, "factor": 4.0}) == pytest.approx(math.sqrt(1 + math.log(4) / math.log(TRAINED)))
    assert attention > rope_attention_scaling({**config, "factor": 4.0}) + 0.05


def _mrope_positions(t, h, w, e):
    return np.concatenate([t, h, w, e]).astype(np.int32)


def test_mrope_blocks():
    # Qwen2-VL's sections for a 64-wide head, scaled: (8, 12, 12) pairs of (time, height, width).
    rows = len(POSITIONS)
    t, h, w = POS, (POS * 7) % 50, (POS * 3) % 40
    got = rope(X, _mrope_positions(t, h, w, np.zeros(rows)), ggml.GGML_ROPE_TYPE_MROPE, sections=[8, 12, 12, 0])
    coords = torch.tensor(np.stack([t, h, w], axis=-1))
    want = torch.cat([apply_rope_nd(torch.tensor(X[i:i + 1]), coords[i:i + 1], sections=[8, 12, 12])
                      for i in range(rows)]).numpy()
    tol = budget(X, np.max(np.stack([t, h, w]), axis=0), theta_of(DIM), k=K)
    assert_within(got, want, tol, "ggml M-RoPE blocks")


QWEN3_VL = [24, 20, 20]  # mrope_section of Qwen3-VL (head 128): 64 pairs


def test_imrope_fourth_section():
    """Lead 5. IMROPE hands pair j to height (j % 3 == 1, j < 60) or width (j % 3 == 2, j < 60) or time
    (j % 3 == 0, j < 72), and any other pair to a fourth position: pairs 61 and 62. llama.cpp's
    multimodal helpers put 0 there; transformers turns those pairs with the temporal position."""
    assert ggml.GGML_ROPE_TYPE_IMROPE == 40
    dim, rows = 128, len(POSITIONS)
    x = vectors(rows, dim, seed=1)
    base = 5_000_000.0
    pos4 = _mrope_positions(POS, POS, POS, np.zeros(rows))  # a text token as llama.cpp lays it out
    got = rope(x, pos4, ggml.GGML_ROPE_TYPE_IMROPE, n_dims=dim, base=base, sections=[*QWEN3_VL, 0])
    coords = torch.tensor(np.stack([POS, POS, POS], axis=-1))
    want = torch.cat([apply_rope_nd(torch.tensor(x[i:i + 1]), coords[i:i + 1], sections=QWEN3_VL, base=base,
                                    assignment="interleaved") for i in range(rows)]).numpy()
    left_over = [61, 62]  # pairs; in the half layout, features j and j + 64
    features = left_over + [j + 64 for j in left_over]
    keep = np.setdiff1d(np.arange(dim), features)
    tol = budget(x, POSITIONS, theta_of(dim, base=base), k=K)
    assert_within(got[:, keep], want[:, keep], tol[:, keep], "ggml IMROPE, the sectioned pairs")
    np.testing.assert_array_equal(got[:, features], x[:, features].astype(np.float32))  # not rotated
    # With the fourth position set to the text position, ggml agrees everywhere.
    same = rope(x, _mrope_positions(POS, POS, POS, POS), ggml.GGML_ROPE_TYPE_IMROPE, n_dims=dim, base=base,
                sections=[*QWEN3_VL, 0])
    assert_within(same, want, tol, "ggml IMROPE, fourth position = text position")
    gap = np.abs(got - want)[:, features].max(axis=1)
    assert gap[POSITIONS.index(4096)] > 1e-3 and gap[POSITIONS.index(500_000)] > 0.1
    # Image patches (time, row, column all different): the sectioned pairs still agree pair by pair.
    t, h, w = POS, (POS * 7) % 50, (POS * 3) % 40
    got = rope(x, _mrope_positions(t, h, w, np.zeros(rows)), ggml.GGML_ROPE_TYPE_IMROPE, n_dims=dim, base=base,
               sections=[*QWEN3_VL, 0])
    coords = torch.tensor(np.stack([t, h, w], axis=-1))
    want = torch.cat([apply_rope_nd(torch.tensor(x[i:i + 1]), coords[i:i + 1], sections=QWEN3_VL, base=base,
                                    assignment="interleaved") for i in range(rows)]).numpy()
    assert_within(got[:, keep], want[:, keep], tol[:, keep], "ggml IMROPE on image patches")
    # ... and with the time coordinate as the fourth position, every pair agrees (61 and 62 follow time).
    got = rope(x, _mrope_positions(t, h, w, t), ggml.GGML_ROPE_TYPE_IMROPE, n_dims=dim, base=base,
               sections=[*QWEN3_VL, 0])
    assert_within(got, want, tol, "ggml IMROPE on image patches, fourth position = time")


@pytest.mark.parametrize("heads", [8, 12, 20])
def test_alibi_slopes(heads):
    # llama.cpp's ALiBi: ggml_soft_max_ext with max_bias 8 scales a mask of -|i - j| by each head's
    # slope (ops.cpp:5378-5397); softmax of posenc's bias is the same distribution.
    n = 7
    distance = -np.abs(np.arange(n)[:, None] - np.arange(n)[None, :]).astype(np.float32)

    def build(ctx):
        scores = gutils.from_numpy(np.zeros((heads, n, n), dtype=np.float32), ctx)
        mask = gutils.from_numpy(distance, ctx)
        return ggml.ggml_soft_max_ext(ctx, scores, mask, 1.0, 8.0)

    got = _compute(build)
    want = torch.softmax(alibi_bias(heads, n, dtype=torch.float64), dim=-1).numpy()
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-6)  # float32 softmax


def test_llama3_rope_freqs():
    """Llama 3.1 in llama.cpp: the converter writes a per-pair divisor tensor (rope_freqs), plain over
    scaled frequency (read: conversion/llama.py), and ggml divides each pair by it (run here). The
    divisors come from torchtune's copy of Meta's rule (the converter's formula), not from posenc."""
    from tests.engines.test_torchtune import load
    scaling = {"type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
               "original_max_position_embeddings": 8192}
    meta = load("models/llama3_1/_position_embeddings.py").Llama3ScaledRoPE(DIM, max_seq_len=1, base=500000)
    plain = torch.tensor(theta_of(DIM, base=500000.0))
    divisors = (plain / meta.apply_scaling(plain, 8.0, 1.0, 4.0, 8192)).numpy()
    assert divisors.min() == 1.0 and divisors.max() == 8.0  # kept, smoothed and divided pairs
    got = rope(X, POS, 0, base=500000.0, factors=divisors)
    check(got, X, POSITIONS, layout="interleaved", base=500000.0, scaling=scaling)


def test_vision_2d():
    """ggml's VISION mode, as llama.cpp's image encoders call it (Qwen2-VL's: rotated width d/2, four
    sections of d/4, positions (row, column, row, column)): axial 2-D RoPE, half layout, each axis
    its own ladder over d/4 pairs, i.e. posenc's apply_rope_nd(frequencies="per_axis")."""
    assert ggml.GGML_ROPE_TYPE_VISION == 24
    head, rows = 32, len(POSITIONS)
    x = vectors(rows, head, seed=2)
    r, c = (POS * 7) % 97, (POS * 3) % 89  # patch rows and columns
    got = rope(x, _mrope_positions(r, c, r, c), ggml.GGML_ROPE_TYPE_VISION, n_dims=head // 2,
               sections=[head // 4] * 4)
    coords = torch.tensor(np.stack([r, c], axis=-1))
    want = torch.cat([apply_rope_nd(torch.tensor(x[i:i + 1]), coords[i:i + 1], sections=[head // 4, head // 4],
                                    frequencies="per_axis") for i in range(rows)]).numpy()
    np.testing.assert_allclose(got, want, rtol=0, atol=5e-5)  # angles below 100 rad: float32 rounding
