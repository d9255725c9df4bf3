"""Shared pieces of the engine parity tests: posenc's float64 reference and the float32 error budget.

An engine that computes its angles in float32 rounds the angle a = p * theta of each pair to about
2^-24 * a (plus a few ulp from computing theta itself, which some engines do by repeated
multiplication). The budget of each output element is therefore r * eps32 * k * (a + 1), where r
is the length of its pair, eps32 = 2^-23 and k is stated per engine: it grows with the angle, so a
far position is allowed the rounding that float32 cannot avoid there, and no more.
"""

from __future__ import annotations

import numpy as np
import torch

from posenc.rope import apply_rope
from posenc.rope_scaling import rope_attention_scaling, rope_inverse_frequencies

EPS32 = 2.0**-23
TRAINED = 4096
#: Inside the trained context, at its edge, and far beyond it (x2, x24, x122).
POSITIONS = (0, 1, 7, 1000, 4095, 4096, 4097, 8192, 100_000, 500_000)


def vectors(rows: int, dim: int, seed: int = 0) -> np.ndarray:
    """Random vectors ``[rows, dim]`` (float64), one per position."""
    return np.random.default_rng(seed).standard_normal((rows, dim))


def reference(x: np.ndarray, positions, *, layout: str = "half", base: float = 10000.0, scaling=None,
              rotary_dim: int | None = None, seq_len: int | None = None) -> np.ndarray:
    """posenc's rotation of each row ``x[i]`` to ``positions[i]``, in float64.

    ``seq_len`` fixes the length that length-dependent rules (dynamic, longrope) see; None lets
    each row see its own position + 1, as transformers does for a sequence that ends there."""
    rows = []
    for row, p in zip(x, positions):
        t = torch.tensor(row[None, :], dtype=torch.float64)
        if seq_len is None:
            rows.append(apply_rope(t, torch.tensor([p]), base=base, layout=layout, scaling=scaling,
                                   rotary_dim=rotary_dim)[0].numpy())
        else:
            rows.append(_rotate_at(t, p, layout, base, scaling, rotary_dim, seq_len))
    return np.stack(rows)


def _rotate_at(t, p, layout, base, scaling, rotary_dim, seq_len):
    from posenc._rotary import angle_table, apply_table
    theta = rope_inverse_frequencies(t.shape[-1], base=base, scaling=scaling, seq_len=seq_len,
                                     rotary_dim=rotary_dim)
    cos, sin = angle_table(torch.tensor([float(p)], dtype=torch.float64), theta)
    factor = rope_attention_scaling(scaling)
    return apply_table(t, cos * factor, sin * factor, layout, rotary_dim)[0].numpy()


def budget(x: np.ndarray, positions, theta: np.ndarray, *, layout: str = "half", k: float = 4.0,
           factor: float = 1.0) -> np.ndarray:
    """Per-element float32 budget r * eps32 * k * (a + 1) (see the module's docstring), ``x``'s shape.

    ``theta`` [pairs]: the frequencies (rotated pairs first; the rest of the row passes through
    and gets the budget of a = 0)."""

    pairs = len(theta)
    tol = np.full(x.shape, EPS32 * k * factor * np.abs(x).max())
    idx = np.arange(pairs)
    first, second = (2 * idx, 2 * idx + 1) if layout == "interleaved" else (idx, idx + pairs)
    for r, p in enumerate(positions):
        radius = np.hypot(x[r, first], x[r, second])
        angle = abs(p) * theta
        t = factor * radius * EPS32 * k * (angle + 1.0)
        tol[r, first] = t
        tol[r, second] = t
    return tol


def assert_within(actual: np.ndarray, expected: np.ndarray, tol: np.ndarray, what: str) -> float:
    """Assert |actual - expected| <= tol everywhere; return the largest ratio error / budget."""
    err = np.abs(np.asarray(actual, dtype=np.float64) - expected)
    ratio = err / tol
    worst = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
    assert ratio.max() <= 1.0, (f"{what}: error {err[worst]:.3g} at row {worst[0]}, element {worst[1]} "
                                f"exceeds the budget {tol[worst]:.3g} ({ratio.max():.3g} times)")
    return float(ratio.max())


def theta_of(dim: int, **kwargs) -> np.ndarray:
    return rope_inverse_frequencies(dim, **kwargs).numpy()
