"""The shared validators: each bad input gets an error that names the argument and the rule."""

from __future__ import annotations

import math

import pytest
import torch

from posenc import _checks
from posenc.toy import sentence_embeddings, word_vector


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: _checks.check_int("n", 2.5), TypeError, "n must be an integer, got float 2.5"),
        (lambda: _checks.check_int("n", True), TypeError, "n must be an integer"),
        (lambda: _checks.check_int("n", -1, minimum=0), ValueError, "n must be an integer >= 0, got -1"),
        (lambda: _checks.check_int("n", 9, maximum=8), ValueError, "n must be an integer <= 8, got 9"),
        (lambda: _checks.check_even_dim("dim", 7), ValueError, "dim must be a positive even integer, got 7"),
        (lambda: _checks.check_even_dim("dim", 0), ValueError, "dim must be a positive even integer, got 0"),
        (lambda: _checks.check_float("base", math.nan), ValueError, "base must be finite"),
        (lambda: _checks.check_float("base", -2.0, positive=True), ValueError, "base must be > 0"),
        (lambda: _checks.check_float("base", "10"), TypeError, "base must be a real number"),
        (lambda: _checks.check_tensor("x", torch.tensor([1.0, math.inf]), finite=True), ValueError, "only finite values"),
        (lambda: _checks.check_tensor("x", torch.zeros(2), ndim=(3, 4)), ValueError, "x must have 3 or 4 dimensions"),
        (lambda: _checks.check_choice("layout", "zigzag", ("half", "interleaved")), ValueError, "layout must be one of 'half', 'interleaved'"),
        (lambda: _checks.check_positions("positions", torch.zeros(2, 2)), ValueError, "positions must have 1 dimensions"),
        (lambda: _checks.check_positions("positions", -3), ValueError, "positions must be an integer >= 0"),
        (lambda: _checks.check_positions("positions", torch.tensor([True])), TypeError, "integer or real positions"),
        (lambda: word_vector("", 4), ValueError, "word must be a non-empty string"),
        (lambda: sentence_embeddings("", 4), ValueError, "at least one word"),
        (lambda: sentence_embeddings("a b", 0), ValueError, "dim must be an integer >= 1"),
    ],
)
def test_bad_input_is_a_clear_error(call, error, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(error, match=message):
        call()


def test_good_input_passes_through() -> None:
    assert _checks.check_int("n", torch.tensor(3).item()) == 3
    assert _checks.check_even_dim("dim", 6) == 6
    assert _checks.check_positions("positions", 3).tolist() == [0.0, 1.0, 2.0]
    assert _checks.check_positions("positions", torch.tensor([5, 7])).dtype == torch.float64


def test_public_api_resolves() -> None:
    import posenc

    for name in posenc.__all__:
        assert getattr(posenc, name) is not None, name
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        posenc.nope  # noqa: B018
