"""posenc against torchtune's RoPE modules, run live.

torchtune's package ``__init__`` refuses to import without torchao, which none of its RoPE modules
needs; each module file imports only torch, so the tests load the files themselves (from the
installed package, unchanged). The modules cache float32 tables: the float32 budget of ``_common``
with k = 8. Llama 3's rule is a method that keeps its input's dtype: compared in float64.
Positions go to 100000 (x24 the trained 4096) here, since the modules cache a table up to the
largest position.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
import torch

from posenc.rope_nd import apply_rope_nd
from posenc.rope_scaling import rope_inverse_frequencies
from tests.engines._common import assert_within, budget, reference, theta_of, vectors

_SPEC = importlib.util.find_spec("torchtune")
if _SPEC is None or not _SPEC.submodule_search_locations:
    pytest.skip("torchtune is not installed: make install installs it (tools/engines-nodeps.txt, without "
                "its dataset dependencies)", allow_module_level=True)
ROOT = Path(next(iter(_SPEC.submodule_search_locations)))

K = 8.0
DIM = 64
POSITIONS = (0, 1, 7, 1000, 4095, 4096, 4097, 8192, 100_000)


def load(relative: str):
    """One module file of the installed torchtune, without running the package's __init__."""
    spec = importlib.util.spec_from_file_location(f"_torchtune_{Path(relative).stem}", ROOT / relative)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(module, x: np.ndarray, positions) -> np.ndarray:
    """Row i of x at positions[i]: torchtune's ``[b, s, n_h, h_d]`` with input_pos ``[b, s]``."""
    out = module(torch.tensor(x[:, None, None, :], dtype=torch.float32),
                 input_pos=torch.tensor(positions)[:, None])
    return out.double().numpy()[:, 0, 0, :]


def check(module, *, layout, base=10000.0, scaling=None):
    x = vectors(len(POSITIONS), DIM)
    want = reference(x, POSITIONS, layout=layout, base=base, scaling=scaling)
    tol = budget(x, POSITIONS, theta_of(DIM, base=base, scaling=scaling), layout=layout, k=K)
    return assert_within(run(module, x, POSITIONS), want, tol, type(module).__name__)


@pytest.mark.parametrize(("path", "name", "layout", "base"), [
    ("modules/position_embeddings.py", "RotaryPositionalEmbeddings", "interleaved", 10000.0),
    ("models/qwen2/_positional_embeddings.py", "Qwen2RotaryPositionalEmbeddings", "half", 1e6),
    ("models/phi3/_position_embeddings.py", "Phi3RotaryPositionalEmbeddings", "half", 10000.0),
])
def test_layouts(path, name, layout, base):
    module = getattr(load(path), name)(DIM, max_seq_len=max(POSITIONS) + 1, base=base)
    check(module, layout=layout, base=base)


LLAMA31 = {"type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
           "original_max_position_embeddings": 8192}


def test_llama3_rule_float64():
    rope = load("models/llama3_1/_position_embeddings.py").Llama3ScaledRoPE
    module = rope(128, max_seq_len=16, base=500000)
    for factor, low, high, length in ((8, 1, 4, 8192), (32, 1, 4, 8192), (16, 2, 8, 4096)):
        plain = rope_inverse_frequencies(128, base=500000.0)
        got = module.apply_scaling(plain, factor, low, high, length)
        want = rope_inverse_frequencies(128, base=500000.0, scaling={
            "type": "llama3", "factor": factor, "low_freq_factor": low, "high_freq_factor": high,
            "original_max_position_embeddings": length})
        assert got.dtype == torch.float64
        torch.testing.assert_close(got, want, rtol=1e-15, atol=0)


def test_llama3_rotation():
    rope = load("models/llama3_1/_position_embeddings.py").Llama3ScaledRoPE
    module = rope(DIM, max_seq_len=max(POSITIONS) + 1, base=500000)
    check(module, layout="interleaved", base=500000.0, scaling=LLAMA31)


def test_vision_2d():
    """Axial 2-D RoPE of a tile's patches: x then y, each its own ladder over half the head, at
    (column + 1, row + 1); the CLS token (appended last) is not rotated."""
    vision = load("modules/position_embeddings.py").VisionRotaryPositionalEmbeddings
    grid, head = 5, 32
    module = vision(patch_size=14, tile_size=14 * grid, max_num_tiles=1, dim=head // 2, base=10000)
    tokens = grid * grid + 1
    x = vectors(tokens, head)
    got = module(torch.tensor(x[None, :, None, :], dtype=torch.float32)).double()[0, :, 0, :]
    patch = torch.arange(grid * grid)
    coords = torch.stack([patch % grid + 1, patch // grid + 1], dim=-1)
    coords = torch.cat([coords, torch.zeros(1, 2, dtype=torch.long)])  # CLS: no rotation
    want = apply_rope_nd(torch.tensor(x), coords, sections=[head // 4, head // 4], layout="interleaved",
                         frequencies="per_axis")
    torch.testing.assert_close(got, want, rtol=0, atol=1e-5)  # angles below 5 rad: float32 rounding only
    assert torch.equal(got[-1], torch.tensor(x[-1], dtype=torch.float32).double())
