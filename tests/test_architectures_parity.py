"""Today's designs against transformers' own model code (the version pinned in requirements.lock), live.

Each test builds a tiny random config of the family, copies the same weights into posenc's code
and compares the attention outputs:

* ``DeepseekV3Attention`` (multi-head latent attention, decoupled RoPE, YaRN's mscale in the
  softmax scale) against `posenc.latent.LatentAttention`, and what each caches;
* ``GptOssAttention`` (learned sinks, banded window) against `posenc.attention.SelfAttention` with
  the hooks of a `posenc.layer_plan.LayerPlan` (`posenc.layer_hooks`), the path TinyTransformer takes;
* ``Llama4TextAttention`` (chunked RoPE layers with the L2 q/k norm; NoPE layers with the attention
  temperature) and transformers' chunked mask with left padding, the same way;
* ``Ministral3Attention`` (the temperature on every layer, after RoPE).
"""

from __future__ import annotations

import logging
import math
from typing import Any

import pytest
import torch

transformers = pytest.importorskip("transformers", reason="transformers is a test dependency (requirements.lock)")

from posenc.attention import SelfAttention  # noqa: E402
from posenc.inference import plan_step, positions_from_mask  # noqa: E402
from posenc.latent import LatentAttention, LatentCache  # noqa: E402
from posenc.layer_hooks import _attend_layer, _call_inputs, _layer_inputs  # noqa: E402
from posenc.layer_plan import LayerPlan  # noqa: E402
from posenc.rope import RotaryEmbedding  # noqa: E402
from posenc.spans import span_mask  # noqa: E402
from posenc.temperature import QueryTemperature  # noqa: E402

logging.getLogger("transformers").setLevel(logging.ERROR)

HIDDEN, HEADS, HEAD_DIM = 16, 2, 8


def causal_additive(seq: int) -> torch.Tensor:
    return torch.full((seq, seq), -math.inf).triu(1)[None, None]


# ---------------------------------------------------------------- DeepSeek-V3: latent attention


def deepseek(q_lora_rank: int | None, interleave: bool, rope: dict[str, Any]) -> tuple[Any, Any]:
    from transformers import DeepseekV3Config
    from transformers.models.deepseek_v3.modeling_deepseek_v3 import DeepseekV3Attention, DeepseekV3RotaryEmbedding

    config = DeepseekV3Config(hidden_size=32, num_attention_heads=4, num_key_value_heads=4, q_lora_rank=q_lora_rank,
                              kv_lora_rank=8, qk_nope_head_dim=6, qk_rope_head_dim=4, v_head_dim=5,
                              num_hidden_layers=1, rope_interleave=interleave, rope_parameters=rope,
                              max_position_embeddings=256)
    config._attn_implementation = "eager"
    torch.manual_seed(0)
    theirs = DeepseekV3Attention(config, layer_idx=0).eval()
    with torch.no_grad():
        for p in theirs.parameters():  # norms included: random weights everywhere
            p.normal_(0, 0.5)
    return config, (theirs, DeepseekV3RotaryEmbedding(config))


def copy_deepseek(theirs: Any, ours: LatentAttention) -> None:
    with torch.no_grad():
        if theirs.q_proj is not None:
            ours.q_proj.weight.copy_(theirs.q_proj.weight)  # type: ignore[union-attr, operator]
        else:
            down, norm, up = ours.q_proj  # type: ignore[misc]
            down.weight.copy_(theirs.q_a_proj.weight)
            norm.weight.copy_(theirs.q_a_layernorm.weight)
            up.weight.copy_(theirs.q_b_proj.weight)
        ours.kv_a_proj.weight.copy_(theirs.kv_a_proj_with_mqa.weight)
        ours.kv_a_norm.weight.copy_(theirs.kv_a_layernorm.weight)
        ours.kv_b_proj.weight.copy_(theirs.kv_b_proj.weight)
        ours.out.weight.copy_(theirs.o_proj.weight)


ROPES = {
    "default": {"rope_type": "default", "rope_theta": 10000.0},
    "yarn-mscale": {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 40.0, "original_max_position_embeddings": 16,
                    "mscale": 1.0, "mscale_all_dim": 1.0, "beta_fast": 32.0, "beta_slow": 1.0},
    "yarn-two-mscales": {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 4.0,
                         "original_max_position_embeddings": 16, "mscale": 0.707, "mscale_all_dim": 1.0,
                         "beta_fast": 32.0, "beta_slow": 1.0},
}


@pytest.mark.parametrize("q_lora_rank", [None, 12])
@pytest.mark.parametrize("interleave", [True, False])
@pytest.mark.parametrize("rope", sorted(ROPES))
def test_latent_attention_is_deepseek_v3_attention(q_lora_rank: int | None, interleave: bool, rope: str) -> None:
    config, (theirs, rotary) = deepseek(q_lora_rank, interleave, dict(ROPES[rope]))
    ours = LatentAttention.from_config(config).eval()
    copy_deepseek(theirs, ours)
    assert ours.rotary.layout == ("interleaved" if interleave else "half")
    seq = 40  # past YaRN's original 16 positions
    x = torch.randn(2, seq, 32, generator=torch.Generator().manual_seed(1))
    positions = torch.arange(seq)[None]
    with torch.no_grad():
        want, _ = theirs(x, position_embeddings=rotary(x, positions), attention_mask=causal_additive(seq))
        got, _ = ours(x)
        absorbed, _ = ours(x, absorb=True)
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(absorbed, want, rtol=1e-4, atol=1e-5)
    if rope != "default":
        assert ours.softmax_scale > 1.0 and math.isclose(ours.scale, theirs.scaling, rel_tol=1e-12)


def test_the_cache_holds_what_deepseek_v3_caches() -> None:
    from transformers import DynamicCache

    config, (theirs, rotary) = deepseek(None, True, dict(ROPES["yarn-mscale"]))
    ours = LatentAttention.from_config(config).eval()
    copy_deepseek(theirs, ours)
    x = torch.randn(1, 9, 32, generator=torch.Generator().manual_seed(2))
    hf_cache, cache = DynamicCache(config=config), LatentCache()
    with torch.no_grad():
        for i in range(9):  # token by token, both caches
            position = torch.tensor([[i]])
            want, _ = theirs(x[:, i:i + 1], position_embeddings=rotary(x, position), attention_mask=None,
                             past_key_values=hf_cache)
            got, _ = ours(x[:, i:i + 1], cache=cache)
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
    layer = hf_cache.layers[0]
    assert cache.latent is not None and cache.rope_key is not None
    torch.testing.assert_close(cache.latent, layer.keys[:, 0], rtol=1e-5, atol=1e-6)  # the latent, as it is
    # transformers' interleaved rotation writes the rotated pairs as [evens, odds]: the same numbers
    half = torch.cat((cache.rope_key[..., 0::2], cache.rope_key[..., 1::2]), dim=-1)
    torch.testing.assert_close(half, layer.values[:, 0], rtol=1e-5, atol=1e-6)
    assert cache.latent.shape[-1] + cache.rope_key.shape[-1] == 8 + 4  # kv_lora_rank + qk_rope_head_dim


# ---------------------------------------------------------------- the path of a TinyTransformer layer


def attend(layer: SelfAttention, x: torch.Tensor, plan: LayerPlan, rotation: Any, *,
           attention_mask: torch.Tensor | None = None) -> torch.Tensor:
    """One layer as TinyTransformer runs it: plan_step, the call's inputs, the layer's, then the layer."""
    batch, seq, _ = x.shape
    positions = None if attention_mask is None else positions_from_mask(attention_mask)
    step = plan_step(None, owner=layer, num_layers=1, batch=batch, q_len=seq, positions=positions,
                     attention_mask=attention_mask, device=x.device)
    call = _call_inputs(step, None, None, x.device, [plan], [rotation], x.dtype)
    return _attend_layer(layer, x, _layer_inputs(plan, 0, call, rotation, None))[0]


def copy_qkvo(theirs: Any, ours: SelfAttention) -> None:
    with torch.no_grad():
        ours.qkv.weight.copy_(torch.cat([theirs.q_proj.weight, theirs.k_proj.weight, theirs.v_proj.weight]))
        ours.out.weight.copy_(theirs.o_proj.weight)


@pytest.mark.parametrize("layer_type", ["sliding_attention", "full_attention"])
def test_sinks_and_windows_are_gpt_oss_attention(layer_type: str) -> None:
    from transformers import GptOssConfig
    from transformers.masking_utils import create_causal_mask, create_sliding_window_causal_mask
    from transformers.models.gpt_oss.modeling_gpt_oss import GptOssAttention, GptOssRotaryEmbedding

    config = GptOssConfig(hidden_size=HIDDEN, num_attention_heads=HEADS, num_key_value_heads=HEADS, head_dim=HEAD_DIM,
                          num_hidden_layers=2, sliding_window=4, attention_bias=False, num_local_experts=2,
                          intermediate_size=8, vocab_size=10, max_position_embeddings=512,
                          rope_parameters={"rope_type": "yarn", "rope_theta": 150000.0, "factor": 32.0,
                                           "beta_fast": 32.0, "beta_slow": 1.0, "truncate": False,
                                           "original_max_position_embeddings": 16})
    config._attn_implementation = "eager"
    layer_idx = config.layer_types.index(layer_type)
    torch.manual_seed(3)
    theirs = GptOssAttention(config, layer_idx=layer_idx).eval()
    with torch.no_grad():
        theirs.sinks.normal_(0, 2.0)
    ours = SelfAttention(HIDDEN, HEADS, sinks=True).eval()
    copy_qkvo(theirs, ours)
    with torch.no_grad():
        assert ours.sinks is not None
        ours.sinks.copy_(theirs.sinks)
    params = config.rope_parameters
    rotation = RotaryEmbedding(HEAD_DIM, base=params["rope_theta"], scaling={
        "type": "yarn", "factor": params["factor"], "original_max_position_embeddings": 16, "beta_fast": 32.0,
        "beta_slow": 1.0, "truncate": False})
    plan = LayerPlan("rope", sinks=True, window=4 if layer_type == "sliding_attention" else None)
    seq = 30
    x = torch.randn(2, seq, HIDDEN, generator=torch.Generator().manual_seed(4))
    positions = torch.arange(seq)[None]
    make_mask = create_sliding_window_causal_mask if layer_type == "sliding_attention" else create_causal_mask
    with torch.no_grad():
        mask = make_mask(config=config, inputs_embeds=x, attention_mask=None, past_key_values=None,
                         position_ids=positions)
        want, _ = theirs(x, position_embeddings=GptOssRotaryEmbedding(config)(x, positions), attention_mask=mask)
        got = attend(ours, x, plan, rotation)
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
    if layer_type == "sliding_attention":  # the window is transformers' sliding_window_overlay
        allowed = mask[0, 0] == 0
        assert torch.equal(allowed, span_mask(torch.arange(seq), torch.arange(seq), window=4))


def llama4(**kwargs: Any) -> Any:
    from transformers import Llama4TextConfig

    config = Llama4TextConfig(hidden_size=HIDDEN, num_attention_heads=HEADS, num_key_value_heads=HEADS,
                              head_dim=HEAD_DIM, num_hidden_layers=4, attention_chunk_size=5, intermediate_size=8,
                              intermediate_size_mlp=8, vocab_size=10, num_local_experts=1, rms_norm_eps=1e-6,
                              floor_scale=4, attn_scale=0.3, rope_parameters={"rope_type": "default",
                                                                               "rope_theta": 500000.0}, **kwargs)
    config._attn_implementation = "eager"
    return config


@pytest.mark.parametrize("layer_idx", [0, 3])  # a chunked RoPE layer with q/k norm; the NoPE layer with temperature
def test_irope_layers_are_llama4_text_attention(layer_idx: int) -> None:
    from transformers.masking_utils import create_causal_mask, create_chunked_causal_mask
    from transformers.models.llama4.modeling_llama4 import Llama4TextAttention, Llama4TextRotaryEmbedding

    config = llama4()
    assert config.no_rope_layers == [1, 1, 1, 0] and config.use_qk_norm and config.attn_temperature_tuning
    torch.manual_seed(5)
    theirs = Llama4TextAttention(config, layer_idx).eval()
    ours = SelfAttention(HIDDEN, HEADS).eval()
    copy_qkvo(theirs, ours)
    rope_layer = bool(config.no_rope_layers[layer_idx])
    plan = (LayerPlan("rope", chunk=5, qk_norm=True) if rope_layer else
            LayerPlan("none", temperature=QueryTemperature(beta=config.attn_scale, length=config.floor_scale, offset=1)))
    rotation = RotaryEmbedding(HEAD_DIM, base=500000.0, layout="interleaved") if rope_layer else None
    seq = 23
    x = torch.randn(2, seq, HIDDEN, generator=torch.Generator().manual_seed(6))
    positions = torch.arange(seq)[None]
    make_mask = create_chunked_causal_mask if rope_layer else create_causal_mask
    with torch.no_grad():
        mask = make_mask(config=config, inputs_embeds=x, attention_mask=None, past_key_values=None,
                         position_ids=positions)
        want, _ = theirs(x, position_embeddings=Llama4TextRotaryEmbedding(config)(x, positions), attention_mask=mask)
        got = attend(ours, x, plan, rotation)
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)


def test_chunks_follow_llama4_with_left_padding() -> None:
    from transformers.masking_utils import create_chunked_causal_mask

    config = llama4()
    x = torch.randn(3, 13, HIDDEN)
    padding = torch.ones(3, 13, dtype=torch.bool)
    padding[0, :4], padding[1, :1] = False, False
    mask = create_chunked_causal_mask(config=config, inputs_embeds=x, attention_mask=padding.long(),
                                      past_key_values=None, position_ids=None)
    positions = positions_from_mask(padding)
    ours = span_mask(positions, positions, chunk=5) & padding[:, None, :]
    for row in range(3):  # the real queries' rows (transformers leaves padding rows blind)
        real = padding[row]
        assert torch.equal((mask[row, 0] == 0)[real], ours[row][real])


def test_ministral3_temperature_on_every_layer() -> None:
    from transformers import Ministral3Config
    from transformers.models.ministral3.modeling_ministral3 import Ministral3Attention, Ministral3RotaryEmbedding

    config = Ministral3Config(hidden_size=HIDDEN, num_attention_heads=HEADS, num_key_value_heads=HEADS,
                              head_dim=HEAD_DIM, num_hidden_layers=1, intermediate_size=8, vocab_size=10,
                              max_position_embeddings=64, sliding_window=None,
                              rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                               "llama_4_scaling_beta": 0.4, "original_max_position_embeddings": 6})
    config._attn_implementation = "eager"
    torch.manual_seed(7)
    theirs = Ministral3Attention(config, 0).eval()
    ours = SelfAttention(HIDDEN, HEADS).eval()
    copy_qkvo(theirs, ours)
    plan = LayerPlan("rope", temperature=QueryTemperature(beta=0.4, length=6))
    seq = 20
    x = torch.randn(2, seq, HIDDEN, generator=torch.Generator().manual_seed(8))
    positions = torch.arange(seq)[None]
    with torch.no_grad():
        want, _ = theirs(x, position_embeddings=Ministral3RotaryEmbedding(config)(x, positions),
                         attention_mask=causal_additive(seq), position_ids=positions)
        got = attend(ours, x, plan, RotaryEmbedding(HEAD_DIM))
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
