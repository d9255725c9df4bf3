"""Tests of posenc.rope_images and posenc.rope_video: float64 references written from the
equations, and live parity with transformers (DINOv3, V-JEPA 2, Pixtral) and diffusers (FLUX,
Wan, HunyuanVideo, Cosmos) on tiny configs, without weights."""

from __future__ import annotations

import math

import pytest
import torch

from posenc.rope_images import (
    RopeMixed,
    apply_dinov3_rope,
    apply_pixtral_rope,
    apply_rope_head_thirds,
    augment_patch_coordinates,
    patch_center_coordinates,
)
from posenc.rope_nd import grid_positions
from posenc.rope_video import (
    apply_axes_rope,
    axes_frequencies,
    flux_position_ids,
    ntk_axis_factor,
    riflex_frequencies,
    riflex_intrinsic_index,
    video_axes_dims,
)


def rotate_pairs_reference(x: torch.Tensor, angles: list[list[float]], pairs: list[tuple[int, int]]) -> torch.Tensor:
    """x [tokens, d] float64 with pair p = (i, j) of token t turned by angles[t][p], one entry at a time."""
    out = x.clone().double()
    for t in range(x.shape[0]):
        for p, (i, j) in enumerate(pairs):
            c, s = math.cos(angles[t][p]), math.sin(angles[t][p])
            out[t, i] = x[t, i] * c - x[t, j] * s
            out[t, j] = x[t, j] * c + x[t, i] * s
    return out


# ---------------------------------------------------------------- references from the equations

def test_patch_centres_are_the_normalised_middles_of_the_cells():
    coords = patch_center_coordinates(3, 5)
    for r in range(3):
        for c in range(5):
            assert coords[r * 5 + c].tolist() == pytest.approx([-1 + (2 * r + 1) / 3, -1 + (2 * c + 1) / 5], abs=1e-15)
    # every grid spans the same square: its extreme centres approach +-1 as the grid grows
    assert float(patch_center_coordinates(64, 64).abs().max()) == pytest.approx(1 - 1 / 64)


def test_dinov3_rope_matches_the_equation():
    torch.manual_seed(0)
    d, base = 8, 100.0
    coords = augment_patch_coordinates(patch_center_coordinates(2, 3), shift=0.1, jitter=1.5, rescale=2.0,
                                       generator=torch.Generator().manual_seed(3))
    x = torch.randn(6, d, dtype=torch.float64)
    q = d // 4
    angles = [[2 * math.pi * float(coords[t, axis]) * base ** (-4 * k / d) for axis in (0, 1) for k in range(q)]
              for t in range(6)]
    expected = rotate_pairs_reference(x, angles, [(i, i + d // 2) for i in range(d // 2)])
    torch.testing.assert_close(apply_dinov3_rope(x, coords, base=base), expected, rtol=0, atol=1e-12)


def test_augmentation_draws_in_transformers_order_and_bounds():
    coords = patch_center_coordinates(4, 4)
    out = augment_patch_coordinates(coords, jitter=2.0, generator=torch.Generator().manual_seed(1))
    factors = out / coords  # one factor per axis, in [1/2, 2]
    assert torch.allclose(factors[:, 0], factors[0, 0]) and torch.allclose(factors[:, 1], factors[0, 1])
    assert float(factors[0, 0]) != pytest.approx(float(factors[0, 1]))
    assert bool(((factors >= 0.5) & (factors <= 2.0)).all())
    shifted = augment_patch_coordinates(coords, shift=0.25, generator=torch.Generator().manual_seed(1))
    offset = shifted - coords
    assert torch.allclose(offset, offset[0]) and bool((offset.abs() <= 0.25).all())
    assert torch.equal(augment_patch_coordinates(coords), coords)  # nothing asked, nothing changed


def test_pixtral_rope_matches_the_equation():
    d, base = 8, 10000.0
    torch.manual_seed(1)
    x = torch.randn(6, d, dtype=torch.float64)
    pos = grid_positions(2, 3)
    theta = [base ** (-2 * j / d) for j in range(d // 2)]
    angles = [[float(pos[t, 0]) * theta[2 * k] for k in range(d // 4)] +
              [float(pos[t, 1]) * theta[2 * k + 1] for k in range(d // 4)] for t in range(6)]
    expected = rotate_pairs_reference(x, angles, [(i, i + d // 2) for i in range(d // 2)])
    torch.testing.assert_close(apply_pixtral_rope(x, pos, base=base), expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("head_dim", [12, 14, 20])
def test_head_thirds_rotation_matches_the_equation_and_passes_the_rest(head_dim):
    torch.manual_seed(2)
    x = torch.randn(8, head_dim, dtype=torch.float64)
    pos = grid_positions(2, 2, 2)
    w = 2 * ((head_dim // 3) // 2)
    angles = [[float(pos[t, a]) * 10000.0 ** (-2 * j / w) for a in range(3) for j in range(w // 2)] for t in range(8)]
    pairs = [(a * w + 2 * j, a * w + 2 * j + 1) for a in range(3) for j in range(w // 2)]
    expected = rotate_pairs_reference(x, angles, pairs)
    out = apply_rope_head_thirds(x, pos, pairing="rotation")
    torch.testing.assert_close(out, expected, rtol=0, atol=1e-12)
    assert torch.equal(out[:, 3 * w:], x[:, 3 * w:])


def test_vjepa2_pairing_is_not_a_rotation_and_the_fix_is():
    torch.manual_seed(3)
    q, k = torch.randn(1, 12, dtype=torch.float64), torch.randn(1, 12, dtype=torch.float64)
    def score(a, b, pairing):
        pa, pb = torch.tensor([[a, 0, 0]]), torch.tensor([[b, 0, 0]])
        return float(apply_rope_head_thirds(q, pa, pairing=pairing) @ apply_rope_head_thirds(k, pb, pairing=pairing).T)
    assert score(3, 1, "rotation") == pytest.approx(score(7, 5, "rotation"), abs=1e-12)  # only the offset counts
    assert abs(score(3, 1, "vjepa2") - score(7, 5, "vjepa2")) > 1e-3  # the released pairing is not relative
    norm = apply_rope_head_thirds(q, torch.tensor([[5, 0, 0]])).norm()
    assert abs(float(norm - q.norm())) > 1e-6  # nor norm-preserving


def test_rope_mixed_matches_the_equation_and_is_relative():
    layer = RopeMixed(8, 2, base=10.0, generator=torch.Generator().manual_seed(0))
    f = layer.frequencies.detach().double()  # [2 (row, col), heads, 4]
    # initialisation as described: magnitudes 10^(-4k/8) twice, along phi and phi + pi/2
    for h in range(2):
        speeds = torch.hypot(f[0, h], f[1, h])
        torch.testing.assert_close(speeds, torch.tensor([1.0, 10 ** -0.5] * 2, dtype=torch.float64), atol=1e-6, rtol=0)
        phi = torch.atan2(f[0, h], f[1, h])
        assert math.cos(float(phi[2] - phi[0])) == pytest.approx(0.0, abs=1e-6)  # the two directions are at right angles
    torch.manual_seed(4)
    x = torch.randn(1, 2, 4, 8, dtype=torch.float64)
    pos = torch.tensor([[0, 0], [1, 2], [3, 1], [2, 2]])
    with torch.no_grad():
        out = layer(x, pos)
    for h in range(2):
        angles = [[float(pos[t, 0] * f[0, h, j] + pos[t, 1] * f[1, h, j]) for j in range(4)] for t in range(4)]
        expected = rotate_pairs_reference(x[0, h], angles, [(2 * j, 2 * j + 1) for j in range(4)])
        torch.testing.assert_close(out[0, h], expected, rtol=0, atol=1e-6)
    # relative: the same 2-D offset gives the same score wherever it sits
    with torch.no_grad():
        a = layer(x[:, :, :2], torch.tensor([[0, 0], [1, 2]]))
        b = layer(x[:, :, :2], torch.tensor([[5, 3], [6, 5]]))
    torch.testing.assert_close((a[..., 0, :] * a[..., 1, :]).sum(-1), (b[..., 0, :] * b[..., 1, :]).sum(-1))


def test_rope_mixed_frequencies_learn():
    layer = RopeMixed(8, 2, generator=torch.Generator().manual_seed(0))
    x = torch.randn(1, 2, 3, 8)
    layer(x, torch.tensor([[0, 0], [1, 0], [0, 1]])).sum().backward()
    assert layer.frequencies.grad is not None and float(layer.frequencies.grad.abs().sum()) > 0


def test_flux_ids_and_axes_rope_match_the_equation():
    ids = flux_position_ids(3, 2, 2)
    assert ids[:3].eq(0).all() and ids[3:].tolist() == [[0, 0, 0], [0, 0, 1], [0, 1, 0], [0, 1, 1]]
    dims = (4, 6, 6)
    torch.manual_seed(5)
    x = torch.randn(7, 16, dtype=torch.float64)
    angles = [[float(ids[t, a]) * 10000.0 ** (-2 * k / dims[a]) for a in range(3) for k in range(dims[a] // 2)]
              for t in range(7)]
    expected = rotate_pairs_reference(x, angles, [(2 * i, 2 * i + 1) for i in range(8)])
    torch.testing.assert_close(apply_axes_rope(x, ids, axes_dims=dims), expected, rtol=0, atol=1e-12)


def test_text_tokens_are_unrotated_in_flux():
    x = torch.randn(5, 16, dtype=torch.float64)
    out = apply_axes_rope(x, flux_position_ids(5, 1, 1)[:5], axes_dims=(4, 6, 6))
    assert torch.equal(out, x)


def test_video_axes_dims_and_ntk():
    assert video_axes_dims(128) == (44, 42, 42) and sum(video_axes_dims(96)) == 96
    theta = axes_frequencies((8,), base=100.0, ntk_factors=[ntk_axis_factor(4.0, 8)])
    plain = axes_frequencies((8,), base=100.0)
    assert float(theta[0]) == 1.0  # the fastest pair keeps its speed
    assert float(plain[-1] / theta[-1]) == pytest.approx(4.0)  # the slowest turns 4 times slower


def test_riflex_rule():
    theta = axes_frequencies((16,), base=256.0)
    periods = [2 * math.pi * 256.0 ** (2 * j / 16) for j in range(8)]
    # identify_k's example (thu-ml/RIFLEx riflex_utils.py): HunyuanVideo, b=256, d=16, repetition
    # near latent frame N=48 -> 1-based k = 4, period 50; its rule rounds each period first
    rounded = [round(p) for p in periods]
    assert min(range(8), key=lambda j: abs(rounded[j] - 48)) + 1 == 4 and rounded[3] == 50
    assert riflex_intrinsic_index(theta, 48) == min(range(8), key=lambda j: abs(periods[j] - 48)) == 3
    # the README runs CogVideoX (time axis: 16 features, base 10000) with --k 2 --N_k 20
    cog = axes_frequencies((16,), base=10000.0)
    assert round(2 * math.pi / float(cog[1])) == 20 and riflex_intrinsic_index(cog, 20) == 1
    new = riflex_frequencies(theta, index=3, length=100, margin=1.0)
    assert 2 * math.pi / float(new[3]) == pytest.approx(100.0)  # one period covers the new length
    assert torch.equal(torch.cat((new[:3], new[4:])), torch.cat((theta[:3], theta[4:])))
    slow = riflex_frequencies(theta, index=7, length=10)  # already slower: unchanged
    assert torch.equal(slow, theta)


# ---------------------------------------------------------------- bad input

@pytest.mark.parametrize("call, name", [
    (lambda: patch_center_coordinates(0, 3), "height"),
    (lambda: patch_center_coordinates(3, -1), "width"),
    (lambda: flux_position_ids(2, 0, 4), "height"),
    (lambda: flux_position_ids(-1, 2, 4), "text_tokens"),
    (lambda: apply_axes_rope(torch.ones(2, 8), torch.zeros(2, 3), axes_dims=(4, 4, 4)), "axes_dims"),
    (lambda: apply_axes_rope(torch.ones(2, 8), torch.zeros(2, 2), axes_dims=(4, 3)), "axes_dims"),
    (lambda: apply_axes_rope(torch.ones(2, 8), torch.zeros(2, 2), axes_dims=(4, 4), theta=torch.ones(3)), "theta"),
    (lambda: apply_axes_rope(torch.ones(2, 8), torch.tensor([[0.0, float("nan")], [0, 0]]), axes_dims=(4, 4)),
     "positions"),
    (lambda: apply_dinov3_rope(torch.ones(2, 8), torch.tensor([[0.0, float("inf")], [0, 0]])), "coords"),
    (lambda: augment_patch_coordinates(torch.tensor([[float("nan"), 0.0]])), "coords"),
    (lambda: augment_patch_coordinates(patch_center_coordinates(2, 2), jitter=0.5), "jitter"),
    (lambda: apply_dinov3_rope(torch.ones(2, 6), patch_center_coordinates(1, 2)), "x"),
    (lambda: apply_rope_head_thirds(torch.ones(2, 4), torch.zeros(2, 3)), "x"),
    (lambda: apply_rope_head_thirds(torch.ones(2, 12), torch.zeros(2, 3), pairing="x"), "pairing"),
    (lambda: axes_frequencies((4, 4), ntk_factors=[1.0]), "ntk_factors"),
    (lambda: riflex_frequencies(torch.ones(4), index=4, length=10), "index"),
    (lambda: riflex_intrinsic_index(torch.tensor([1.0, float("nan")]), 10), "theta"),
    (lambda: video_axes_dims(7), "head_dim"),
    (lambda: RopeMixed(6, 2), "head_dim"),
])
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# ---------------------------------------------------------------- live parity: transformers

def test_dinov3_live():
    from transformers import DINOv3ViTConfig
    from transformers.models.dinov3_vit import modeling_dinov3_vit as m

    config = DINOv3ViTConfig(hidden_size=32, num_attention_heads=2, image_size=32, patch_size=8,
                             pos_embed_shift=0.1, pos_embed_jitter=1.5, pos_embed_rescale=2.0)
    rope = m.DINOv3ViTRopePositionEmbedding(config).eval()
    pixels = torch.zeros(1, 3, 24, 40)  # a 3 x 5 grid, not the configured 4 x 4
    cos, sin = rope(pixels)
    torch.manual_seed(6)
    q = torch.randn(1, 2, 1 + 15, 16)  # a class token first
    k = torch.randn(1, 2, 1 + 15, 16)
    q_ref, k_ref = m.apply_rotary_pos_emb(q, k, cos, sin)
    coords = patch_center_coordinates(3, 5)
    torch.testing.assert_close(apply_dinov3_rope(q[:, :, 1:], coords), q_ref[:, :, 1:], rtol=1e-5, atol=2e-5)
    torch.testing.assert_close(q_ref[:, :, :1], q[:, :, :1])  # the class token is left alone
    # training: the same seed gives the same shift, jitter and rescale
    torch.manual_seed(11)
    theirs = m.augment_patches_center_coordinates(coords.float(), shift=0.1, jitter=1.5, rescale=2.0)
    ours = augment_patch_coordinates(coords, shift=0.1, jitter=1.5, rescale=2.0,
                                     generator=torch.Generator().manual_seed(11))
    torch.testing.assert_close(ours.float(), theirs, rtol=1e-6, atol=1e-6)


def test_vjepa2_live():
    from transformers import VJEPA2Config
    from transformers.models.vjepa2 import modeling_vjepa2 as m

    config = VJEPA2Config(crop_size=16, patch_size=4, frames_per_clip=4, tubelet_size=2, hidden_size=40,
                          num_attention_heads=2)
    attention = m.VJEPA2RopeAttention(config, hidden_size=40, num_attention_heads=2)
    torch.manual_seed(7)
    tokens = 2 * 4 * 4
    qk = torch.randn(1, 2, tokens, 20)
    frame, row, col = attention.get_position_ids(torch.zeros(1, tokens, 40))
    theirs = attention.apply_rotary_embeddings(qk, (frame, row, col))
    pos = grid_positions(2, 4, 4)
    torch.testing.assert_close(torch.stack((frame, row, col), -1), pos)  # its ids: (frame, row, column)
    torch.testing.assert_close(apply_rope_head_thirds(qk, pos), theirs, rtol=1e-5, atol=1e-5)
    assert not torch.allclose(apply_rope_head_thirds(qk, pos, pairing="rotation"), theirs, atol=1e-3)
    # its ids come from the token index and the configured 4 x 4 grid, not from the input:
    # one frame of 6 x 6 patches gets frames 0 to 2 and rows that wrap every 4 patches
    frame, row, col = attention.get_position_ids(torch.zeros(1, 36, 40))
    assert frame.max() == 2 and row.max() == 3 and col.max() == 3
    assert not torch.equal(torch.stack((frame, row, col), -1), grid_positions(1, 6, 6))


def test_pixtral_live():
    from transformers import PixtralVisionConfig
    from transformers.models.pixtral import modeling_pixtral as m

    config = PixtralVisionConfig(hidden_size=64, num_attention_heads=4, intermediate_size=64, num_hidden_layers=1,
                                 image_size=64, patch_size=8)
    rope = m.PixtralVisionRotaryEmbedding(config)
    pos = grid_positions(3, 5)
    torch.manual_seed(8)
    q, k = torch.randn(1, 4, 15, 16), torch.randn(1, 4, 15, 16)
    cos, sin = rope(q, pos)
    q_ref, _ = m.apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=0)
    base = config.rope_parameters["rope_theta"]
    torch.testing.assert_close(apply_pixtral_rope(q, pos, base=base), q_ref, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- live parity: diffusers

def _diffusers_rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, unbind: int = -1) -> torch.Tensor:
    from diffusers.models.embeddings import apply_rotary_emb
    return apply_rotary_emb(x, (cos, sin), use_real=True, use_real_unbind_dim=unbind)


def test_flux_live():
    import warnings

    from diffusers.models.transformers.transformer_flux import FluxPosEmbed
    from diffusers.pipelines.flux.pipeline_flux import FluxPipeline

    image_ids = FluxPipeline._prepare_latent_image_ids(1, 3, 4, "cpu", torch.float32)
    ids = flux_position_ids(5, 3, 4)
    torch.testing.assert_close(ids[5:].float(), image_ids)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cos, sin = FluxPosEmbed(theta=10000, axes_dim=[4, 6, 6])(ids.float())
    torch.manual_seed(9)
    q = torch.randn(1, 2, 17, 16)
    torch.testing.assert_close(apply_axes_rope(q, ids, axes_dims=(4, 6, 6)), _diffusers_rotate(q, cos, sin),
                               rtol=1e-5, atol=1e-5)


def test_wan_live():
    from diffusers.models.transformers.transformer_wan import WanRotaryPosEmbed

    head_dim = 24
    rope = WanRotaryPosEmbed(head_dim, (1, 2, 2), max_seq_len=64)
    cos, sin = rope(torch.zeros(1, 4, 3, 8, 6))  # 3 frames, a 4 x 3 grid of 2 x 2 patches
    cos, sin = cos[0, :, 0], sin[0, :, 0]
    torch.manual_seed(10)
    q = torch.randn(1, 2, 36, head_dim)
    ours = apply_axes_rope(q, grid_positions(3, 4, 3), axes_dims=video_axes_dims(head_dim))
    torch.testing.assert_close(ours, _diffusers_rotate(q, cos.float(), sin.float()), rtol=1e-5, atol=1e-5)


def test_hunyuan_video_live():
    from diffusers.models.transformers.transformer_hunyuan_video import HunyuanVideoRotaryPosEmbed

    dims = [4, 6, 6]
    cos, sin = HunyuanVideoRotaryPosEmbed(patch_size=2, patch_size_t=1, rope_dim=dims, theta=256.0)(
        torch.zeros(1, 4, 3, 8, 6))
    torch.manual_seed(12)
    q = torch.randn(1, 2, 36, 16)
    ours = apply_axes_rope(q, grid_positions(3, 4, 3), axes_dims=dims, base=256.0)
    torch.testing.assert_close(ours, _diffusers_rotate(q, cos, sin), rtol=1e-5, atol=1e-5)


def test_cosmos_per_axis_ntk_live():
    from diffusers.models.transformers.transformer_cosmos import CosmosRotaryPosEmbed

    head_dim, scale = 24, (2.0, 1.5, 3.0)
    rope = CosmosRotaryPosEmbed(head_dim, max_size=(8, 16, 16), patch_size=(1, 2, 2), rope_scale=scale)
    cos, sin = rope(torch.zeros(1, 4, 3, 8, 6))
    dims = video_axes_dims(head_dim)
    theta = axes_frequencies(dims, ntk_factors=[ntk_axis_factor(s, d) for s, d in zip(scale, dims)])
    torch.manual_seed(13)
    q = torch.randn(1, 2, 36, head_dim)
    ours = apply_axes_rope(q, grid_positions(3, 4, 3), axes_dims=dims, theta=theta, layout="half")
    torch.testing.assert_close(ours, _diffusers_rotate(q, cos, sin, unbind=-2), rtol=1e-5, atol=1e-5)


def test_cogvideox_live():
    from diffusers.models.embeddings import get_3d_rotary_pos_embed

    head_dim = 32  # CogVideoX's split: time head_dim / 4, height and width 3 head_dim / 8 each
    cos, sin = get_3d_rotary_pos_embed(head_dim, ((0, 0), (4, 3)), (4, 3), 3)  # the crop equal to the grid
    torch.manual_seed(14)
    q = torch.randn(1, 2, 36, head_dim)
    ours = apply_axes_rope(q, grid_positions(3, 4, 3), axes_dims=(8, 12, 12))
    torch.testing.assert_close(ours, _diffusers_rotate(q, cos, sin), rtol=1e-5, atol=1e-5)


def test_llama4_vision_live():
    from transformers import Llama4VisionConfig
    from transformers.models.llama4 import modeling_llama4 as m

    config = Llama4VisionConfig(hidden_size=32, num_attention_heads=2, image_size=16, patch_size=4,
                                num_hidden_layers=1, intermediate_size=32, vision_output_dim=32)
    freqs = m.Llama4VisionRotaryEmbedding(config)(torch.zeros(1))  # 16 patches, then the class token
    torch.manual_seed(15)
    q = torch.randn(1, 17, 2, 16)  # [batch, tokens, heads, head_dim]
    theirs, _ = m.vision_apply_rotary_emb(q, q, freqs)
    rows, cols = grid_positions(4, 4).unbind(-1)
    # the column first, then the row, both counted from 1; the class token (last) at 0: unrotated
    ids = torch.cat((torch.stack((cols + 1, rows + 1), -1), torch.zeros(1, 2, dtype=torch.long)))
    base = config.rope_parameters["rope_theta"]
    ours = apply_axes_rope(q.transpose(1, 2), ids, axes_dims=(8, 8), base=base).transpose(1, 2)
    torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-5)


def test_flux2_live():
    from diffusers.models.transformers.transformer_flux2 import Flux2PosEmbed
    from diffusers.pipelines.flux2.pipeline_flux2 import Flux2Pipeline

    ids = flux_position_ids(5, 3, 4, version=2)
    assert ids[:5].tolist() == [[0, 0, 0, i] for i in range(5)]  # text counts on the fourth axis
    torch.testing.assert_close(ids[:5], Flux2Pipeline._prepare_text_ids(torch.zeros(1, 5, 8))[0])
    torch.testing.assert_close(ids[5:], Flux2Pipeline._prepare_latent_ids(torch.zeros(1, 8, 3, 4))[0])
    dims = (4, 4, 4, 4)
    embed = Flux2PosEmbed(theta=2000, axes_dim=list(dims))
    cos_text, sin_text = embed(ids[:5])
    cos_image, sin_image = embed(ids[5:])
    cos, sin = torch.cat((cos_text, cos_image)), torch.cat((sin_text, sin_image))  # text first, as the model
    torch.manual_seed(16)
    q = torch.randn(1, 2, 17, 16)
    ours = apply_axes_rope(q, ids, axes_dims=dims, base=2000.0)
    torch.testing.assert_close(ours, _diffusers_rotate(q, cos, sin), rtol=1e-5, atol=1e-5)
