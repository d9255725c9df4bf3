"""RoPE: the rotation, its two layouts, its properties, context-extension scaling, and argument checks.

Every expected value is computed here, independently of posenc: plain Python loops in float64
written from the papers' formulas (RoFormer; Chen et al. 2023; the NTK-aware and dynamic NTK
formulas; YaRN, Peng et al. 2023, with its reference code's ramp; Llama 3.1's frequency rule).
"""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc import RotaryEmbedding, SelfAttention, apply_rope, rope_inverse_frequencies
from posenc.rope import layout_permutation, rope_attention_scaling, rope_long_term_decay

LAYOUTS = ("half", "interleaved")


# ---------------------------------------------------------------- independent references (float64)
def ref_theta(dim: int, base: float = 10000.0) -> list[float]:
    return [base ** (-2 * i / dim) for i in range(dim // 2)]


def ref_pairs(dim: int, layout: str) -> list[tuple[int, int]]:
    if layout == "half":
        return [(i, i + dim // 2) for i in range(dim // 2)]
    return [(2 * i, 2 * i + 1) for i in range(dim // 2)]


def ref_rotate(vector: list[float], position: float, theta: list[float], layout: str) -> list[float]:
    """RoFormer eq. (14)-(15): pair (a, b) of frequency theta_i turned by position * theta_i."""
    out = list(vector)
    for i, (a, b) in enumerate(ref_pairs(len(vector), layout)):
        angle = position * theta[i]
        c, s = math.cos(angle), math.sin(angle)
        out[a] = vector[a] * c - vector[b] * s
        out[b] = vector[a] * s + vector[b] * c
    return out


def ref_apply(x: torch.Tensor, positions: list[float], theta: list[float], layout: str) -> torch.Tensor:
    """x [..., seq, dim] rotated row by row with the loop above, in float64."""
    flat = x.double().reshape(-1, x.shape[-2], x.shape[-1])
    out = torch.empty_like(flat)
    for n in range(flat.shape[0]):
        for t in range(flat.shape[1]):
            out[n, t] = torch.tensor(ref_rotate(flat[n, t].tolist(), positions[t], theta, layout), dtype=torch.float64)
    return out.reshape(x.shape)


def dot(u: list[float], v: list[float]) -> float:
    return sum(a * b for a, b in zip(u, v, strict=True))


# ---------------------------------------------------------------- the rotation itself
@pytest.mark.parametrize("layout", LAYOUTS)
def test_apply_rope_matches_loop_reference(layout: str) -> None:
    g = torch.Generator().manual_seed(3)
    x = torch.randn(2, 3, 7, 8, generator=g, dtype=torch.float64)
    expected = ref_apply(x, list(range(7)), ref_theta(8), layout)
    torch.testing.assert_close(apply_rope(x, layout=layout), expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_custom_positions_and_base(layout: str) -> None:
    x = torch.randn(1, 5, 6, dtype=torch.float64)
    positions = torch.tensor([3.0, 0.5, 17.0, -2.0, 1000.0], dtype=torch.float64)
    expected = ref_apply(x, positions.tolist(), ref_theta(6, 500.0), layout)
    torch.testing.assert_close(apply_rope(x, positions, base=500.0, layout=layout), expected, rtol=0, atol=1e-12)


def test_interleaved_is_the_complex_multiplication_form() -> None:
    """Meta's LLaMA code: adjacent pairs read as complex numbers, multiplied by exp(i * m * theta)."""
    g = torch.Generator().manual_seed(5)
    x = torch.randn(2, 3, 11, 16, generator=g, dtype=torch.float64)
    positions = torch.arange(11) * 913 + 7
    angles = torch.outer(positions.double(), torch.tensor(ref_theta(16, 500000.0), dtype=torch.float64))
    as_complex = torch.view_as_complex(x.reshape(2, 3, 11, 8, 2).contiguous())
    expected = torch.view_as_real(as_complex * torch.polar(torch.ones_like(angles), angles)).flatten(-2)
    torch.testing.assert_close(apply_rope(x, positions, base=500000.0, layout="interleaved"), expected,
                               rtol=0, atol=1e-12)


def test_position_zero_is_identity_and_input_is_untouched() -> None:
    x = torch.randn(2, 1, 8)
    before = x.clone()
    torch.testing.assert_close(apply_rope(x), x)
    assert torch.equal(x, before)


def test_the_two_layouts_differ_on_the_same_vector() -> None:
    x = torch.randn(1, 4, 8)
    assert not torch.allclose(apply_rope(x, layout="half")[:, 1:], apply_rope(x, layout="interleaved")[:, 1:])


@settings(max_examples=40, deadline=None)
@given(
    dim=st.sampled_from([2, 4, 8, 16]),
    m=st.integers(0, 5000),
    n=st.integers(0, 5000),
    shift=st.integers(-3000, 3000),
    layout=st.sampled_from(LAYOUTS),
    seed=st.integers(0, 2**16),
)
def test_score_depends_only_on_the_offset(dim: int, m: int, n: int, shift: int, layout: str, seed: int) -> None:
    g = torch.Generator().manual_seed(seed)
    q, k = torch.randn(2, 1, dim, generator=g, dtype=torch.float64)
    def score(a: int, b: int) -> float:
        return float((apply_rope(q, torch.tensor([a]), layout=layout) * apply_rope(k, torch.tensor([b]), layout=layout)).sum())
    # independent check of the same identity with the loop reference: <R_a q, R_b k> = <q, R_{b-a} k>
    theta = ref_theta(dim)
    expected = dot(q[0].tolist(), ref_rotate(k[0].tolist(), n - m, theta, layout))
    assert score(m, n) == pytest.approx(expected, abs=1e-9)
    assert score(m + shift, n + shift) == pytest.approx(expected, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(
    dim=st.sampled_from([2, 6, 16, 64]),
    position=st.floats(-1e5, 1e5, allow_nan=False),
    layout=st.sampled_from(LAYOUTS),
    seed=st.integers(0, 2**16),
)
def test_rotation_preserves_norms(dim: int, position: float, layout: str, seed: int) -> None:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(3, 1, dim, generator=g, dtype=torch.float64)
    rotated = apply_rope(x, torch.tensor([position], dtype=torch.float64), layout=layout)
    torch.testing.assert_close(rotated.norm(dim=-1), x.norm(dim=-1), rtol=1e-12, atol=0)


@pytest.mark.parametrize("dim", [2, 8, 64])
def test_layouts_agree_after_the_permutation(dim: int) -> None:
    perm = layout_permutation(dim)
    x = torch.randn(2, 3, 9, dim, dtype=torch.float64)
    half = apply_rope(x, layout="half")
    interleaved = apply_rope(x[..., perm], layout="interleaved")
    torch.testing.assert_close(interleaved, half[..., perm], rtol=0, atol=1e-12)
    torch.testing.assert_close(interleaved[..., perm.argsort()], half, rtol=0, atol=1e-12)
    # the permutation by hand: pair i of the half layout is (i, i + dim/2)
    assert perm.tolist() == [j for i in range(dim // 2) for j in (i, i + dim // 2)]


def test_permuted_weights_give_the_same_scores() -> None:
    """Converting W_q, W_k from one layout to the other needs the output rows permuted."""
    dim = 8
    w_q, w_k = torch.randn(2, dim, dim, dtype=torch.float64)
    x = torch.randn(6, dim, dtype=torch.float64)
    perm = layout_permutation(dim)
    def scores(wq: torch.Tensor, wk: torch.Tensor, layout: str) -> torch.Tensor:
        return apply_rope(x @ wq.T, layout=layout) @ apply_rope(x @ wk.T, layout=layout).T
    reference = scores(w_q, w_k, "half")
    torch.testing.assert_close(scores(w_q[perm], w_k[perm], "interleaved"), reference)
    assert not torch.allclose(scores(w_q, w_k, "interleaved"), reference)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_batch_dependent_positions(layout: str) -> None:
    x = torch.randn(3, 2, 5, 8, dtype=torch.float64)
    positions = torch.tensor([[0, 1, 2, 3, 4], [7, 8, 9, 10, 11], [4, 0, 9, 2, 100]])
    out = apply_rope(x, positions, layout=layout)
    for b in range(3):
        expected = ref_apply(x[b], positions[b].tolist(), ref_theta(8), layout)
        torch.testing.assert_close(out[b], expected, rtol=0, atol=1e-12)
    # a [1, seq] row broadcasts over the batch like a [seq] vector
    torch.testing.assert_close(apply_rope(x, positions[1:2], layout=layout), apply_rope(x, positions[1], layout=layout))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_half_precision_inputs_at_position_100000(dtype: torch.dtype, layout: str) -> None:
    positions = list(range(100_000, 100_008))
    x = torch.randn(2, 8, 64).to(dtype)
    out = apply_rope(x, torch.tensor(positions), layout=layout)
    assert out.dtype == dtype
    expected = ref_apply(x, [float(p) for p in positions], ref_theta(64), layout)
    # within a few rounding steps of the output dtype: the angles never went through it
    eps = torch.finfo(dtype).eps
    error = (out.double() - expected).abs().max().item()
    assert error <= 4 * eps * expected.abs().max().item()
    # what computing the angles in the input dtype would do: float16 cannot even hold 100000
    assert torch.isinf(torch.tensor(100_000.0).to(torch.float16))


def test_float32_is_computed_from_float64_angles() -> None:
    positions = torch.tensor([123_457, 999_999])
    x = torch.randn(2, 16)
    expected = ref_apply(x, [123_457.0, 999_999.0], ref_theta(16), "half")
    torch.testing.assert_close(apply_rope(x, positions).double(), expected, rtol=0, atol=2e-6)


# ---------------------------------------------------------------- RotaryEmbedding
@pytest.mark.parametrize("layout", LAYOUTS)
def test_module_equals_function_as_the_cache_grows(layout: str) -> None:
    rotary = RotaryEmbedding(16, base=500.0, layout=layout)
    assert rotary.cached_length == 0
    for seq in (3, 5, 40, 7):
        q, k = torch.randn(2, 2, 4, seq, 16)
        q_rot, k_rot = rotary(q, k)
        torch.testing.assert_close(q_rot, apply_rope(q, base=500.0, layout=layout), rtol=0, atol=0)
        torch.testing.assert_close(k_rot, apply_rope(k, base=500.0, layout=layout), rtol=0, atol=0)
    assert rotary.cached_length == 40
    positions = torch.tensor([[0, 90, 3], [5, 6, 7]])  # batch-dependent, beyond the cache
    q, k = torch.randn(2, 2, 4, 3, 16)
    q_rot, k_rot = rotary(q, k, positions)
    torch.testing.assert_close(q_rot, apply_rope(q, positions, base=500.0, layout=layout), rtol=0, atol=0)
    torch.testing.assert_close(k_rot, apply_rope(k, positions, base=500.0, layout=layout), rtol=0, atol=0)
    assert rotary.cached_length == 91


def test_module_with_fractional_negative_and_scaled_positions() -> None:
    for scaling in (None, {"type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 8},
                    {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 16}):
        rotary = RotaryEmbedding(8, scaling=scaling)
        for positions in (torch.tensor([0.5, 1.5, 2.5]), torch.tensor([-3, 0, 3]), torch.arange(20, 23)):
            q, k = torch.randn(2, 1, 3, 8, dtype=torch.float64)
            q_rot, k_rot = rotary(q, k, positions)
            torch.testing.assert_close(q_rot, apply_rope(q, positions, scaling=scaling), rtol=0, atol=1e-15)
            torch.testing.assert_close(k_rot, apply_rope(k, positions, scaling=scaling), rtol=0, atol=1e-15)


def test_module_decoding_queries_are_the_last_positions() -> None:
    rotary = RotaryEmbedding(8)
    q, k = torch.randn(1, 1, 2, 8), torch.randn(1, 1, 6, 8)
    q_rot, _ = rotary(q, k)
    torch.testing.assert_close(q_rot, apply_rope(q, torch.tensor([4, 5])))


def test_module_as_the_attention_hook_keeps_relative_scores() -> None:
    """Shifting every position by the same amount leaves the attention weights unchanged."""
    torch.manual_seed(0)
    layer, rotary = SelfAttention(16, num_heads=2), RotaryEmbedding(8)
    x = torch.randn(1, 5, 16)
    with torch.no_grad():
        _, weights = layer(x, rotary=rotary)
        q, k, _ = layer.split_heads(x)
        shifted = torch.arange(5) + 1000
        scores = apply_rope(q, shifted) @ apply_rope(k, shifted).transpose(-2, -1) / math.sqrt(8)
    torch.testing.assert_close(weights, scores.softmax(-1), rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------- scaling: frequencies
def test_no_scaling_is_the_roformer_frequencies() -> None:
    theta = rope_inverse_frequencies(128, base=500000.0)
    assert theta.dtype == torch.float64
    assert theta.tolist() == pytest.approx(ref_theta(128, 500000.0), rel=1e-15)


@pytest.mark.parametrize("factor", [1.0, 2.0, 8.0, 3.5])
def test_linear_scaling(factor: float) -> None:
    got = rope_inverse_frequencies(64, scaling={"type": "linear", "factor": factor})
    assert got.tolist() == pytest.approx([t / factor for t in ref_theta(64)], rel=1e-14)


@pytest.mark.parametrize(("dim", "factor"), [(64, 4.0), (128, 8.0), (4, 2.0)])
def test_ntk_scaling(dim: int, factor: float) -> None:
    got = rope_inverse_frequencies(dim, scaling={"type": "ntk", "factor": factor}).tolist()
    new_base = 10000.0 * factor ** (dim / (dim - 2))
    assert got == pytest.approx(ref_theta(dim, new_base), rel=1e-13)
    assert got[0] == 1.0                                                  # fastest pair untouched
    assert got[-1] == pytest.approx(ref_theta(dim)[-1] / factor, rel=1e-12)  # slowest pair: / factor


@pytest.mark.parametrize("seq_len", [None, 100, 4096, 4097, 8192, 20000])
def test_dynamic_ntk_scaling(seq_len: int | None) -> None:
    dim, factor, original = 128, 4.0, 4096
    scaling = {"type": "dynamic", "factor": factor, "original_max_position_embeddings": original}
    got = rope_inverse_frequencies(dim, scaling=scaling, seq_len=seq_len).tolist()
    if seq_len is None or seq_len <= original:
        expected = ref_theta(dim)
    else:
        base = 10000.0 * ((factor * seq_len / original) - (factor - 1)) ** (dim / (dim - 2))
        expected = ref_theta(dim, base)
    assert got == pytest.approx(expected, rel=1e-13)


def test_dynamic_grows_with_the_sequence_and_apply_rope_uses_max_position() -> None:
    scaling = {"type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 16}
    slowest = [rope_inverse_frequencies(8, scaling=scaling, seq_len=n)[-1].item() for n in (16, 32, 64)]
    assert slowest[0] > slowest[1] > slowest[2]
    x = torch.randn(1, 3, 8, dtype=torch.float64)
    positions = torch.tensor([0, 10, 40])  # seq_len = 41
    theta = rope_inverse_frequencies(8, scaling=scaling, seq_len=41).tolist()
    torch.testing.assert_close(apply_rope(x, positions, scaling=scaling), ref_apply(x, [0, 10, 40], theta, "half"))


def ref_yarn(dim: int, base: float, factor: float, original: int, beta_fast: float, beta_slow: float,
             truncate: bool = True) -> list[float]:
    """YaRN "NTK-by-parts" as in the paper's reference code: pairs making more than beta_fast turns
    over the original context keep theta, pairs making fewer than beta_slow get theta / factor, and
    in between the blend weight ramps linearly in the pair index between the two boundary indices,
    found by solving original / (2 pi base^(2i/dim)) = turns for i."""
    def boundary(turns: float) -> float:
        return dim * math.log(original / (2 * math.pi * turns)) / (2 * math.log(base))
    low, high = boundary(beta_fast), boundary(beta_slow)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if high == low:
        high += 0.001
    result = []
    for i, theta in enumerate(ref_theta(dim, base)):
        gamma = min(max((i - low) / (high - low), 0.0), 1.0)  # 0: keep, 1: interpolate
        result.append((1 - gamma) * theta + gamma * theta / factor)
    return result


@pytest.mark.parametrize(
    ("dim", "base", "factor", "original", "beta_fast", "beta_slow", "truncate"),
    [(128, 10000.0, 4.0, 4096, 32.0, 1.0, True), (64, 10000.0, 16.0, 2048, 32.0, 1.0, True),
     (128, 1e6, 4.0, 32768, 32.0, 1.0, True), (128, 10000.0, 8.0, 4096, 16.0, 2.0, False),
     (8, 10000.0, 4.0, 64, 32.0, 1.0, True)],
)
def test_yarn_scaling(dim: int, base: float, factor: float, original: int, beta_fast: float, beta_slow: float,
                      truncate: bool) -> None:
    scaling = {"type": "yarn", "factor": factor, "original_max_position_embeddings": original,
               "beta_fast": beta_fast, "beta_slow": beta_slow, "truncate": truncate}
    got = rope_inverse_frequencies(dim, base=base, scaling=scaling).tolist()
    assert got == pytest.approx(ref_yarn(dim, base, factor, original, beta_fast, beta_slow, truncate), rel=1e-13)
    # the paper's two ends, checked on the turns each pair makes over the original context
    for theta, new in zip(ref_theta(dim, base), got, strict=True):
        turns = original * theta / (2 * math.pi)
        if turns > beta_fast * base ** (2 / dim):  # a whole pair index inside the "keep" zone
            assert new == pytest.approx(theta, rel=1e-13)
        if turns < beta_slow / base ** (2 / dim):
            assert new == pytest.approx(theta / factor, rel=1e-13)


def test_yarn_defaults_and_attention_factor() -> None:
    scaling = {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096}
    explicit = dict(scaling, beta_fast=32, beta_slow=1)
    assert torch.equal(rope_inverse_frequencies(128, scaling=scaling), rope_inverse_frequencies(128, scaling=explicit))
    assert rope_attention_scaling(scaling) == pytest.approx(0.1 * math.log(4.0) + 1.0, rel=1e-15)
    assert rope_attention_scaling(dict(scaling, factor=1.0)) == 1.0
    assert rope_attention_scaling(dict(scaling, attention_factor=0.7)) == 0.7
    assert rope_attention_scaling(None) == 1.0
    assert rope_attention_scaling({"type": "linear", "factor": 4.0}) == 1.0
    # apply_rope multiplies q (and k) by the factor, so the logits grow by its square
    x = torch.randn(1, 6, 128, dtype=torch.float64)
    theta = rope_inverse_frequencies(128, scaling=scaling).tolist()
    expected = ref_apply(x, list(range(6)), theta, "half") * (0.1 * math.log(4.0) + 1.0)
    torch.testing.assert_close(apply_rope(x, scaling=scaling), expected)


def ref_llama3(dim: int, base: float, factor: float, low: float, high: float, original: int) -> list[float]:
    """Llama 3.1: wavelengths shorter than original/high kept, longer than original/low divided by
    factor, in between a blend whose weight is linear in original / wavelength."""
    result = []
    for theta in ref_theta(dim, base):
        wavelength = 2 * math.pi / theta
        if wavelength < original / high:
            result.append(theta)
        elif wavelength > original / low:
            result.append(theta / factor)
        else:
            smooth = (original / wavelength - low) / (high - low)
            result.append((1 - smooth) * theta / factor + smooth * theta)
    return result


@pytest.mark.parametrize(("dim", "base", "factor", "low", "high", "original"),
                         [(128, 500000.0, 8.0, 1.0, 4.0, 8192), (64, 10000.0, 4.0, 1.0, 4.0, 2048),
                          (128, 500000.0, 32.0, 1.0, 4.0, 8192), (16, 10000.0, 2.0, 2.0, 8.0, 512)])
def test_llama3_scaling(dim: int, base: float, factor: float, low: float, high: float, original: int) -> None:
    scaling = {"type": "llama3", "factor": factor, "low_freq_factor": low, "high_freq_factor": high,
               "original_max_position_embeddings": original}
    got = rope_inverse_frequencies(dim, base=base, scaling=scaling).tolist()
    assert got == pytest.approx(ref_llama3(dim, base, factor, low, high, original), rel=1e-13)


def test_static_types_ignore_seq_len() -> None:
    for scaling in ({"type": "linear", "factor": 2.0}, {"type": "ntk", "factor": 2.0}):
        assert torch.equal(rope_inverse_frequencies(16, scaling=scaling, seq_len=10**6),
                           rope_inverse_frequencies(16, scaling=scaling))


# ---------------------------------------------------------------- long-term decay
def test_long_term_decay_matches_the_papers_sum() -> None:
    dim = 32
    theta = ref_theta(dim)
    for r in (0, 1, 7, 100, 2500):
        sums = []
        for j in range(1, dim // 2 + 1):
            re = sum(math.cos(r * theta[i]) for i in range(j))
            im = sum(math.sin(r * theta[i]) for i in range(j))
            sums.append(math.hypot(re, im))
        expected = sum(sums) / len(sums)
        assert rope_long_term_decay(torch.tensor([r]), dim).item() == pytest.approx(expected, rel=1e-12)
    assert rope_long_term_decay(torch.tensor([0]), dim).item() == pytest.approx((dim // 2 + 1) / 2)


# ---------------------------------------------------------------- bad input
YARN = {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64}


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: rope_inverse_frequencies(7), ValueError, "dim must be a positive even integer, got 7"),
        (lambda: rope_inverse_frequencies(8.0), TypeError, "dim must be a positive even integer"),
        (lambda: rope_inverse_frequencies(8, base=-1.0), ValueError, "base must be > 0, got -1.0"),
        (lambda: rope_inverse_frequencies(8, base=1.0), ValueError, "base must be > 0 and != 1"),
        (lambda: rope_inverse_frequencies(8, scaling={"factor": 2.0}), ValueError, "missing the key 'type'"),
        (lambda: rope_inverse_frequencies(8, scaling={"type": "cubic", "factor": 2.0}), ValueError,
         r"scaling\['type'\] must be one of 'linear', 'ntk', 'dynamic', 'yarn', 'llama3', 'proportional', 'longrope', got 'cubic'"),
        (lambda: rope_inverse_frequencies(8, scaling={"type": "linear"}), ValueError, "missing the key 'factor'"),
        (lambda: rope_inverse_frequencies(8, scaling={"type": "dynamic", "factor": 2.0}), ValueError,
         "missing the key 'original_max_position_embeddings'"),
        (lambda: rope_inverse_frequencies(8, scaling={"type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                                      "original_max_position_embeddings": 64}),
         ValueError, "missing the key 'high_freq_factor'"),
        (lambda: rope_inverse_frequencies(8, scaling={"type": "linear", "factor": 2.0, "fatcor": 3}), ValueError,
         "unknown key 'fatcor'"),
        (lambda: rope_inverse_frequencies(8, scaling={"type": "linear", "factor": 0.5}), ValueError,
         r"scaling\['factor'\] must be >= 1.0, got 0.5"),
        (lambda: rope_inverse_frequencies(8, scaling={"type": "linear", "factor": "2"}), TypeError,
         r"scaling\['factor'\] must be a real number"),
        (lambda: rope_inverse_frequencies(8, scaling=dict(YARN, beta_fast=1.0, beta_slow=2.0)), ValueError,
         "beta_fast'] must be greater than"),
        (lambda: rope_inverse_frequencies(8, scaling=dict(YARN, original_max_position_embeddings=0)), ValueError,
         r"original_max_position_embeddings'\] must be an integer >= 1, got 0"),
        (lambda: rope_inverse_frequencies(8, scaling=dict(YARN, truncate="yes")), TypeError, "truncate"),
        (lambda: rope_inverse_frequencies(8, scaling={"type": "llama3", "factor": 8.0, "low_freq_factor": 4.0,
                                                      "high_freq_factor": 1.0, "original_max_position_embeddings": 64}),
         ValueError, "high_freq_factor'] must be greater than"),
        (lambda: rope_inverse_frequencies(2, scaling={"type": "ntk", "factor": 2.0}), ValueError, "dim must be >= 4"),
        (lambda: rope_inverse_frequencies(8, scaling=[("type", "linear")]), TypeError, "scaling must be a dict"),
        (lambda: rope_inverse_frequencies(8, seq_len=0), ValueError, "seq_len must be an integer >= 1, got 0"),
        (lambda: rope_attention_scaling({"type": "yarn", "factor": 2.0}), ValueError,
         "missing the key 'original_max_position_embeddings'"),
        (lambda: apply_rope([1.0, 2.0]), TypeError, "x must be a torch.Tensor, got list"),
        (lambda: apply_rope(torch.ones(4)), ValueError, "x must have at least 2 dimensions"),
        (lambda: apply_rope(torch.ones(3, 4, dtype=torch.int64)), TypeError, "x must be a floating-point tensor"),
        (lambda: apply_rope(torch.ones(3, 5)), ValueError, "the last dimension of x must be a positive even integer, got 5"),
        (lambda: apply_rope(torch.ones(3, 4), layout="neox"), ValueError, "layout must be one of 'half', 'interleaved'"),
        (lambda: apply_rope(torch.ones(3, 4), torch.arange(4)), ValueError, "positions must have 3 entries"),
        (lambda: apply_rope(torch.ones(3, 4), torch.zeros(1, 1, 3)), ValueError, "positions must have 1 or 2 dimensions"),
        (lambda: apply_rope(torch.ones(2, 3, 4), torch.zeros(3, 3)), ValueError, "positions must have size 2"),
        (lambda: apply_rope(torch.ones(3, 4), torch.zeros(1, 3)), ValueError, "need x with a batch dimension"),
        (lambda: apply_rope(torch.ones(3, 4), torch.tensor([0.0, float("nan"), 1.0])), ValueError, "finite"),
        (lambda: apply_rope(torch.ones(3, 4), torch.tensor([True, False, True])), TypeError, "positions must hold"),
        (lambda: RotaryEmbedding(5), ValueError, "dim must be a positive even integer, got 5"),
        (lambda: RotaryEmbedding(8, layout="adjacent"), ValueError, "layout must be one of"),
        (lambda: RotaryEmbedding(8, scaling={"type": "yarn"}), ValueError, "missing the key 'factor'"),
        (lambda: RotaryEmbedding(8)(torch.ones(1, 3, 6), torch.ones(1, 3, 6)), ValueError,
         "q must have size 8 in its last dimension"),
        (lambda: RotaryEmbedding(8)(torch.ones(1, 4, 8), torch.ones(1, 3, 8)), ValueError,
         "q must not be longer than k"),
        (lambda: RotaryEmbedding(8)(torch.ones(1, 3, 8), torch.ones(1, 3, 8), torch.arange(4)), ValueError,
         "positions must have 3 entries"),
        (lambda: layout_permutation(3), ValueError, "dim must be a positive even integer, got 3"),
        (lambda: rope_long_term_decay(torch.zeros(2, 2), 8), ValueError, "distances must have 1 dimensions"),
        (lambda: rope_long_term_decay(torch.zeros(2), 9), ValueError, "dim must be a positive even integer, got 9"),
    ],
)
def test_bad_input(call: object, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        call()  # type: ignore[operator]


@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_apply_rope_is_differentiable(layout: str) -> None:
    # Training needs gradients through the rotation: check them against finite differences.
    x = torch.randn(2, 3, 5, 8, dtype=torch.float64, requires_grad=True)
    positions = torch.tensor([0.0, 1.0, 4.0, 9.0, 30.0])
    assert torch.autograd.gradcheck(lambda t: apply_rope(t, positions, layout=layout), (x,))
    rotary = RotaryEmbedding(8, layout=layout)
    q, k = x, x.detach().clone().requires_grad_()
    assert torch.autograd.gradcheck(lambda a, b: rotary(a, b, positions), (q, k))


# ---------------------------------------------------------------- the rotation interface


@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_rotate_queries_and_keys_are_the_pair_call(layout: str) -> None:
    torch.manual_seed(0)
    rotary = RotaryEmbedding(8, layout=layout, rotary_dim=6)
    q, k, positions = torch.randn(2, 3, 5, 8), torch.randn(2, 3, 5, 8), torch.tensor([[0, 4, 9, 10, 70]] * 2)
    q_rot, k_rot = rotary(q, k, positions)
    assert torch.equal(rotary.rotate_queries(q, positions), q_rot)
    assert torch.equal(rotary.rotate_keys(k, positions), k_rot)
    torch.testing.assert_close(q_rot, apply_rope(q, positions, layout=layout, rotary_dim=6), rtol=0, atol=0)


def test_positions_changed_in_place_are_looked_up_again() -> None:
    # The module caches its table by position, not by positions tensor: a tensor changed in place
    # between two calls gets the table of its new positions.
    rotary, q = RotaryEmbedding(8), torch.randn(1, 4, 8)
    positions = torch.tensor([0, 1, 2, 3])
    first = rotary.rotate_queries(q, positions)
    positions.add_(100)
    torch.testing.assert_close(rotary.rotate_queries(q, positions), apply_rope(q, positions), rtol=0, atol=0)
    assert not torch.allclose(rotary.rotate_queries(q, positions), first)
