"""KERPLE: both kernels against plain float64 loops written from Chi et al. (2022, arXiv
2205.09921), the positivity constraints of the paper, ALiBi as the power kernel with r2 = 1,
gradients, and argument checks."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc import KerpleBias, alibi_bias, alibi_slopes
from posenc.kerple import EPS


def ref_kerple(kind: str, r1: list[float], r2: list[float], q_positions: list[float],
               k_positions: list[float]) -> list[list[list[float]]]:
    out = []
    for a, b in zip(r1, r2, strict=True):
        rows = []
        for i in q_positions:
            row = []
            for j in k_positions:
                d = abs(i - j)
                row.append(-a * math.log(1 + b * d) if kind == "log" else -a * d**b)
            rows.append(row)
        out.append(rows)
    return out


@pytest.mark.parametrize("kind", ["log", "power"])
def test_matches_reference(kind: str) -> None:
    torch.manual_seed(0)
    kerple = KerpleBias(3, kind=kind).double()
    r1, r2 = kerple.r1.tolist(), kerple.r2.tolist()
    expected = torch.tensor(ref_kerple(kind, r1, r2, list(range(5)), list(range(7))), dtype=torch.float64)
    assert torch.allclose(kerple(5, 7), expected, rtol=1e-12, atol=1e-12)
    q_pos, k_pos = torch.tensor([3.0, 10.0]), torch.tensor([0.0, 2.5, 10.0, 40.0])
    expected = torch.tensor(ref_kerple(kind, r1, r2, q_pos.tolist(), k_pos.tolist()), dtype=torch.float64)
    assert torch.allclose(kerple.bias(q_pos, k_pos), expected, rtol=1e-12, atol=1e-12)


def test_initialisation_ranges_and_constraints() -> None:
    torch.manual_seed(1)
    log, power = KerpleBias(64, kind="log").double(), KerpleBias(64, kind="power").double()
    assert log.r1.min().item() >= EPS and log.r1.max().item() <= 2 and log.r2.max().item() <= 1
    assert power.r1.max().item() <= 1 and power.r2.max().item() <= 2 and power.r2.min().item() >= EPS
    with torch.no_grad():
        power.r1.fill_(-3.0)
        power.r2.fill_(5.0)
        log.r2.fill_(5.0)
        log.r1[0] = 0.0
    power(2)
    log(2)
    assert power.r1.tolist() == [EPS] * 64 and power.r2.tolist() == [2.0] * 64  # 0 < r2 <= 2
    assert log.r2.tolist() == [5.0] * 64 and log.r1[0].item() == EPS            # log: no upper bound


def test_alibi_is_the_power_kernel_with_fixed_parameters() -> None:
    for heads in (1, 4, 8, 12):
        kerple = KerpleBias(heads, kind="power", eps=2.0**-8).double()
        with torch.no_grad():
            kerple.r1.copy_(alibi_slopes(heads, dtype=torch.float64))
            kerple.r2.fill_(1.0)
        assert torch.equal(kerple(9, 11), alibi_bias(heads, 9, 11, dtype=torch.float64))


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**16), kind=st.sampled_from(["log", "power"]), length=st.integers(1, 30))
def test_zero_on_the_diagonal_and_non_increasing_with_distance(seed: int, kind: str, length: int) -> None:
    torch.manual_seed(seed)
    bias = KerpleBias(4, kind=kind).double()(length)
    assert bool((bias.diagonal(dim1=1, dim2=2) == 0).all()) and bool((bias <= 0).all())
    assert all(math.copysign(1.0, x) > 0 for x in bias.diagonal(dim1=1, dim2=2).flatten().tolist())  # no -0.0
    last_row = bias[:, -1, :].flip(-1)  # distance 0, 1, 2, ...
    assert bool((last_row[:, 1:] <= last_row[:, :-1]).all())
    assert torch.allclose(bias, bias.transpose(1, 2))  # depends on |i - j| only


def test_default_eps_would_raise_small_alibi_slopes() -> None:
    kerple = KerpleBias(8, kind="power").double()  # eps = 0.01 > 1/128, 1/256
    with torch.no_grad():
        kerple.r1.copy_(alibi_slopes(8, dtype=torch.float64))
        kerple.r2.fill_(1.0)
    kerple(2)
    assert kerple.r1[-2:].tolist() == [EPS, EPS]


def test_cache_positions_give_the_rows_of_the_full_bias() -> None:
    kerple = KerpleBias(2)
    full = kerple(8)
    assert torch.allclose(kerple.bias(torch.tensor([7]), 8), full[:, 7:8])


def test_batched_positions() -> None:
    kerple = KerpleBias(3)
    q_pos = torch.tensor([[5, 6], [2, 3]])
    k_pos = torch.tensor([[0, 1, 5, 6], [0, 1, 2, 3]])
    batched = kerple.bias(q_pos, k_pos)
    assert batched.shape == (2, 3, 2, 4)
    # different shapes can take different vectorised log1p paths: close, not bit for bit
    for b in range(2):
        torch.testing.assert_close(batched[b], kerple.bias(q_pos[b], k_pos[b]), rtol=1e-6, atol=1e-7)
    torch.testing.assert_close(kerple.bias(q_pos, torch.arange(4))[1], kerple.bias(q_pos[1], 4), rtol=1e-6, atol=1e-7)
    with pytest.raises(ValueError, match="same batch size"):
        kerple.bias(torch.zeros(2, 3), torch.zeros(3, 3))


@pytest.mark.parametrize("kind", ["log", "power"])
def test_gradients_reach_every_parameter(kind: str) -> None:
    torch.manual_seed(2)
    kerple = KerpleBias(3, kind=kind)
    kerple(6).square().sum().backward()
    for name, parameter in kerple.named_parameters():
        assert parameter.grad is not None, name
        assert bool(torch.isfinite(parameter.grad).all()) and bool((parameter.grad != 0).all()), name


def test_half_module_computes_in_float32() -> None:
    kerple = KerpleBias(2).half()
    assert kerple(4).dtype == torch.float32


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="num_heads"):
        KerpleBias(0)
    with pytest.raises(TypeError, match="num_heads"):
        KerpleBias(2.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="kind"):
        KerpleBias(2, kind="exp")
    with pytest.raises(ValueError, match="eps"):
        KerpleBias(2, eps=0.0)
    kerple = KerpleBias(2)
    with pytest.raises(ValueError, match="q_len"):
        kerple(-1)
    with pytest.raises(TypeError, match="k_len"):
        kerple(3, 2.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="q_positions"):
        kerple.bias(torch.tensor([float("inf")]), 3)
    with pytest.raises(TypeError, match="k_positions"):
        kerple.bias(3, torch.ones(3, dtype=torch.bool))
    with pytest.raises(ValueError, match="k_positions"):
        kerple.bias(3, torch.zeros(1, 2, 3))
    with pytest.raises(ValueError, match="q_len and k_len"):  # 2 x 2^20 x 2^20 entries
        kerple(2**20, 2**20)
    with pytest.raises(ValueError, match="num_heads"):
        KerpleBias(2**40)
