"""RoPE as today's models use it: partial rotary, p-RoPE, YaRN's and LongRoPE's attention factors,
LongRoPE's per-pair factors, config reading, the GQA layout conversion, casts and bad input.

Expected values come from loops in float64 written from the papers (the helpers of test_rope.py:
RoFormer's pair rotation) and from the formulas quoted in each test; transformers, the live
reference for the same formulas, is checked in test_transformers_parity.py.
"""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc.attention import scaled_dot_product_attention
from posenc.rope import (
    LAYOUT_ALIASES,
    LAYOUTS,
    RotaryEmbedding,
    apply_rope,
    convert_rope_layout,
    from_config,
    layout_permutation,
    rope_attention_scaling,
    rope_inverse_frequencies,
    rope_long_term_decay,
)
from posenc.configs import read_config
from tests.test_rope import dot, ref_apply, ref_rotate, ref_theta


# ---------------------------------------------------------------- partial rotary
@pytest.mark.parametrize("layout", LAYOUTS)
def test_partial_rotary_matches_the_loop(layout: str) -> None:
    x = torch.randn(2, 5, 12, dtype=torch.float64)
    positions = [0.0, 3.0, 7.0, 100.0, 4096.0]
    out = apply_rope(x, torch.tensor(positions), base=500.0, layout=layout, rotary_dim=8)
    # the first 8 features turn with frequencies over a width of 8: 500^(-2i/8)
    expected = ref_apply(x[..., :8], positions, ref_theta(8, 500.0), layout)
    torch.testing.assert_close(out[..., :8], expected, rtol=0, atol=1e-12)
    assert torch.equal(out[..., 8:], x[..., 8:])


@pytest.mark.parametrize("layout", LAYOUTS)
def test_partial_rotary_is_differentiable(layout: str) -> None:
    x = torch.randn(2, 5, 12, dtype=torch.float64, requires_grad=True)
    positions = torch.tensor([0.0, 1.5, 7.0, 30.0, 99.0])
    out = apply_rope(x, positions, layout=layout, rotary_dim=8)
    weights = torch.randn_like(out)
    (out * weights).sum().backward()
    assert x.grad is not None
    assert torch.equal(x.grad[..., 8:], weights[..., 8:])  # pass-through: identity
    # a rotation's gradient is the inverse rotation of the upstream gradient
    back = apply_rope(weights.detach()[..., :8], -positions, layout=layout)
    torch.testing.assert_close(x.grad[..., :8], back, rtol=0, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(heads=st.integers(1, 3), half_rot=st.integers(1, 6), rest=st.integers(1, 6),
       layout=st.sampled_from(LAYOUTS), dtype=st.sampled_from([torch.float32, torch.bfloat16, torch.float16]),
       seed=st.integers(0, 2**16))
def test_unrotated_features_are_bit_identical(heads: int, half_rot: int, rest: int, layout: str,
                                              dtype: torch.dtype, seed: int) -> None:
    rotary_dim, dim = 2 * half_rot, 2 * half_rot + 2 * rest
    x = torch.randn(heads, 7, dim, generator=torch.Generator().manual_seed(seed)).to(dtype)
    positions = torch.tensor([0, 1, 5, 90, 1000, 4095, 70000])
    out = apply_rope(x, positions, layout=layout, rotary_dim=rotary_dim)
    module_q, _ = RotaryEmbedding(dim, layout=layout, rotary_dim=rotary_dim)(x, x, positions)
    assert torch.equal(out[..., rotary_dim:], x[..., rotary_dim:])
    assert torch.equal(module_q, out)


@settings(max_examples=40, deadline=None)
@given(half_rot=st.integers(1, 8), rest=st.integers(0, 4), m=st.integers(0, 5000), n=st.integers(0, 5000),
       shift=st.integers(-3000, 3000), layout=st.sampled_from(LAYOUTS), seed=st.integers(0, 2**16))
def test_relative_property_on_the_rotated_part(half_rot: int, rest: int, m: int, n: int, shift: int,
                                              layout: str, seed: int) -> None:
    rotary_dim, dim = 2 * half_rot, 2 * half_rot + 2 * rest
    generator = torch.Generator().manual_seed(seed)
    q, k = torch.randn(1, dim, generator=generator, dtype=torch.float64), torch.randn(1, dim, generator=generator,
                                                                                     dtype=torch.float64)

    def score(a: int, b: int) -> float:
        qa = apply_rope(q, torch.tensor([a]), layout=layout, rotary_dim=rotary_dim)
        kb = apply_rope(k, torch.tensor([b]), layout=layout, rotary_dim=rotary_dim)
        return float(qa[0, :rotary_dim] @ kb[0, :rotary_dim])

    a, b = m + abs(shift), n + abs(shift)
    assert math.isclose(score(m, n), score(a, b), rel_tol=1e-9, abs_tol=1e-9)


def test_partial_rotary_frequencies_use_the_rotated_width() -> None:
    theta = rope_inverse_frequencies(80, base=10000.0, rotary_dim=32)  # Phi-2: 80 * 0.4
    torch.testing.assert_close(theta, torch.tensor(ref_theta(32), dtype=torch.float64), rtol=1e-15, atol=0)
    # the other convention (exponent over the full head) is a different set: engines must not mix them
    full = torch.tensor(ref_theta(80)[:16], dtype=torch.float64)
    assert float((theta - full).abs().max()) > 0.1


# ---------------------------------------------------------------- p-RoPE (proportional)
@pytest.mark.parametrize(("dim", "p", "factor"), [(8, 0.5, 1.0), (256, 0.25, 1.0), (64, 0.75, 8.0), (16, 0.0, 1.0),
                                                  (16, 1.0, 2.0), (10, 0.5, 1.0)])
def test_proportional_frequencies(dim: int, p: float, factor: float) -> None:
    scaling = {"type": "proportional", "partial_rotary_factor": p, "factor": factor}
    theta = rope_inverse_frequencies(dim, base=10000.0, scaling=scaling)
    turning = math.floor(p * dim / 2)
    expected = [t / factor if i < turning else 0.0 for i, t in enumerate(ref_theta(dim))]
    torch.testing.assert_close(theta, torch.tensor(expected, dtype=torch.float64), rtol=1e-15, atol=0)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_proportional_leaves_the_slowest_pairs_unturned(layout: str) -> None:
    x = torch.randn(3, 6, 16)
    scaling = {"type": "proportional", "partial_rotary_factor": 0.25}
    out = apply_rope(x, torch.tensor([0, 10, 100, 1000, 10**5, 10**6]), layout=layout, scaling=scaling)
    pairs = [(i, i + 8) for i in range(8)] if layout == "half" else [(2 * i, 2 * i + 1) for i in range(8)]
    still = [d for a, b in pairs[2:] for d in (a, b)]  # pairs 2..7 have frequency 0
    assert torch.equal(out[..., still], x[..., still])
    assert not torch.equal(out[..., 1:, list(pairs[0])], x[..., 1:, list(pairs[0])])


# ---------------------------------------------------------------- attention factors
def m_ref(scale: float, mscale: float = 1.0) -> float:
    """YaRN's sqrt(1/t) = 0.1 ln(s) + 1 (Peng et al. 2023, eq. 22), DeepSeek's mscale on the log."""
    return 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0


@pytest.mark.parametrize(("factor", "mscale", "mscale_all_dim"),
                         [(40.0, 1.0, 1.0), (40.0, 0.707, 0.707), (16.0, 1.0, 0.5), (4.0, 0.0, 1.0),
                          (4.0, None, 1.0), (1.0, 1.0, 0.5)])
def test_yarn_attention_factor_with_mscale(factor: float, mscale: float | None, mscale_all_dim: float) -> None:
    scaling: dict[str, object] = {"type": "yarn", "factor": factor, "original_max_position_embeddings": 4096,
                                  "mscale_all_dim": mscale_all_dim}
    if mscale is not None:
        scaling["mscale"] = mscale
    expected = m_ref(factor, mscale) / m_ref(factor, mscale_all_dim) if mscale else m_ref(factor)
    assert math.isclose(rope_attention_scaling(scaling), expected, rel_tol=1e-15)
    assert rope_attention_scaling({**scaling, "attention_factor": 0.9}) == 0.9


@pytest.mark.parametrize(("factor", "original"), [(32.0, 4096), (1.0, 4096), (16.0, 8192)])
def test_longrope_attention_factor(factor: float, original: int) -> None:
    scaling = {"type": "longrope", "factor": factor, "original_max_position_embeddings": original,
               "short_factor": [1.0] * 4, "long_factor": [2.0] * 4}
    expected = 1.0 if factor <= 1 else math.sqrt(1 + math.log(factor) / math.log(original))
    assert math.isclose(rope_attention_scaling(scaling), expected, rel_tol=1e-15)
    assert rope_attention_scaling({**scaling, "attention_factor": 1.3}) == 1.3


@pytest.mark.parametrize("kind", ["linear", "ntk", "dynamic", "llama3", "proportional"])
def test_other_types_have_no_attention_factor(kind: str) -> None:
    scaling = {"linear": {"factor": 2.0}, "ntk": {"factor": 2.0},
               "dynamic": {"factor": 2.0, "original_max_position_embeddings": 64},
               "llama3": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                          "original_max_position_embeddings": 64},
               "proportional": {"partial_rotary_factor": 0.5}}[kind]
    assert rope_attention_scaling({"type": kind, **scaling}) == 1.0


# ---------------------------------------------------------------- LongRoPE
def test_longrope_switches_lists_at_the_original_length() -> None:
    short, long = [1.0, 1.5, 2.0, 3.0], [1.0, 4.0, 16.0, 40.0]
    scaling = {"type": "longrope", "factor": 8.0, "original_max_position_embeddings": 32,
               "short_factor": short, "long_factor": long}
    theta = ref_theta(8)
    for seq_len, chosen in ((None, short), (1, short), (32, short), (33, long), (256, long)):
        got = rope_inverse_frequencies(8, scaling=scaling, seq_len=seq_len)
        expected = torch.tensor([t / f for t, f in zip(theta, chosen, strict=True)], dtype=torch.float64)
        torch.testing.assert_close(got, expected, rtol=1e-15, atol=0)
    # apply_rope and the module pick the list from max(positions) + 1, and apply the attention factor
    x = torch.randn(40, 8, dtype=torch.float64)
    a = math.sqrt(1 + math.log(8.0) / math.log(32))
    for length, chosen in ((32, short), (40, long)):
        positions = list(range(length))
        expected = ref_apply(x[:length], [float(p) for p in positions],
                             [t / f for t, f in zip(theta, chosen, strict=True)], "half") * a
        torch.testing.assert_close(apply_rope(x[:length], scaling=scaling), expected, rtol=0, atol=1e-12)
        q, _ = RotaryEmbedding(8, scaling=scaling)(x[:length], x[:length])
        torch.testing.assert_close(q, expected, rtol=0, atol=1e-12)


# ---------------------------------------------------------------- casts (issue 10)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("cast", ["to", "method"])
def test_module_cast_to_half_precision_keeps_float64_angles(dtype: torch.dtype, cast: str) -> None:
    rotary = RotaryEmbedding(128)
    rotary = rotary.to(dtype) if cast == "to" else (rotary.half() if dtype == torch.float16 else rotary.bfloat16())
    assert rotary.inv_freq.dtype == torch.float64
    positions = [4096, 100_000]
    x = torch.randn(1, 2, 2, 128, dtype=torch.float64)
    q, _ = rotary(x.to(dtype), x.to(dtype), torch.tensor(positions))
    expected = ref_apply(x.to(dtype).double(), [float(p) for p in positions], ref_theta(128), "half")
    relative = float((q.double() - expected).norm() / expected.norm())
    assert relative < 2e-2


# ---------------------------------------------------------------- RotaryEmbedding cache bounds
def test_a_huge_position_does_not_grow_the_cache() -> None:
    rotary = RotaryEmbedding(8)
    x = torch.randn(1, 8, dtype=torch.float64)
    q, _ = rotary(x, x, torch.tensor([10**12]))
    assert rotary.cached_length == 0
    torch.testing.assert_close(q, ref_apply(x, [1e12], ref_theta(8), "half"), rtol=0, atol=1e-4)
    cos, _ = rotary.tables(torch.tensor([0, 10**12]))
    assert cos.shape == (2, 4) and rotary.cached_length == 0
    rotary.tables(torch.arange(300))
    assert rotary.cached_length == 300


# ---------------------------------------------------------------- fused complex path
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_interleaved_fast_path_on_strided_inputs(dtype: torch.dtype) -> None:
    base = torch.randn(2, 9, 3, 16, dtype=dtype)
    for x in (base.transpose(1, 2), base[:, 1:, :, :].transpose(1, 2), base[..., 2:10]):
        positions = list(range(x.shape[-2]))
        expected = ref_apply(x, [float(p) for p in positions], ref_theta(x.shape[-1]), "interleaved")
        tolerance = 1e-5 if dtype == torch.float32 else 1e-12
        torch.testing.assert_close(apply_rope(x, layout="interleaved").double(), expected, rtol=0, atol=tolerance)


# ---------------------------------------------------------------- GQA checkpoint conversion
@pytest.mark.parametrize("rotary_dim", [None, 8])
def test_layout_conversion_round_trips(rotary_dim: int | None) -> None:
    w = torch.randn(3 * 16, 20)
    there = convert_rope_layout(w, 16, source="interleaved", target="half", rotary_dim=rotary_dim)
    back = convert_rope_layout(there, 16, source="half", target="interleaved", rotary_dim=rotary_dim)
    assert torch.equal(back, w) and not torch.equal(there, w)
    assert torch.equal(convert_rope_layout(w, 16, source="half", target="half"), w)
    perm = layout_permutation(16, heads=3, rotary_dim=rotary_dim)
    assert sorted(perm.tolist()) == list(range(48))
    assert all(perm[h * 16:(h + 1) * 16].min() == h * 16 for h in range(3))  # rows stay in their head


@pytest.mark.parametrize("rotary_dim", [None, 8])
def test_converted_gqa_checkpoint_gives_identical_attention(rotary_dim: int | None) -> None:
    torch.manual_seed(0)
    hidden, heads, kv_heads, head_dim, seq = 32, 4, 2, 16, 11
    wq, wk, wv = torch.randn(heads * head_dim, hidden), torch.randn(kv_heads * head_dim, hidden), \
        torch.randn(kv_heads * head_dim, hidden)
    x = torch.randn(1, seq, hidden)

    def attend(wq: torch.Tensor, wk: torch.Tensor, layout: str) -> torch.Tensor:
        q = (x @ wq.T).view(1, seq, heads, head_dim).transpose(1, 2)
        k = (x @ wk.T).view(1, seq, kv_heads, head_dim).transpose(1, 2)
        v = (x @ wv.T).view(1, seq, kv_heads, head_dim).transpose(1, 2)
        q = apply_rope(q, layout=layout, rotary_dim=rotary_dim)
        k = apply_rope(k, layout=layout, rotary_dim=rotary_dim)
        k, v = k.repeat_interleave(heads // kv_heads, dim=1), v.repeat_interleave(heads // kv_heads, dim=1)
        return scaled_dot_product_attention(q, k, v, causal=True)[0]

    original = attend(wq, wk, "interleaved")
    converted = attend(convert_rope_layout(wq, head_dim, rotary_dim=rotary_dim),
                       convert_rope_layout(wk, head_dim, rotary_dim=rotary_dim), "half")
    torch.testing.assert_close(converted, original, rtol=1e-5, atol=1e-5)
    wrong = attend(wq, wk, "half")  # the same weights in the other layout: a different model
    assert float((wrong - original).abs().max()) > 1e-2


def test_alias_table_names_both_layouts() -> None:
    assert set(LAYOUT_ALIASES.values()) == set(LAYOUTS)
    assert LAYOUT_ALIASES["is_neox_style=True (vLLM)"] == "half"
    assert LAYOUT_ALIASES["interleaved=True (flash-attn)"] == "interleaved"


def test_engine_aliases_agree_with_the_engine_table() -> None:
    """An engine's spelling in the alias table names the layout its entry in posenc.engines gives it
    (the table that the engine tests run against MLX and ggml)."""
    from posenc.engines import layout_flags

    for layout in LAYOUTS:
        spellings = layout_flags(layout)
        for alias, engine in [("LLAMA_ROPE_TYPE_{} (llama.cpp)", "llama.cpp"), ("traditional={} (MLX)", "mlx-lm"),
                              ("is_neox_style={} (vLLM)", "vllm")]:
            flag = spellings[engine].split()[0].split("=")[-1].removeprefix("LLAMA_ROPE_TYPE_")
            assert LAYOUT_ALIASES[alias.format(flag)] == layout


# ---------------------------------------------------------------- from_config
def test_from_config_reads_the_old_and_the_new_names() -> None:
    old = {"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 131072,
           "rope_theta": 500000.0,
           "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                            "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}}
    new = {"model_type": "llama", "head_dim": 128, "max_position_embeddings": 131072,
           "rope_parameters": {**old["rope_scaling"], "rope_theta": 500000.0}}  # type: ignore[dict-item]
    assert from_config(old) == from_config(new)
    kwargs = from_config(old)
    assert kwargs["scaling"]["type"] == "llama3" and kwargs["base"] == 500000.0 and kwargs["dim"] == 128
    RotaryEmbedding(**kwargs)


def test_from_config_partial_rotary_names() -> None:
    for config in ({"model_type": "phi", "hidden_size": 2560, "num_attention_heads": 32, "partial_rotary_factor": 0.4},
                   {"model_type": "gpt_neox", "hidden_size": 2560, "num_attention_heads": 32, "rotary_pct": 0.4}):
        assert from_config(config)["rotary_dim"] == 32
    # GPT-NeoX's config class defaults to a quarter of the head (transformers' GPTNeoXConfig)
    assert from_config({"model_type": "gpt_neox", "hidden_size": 2560, "num_attention_heads": 32})["rotary_dim"] == 20
    gptj = from_config({"model_type": "gptj", "n_embd": 4096, "n_head": 16, "rotary_dim": 64})
    assert gptj["layout"] == "interleaved" and gptj["rotary_dim"] == 64


def test_from_config_per_layer_types() -> None:
    config = {"model_type": "gemma3_text", "head_dim": 256, "rope_parameters": {
        "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
        "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0}}}
    assert from_config(config, "sliding_attention")["base"] == 10000.0
    assert from_config(config, "full_attention")["scaling"] == {"type": "linear", "factor": 8.0}
    with pytest.raises(ValueError, match="pass layer_type, one of 'full_attention', 'sliding_attention'"):
        from_config(config)


@pytest.mark.parametrize(
    ("config", "error", "match"),
    [
        ({"head_dim": 64, "rope_scaling": {"rope_type": "linear", "factor": 2.0, "fator": 3}}, ValueError,
         "unknown key 'fator'"),
        ({"head_dim": 64, "rope_scaling": {"rope_type": "cubic"}}, ValueError, "rope_type must be one of"),
        ({"head_dim": 64, "rope_theta": 1e4, "rope_parameters": {"rope_type": "default", "rope_theta": 1e6}},
         ValueError, "config is inconsistent"),
        ({"head_dim": 64, "rope_scaling": {"rope_type": "linear", "factor": 2.0},
          "rope_parameters": {"rope_type": "linear", "factor": 4.0}}, ValueError, "inconsistent"),
        ({"hidden_size": 100, "num_attention_heads": 3}, ValueError, "must be a multiple"),
        # left out, the sizes are Llama's class defaults; given as null, the class refuses them
        ({"rope_theta": 1e4, "hidden_size": None}, ValueError, "needs 'head_dim'"),
        ({"model_type": "phi", "head_dim": 64, "partial_rotary_factor": 0.3}, ValueError,
         "rotated width must be a positive even"),
        ({"head_dim": 64, "rope_scaling": {"type": "yarn", "rope_type": "linear", "factor": 2.0}}, ValueError,
         "inconsistent"),
        ({"head_dim": 64, "rope_scaling": {"rope_type": "linear", "factor": 0.5}}, ValueError, "factor"),
        ({"head_dim": 64, "rope_scaling": "linear"}, TypeError, "must be a dict"),
        ([("head_dim", 64)], TypeError, "config must be a dict"),
        ({"head_dim": 64, "rope_theta": 10**400}, ValueError, "rope_theta must be (a )?finite"),
        ({"head_dim": 64, "rope_scaling": {"rope_type": "default", "mrope_section": [16, 24, 24]}}, ValueError,
         "unknown key 'mrope_section'"),  # accepted for Qwen2.5-VL (below), not for Llama
        ({"model_type": None, "head_dim": 64}, ValueError, "layout is needed: the config has no 'model_type'"),
        ({"model_type": "my_new_model", "head_dim": 64}, ValueError,
         "layout is needed: the pinned transformers has no model type 'my_new_model'"),
        ({"model_type": "bert", "hidden_size": 768, "num_attention_heads": 12}, ValueError,
         "model type 'bert' uses no rotary position embedding"),
        ({"model_type": "falcon", "hidden_size": 4544, "num_attention_heads": 71, "alibi": True}, ValueError,
         "uses ALiBi, not RoPE"),
        ({"model_type": 7, "head_dim": 64}, TypeError, r"model_type'\] must be a string"),
    ],
)
def test_from_config_bad_input(config: object, error: type[Exception], match: str) -> None:
    if isinstance(config, dict) and "model_type" not in config:
        config = {"model_type": "llama", **config}
    elif isinstance(config, dict) and config["model_type"] is None:
        config = {k: v for k, v in config.items() if k != "model_type"}
    with pytest.raises(error, match=match):
        from_config(config)  # type: ignore[arg-type]


def test_from_config_asks_for_the_layout_only_where_it_cannot_derive_it() -> None:
    bare = {"hidden_size": 4096, "num_attention_heads": 32}
    assert from_config(bare, layout="interleaved")["layout"] == "interleaved"
    assert from_config({"model_type": "llama", **bare}, layout="half")["layout"] == "half"
    with pytest.raises(ValueError, match="layout must be 'half' for model type 'llama'"):
        from_config({"model_type": "llama", **bare}, layout="interleaved")
    with pytest.raises(ValueError, match="layout must be one of"):
        from_config(bare, layout="neox")


def test_keys_transformers_ignores_for_a_model_type_are_accepted() -> None:
    # Qwen2.5-VL's config class reads "type": "mrope" as the default rope and ignores mrope_section
    config = {"model_type": "qwen2_5_vl", "hidden_size": 3584, "num_attention_heads": 28, "rope_theta": 1e6,
              "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]}}
    assert from_config(config) == {"dim": 128, "base": 1e6, "layout": "half", "scaling": None, "rotary_dim": None}
    assert any("M-RoPE" in note for note in read_config(config).notes)


def test_renamed_rope_types_follow_the_config_class() -> None:
    # Phi-3's config class reads the early "su" type as LongRoPE (transformers' Phi3Config)
    pairs = 48
    config = {"model_type": "phi3", "hidden_size": 3072, "num_attention_heads": 32, "max_position_embeddings": 131072,
              "original_max_position_embeddings": 4096,
              "rope_scaling": {"type": "su", "short_factor": [1.0] * pairs, "long_factor": [2.0] * pairs}}
    assert from_config(config)["scaling"]["type"] == "longrope"


# ---------------------------------------------------------------- bad input (issue 10)
@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: RotaryEmbedding(8)([1.0], torch.ones(2, 8)), TypeError, "q must be a torch.Tensor"),
        (lambda: RotaryEmbedding(8)(torch.ones(2, 8), None), TypeError, "k must be a torch.Tensor"),
        (lambda: RotaryEmbedding(8)(torch.ones(2, 7), torch.ones(2, 7)), ValueError, "last dimension of q"),
        (lambda: RotaryEmbedding(8)(torch.ones(2, 8, dtype=torch.complex64), torch.ones(2, 8)), TypeError, "q must"),
        (lambda: RotaryEmbedding(8)(torch.ones(2, 8), torch.ones(2, 8, dtype=torch.int32)), TypeError, "k must"),
        (lambda: RotaryEmbedding(8).tables([0, 1]), TypeError, "positions must be a torch.Tensor"),
        (lambda: RotaryEmbedding(8).tables(None), TypeError, "positions must be a torch.Tensor"),
        (lambda: RotaryEmbedding(8).tables(3.0), TypeError, "positions must be a torch.Tensor"),
        (lambda: RotaryEmbedding(8).tables(torch.tensor([0.0, math.inf])), ValueError, "positions must contain only"),
        (lambda: RotaryEmbedding(8).tables(torch.tensor([True])), TypeError, "positions must hold"),
        (lambda: RotaryEmbedding(8).tables(torch.tensor([1j])), TypeError, "positions must hold"),
        (lambda: RotaryEmbedding(8, rotary_dim=10), ValueError, "rotary_dim must be a positive even integer <= dim"),
        (lambda: RotaryEmbedding(8, rotary_dim=3), ValueError, "rotary_dim must be a positive even integer"),
        (lambda: RotaryEmbedding(8, base=10**400), ValueError, "base must be (a )?finite"),
        (lambda: RotaryEmbedding(10**400), ValueError, "dim must be a positive even integer <= "),
        (lambda: rope_inverse_frequencies(10**9), ValueError, "dim must be a positive even integer <= "),
        (lambda: rope_inverse_frequencies(8, seq_len=10**400), ValueError, "seq_len must be an integer <="),
        (lambda: rope_inverse_frequencies(8, scaling={"type": "linear", "factor": 10**400}), ValueError,
         r"scaling\['factor'\] must be (a )?finite"),
        (lambda: rope_inverse_frequencies(8, scaling={"type": "proportional", "partial_rotary_factor": 0.5},
                                          rotary_dim=4), ValueError, "rotary_dim must be None"),
        (lambda: rope_inverse_frequencies(8, scaling={"type": "proportional", "partial_rotary_factor": 1.5}),
         ValueError, r"partial_rotary_factor'\] must be <= 1.0"),
        (lambda: rope_inverse_frequencies(8, scaling={"type": "longrope", "factor": 4.0, "short_factor": [1.0] * 3,
                                                      "long_factor": [1.0] * 4,
                                                      "original_max_position_embeddings": 16}),
         ValueError, r"short_factor'\] must have 4 entries"),
        (lambda: rope_inverse_frequencies(8, scaling={"type": "longrope", "factor": 4.0, "short_factor": "1111",
                                                      "long_factor": [1.0] * 4,
                                                      "original_max_position_embeddings": 16}),
         TypeError, r"short_factor'\] must be a list"),
        (lambda: rope_attention_scaling({"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 16,
                                         "mscale": -1.0}), ValueError, r"mscale'\] must be >= 0"),
        (lambda: apply_rope(torch.ones(3, 8), rotary_dim=16), ValueError, "rotary_dim must be a positive even"),
        (lambda: apply_rope(torch.ones(3, 8), rotary_dim=True), TypeError, "rotary_dim must be a positive even"),
        (lambda: rope_long_term_decay(torch.tensor([1j]), 8), TypeError, "distances must hold"),
        (lambda: rope_long_term_decay(torch.tensor([True]), 8), TypeError, "distances must hold"),
        (lambda: layout_permutation(8, heads=0), ValueError, "heads must be an integer >= 1"),
        (lambda: convert_rope_layout(torch.ones(12, 3), 8), ValueError, "positive multiple of head_dim"),
        (lambda: convert_rope_layout(torch.ones(16, 3), 8, source="neox"), ValueError, "source must be one of"),
        (lambda: from_config({"head_dim": 64}, layer_type=3), TypeError, "layer_type must be a string"),
    ],
)
def test_bad_input(call: object, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        call()  # type: ignore[operator]


def test_relative_dot_helper_is_used() -> None:
    # the loop helper of test_rope.py agrees with the rotation on the rotated part (sanity of the import)
    v = [1.0, 0.0, 0.5, 0.5]
    assert math.isclose(dot(ref_rotate(v, 2.0, ref_theta(4), "half"), ref_rotate(v, 2.0, ref_theta(4), "half")),
                        dot(v, v), rel_tol=1e-12)


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: from_config({"model_type": "llama", "head_dim": 64, "rope_scaling": {"rope_type": ["yarn"]}}),
         TypeError, "rope_type must be a string"),
        (lambda: from_config({"model_type": "llama", "head_dim": 64, "max_position_embeddings": 10**400,
                              "rope_scaling": {"rope_type": "yarn", "original_max_position_embeddings": 4}}),
         ValueError, r"max_position_embeddings'\] must be an integer <="),
        (lambda: from_config({"model_type": "llama", "head_dim": 64, "max_position_embeddings": 64,
                              "rope_scaling": {"rope_type": "yarn", "original_max_position_embeddings": "4"}}),
         TypeError, "original_max_position_embeddings must be an integer"),
        (lambda: layout_permutation(65536, heads=2**20), ValueError, "heads \\* dim must be <="),
        (lambda: rope_long_term_decay(torch.zeros(10**4), 65536), ValueError, "distances has 10000 entries"),
    ],
)
def test_bad_input_sizes_and_types(call: object, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        call()  # type: ignore[operator]


@pytest.mark.parametrize("rotary_dim", [None, 4])
def test_blocked_half_rotation_equals_the_loop(monkeypatch: pytest.MonkeyPatch, rotary_dim: int | None) -> None:
    import posenc._rotary as rotary_module  # the rotation kernel shared by RoPE, xPos and N-D RoPE

    monkeypatch.setattr(rotary_module, "_BLOCK_BYTES", 64)  # many blocks of a few positions
    x = torch.randn(2, 3, 11, 8, dtype=torch.float64)
    positions = torch.tensor([[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10], [5, 9, 100, 3, 2, 1, 0, 70, 8, 9, 4000]])
    width = rotary_dim or 8
    out = apply_rope(x, positions, rotary_dim=rotary_dim)
    for b in range(2):
        expected = ref_apply(x[b, ..., :width], [float(p) for p in positions[b]], ref_theta(width), "half")
        torch.testing.assert_close(out[b, ..., :width], expected, rtol=0, atol=1e-12)
    q, _ = RotaryEmbedding(8, rotary_dim=rotary_dim)(x, x)
    torch.testing.assert_close(q, apply_rope(x, rotary_dim=rotary_dim), rtol=0, atol=0)
