"""xPos: against a float64 loop written from the paper's equations and the authors' centring,
its relative property, its decay, RoPE when the decay is off, and argument checks.

Reference: Sun et al. (2022), "A Length-Extrapolatable Transformer" (arXiv 2212.10554); the
centring of the scale positions follows the authors' torchscale code: for a sequence of length
L the scale uses positions ``(-L) // 2 .. (-L) // 2 + L - 1`` (Python floor division) while the
rotation uses ``0 .. L - 1``.
"""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc import RotaryEmbedding, XPos, apply_rope
from posenc.xpos import xpos_zeta


# ---------------------------------------------------------------- independent reference (float64)
def ref_pairs(dim: int, layout: str) -> list[tuple[int, int]]:
    if layout == "half":
        return [(i, i + dim // 2) for i in range(dim // 2)]
    return [(2 * i, 2 * i + 1) for i in range(dim // 2)]


def ref_transform(vector: list[float], angle_position: float, scale_position: float, *,
                  downscale: bool, layout: str, scale_base: float = 512.0) -> list[float]:
    """Rotate pair i by angle_position * theta_i, then multiply it by zeta_i^(+-scale_position / B)."""
    dim = len(vector)
    out = list(vector)
    for i, (a, b) in enumerate(ref_pairs(dim, layout)):
        theta = 10000.0 ** (-2.0 * i / dim)
        zeta = (i / (dim / 2) + 0.4) / (1 + 0.4)
        exponent = scale_position / scale_base
        factor = zeta ** (-exponent if downscale else exponent)
        c, s = math.cos(angle_position * theta), math.sin(angle_position * theta)
        out[a] = (vector[a] * c - vector[b] * s) * factor
        out[b] = (vector[a] * s + vector[b] * c) * factor
    return out


def ref_xpos(x: torch.Tensor, length: int, *, downscale: bool, layout: str) -> torch.Tensor:
    """torchscale's convention for x [seq, dim] holding the LAST seq of `length` positions."""
    min_pos = (-length) // 2
    rows = []
    first = length - x.shape[0]
    for t in range(x.shape[0]):
        n = first + t
        rows.append(ref_transform(x[t].double().tolist(), n, n + min_pos, downscale=downscale, layout=layout))
    return torch.tensor(rows, dtype=torch.float64)


# ---------------------------------------------------------------- the formula
def test_zeta_values() -> None:
    dim = 16
    expected = [(i / (dim / 2) + 0.4) / 1.4 for i in range(dim // 2)]
    assert xpos_zeta(dim).tolist() == pytest.approx(expected, rel=1e-15)
    assert float(xpos_zeta(dim).max()) < 1 and float(xpos_zeta(dim).min()) == pytest.approx(0.4 / 1.4)


@pytest.mark.parametrize("layout", ["half", "interleaved"])
@pytest.mark.parametrize("length", [1, 6, 7])
def test_matches_reference_with_torchscale_centring(layout: str, length: int) -> None:
    torch.manual_seed(length)
    q, k = torch.randn(length, 8, dtype=torch.float64), torch.randn(length, 8, dtype=torch.float64)
    q_x, k_x = XPos(8, layout=layout)(q, k)
    assert torch.allclose(q_x, ref_xpos(q, length, downscale=False, layout=layout), atol=1e-12)
    assert torch.allclose(k_x, ref_xpos(k, length, downscale=True, layout=layout), atol=1e-12)


@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_decoding_query_uses_the_centre_of_all_keys(layout: str) -> None:
    # torchscale decoding: one new query with offset = k_len - 1, keys re-scaled over k_len.
    torch.manual_seed(1)
    q, k = torch.randn(1, 16, dtype=torch.float64), torch.randn(9, 16, dtype=torch.float64)
    q_x, k_x = XPos(16, layout=layout)(q, k)
    assert torch.allclose(q_x, ref_xpos(q, 9, downscale=False, layout=layout), atol=1e-12)
    assert torch.allclose(k_x, ref_xpos(k, 9, downscale=True, layout=layout), atol=1e-12)


def test_float32_and_half_inputs_close_to_reference() -> None:
    torch.manual_seed(2)
    q, k = torch.randn(40, 8), torch.randn(40, 8)
    xpos = XPos(8, scale_base=64.0)
    reference = ref_transform(q[39].double().tolist(), 39, 39 - 20, downscale=False, layout="half", scale_base=64.0)
    q32, _ = xpos(q, k)
    assert q32.dtype == torch.float32
    assert torch.allclose(q32[39].double(), torch.tensor(reference, dtype=torch.float64), atol=1e-5)
    q16, k16 = xpos.half()(q.half(), k.half())
    assert q16.dtype == torch.float16 and bool(torch.isfinite(k16).all())
    assert torch.allclose(q16[39].double(), torch.tensor(reference, dtype=torch.float64), atol=2e-2)


# ---------------------------------------------------------------- properties the page claims
@settings(max_examples=30, deadline=None)
@given(m=st.integers(0, 3000), n=st.integers(0, 3000), shift=st.integers(-1000, 1000),
       centre=st.integers(-2000, 2000), seed=st.integers(0, 2**16))
def test_score_depends_on_m_minus_n_only(m: int, n: int, shift: int, centre: int, seed: int) -> None:
    torch.manual_seed(seed)
    q, k = torch.randn(1, 8, dtype=torch.float64), torch.randn(1, 8, dtype=torch.float64)
    xpos = XPos(8)

    def score(qm: int, kn: int, c: float) -> float:
        q_x = xpos.queries(q, torch.tensor([qm]), centre=c)
        k_x = xpos.keys(k, torch.tensor([kn]), centre=c)
        return float((q_x * k_x).sum())

    base = score(m, n, float(centre))
    assert score(m + shift, n + shift, float(centre)) == pytest.approx(base, rel=1e-9, abs=1e-9)
    assert score(m, n, 0.0) == pytest.approx(base, rel=1e-9, abs=1e-9)  # the centre cancels


def test_score_is_rope_score_times_zeta_power_per_pair() -> None:
    torch.manual_seed(3)
    dim, m, n = 8, 300, 40
    q, k = torch.randn(1, dim, dtype=torch.float64), torch.randn(1, dim, dtype=torch.float64)
    xpos = XPos(dim, scale_base=512.0)
    q_x = xpos.queries(q, torch.tensor([m]), centre=0.0)
    k_x = xpos.keys(k, torch.tensor([n]), centre=0.0)
    q_r, k_r = apply_rope(q, torch.tensor([m])), apply_rope(k, torch.tensor([n]))
    expected = 0.0
    for i, (a, b) in enumerate(ref_pairs(dim, "half")):
        zeta = (i / (dim / 2) + 0.4) / 1.4
        expected += zeta ** ((m - n) / 512.0) * float(q_r[0, a] * k_r[0, a] + q_r[0, b] * k_r[0, b])
    assert float((q_x * k_x).sum()) == pytest.approx(expected, rel=1e-10)


def test_decay_with_distance_for_a_query_equal_to_its_key() -> None:
    # q = k: RoPE's score oscillates around its mean; xPos's envelope shrinks with distance.
    dim = 32
    v = torch.ones(1, dim, dtype=torch.float64)
    xpos = XPos(dim)
    scores = []
    for distance in (0, 256, 1024, 4096):
        q_x = xpos.queries(v, torch.tensor([distance]), centre=0.0)
        k_x = xpos.keys(v, torch.tensor([0]), centre=0.0)
        q_plain = xpos.queries(v, torch.tensor([0]), centre=0.0)
        # remove the rotation: compare the scale factors alone (norm ratio per pair)
        scores.append(float(q_x.norm() / q_plain.norm()))
        assert float(k_x.norm()) == pytest.approx(float(v.norm()))
    assert scores[0] == pytest.approx(1.0) and all(a > b for a, b in zip(scores, scores[1:], strict=False))


@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_infinite_scale_base_is_rope(layout: str) -> None:
    torch.manual_seed(4)
    q, k = torch.randn(2, 3, 7, 16), torch.randn(2, 3, 7, 16)
    positions = torch.tensor([0, 3, 5, 9, 100, 2000, 4095])
    q_x, k_x = XPos(16, scale_base=math.inf, layout=layout)(q, k, positions)
    # two code paths (xPos's tables and apply_rope's): close, not necessarily equal bit for bit
    torch.testing.assert_close(q_x, apply_rope(q, positions, layout=layout), rtol=0, atol=1e-6)
    torch.testing.assert_close(k_x, apply_rope(k, positions, layout=layout), rtol=0, atol=1e-6)
    q_r, k_r = RotaryEmbedding(16, layout=layout)(q, k)
    q_x, k_x = XPos(16, scale_base=math.inf, layout=layout)(q, k)
    assert torch.allclose(q_x, q_r, atol=1e-6) and torch.allclose(k_x, k_r, atol=1e-6)


def test_explicit_positions_default_centre_matches_implicit() -> None:
    torch.manual_seed(5)
    q, k = torch.randn(1, 2, 6, 8), torch.randn(1, 2, 6, 8)
    implicit = XPos(8)(q, k)
    explicit = XPos(8)(q, k, torch.arange(6))
    assert torch.allclose(implicit[0], explicit[0]) and torch.allclose(implicit[1], explicit[1])
    batched = XPos(8)(q, k, torch.arange(6)[None])
    assert torch.allclose(batched[0], explicit[0])


def test_gradients_flow_to_q_and_k() -> None:
    q = torch.randn(4, 8, requires_grad=True)
    k = torch.randn(4, 8, requires_grad=True)
    q_x, k_x = XPos(8)(q, k)
    (q_x @ k_x.T).sum().backward()
    assert q.grad is not None and k.grad is not None
    assert bool(q.grad.abs().sum() > 0) and bool(k.grad.abs().sum() > 0)
    assert list(XPos(8).parameters()) == []  # nothing learnable


# ---------------------------------------------------------------- bad input
def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="dim"):
        XPos(7)
    with pytest.raises(TypeError, match="dim"):
        XPos(8.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="scale_base"):
        XPos(8, scale_base=0.0)
    with pytest.raises(ValueError, match="scale_base"):
        XPos(8, scale_base=-math.inf)
    with pytest.raises(TypeError, match="scale_base"):
        XPos(8, scale_base="512")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="base"):
        XPos(8, base=1.0)
    with pytest.raises(ValueError, match="layout"):
        XPos(8, layout="neox")
    xpos = XPos(8)
    with pytest.raises(ValueError, match="q must have size 8"):
        xpos(torch.randn(3, 6), torch.randn(3, 6))
    with pytest.raises(TypeError, match="q must be a floating-point"):
        xpos(torch.ones(3, 8, dtype=torch.long), torch.randn(3, 8))
    with pytest.raises(TypeError, match="k must be a torch.Tensor"):
        xpos(torch.randn(3, 8), [1.0])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="q must not be longer than k"):
        xpos(torch.randn(4, 8), torch.randn(3, 8))
    with pytest.raises(ValueError, match="positions must have 3 entries"):
        xpos(torch.randn(3, 8), torch.randn(3, 8), torch.arange(4))
    with pytest.raises(TypeError, match="positions must hold"):
        xpos(torch.randn(3, 8), torch.randn(3, 8), torch.ones(3, dtype=torch.bool))
    with pytest.raises(ValueError, match="finite"):
        xpos(torch.randn(3, 8), torch.randn(3, 8), torch.tensor([0.0, float("nan"), 2.0]))
    with pytest.raises(ValueError, match="same seq length"):
        xpos(torch.randn(2, 8), torch.randn(3, 8), torch.arange(2))
    with pytest.raises(ValueError, match="centre"):
        xpos(torch.randn(3, 8), torch.randn(3, 8), centre=float("nan"))
    with pytest.raises(TypeError, match="centre"):
        xpos.queries(torch.randn(3, 8), torch.arange(3), centre=True)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="positions and centre"):  # zeta_0^(+-100) overflows float32
        xpos(torch.randn(3, 8), torch.randn(3, 8), centre=51200.0)
    xpos.queries(torch.randn(3, 8, dtype=torch.float64), torch.arange(3), centre=51200.0)  # fits float64
    with pytest.raises(TypeError, match="downscale"):
        xpos.tables(torch.arange(3), centre=0.0, downscale="no")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="length"):
        xpos.default_centre(-1)


# ---------------------------------------------------------------- partial rotation and the rotation interface


@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_rotary_dim_turns_and_scales_the_first_features_only(layout: str) -> None:
    # issue 22: like RotaryEmbedding's rotary_dim, theta and zeta over the rotated width, the rest copied
    torch.manual_seed(0)
    q = torch.randn(5, 12, dtype=torch.float64)
    positions, centre = torch.tensor([0, 3, 9, 40, 41]), 20.0
    xpos = XPos(12, rotary_dim=8, layout=layout, centre=centre)
    for downscale, out in ((False, xpos.rotate_queries(q, positions)), (True, xpos.rotate_keys(q, positions))):
        for t, m in enumerate(positions.tolist()):
            expected = ref_transform(q[t, :8].tolist(), m, m - centre, downscale=downscale, layout=layout)
            torch.testing.assert_close(out[t, :8], torch.tensor(expected, dtype=torch.float64), rtol=1e-12, atol=1e-12)
        assert torch.equal(out[:, 8:], q[:, 8:])
    plain = XPos(12, rotary_dim=8, scale_base=math.inf, layout=layout)(q, q, positions)[0]
    torch.testing.assert_close(plain, apply_rope(q, positions, rotary_dim=8, layout=layout), rtol=0, atol=1e-12)


def test_rotate_queries_and_keys_use_the_modules_centre() -> None:
    torch.manual_seed(0)
    q, k, positions = torch.randn(1, 2, 4, 8), torch.randn(1, 2, 4, 8), torch.tensor([5, 6, 7, 8])
    xpos = XPos(8, centre=6.0)
    assert torch.equal(xpos.rotate_queries(q, positions), xpos.queries(q, positions, centre=6.0))
    assert torch.equal(xpos.rotate_keys(k, positions), xpos.keys(k, positions, centre=6.0))
    q_x, k_x = xpos(q, k, positions, centre=6.0)  # the pair call, given the same centre
    assert torch.equal(q_x, xpos.rotate_queries(q, positions)) and torch.equal(k_x, xpos.rotate_keys(k, positions))


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"rotary_dim": 10}, ValueError, "rotary_dim must be a positive even integer <= dim"),
    ({"rotary_dim": 3}, ValueError, "rotary_dim must be a positive even integer"),
    ({"centre": math.nan}, ValueError, "centre must be finite"),
])
def test_bad_rotary_dim_or_centre(kwargs: dict[str, object], error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        XPos(8, **kwargs)  # type: ignore[arg-type]
