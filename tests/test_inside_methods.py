"""FoX, stick-breaking, PaTH and PoPE: each against a plain float64 loop written from its paper's
equation (no code of the module under test), invariants (hypothesis), and argument checks.

References (written here from the equations, loops over indices):
* FoX (Lin et al., 2025): D_ij = sum_{l=j+1}^{i} log f_l added to q_i . k_j / sqrt(d).
* Stick-breaking (Tan et al., 2025): A_ij = sigmoid(z_ij) prod_{j<k<=i} (1 - sigmoid(z_ik)).
* PaTH (Yang et al., 2025): q_i^T H_i ... H_{j+1} k_j, H_s = I - beta_s w_s w_s^T, as matrices.
* PoPE (Gopalakrishnan et al., 2025): sum_c softplus(q_c) softplus(k_c) cos((s - t) theta_c + delta_c) / sqrt(d).
"""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc.alibi import alibi_slopes
from posenc.forgetting import ForgetGate, forgetting_bias
from posenc.path_attention import HouseholderPath, path_logits, path_logits_blockwise
from posenc.pope import PolarEmbedding, pope_frequencies
from posenc.stick_breaking import stick_breaking_weights

D64 = torch.float64


def ref_fox_logits(q: torch.Tensor, k: torch.Tensor, gates: torch.Tensor) -> list[list[float]]:
    """One head: q [n, d], k [n, d], gates [n]; -inf above the diagonal."""
    n, d = q.shape
    out = [[-math.inf] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1):
            dot = sum(float(q[i, c]) * float(k[j, c]) for c in range(d)) / math.sqrt(d)
            out[i][j] = dot + sum(math.log(float(gates[m])) for m in range(j + 1, i + 1))
    return out


def ref_stick_breaking(z: list[list[float]]) -> list[list[float]]:
    """A_ij over the keys j <= i (the causal mask includes the query's own token)."""
    sig = [[1 / (1 + math.exp(-v)) for v in row] for row in z]
    out = []
    for i, row in enumerate(sig):
        weights = []
        for j in range(len(row)):
            if j > i:
                weights.append(0.0)
                continue
            w = row[j]
            for m in range(j + 1, i + 1):
                w *= 1 - row[m]
            weights.append(w)
        out.append(weights)
    return out


def ref_path_logits(q: torch.Tensor, k: torch.Tensor, w: torch.Tensor, beta: torch.Tensor) -> torch.Tensor:
    """One head, as matrices: P_ij = H_i H_{i-1} ... H_{j+1}, logit q_i^T P_ij k_j."""
    n, d = q.shape
    eye = torch.eye(d, dtype=D64)
    h = [eye - float(beta[s]) * torch.outer(w[s], w[s]) for s in range(n)]
    out = torch.full((n, n), -math.inf, dtype=D64)
    for i in range(n):
        for j in range(i + 1):
            product = eye.clone()
            for s in range(i, j, -1):  # H_i first on the left
                product = product @ h[s]
            out[i, j] = q[i] @ product @ k[j]
    return out


def ref_pope(q: torch.Tensor, k: torch.Tensor, t: list[int], s: list[int], theta: torch.Tensor,
             delta: torch.Tensor) -> torch.Tensor:
    d = q.shape[-1]
    out = torch.zeros(len(t), len(s), dtype=D64)
    sp = torch.nn.functional.softplus
    for a, ta in enumerate(t):
        for b, sb in enumerate(s):
            out[a, b] = sum(float(sp(q[a, c])) * float(sp(k[b, c]))
                            * math.cos((sb - ta) * float(theta[c]) + float(delta[c])) for c in range(d)) / math.sqrt(d)
    return out


# --- FoX ---------------------------------------------------------------------------------------

def test_fox_scores_match_the_float64_reference() -> None:
    torch.manual_seed(0)
    gate = ForgetGate(6, num_heads=2, head_dim=4).double()
    x, q, k = torch.randn(1, 5, 6, dtype=D64), torch.randn(1, 2, 5, 4, dtype=D64), torch.randn(1, 2, 5, 4, dtype=D64)
    q2, keys = gate.join(x, q, k)
    got = gate.scores(q2, keys)
    gates = torch.sigmoid(x[0] @ gate.proj.weight.T + gate.proj.bias).T.detach()  # [heads, seq], the definition
    for h in range(2):
        want = torch.tensor(ref_fox_logits(q[0, h], k[0, h], gates[h]), dtype=D64)
        torch.testing.assert_close(got[0, h], want, rtol=1e-12, atol=1e-12)


def test_fox_bias_with_a_constant_gate_is_alibi() -> None:
    slopes = alibi_slopes(4, dtype=D64)
    bias = forgetting_bias(torch.exp(-slopes)[:, None].expand(4, 7))  # f = exp(-m)
    i, j = torch.arange(7)[:, None], torch.arange(7)[None]
    alibi = -slopes[:, None, None] * (i - j).abs()
    torch.testing.assert_close(bias.masked_fill(j > i, 0.0), alibi.masked_fill(j > i, 0.0), rtol=1e-12, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(0.01, 1.0), min_size=1, max_size=8))
def test_fox_bias_is_zero_on_the_diagonal_and_never_positive(gates: list[float]) -> None:
    bias = forgetting_bias(torch.tensor(gates, dtype=D64))
    assert bool((bias.diagonal() == 0).all())
    assert bool((bias <= 0).all())


def test_fox_gates_of_one_are_plain_causal_attention() -> None:
    bias = forgetting_bias(torch.ones(5))
    assert bool((bias.tril() == 0).all()) and bool(torch.isneginf(bias.triu(1)[0, 1:]).all())


@pytest.mark.parametrize("bad", [0.0, -0.1, 1.5, float("nan")])
def test_fox_gates_outside_the_interval_are_refused(bad: float) -> None:
    with pytest.raises(ValueError, match="gates"):
        forgetting_bias(torch.tensor([0.5, bad]))


# --- stick-breaking ----------------------------------------------------------------------------

def test_stick_breaking_matches_the_float64_reference() -> None:
    torch.manual_seed(1)
    z = torch.randn(6, 6, dtype=D64) * 2
    causal = torch.ones(6, 6, dtype=torch.bool).triu(1)
    got = stick_breaking_weights(z.masked_fill(causal, -math.inf))
    torch.testing.assert_close(got, torch.tensor(ref_stick_breaking(z.tolist()), dtype=D64), rtol=1e-12, atol=1e-14)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-30, 30), min_size=1, max_size=12))
def test_stick_breaking_weights_are_non_negative_and_sum_to_at_most_one(logits: list[float]) -> None:
    weights = stick_breaking_weights(torch.tensor(logits, dtype=D64))
    assert bool((weights >= 0).all())
    assert float(weights.sum()) <= 1 + 1e-12


def test_stick_breaking_stays_finite_where_the_product_underflows() -> None:
    z = torch.full((2000,), 5.0, dtype=torch.float32)  # each later key leaves sigmoid(-5) ~ 0.0067
    weights = stick_breaking_weights(z)
    assert bool(torch.isfinite(weights).all()) and float(weights[-1]) == pytest.approx(1 / (1 + math.exp(-5)))


# --- PaTH --------------------------------------------------------------------------------------

def _unit(x: torch.Tensor) -> torch.Tensor:
    return x / x.norm(dim=-1, keepdim=True)


def test_path_logits_match_the_float64_matrix_products() -> None:
    torch.manual_seed(2)
    n, d = 6, 4
    q, k = torch.randn(n, d, dtype=D64), torch.randn(n, d, dtype=D64)
    w, beta = _unit(torch.randn(n, d, dtype=D64)), 2 * torch.rand(n, dtype=D64)
    torch.testing.assert_close(path_logits(q, k, w, beta), ref_path_logits(q, k, w, beta), rtol=1e-12, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 12), st.integers(0, 11), st.integers(1, 6), st.integers(0, 10_000))
def test_path_blockwise_equals_the_direct_form(k_len: int, fewer: int, block: int, seed: int) -> None:
    generator = torch.Generator().manual_seed(seed)
    q_len = max(1, k_len - fewer)
    q, k = torch.randn(2, q_len, 3, generator=generator, dtype=D64), torch.randn(2, k_len, 3, generator=generator, dtype=D64)
    w = _unit(torch.randn(2, k_len, 3, generator=generator, dtype=D64))
    beta = 2 * torch.rand(2, k_len, generator=generator, dtype=D64)
    torch.testing.assert_close(path_logits_blockwise(q, k, w, beta, block=block), path_logits(q, k, w, beta),
                               rtol=1e-12, atol=1e-12)


def test_path_with_beta_zero_is_nope() -> None:
    torch.manual_seed(3)
    q, k = torch.randn(2, 5, 4, dtype=D64), torch.randn(2, 5, 4, dtype=D64)
    logits = path_logits(q, k, _unit(torch.randn(2, 5, 4, dtype=D64)), torch.zeros(2, 5, dtype=D64))
    causal = torch.ones(5, 5, dtype=torch.bool).triu(1)
    torch.testing.assert_close(logits, (q @ k.transpose(-1, -2)).masked_fill(causal, -math.inf))


def test_path_decoding_queries_see_the_same_logits_as_in_full() -> None:
    torch.manual_seed(4)
    q, k = torch.randn(7, 4, dtype=D64), torch.randn(7, 4, dtype=D64)
    w, beta = _unit(torch.randn(7, 4, dtype=D64)), 2 * torch.rand(7, dtype=D64)
    full = path_logits(q, k, w, beta)
    torch.testing.assert_close(path_logits(q[-2:], k, w, beta), full[-2:])


def test_path_refuses_a_non_unit_vector_a_bad_beta_and_queries_past_the_keys() -> None:
    q = k = torch.randn(3, 4)
    w, beta = _unit(torch.randn(3, 4)), torch.ones(3)
    with pytest.raises(ValueError, match="w must hold unit vectors"):
        path_logits(q, k, 2 * w, beta)
    with pytest.raises(ValueError, match="beta must lie in"):
        path_logits(q, k, w, torch.full((3,), 2.5))
    with pytest.raises(ValueError, match="q must have no more positions than k"):
        path_logits(torch.randn(4, 4), k, w, beta)


def test_fox_scores_refuse_queries_past_the_keys() -> None:
    gate = ForgetGate(8, num_heads=2, head_dim=4)
    with pytest.raises(ValueError, match="q must have no more positions than k"):
        gate.scores(torch.randn(1, 2, 4, 4), torch.randn(1, 2, 3, 5))


def test_path_module_transforms_are_unit_and_in_range() -> None:
    path = HouseholderPath(8, num_heads=2, head_dim=4)
    w, beta = path.transforms(torch.randn(3, 5, 8))
    torch.testing.assert_close(w.norm(dim=-1), torch.ones(3, 2, 5))
    assert bool(((beta > 0) & (beta < 2)).all())


# --- PoPE --------------------------------------------------------------------------------------

def test_pope_logits_match_the_float64_reference() -> None:
    torch.manual_seed(5)
    pope = PolarEmbedding(4, num_heads=1).double()
    with torch.no_grad():
        pope.delta.copy_(torch.tensor([[-0.5, -1.0, 0.0, -6.0]]))
    q, k = torch.randn(1, 3, 4, dtype=D64), torch.randn(1, 5, 4, dtype=D64)
    t, s = [4, 5, 6], [0, 1, 2, 3, 4]
    got = pope.rotate_queries(q, torch.tensor(t)) @ pope.rotate_keys(k, torch.tensor(s)).transpose(-1, -2)
    got = got / math.sqrt(2 * 4)  # the model's attention divides by sqrt(width), width 2d
    want = ref_pope(q[0], k[0], t, s, pope_frequencies(4), pope.delta[0].detach())
    torch.testing.assert_close(got[0], want, rtol=1e-12, atol=1e-12)


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10_000))
def test_pope_scores_depend_on_position_only_through_the_offset(shift: int) -> None:
    torch.manual_seed(6)
    pope = PolarEmbedding(6, num_heads=2).double()
    q, k = torch.randn(1, 2, 4, 6, dtype=D64), torch.randn(1, 2, 4, 6, dtype=D64)
    pos = torch.arange(4)
    base = pope.rotate_queries(q, pos) @ pope.rotate_keys(k, pos).transpose(-1, -2)
    moved = pope.rotate_queries(q, pos + shift) @ pope.rotate_keys(k, pos + shift).transpose(-1, -2)
    torch.testing.assert_close(base, moved, rtol=1e-9, atol=1e-9)


def test_pope_refuses_the_wrong_width_and_heads() -> None:
    pope = PolarEmbedding(4, num_heads=2)
    with pytest.raises(ValueError, match="q must have size 4"):
        pope.rotate_queries(torch.randn(1, 2, 3, 6), torch.arange(3))
    with pytest.raises(ValueError, match="k must have 2 heads"):
        pope.rotate_keys(torch.randn(1, 3, 3, 4), torch.arange(3))
