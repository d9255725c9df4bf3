"""The register of transformers' departures from published models, transformers' side shown live.

For each entry of `posenc.configs._divergences.DIVERGENCES`: a config that sets the key is built by the
pinned transformers, whose rotary module and rotation function are run (``tests/rope_live.py``);
what they do must be what the entry says transformers does, posenc's reading must agree with it,
and `read_config` must name both sides in a note.
"""

from __future__ import annotations

import pytest

pytest.importorskip("transformers", reason="transformers is a test dependency (requirements.lock)")

import torch  # noqa: E402

from posenc.configs import read_config  # noqa: E402
from posenc.configs._divergences import DIVERGENCES  # noqa: E402
from tests import rope_live  # noqa: E402

# MiniMax-Text-01's attention as published: 64 heads of 128 features, 64 of them rotated, base 1e7
MINIMAX_01 = {"model_type": "minimax", "hidden_size": 6144, "num_attention_heads": 64, "num_key_value_heads": 8,
              "head_dim": 128, "num_hidden_layers": 4, "rotary_dim": 64, "rope_theta": 10000000.0}


def test_every_entry_is_complete() -> None:
    assert DIVERGENCES, "the register has entries"
    for entry in DIVERGENCES:
        assert entry.published and entry.transformers and entry.key
        assert any(e.startswith("https://") for e in entry.evidence), entry  # the published side, by URL
        assert any("transformers" in e and ".py" in e for e in entry.evidence), entry  # transformers' side, by file


def test_minimax_rotary_dim_transformers_rotates_the_whole_head() -> None:
    text = rope_live.transformers_config(MINIMAX_01)
    assert (text.rope_parameters or {}).get("partial_rotary_factor") in (None, 1.0)  # rotary_dim not converted
    reference = rope_live.Reference(text)
    layer_type = reference.layer_type("full_attention")
    assert reference.inv_freq(layer_type).numel() == 128 // 2  # every pair of the 128-wide head turns
    q = torch.randn(1, 1, 3, 128, dtype=torch.float64)
    rotated, _ = reference.rotate(q, q.clone(), torch.arange(3), layer_type)
    # the last 64 features, which the published model leaves alone, move at position 2
    assert not torch.allclose(rotated[0, 0, 2, 64:], q[0, 0, 2, 64:], atol=1e-3)
    layer = read_config(MINIMAX_01).layers["full_attention"]
    assert (layer.dim, layer.rotary_dim) == (128, 128)  # posenc reads what transformers runs


def test_read_config_names_both_sides() -> None:
    notes = read_config(MINIMAX_01).notes
    note = next(n for n in notes if "rotary_dim" in n)
    assert "config['rotary_dim'] = 64" in note and "Published:" in note and "transformers (what posenc reads)" in note
    assert not any("rotary_dim" in n for n in read_config({**MINIMAX_01, "rotary_dim": None}).notes)
