"""Tests of posenc.rope_nd: multi-axis RoPE and M-RoPE position ids.

References: a float64 loop written from the definition (pair j rotated by the coordinate of its
axis times its frequency), and transformers' Qwen2-VL / Qwen3-VL code, run live on tiny configs.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc import apply_rope, apply_rope_nd, mrope_positions
from posenc.rope_nd import grid_positions, rope_axis_assignment


def _owner_loop(sections: list[int], assignment: str) -> list[int]:
    """Axis of each pair, from the definitions (blocks; Qwen3-VL's strided interleaving)."""
    half, n = sum(sections), len(sections)
    if assignment == "blocks":
        return [a for a, count in enumerate(sections) for _ in range(count)]
    owner = []
    for j in range(half):
        a = j % n
        owner.append(a if a >= 1 and j < n * sections[a] else 0)
    return owner


def reference(x: torch.Tensor, positions: torch.Tensor, sections: list[int], base: float, layout: str,
              assignment: str, frequencies: str) -> torch.Tensor:
    """A plain float64 loop: pair j of token s turns by positions[s, axis(j)] * theta_j."""
    x64, pos = x.double(), positions.double()
    dim, half = x.shape[-1], x.shape[-1] // 2
    owner = _owner_loop(sections, assignment)
    theta = []
    rank = [0] * len(sections)
    for j in range(half):
        a = owner[j]
        if frequencies == "global":
            theta.append(base ** (-2 * j / dim))
        else:
            theta.append(base ** (-rank[a] / sections[a]))
        rank[a] += 1
    out = torch.empty_like(x64)
    for s in range(x.shape[-2]):
        for j in range(half):
            angle = float(pos[s, owner[j]]) * theta[j]
            i1, i2 = (j, j + half) if layout == "half" else (2 * j, 2 * j + 1)
            a1, a2 = x64[..., s, i1], x64[..., s, i2]
            out[..., s, i1] = a1 * math.cos(angle) - a2 * math.sin(angle)
            out[..., s, i2] = a2 * math.cos(angle) + a1 * math.sin(angle)
    return out


@pytest.mark.parametrize("layout", ["half", "interleaved"])
@pytest.mark.parametrize("assignment", ["blocks", "interleaved"])
@pytest.mark.parametrize("frequencies", ["global", "per_axis"])
def test_matches_the_float64_loop(layout: str, assignment: str, frequencies: str) -> None:
    torch.manual_seed(0)
    sections = [4, 3, 3]
    x = torch.randn(2, 5, 20, dtype=torch.float64)
    positions = torch.randint(-6, 40, (5, 3)).double() + 0.25
    got = apply_rope_nd(x, positions, sections=sections, base=500.0, layout=layout, assignment=assignment,
                        frequencies=frequencies)
    want = reference(x, positions, sections, 500.0, layout, assignment, frequencies)
    torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)


def test_one_axis_is_apply_rope() -> None:
    x = torch.randn(2, 7, 12)
    positions = torch.arange(7.0) * 3
    for frequencies in ("global", "per_axis"):
        got = apply_rope_nd(x, positions[:, None], sections=[6], frequencies=frequencies)
        torch.testing.assert_close(got, apply_rope(x, positions))


def test_assignments() -> None:
    assert rope_axis_assignment([16, 24, 24]).tolist() == _owner_loop([16, 24, 24], "blocks")
    interleaved = rope_axis_assignment([24, 20, 20], assignment="interleaved")
    assert interleaved.tolist() == _owner_loop([24, 20, 20], "interleaved")
    assert torch.bincount(interleaved).tolist() == [24, 20, 20]
    with pytest.raises(ValueError, match="cannot be interleaved"):
        rope_axis_assignment([1, 2, 2], assignment="interleaved")


@settings(max_examples=40, deadline=None)
@given(
    p=st.tuples(st.integers(-20, 20), st.integers(-20, 20)),
    q=st.tuples(st.integers(-20, 20), st.integers(-20, 20)),
    shift=st.tuples(st.integers(-50, 50), st.integers(-50, 50)),
    frequencies=st.sampled_from(["global", "per_axis"]),
    layout=st.sampled_from(["half", "interleaved"]),
    seed=st.integers(0, 1000),
)
def test_2d_score_depends_only_on_the_offset(p: tuple[int, int], q: tuple[int, int], shift: tuple[int, int],
                                             frequencies: str, layout: str, seed: int) -> None:
    """q at p, k at r: the score equals that of q at p + s, k at r + s for any 2-D shift s."""
    generator = torch.Generator().manual_seed(seed)
    query, key = torch.randn(2, 1, 16, generator=generator, dtype=torch.float64).unbind(0)

    def score(a: tuple[int, int], b: tuple[int, int]) -> float:
        kwargs = {"sections": [4, 4], "base": 100.0, "frequencies": frequencies, "layout": layout}
        qa = apply_rope_nd(query, torch.tensor([a], dtype=torch.float64), **kwargs)  # type: ignore[arg-type]
        kb = apply_rope_nd(key, torch.tensor([b], dtype=torch.float64), **kwargs)  # type: ignore[arg-type]
        return float((qa * kb).sum())

    moved_p = (p[0] + shift[0], p[1] + shift[1])
    moved_q = (q[0] + shift[0], q[1] + shift[1])
    assert math.isclose(score(p, q), score(moved_p, moved_q), rel_tol=1e-9, abs_tol=1e-9)


def test_the_two_axes_are_told_apart() -> None:
    """An offset along rows and the same offset along columns give different scores."""
    torch.manual_seed(1)
    query, key = torch.randn(2, 1, 16).unbind(0)
    kwargs = {"sections": [4, 4], "base": 100.0, "frequencies": "per_axis"}
    q0 = apply_rope_nd(query, torch.tensor([[0, 0]]), **kwargs)  # type: ignore[arg-type]
    down = apply_rope_nd(key, torch.tensor([[1, 0]]), **kwargs)  # type: ignore[arg-type]
    right = apply_rope_nd(key, torch.tensor([[0, 1]]), **kwargs)  # type: ignore[arg-type]
    assert abs(float((q0 * down).sum() - (q0 * right).sum())) > 1e-3


def test_batched_positions_broadcast_over_heads() -> None:
    x = torch.randn(2, 3, 4, 8)
    positions = torch.randint(0, 9, (2, 4, 2))
    got = apply_rope_nd(x, positions, sections=[2, 2])
    for b in range(2):
        torch.testing.assert_close(got[b], apply_rope_nd(x[b], positions[b], sections=[2, 2]))


def test_half_precision_is_rotated_in_float32() -> None:
    x = torch.randn(4, 8)
    positions = torch.tensor([[0, 0], [100, 7], [3000, 1], [5, 5000]])
    want = apply_rope_nd(x.double(), positions, sections=[2, 2])
    got = apply_rope_nd(x.bfloat16(), positions, sections=[2, 2])
    assert got.dtype == torch.bfloat16
    torch.testing.assert_close(got.double(), want, rtol=2e-2, atol=2e-2)


def test_grid_positions() -> None:
    grid = grid_positions(3, 4)
    assert [tuple(row) for row in grid.tolist()] == [(r, c) for r in range(3) for c in range(4)]
    assert grid_positions(2, 2, 3).shape == (12, 3)


@pytest.mark.parametrize("call, error, match", [
    (lambda: apply_rope_nd(torch.randn(3, 8), torch.zeros(3, 2), sections=[2, 1]), ValueError, "sum to dim // 2"),
    (lambda: apply_rope_nd(torch.randn(3, 8), torch.zeros(3, 3), sections=[2, 2]), ValueError, "positions"),
    (lambda: apply_rope_nd(torch.randn(3, 8), torch.zeros(4, 2), sections=[2, 2]), ValueError, "positions"),
    (lambda: apply_rope_nd(torch.randn(3, 8), torch.zeros(3, 2, dtype=torch.bool), sections=[2, 2]),
     TypeError, "positions"),
    (lambda: apply_rope_nd(torch.randn(3, 8), torch.full((3, 2), math.nan), sections=[2, 2]), ValueError, "finite"),
    (lambda: apply_rope_nd(torch.ones(3, 8, dtype=torch.long), torch.zeros(3, 2), sections=[2, 2]), TypeError, "x"),
    (lambda: apply_rope_nd(torch.randn(3, 8), torch.zeros(3, 2), sections="22"), TypeError, "sections"),
    (lambda: apply_rope_nd(torch.randn(3, 8), torch.zeros(3, 2), sections=[4, 0]), ValueError, "sections"),
    (lambda: apply_rope_nd(torch.randn(3, 8), torch.zeros(3, 2), sections=[2, 2], layout="x"), ValueError, "layout"),
    (lambda: apply_rope_nd(torch.randn(3, 8), torch.zeros(3, 2), sections=[2, 2], frequencies="axis"),
     ValueError, "frequencies"),
    (lambda: apply_rope_nd(torch.randn(3, 8), torch.zeros(3, 2), sections=[2, 2], assignment=1),
     ValueError, "assignment"),
    (lambda: apply_rope_nd(torch.randn(3, 8), torch.zeros(3, 2), sections=[2, 2], base=1.0), ValueError, "base"),
    (lambda: apply_rope_nd(torch.randn(2, 3, 8), torch.zeros(3, 3, 2), sections=[2, 2]), ValueError, "batch"),
    (lambda: grid_positions(0, 3), ValueError, "sizes"),
    (lambda: grid_positions(100000, 100000), ValueError, "cells"),
    (lambda: mrope_positions([3, (1, 3, 4)]), ValueError, "multiples"),
    (lambda: mrope_positions([3, (1, 4)]), TypeError, "segments"),
    (lambda: mrope_positions([0]), ValueError, "segments"),
    (lambda: mrope_positions([]), ValueError, "segments"),
    (lambda: mrope_positions([True]), TypeError, "segments"),
    (lambda: mrope_positions([2], spatial_merge_size=0), ValueError, "spatial_merge_size"),
])
def test_bad_input(call: object, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        call()  # type: ignore[operator]


# --- transformers, live ----------------------------------------------------------------------

transformers = pytest.importorskip("transformers", reason="transformers is the live reference for M-RoPE")


def _qwen2_text_config(sections: list[int], head_dim: int) -> object:
    from transformers import Qwen2VLTextConfig

    return Qwen2VLTextConfig(hidden_size=2 * head_dim, intermediate_size=8, num_hidden_layers=1,
                             num_attention_heads=2, num_key_value_heads=1, vocab_size=32,
                             rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                              "mrope_section": sections})


@pytest.mark.parametrize("sections", [[16, 24, 24], [2, 3, 3]])
def test_mrope_matches_qwen2_vl(sections: list[int]) -> None:
    """Qwen2-VL's rotary embedding (its per-axis pair assignment) then its rotation."""
    from transformers.models.qwen2_vl.modeling_qwen2_vl import Qwen2VLRotaryEmbedding, apply_rotary_pos_emb

    head_dim = 2 * sum(sections)
    rotary = Qwen2VLRotaryEmbedding(_qwen2_text_config(sections, head_dim))
    position_ids = mrope_positions([5, (1, 6, 8), 3, (3, 4, 4), 2])  # [3, seq]
    seq = position_ids.shape[1]
    torch.manual_seed(0)
    q, k = torch.randn(2, 1, 2, seq, head_dim).unbind(0)
    cos, sin = rotary(q, position_ids[:, None, :])  # position_ids [3, batch, seq]
    q_hf, k_hf = apply_rotary_pos_emb(q, k, cos, sin)
    positions = position_ids.T[None]  # [batch, seq, 3]
    for ours, theirs in ((q, q_hf), (k, k_hf)):
        rotated = apply_rope_nd(ours, positions, sections=sections, base=10000.0)
        torch.testing.assert_close(rotated, theirs, rtol=1e-4, atol=1e-4)


def test_interleaved_mrope_matches_qwen3_vl() -> None:
    from transformers import Qwen3VLTextConfig
    from transformers.models.qwen3_vl.modeling_qwen3_vl import Qwen3VLTextRotaryEmbedding, apply_rotary_pos_emb

    sections = [24, 20, 20]
    config = Qwen3VLTextConfig(hidden_size=256, head_dim=128, intermediate_size=8, num_hidden_layers=1,
                               num_attention_heads=2, num_key_value_heads=1, vocab_size=32,
                               rope_parameters={"rope_type": "default", "rope_theta": 5000000.0,
                                                "mrope_section": sections, "mrope_interleaved": True})
    rotary = Qwen3VLTextRotaryEmbedding(config)
    position_ids = mrope_positions([4, (1, 8, 6), 3])
    torch.manual_seed(1)
    q = torch.randn(1, 2, position_ids.shape[1], 128)
    cos, sin = rotary(q, position_ids[:, None, :])
    q_hf, _ = apply_rotary_pos_emb(q, q, cos, sin)
    got = apply_rope_nd(q, position_ids.T[None], sections=sections, base=5000000.0, assignment="interleaved")
    torch.testing.assert_close(got, q_hf, rtol=1e-4, atol=1e-4)
    blocks = apply_rope_nd(q, position_ids.T[None], sections=sections, base=5000000.0)
    assert not torch.allclose(blocks, q_hf, atol=1e-3)  # the block assignment is not Qwen3-VL's


@pytest.fixture(scope="module")
def qwen2_vl_model() -> object:
    """A Qwen2-VL model of a few thousand parameters, built in memory (nothing downloaded)."""
    from transformers import Qwen2VLConfig
    from transformers.models.qwen2_vl.modeling_qwen2_vl import Qwen2VLModel

    config = Qwen2VLConfig(
        text_config={"hidden_size": 16, "intermediate_size": 16, "num_hidden_layers": 1, "num_attention_heads": 2,
                     "num_key_value_heads": 1, "vocab_size": 32, "bos_token_id": None, "eos_token_id": None,
                     "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [1, 1, 2]}},
        vision_config={"depth": 1, "embed_dim": 8, "hidden_size": 16, "num_heads": 2, "mlp_ratio": 1,
                       "spatial_merge_size": 2, "patch_size": 2, "in_channels": 1},
        bos_token_id=None, eos_token_id=None,
    )
    torch.manual_seed(0)
    return Qwen2VLModel(config)


@pytest.mark.parametrize("segments", [
    [3, (1, 4, 6)],
    [(1, 2, 2), 4],
    [2, (1, 4, 6), 1],
    [5, (1, 8, 4), 2, (1, 6, 6), 3],
    [1, (2, 4, 4), 3],        # a short video: 2 frames
    [2, (1, 2, 10), 1, (1, 6, 2), 4],  # two images (transformers needs text between: it groups by type)
    [4, (6, 4, 4), 2],        # more frames than rows or columns
])
def test_mrope_positions_match_get_rope_index(qwen2_vl_model: object, segments: list[object]) -> None:
    kinds: list[int] = []
    images, videos = [], []
    for segment in segments:
        if isinstance(segment, int):
            kinds += [0] * segment
        else:
            t, h, w = segment
            kind = 1 if t == 1 else 2
            kinds += [kind] * (t * (h // 2) * (w // 2))
            (images if kind == 1 else videos).append(list(segment))
    type_ids = torch.tensor([kinds])
    input_ids = torch.zeros_like(type_ids)
    want, _ = qwen2_vl_model.get_rope_index(  # type: ignore[attr-defined]
        input_ids, type_ids, image_grid_thw=torch.tensor(images) if images else None,
        video_grid_thw=torch.tensor(videos) if videos else None)
    got = mrope_positions(segments)  # type: ignore[arg-type]
    assert torch.equal(got, want[:, 0])


def test_per_axis_matches_qwen2_vl_vision_encoder() -> None:
    """Qwen2-VL's vision encoder: axial 2-D RoPE, each of (row, column) with its own full ladder."""
    from transformers.models.qwen2_vl.configuration_qwen2_vl import Qwen2VLVisionConfig
    from transformers.models.qwen2_vl.modeling_qwen2_vl import (
        Qwen2VLVisionRotaryEmbedding,
        apply_rotary_pos_emb_vision,
    )

    config = Qwen2VLVisionConfig(embed_dim=64, num_heads=2, depth=1)  # head_dim 32: 8 pairs per axis
    rotary = Qwen2VLVisionRotaryEmbedding(config)
    rows_cols = grid_positions(6, 10)
    torch.manual_seed(2)
    q = torch.randn(rows_cols.shape[0], 2, 32)  # [seq, heads, head_dim]
    cos, sin = rotary(q, rows_cols)
    q_hf, _ = apply_rotary_pos_emb_vision(q, q, cos, sin)
    base = float(config.rope_parameters["rope_theta"])
    got = apply_rope_nd(q.transpose(0, 1), rows_cols, sections=[8, 8], base=base, frequencies="per_axis")
    torch.testing.assert_close(got.transpose(0, 1), q_hf, rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------- Qwen2.5-VL: time-aligned temporal ids


@pytest.fixture(scope="module")
def qwen2_5_vl_model() -> object:
    """A Qwen2.5-VL model of a few thousand parameters, built in memory (nothing downloaded)."""
    from transformers import Qwen2_5_VLConfig
    from transformers.models.qwen2_5_vl.modeling_qwen2_5_vl import Qwen2_5_VLModel

    config = Qwen2_5_VLConfig(
        text_config={"hidden_size": 16, "intermediate_size": 16, "num_hidden_layers": 1, "num_attention_heads": 2,
                     "num_key_value_heads": 1, "vocab_size": 32, "bos_token_id": None, "eos_token_id": None,
                     "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [1, 1, 2]}},
        vision_config={"depth": 1, "hidden_size": 8, "out_hidden_size": 16, "intermediate_size": 8, "num_heads": 2,
                       "spatial_merge_size": 2, "patch_size": 2, "in_channels": 1, "tokens_per_second": 4,
                       "fullatt_block_indexes": [0], "window_size": 8},
        bos_token_id=None, eos_token_id=None,
    )
    torch.manual_seed(0)
    return Qwen2_5_VLModel(config)


def _rope_index_inputs(segments: list[object]) -> tuple[torch.Tensor, list[list[int]], list[list[int]]]:
    kinds: list[int] = []
    images, videos = [], []
    for segment in segments:
        if isinstance(segment, int):
            kinds += [0] * segment
        else:
            t, h, w = segment  # type: ignore[misc]
            kind = 1 if t == 1 else 2
            kinds += [kind] * (t * (h // 2) * (w // 2))
            (images if kind == 1 else videos).append([t, h, w])
    return torch.tensor([kinds]), images, videos


@pytest.mark.parametrize(("segments", "seconds"), [
    ([3, (1, 4, 6), 2], None),                                # text + image: no time to align
    ([2, (4, 4, 4), 3], [1.0]),                               # text + video, 1 s per temporal patch
    ([2, (4, 4, 4), 3], None),                                # the default: 1 s each
    ([1, (1, 2, 10), 2, (6, 4, 2), 1, (3, 6, 6), 2], [0.5, 1.5]),   # image, two videos at other rates
    ([2, (5, 2, 2), 1, (1, 4, 4), 1, (2, 4, 4), 3], [0.25, 2.0]),   # a slow video, an image, a short video
])
def test_time_aligned_mrope_positions_match_qwen2_5_vl(qwen2_5_vl_model: object, segments: list[object],
                                                        seconds: list[float] | None) -> None:
    type_ids, images, videos = _rope_index_inputs(segments)
    want, _ = qwen2_5_vl_model.get_rope_index(  # type: ignore[attr-defined]
        torch.zeros_like(type_ids), type_ids, image_grid_thw=torch.tensor(images) if images else None,
        video_grid_thw=torch.tensor(videos) if videos else None, second_per_grid_ts=seconds)
    got = mrope_positions(segments, tokens_per_second=4, second_per_grid_ts=seconds)  # type: ignore[arg-type]
    assert torch.equal(got, want[:, 0])
    if videos:  # Qwen2-VL's ids (one step per frame) are not these
        assert not torch.equal(mrope_positions(segments), want[:, 0])  # type: ignore[arg-type]


def _time_aligned_loop(segments: list[object], rate: float, seconds: list[float]) -> list[list[int]]:
    """The ids of Qwen2.5-VL's rule written out token by token, in exact rational arithmetic."""
    ids: list[list[int]] = [[], [], []]
    start, video = 0, iter(seconds)
    for segment in segments:
        if isinstance(segment, int):
            for i in range(segment):
                for axis in range(3):
                    ids[axis].append(start + i)
            start += segment
            continue
        t, h, w = segment  # type: ignore[misc]
        step = Fraction(rate) * Fraction(next(video)) if t > 1 else Fraction(1)
        for i in range(t):
            for r in range(h // 2):
                for c in range(w // 2):
                    ids[0].append(start + int(i * step))  # floor: i * step >= 0
                    ids[1].append(start + r)
                    ids[2].append(start + c)
        start += max(h, w) // 2
    return ids


@pytest.mark.parametrize("rate", [1, Fraction(5, 2), 4, 3])
def test_time_aligned_ids_match_the_exact_loop(rate: float) -> None:
    # 1/3 s per temporal patch (temporal_patch_size 2 at 6 fps): i * rate / 3 hits integers exactly
    segments: list[object] = [3, (6, 4, 2), 2, (1, 2, 2), (3, 2, 4), 1, (9, 2, 2)]
    seconds = [Fraction(1, 3), Fraction(3, 4), Fraction(2, 3)]
    assert mrope_positions(segments, tokens_per_second=rate,  # type: ignore[arg-type]
                           second_per_grid_ts=seconds).tolist() == _time_aligned_loop(segments, rate, seconds)


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"second_per_grid_ts": [1.0]}, ValueError, "second_per_grid_ts needs tokens_per_second"),
    ({"tokens_per_second": 0}, ValueError, "tokens_per_second"),
    ({"tokens_per_second": 2, "second_per_grid_ts": [1.0, 2.0]}, ValueError, "one entry per video"),
    ({"tokens_per_second": 2, "second_per_grid_ts": [-1.0]}, ValueError, r"second_per_grid_ts\[0\]"),
    ({"tokens_per_second": 2, "second_per_grid_ts": "1"}, TypeError, "second_per_grid_ts"),
    ({"tokens_per_second": 2, "second_per_grid_ts": [1e300]}, ValueError, "second_per_grid_ts"),
])
def test_time_aligned_bad_input(kwargs: dict[str, object], error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        mrope_positions([2, (3, 4, 4)], **kwargs)  # type: ignore[arg-type]
