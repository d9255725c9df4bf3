"""How many keys a sliding window keeps: Phi-3's departure, transformers' side live, and Mistral's agreement.

A window of W, as the pinned transformers builds it, keeps a key while the query is fewer than W positions
after it: W keys, the query's own included. Phi-3 as Microsoft added it (huggingface/transformers@c9693db2f)
kept W + 1 (the register's phi3 entry); Mistral's own inference code and AI2's OLMo-core keep W, as
transformers does (leads checked and found equal). Each side's rule is written again here from its code and compared with the mask
transformers builds in a forward pass.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("transformers", reason="transformers is a test dependency (requirements.lock)")

import torch
from transformers import MistralConfig, MistralModel, Olmo3Config, Olmo3Model, Phi3Config, Phi3Model
from transformers.masking_utils import sliding_window_causal_mask_function

from posenc.configs import read_config
from posenc.configs._divergences import DIVERGENCES
from tests.test_rope_divergences import _sliding_layers

ZOO = Path(__file__).resolve().parents[1] / "posenc" / "zoo"
TINY: dict[str, Any] = {"hidden_size": 16, "intermediate_size": 16, "num_attention_heads": 2,
                        "num_key_value_heads": 2, "num_hidden_layers": 2, "vocab_size": 16, "sliding_window": 3}
# Phi-3-mini-4k-instruct's window and context (config.json, the register's evidence)
PHI3_MINI_4K: dict[str, Any] = {"model_type": "phi3", "hidden_size": 3072, "num_attention_heads": 32,
                                "num_hidden_layers": 32, "max_position_embeddings": 4096,
                                "original_max_position_embeddings": 4096, "rope_scaling": None,
                                "rope_theta": 10000.0, "sliding_window": 2047}


def microsoft_keys(query: int, window: int) -> list[int]:
    """The keys Phi-3's code at c9693db2f lets ``query`` see: its eager and SDPA mask masks keys at or before
    query - window - 1 (modeling_attn_mask_utils.py:166-170, tril with diagonal -window - 1), and its flash
    path's window_size (window, window) keeps keys from query - window to query (modeling_phi3.py:654, 676)."""
    return [k for k in range(query + 1) if k > query - window - 1]


def xformers_keys(query: int, window: int) -> list[int]:
    """The keys Mistral's code lets ``query`` see: make_local_attention(sliding_window) (mistralai/mistral-inference
    @c18d5b9 mistral/cache.py:192), whose mask in xformers of that day keeps triu(diagonal=-window + 1)
    (facebookresearch/xformers@1e065bca xformers/ops/fmha/attn_bias.py:711-712)."""
    return [k for k in range(query + 1) if k >= query - window + 1]


def transformers_keys(query: int, window: int) -> list[int]:
    allowed = sliding_window_causal_mask_function(window)
    zero = torch.tensor(0)
    return [k for k in range(query + 1) if bool(allowed(zero, zero, torch.tensor(query), torch.tensor(k)))]


def _seen_by_last(model: Any, length: int = 8) -> int:
    """How many keys the last query of a forward pass sees, in every layer (all alike here)."""
    sliding = _sliding_layers(model, length)
    assert sliding == list(range(model.config.num_hidden_layers))  # a model-wide window
    return model.config.sliding_window  # _sliding_layers checked that each windowed mask keeps this many


def test_phi3_transformers_keeps_one_key_fewer_than_microsofts_code() -> None:
    torch.manual_seed(0)
    model = Phi3Model(Phi3Config(**TINY, pad_token_id=0)).eval()
    assert _seen_by_last(model) == 3  # transformers, live: W keys for the last of 8 queries
    assert len(microsoft_keys(7, 3)) == 4  # Microsoft's: W + 1
    # at Phi-3-mini-4k's window: the key exactly 2047 back, seen by Microsoft's code, is dropped
    window = PHI3_MINI_4K["sliding_window"]
    for query in (window - 1, window, 3000):
        ours, theirs = transformers_keys(query, window), microsoft_keys(query, window)
        assert ours == theirs[1:] if query >= window else ours == theirs, query
    assert microsoft_keys(window, window)[0] == 0 and transformers_keys(window, window)[0] == 1


def test_phi3_note_names_both_sides_where_the_window_acts() -> None:
    (entry,) = [e for e in DIVERGENCES if e.model_type == "phi3"]
    reading = read_config(PHI3_MINI_4K)
    assert reading.layers["full_attention"].window == 2047  # posenc reads what transformers runs
    (note,) = [n for n in reading.notes if "departs" in n]
    assert note.startswith("config['sliding_window'] = 2047: transformers departs")
    assert f"({2047 + 1:,} for Phi-3-mini-4k-instruct's 2047)" in entry.published and note.endswith(entry.transformers)
    # the long-context configs (LongRoPE, a window longer than their context) and a config with no window: silent
    for zoo in ("phi-3.5-mini-instruct", "phi-4-mini-instruct", "phi-4"):
        config = {k: v for k, v in json.loads((ZOO / f"{zoo}.json").read_text()).items() if not k.startswith("_")}
        assert not [n for n in read_config(config).notes if "departs" in n], zoo


def test_mistral_window_is_mistrals_own() -> None:
    """A lead checked and found equal: Mistral's inference code keeps W keys, as transformers does. (Its
    one-file reference, one_file_ref.py:259-261 at c18d5b9, keeps W + 1 in prefill with triu(diagonal=-W) and
    W in decoding from its rolling cache of W entries, :93-108 and :121-134: the reference disagrees with itself, and
    the main code is followed here.)"""
    torch.manual_seed(0)
    model = MistralModel(MistralConfig(**TINY)).eval()
    assert _seen_by_last(model) == 3
    for query in (0, 4095, 4096, 9000):
        assert transformers_keys(query, 4096) == xformers_keys(query, 4096), query
    assert not [n for n in read_config({"model_type": "mistral", **TINY}).notes if "departs" in n]


def olmo_core_keys(query: int, window: int) -> list[int]:
    """The keys AI2's OLMo-core lets ``query`` see for a config's sliding_window: its converter writes the flash
    left window plus one as sliding_window (allenai/OLMo-core@fa6c5014c src/olmo_core/nn/hf/config.py:162-170),
    and the attention keeps keys from query - (window - 1) to query (src/olmo_core/nn/attention/__init__.py:458-459;
    its torch mask, backend.py:423-428, triu with diagonal -(window - 1))."""
    left = window - 1
    return [k for k in range(query + 1) if k >= query - left]


def test_olmo3_window_is_olmo_cores() -> None:
    """A lead checked and found equal: OLMo 3's window keeps sliding_window keys in AI2's code and in transformers
    (OLMo-core's converter says so, citing huggingface/transformers#40163)."""
    torch.manual_seed(0)
    model = Olmo3Model(Olmo3Config(**{**TINY, "num_hidden_layers": 4}, pad_token_id=0)).eval()
    assert _sliding_layers(model) == [0, 1, 2]  # three windowed layers and a full one, each windowed mask 3 wide
    for query in (0, 4095, 4096, 9000):
        assert transformers_keys(query, 4096) == olmo_core_keys(query, 4096), query
