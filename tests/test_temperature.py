"""Attention temperature: the published formula, one place for it, bad input named."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import posenc
from posenc.configs import query_temperature
from posenc.temperature import LLAMA4_NOPE, QueryTemperature, attention_temperature


def reference(position: int, beta: float, length: int, offset: int) -> float:
    """Scalable-Softmax's stepped form as Llama 4 and Ministral 3 write it, in Python floats."""
    return 1.0 + beta * math.log(1 + (position + offset) // length)


@settings(max_examples=60, deadline=None)
@given(position=st.integers(0, 10**9), beta=st.floats(0, 4), length=st.integers(1, 10**5), offset=st.integers(0, 3))
def test_matches_the_formula(position: int, beta: float, length: int, offset: int) -> None:
    got = attention_temperature(torch.tensor([position]), beta=beta, length=length, offset=offset)
    assert got.dtype == torch.float64
    assert math.isclose(float(got[0]), reference(position, beta, length, offset), rel_tol=1e-13)
    assert math.isclose(float(QueryTemperature(beta, length, offset)(torch.tensor(position))),
                        reference(position, beta, length, offset), rel_tol=1e-13)


def test_one_within_the_first_step_and_stepped_after() -> None:
    factors = attention_temperature(3 * 8192, beta=0.1, length=8192, offset=1)
    assert torch.equal(factors[:8191], torch.ones(8191, dtype=torch.float64))
    assert sorted(set(factors.tolist())) == [1.0, 1 + 0.1 * math.log(2), 1 + 0.1 * math.log(3), 1 + 0.1 * math.log(4)]
    assert LLAMA4_NOPE == QueryTemperature(0.1, 8192, 1)
    shape = attention_temperature(torch.zeros(2, 3, dtype=torch.long), beta=1.0, length=2).shape
    assert shape == (2, 3)


@pytest.mark.parametrize("position", [0, 7, 8, 9, 8191, 8192, 100_000])
def test_the_config_reader_uses_the_same_formula(position: int) -> None:
    nope = {"rule": "llama4_nope_tuning", "attn_scale": 0.1, "floor_scale": 8}
    beta = {"rule": "llama_4_scaling_beta", "beta": 0.25, "length": 8}
    assert query_temperature(nope, position) == float(attention_temperature(
        torch.tensor([position]), beta=0.1, length=8, offset=1)[0])
    assert math.isclose(query_temperature(nope, position), reference(position, 0.1, 8, 1), rel_tol=1e-13)
    assert math.isclose(query_temperature(beta, position), reference(position, 0.25, 8, 0), rel_tol=1e-13)


def test_exported() -> None:
    assert posenc.attention_temperature is attention_temperature
    assert posenc.QueryTemperature is QueryTemperature


@pytest.mark.parametrize(("call", "error", "match"), [
    (lambda: attention_temperature(torch.tensor([-1]), beta=0.1, length=8), ValueError, "positions"),
    (lambda: attention_temperature(torch.tensor([1.5]), beta=0.1, length=8), TypeError, "positions"),
    (lambda: attention_temperature(torch.tensor([1]), beta=-0.1, length=8), ValueError, "beta"),
    (lambda: attention_temperature(torch.tensor([1]), beta=math.nan, length=8), ValueError, "beta"),
    (lambda: attention_temperature(torch.tensor([1]), beta=0.1, length=0), ValueError, "length"),
    (lambda: attention_temperature(torch.tensor([1]), beta=0.1, length=8.0), TypeError, "length"),
    (lambda: attention_temperature(torch.tensor([1]), beta=0.1, length=8, offset=-1), ValueError, "offset"),
    (lambda: QueryTemperature(0.1, 0), ValueError, "length"),
    (lambda: QueryTemperature(0.1, 8)(torch.tensor([0.5])), TypeError, "positions"),
])
def test_bad_input(call: object, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        call()  # type: ignore[operator]
