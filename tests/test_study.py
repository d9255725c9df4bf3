"""The retrieval, context-extension and windows studies: their pieces, the tiny configuration end
to end, and the committed results (checked against each other where two studies score the same model)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc.experiments import (
    context_extension,
    inference_windows,
    length_extrapolation,
    retrieval,
)
from posenc.experiments._training import IGNORE
from posenc.experiments.config import CONFIGS, STUDIED_METHODS, build_model
from posenc.rope import RotaryEmbedding

TINY = CONFIGS["tiny"]
FULL = CONFIGS["full"]


@pytest.fixture(autouse=True)
def model_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "model-cache"
    monkeypatch.setenv("POSENC_EXPERIMENT_CACHE", str(folder))
    return folder


# ---------------------------------------------------------------- the MQAR task


@settings(max_examples=60, deadline=None)
@given(pairs=st.integers(1, 6), queries=st.integers(1, 6), extra_symbols=st.integers(0, 5),
       slack=st.integers(0, 20), batch=st.integers(1, 4), seed=st.integers(0, 2**31))
def test_mqar_sequences_ask_for_the_value_paired_with_each_queried_key(
        pairs: int, queries: int, extra_symbols: int, slack: int, batch: int, seed: int) -> None:
    symbols = pairs + extra_symbols
    length = 2 * pairs + queries + slack
    tokens, targets = retrieval.mqar_batch(batch, length, pairs=pairs, queries=queries, symbols=symbols,
                                           generator=torch.Generator().manual_seed(seed))
    again, _ = retrieval.mqar_batch(batch, length, pairs=pairs, queries=queries, symbols=symbols,
                                    generator=torch.Generator().manual_seed(seed))
    assert torch.equal(tokens, again)  # seeded
    assert tokens.shape == targets.shape == (batch, length)
    assert int(tokens.max()) < retrieval.vocab_size(symbols)
    for row, answers in zip(tokens.tolist(), targets.tolist()):
        keys, values = row[0:2 * pairs:2], row[1:2 * pairs:2]
        assert len(set(keys)) == pairs and all(1 <= k <= symbols for k in keys)  # distinct keys
        assert all(symbols < v <= 2 * symbols for v in values)
        pair_of = dict(zip(keys, values))
        asked = [p for p, answer in enumerate(answers) if answer != IGNORE]
        assert len(asked) == queries and min(asked) >= 2 * pairs  # every query comes after the pairs
        for p in asked:
            assert answers[p] == pair_of[row[p]]  # the answer is the value stored with that key
        assert all(row[p] == 0 for p in range(2 * pairs, length) if p not in asked)  # blanks elsewhere


def test_accuracy_counts_the_queries_the_model_answers_right() -> None:
    model = build_model("alibi", TINY, retrieval.vocab_size(4), seed=0).eval()
    tokens, targets = retrieval.mqar_batch(5, 14, pairs=2, queries=3, symbols=4,
                                           generator=torch.Generator().manual_seed(1))
    right = retrieval.accuracy(model, tokens, targets, batch_rows=2)
    with torch.no_grad():
        predicted = model(tokens).argmax(-1)
    expected = [predicted[b, p] == targets[b, p] for b in range(5) for p in range(14) if targets[b, p] != IGNORE]
    assert right.tolist() == [bool(e) for e in expected]


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: retrieval.mqar_batch(2, 5, pairs=2, queries=2, symbols=4, generator=torch.Generator()),
         ValueError, "length must be an integer >= 6, got 5"),
        (lambda: retrieval.mqar_batch(2, 20, pairs=5, queries=2, symbols=4, generator=torch.Generator()),
         ValueError, "symbols must be an integer >= 5, got 4"),
        (lambda: retrieval.mqar_batch(2, 20, pairs=2, queries=2, symbols=4, generator=0), TypeError,
         "generator must be a torch.Generator, got int"),
        (lambda: retrieval.mqar_batch(2**20, 20, pairs=2, queries=2, symbols=4, generator=torch.Generator()),
         ValueError, "batch must be an integer <= 65536"),
        (lambda: retrieval.run(TINY, workers=0), ValueError, "workers must be an integer >= 1, got 0"),
        (lambda: context_extension.scaling("longrope", 2.0, 64), ValueError, "rule must be one of"),
        (lambda: context_extension.run(TINY, device="gpu"), ValueError, "device must be 'cpu' or 'cuda'"),
        (lambda: inference_windows.run(TINY, workers=-1), ValueError, "workers must be an integer >= 1"),
    ],
)
def test_bad_input_is_a_clear_error(call, error, match) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(error, match=match):
        call()


# ---------------------------------------------------------------- end to end, tiny


def test_retrieval_study_end_to_end(tmp_path: Path) -> None:
    results = retrieval.run(TINY, workers=2)
    again = retrieval.run(TINY, workers=1)  # every model now from the cache: the same scores
    check_retrieval(results, TINY)
    for method in TINY.methods:
        assert [r["accuracy"] for r in results["methods"][method]["runs"]] == \
            [r["accuracy"] for r in again["methods"][method]["runs"]]


def check_retrieval(results: dict[str, Any], config: Any) -> None:
    assert results["config"] == config.as_dict() and list(results["methods"]) == list(config.methods)
    assert results["chance"] == pytest.approx(1 / config.retrieval_symbols, abs=1e-4)
    for method, entry in results["methods"].items():
        assert [r["seed"] for r in entry["runs"]] == list(config.seeds)
        for run in entry["runs"]:
            scored = [a for a in run["accuracy"] if a is not None]
            assert all(0.0 <= a <= 1.0 for a in scored)
            assert (len(scored) == 1) == (method == "learned")  # the learned table stops at L
            blocks = run["accuracy_by_block"]
            assert (blocks is None) == (method == "learned")


def test_extension_study_end_to_end() -> None:
    results = context_extension.run(TINY, workers=1)
    check_extension(results, TINY)


def check_extension(results: dict[str, Any], config: Any) -> None:
    assert results["config"] == config.as_dict()
    assert results["eval_lengths"] == config.eval_lengths[1:]
    assert results["fine_tune_length"] == config.finetune_multiple * config.train_length
    for entry in results["tasks"].values():
        assert list(entry["no_training"]) == list(context_extension.NO_TRAINING_RULES)
        assert list(entry["fine_tuned"]) == list(context_extension.FINE_TUNED_RULES)
        for run in entry["runs"]:
            # In whole-window scoring dynamic NTK (factor 1) is NTK-aware scaling with s = l / L.
            assert run["no_training"]["dynamic"] == pytest.approx(run["no_training"]["ntk"], rel=1e-6)
            for scores in (*run["no_training"].values(), *run["fine_tuned"].values()):
                assert all(math.isfinite(v) for v in scores)


def test_scaling_rules_are_the_rotary_embeddings_of_posenc() -> None:
    for rule in context_extension.NO_TRAINING_RULES:
        scaling = context_extension.scaling(rule, 4.0, 64)
        rotary = RotaryEmbedding(16, scaling=scaling)
        assert rotary.inv_freq.shape == (8,)
    yarn = RotaryEmbedding(16, scaling=context_extension.scaling("yarn", 4.0, 64))
    assert yarn.attention_scaling == pytest.approx(0.1 * math.log(4.0) + 1)  # YaRN's attention factor


def test_windows_study_end_to_end() -> None:
    results = inference_windows.run(TINY, workers=2)
    check_windows(results, TINY)


def check_windows(results: dict[str, Any], config: Any) -> None:
    assert results["config"] == config.as_dict()
    assert results["length"] == 8 * config.train_length
    assert "learned" not in results["methods"]  # no rows past L
    assert list(results["methods"]) == [m for m in config.methods if m != "learned"]
    rows = {row["label"]: row for row in results["settings"]}
    assert list(rows) == [label for label, *_ in inference_windows.settings(config.train_length)]
    window = config.train_length
    # RoPE and no sinks: re-assigning the positions in the cache changes no offset
    assert rows[f"window {window}"]["perplexity"] == pytest.approx(
        rows[f"window {window}, in-cache positions"]["perplexity"], rel=1e-4)
    assert results["dynamic_ntk"]["max_logit_gap_within_train_length"] < 1e-3  # the base only moves past L
    for entry in results["methods"].values():
        assert list(entry) == [label for label, _, _, where in inference_windows.settings(window)
                               if where == "original"]


# ---------------------------------------------------------------- the committed results


def test_committed_retrieval_results() -> None:
    check_retrieval(retrieval.load_results(), FULL)
    large = retrieval.load_results(retrieval.RESULTS_PATH.parent / "large" / "retrieval.json")
    check_retrieval(large, CONFIGS["large"])


def test_committed_extension_results_agree_with_the_studies_they_reuse() -> None:
    results = context_extension.load_results()
    check_extension(results, FULL)
    lm = length_extrapolation.load_results()["methods"]["rope"]["runs"]
    recall = retrieval.load_results()["methods"]["rope"]["runs"]
    for task, other, metric in (("lm", lm, "perplexity"), ("retrieval", recall, "accuracy")):
        for run, same_model in zip(results["tasks"][task]["runs"], other):
            # plain RoPE with no training is the model the other study scored: the same numbers
            assert run["at_train_length"] == same_model[metric][0]
            assert run["no_training"]["none"] == same_model[metric][1:]
    check_extension(context_extension.load_results(context_extension.RESULTS_PATH.parent / "large" /
                                                   "context_extension.json"), CONFIGS["large"])


def test_committed_windows_results() -> None:
    results = inference_windows.load_results()
    check_windows(results, FULL)
    assert {"python", "torch", "numpy", "posenc"} <= set(results["versions"])
    check_windows(inference_windows.load_results(inference_windows.RESULTS_PATH.parent / "large" /
                                                 "inference_windows.json"), CONFIGS["large"])


def test_every_studied_method_builds_for_every_configuration() -> None:
    for config in CONFIGS.values():
        for method in STUDIED_METHODS:
            assert build_model(method, config, 20).num_layers == config.num_layers
