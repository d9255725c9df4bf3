"""The length-extrapolation experiment: the tiny configuration end to end, and the committed results."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

import pytest
import torch

from posenc.experiments.__main__ import main
from posenc.experiments.data import corpus_text, load_corpus
from posenc.experiments.length_extrapolation import (
    CONFIGS,
    RESULTS_PATH,
    STUDIED_METHODS,
    build_model,
    evaluate,
    learning_rate,
    load_results,
    run,
    train_and_evaluate,
    training_batches,
)

TINY = CONFIGS["tiny"]
TIMING_KEYS = ("train_seconds", "train_cpu_seconds")


def numbers(results: dict[str, Any]) -> dict[str, Any]:
    """Everything a run measures, without the timings (which depend on the machine)."""
    return {method: {k: v for k, v in entry.items() if k not in TIMING_KEYS}
            for method, entry in results["methods"].items()}


def check_structure(results: dict[str, Any], config_name: str) -> None:
    config = CONFIGS[config_name]
    assert results["experiment"] == "length_extrapolation"
    assert results["config"] == config.as_dict()
    assert results["seed"] == config.seed
    assert results["eval_lengths"] == [m * config.train_length for m in config.eval_multiples]
    assert set(results["versions"]) == {"python", "torch", "numpy", "posenc"}
    assert list(results["methods"]) == list(config.methods)
    corpus = results["corpus"]
    assert corpus["train_characters"] + corpus["validation_characters"] == corpus["characters"]
    assert corpus["evaluated_characters"] % max(results["eval_lengths"]) == 0
    vocab = corpus["vocab_size"]
    for method, entry in results["methods"].items():
        assert entry["parameters"] == sum(p.numel() for p in build_model(method, config, vocab).parameters())
        assert len(entry["perplexity"]) == len(entry["loss"]) == len(config.eval_multiples)
        for ppl, loss in zip(entry["perplexity"], entry["loss"]):
            if method == "learned" and ppl is None:
                continue
            assert 1.0 < ppl < math.inf
            assert ppl == pytest.approx(math.exp(loss), rel=1e-4)  # perplexity = exp(mean loss)
        if method == "learned":
            assert entry["max_len"] == config.train_length
            assert entry["perplexity"][0] is not None and all(p is None for p in entry["perplexity"][1:])
            scored = config.train_length
        else:
            assert entry["max_len"] is None and None not in entry["perplexity"]
            scored = max(results["eval_lengths"])
        assert len(entry["position_loss"]) == scored // config.position_bucket
        # the loss by position, averaged, is the mean loss at the longest length scored
        scored_loss = entry["loss"][results["eval_lengths"].index(scored)]
        assert sum(entry["position_loss"]) / len(entry["position_loss"]) == pytest.approx(scored_loss, abs=1e-3)
        assert len(entry["train_curve"]) == config.steps // entry["train_curve_block"]


def test_tiny_run_end_to_end_is_deterministic(tmp_path: Path) -> None:
    in_process = run(TINY, workers=1)
    output = tmp_path / "tiny.json"
    assert main(["length-extrapolation", "--config", "tiny", "--output", str(output), "--workers", "2",
                 "--no-progress"]) == 0
    from_cli = json.loads(output.read_text())
    check_structure(in_process, "tiny")
    check_structure(from_cli, "tiny")
    # same seed, same numbers: whether methods share one process or run in two
    assert numbers(in_process) == numbers(from_cli)
    assert from_cli["workers"] == 2 and in_process["workers"] == 1


def test_evaluate_matches_a_window_by_window_reference() -> None:
    torch.manual_seed(0)
    model = build_model("alibi", TINY, vocab_size=20)
    text = torch.randint(0, 20, (3 * 8 + 1,))
    losses = evaluate(model, text, 8, batch_windows=2)
    assert losses.shape == (3, 8)
    with torch.no_grad():
        for w in range(3):
            window = text[8 * w: 8 * w + 9]
            log_probs = model(window[None, :-1])[0].double().log_softmax(-1)
            for p in range(8):
                assert losses[w, p].item() == pytest.approx(-log_probs[p, window[p + 1]].item(), abs=1e-5)


def test_learning_rate_schedule() -> None:
    config = CONFIGS["full"]
    peak, warm = config.learning_rate, config.warmup_steps
    assert learning_rate(0, config) == pytest.approx(peak / warm)
    assert learning_rate(warm - 1, config) == pytest.approx(peak)
    assert learning_rate(warm, config) == pytest.approx(peak)  # cosine starts at the peak
    middle = warm + (config.steps - warm) // 2
    assert learning_rate(middle, config) == pytest.approx(peak * (0.1 + 0.9 * 0.5), rel=1e-3)
    assert learning_rate(config.steps, config) == pytest.approx(peak * config.min_lr_ratio)


def test_training_batches_are_shifted_windows_of_the_text_and_repeatable() -> None:
    train = torch.arange(1000)
    first = list(training_batches(train, TINY))
    second = list(training_batches(train, TINY))
    assert len(first) == TINY.steps
    for (x, y), (x2, y2) in zip(first, second):
        assert torch.equal(x, x2) and torch.equal(y, y2)
        assert x.shape == (TINY.batch_size, TINY.train_length)
        assert torch.equal(y, x + 1)  # targets are the next characters (the text is 0, 1, 2, ...)
        assert torch.equal(x[:, 1:], x[:, :-1] + 1)  # each window is contiguous


def test_corpus_is_the_python_reference_text_split_at_ninety_percent() -> None:
    corpus = load_corpus()
    text = corpus_text()
    assert corpus.characters == len(text) > 400_000
    assert corpus.vocabulary == "".join(sorted(set(text)))
    assert corpus.decode(corpus.train) + corpus.decode(corpus.validation) == text
    assert corpus.validation.numel() == int(len(text) * 0.1)
    assert corpus.sha256 == hashlib.sha256(text.encode()).hexdigest()
    from pydoc_data.topics import topics

    assert text.startswith(topics[sorted(topics)[0]])


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: run(TINY, workers=0), ValueError, "workers must be an integer >= 1, got 0"),
        (lambda: load_corpus(0.9), ValueError, "validation_fraction must be <= 0.5, got 0.9"),
        (lambda: train_and_evaluate("bogus", TINY), ValueError, "method must be one of 'none'.*got 'bogus'"),
        (lambda: build_model("bogus", TINY, 20), ValueError, "position must be one of 'none'.*got 'bogus'"),
        (lambda: evaluate(build_model("none", TINY, 20), torch.zeros(10, dtype=torch.long), 4), ValueError,
         "text must be 1-D with a multiple of length=4 characters plus one, got shape \\(10,\\)"),
        (lambda: evaluate(build_model("none", TINY, 20), torch.zeros(9, dtype=torch.long), 0), ValueError,
         "length must be an integer >= 1, got 0"),
        (lambda: main(["length-extrapolation", "--config", "huge"]), SystemExit, "2"),
    ],
)
def test_bad_input_is_a_clear_error(call, error, match) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(error, match=match):
        call()


# ---------------------------------------------------------------- the committed results file


def test_committed_results_have_the_full_configuration() -> None:
    results = load_results()
    assert Path(RESULTS_PATH).is_file()
    check_structure(results, "full")
    assert results["config"]["methods"] == list(STUDIED_METHODS)
    assert results["workers"] >= 1 and results["wall_seconds"] > 0
    for entry in results["methods"].values():
        assert entry["train_cpu_seconds"] > 0


def test_committed_results_were_made_from_this_corpus() -> None:
    # The text ships with Python, so another Python release may ship another text, and then
    # `make experiments` cannot reproduce the file: this says so instead of failing obscurely.
    recorded = load_results()["corpus"]
    corpus = load_corpus(CONFIGS["full"].validation_fraction)
    assert corpus.sha256 == recorded["sha256"], (
        f"pydoc_data.topics differs from the text the results were made with (Python "
        f"{load_results()['versions']['python']}); re-run `make experiments`"
    )
    assert corpus.vocab_size == recorded["vocab_size"]
