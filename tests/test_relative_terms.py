"""Transformer-XL's and DeBERTa's relative scores (posenc.relative_terms) against float64 loops
written from the papers' formulas: Dai et al. (2019), section 3.3, equation of A^rel; He et al.
(2021), section 3.1, equations (2) to (4)."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc import sinusoidal_encoding
from posenc.relative_terms import (
    deberta_relative_index,
    deberta_scores,
    transformer_xl_scores,
)


def _xl_reference(E: torch.Tensor, Wq: torch.Tensor, WkE: torch.Tensor, WkR: torch.Tensor,
                  u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """A^rel_{ij} = E_i^T Wq^T WkE E_j + E_i^T Wq^T WkR R_{i-j} + u^T WkE E_j + v^T WkR R_{i-j},
    term by term, with R the sinusoid of the offset."""
    n, width = E.shape
    scores = torch.zeros(n, n, dtype=torch.float64)
    for i in range(n):
        for j in range(n):
            R = sinusoidal_encoding(torch.tensor([float(i - j)]), width, dtype=torch.float64)[0]
            a = E[i] @ Wq.T @ WkE @ E[j]
            b = E[i] @ Wq.T @ WkR @ R
            c = u @ WkE @ E[j]
            d = v @ WkR @ R
            scores[i, j] = a + b + c + d
    return scores


@settings(max_examples=20, deadline=None)
@given(n=st.integers(1, 6), seed=st.integers(0, 2**16))
def test_transformer_xl_scores_are_the_four_terms(n: int, seed: int) -> None:
    g = torch.Generator().manual_seed(seed)
    width, d = 8, 4
    E = torch.randn(n, width, generator=g, dtype=torch.float64)
    Wq, WkE, WkR = (torch.randn(d, width, generator=g, dtype=torch.float64) for _ in range(3))
    u, v = torch.randn(2, d, generator=g, dtype=torch.float64)
    offsets = torch.arange(-(n - 1), n, dtype=torch.float64)                 # -(n-1) .. n-1
    r = sinusoidal_encoding(offsets, width, dtype=torch.float64) @ WkR.T      # [2n - 1, d]
    got = transformer_xl_scores(E @ Wq.T, E @ WkE.T, r, u, v)
    assert torch.allclose(got, _xl_reference(E, Wq, WkE, WkR, u, v), atol=1e-10)


def test_transformer_xl_position_terms_depend_on_the_offset_only() -> None:
    g = torch.Generator().manual_seed(0)
    n, d = 5, 4
    q = torch.randn(1, d, generator=g, dtype=torch.float64).expand(n, d)  # the same query everywhere
    k = torch.zeros(n, d, dtype=torch.float64)                             # no content term
    r = torch.randn(2 * n - 1, d, generator=g, dtype=torch.float64)
    scores = transformer_xl_scores(q, k, r, torch.zeros(d, dtype=torch.float64), torch.zeros(d, dtype=torch.float64))
    for offset in range(-(n - 1), n):
        diagonal = torch.diagonal(scores, offset=-offset)                  # entries with i - j = offset
        assert torch.allclose(diagonal, diagonal[0].expand_as(diagonal))


def test_deberta_relative_index_is_the_papers_delta() -> None:
    k = 3
    index = deberta_relative_index(7, 9, k)
    for i in range(7):
        for j in range(9):
            expected = 0 if i - j <= -k else 2 * k - 1 if i - j >= k else i - j + k
            assert index[i, j].item() == expected


@settings(max_examples=20, deadline=None)
@given(n=st.integers(1, 7), k=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_deberta_scores_are_the_three_terms(n: int, k: int, seed: int) -> None:
    g = torch.Generator().manual_seed(seed)
    d = 4
    qc, kc = torch.randn(2, 2, n, d, generator=g, dtype=torch.float64)
    qr, kr = torch.randn(2, 2 * k, d, generator=g, dtype=torch.float64)

    def delta(i: int, j: int) -> int:
        return 0 if i - j <= -k else 2 * k - 1 if i - j >= k else i - j + k

    expected = torch.zeros(2, n, n, dtype=torch.float64)
    for b in range(2):
        for i in range(n):
            for j in range(n):
                expected[b, i, j] = qc[b, i] @ kc[b, j] + qc[b, i] @ kr[delta(i, j)] + kc[b, j] @ qr[delta(j, i)]
    assert torch.allclose(deberta_scores(qc, kc, qr, kr), expected, atol=1e-10)


def test_bad_inputs_name_the_argument() -> None:
    q = torch.randn(3, 4)
    with pytest.raises(ValueError, match="r must have size 5"):
        transformer_xl_scores(q, q, torch.randn(4, 4), torch.zeros(4), torch.zeros(4))
    with pytest.raises(ValueError, match="k must have the shape of q"):
        transformer_xl_scores(q, torch.randn(2, 4), torch.randn(5, 4), torch.zeros(4), torch.zeros(4))
    with pytest.raises(ValueError, match="qr must have 2k rows"):
        deberta_scores(q, q, torch.randn(3, 4), torch.randn(3, 4))
    with pytest.raises(ValueError, match="max_distance"):
        deberta_relative_index(3, 3, 0)
