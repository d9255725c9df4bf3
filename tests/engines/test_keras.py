"""posenc against Keras Hub's ``RotaryEmbedding`` and ``AlibiBias`` (Keras 3, torch backend), run live.

Keras Hub computes the frequencies and positions in float32 whatever the layer's dtype, so the
rotations use the float32 budget of ``_common`` with k = 8 (as MLX). Its slopes are a Python
function of the head count: compared in float64. Its ``rope_type="dynamic"`` is not dynamic NTK
(lead 1): the test shows what it computes instead, and how far that is from transformers.
"""

from __future__ import annotations

import math
import os

import numpy as np
import pytest
import torch

os.environ.setdefault("KERAS_BACKEND", "torch")  # keras reads it once, at import; tensorflow is not installed
keras = pytest.importorskip("keras", reason="keras is not installed: make install installs it")
layers = pytest.importorskip("keras_hub.layers", reason="keras-hub is not installed: make install installs it "
                             "(tools/engines-nodeps.txt, without its tensorflow-text dependency)")

from posenc.alibi import alibi_bias, alibi_slopes
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

K = 8.0
DIM = 64


def run(layer, x: np.ndarray, positions) -> np.ndarray:
    """Rotate row i of ``x [rows, dim]`` to ``positions[i]`` (Keras's custom positions, one batch row each)."""
    out = layer(torch.tensor(x[:, None, :], dtype=torch.float32),
                positions=torch.tensor(np.asarray(positions)[:, None], dtype=torch.float32))
    return keras.ops.convert_to_numpy(out).astype(np.float64)[:, 0, :]


def check(layer, scaling=None, *, positions=POSITIONS, base=10000.0):
    x = vectors(len(positions), DIM)
    want = reference(x, positions, base=base, scaling=scaling)
    tol = budget(x, positions, theta_of(DIM, base=base, scaling=scaling), k=K,
                 factor=rope_attention_scaling(scaling))
    return assert_within(run(layer, x, positions), want, tol, f"keras {scaling}")


def test_default():
    # Keras Hub's only layout: the half split (x1, x2 = split(x, 2); rotate (-x2, x1)).
    check(layers.RotaryEmbedding(max_wavelength=10000))


def test_linear():
    check(layers.RotaryEmbedding(max_wavelength=10000, scaling_factor=4.0, rope_type="linear"),
          {"type": "linear", "factor": 4.0})


@pytest.mark.parametrize("extra", [{}, {"beta_fast": 16.0, "beta_slow": 2.0}, {"truncate": False}])
def test_yarn(extra):
    # Frequencies with the ramp, and the factor 0.1 ln(s) + 1 on cos and sin (Keras has no
    # attention_factor or mscale argument: transformers' default factor is the only one it can give).
    layer = layers.RotaryEmbedding(max_wavelength=10000, scaling_factor=4.0, rope_type="yarn",
                                   original_max_position_embeddings=TRAINED, **extra)
    check(layer, {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": TRAINED, **extra})


def test_dynamic_scales_every_length():
    """Lead 1: rope_type='dynamic' divides every frequency by s^(d/(d-2)) at every length, i.e. it is
    linear scaling by s^(d/(d-2)); transformers' dynamic NTK leaves the frequencies alone up to the
    trained length."""
    s = 4.0
    layer = layers.RotaryEmbedding(max_wavelength=10000, scaling_factor=s, rope_type="dynamic")
    check(layer, {"type": "linear", "factor": s ** (DIM / (DIM - 2))})  # what Keras computes
    inside = [p for p in POSITIONS if 0 < p < TRAINED]
    x = vectors(len(inside), DIM)
    dynamic = {"type": "dynamic", "factor": s, "original_max_position_embeddings": TRAINED}
    gap = np.abs(run(layer, x, inside) - reference(x, inside, scaling=dynamic)).max()
    assert gap > 0.5  # inside the trained context transformers rotates as unscaled RoPE


@pytest.mark.parametrize("heads", [1, 2, 6, 8, 12, 16, 20, 32, 40, 64])
def test_alibi_slopes(heads):
    # The slopes in float64 (Keras builds them in Python floats, as start * ratio**i), every head count incl. non-powers of two.
    got = np.array(layers.AlibiBias(alibi_bias_max=8)._get_slopes(heads), dtype=np.float64)
    np.testing.assert_allclose(got, alibi_slopes(heads, dtype=torch.float64).numpy(), rtol=1e-14, atol=0)  # a few float64 ulp: Keras multiplies ratio**i


def test_alibi_bias_equals_posenc_up_to_a_row_constant():
    # Keras adds slope * (j - (k_len - 1)) to every query row; posenc -slope * |i - j|. For causal
    # attention (j <= i) they differ by the row constant -slope * (k_len - 1 - i), which softmax ignores.
    heads, length = 12, 9
    scores = torch.zeros(1, heads, length, length, dtype=torch.float64)
    got = keras.ops.convert_to_numpy(layers.AlibiBias(dtype="float64")(scores))[0]
    want = alibi_bias(heads, length, dtype=torch.float64).numpy()
    causal = np.tril(np.ones((length, length), dtype=bool))
    shift = (got - want)[:, causal]
    rows = np.nonzero(causal)[0]
    slopes = alibi_slopes(heads, dtype=torch.float64).numpy()[:, None]
    np.testing.assert_allclose(shift, -slopes * (length - 1 - rows)[None, :], rtol=1e-12, atol=1e-12)
    assert math.isclose(float(np.abs(shift[:, rows == length - 1]).max()), 0.0, abs_tol=1e-12)
