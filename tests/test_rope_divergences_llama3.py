"""Llama 3.x's frequency scaling: a lead checked and found equal to the published configs, with a caveat.

Meta's reference code (meta-llama/llama-models@a9c89c4 models/llama3/model.py:45-62) rescales the
frequencies with a hard-coded scale_factor of 8, low_freq_factor 1, high_freq_factor 4 and an original
length of 8192, for every model whose params set use_scaled_rope, Llama 3.2 1B and 3B among them
(llama-models@c4d8644^ models/sku_list.py:580-609). The published config.json of Llama 3.2 1B and 3B gives
factor 32, and Meta's maintainers answered that 32 is right
(https://github.com/meta-llama/llama-models/issues/166, and #241: the 3.2 config was fixed after release).
transformers reads the config's factor: its frequencies are Meta's formula with the config's values, which is
Meta's reference for Llama 3.1 (factor 8) and not for Llama 3.2 1B and 3B. Not a departure of transformers
from the published model, so not registered; pinned here so that a change on either side fails.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

pytest.importorskip("transformers", reason="transformers is a test dependency (requirements.lock)")

import torch

from posenc.configs import read_config
from tests import rope_live

ZOO = Path(__file__).resolve().parents[1] / "posenc" / "zoo"


def meta_scaled(base: float, dim: int, scale_factor: float, low_freq_factor: float = 1.0,
                high_freq_factor: float = 4.0, old_context_len: int = 8192) -> torch.Tensor:
    """Meta's apply_scaling (models/llama3/model.py:45-62) on its frequencies, in float64."""
    freqs = base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    wavelen = 2 * math.pi / freqs
    scaled = torch.where(wavelen > old_context_len / low_freq_factor, freqs / scale_factor, freqs)
    smooth = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    between = (wavelen >= old_context_len / high_freq_factor) & (wavelen <= old_context_len / low_freq_factor)
    return torch.where(between, (1 - smooth) * scaled / scale_factor + smooth * scaled, scaled)


@pytest.mark.parametrize(("zoo", "meta_reference_factor"), [
    ("llama-3.1-8b", 8.0),  # the reference's hard-coded factor is the config's
    ("llama-3.2-1b", 8.0),  # the reference says 8, the published config 32
    ("llama-3.2-3b", 8.0),
])
def test_llama3_scaling_is_metas_formula_with_the_configs_factor(zoo: str, meta_reference_factor: float) -> None:
    config = {k: v for k, v in json.loads((ZOO / f"{zoo}.json").read_text()).items() if not k.startswith("_")}
    scaling = config["rope_scaling"]
    assert (scaling["low_freq_factor"], scaling["high_freq_factor"], scaling["original_max_position_embeddings"]) \
        == (1.0, 4.0, 8192)  # Meta's other hard-coded values are the config's
    reference = rope_live.Reference(rope_live.transformers_config(config))
    inv = reference.inv_freq(None).double()
    dim = 2 * inv.numel()
    base = float(config["rope_theta"])
    assert torch.allclose(inv, meta_scaled(base, dim, scaling["factor"]), rtol=1e-6)  # the config's factor
    assert reference.attention_scaling(None) == 1.0  # neither side scales cos and sin
    reference_code = meta_scaled(base, dim, meta_reference_factor)
    assert torch.allclose(inv, reference_code, rtol=1e-6) == (scaling["factor"] == meta_reference_factor)
    assert not [n for n in read_config(config).notes if "departs" in n]  # not registered
