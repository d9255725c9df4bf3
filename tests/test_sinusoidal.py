"""Sinusoidal encoding: the formula of Vaswani et al. (2017, §3.5), its properties, its module."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc import SinusoidalPositionalEncoding, offset_matrix, sinusoidal_encoding
from posenc.sinusoidal import inverse_frequencies

dims = st.integers(1, 32).map(lambda h: 2 * h)
bases = st.floats(2.0, 1e5)


def reference(positions: list[float], dim: int, base: float = 10000.0) -> torch.Tensor:
    """The paper's formula written out with math.sin / math.cos, one entry at a time (float64)."""
    rows = []
    for pos in positions:
        row = []
        for column in range(dim):
            i = column // 2
            angle = pos / base ** (2 * i / dim)
            row.append(math.sin(angle) if column % 2 == 0 else math.cos(angle))
        rows.append(row)
    return torch.tensor(rows, dtype=torch.float64)


def test_paper_values_d8() -> None:
    # PE(pos=1) for dim 8: angles 1, 0.1, 0.01, 0.001.
    expected = [math.sin(1), math.cos(1), math.sin(0.1), math.cos(0.1),
                math.sin(0.01), math.cos(0.01), math.sin(0.001), math.cos(0.001)]
    table = sinusoidal_encoding(2, 8, dtype=torch.float64)
    torch.testing.assert_close(table[1], torch.tensor(expected, dtype=torch.float64), rtol=0, atol=1e-15)
    torch.testing.assert_close(table[0], torch.tensor([0.0, 1.0] * 4, dtype=torch.float64))


def test_shapes_and_dtypes() -> None:
    assert sinusoidal_encoding(5, 6).shape == (5, 6)
    assert sinusoidal_encoding(5, 6).dtype == torch.float32
    assert sinusoidal_encoding(torch.tensor([0.5, 7.0]), 4, dtype=torch.float64).dtype == torch.float64
    assert sinusoidal_encoding(0, 4).shape == (0, 4)
    assert inverse_frequencies(8).tolist() == pytest.approx([1.0, 0.1, 0.01, 0.001], rel=1e-12)


@settings(max_examples=40, deadline=None)
@given(
    positions=st.lists(st.floats(-1e4, 1e4, allow_nan=False), min_size=1, max_size=6),
    dim=dims,
    base=bases,
)
def test_matches_independent_float64_reference(positions: list[float], dim: int, base: float) -> None:
    table = sinusoidal_encoding(torch.tensor(positions, dtype=torch.float64), dim, base=base, dtype=torch.float64)
    torch.testing.assert_close(table, reference(positions, dim, base), rtol=0, atol=1e-9)


@settings(max_examples=40, deadline=None)
@given(p=st.integers(-5000, 5000), k=st.integers(-5000, 5000), dim=dims, base=bases)
def test_offset_identity(p: int, k: int, dim: int, base: float) -> None:
    pe = sinusoidal_encoding(torch.tensor([p, p + k]), dim, base=base, dtype=torch.float64)
    torch.testing.assert_close(offset_matrix(k, dim, base=base) @ pe[0], pe[1], rtol=0, atol=1e-9)


@settings(max_examples=30, deadline=None)
@given(a=st.floats(-1000, 1000), b=st.floats(-1000, 1000), dim=dims, base=bases)
def test_offset_matrix_is_orthogonal_and_composes(a: float, b: float, dim: int, base: float) -> None:
    m_a, m_b = offset_matrix(a, dim, base=base), offset_matrix(b, dim, base=base)
    torch.testing.assert_close(m_a @ m_a.T, torch.eye(dim, dtype=torch.float64), rtol=0, atol=1e-12)
    torch.testing.assert_close(m_a @ m_b, offset_matrix(a + b, dim, base=base), rtol=0, atol=1e-9)
    torch.testing.assert_close(offset_matrix(-a, dim, base=base), m_a.T, rtol=0, atol=1e-12)


def test_offset_matrix_blocks_are_rotations() -> None:
    m = offset_matrix(3, 4)
    angle = 3 * 10000.0 ** (-2 / 4)
    expected = torch.tensor([[math.cos(3), math.sin(3), 0, 0], [-math.sin(3), math.cos(3), 0, 0],
                             [0, 0, math.cos(angle), math.sin(angle)], [0, 0, -math.sin(angle), math.cos(angle)]],
                            dtype=torch.float64)
    torch.testing.assert_close(m, expected, rtol=0, atol=1e-15)


@settings(max_examples=40, deadline=None)
@given(positions=st.lists(st.floats(-1e5, 1e5), min_size=1, max_size=8), dim=dims, base=bases)
def test_each_sin_cos_pair_has_norm_one(positions: list[float], dim: int, base: float) -> None:
    table = sinusoidal_encoding(torch.tensor(positions, dtype=torch.float64), dim, base=base, dtype=torch.float64)
    pairs = table.reshape(len(positions), dim // 2, 2)
    torch.testing.assert_close(pairs.norm(dim=-1), torch.ones(len(positions), dim // 2, dtype=torch.float64))
    torch.testing.assert_close(table.norm(dim=-1), torch.full((len(positions),), math.sqrt(dim / 2), dtype=torch.float64))


@settings(max_examples=40, deadline=None)
@given(p=st.integers(0, 10000), q=st.integers(0, 10000), shift=st.integers(-10000, 10000), dim=dims, base=bases)
def test_dot_product_depends_only_on_offset(p: int, q: int, shift: int, dim: int, base: float) -> None:
    pe = sinusoidal_encoding(torch.tensor([p, q, p + shift, q + shift]), dim, base=base, dtype=torch.float64)
    torch.testing.assert_close(pe[0] @ pe[1], pe[2] @ pe[3], rtol=0, atol=1e-8)
    # and it equals sum_i cos((p - q) w_i), the closed form
    w = [base ** (-2 * i / dim) for i in range(dim // 2)]
    assert float(pe[0] @ pe[1]) == pytest.approx(sum(math.cos((p - q) * wi) for wi in w), abs=1e-8)


@pytest.mark.parametrize("dim", [2, 64, 512])
def test_float32_output_at_a_million_matches_float64(dim: int) -> None:
    positions = torch.tensor([1e6, 1e6 + 1, 123456.0, 999999.5], dtype=torch.float64)
    got = sinusoidal_encoding(positions, dim, dtype=torch.float32)
    want = reference(positions.tolist(), dim)
    assert got.dtype == torch.float32
    assert float((got.double() - want).abs().max()) <= 1e-6


def test_fractional_positions_follow_the_formula() -> None:
    table = sinusoidal_encoding(torch.tensor([1.5]), 4, dtype=torch.float64)
    torch.testing.assert_close(table, reference([1.5], 4))


# --- the module ---------------------------------------------------------------------------------

def test_module_adds_encoding_and_trains_nothing() -> None:
    layer = SinusoidalPositionalEncoding(8, max_len=16)
    assert list(layer.parameters()) == []
    assert layer.state_dict() == {}  # checkpoints do not depend on max_len
    x = torch.randn(2, 5, 8)
    torch.testing.assert_close(layer(x), x + reference(list(range(5)), 8).float())


def test_module_offset_and_past_max_len() -> None:
    layer = SinusoidalPositionalEncoding(8, max_len=4)
    x = torch.zeros(1, 6, 8)
    torch.testing.assert_close(layer(x, offset=3)[0], reference(list(range(3, 9)), 8).float(), rtol=0, atol=1e-6)


def test_module_scale_input_multiplies_by_sqrt_dim() -> None:
    layer = SinusoidalPositionalEncoding(16, scale_input=True)
    x = torch.ones(1, 3, 16)
    torch.testing.assert_close(layer(x), 4.0 * x + reference([0, 1, 2], 16).float())


def test_module_dropout_only_in_training() -> None:
    torch.manual_seed(0)
    layer = SinusoidalPositionalEncoding(8, dropout=0.5)
    x = torch.ones(1, 20, 8)
    out = layer(x)
    clean = x + reference(list(range(20)), 8).float()
    zeros = out == 0
    assert zeros.any()  # dropout acted on the sum ...
    torch.testing.assert_close(out[~zeros], 2.0 * clean[~zeros])  # ... and rescaled the survivors by 1/(1-p)
    layer.eval()
    torch.testing.assert_close(layer(x), clean)


# --- the module cast to half precision -----------------------------------------------------------

CASTS = {  # name: (cast, the dtype it casts to)
    "half()": (lambda m: m.half(), torch.float16),
    "bfloat16()": (lambda m: m.bfloat16(), torch.bfloat16),
    "to(float16)": (lambda m: m.to(torch.float16), torch.float16),
    "to(bfloat16)": (lambda m: m.to(torch.bfloat16), torch.bfloat16),
    "to(cpu, bfloat16)": (lambda m: m.to("cpu", torch.bfloat16), torch.bfloat16),
}


@pytest.mark.parametrize("cast", CASTS)
@pytest.mark.parametrize("position", [4096, 10**5])
@pytest.mark.parametrize("max_len", [None, 100_003])  # the rows are computed, or come from the table
def test_module_cast_to_half_precision_keeps_the_angles(cast: str, position: int, max_len: int | None) -> None:
    """Cast like a model is cast: the encoding stays within half-precision rounding of float64."""
    apply, dtype = CASTS[cast]
    layer = apply(SinusoidalPositionalEncoding(64, max_len=max_len))
    assert layer.table.dtype == torch.float32  # the cast moved it, and left its precision alone
    x = torch.zeros(1, 3, 64, dtype=dtype)
    out = layer(x, offset=position)
    assert out.dtype == dtype
    want = reference([position, position + 1, position + 2], 64)
    for row, expected in zip(out[0].double(), want):
        assert float((row - expected).norm() / expected.norm()) < 2e-2
    # and per entry: only the rounding of values in [-1, 1] to the half-precision dtype
    assert float((out[0].double() - want).abs().max()) <= 2 * torch.finfo(dtype).eps


def test_a_cast_after_a_move_leaves_the_table_on_its_device() -> None:
    # .cuda() then .half() once sent the table back to the CPU (found on a GPU by tools/cuda_check.py);
    # the meta device stands in for the GPU here.
    layer = SinusoidalPositionalEncoding(8, max_len=16).to("meta")
    for cast in (lambda m: m.half(), lambda m: m.to(torch.bfloat16), lambda m: m.float()):
        layer = cast(layer)
        assert layer.table.device.type == "meta" and layer.table.dtype == torch.float32


def test_a_cast_model_keeps_the_table_in_float32() -> None:
    model = torch.nn.Sequential(SinusoidalPositionalEncoding(8, max_len=16)).to(torch.bfloat16)
    assert model[0].table.dtype == torch.float32
    assert model.float()[0].table.dtype == torch.float32


# --- bad inputs -----------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: sinusoidal_encoding(4, 7), ValueError, "dim must be a positive even integer, got 7"),
        (lambda: sinusoidal_encoding(4, 0), ValueError, "dim must be a positive even integer, got 0"),
        (lambda: sinusoidal_encoding(4, 8.0), TypeError, "dim must be a positive even integer, got float"),
        (lambda: sinusoidal_encoding(-1, 8), ValueError, "positions must be an integer >= 0, got -1"),
        (lambda: sinusoidal_encoding(torch.zeros(2, 2), 8), ValueError, "positions must have 1 dimensions"),
        (lambda: sinusoidal_encoding(torch.tensor([float("nan")]), 8), ValueError, "positions must contain only finite"),
        (lambda: sinusoidal_encoding(4, 8, base=0.0), ValueError, "base must be > 0, got 0.0"),
        (lambda: sinusoidal_encoding(4, 8, dtype=torch.int64), TypeError, "dtype must be a floating-point"),
        (lambda: offset_matrix(1, 5), ValueError, "dim must be a positive even integer, got 5"),
        (lambda: offset_matrix(float("inf"), 4), ValueError, "k must be finite"),
        (lambda: offset_matrix("3", 4), TypeError, "k must be a real number, got str"),
        (lambda: SinusoidalPositionalEncoding(9), ValueError, "dim must be a positive even integer, got 9"),
        (lambda: SinusoidalPositionalEncoding(8, max_len=0), ValueError, "max_len must be an integer >= 1, got 0"),
        (lambda: SinusoidalPositionalEncoding(8, dropout=1.5), ValueError, "dropout must be <= 1.0, got 1.5"),
        (lambda: SinusoidalPositionalEncoding(8)(torch.zeros(2, 8)), ValueError, "x must have 3 dimensions"),
        (lambda: SinusoidalPositionalEncoding(8)(torch.zeros(1, 2, 6)), ValueError, "x must have size 8 in dimension -1"),
        (lambda: SinusoidalPositionalEncoding(8)(torch.zeros(1, 2, 8), offset=-1), ValueError, "offset must be an integer >= 0"),
        # issue 10: encoding() validated nothing
        (lambda: SinusoidalPositionalEncoding(8).encoding(-1), ValueError, "seq_len must be an integer >= 0, got -1"),
        (lambda: SinusoidalPositionalEncoding(8).encoding(3, offset=-2), ValueError, "offset must be an integer >= 0"),
        (lambda: SinusoidalPositionalEncoding(8).encoding(True), TypeError, "seq_len must be an integer, got bool"),
        (lambda: SinusoidalPositionalEncoding(8).encoding(3, offset=10**400), ValueError, "offset must be an integer <="),
        (lambda: SinusoidalPositionalEncoding(8, scale_input="False"), TypeError, "scale_input must be a bool"),
        (lambda: sinusoidal_encoding(10**400, 8), ValueError, "positions must be an integer <= 16777216"),
        (lambda: sinusoidal_encoding(2**24, 2**20), ValueError, "the table .* more than"),
        (lambda: sinusoidal_encoding(torch.tensor([1e300], dtype=torch.float64), 8, base=1e-300), ValueError, "positions x frequencies"),
        (lambda: sinusoidal_encoding(torch.tensor([1 + 1j]), 8), TypeError, "positions must hold integer or real"),
        (lambda: offset_matrix(10**400, 8), ValueError, "k must be finite"),
        (lambda: offset_matrix(1, 2**20), ValueError, "the matrix .* more than"),
    ],
)
def test_bad_inputs(call: object, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        call()  # type: ignore[operator]
