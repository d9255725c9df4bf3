"""Tests of posenc.vision (the 2-D sine-cosine table, the learned 2-D grid) and posenc.tiny_vit."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc import LearnedPositionalEmbedding2D, TinyViT, sinusoidal_encoding_2d
from posenc.tiny_vit import VIT_POSITIONS


def mae_table_loop(height: int, width: int, dim: int, base: float) -> torch.Tensor:
    """Written from MAE's get_2d_sincos_pos_embed (util/pos_embed.py), one float64 entry at a time.

    Patch (r, c) is row r * width + c. Features [0, dim/2): the column c; [dim/2, dim): the row r.
    In each half, with q = dim/4 and omega_k = 1 / base^(k/q): sin(x omega_k) at k, cos at q + k.
    """
    q = dim // 4
    table = torch.empty(height * width, dim, dtype=torch.float64)
    for r in range(height):
        for c in range(width):
            for half, coordinate in enumerate((c, r)):
                for k in range(q):
                    omega = 1.0 / base ** (k / q)
                    table[r * width + c, half * 2 * q + k] = math.sin(coordinate * omega)
                    table[r * width + c, half * 2 * q + q + k] = math.cos(coordinate * omega)
    return table


@pytest.mark.parametrize("height, width, dim, base", [(4, 4, 16, 10000.0), (3, 5, 8, 100.0), (14, 14, 64, 10000.0),
                                                      (1, 7, 4, 10000.0)])
def test_2d_table_matches_the_float64_loop(height: int, width: int, dim: int, base: float) -> None:
    got = sinusoidal_encoding_2d(height, width, dim, base=base)
    assert got.dtype == torch.float32 and got.shape == (height * width, dim)
    torch.testing.assert_close(got.double(), mae_table_loop(height, width, dim, base), rtol=0, atol=1e-6)


def test_2d_table_halves_are_1d_tables_of_column_and_row() -> None:
    table = sinusoidal_encoding_2d(3, 4, 16).view(3, 4, 16)
    assert torch.equal(table[0, :, :8], table[2, :, :8])   # first half: the same in every row
    assert torch.equal(table[:, 0, 8:], table[:, 3, 8:])   # second half: the same in every column


@pytest.mark.parametrize("call, error, match", [
    (lambda: sinusoidal_encoding_2d(4, 4, 6), ValueError, "multiple of 4"),
    (lambda: sinusoidal_encoding_2d(0, 4, 8), ValueError, "height"),
    (lambda: sinusoidal_encoding_2d(4, 4.0, 8), TypeError, "width"),
    (lambda: sinusoidal_encoding_2d(4, 4, 8, base=-1.0), ValueError, "base"),
    (lambda: sinusoidal_encoding_2d(100000, 100000, 8), ValueError, "height \\* width"),
    (lambda: LearnedPositionalEmbedding2D(4, 4, 8, cls_token=1), TypeError, "cls_token"),
    (lambda: LearnedPositionalEmbedding2D(4, 4, 0), ValueError, "dim"),
    (lambda: LearnedPositionalEmbedding2D(4, 4, 8).resize(0, 3), ValueError, "height"),
    (lambda: LearnedPositionalEmbedding2D(4, 4, 8)(torch.zeros(1, 15, 8)), ValueError, "x"),
    (lambda: LearnedPositionalEmbedding2D(4, 4, 8)(torch.zeros(1, 16, 6)), ValueError, "x"),
    (lambda: TinyViT(8, 2, 10, 16, 2, 1, position="alibi"), ValueError, "position"),
    (lambda: TinyViT(8, 3, 10, 16, 2, 1, position="none"), ValueError, "image_size"),
    (lambda: TinyViT(8, 2, 10, 12, 2, 1, position="rope"), ValueError, "multiple of 4"),
    (lambda: TinyViT(8, 2, 10, 16, 3, 1, position="none"), ValueError, "num_heads"),
    (lambda: TinyViT(8, 2, 10, 16, 2, 1, position="rope", rope_rescale="yes"), TypeError, "rope_rescale"),
    (lambda: TinyViT(8, 2, 10, 16, 2, 1, position="none")(torch.zeros(1, 1, 9, 8)), ValueError, "images"),
    (lambda: TinyViT(8, 2, 10, 16, 2, 1, position="none")(torch.zeros(1, 3, 8, 8)), ValueError, "images"),
    (lambda: TinyViT(8, 2, 10, 16, 2, 1, position="none")(torch.zeros(1, 8, 8)), ValueError, "images"),
    (lambda: TinyViT(8, 2, 10, 16, 2, 1, position="none")(torch.zeros(1, 1, 8, 8, dtype=torch.long)),
     TypeError, "images"),
])
def test_bad_input(call: object, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        call()  # type: ignore[operator]


def test_resize_to_the_same_size_keeps_every_value() -> None:
    torch.manual_seed(0)
    layer = LearnedPositionalEmbedding2D(5, 7, 6, cls_token=True)
    before, cls_before = layer.grid.detach().clone(), layer.cls.detach().clone()  # type: ignore[union-attr]
    layer.resize(5, 7)
    torch.testing.assert_close(layer.grid.detach(), before, rtol=0, atol=1e-6)
    assert torch.equal(layer.cls.detach(), cls_before)  # type: ignore[union-attr]


def test_resize_by_three_keeps_the_old_grid_points() -> None:
    """With align_corners=False, new cell 3i + 1 of a 3x larger grid sits on old cell i."""
    torch.manual_seed(1)
    layer = LearnedPositionalEmbedding2D(4, 3, 5)
    old = layer.grid.detach().clone().view(4, 3, 5)
    layer.resize(12, 9)
    new = layer.grid.detach().view(12, 9, 5)
    torch.testing.assert_close(new[1::3, 1::3], old, rtol=0, atol=1e-6)
    assert not torch.allclose(new[0::3, 0::3], old, atol=1e-4)  # cells in between are interpolated


def test_resize_is_bicubic_as_deit_and_mae() -> None:
    torch.manual_seed(2)
    layer = LearnedPositionalEmbedding2D(4, 4, 3, cls_token=True)
    grid = layer.grid.detach().clone()
    want = torch.nn.functional.interpolate(grid.T.reshape(1, 3, 4, 4), size=(6, 5), mode="bicubic",
                                           align_corners=False).reshape(3, 30).T
    encoding = layer.encoding(6, 5)
    assert encoding.shape == (31, 3)
    assert torch.equal(encoding[0], layer.cls.detach()[0])  # type: ignore[union-attr]
    torch.testing.assert_close(encoding[1:].detach(), want, rtol=1e-5, atol=1e-6)


def test_resized_table_still_trains() -> None:
    layer = LearnedPositionalEmbedding2D(2, 2, 4)
    layer(torch.zeros(1, 9, 4), 3, 3).sum().backward()
    assert layer.grid.grad is not None and layer.grid.grad.abs().sum() > 0


@pytest.mark.parametrize("position", VIT_POSITIONS)
def test_vit_runs_at_the_trained_and_at_larger_grids(position: str) -> None:
    torch.manual_seed(0)
    model = TinyViT(8, 2, 10, 16, 2, 2, position=position)
    for size in (8, 12, (8, 16)):
        h, w = (size, size) if isinstance(size, int) else size
        logits = model(torch.rand(3, 1, h, w))
        assert logits.shape == (3, 10) and bool(torch.isfinite(logits).all())
    logits.sum().backward()
    assert all(p.grad is not None for p in model.parameters())


def _permuted(images: torch.Tensor, order: torch.Tensor) -> torch.Tensor:
    """The images with their 2x2 patches (a 4x4 grid) moved around by ``order``."""
    patches = images.unfold(2, 2, 2).unfold(3, 2, 2).reshape(images.shape[0], 1, 16, 2, 2)
    moved = patches[:, :, order].reshape(images.shape[0], 1, 4, 4, 2, 2)
    return moved.permute(0, 1, 2, 4, 3, 5).reshape(images.shape)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_without_positions_the_vit_sees_a_bag_of_patches(seed: int) -> None:
    generator = torch.Generator().manual_seed(seed)
    images = torch.rand(2, 1, 8, 8, generator=generator)
    order = torch.randperm(16, generator=generator)
    torch.manual_seed(0)
    plain = TinyViT(8, 2, 10, 16, 2, 1, position="none").eval()
    torch.testing.assert_close(plain(_permuted(images, order)), plain(images), rtol=1e-4, atol=1e-5)
    torch.manual_seed(0)
    rope = TinyViT(8, 2, 10, 16, 2, 1, position="rope").eval()
    if not torch.equal(order, torch.arange(16)):
        assert not torch.allclose(rope(_permuted(images, order)), rope(images), atol=1e-5)


def test_permutation_helper_moves_patches() -> None:
    images = torch.arange(64.0).view(1, 1, 8, 8)
    order = torch.arange(16).roll(1)
    moved = _permuted(images, order)
    assert torch.equal(moved[0, 0, :2, :2], images[0, 0, 6:, 6:])  # patch 15 is now first


def test_rope_rescale_changes_only_other_grids() -> None:
    torch.manual_seed(0)
    plain = TinyViT(8, 2, 10, 16, 2, 1, position="rope").eval()
    rescaled = TinyViT(8, 2, 10, 16, 2, 1, position="rope", rope_rescale=True).eval()
    rescaled.load_state_dict(plain.state_dict())
    small, large = torch.rand(2, 1, 8, 8), torch.rand(2, 1, 16, 16)
    assert torch.equal(plain(small), rescaled(small))
    assert not torch.allclose(plain(large), rescaled(large), atol=1e-5)


def test_bfloat16_model_runs() -> None:
    model = TinyViT(8, 2, 10, 16, 2, 1, position="rope").to(torch.bfloat16)
    assert model(torch.rand(2, 1, 8, 8, dtype=torch.bfloat16)).dtype == torch.bfloat16
