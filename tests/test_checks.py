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
        # the helpers of the bad-input contract
        (lambda: _checks.check_bool("causal", "no"), TypeError, "causal must be a bool .*got str 'no'"),
        (lambda: _checks.check_bool("causal", 1), TypeError, "causal must be a bool .*got int 1"),
        (lambda: _checks.check_float("base", 10**400), ValueError, "base must be finite"),
        (lambda: _checks.check_int("n", 10**400, maximum=8), ValueError, "n must be an integer <= 8, got an integer of 1329 bits"),
        (lambda: _checks.check_int("n", 10**5000, maximum=8), ValueError, "n must be an integer <= 8, got an integer of"),
        (lambda: _checks.check_even_dim("dim", 2**40), ValueError, "dim must be a positive even integer <= 16777216"),
        (lambda: _checks.check_size_int("seq_len", 2**40), ValueError, "seq_len must be an integer <= 16777216"),
        (lambda: _checks.check_elements("the table", 2**20, 2**20), ValueError, "the table would have 1048576 x 1048576"),
        (lambda: _checks.check_real_tensor("codes", torch.ones(2, dtype=torch.bool)), TypeError, "codes must hold real numbers"),
        (lambda: _checks.check_real_tensor("codes", torch.ones(2, dtype=torch.complex64)), TypeError, "got dtype torch.complex64"),
        (lambda: _checks.check_float_dtype("dtype", torch.int64), TypeError, "dtype must be a floating-point torch.dtype"),
        (lambda: _checks.check_finite_result(torch.tensor([math.inf]), "positions x frequencies"), ValueError,
         "positions x frequencies overflow"),
        (lambda: _checks.check_positions("positions", [1, 2]), TypeError, "positions must be an integer or a 1-D torch.Tensor"),
        (lambda: _checks.check_positions("positions", torch.tensor([1j])), TypeError, "integer or real positions"),
        (lambda: word_vector(3, 4), TypeError, "word must be a non-empty string, got int"),
        (lambda: word_vector("a", 4, seed=10**400), ValueError, "seed must be an integer <="),
        (lambda: sentence_embeddings(["a", 3], 4), TypeError, "sentence must be a string or a sequence"),
        (lambda: sentence_embeddings(123, 4), TypeError, "sentence must be a string or a sequence"),
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
    assert _checks.check_bool("causal", False) is False
    assert _checks.check_float("k", 10**300) == 1e300
    assert _checks.check_real_tensor("x", torch.arange(3)).dtype == torch.int64
    _checks.check_elements("the table", 2**13, 2**14)  # exactly the limit is fine


def test_public_api_resolves() -> None:
    import posenc

    for name in posenc.__all__:
        assert getattr(posenc, name) is not None, name
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        posenc.nope  # noqa: B018


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: _checks.check_position_ids("positions", torch.tensor([0.5])), TypeError,
         "positions must be an integer tensor of position ids"),
        (lambda: _checks.check_position_ids("positions", torch.tensor([-1, 3])), ValueError,
         "positions must be between 0 and 1048576, got values from -1 to 3"),
        (lambda: _checks.check_position_ids("positions", torch.zeros(2, 4, dtype=torch.long), like=(2, 3)), ValueError,
         r"positions must have shape \[batch, seq\] = \[2, 3\] \(or \[1, 3\]\)"),
        (lambda: _checks.check_positions_match("positions", torch.arange(4), "q", torch.zeros(2, 3, 8)), ValueError,
         "positions must have 3 entries in its last dimension"),
        (lambda: _checks.check_positions_match("positions", torch.zeros(3, 3), "x", torch.zeros(3, 8)), ValueError,
         "need x with a batch dimension"),
        (lambda: _checks.check_positions_match("positions", torch.zeros(2, 3, 2), "x", torch.zeros(4, 3, 8),
                                               coordinates=2), ValueError, "positions must have size 4"),
        (lambda: _checks.check_positions_match("positions", torch.zeros(3, 3), "x", torch.zeros(3, 8),
                                               coordinates=2), ValueError, r"positions must have shape \[seq, n_axes\]"),
        (lambda: _checks.check_position_tensor("positions", torch.tensor([1.0, math.nan])), ValueError, "finite"),
        (lambda: _checks.check_token_ids("tokens", torch.zeros(1, 0, dtype=torch.long), 5), ValueError,
         "tokens must hold at least one row of at least one token"),
        (lambda: _checks.check_token_ids("tokens", torch.tensor([[5]]), 5), ValueError, r"tokens must be ids in \[0, 5\)"),
        (lambda: _checks.check_rotary_input("q", torch.zeros(2, 5), dim=None), ValueError,
         "the last dimension of q must be a positive even integer, got 5"),
        (lambda: _checks.check_rotary_input("k", torch.zeros(2, 6), dim=8), ValueError, "k must have size 8 in its last"),
        (lambda: _checks.check_positions("positions", torch.zeros(1, 1, 1), ndim=(1, 2)), ValueError,
         "positions must have 1 or 2 dimensions"),
    ],
)
def test_position_and_token_helpers(call, error, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(error, match=message):
        call()


def test_the_limits_are_distinct_and_say_what_they_bound() -> None:
    # float64 holds every integer up to 2**53; position ids (tables, caches) stop at 2**20
    assert _checks.MAX_EXACT_POSITION == 2**53 and float(2**53) + 1 == float(2**53)
    assert _checks.MAX_POSITION_ID == 2**20 < _checks.MAX_SIZE < _checks.MAX_EXACT_POSITION
    assert not hasattr(_checks, "MAX_POSITION")
    assert _checks.check_positions("q", 3, ndim=(1, 2)).tolist() == [0.0, 1.0, 2.0]
    assert _checks.check_position_ids("p", torch.tensor([[1, 2]], dtype=torch.int32), like=(4, 2)).dtype == torch.long
