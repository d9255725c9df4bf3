"""PaTH's blockwise form (each block's product as I - W^T T B W, posenc._path_compact).

Expected values by independent routes: the d x d matrix products of the paper's equation written
out here in float64, and the direct form (`path_logits`, one pass per key) that the blockwise form
replaces in the model; invariants by hypothesis; the model's training curve before and after.

Tolerances. float64: a logit is at most ~ d in size (|q|, |k| ~ sqrt(d)) and gathers rounding
from at most ~40 transforms and sums of a few hundred products, so errors of ~1e-13 (measured
under 1e-14); 1e-10 leaves a margin of 1000, while a transform left out, doubled or applied in the
wrong order moves a logit by order one. float32: eps 6e-8 times logits up to ~30 and sums over
~L terms: at L = 256 the direct form itself is 4e-6 from the float64 logits on random inputs and
2e-5 on nearly parallel reflections, the blockwise form 7e-6 and 5e-5 (measured on the test's
inputs); the bounds 1e-4 and 5e-4 leave a margin of 10. (Nearly parallel reflections make I + A's
condition number reach the thousands; T is solved in float64 for that reason, which took the
blockwise form's error there from 3e-3 down.)
"""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc.experiments import length_extrapolation as lm
from posenc.experiments._training import fit
from posenc.experiments.config import CONFIGS
from posenc.experiments.data import load_corpus
from posenc.experiments.inside import build_inside_model
from posenc.path_attention import (
    BLOCK,
    HouseholderPath,
    _sweep,
    path_logits,
    path_logits_blockwise,
)

D64 = torch.float64


def _close(got: torch.Tensor, expected: torch.Tensor) -> None:
    """Equal to float64 rounding (the margin of the module docstring)."""
    torch.testing.assert_close(got, expected, rtol=1e-10, atol=1e-10)


def _inputs(shape: tuple[int, ...], q_len: int, k_len: int, d: int, seed: int,
            dtype: torch.dtype = D64) -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(*shape, q_len, d, generator=g, dtype=dtype)
    k = torch.randn(*shape, k_len, d, generator=g, dtype=dtype)
    w = torch.nn.functional.normalize(torch.randn(*shape, k_len, d, generator=g, dtype=dtype), dim=-1)
    beta = 2 * torch.rand(*shape, k_len, generator=g, dtype=dtype)
    return q, k, w, beta


def _matrix_logits(q: torch.Tensor, k: torch.Tensor, w: torch.Tensor, beta: torch.Tensor) -> torch.Tensor:
    """q_i^T H_i ... H_(j+1) k_j with each H a d x d matrix (one sequence, queries = the last keys)."""
    k_len, d = k.shape
    eye = torch.eye(d, dtype=D64)
    out = torch.full((q.shape[0], k_len), float("-inf"), dtype=D64)
    for row in range(q.shape[0]):
        i = k_len - q.shape[0] + row
        product = eye
        for j in range(i, -1, -1):  # product = H_i ... H_(j+1)
            out[row, j] = q[row] @ product @ k[j]
            product = product @ (eye - beta[j] * torch.outer(w[j], w[j]))
    return out


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 40), st.integers(0, 39), st.integers(1, 45), st.integers(1, 6), st.integers(0, 10_000))
def test_blockwise_equals_the_matrix_products_and_the_direct_form(k_len: int, fewer: int, block: int, d: int,
                                                                  seed: int) -> None:
    q, k, w, beta = _inputs((), max(1, k_len - fewer), k_len, d, seed)
    got = path_logits_blockwise(q, k, w, beta, block=block)
    _close(got, _matrix_logits(q, k, w, beta))
    _close(got, path_logits(q, k, w, beta))


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 50), st.integers(1, 50), st.integers(1, 50), st.integers(0, 10_000))
def test_every_block_size_gives_the_same_logits(k_len: int, block: int, other: int, seed: int) -> None:
    q, k, w, beta = _inputs((2, 3), k_len, k_len, 4, seed)
    _close(path_logits_blockwise(q, k, w, beta, block=block),
                               path_logits_blockwise(q, k, w, beta, block=other))


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 40), st.integers(1, 16), st.integers(0, 10_000))
def test_beta_zero_gives_plain_causal_logits(k_len: int, block: int, seed: int) -> None:
    q, k, w, beta = _inputs((2,), k_len, k_len, 5, seed)
    plain = (q @ k.transpose(-2, -1)).masked_fill(torch.ones(k_len, k_len, dtype=torch.bool).triu(1), float("-inf"))
    _close(path_logits_blockwise(q, k, w, 0 * beta, block=block), plain)


@settings(max_examples=20, deadline=None)
@given(st.integers(2, 40), st.integers(1, 16), st.data())
def test_a_query_sees_nothing_after_it(k_len: int, block: int, data: st.DataObject) -> None:
    cut = data.draw(st.integers(0, k_len - 2), label="cut")  # tokens after cut change
    q, k, w, beta = _inputs((2,), k_len, k_len, 4, data.draw(st.integers(0, 10_000), label="seed"))
    q2, k2, w2, beta2 = _inputs((2,), k_len, k_len, 4, 99_999)
    after = slice(cut + 1, None)
    q2, k2, w2, beta2 = (torch.cat((a[:, :cut + 1], b[:, after]), 1) for a, b in ((q, q2), (k, k2), (w, w2), (beta, beta2)))
    one = path_logits_blockwise(q, k, w, beta, block=block)
    two = path_logits_blockwise(q2, k2, w2, beta2, block=block)
    _close(one[:, :cut + 1], two[:, :cut + 1])
    assert torch.isneginf(one).equal(torch.ones(k_len, k_len, dtype=torch.bool).triu(1).expand_as(one))


def test_gradients_equal_the_direct_forms() -> None:
    # the model trains through the blockwise form: its gradients must be the direct form's
    q, k, w, beta = (x.requires_grad_() for x in _inputs((2, 2), 37, 37, 6, 3))
    weights = torch.randn(2, 2, 37, 37, dtype=D64, generator=torch.Generator().manual_seed(4)).tril()
    grads = []
    for logits in (path_logits_blockwise(q, k, w, beta, block=8), path_logits(q, k, w, beta)):
        grads.append(torch.autograd.grad((logits.nan_to_num(neginf=0.0) * weights).sum(), (q, k, w, beta)))
    for blockwise, direct in zip(*grads):
        _close(blockwise, direct)


@pytest.mark.parametrize("case", ["random", "near parallel reflections"])
def test_float32_logits_stay_near_the_float64_ones(case: str) -> None:
    q, k, w, beta = _inputs((2, 2), 256, 256, 32, 5)
    if case != "random":  # every w close to one direction, every beta close to 2
        g = torch.Generator().manual_seed(6)
        w = torch.nn.functional.normalize(1 + 0.05 * torch.randn(w.shape, generator=g, dtype=D64), dim=-1)
        beta = 2 - 1e-3 * torch.rand(beta.shape, generator=g, dtype=D64)
    reference = path_logits(q, k, w, beta)
    single = [x.float() for x in (q, k, w, beta)]
    direct = (path_logits(*single).double() - reference).nan_to_num().abs().max()
    got = path_logits_blockwise(*single, block=32)
    assert got.dtype == torch.float32
    blockwise = (got.double() - reference).nan_to_num().abs().max()
    assert direct < 1e-4 and blockwise < (1e-4 if case == "random" else 5e-4), (float(direct), float(blockwise))


@pytest.mark.parametrize("block", [0, -3])
def test_a_bad_block_is_refused_naming_it(block: int) -> None:
    q, k, w, beta = _inputs((), 4, 4, 3, 0)
    with pytest.raises(ValueError, match="block"):
        path_logits_blockwise(q, k, w, beta, block=block)
    with pytest.raises(TypeError, match="block"):
        path_logits_blockwise(q, k, w, beta, block=2.0)  # type: ignore[arg-type]


def test_the_module_uses_the_blockwise_form_for_a_sequence_and_the_direct_form_against_a_cache() -> None:
    path = HouseholderPath(8, num_heads=2, head_dim=4).double()
    x = torch.randn(2, 70, 8, dtype=D64)
    q, keys = path.join(x, torch.randn(2, 2, 70, 4, dtype=D64), torch.randn(2, 2, 70, 4, dtype=D64))
    w, beta = path.transforms(x)
    expected = path_logits(q, keys[..., :4], w, beta) / 2
    _close(path.scores(q, keys), expected)
    _close(path.scores(q[..., -3:, :], keys), expected[..., -3:, :])
    assert 70 > 2 * BLOCK  # several blocks, so the loop over block distances runs


def _direct_scores(self: HouseholderPath, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """The model's scores before the blockwise form: the direct form for every call."""
    d = self.head_dim
    return _sweep(q, k[..., :d], k[..., d:2 * d], k[..., 2 * d]) / math.sqrt(d)


def test_the_tiny_inside_study_trains_path_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    config = CONFIGS["tiny"]
    corpus = load_corpus(config.validation_fraction)
    runs = []
    for scores in (_direct_scores, HouseholderPath._scores):
        monkeypatch.setattr(HouseholderPath, "_scores", scores)
        model = build_inside_model("path", config, corpus.vocab_size, seed=0)
        stats = fit(model, lm.training_batches(corpus.train, config, 0), config, steps=config.steps,
                    peak_learning_rate=config.learning_rate)
        runs.append((stats["train_curve"], model.state_dict()))
    (before, weights_before), (after, weights_after) = runs
    assert len(before) == config.steps  # one point per step
    # float32 training, seeded: the two forms differ by rounding only (~1e-6 a logit), which a
    # dozen Adam steps do not grow past the curve's 4 decimals or 1e-4 of a weight
    assert before == pytest.approx(after, abs=2e-4)
    for name, value in weights_before.items():
        torch.testing.assert_close(weights_after[name], value, rtol=1e-4, atol=1e-5, msg=name)
