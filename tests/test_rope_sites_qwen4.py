"""Qwen4-Exp's QSA indexer as a rotary site (posenc.configs.sites), checked against the pinned
transformers: its queries turn at their tokens (modeling_qwen4_exp.py:711) and its pooled keys, each
the mean of a block of ``indexer_compress_ratio`` tokens, at the block's first token (:736-747), both
on the first ``head_dim * partial_rotary_factor`` features of ``indexer_head_dim`` heads with the
attention's cos and sin, in the half layout (:653-664).

The live test runs one forward pass of a tiny Qwen4ExpTextModel while recording every call of
``apply_rotary_pos_emb`` and compares each result with posenc's rotation of the same input at the
site's positions, base, scaling and width, in each layout: exactly the site's layout matches, and the
pooled keys match at the blocks' first tokens, not at their own index."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import pytest
import torch

from posenc.configs import read_config
from posenc.configs import sites as S
from tests.test_rope_sites import LAYOUTS, recorded, turned

transformers = pytest.importorskip("transformers")
SEQ, RATIO = 8, 2
TINY = {"vocab_size": 64, "hidden_size": 64, "num_hidden_layers": 1, "num_attention_heads": 2,
        "num_key_value_heads": 2, "head_dim": 32, "layer_types": ["indexed_attention"], "pad_token_id": None,
        "bos_token_id": None, "eos_token_id": None, "num_experts": 4, "num_experts_per_tok": 2,
        "moe_intermediate_size": 16, "shared_expert_intermediate_size": 16, "indexer_n_heads": 2,
        "indexer_kv_heads": 1, "indexer_head_dim": 24, "indexer_budget": 4, "indexer_compress_ratio": RATIO}
ATOL = 1e-5
HALF = {"rope_parameters": {"rope_type": "default", "rope_theta": 500.0, "partial_rotary_factor": 0.5}}


def layouts_matching(x_in: torch.Tensor, x_out: torch.Tensor, site: S.RotarySite, positions: torch.Tensor) -> list[str]:
    """The layouts in which posenc's rotation of x_in (``[..., seq, head]``) is transformers' output."""
    return [layout for layout in LAYOUTS
            if torch.allclose(turned(x_in.double(), site, positions, layout), x_out.double(), atol=ATOL, rtol=0)]


@pytest.mark.parametrize("scaling", [None, {"rope_type": "linear", "factor": 3.0},
                                     {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4}],
                         ids=["plain", "linear", "yarn"])
def test_the_indexer_turns_as_transformers(scaling: dict[str, Any] | None) -> None:
    params = {"rope_type": "default", "rope_theta": 500.0, "partial_rotary_factor": 0.5, **(scaling or {})}
    config = transformers.Qwen4ExpTextConfig(**TINY, rope_parameters=params, max_position_embeddings=16)
    config._attn_implementation = "eager"
    (layer_sites,) = S.rotary_sites(config.to_dict()).values()
    by_name = {site.name: site for site in layer_sites}
    assert [(s.name, s.head_dim, s.width, s.features, s.layout, s.positions) for s in layer_sites] == [
        ("attention", 32, 16, "first", "half", "token"), ("indexer", 24, 16, "first", "half", "token"),
        ("indexer keys", 24, 16, "first", "half", "window start")]
    module = transformers.models.qwen4_exp.modeling_qwen4_exp
    torch.manual_seed(0)
    model = transformers.Qwen4ExpTextModel(config).eval()  # float32: its experts' grouped matmul takes no float64
    with recorded(module, ("apply_rotary_pos_emb",)) as calls, torch.no_grad():
        model(input_ids=torch.arange(SEQ).unsqueeze(0) % 64)
    seen = set()
    for call in calls:
        args = call["args"]
        assert args["cos"].shape[-1] == 16  # the rotated width: the module's cos and sin
        if call["caller"] == "Qwen4ExpTextAttention":
            site, x_in, x_out = by_name["attention"], args["q"], call["result"][0]
            positions = torch.arange(SEQ)
        elif args["k"] is None and args["unsqueeze_dim"] == 2:  # the indexer's queries, [batch, seq, heads, head]
            site, x_in, x_out = by_name["indexer"], args["q"].transpose(1, 2), call["result"].transpose(1, 2)
            positions = torch.arange(SEQ)
        else:  # the pooled keys of the complete blocks a query sees, [blocks, 1, head]
            assert call["caller"] == "Qwen4ExpTextQSAIndexer"
            site, x_in, x_out = by_name["indexer keys"], args["q"].transpose(0, 1), call["result"].transpose(0, 1)
            positions = torch.arange(x_in.shape[-2]) * RATIO
            if x_in.shape[-2] > 1:  # not at the blocks' own index
                assert layouts_matching(x_in, x_out, site, torch.arange(x_in.shape[-2])) == []
        # position 0 alone turns nothing: both layouts agree there
        expected = [site.layout] if positions.max() > 0 else list(LAYOUTS)
        assert layouts_matching(x_in, x_out, site, positions) == expected, site.name
        seen.add(site.name)
    assert seen == set(by_name)


def test_the_indexer_needs_its_width() -> None:
    """Its model does not build without the indexer's sizes, so rotary_sites asks for its width."""
    config = {key: value for key, value in TINY.items() if not key.startswith("indexer_")}
    with pytest.raises(TypeError):
        transformers.Qwen4ExpTextModel(transformers.Qwen4ExpTextConfig(**config))
    with pytest.raises(ValueError, match=re.escape(
            "config needs 'indexer_head_dim' for model type 'qwen4_exp_text' (a head width of a rotary site)")):
        S.rotary_sites({"model_type": "qwen4_exp_text", **config})


def test_read_config_names_the_three_sites() -> None:
    rope = read_config({"model_type": "qwen4_exp", "text_config": {"model_type": "qwen4_exp_text", **TINY, **HALF}})
    (note,) = [note for note in rope.notes if "rotary site" in note]
    assert ("attention: the first head_dim * partial_rotary_factor features of each head_dim head, half; "
            "indexer: the first head_dim * partial_rotary_factor features of each indexer_head_dim head, half; "
            "indexer keys: the first head_dim * partial_rotary_factor features of each indexer_head_dim head, "
            "half") in note
    sites = S.rotary_sites({"model_type": "qwen4_exp", "text_config": {"model_type": "qwen4_exp_text", **TINY, **HALF}})
    assert [dataclasses.asdict(s)["positions"] for s in sites["indexed_attention"]] == [
        "token", "token", "window start"]
