"""CoPE: against a plain float64 loop written from Golovneva et al. (2024, arXiv 2405.18719),
eqs. for the gates g_ij = sigmoid(q_i . k_j), positions p_ij = sum_{t=j}^{i} g_it and the
interpolated embedding e[p]; token positions when every gate is 1; counting words; causality;
decoding with a cache; gradients; argument checks."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc import CoPE, contextual_positions


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def ref_cope(q: list[list[float]], logits: list[list[float]], emb: list[list[float]]) -> list[list[float | None]]:
    """z_ij = q_i . e[p_ij] for j <= i (None above the diagonal); emb[d][p] as in the module."""
    n_pos = len(emb[0])
    out: list[list[float | None]] = []
    for i, q_i in enumerate(q):
        row: list[float | None] = []
        for j in range(len(logits[i])):
            if j > i:
                row.append(None)
                continue
            p = min(sum(sigmoid(logits[i][t]) for t in range(j, i + 1)), n_pos - 1)
            low, high = math.floor(p), math.ceil(p)
            e = [(p - low) * emb[d][high] + (1 - p + low) * emb[d][low] for d in range(len(q_i))]
            row.append(sum(a * b for a, b in zip(q_i, e, strict=True)))
        out.append(row)
    return out


@pytest.mark.parametrize("max_position", [3, 16])
def test_matches_reference(max_position: int) -> None:
    torch.manual_seed(max_position)
    cope = CoPE(4, max_position=max_position).double()
    with torch.no_grad():
        cope.pos_emb.normal_()
    q, k = torch.randn(6, 4, dtype=torch.float64), torch.randn(6, 4, dtype=torch.float64)
    logits = q @ k.T / 2.0
    z = cope(q, logits)
    expected = ref_cope(q.tolist(), logits.tolist(), cope.pos_emb.tolist())
    for i in range(6):
        for j in range(i + 1):
            assert z[i, j].item() == pytest.approx(expected[i][j], rel=1e-10, abs=1e-12)


def test_positions_are_token_distances_when_every_gate_is_one() -> None:
    positions = contextual_positions(torch.ones(7, 7, dtype=torch.float64))
    for i in range(7):
        for j in range(7):
            assert positions[i, j].item() == (i - j + 1 if j <= i else 0)
    cope = CoPE(2, max_position=16).double()
    with torch.no_grad():
        cope.pos_emb.normal_()
    huge = torch.full((7, 7), 1e4, dtype=torch.float64)  # sigmoid(1e4) == 1 in float64
    assert torch.equal(cope.positions(huge), positions)
    q = torch.randn(7, 2, dtype=torch.float64)
    z = cope(q, huge).detach()
    emb = cope.pos_emb.detach()
    for i in range(7):  # integer positions: no interpolation, z = q_i . e[i - j + 1]
        for j in range(i + 1):
            assert z[i, j].item() == pytest.approx(float(q[i] @ emb[:, i - j + 1]), rel=1e-12)


def test_counting_words_instead_of_tokens() -> None:
    # Gates set by hand: 1 on the last token of each word, so positions count words.
    tokens = ["The", " ele", "phant", " ran", " a", "way", "."]
    word_end = torch.tensor([1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0], dtype=torch.float64)
    gates = word_end.expand(7, 7)
    positions = contextual_positions(gates)
    assert positions[-1].tolist() == [5.0, 4.0, 4.0, 3.0, 2.0, 2.0, 1.0]
    assert len(tokens) == 7 and positions[-1, 0].item() == 5.0  # 7 tokens back, 5 words back


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**16), q_len=st.integers(1, 6), extra=st.integers(0, 4))
def test_causal_and_cache_rows(seed: int, q_len: int, extra: int) -> None:
    torch.manual_seed(seed)
    k_len = q_len + extra
    cope = CoPE(4, max_position=32)
    with torch.no_grad():
        cope.pos_emb.normal_()
    q, k = torch.randn(2, k_len, 4), torch.randn(2, k_len, 4)
    logits = q @ k.transpose(-2, -1) / 2.0
    full = cope(q, logits)
    positions = cope.positions(logits)
    assert bool((positions.triu(1) == 0).all())                      # keys after the query: nothing
    future = logits.clone()
    future[..., torch.ones(k_len, k_len, dtype=torch.bool).triu(1)] = 123.0
    assert torch.equal(cope.positions(future), positions)             # their logits are ignored
    rows = cope(q[:, -q_len:], logits[:, -q_len:])                    # the last q_len queries (cache)
    assert torch.allclose(rows, full[:, -q_len:], atol=1e-6)


def test_masked_keys_are_not_counted() -> None:
    logits = torch.zeros(1, 4)
    logits[0, 1] = float("-inf")
    gates = torch.sigmoid(logits)[0].tolist()           # [0.5, 0, 0.5, 0.5]: the masked key is 0
    positions = contextual_positions(torch.sigmoid(logits))
    assert gates[1] == 0.0
    assert positions[0].tolist() == [sum(gates[j:]) for j in range(4)]


def test_gradients_reach_the_position_embeddings_and_the_inputs() -> None:
    torch.manual_seed(4)
    cope = CoPE(4, max_position=8)
    q = torch.randn(5, 4, requires_grad=True)
    k = torch.randn(5, 4, requires_grad=True)
    logits = q @ k.T / 2.0
    (logits + cope(q, logits)).tril().square().sum().backward()
    assert cope.pos_emb.grad is not None and bool(cope.pos_emb.grad.abs().sum() > 0)
    with torch.no_grad():
        cope.pos_emb.normal_()
    cope.zero_grad()
    q.grad = k.grad = None
    logits = q @ k.T / 2.0
    cope(q, logits).tril().square().sum().backward()  # through the gates and the interpolation
    assert q.grad is not None and k.grad is not None and bool(k.grad.abs().sum() > 0)


def test_mixed_dtypes_compute_in_the_wider_one() -> None:
    cope = CoPE(4, max_position=8).double()
    q = torch.randn(3, 4, dtype=torch.float64)
    assert cope(q, (q @ q.T).float()).dtype == torch.float64


def test_half_inputs_and_nan_carried() -> None:
    cope = CoPE(4, max_position=8).half()
    q = torch.randn(3, 4).half()
    out = cope(q, (q @ q.T).half())
    assert out.dtype == torch.float32 and bool(torch.isfinite(out).all())
    logits = torch.zeros(3, 3)
    logits[2, 0] = float("nan")
    out = CoPE(4, max_position=8)(torch.randn(3, 4), logits)
    assert bool(torch.isnan(out[2, 0]))


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="head_dim"):
        CoPE(0, max_position=4)
    with pytest.raises(TypeError, match="max_position"):
        CoPE(4, max_position=4.0)  # type: ignore[arg-type]
    cope = CoPE(4, max_position=4)
    with pytest.raises(ValueError, match="q must have size 4"):
        cope(torch.randn(3, 5), torch.randn(3, 3))
    with pytest.raises(ValueError, match="logits must have shape"):
        cope(torch.randn(3, 4), torch.randn(2, 3))
    with pytest.raises(ValueError, match="more queries than keys"):
        cope(torch.randn(3, 4), torch.randn(3, 2))
    with pytest.raises(TypeError, match="logits must be a floating-point"):
        cope(torch.randn(3, 4), torch.ones(3, 3, dtype=torch.long))
    with pytest.raises(TypeError, match="q must be a torch.Tensor"):
        cope([[1.0]], torch.randn(1, 1))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="gates"):
        contextual_positions(torch.ones(2, 2, dtype=torch.bool))
    with pytest.raises(ValueError, match="gates"):
        contextual_positions(torch.ones(2))
    with pytest.raises(ValueError, match="gates"):
        contextual_positions(torch.full((2, 2), float("nan")))
    with pytest.raises(ValueError, match="head_dim x max_position"):
        CoPE(2**12, max_position=2**13)
    with pytest.raises(ValueError, match="positions must contain only finite"):
        cope.interpolate(torch.randn(3, 4), torch.full((3, 3), float("nan")))
    with pytest.raises(ValueError, match="positions must have shape"):
        cope.interpolate(torch.randn(3, 4), torch.zeros(2, 3))


def test_interpolate_clamps_and_matches_forward() -> None:
    torch.manual_seed(5)
    cope = CoPE(4, max_position=6)
    with torch.no_grad():
        cope.pos_emb.normal_()
    q = torch.randn(5, 4)
    logits = q @ torch.randn(5, 4).T
    assert torch.allclose(cope.interpolate(q, cope.positions(logits)), cope(q, logits))
    far = cope.interpolate(q, torch.full((5, 5), 100.0))  # clamped to the last embedding
    assert torch.allclose(far, (q @ cope.pos_emb[:, -1]).detach()[:, None].expand(5, 5))
