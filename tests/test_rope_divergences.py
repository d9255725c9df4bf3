"""The register of transformers' departures from published models, transformers' side shown live.

For each entry of `posenc.configs._divergences.DIVERGENCES`: a config that sets the key is built by the
pinned transformers, whose rotary module and rotation function are run (``tests/rope_live.py``);
what they do must be what the entry says transformers does, posenc's reading must agree with it,
and `read_config` must name both sides in a note; an entry with a value condition (Qwen2's
max_window_layers, only with the window on) must stay silent where the condition fails, in Python and
in the browser's port alike.

The leads checked and found NOT to be divergences are pinned here too: the authors' formula, read at
its source (repository@commit:path:lines in each test) and written again in float64, against what the
pinned transformers runs on the zoo's config, so that a change on either side fails a test.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("transformers", reason="transformers is a test dependency (requirements.lock)")

import torch
from transformers import (
    CONFIG_MAPPING,
    AttentionInterface,
    Qwen2Config,
    Qwen2Model,
    Qwen2MoeConfig,
    Qwen2MoeModel,
)
from transformers.masking_utils import AttentionMaskInterface, eager_mask
from transformers.models.deepseek_v2.modeling_deepseek_v2 import DeepseekV2Attention
from transformers.models.deepseek_v3.modeling_deepseek_v3 import DeepseekV3Attention
from transformers.models.llama4.modeling_llama4 import Llama4TextAttention

from posenc.configs import read_config
from posenc.configs._divergences import DIVERGENCES, divergence_notes
from tests import rope_live

ZOO = Path(__file__).resolve().parents[1] / "posenc" / "zoo"

# MiniMax-Text-01's attention as published: 64 heads of 128 features, 64 of them rotated, base 1e7
MINIMAX_01 = {"model_type": "minimax", "hidden_size": 6144, "num_attention_heads": 64, "num_key_value_heads": 8,
              "head_dim": 128, "num_hidden_layers": 4, "rotary_dim": 64, "rope_theta": 10000000.0}


def test_every_entry_is_complete() -> None:
    assert DIVERGENCES, "the register has entries"
    for entry in DIVERGENCES:
        assert entry.published and entry.transformers and entry.key
        # the note ends with transformers' side: a sentence; the published side gets its stop from the note
        assert entry.transformers.endswith(".") and not entry.published.endswith("."), entry.key
        assert any(e.startswith("https://") for e in entry.evidence), entry  # the published side, by URL
        assert any("transformers" in e and ".py" in e for e in entry.evidence), entry  # transformers' side, by file
        for key, value in entry.when:  # values the browser's port compares alike: JSON true/false/null/strings
            assert isinstance(key, str) and (value is None or isinstance(value, (bool, str))), entry


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


# Leads checked and found NOT to be divergences: the authors' code, read at its source and written
# again here in float64, must keep agreeing with what the pinned transformers runs (if either side
# moves, the register needs an entry).

def _deepseek_authors_yarn(theta: float, dim: int, factor: float, original: int, beta_fast: float,
                           beta_slow: float) -> torch.Tensor:
    """deepseek-ai/DeepSeek-V3@9b4e978 inference/model.py:297-370 (precompute_freqs_cis) in float64,
    in the branch its defaults take (ModelArgs.max_seq_len 16384 > original_seq_len 4096, :56, :81)."""
    def corr(rotations: float) -> float:  # the dimension whose wavelength fits `rotations` times
        return dim * math.log(original / (rotations * 2 * math.pi)) / (2 * math.log(theta))

    low, top = max(math.floor(corr(beta_fast)), 0), min(math.ceil(corr(beta_slow)), dim - 1)
    high = top + 0.001 if low == top else float(top)  # the authors' guard against an empty ramp
    ramp = ((torch.arange(dim // 2, dtype=torch.float64) - low) / (high - low)).clamp(0, 1)
    freqs = theta ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    return freqs / factor * ramp + freqs * (1 - ramp)


@pytest.mark.parametrize(("zoo", "authors_mscale"), [
    ("deepseek-v3", 1.0),  # ModelArgs.mscale default (model.py:86); config_671B.json sets none
    ("deepseek-v2-lite", 0.707),  # inference/configs/config_16B.json: "mscale": 0.707
    # Kimi K2 "reuses the DeepSeekV3CausalLM architecture" (MoonshotAI/Kimi-K2@c6157be
    # docs/deploy_guidance.md:195), with its own base 50,000, factor 32 and beta_fast = beta_slow = 1
    ("kimi-k2-instruct", 1.0),
])
def test_deepseek_yarn_is_the_authors(zoo: str, authors_mscale: float) -> None:
    config = json.loads((ZOO / f"{zoo}.json").read_text())
    config = {k: v for k, v in config.items() if not k.startswith("_")}
    if config["model_type"] == "kimi_k2":  # no transformers type; its Kimi K2.5 wrapper builds a kimi_k2 text
        # config as deepseek_v3 (kimi_k25/configuration_kimi_k25.py:85-86), and so does posenc
        config["model_type"] = "deepseek_v3"
    text = rope_live.transformers_config(config)
    scaling = config["rope_scaling"]
    authors = _deepseek_authors_yarn(float(config["rope_theta"]), config["qk_rope_head_dim"], scaling["factor"],
                                     scaling["original_max_position_embeddings"], scaling["beta_fast"],
                                     scaling["beta_slow"])
    reference = rope_live.Reference(text)
    plain = float(config["rope_theta"]) ** (-torch.arange(0, 64, 2, dtype=torch.float64) / 64)
    assert config["qk_rope_head_dim"] == 64
    assert not torch.allclose(authors, plain)  # YaRN moves the slow pairs: the comparison is not vacuous
    assert torch.allclose(reference.inv_freq(None).double(), authors, rtol=1e-6, atol=0)
    assert reference.attention_scaling(None) == pytest.approx(1.0)  # neither side scales cos and sin
    # the softmax scale: authors (model.py:434-437) qk_head_dim ** -0.5 * mscale ** 2 with
    # mscale = 0.1 * args.mscale * ln(rope_factor) + 1; transformers' attention module, built small
    small = rope_live.transformers_config({**config, "hidden_size": 64, "num_attention_heads": 2,
                                           "q_lora_rank": 16 if config.get("q_lora_rank") else None,
                                           "kv_lora_rank": 16})
    attention = (DeepseekV3Attention if config["model_type"] == "deepseek_v3" else DeepseekV2Attention)(small, 0)
    qk_head_dim = config["qk_nope_head_dim"] + config["qk_rope_head_dim"]
    mscale = 0.1 * authors_mscale * math.log(scaling["factor"]) + 1.0
    assert attention.scaling == pytest.approx(qk_head_dim ** -0.5 * mscale * mscale, rel=1e-12)


def test_llama4_nope_layers_chunks_and_temperature_are_metas() -> None:
    """meta-llama/llama-models@a9c89c4 models/llama4/model.py: a layer is NoPE when
    (layer_id + 1) % nope_layer_interval == 0 (:258), NoPE layers attend globally and the others in chunks
    (:326-327, :418-419), and NoPE layers' queries are scaled by
    log(floor((p + 1) / floor_scale) + 1) * attn_scale + 1 at position p (:223-229)."""
    config = {"model_type": "llama4_text", "hidden_size": 32, "num_attention_heads": 2, "num_key_value_heads": 2,
              "head_dim": 16, "num_hidden_layers": 8, "no_rope_layer_interval": 4, "attention_chunk_size": 8192,
              "attn_temperature_tuning": True, "floor_scale": 4, "attn_scale": 0.1}
    text = rope_live.transformers_config(config)
    nope = [(i + 1) % 4 == 0 for i in range(8)]
    assert [not r for r in text.no_rope_layers] == nope
    assert text.layer_types == ["full_attention" if n else "chunked_attention" for n in nope]
    seen: dict[str, torch.Tensor] = {}

    def capture(module, query, key, value, attention_mask, **kwargs):  # type: ignore[no-untyped-def]
        seen["q"] = query
        return torch.zeros(query.shape[0], query.shape[2], query.shape[1], query.shape[3], dtype=query.dtype), None

    AttentionInterface.register("posenc_capture", capture)
    text._attn_implementation = "posenc_capture"
    attention = Llama4TextAttention(text, layer_idx=3).double()  # a NoPE layer
    x = torch.randn(1, 20, 32, dtype=torch.float64)
    attention(x, None, None)
    unscaled = attention.q_proj(x).view(1, 20, 2, 16).transpose(1, 2)
    p = torch.arange(20, dtype=torch.float64)
    metas = torch.log(torch.floor((p + 1) / 4) + 1) * 0.1 + 1
    # transformers forms the scales in float32 (positions.float()), hence 1e-6
    assert torch.allclose(seen["q"], unscaled * metas[None, None, :, None], rtol=1e-6, atol=1e-9)
    assert metas[-1] > metas[2] == 1.0  # positions 0-2 unscaled, later ones scaled: not vacuous


def test_gpt_oss_yarn_and_window_are_openais() -> None:
    """openai/gpt-oss@7b58334 gpt_oss/torch/model.py: YaRN with unrounded ramp ends
    d/2 * ln(L / (beta * 2 pi)) / ln(base), cos and sin times 0.1 ln(factor) + 1 (:85-130), a window on the
    even layers (:188) masking keys W or more behind the query (:161-165); its config's ntk_alpha 1 and
    ntk_beta 32 are the published config's beta_slow and beta_fast."""
    from transformers.masking_utils import sliding_window_causal_mask_function

    config = json.loads((ZOO / "gpt-oss-120b.json").read_text())
    config = {k: v for k, v in config.items() if not k.startswith("_")}
    text = rope_live.transformers_config(config)
    scaling, d, base = config["rope_scaling"], config["head_dim"], float(config["rope_theta"])
    # OpenAI's YaRN reads initial_context_length (model.py:100-105, 210), which transformers never reads; it takes
    # rope_scaling's original_max_position_embeddings, and the published config gives both alike
    assert config["initial_context_length"] == scaling["original_max_position_embeddings"] == 4096
    ends = [d / 2 * math.log(scaling["original_max_position_embeddings"] / (beta * 2 * math.pi)) / math.log(base)
            for beta in (scaling["beta_fast"], scaling["beta_slow"])]
    ramp = ((torch.arange(d // 2, dtype=torch.float64) - ends[0]) / (ends[1] - ends[0])).clamp(0, 1)
    freq = base ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
    openai = 1 / (scaling["factor"] * freq) * ramp + 1 / freq * (1 - ramp)
    reference = rope_live.Reference(text)
    assert torch.allclose(reference.inv_freq(reference.layer_type("full_attention")).double(), openai, rtol=1e-6)
    assert reference.attention_scaling(None) == pytest.approx(0.1 * math.log(scaling["factor"]) + 1, rel=1e-7)
    assert text.layer_types == ["sliding_attention" if i % 2 == 0 else "full_attention"
                                for i in range(config["num_hidden_layers"])]
    window = config["sliding_window"]
    allowed = sliding_window_causal_mask_function(window)
    for q in (0, window - 1, window, 3 * window):
        zero = torch.tensor(0)
        seen = [k for k in range(q + 1) if bool(allowed(zero, zero, torch.tensor(q), torch.tensor(k)))]
        assert seen == list(range(max(0, q - window + 1), q + 1))  # OpenAI's mask keeps q - k < W


@pytest.mark.parametrize(("zoo", "pattern", "local", "global_", "global_factor"), [
    # google-deepmind/gemma@7691fd4 gemma/gm/nn/_gemma.py: Gemma 3 27B (:286-310) repeats 5 local layers and
    # a global one (:39-46), bases 10,000 and 1,000,000, positions divided by 8 on global layers only
    # (_transformer.py:141-146, math/_positional_embeddings.py:64-66)
    ("gemma-3-27b-it", 6, 10_000.0, 1_000_000.0, 8.0),
    # Gemma 2 9B (_gemma.py:78-98): local and global layers alternate, local first, one base, window 4096
    ("gemma-2-9b", 2, 10_000.0, 10_000.0, 1.0),
])
def test_gemma_layers_bases_and_window_are_googles(zoo: str, pattern: int, local: float, global_: float,
                                                    global_factor: float) -> None:
    """Gemma's own code: the window keeps keys with q - k < W (_modules.py:38-52; the causal mask does the
    rest), and apply_rope rotates the two halves of the head (math/_positional_embeddings.py:71-74)."""
    from transformers.masking_utils import sliding_window_causal_mask_function

    config = json.loads((ZOO / f"{zoo}.json").read_text())
    config = {k: v for k, v in config.items() if not k.startswith("_")}
    text = rope_live.transformers_config(config)
    layers = text.num_hidden_layers
    assert text.layer_types == ["full_attention" if (i + 1) % pattern == 0 else "sliding_attention"
                                for i in range(layers)]
    reference = rope_live.Reference(text)
    d = text.head_dim
    for name, base, factor in (("sliding_attention", local, 1.0), ("full_attention", global_, global_factor)):
        google = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d) / factor
        assert torch.allclose(reference.inv_freq(reference.layer_type(name)).double(), google, rtol=1e-6), name
    q = torch.randn(1, 1, 3, d, dtype=torch.float64)
    rotated, _ = reference.rotate(q, q.clone(), torch.arange(3), reference.layer_type("sliding_attention"))
    half = d // 2  # the two halves turn together: feature i pairs with i + d/2
    angle = 2 * local ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    first, second = q[0, 0, 2, :half], q[0, 0, 2, half:]
    expected = torch.cat((first * angle.cos() - second * angle.sin(), second * angle.cos() + first * angle.sin()))
    assert torch.allclose(rotated[0, 0, 2], expected, atol=1e-6)
    window = text.sliding_window
    allowed = sliding_window_causal_mask_function(window)
    zero = torch.tensor(0)
    for q_idx in (window - 1, window, 2 * window + 3):
        seen = [k for k in range(q_idx + 1) if bool(allowed(zero, zero, torch.tensor(q_idx), torch.tensor(k)))]
        assert seen == list(range(max(0, q_idx - window + 1), q_idx + 1))


@pytest.mark.parametrize("last", [4095, 4096])  # short factors through position 4095, long from 4096 on
def test_phi3_longrope_switch_and_scale_are_microsofts(last: int) -> None:
    """Microsoft's remote code for Phi-3 (modeling_phi3.py, Phi3LongRoPEScaledRotaryEmbedding), read in the
    copy vendored by ign-msati/tt-metal@c0ad2d3 models/experimental/phi3_mini_may_ver_5/reference/rope.py
    (Microsoft's own file on the Hub was not opened): long factors once max(position_ids) + 1 exceeds
    original_max_position_embeddings, else short; inv_freq 1 / (factor_i * base ** (2i / d)); cos and sin
    times sqrt(1 + ln(max / original) / ln(original))."""
    config = json.loads((ZOO / "phi-3.5-mini-instruct.json").read_text())
    config = {k: v for k, v in config.items() if not k.startswith("_")}
    text = rope_live.transformers_config(config)
    d = config["hidden_size"] // config["num_attention_heads"]
    original, longest = config["original_max_position_embeddings"], config["max_position_embeddings"]
    chosen = config["rope_scaling"]["long_factor" if last + 1 > original else "short_factor"]
    inv = 1 / (torch.tensor(chosen, dtype=torch.float64) * config["rope_theta"] ** (torch.arange(0, d, 2) / d))
    scale = math.sqrt(1 + math.log(longest / original) / math.log(original))
    positions = torch.tensor([[0, 1, 1000, last]])
    reference = rope_live.Reference(text)
    cos, _ = reference.rotary(torch.zeros(1, 4, 8, dtype=torch.float64), positions)
    angles = positions[0, :, None].double() * inv[None, :]
    microsoft = torch.cat((angles, angles), dim=-1).cos() * scale
    assert torch.allclose(cos[0].double(), microsoft, atol=2e-3)  # float32 angles up to 4096 rad
    assert not torch.allclose(torch.tensor(config["rope_scaling"]["long_factor"]),
                              torch.tensor(config["rope_scaling"]["short_factor"]))  # the switch matters


@pytest.mark.parametrize(("zoo", "head", "turned", "pairs"), [
    # kingoflolz/mesh-transformer-jax@f8315e3: GPT-J turns the first pe_rotary_dims = 64 features of each
    # 256-wide head (configs/6B_roto_256.json:8; mesh_transformer/layers.py:245, 262-266), base 10,000, in
    # adjacent pairs (rotate_every_two, :128-148)
    ("gpt-j-6b", 256, 64, "adjacent"),
    # EleutherAI/gpt-neox@ea7aefd8: the first rotary_pct of each head (megatron/model/transformer.py:383-397,
    # 824-832), base rotary_emb_base, the two halves of that part paired (positional_embeddings.py:103-115)
    ("pythia-1.4b-deduped", 128, 32, "halves"),
])
def test_gptj_and_neox_partial_rotation_is_the_authors(zoo: str, head: int, turned: int, pairs: str) -> None:
    config = json.loads((ZOO / f"{zoo}.json").read_text())
    text = rope_live.transformers_config({k: v for k, v in config.items() if not k.startswith("_")})
    reference = rope_live.Reference(text)
    inv = 10_000.0 ** (-torch.arange(0, turned, 2, dtype=torch.float64) / turned)
    assert text.hidden_size // text.num_attention_heads == head
    assert torch.allclose(reference.inv_freq(None).double(), inv, rtol=1e-6)  # only `turned` features turn
    # the turned part alone: GPTJAttention slices it off before the call (modeling_gptj.py:198-201), and
    # GPT-NeoX's apply_rotary_pos_emb passes the rest through itself (modeling_gpt_neox.py:129-138)
    q = torch.randn(1, 1, 4, turned, dtype=torch.float64)
    rotated, _ = reference.rotate(q, q.clone(), torch.arange(4), None)
    angle = 3 * inv
    x = q[0, 0, 3, :turned]
    if pairs == "adjacent":
        a, b = x[0::2], x[1::2]
        expected = torch.stack((a * angle.cos() - b * angle.sin(), b * angle.cos() + a * angle.sin()), -1).flatten()
    else:
        a, b = x[: turned // 2], x[turned // 2:]
        expected = torch.cat((a * angle.cos() - b * angle.sin(), b * angle.cos() + a * angle.sin()))
    assert torch.allclose(rotated[0, 0, 3], expected, atol=1e-6)


# Qwen2's max_window_layers: registered with a value condition (the window switched on, no layer_types).
QWEN2 = {"model_type": "qwen2", "hidden_size": 16, "intermediate_size": 16, "num_attention_heads": 2,
         "num_key_value_heads": 2, "num_hidden_layers": 6, "vocab_size": 16, "use_sliding_window": True,
         "sliding_window": 3, "max_window_layers": 4}
QWEN2_MOE = {**QWEN2, "model_type": "qwen2_moe", "num_experts": 2, "num_experts_per_tok": 1,
             "moe_intermediate_size": 8, "shared_expert_intermediate_size": 8}
# The layers the authors' code windows (the bottom max_window_layers: layer index below 4 of 6)
AUTHORS_SLIDING = [0, 1, 2, 3]

# Model types whose pinned config class also reads max_window_layers, not registered: the departure is
# from the authors' code. Qwen2-VL's own code (added after transformers turned Qwen2's rule, see the
# register) already windows the top layers; the others' authors' code was not read here.
UNCHECKED = ("deepseek_ocr2_encoder", "dots1", "qwen2_5_omni_talker", "qwen2_5_omni_text", "qwen2_5_vl_text",
             "qwen2_vl_text", "qwen3", "qwen3_omni_moe_talker_code_predictor")


def _sliding_layers(model: Any, length: int = 8) -> list[int]:
    """The layers whose attention gets a sliding-window mask in a forward pass of `length` tokens (the
    last query sees fewer than all keys), through an attention function that records each mask."""
    reach: dict[int, int] = {}

    def record(module, query, key, value, attention_mask, **kwargs):  # type: ignore[no-untyped-def]
        reach[module.layer_idx] = int((attention_mask[0, 0, -1] == 0).sum())
        return torch.zeros(query.shape[0], query.shape[2], query.shape[1], query.shape[3], dtype=query.dtype), None

    AttentionInterface.register("posenc_masks", record)
    AttentionMaskInterface.register("posenc_masks", eager_mask)  # a 4-D mask for every layer, as eager builds it
    model.config._attn_implementation = "posenc_masks"
    with torch.no_grad():
        model(torch.arange(length)[None])
    assert sorted(reach) == list(range(model.config.num_hidden_layers))
    assert set(reach.values()) <= {length, model.config.sliding_window}
    return [i for i, seen in sorted(reach.items()) if seen < length]


@pytest.mark.parametrize(("config", "build", "sliding"), [
    (QWEN2, lambda c: Qwen2Model(Qwen2Config(**c)), [4, 5]),  # from max_window_layers on
    (QWEN2_MOE, lambda c: Qwen2MoeModel(Qwen2MoeConfig(**c)), [0, 2]),  # the even layers below it
])
def test_qwen2_max_window_layers_transformers_windows_other_layers(config, build, sliding) -> None:  # type: ignore[no-untyped-def]
    torch.manual_seed(0)
    model = build({k: v for k, v in config.items() if k != "model_type"}).eval()
    assert _sliding_layers(model) == sliding != AUTHORS_SLIDING
    reading = read_config(config)
    assert reading.layers["sliding_attention"].layers == tuple(sliding)  # posenc reads what transformers runs
    assert reading.layers["sliding_attention"].window == 3
    # switched off (the class's default), transformers' masks are all full: hence the condition
    off = build({k: v for k, v in config.items() if k not in ("model_type", "use_sliding_window")}).eval()
    assert _sliding_layers(off) == []


def test_the_window_layers_rule_is_derived_from_transformers() -> None:
    """Every config class of the pinned transformers that reads max_window_layers, built with the window on:
    the registered model types and the unchecked ones are all of them, and none windows the authors' layers."""
    readers = sorted(t for t, cls in CONFIG_MAPPING.items() if "max_window_layers" in getattr(
        cls, "__dataclass_fields__", {}))
    registered = sorted(e.model_type for e in DIVERGENCES if e.key == "max_window_layers")
    assert registered == ["qwen2", "qwen2_moe"]
    assert readers == sorted([*registered, *UNCHECKED])
    for model_type in readers:
        window_on: dict[str, Any] = {"num_hidden_layers": 6, "max_window_layers": 4, "use_sliding_window": True,
                                     "sliding_window": 3}
        built = CONFIG_MAPPING[model_type](**window_on)
        windowed = [i for i, kind in enumerate(built.layer_types) if kind == "sliding_attention"]
        assert windowed in ([4, 5], [0, 2]), (model_type, windowed)  # the top, or Qwen2-MoE's even bottom


@pytest.mark.parametrize(("model_type", "extra", "fires"), [
    ("qwen2", {}, True),
    ("qwen2_moe", {}, True),
    ("qwen2", {"use_sliding_window": False}, False),  # the published configs: no window, nothing departs
    ("qwen2", {"use_sliding_window": None}, False),  # absent: the class's default, off
    ("qwen2", {"layer_types": ["full_attention"] * 6}, False),  # given layer types: max_window_layers unused
    ("qwen2", {"max_window_layers": None, "num_hidden_layers": 30}, False),  # the key not set (the class's 28)
    ("qwen3", {}, False),  # unchecked at its authors' code: no note
])
def test_qwen2_note_fires_only_under_its_condition(model_type: str, extra: dict[str, object], fires: bool) -> None:
    config = {k: v for k, v in {**QWEN2_MOE, "model_type": model_type, **extra}.items() if v is not None}
    notes = [n for n in read_config(config).notes if "transformers departs" in n]
    assert bool(notes) == fires, notes
    if fires:
        assert notes[0].startswith("config['max_window_layers'] = 4: transformers departs")
        assert "bottom max_window_layers layers" in notes[0]


def test_the_condition_matches_type_and_value() -> None:
    config = {"max_window_layers": 4, "use_sliding_window": True}
    assert divergence_notes("qwen2", config)
    assert not divergence_notes("qwen2", {**config, "use_sliding_window": 1})  # 1 is not true (nor in the port)
    assert not divergence_notes("qwen2", {**config, "use_sliding_window": "true"})
    assert not divergence_notes("qwen2", {**config, "layer_types": []})  # given, even empty


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the site's JavaScript")
def test_the_browser_port_fires_the_note_alike(tmp_path: Path) -> None:
    from tests.rope_port_cases import _case
    from tests.site.check_inspector import API_READING, compare, kinds, posenc_reading
    from tests.test_explorer_ports import run_js

    configs = [QWEN2, QWEN2_MOE, {**QWEN2, "use_sliding_window": False}, {**QWEN2, "layer_types": [
        "full_attention"] * 6}, {k: v for k, v in QWEN2.items() if k != "use_sliding_window"},
        {**QWEN2, "model_type": "qwen3"}, json.loads((ZOO / "qwen2.5-7b-instruct-yarn.json").read_text())]
    cases = [_case(c) for c in configs]
    results = run_js(tmp_path, API_READING.replace("([cases])", "(cases)"), cases)
    assert isinstance(results, list) and len(results) == len(cases)
    fired = []
    for (text, layout, length), ours in zip(cases, results):
        theirs = posenc_reading(text, layout, length)
        assert not compare(kinds(json.loads(ours)), kinds(theirs)), text[:80]
        fired.append(any("max_window_layers" in n for n in json.loads(ours)["value"]["rope"]["notes"]))
    assert fired == [True, True, False, False, False, False, False]


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the site's JavaScript")
def test_the_inspector_explains_each_note_as_the_register_says(tmp_path: Path) -> None:
    """The browser inspector's 'What this means' (inspector_words.js MEANINGS) for each registered note: the
    register's own meaning, not the generic 'does something posenc does not read' (posenc reads the model as
    transformers runs it), MiniMax-01's naming its rotary_dim, the others their windows."""
    from tests.test_explorer_ports import MODULES, run_js

    chart = tmp_path / "chart.js"  # inspector_chart.js draws with d3; its number format is all the words use
    chart.write_text('window.posencInspectorChart = {num: (v) => Number(v).toLocaleString("en-US")};')
    notes = [n for c in (MINIMAX_01, QWEN2, QWEN2_MOE) for n in read_config(c).notes if "transformers departs" in n]
    assert len(notes) == 3 and all(n.endswith(".") for n in notes)
    meanings = run_js(tmp_path, """(notes) => notes.map((note) => {
      const M = window.posencInspectorWords.MEANINGS;
      const i = M.findIndex(([pattern]) => pattern.test(note));
      return [i, M.length - 1, M[i][1], M[i][2]];
    })""", notes, modules=[*MODULES, str(chart), "inspector_words.js"])
    assert isinstance(meanings, list)
    for note, (found, generic, meaning, href) in zip(notes, meanings):
        assert found < generic, note[:60]
        assert meaning.startswith("The reading above is the model as transformers builds it"), note[:60]
    assert "rotary_dim" in meanings[0][2] and meanings[0][3] == "../architectures/#hybrids"
    assert all("windows" in m[2] for m in meanings[1:])
