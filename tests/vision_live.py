"""Shared by the vision readers' live tests (tests/test_config_vision.py, test_config_vision_towers.py):
the tolerances against transformers' float32 tables, and the check of a Qwen-style tower's rotation.

Tolerances: transformers builds its tables in float32 (its inverse frequencies, coordinates and
products), posenc in float64; on the test grids the angles stay below about 20 radians, so cos and
sin agree to 2e-6 (float32 rounding of an angle of 20 is 1e-6), and rotated float32 queries to 1e-5.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import torch

TABLE = dict(rtol=0, atol=2e-6)
ROTATED = dict(rtol=0, atol=1e-5)
GRID = (2, 4, 6)  # two frames of a 4 x 6 grid of patches


def close(ours: np.ndarray, theirs: torch.Tensor, **tol: Any) -> None:
    torch.testing.assert_close(torch.from_numpy(np.ascontiguousarray(ours)), theirs.detach().double(), **tol)


def check_tower_rotation(reading: Any, rotary: torch.nn.Module, apply_rotary: Callable[..., Any], ids: torch.Tensor,
                         *, seed: int) -> None:
    """The tower's own rotary module (cos, sin at ``ids``) against ``reading.angles`` on `GRID`, and its
    ``apply_rotary_pos_emb_vision`` on random queries against ``reading.rotate``."""
    cos, sin = rotary(torch.zeros(1), ids)
    close(np.cos(reading.angles(GRID)), cos, **TABLE)
    close(np.sin(reading.angles(GRID)), sin, **TABLE)
    torch.manual_seed(seed)
    q = torch.randn(int(np.prod(GRID)), 3, 16)  # [tokens, heads, head_dim], as the tower holds them
    theirs, _ = apply_rotary(q, q, cos, sin)
    close(reading.rotate(q.transpose(0, 1).double().numpy(), GRID), theirs.transpose(0, 1), **ROTATED)
