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
    ],
)
def test_bad_input_is_a_clear_error(call, error, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(error, match=message):
        call()
