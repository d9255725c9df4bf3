"""The language-modelling study: the tiny configuration end to end, its pieces, and the committed results."""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import math
from pathlib import Path
from typing import Any

import pytest
import torch

from posenc.experiments.__main__ import main
from posenc.experiments._results import spread
from posenc.experiments._training import learning_rate
from posenc.experiments.config import STUDIED_METHODS, check_device, checkpoint_path
from posenc.experiments.data import corpus_text, load_corpus
from posenc.experiments.length_extrapolation import (
    CONFIGS,
    RESULTS_PATH,
    build_model,
    evaluate,
    load_results,
    run,
    train_and_evaluate,
    training_batches,
)

TINY = CONFIGS["tiny"]
#: What depends on the machine or on the cache, not on the configuration.
UNMEASURED = ("train_seconds", "train_cpu_seconds", "eval_cpu_seconds", "from_cache")


@pytest.fixture(autouse=True)
def model_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test trains into its own model cache, never the working directory's."""
    folder = tmp_path / "model-cache"
    monkeypatch.setenv("POSENC_EXPERIMENT_CACHE", str(folder))
    return folder


def numbers(results: dict[str, Any]) -> dict[str, Any]:
    """Everything a run measures, without the timings (which depend on the machine)."""
    return {method: {**{k: v for k, v in entry.items() if k != "runs"},
                     "runs": [{k: v for k, v in run.items() if k not in UNMEASURED} for run in entry["runs"]]}
            for method, entry in results["methods"].items()}


def check_structure(results: dict[str, Any], config_name: str) -> None:
    config = CONFIGS[config_name]
    assert results["experiment"] == "length_extrapolation"
    assert results["config"] == config.as_dict()
    assert results["eval_lengths"] == [m * config.train_length for m in config.eval_multiples]
    assert {"python", "torch", "numpy", "tqdm", "posenc"} == set(results["versions"])
    assert list(results["methods"]) == list(config.methods)
    corpus = results["corpus"]
    assert corpus["train_characters"] + corpus["validation_characters"] == corpus["characters"]
    assert corpus["evaluated_characters"] % max(results["eval_lengths"]) == 0
    vocab = corpus["vocab_size"]
    for method, entry in results["methods"].items():
        assert entry["parameters"] == sum(p.numel() for p in build_model(method, config, vocab).parameters())
        assert [run["seed"] for run in entry["runs"]] == list(config.seeds)
        # the summary is the mean, min and max over the seeds' runs
        assert {k: entry[k] for k in ("perplexity", "perplexity_min", "perplexity_max")} == \
            spread("perplexity", [run["perplexity"] for run in entry["runs"]])
        for one in entry["runs"]:
            assert len(one["perplexity"]) == len(one["loss"]) == len(config.eval_multiples)
            for ppl, loss in zip(one["perplexity"], one["loss"]):
                if ppl is None:
                    assert method == "learned"
                    continue
                assert 1.0 < ppl < math.inf
                assert ppl == pytest.approx(math.exp(loss), rel=1e-4)  # perplexity = exp(mean loss)
            if method == "learned":
                assert entry["max_len"] == config.train_length
                assert one["perplexity"][0] is not None and all(p is None for p in one["perplexity"][1:])
                scored = config.train_length
            else:
                assert entry["max_len"] is None and None not in one["perplexity"]
                scored = max(results["eval_lengths"])
            assert len(one["position_loss"]) == scored // config.position_bucket
            # the loss by position, averaged, is the mean loss at the longest length scored
            scored_loss = one["loss"][results["eval_lengths"].index(scored)]
            assert sum(one["position_loss"]) / len(one["position_loss"]) == pytest.approx(scored_loss, abs=1e-3)
            assert len(one["train_curve"]) == config.steps // one["train_curve_block"]


def test_tiny_run_end_to_end_is_deterministic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    in_process = run(TINY, workers=1)
    assert not any(run["from_cache"] for e in in_process["methods"].values() for run in e["runs"])
    # the CLI, two worker processes, a fresh cache: the same numbers
    monkeypatch.setenv("POSENC_EXPERIMENT_CACHE", str(tmp_path / "other-cache"))
    output = tmp_path / "tiny.json"
    assert main(["length-extrapolation", "--config", "tiny", "--output", str(output), "--workers", "2",
                 "--no-progress"]) == 0
    from_cli = json.loads(output.read_text())
    check_structure(in_process, "tiny")
    check_structure(from_cli, "tiny")
    assert numbers(in_process) == numbers(from_cli)
    assert from_cli["workers"] == 2 and in_process["workers"] == 1
    # a re-run finds every model in the cache and measures the same numbers again
    again = run(TINY, workers=1)
    assert all(run["from_cache"] for e in again["methods"].values() for run in e["runs"])
    assert numbers(again) == numbers(from_cli)


def test_every_method_is_studied_and_seeds_differ() -> None:
    assert set(STUDIED_METHODS) >= {"none", "sinusoidal", "learned", "rope", "alibi", "t5", "xpos", "kerple",
                                    "fire", "cope", "rope-randomized"}
    first = train_and_evaluate("rope", TINY, 0)
    second = train_and_evaluate("rope", TINY, 1)
    assert first["perplexity"] != second["perplexity"]  # another seed is another model


def test_randomized_rope_trains_on_random_positions_and_evaluates_on_plain_ones() -> None:
    model = build_model("rope-randomized", TINY, 20, seed=3)
    plain = build_model("rope", TINY, 20, seed=3)
    assert model.randomized_max_len == TINY.randomized_multiple * TINY.train_length
    assert plain.randomized_max_len is None
    plain.load_state_dict(model.state_dict())  # the same weights: only the training positions differ
    tokens = torch.randint(0, 20, (2, 9))
    model.eval(), plain.eval()
    with torch.no_grad():
        assert torch.equal(model(tokens), plain(tokens))
        model.train()
        assert not torch.allclose(model(tokens), plain(tokens))


def test_randomized_rope_is_scored_on_random_positions_as_in_the_authors_code() -> None:
    model = build_model("rope-randomized", TINY, 20, seed=1).eval()
    plain = build_model("rope", TINY, 20, seed=1).eval()
    plain.load_state_dict(model.state_dict())
    text = torch.randint(0, 20, (4 * 16 + 1,), generator=torch.Generator().manual_seed(0))
    randomized = evaluate(model, text, 16)
    assert torch.equal(randomized, evaluate(model, text, 16))  # seeded: the same positions every time
    assert not torch.allclose(randomized, evaluate(plain, text, 16))  # not 0 .. 15
    # at randomized_max_len the only sorted subset is 0 .. n-1: the plain positions
    longest = TINY.randomized_multiple * TINY.train_length
    text = torch.randint(0, 20, (longest + 1,), generator=torch.Generator().manual_seed(1))
    assert torch.allclose(evaluate(model, text, longest), evaluate(plain, text, longest), atol=1e-5)


def test_evaluate_matches_a_window_by_window_reference() -> None:
    torch.manual_seed(0)
    model = build_model("alibi", TINY, vocab_size=20)
    text = torch.randint(0, 20, (3 * 8 + 1,))
    losses = evaluate(model, text, 8, batch_windows=2)
    assert losses.shape == (3, 8)
    assert torch.allclose(evaluate(model, text, 8), losses, atol=1e-6)  # the batch size changes nothing
    with torch.no_grad():
        for w in range(3):
            window = text[8 * w: 8 * w + 9]
            log_probs = model(window[None, :-1])[0].double().log_softmax(-1)
            for p in range(8):
                assert losses[w, p].item() == pytest.approx(-log_probs[p, window[p + 1]].item(), abs=1e-5)


def test_learning_rate_schedule() -> None:
    config = CONFIGS["full"]
    peak, warm, steps = config.learning_rate, config.warmup_steps, config.steps
    rate = lambda step: learning_rate(step, peak=peak, steps=steps, warmup_steps=warm,
                                      min_lr_ratio=config.min_lr_ratio)
    assert rate(0) == pytest.approx(peak / warm)
    assert rate(warm - 1) == pytest.approx(peak)
    assert rate(warm) == pytest.approx(peak)  # cosine starts at the peak
    middle = warm + (steps - warm) // 2
    assert rate(middle) == pytest.approx(peak * (0.1 + 0.9 * 0.5), rel=1e-3)
    assert rate(steps) == pytest.approx(peak * config.min_lr_ratio)


def test_training_batches_are_shifted_windows_of_the_text_and_repeatable() -> None:
    train = torch.arange(1000)
    first = list(itertools.islice(training_batches(train, TINY, seed=4), 5))
    second = list(itertools.islice(training_batches(train, TINY, seed=4), 5))
    other = next(training_batches(train, TINY, seed=5))
    assert not torch.equal(first[0][0], other[0])
    for (x, y), (x2, y2) in zip(first, second):
        assert torch.equal(x, x2) and torch.equal(y, y2)
        assert x.shape == (TINY.batch_size, TINY.train_length)
        assert torch.equal(y, x + 1)  # targets are the next characters (the text is 0, 1, 2, ...)
        assert torch.equal(x[:, 1:], x[:, :-1] + 1)  # each window is contiguous
    x, _ = next(training_batches(train, TINY, seed=4, length=40))
    assert x.shape == (TINY.batch_size, 40)


def test_checkpoints_are_keyed_by_everything_that_changes_the_model() -> None:
    base = checkpoint_path("lm", "rope", 0, TINY, "cpu")
    assert base != checkpoint_path("lm", "rope", 1, TINY, "cpu")
    assert base != checkpoint_path("retrieval", "rope", 0, TINY, "cpu")
    assert base != checkpoint_path("lm", "alibi", 0, TINY, "cpu")
    assert base != checkpoint_path("lm", "rope", 0, CONFIGS["full"], "cpu")
    assert base == checkpoint_path("lm", "rope", 0, TINY, "cpu")
    # what only changes scoring keeps the trained models; randomized_multiple matters to one method
    scoring = dataclasses.replace(TINY, eval_multiples=(1, 2), seeds=(5,), finetune_steps=99, randomized_multiple=3)
    assert checkpoint_path("lm", "rope", 0, scoring, "cpu") == base
    assert checkpoint_path("lm", "rope-randomized", 0, scoring, "cpu") != \
        checkpoint_path("lm", "rope-randomized", 0, TINY, "cpu")
    longer = dataclasses.replace(TINY, steps=TINY.steps + 1)
    assert checkpoint_path("lm", "rope", 0, longer, "cpu") != base
    assert checkpoint_path("retrieval", "rope", 0, longer, "cpu") == checkpoint_path("retrieval", "rope", 0, TINY, "cpu")


def test_spread_is_mean_min_and_max_with_gaps() -> None:
    assert spread("x", [[1.0, None], [3.0, None]]) == {"x": [2.0, None], "x_min": [1.0, None], "x_max": [3.0, None]}


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
        (lambda: run(TINY, device="tpu"), ValueError, "device must be 'cpu' or 'cuda'.*got 'tpu'"),
        (lambda: run(TINY, device=0), TypeError, "device must be a string"),
        (lambda: load_corpus(0.9), ValueError, "validation_fraction must be <= 0.5, got 0.9"),
        (lambda: train_and_evaluate("bogus", TINY), ValueError, "method must be one of 'none'.*got 'bogus'"),
        (lambda: build_model("bogus", TINY, 20), ValueError, "method must be one of 'none'.*got 'bogus'"),
        (lambda: build_model("rope", TINY, 20, seed=-1), ValueError, "seed must be an integer >= 0, got -1"),
        (lambda: checkpoint_path("vision", "rope", 0, TINY, "cpu"), ValueError, "task must be one of"),
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


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message on a machine without a GPU")
def test_cuda_without_a_gpu_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="device='cuda' needs a GPU"):
        check_device("cuda")


# ---------------------------------------------------------------- the committed results files


def test_committed_results_have_the_full_configuration() -> None:
    results = load_results()
    assert Path(RESULTS_PATH).is_file()
    check_structure(results, "full")
    assert results["config"]["methods"] == list(STUDIED_METHODS) and len(results["config"]["seeds"]) >= 3
    assert results["device"] == "cpu" and results["workers"] >= 1
    for entry in results["methods"].values():
        assert all(run["train_cpu_seconds"] > 0 for run in entry["runs"])


def test_committed_large_results_have_the_large_configuration() -> None:
    results = load_results(RESULTS_PATH.parent / "large" / RESULTS_PATH.name)
    assert results["config"] == CONFIGS["large"].as_dict() and results["device"] == "cuda"
    assert list(results["methods"]) == list(STUDIED_METHODS)
    for entry in results["methods"].values():
        assert len(entry["runs"]) == 1 and entry["perplexity"] == entry["runs"][0]["perplexity"]


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
