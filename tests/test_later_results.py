"""The committed results of the later studies (training-free extension, the base against the context,
depth; full and larger configuration), checked against each other where two studies score the same
model, against what posenc recomputes, and through the tables and claims the chapter reads."""

from __future__ import annotations

import math
from typing import Any

import pytest

from posenc import tables
from posenc.experiments import (
    base_context,
    claims,
    context_extension,
    depth,
    hybrid,
    length_extrapolation,
    retrieval,
    training_free,
)
from posenc.experiments._remapped import REMAPS
from posenc.experiments._results import large_path, spread
from posenc.experiments.config import SETTINGS
from posenc.rope_base import rope_base_context_length, rope_base_lower_bound

FULL, LARGE = training_free.CONFIGS["full"], training_free.CONFIGS["large"]
RUNS = {"full": (FULL, lambda path: path), "large": (LARGE, large_path)}


def load(module: Any, size: str) -> dict[str, Any]:
    return module.load_results(RUNS[size][1](module.RESULTS_PATH))


def common(results: dict[str, Any], size: str, experiment: str, config: Any = None) -> None:
    config = RUNS[size][0] if config is None else config
    assert results["experiment"] == experiment and results["config"] == config.as_dict()
    assert results["eval_lengths"] == config.eval_lengths
    assert {"python", "torch", "numpy", "tqdm", "posenc"} == set(results["versions"])
    assert results["device"] == ("cpu" if size == "full" else "cuda")
    assert results["wall_seconds"] > 0 and results["workers"] >= 1


# ---------------------------------------------------------------- training-free extension


@pytest.mark.parametrize("size", ["full", "large"])
def test_training_free_results(size: str) -> None:
    results = load(training_free, size)
    common(results, size, "training_free")
    config = RUNS[size][0]
    L = config.train_length
    assert results["settings"] == {m: {str(n): REMAPS[m].settings(n, L) for n in config.eval_lengths}
                                   for m in REMAPS}
    for task, entry in results["tasks"].items():
        metric = entry["metric"]
        assert list(entry["methods"]) == list(training_free.METHODS)
        assert [r["seed"] for r in entry["runs"]] == list(config.seeds)
        for method, scores in entry["methods"].items():
            assert scores == spread(metric, [r["scores"][method] for r in entry["runs"]])
        for run in entry["runs"]:
            # Leaky ReRoPE with s = n / L = 1, and ReRoPE's log-n scale, change nothing at L ...
            assert run["scores"]["leaky-rerope"][0] == pytest.approx(run["scores"]["rope"][0], rel=2e-3)
            assert all(math.isfinite(v) for scores in run["scores"].values() for v in scores)


def test_training_free_scores_the_models_of_the_other_studies() -> None:
    # plain RoPE is the model the language-modelling and retrieval studies scored: the same numbers
    results = training_free.load_results()["tasks"]
    lm = length_extrapolation.load_results()["methods"]["rope"]["runs"]
    recall = retrieval.load_results()["methods"]["rope"]["runs"]
    extension = context_extension.load_results()["tasks"]
    for task, other, metric in (("lm", lm, "perplexity"), ("retrieval", recall, "accuracy")):
        for run, same_model, extended in zip(results[task]["runs"], other, extension[task]["runs"]):
            assert run["scores"]["rope"] == same_model[metric]
            assert run["scores"]["rope"][0] == extended["at_train_length"]


# ---------------------------------------------------------------- the base against the context


@pytest.mark.parametrize("size", ["full", "large"])
def test_base_results(size: str) -> None:
    results = load(base_context, size)
    common(results, size, "base_context")
    config, settings = RUNS[size][0], SETTINGS[size]
    head_dim = config.dim // config.num_heads
    assert results["head_dim"] == head_dim and results["settings"] == settings.as_dict()
    assert results["lower_bound"]["base"] == pytest.approx(
        rope_base_lower_bound(head_dim, config.train_length, relative_step=base_context.BOUND_STEP), abs=0.1)
    assert list(results["bases"]) == [base_context.base_key(b) for b in settings.bases]
    for entry in results["bases"].values():
        assert entry["context_length"] == rope_base_context_length(head_dim, entry["base"],
                                                                   max_length=max(config.eval_lengths))
        assert [r["seed"] for r in entry["runs"]] == list(config.seeds)
        for metric in ("perplexity", "accuracy", "accuracy_by_distance"):
            assert {k: entry[k] for k in (metric, f"{metric}_min", f"{metric}_max")} == \
                spread(metric, [r[metric] for r in entry["runs"]])
        assert len(entry["accuracy_by_distance"]) == len(results["distance_buckets"])


def test_base_10000_is_the_rope_model_of_the_other_studies() -> None:
    runs = base_context.load_results()["bases"]["10000"]["runs"]
    lm = length_extrapolation.load_results()["methods"]["rope"]["runs"]
    recall = retrieval.load_results()["methods"]["rope"]["runs"]
    for run, text, mqar in zip(runs, lm, recall):
        assert run["perplexity"] == text["perplexity"] and run["accuracy"] == mqar["accuracy"]
    # in the larger run too: the model the training-free study scored
    large = load(base_context, "large")["bases"]["10000"]["runs"]
    free = load(training_free, "large")["tasks"]
    for run, text, mqar in zip(large, free["lm"]["runs"], free["retrieval"]["runs"]):
        assert run["perplexity"] == text["scores"]["rope"] and run["accuracy"] == mqar["scores"]["rope"]


# ---------------------------------------------------------------- depth


@pytest.mark.parametrize("size", ["full", "large"])
def test_depth_results(size: str) -> None:
    results = load(depth, size)
    common(results, size, "depth")
    config = RUNS[size][0]
    assert list(results["depths"]) == ["start", "middle", "end"]
    expected = [row for row, (name, _) in depth.ROWS.items()
                if (name.removeprefix("hybrid:") in hybrid.CONFIGS[size].methods if name.startswith("hybrid:")
                    else name in config.methods)]
    assert list(results["rows"]) == expected
    for row, entry in results["rows"].items():
        assert entry["layers"] == (hybrid.LAYERS if row.endswith("(4 layers)") else config.num_layers)
        for place, scores in entry["accuracy"].items():
            assert scores == spread("accuracy", [r["accuracy"][place] for r in entry["runs"]])
            assert (scores["accuracy"][1] is None) == (row == "learned")
    # the mean distance from a query to its key, recomputed from the test sets: the start grows with the length
    for place, where in results["depths"].items():
        assert results["mean_distance"][place] == [
            round(float(base_context.query_distances(*depth.test_set(config, n, where)).double().mean()), 1)
            for n in config.eval_lengths]
    far = results["mean_distance"]["start"]
    assert far == sorted(far) and far[-1] > 4 * far[0]
    # at L, Leaky ReRoPE with s = 1 is RoPE itself
    leaky, plain = results["rows"]["rope + leaky-rerope"]["runs"], results["rows"]["rope"]["runs"]
    for a, b in zip(leaky, plain):
        assert a["accuracy"]["middle"][0] == pytest.approx(b["accuracy"]["middle"][0], abs=0.01)


# ---------------------------------------------------------------- today's hybrid designs


@pytest.mark.parametrize("size", ["full", "large"])
@pytest.mark.parametrize("task", ["lm", "retrieval"])
def test_hybrid_results(size: str, task: str) -> None:
    config = hybrid.CONFIGS[size]
    results = hybrid.load_results(task, RUNS[size][1](hybrid.RESULTS_PATHS[task]))
    common(results, size, f"hybrid_{task}", config)
    assert config.num_layers == hybrid.LAYERS == 4 and list(results["methods"]) == list(hybrid.METHODS)
    L = config.train_length
    assert results["spans"] == {design: hybrid.spans(design, L) for design in hybrid.DESIGNS_STUDIED}
    metric = hybrid.METRICS[task]
    for method, entry in results["methods"].items():
        assert entry["layers"] == hybrid.describe(method, config)
        assert [r["seed"] for r in entry["runs"]] == list(config.seeds)
        assert {k: entry[k] for k in (metric, f"{metric}_min", f"{metric}_max")} == \
            spread(metric, [r[metric] for r in entry["runs"]])
        for run in entry["runs"]:
            assert len(run[metric]) == len(config.eval_lengths) and all(math.isfinite(v) for v in run[metric])
            assert run["train_cpu_seconds"] > 0 and run["eval_cpu_seconds"] > 0
    # the designs' layer patterns, as the file records them: Llama 4's three chunked layers per NoPE one
    assert results["methods"]["irope"]["layers"][-1] == "none, temperature"
    assert all(f"chunk {L // 2}" in layer for layer in results["methods"]["irope"]["layers"][:3])
    assert results["methods"]["rnope-swa"]["layers"] == [f"rope, window {L // 4}"] * 3 + ["none"]


def test_hybrid_parameters_are_those_of_the_models() -> None:
    for task, vocab in (("lm", None), ("retrieval", retrieval.vocab_size(FULL.retrieval_symbols))):
        results = hybrid.load_results(task)
        if vocab is None:
            from posenc.experiments.data import load_corpus

            vocab = load_corpus(FULL.validation_fraction).vocab_size
        for method, entry in results["methods"].items():
            model = hybrid.build_hybrid_model(method, hybrid.CONFIGS["full"], vocab)
            assert entry["parameters"] == sum(p.numel() for p in model.parameters())


# ---------------------------------------------------------------- the tables and claims the chapter reads


def test_tables_of_the_later_studies() -> None:
    header, rows = tables.training_free_perplexity_table()
    assert header == ["method", "ppl@64", "ppl@128", "ppl@256", "ppl@512"]
    assert [row[0] for row in rows] == [*training_free.METHODS, "ntk (scaling rule)", "yarn (scaling rule)"]
    header, rows = tables.training_free_accuracy_table()
    assert header[1:] == ["recall@64", "recall@128", "recall@256", "recall@512"] and len(rows) == 8
    header, rows = tables.base_table()
    assert [row[0] for row in rows] == ["50", "200", "500", "1,000", "2,000", "10,000", "1,000,000"]
    header, rows = tables.depth_table()
    assert [row[0] for row in rows] == list(depth.load_results()["rows"])
    assert header[-1] == "ppl@512" and all(row[-1] != "-" for row in rows if row[0] != "learned")
    header, rows = tables.hybrid_table()
    assert [row[0] for row in rows] == list(hybrid.METHODS)
    header, rows = tables.large_later_table()
    assert len(rows) == len(training_free.METHODS) + len(hybrid.METHODS)


def test_claims_read_the_later_studies() -> None:
    free = training_free.load_results()["tasks"]["lm"]["runs"]
    assert claims.measure("free.lm.rerope@8L").seeds == tuple(r["scores"]["rerope"][-1] for r in free)
    base = base_context.load_results()["bases"]["500"]["runs"]
    assert claims.measure("base.recall.500@dist7").seeds == tuple(r["accuracy_by_distance"][7] for r in base)
    assert claims.measure("base.lm.1000000@2L").seeds == tuple(
        r["perplexity"][1] for r in base_context.load_results()["bases"]["1000000"]["runs"])
    rows = depth.load_results()["rows"]
    assert claims.measure("depth.remap.self-extend.middle@8L").seeds == tuple(
        r["accuracy"]["middle"][-1] for r in rows["rope + self-extend"]["runs"])
    assert claims.measure("depth.hybrid.irope.start@L").seeds == tuple(
        r["accuracy"]["start"][0] for r in rows["irope (4 layers)"]["runs"])
    assert claims.measure("depth.kerple.end@4L").seeds == tuple(r["accuracy"]["end"][2] for r in rows["kerple"]["runs"])
    text = hybrid.load_results("lm")["methods"]["irope"]["runs"]
    assert claims.measure("hlm.irope@8L").seeds == tuple(r["perplexity"][-1] for r in text)
    assert claims.measure("large.hlm.irope@8L").seeds is not None
    for bad in ("free.lm.yarn@8L", "base.recall.123@L", "base.lm.500@dist1", "depth.rope.deep@L",
                "depth.remap.rope@L", "hrecall.rope.tuned@L"):
        with pytest.raises(claims.ClaimError):
            claims.measure(bad)
