"""FIRE: against a plain float64 loop written from Li et al. (2024, arXiv 2310.04418), eq. of
the bias b(i, j) = f(psi(i - j) / psi(max(L, i))) with psi(x) = log(c x + 1), the normalisation
into [0, 1] at any length, finite outputs beyond training, gradients, and argument checks."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc import FireBias
from posenc.fire import EPS


def ref_fire(fire: FireBias, q_positions: list[float], k_positions: list[float]) -> torch.Tensor:
    w1, b1 = fire.layer1.weight[:, 0].tolist(), fire.layer1.bias.tolist()
    w2, b2 = fire.layer2.weight.tolist(), fire.layer2.bias.tolist()
    c = abs(fire.c.item())
    threshold = abs(fire.l_multiplier.item() * fire.init_l)

    def psi(x: float) -> float:
        return math.log(c * x + 1)

    out = torch.empty(fire.num_heads, len(q_positions), len(k_positions), dtype=torch.float64)
    for a, i in enumerate(q_positions):
        for b, j in enumerate(k_positions):
            x = psi(abs(i - j)) / (psi(max(threshold, i)) + EPS)
            hidden = [max(0.0, w * x + bias) for w, bias in zip(w1, b1, strict=True)]
            for h in range(fire.num_heads):
                out[h, a, b] = sum(wh * v for wh, v in zip(w2[h], hidden, strict=True)) + b2[h]
    return out


def test_matches_reference() -> None:
    torch.manual_seed(0)
    fire = FireBias(3, hidden=8, max_len=4).double()
    with torch.no_grad():
        fire.c.fill_(0.7)
        fire.l_multiplier.fill_(1.5)
    assert torch.allclose(fire(9, 9), ref_fire(fire, list(range(9)), list(range(9))), atol=1e-12)
    q_pos, k_pos = torch.tensor([2.0, 30.0, 500.0]), torch.tensor([0.0, 1.0, 29.0, 499.0])
    assert torch.allclose(fire.bias(q_pos, k_pos), ref_fire(fire, q_pos.tolist(), k_pos.tolist()), atol=1e-12)


def test_float32_close_to_reference() -> None:
    torch.manual_seed(1)
    fire = FireBias(2, max_len=16)
    assert torch.allclose(fire(20).double(), ref_fire(fire, list(range(20)), list(range(20))), atol=1e-5)


@settings(max_examples=30, deadline=None)
@given(i=st.integers(0, 10**6), fraction=st.floats(0.0, 1.0), c=st.floats(1e-3, 10.0),
       max_len=st.integers(1, 4096))
def test_normalised_distance_is_in_unit_interval_for_past_keys(i: int, fraction: float, c: float,
                                                               max_len: int) -> None:
    fire = FireBias(1, max_len=max_len).double()
    with torch.no_grad():
        fire.c.fill_(c)
    j = math.floor(i * fraction)
    x = fire.normalised_distance(torch.tensor([float(i)]), torch.tensor([float(j)]))[0, 0].item()
    assert 0.0 <= x <= 1.0


def test_longer_sequences_only_bring_inputs_already_seen() -> None:
    # Every input of f at length 4096 lies in the range f was given at length 512 ([0, 1]):
    # the unnormalised log distance would instead reach values never seen in training.
    fire = FireBias(1, max_len=64).double()
    short = fire.normalised_distance(512, 512).tril().detach()
    long = fire.normalised_distance(4096, 4096).tril().detach()
    assert float(short.min()) == 0.0 and float(short.max()) == pytest.approx(1.0, abs=1e-5)
    assert float(long.min()) >= float(short.min()) and float(long.max()) <= float(short.max()) + 1e-5
    c = abs(fire.c.item())
    assert math.log(c * 4095 + 1) > 1.3 * math.log(c * 511 + 1)  # what normalising avoids


def test_outputs_beyond_training_are_finite() -> None:
    torch.manual_seed(2)
    fire = FireBias(4, max_len=32)
    assert bool(torch.isfinite(fire(1024)).all())
    far = fire.bias(torch.tensor([10.0**7]), torch.tensor([0.0, 5e6, 10.0**7]))
    assert far.shape == (4, 1, 3) and bool(torch.isfinite(far).all())
    assert bool(torch.isfinite(fire.half()(64)).all()) and fire.half()(4).dtype == torch.float32
    assert FireBias(1, max_len=100_001).half().threshold.item() == 100_001  # not rounded to float16


def test_gradients_reach_every_parameter() -> None:
    torch.manual_seed(3)
    fire = FireBias(4, hidden=8, max_len=16)
    fire(12).square().sum().backward()
    names = {name for name, _ in fire.named_parameters()}
    assert names == {"layer1.weight", "layer1.bias", "layer2.weight", "layer2.bias", "c", "l_multiplier"}
    for name, parameter in fire.named_parameters():
        assert parameter.grad is not None and bool(torch.isfinite(parameter.grad).all()), name
        assert bool(parameter.grad.abs().sum() > 0), name


def test_cache_positions_give_the_rows_of_the_full_bias() -> None:
    fire = FireBias(2, max_len=4)
    assert torch.allclose(fire.bias(torch.tensor([9]), 10), fire(10)[:, 9:10])


def test_batched_positions() -> None:
    fire = FireBias(3, max_len=4)
    q_pos = torch.tensor([[5, 6], [2, 3]])
    k_pos = torch.tensor([[0, 1, 5, 6], [0, 1, 2, 3]])
    batched = fire.bias(q_pos, k_pos)
    assert batched.shape == (2, 3, 2, 4)
    for b in range(2):
        assert torch.allclose(batched[b], fire.bias(q_pos[b], k_pos[b]))


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="num_heads"):
        FireBias(0)
    with pytest.raises(ValueError, match="hidden"):
        FireBias(2, hidden=0)
    with pytest.raises(TypeError, match="max_len"):
        FireBias(2, max_len=3.5)  # type: ignore[arg-type]
    fire = FireBias(2)
    with pytest.raises(ValueError, match="q_len"):
        fire(-2)
    with pytest.raises(TypeError, match="q_len"):
        fire(True)
    with pytest.raises(ValueError, match="k_positions"):
        fire.bias(3, torch.zeros(2, 2, 2))
    with pytest.raises(ValueError, match="q_len and k_len"):
        fire(2**16, 2**16)
    with pytest.raises(ValueError, match="hidden"):
        FireBias(2**12, hidden=2**13)
    with pytest.raises(ValueError, match="max_len"):
        FireBias(2, max_len=10**400)
