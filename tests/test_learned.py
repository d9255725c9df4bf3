"""Learned absolute position embeddings: the table, its size, its limit and its checks."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc import LearnedPositionalEmbedding, SinusoidalPositionalEncoding


@settings(max_examples=30, deadline=None)
@given(max_len=st.integers(1, 12), dim=st.integers(1, 6), data=st.data())
def test_forward_adds_the_rows_of_the_positions(max_len: int, dim: int, data: st.DataObject) -> None:
    seq = data.draw(st.integers(0, max_len))
    offset = data.draw(st.integers(0, max_len - seq))
    layer = LearnedPositionalEmbedding(max_len, dim)
    x = torch.randn(2, seq, dim)
    out = layer(x, offset=offset)
    table = layer.table.detach()
    for b in range(2):
        for t in range(seq):
            for d in range(dim):
                assert out[b, t, d].item() == pytest.approx(x[b, t, d].item() + table[offset + t, d].item())


def test_parameter_count_against_the_sinusoidal_buffer() -> None:
    learned = LearnedPositionalEmbedding(512, 768)
    sinusoidal = SinusoidalPositionalEncoding(768, max_len=512)
    assert sum(p.numel() for p in learned.parameters()) == 512 * 768 == 393_216
    assert sum(p.numel() for p in sinusoidal.parameters()) == 0
    assert [name for name, _ in learned.named_parameters()] == ["table"]


@pytest.mark.parametrize("std", [0.02, 0.01, 1.0])
def test_initial_scale_is_init_std(std: float) -> None:
    torch.manual_seed(0)
    table = LearnedPositionalEmbedding(1024, 256, init_std=std).table.detach().double()
    # 262144 samples: the sample std is within 1% of the true std with overwhelming probability
    assert table.std().item() == pytest.approx(std, rel=0.01)
    assert abs(table.mean().item()) < 0.01 * std


def test_zero_std_gives_a_zero_table() -> None:
    assert torch.count_nonzero(LearnedPositionalEmbedding(3, 2, init_std=0.0).table) == 0


def test_full_length_is_allowed_and_one_more_is_an_error() -> None:
    layer = LearnedPositionalEmbedding(max_len=8, dim=4)
    assert layer(torch.zeros(1, 8, 4)).shape == (1, 8, 4)
    assert layer(torch.zeros(1, 3, 4), offset=5).shape == (1, 3, 4)
    with pytest.raises(ValueError, match=r"requested length 9 .*max_len=8"):
        layer(torch.zeros(1, 9, 4))
    with pytest.raises(ValueError, match=r"requested length 9 \(offset 6 \+ seq_len 3\) exceeds max_len=8"):
        layer(torch.zeros(1, 3, 4), offset=6)


def test_only_the_used_rows_get_gradients() -> None:
    layer = LearnedPositionalEmbedding(max_len=6, dim=3)
    layer(torch.zeros(1, 2, 3), offset=1).sum().backward()
    grad = layer.table.grad
    assert grad is not None
    assert torch.equal(grad.abs().sum(-1) > 0, torch.tensor([False, True, True, False, False, False]))


def test_output_dtype_follows_the_input() -> None:
    layer = LearnedPositionalEmbedding(4, 2)
    assert layer(torch.zeros(1, 2, 2, dtype=torch.float64)).dtype == torch.float64


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"max_len": 0, "dim": 4}, ValueError, r"max_len must be an integer >= 1, got 0"),
        ({"max_len": -3, "dim": 4}, ValueError, r"max_len must be an integer >= 1, got -3"),
        ({"max_len": 2.5, "dim": 4}, TypeError, r"max_len must be an integer, got float"),
        ({"max_len": 4, "dim": 0}, ValueError, r"dim must be an integer >= 1, got 0"),
        ({"max_len": 4, "dim": True}, TypeError, r"dim must be an integer, got bool"),
        ({"max_len": 4, "dim": 2, "init_std": -0.1}, ValueError, r"init_std must be >= 0.0, got -0.1"),
        ({"max_len": 4, "dim": 2, "init_std": float("nan")}, ValueError, r"init_std must be finite"),
    ],
)
def test_bad_constructor_arguments(kwargs: dict[str, object], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        LearnedPositionalEmbedding(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("x", "offset", "error", "message"),
    [
        (torch.zeros(2, 4), 0, ValueError, r"x must have 3 dimensions, got shape \(2, 4\)"),
        (torch.zeros(1, 2, 3), 0, ValueError, r"x must have size 4 in dimension -1"),
        (torch.zeros(1, 2, 4, dtype=torch.long), 0, TypeError, r"x must be a floating-point tensor"),
        (torch.zeros(1, 2, 4), -1, ValueError, r"offset must be an integer >= 0, got -1"),
        (torch.zeros(1, 2, 4), 1.0, TypeError, r"offset must be an integer, got float"),
    ],
)
def test_bad_forward_arguments(x: torch.Tensor, offset: object, error: type[Exception], message: str) -> None:
    layer = LearnedPositionalEmbedding(8, 4)
    with pytest.raises(error, match=message):
        layer(x, offset=offset)
