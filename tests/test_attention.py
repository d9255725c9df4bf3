"""Self-attention: the properties chapter 1 relies on, and its argument checks."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc import SelfAttention, scaled_dot_product_attention


def reference_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Loop-by-loop float64 softmax attention, written independently of posenc."""
    q, k, v = q.double(), k.double(), v.double()
    out = torch.empty(q.shape[0], v.shape[1], dtype=torch.float64)
    for i in range(q.shape[0]):
        scores = [float(q[i] @ k[j]) / math.sqrt(q.shape[1]) for j in range(k.shape[0])]
        top = max(scores)
        exps = [math.exp(s - top) for s in scores]
        weights = [e / sum(exps) for e in exps]
        out[i] = sum(w * v[j] for j, w in enumerate(weights))
    return out


def test_matches_reference() -> None:
    g = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(4, 6, generator=g) for _ in range(3))
    out, weights = scaled_dot_product_attention(q, k, v)
    torch.testing.assert_close(out.double(), reference_attention(q, k, v), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(weights.sum(-1), torch.ones(4))


def test_causal_mask_blocks_the_future() -> None:
    q = k = v = torch.randn(5, 4)
    _, weights = scaled_dot_product_attention(q, k, v, causal=True)
    assert torch.all(weights.triu(1) == 0)
    assert weights[0, 0] == 1


def test_bias_is_added_to_logits() -> None:
    q = k = torch.zeros(3, 2)
    v = torch.eye(3)
    bias = torch.tensor([0.0, math.log(2.0), math.log(3.0)]).expand(3, 3)
    _, weights = scaled_dot_product_attention(q, k, v, bias=bias)
    torch.testing.assert_close(weights[0], torch.tensor([1 / 6, 2 / 6, 3 / 6]))


@settings(max_examples=25, deadline=None)
@given(seq=st.integers(2, 7), heads=st.sampled_from([1, 2, 4]), seed=st.integers(0, 2**16))
def test_self_attention_is_permutation_equivariant(seq: int, heads: int, seed: int) -> None:
    torch.manual_seed(seed)
    layer = SelfAttention(8, heads)
    x = torch.randn(2, seq, 8)
    order = torch.randperm(seq)
    with torch.no_grad():
        out, _ = layer(x)
        permuted, _ = layer(x[:, order])
    torch.testing.assert_close(permuted, out[:, order], rtol=1e-5, atol=1e-5)


QKV = (torch.zeros(2, 3, 4), torch.zeros(2, 3, 4), torch.zeros(2, 3, 4))


def reference_masked_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Softmax over the allowed keys only, float64 loops; a query with none gets zeros."""
    out = torch.zeros(q.shape[0], v.shape[1], dtype=torch.float64)
    for i in range(q.shape[0]):
        allowed = [j for j in range(k.shape[0]) if mask[i, j]]
        if not allowed:
            continue
        scores = {j: float(q[i].double() @ k[j].double()) / math.sqrt(q.shape[1]) for j in allowed}
        top = max(scores.values())
        total = sum(math.exp(s - top) for s in scores.values())
        out[i] = sum(math.exp(scores[j] - top) / total * v[j].double() for j in allowed)
    return out


def test_mask_keeps_only_the_allowed_keys_and_a_blind_query_gets_zeros() -> None:
    g = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(4, 6, generator=g) for _ in range(3))
    mask = torch.tensor([[1, 0, 1, 0], [0, 0, 0, 0], [1, 1, 1, 1], [0, 0, 0, 1]], dtype=torch.bool)
    out, weights = scaled_dot_product_attention(q, k, v, mask=mask)
    torch.testing.assert_close(out.double(), reference_masked_attention(q, k, v, mask), rtol=1e-5, atol=1e-6)
    assert torch.equal(weights[1], torch.zeros(4)) and bool(torch.isfinite(out).all())
    torch.testing.assert_close(weights.sum(-1), torch.tensor([1.0, 0.0, 1.0, 1.0]))
    # PyTorch's own kernel defines a fully masked row the same way (zeros, not NaN)
    expected = torch.nn.functional.scaled_dot_product_attention(q[None], k[None], v[None], attn_mask=mask)
    torch.testing.assert_close(out, expected[0], rtol=1e-5, atol=1e-6)


def test_all_minus_infinity_bias_row_is_zeros_not_nan() -> None:
    q = k = v = torch.ones(2, 2)
    bias = torch.tensor([[0.0, 0.0], [float("-inf"), float("-inf")]])
    out, weights = scaled_dot_product_attention(q, k, v, bias=bias)
    assert torch.equal(out[1], torch.zeros(2)) and torch.equal(weights[1], torch.zeros(2))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_inputs_are_computed_in_float32(dtype: torch.dtype) -> None:
    g = torch.Generator().manual_seed(4)
    q, k, v = (torch.randn(5, 8, generator=g) for _ in range(3))
    out, weights = scaled_dot_product_attention(q.to(dtype), k.to(dtype), v.to(dtype), causal=True)
    assert out.dtype == dtype and weights.dtype == dtype
    reference, _ = scaled_dot_product_attention(q.to(dtype).float(), k.to(dtype).float(), v.to(dtype).float(), causal=True)
    torch.testing.assert_close(out.float(), reference, rtol=1e-2, atol=1e-2)


def test_kv_hook_lets_queries_see_extra_keys() -> None:
    layer = SelfAttention(8, 2)
    x = torch.randn(1, 3, 8)
    extra_k, extra_v = torch.randn(1, 2, 4, 4), torch.randn(1, 2, 4, 4)

    def hook(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return q, torch.cat([extra_k, k], dim=-2), torch.cat([extra_v, v], dim=-2)

    with torch.no_grad():
        out, weights = layer(x, kv_hook=hook, causal=True)
        q, k, v = layer.split_heads(x)
        expected, _ = scaled_dot_product_attention(q, torch.cat([extra_k, k], -2), torch.cat([extra_v, v], -2), causal=True)
    assert weights.shape == (1, 2, 3, 7)
    torch.testing.assert_close(out, layer.out(expected.transpose(1, 2).reshape(1, 3, 8)))


def reference_cope_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, emb: torch.Tensor) -> torch.Tensor:
    """Causal CoPE attention of one head, Golovneva et al. (2024) section 3, as float64 loops.

    As in the authors' code, the gates use the scaled logits and q . e[p] is added unscaled.

    Gates g_ij = sigmoid(q_i . k_j / sqrt(d)); p_ij = sum_{t=j}^{i} g_it; e[p] interpolated
    linearly between e[floor p] and e[ceil p]; logit_ij = q_i . k_j / sqrt(d) + q_i . e[p_ij].
    """
    q, k, v, emb = q.double(), k.double(), v.double(), emb.double()
    d, n = q.shape[1], q.shape[0]
    out = torch.empty(n, v.shape[1], dtype=torch.float64)
    for i in range(n):
        raw = [float(q[i] @ k[j]) / math.sqrt(d) for j in range(i + 1)]
        gates = [1 / (1 + math.exp(-r)) for r in raw]
        logits = []
        for j in range(i + 1):
            p = min(sum(gates[j:i + 1]), emb.shape[1] - 1)
            low, high = math.floor(p), math.ceil(p)
            e = emb[:, low] + (p - low) * (emb[:, high] - emb[:, low])
            logits.append(raw[j] + float(q[i] @ e))
        top = max(logits)
        exps = [math.exp(s - top) for s in logits]
        out[i] = sum(x / sum(exps) * v[j] for j, x in enumerate(exps))
    return out


def test_logit_hook_carries_cope_like_the_paper() -> None:
    from posenc import CoPE

    torch.manual_seed(0)
    cope = CoPE(4, max_position=5)  # positions past 4 are clamped: a 7-token input reaches them
    with torch.no_grad():
        cope.pos_emb.normal_()
    q, k = torch.randn(7, 4, dtype=torch.float64), torch.randn(7, 4, dtype=torch.float64)
    v = torch.randn(7, 3, dtype=torch.float64)
    with torch.no_grad():
        out, _ = scaled_dot_product_attention(q, k, v, causal=True, logit_hook=cope)
        masked, _ = scaled_dot_product_attention(q, k, v, mask=torch.ones(7, 7, dtype=torch.bool).tril(),
                                                 logit_hook=cope)
    torch.testing.assert_close(out, reference_cope_attention(q, k, v, cope.pos_emb.detach()), rtol=0, atol=1e-10)
    torch.testing.assert_close(masked, out, rtol=0, atol=1e-12)  # a causal mask= gives gate 0 to the future


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: SelfAttention(0), ValueError, "dim must be an integer >= 1"),
        (lambda: SelfAttention(8, 3), ValueError, "divisible by num_heads"),
        (lambda: SelfAttention(8.0), TypeError, "dim must be an integer"),  # type: ignore[arg-type]
        (lambda: SelfAttention(8)(torch.zeros(2, 8)), ValueError, "x must have 3 dimensions"),
        (lambda: SelfAttention(8)(torch.zeros(1, 2, 6)), ValueError, "size 8 in dimension -1"),
        (lambda: SelfAttention(8)(torch.zeros(1, 2, 8, dtype=torch.long)), TypeError, "floating-point"),
        (lambda: scaled_dot_product_attention(torch.zeros(2, 3), torch.zeros(2, 4), torch.zeros(2, 3)),
         ValueError, "k must have size 3"),
        (lambda: scaled_dot_product_attention(torch.zeros(2, 3), torch.zeros(2, 3), torch.zeros(5, 3)),
         ValueError, "v must have size 2"),
        (lambda: scaled_dot_product_attention(torch.zeros(3, 2), torch.zeros(2, 2), torch.zeros(2, 2), causal=True),
         ValueError, "q_len <= k_len"),
        (lambda: scaled_dot_product_attention([1.0], torch.zeros(2, 2), torch.zeros(2, 2)), TypeError, "q must be a torch.Tensor"),  # type: ignore[arg-type]
        (lambda: scaled_dot_product_attention(*QKV, causal="no"), TypeError, "causal must be a bool.*'no'"),  # type: ignore[arg-type]
        (lambda: scaled_dot_product_attention(*QKV, causal=1), TypeError, "causal must be a bool"),  # type: ignore[arg-type]
        (lambda: SelfAttention(8)(torch.zeros(1, 2, 8), causal="yes"), TypeError, "causal must be a bool"),  # type: ignore[arg-type]
        (lambda: scaled_dot_product_attention(*QKV, bias=torch.ones(3, 3, dtype=torch.bool)), TypeError,
         "bias .* boolean tensor.*pass it as mask="),
        (lambda: scaled_dot_product_attention(*QKV, bias=torch.ones(3, 4)), ValueError,
         r"bias must broadcast to the logits' shape \(2, 3, 3\).*got shape \(3, 4\)"),
        (lambda: scaled_dot_product_attention(*QKV, bias=torch.ones(5, 3, 3)), ValueError, "bias must broadcast"),
        (lambda: scaled_dot_product_attention(*QKV, bias=torch.ones(3, 3, dtype=torch.long)), TypeError, "bias must be a real floating-point"),
        (lambda: scaled_dot_product_attention(*QKV, bias=torch.ones(3, 3, dtype=torch.complex64)), TypeError, "bias must be a real floating-point"),
        (lambda: scaled_dot_product_attention(*QKV, mask=torch.ones(3, 3)), TypeError, "mask must be a boolean tensor"),
        (lambda: scaled_dot_product_attention(*QKV, mask=torch.ones(2, 3, dtype=torch.bool)), ValueError, "mask must broadcast"),
        (lambda: scaled_dot_product_attention(torch.zeros(2, 3, 4), torch.zeros(1, 3, 4), torch.zeros(1, 3, 4)),
         ValueError, "k must have the leading .* dimensions of q"),
        (lambda: scaled_dot_product_attention(torch.zeros(3, 4), torch.zeros(3, 4, dtype=torch.float64), torch.zeros(3, 4)),
         TypeError, r"k must have the dtype of q \(torch.float32\)"),
        (lambda: scaled_dot_product_attention(torch.zeros(3, 4, dtype=torch.complex64), torch.zeros(3, 4), torch.zeros(3, 4)),
         TypeError, "q must be a floating-point tensor"),
        (lambda: SelfAttention(8)(torch.zeros(1, 2, 8), rotary="rope"), TypeError, "rotary must be callable"),  # type: ignore[arg-type]
        (lambda: SelfAttention(8)(torch.zeros(1, 2, 8), logit_hook="cope"), TypeError, "logit_hook must be callable"),  # type: ignore[arg-type]
        (lambda: scaled_dot_product_attention(*QKV, logit_hook=1), TypeError, "logit_hook must be callable"),  # type: ignore[arg-type]
        (lambda: scaled_dot_product_attention(*QKV, logit_hook=lambda q, s: torch.ones(4, 4)), ValueError,
         "the term returned by logit_hook must broadcast"),
        (lambda: scaled_dot_product_attention(*QKV, logit_hook=lambda q, s: 1.0), TypeError,
         "logit_hook must return a real floating-point tensor, got float"),
        (lambda: scaled_dot_product_attention(*QKV, logit_hook=lambda q, s: torch.ones(3, 3, dtype=torch.long)),
         TypeError, "logit_hook must return a real floating-point tensor, got Tensor of dtype torch.int64"),
    ],
)
def test_bad_input_is_a_clear_error(call, error, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(error, match=message):
        call()


# ---------------------------------------------------------------- empty sequences (issue 22)


@pytest.mark.parametrize(("q_len", "k_len"), [(0, 3), (3, 0), (0, 0)])
@pytest.mark.parametrize("causal", [False, True])
def test_empty_sequences_agree_with_torch(q_len: int, k_len: int, causal: bool) -> None:
    # torch's own scaled_dot_product_attention: no query gives an empty output, no key a zero one
    g = torch.Generator().manual_seed(0)
    q, k, v = torch.randn(1, 2, q_len, 4, generator=g), torch.randn(1, 2, k_len, 4, generator=g), torch.randn(
        1, 2, k_len, 3, generator=g)
    if causal and q_len > k_len:  # the queries are the last q_len keys: there are none to be
        with pytest.raises(ValueError, match="causal attention needs q_len <= k_len"):
            scaled_dot_product_attention(q, k, v, causal=True)
        return
    out, weights = scaled_dot_product_attention(q, k, v, causal=causal)
    expected = torch.nn.functional.scaled_dot_product_attention(q, k, v)
    assert out.shape == expected.shape == (1, 2, q_len, 3) and weights.shape == (1, 2, q_len, k_len)
    assert torch.equal(out, expected) and torch.equal(out, torch.zeros_like(out))


@pytest.mark.parametrize("causal", [False, True])
def test_self_attention_of_an_empty_sequence_is_empty(causal: bool) -> None:
    from posenc import ShawRelativeAttention

    x = torch.randn(2, 0, 8)
    for layer in (SelfAttention(8, 2), ShawRelativeAttention(8, 2, max_distance=2)):
        out, weights = layer(x, causal=causal)
        assert out.shape == (2, 0, 8) and weights.shape == (2, 2, 0, 0)
