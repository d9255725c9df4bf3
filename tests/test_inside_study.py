"""The inside-attention study (posenc.experiments.inside): its models, the tiny configuration end
to end through the command line, and that its rows may stand beside the committed hybrid rows."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

import pytest
import torch

from posenc.experiments import depth, hybrid, inside
from posenc.experiments.__main__ import main
from posenc.experiments._results import spread
from posenc.experiments.config import SETTINGS
from posenc.model import TinyTransformer

TINY = inside.CONFIGS["tiny"]


@pytest.fixture(autouse=True)
def model_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "model-cache"
    monkeypatch.setenv("POSENC_EXPERIMENT_CACHE", str(folder))
    return folder


def test_configurations_are_the_hybrid_studys_but_for_the_methods() -> None:
    assert set(inside.CONFIGS) == set(hybrid.CONFIGS)
    for name, config in inside.CONFIGS.items():
        assert config.methods == inside.METHODS
        assert dataclasses.replace(config, methods=hybrid.CONFIGS[name].methods) == hybrid.CONFIGS[name]


def test_the_full_configuration_matches_the_committed_hybrid_results_field_by_field() -> None:
    for task in ("lm", "retrieval"):
        committed = json.loads(hybrid.RESULTS_PATHS[task].read_text())["config"]
        ours = inside.CONFIGS["full"].as_dict()
        assert {k: v for k, v in ours.items() if k != "methods"} == \
            {k: v for k, v in committed.items() if k != "methods"}
        found = inside.baseline(task, inside.CONFIGS["full"])
        assert found is not None and found["file"] == f"hybrid_{task}.json"
        assert "steps" in found["fields_equal"] and "methods" not in found["fields_equal"]
    assert depth.load_results()["settings"] == SETTINGS["full"].as_dict()


def test_baseline_refuses_a_configuration_that_differs(tmp_path: Path) -> None:
    changed = dataclasses.replace(inside.CONFIGS["full"], steps=1199)
    with pytest.raises(ValueError, match=r"differs from the committed hybrid_lm results in \['steps'\]"):
        inside.baseline("lm", changed)
    with pytest.raises(ValueError, match="differs"):
        inside.run(changed, task="lm", workers=1)  # before any training
    assert inside.baseline("lm", TINY) is None  # no committed tiny run to stand beside


@pytest.mark.parametrize("method", inside.METHODS)
def test_each_row_is_its_method_on_a_four_layer_model_seeded_as_the_others(method: str) -> None:
    model = inside.build_inside_model(method, TINY, 20, seed=3)
    torch.manual_seed(3)
    same = TinyTransformer(20, TINY.dim, TINY.num_heads, TINY.num_layers, position=method)
    assert model.num_layers == 4 and model.position == method
    assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), same.state_dict().values()))


def test_path_jobs_go_first() -> None:
    jobs = inside._ordered_jobs("lm", TINY)
    assert [label for label, _ in jobs[:len(TINY.seeds)]] == ["lm:path"] * len(TINY.seeds)
    assert sorted(jobs) == sorted((f"lm:{m}", s) for m in inside.METHODS for s in TINY.seeds)


def check_results(results: dict[str, Any], task: str, config: Any) -> None:
    metric = "perplexity" if task == "lm" else "accuracy"
    assert results["experiment"] == f"inside_{task}"
    assert results["config"] == config.as_dict()
    assert results["eval_lengths"] == config.eval_lengths
    assert {"python", "torch", "numpy", "tqdm", "posenc"} == set(results["versions"])
    assert list(results["methods"]) == list(inside.METHODS)
    for entry in results["methods"].values():
        assert [r["seed"] for r in entry["runs"]] == list(config.seeds)
        assert {k: entry[k] for k in (metric, f"{metric}_min", f"{metric}_max")} == \
            spread(metric, [r[metric] for r in entry["runs"]])
        for run in entry["runs"]:
            assert len(run[metric]) == len(config.eval_lengths)
            assert all(math.isfinite(v) for v in run[metric])
            assert all(v > 1 for v in run[metric]) if task == "lm" else all(0 <= v <= 1 for v in run[metric])
            assert run["train_cpu_seconds"] >= 0 and len(run["train_curve"]) > 0
    if task == "retrieval":
        labels = [depth.depth_label(d) for d in SETTINGS[config.name].depths]
        assert list(results["depths"]) == labels and list(results["rows"]) == list(inside.METHODS)
        for method, row in results["rows"].items():
            per_seed = [r["depth_accuracy"] for r in results["methods"][method]["runs"]]
            assert [r["accuracy"] for r in row["runs"]] == per_seed
            for label in labels:
                assert row["accuracy"][label] == spread("accuracy", [s[label] for s in per_seed])


@pytest.mark.parametrize("task", ["lm", "retrieval"])
def test_tiny_study_end_to_end(task: str, tmp_path: Path) -> None:
    results = inside.run(TINY, task=task, workers=1)
    check_results(results, task, TINY)
    output = tmp_path / "inside.json"
    assert main([f"inside-{task}", "--config", "tiny", "--output", str(output), "--workers", "2",
                 "--no-progress"]) == 0
    again = json.loads(output.read_text())
    check_results(again, task, TINY)
    metric = "perplexity" if task == "lm" else "accuracy"
    for method in inside.METHODS:  # from the cache, in other processes: the same numbers
        assert [r[metric] for r in again["methods"][method]["runs"]] == \
            [r[metric] for r in results["methods"][method]["runs"]]
        assert all(r["from_cache"] for r in again["methods"][method]["runs"])


def test_depth_scores_are_the_depth_studys_test_sets() -> None:
    # an independent route: score one depth test set directly and compare with the study's numbers
    model, _ = inside.train_inside_model("retrieval", "fox", TINY, 0)
    scores = inside._depth_scores(model, TINY)
    tokens, targets = depth.test_set(TINY, TINY.eval_lengths[-1], 0.5)
    with torch.no_grad():
        predicted = model(tokens).argmax(-1)
    asked = targets != -100
    expected = float((predicted[asked] == targets[asked]).double().mean())
    assert scores["middle"][-1] == round(expected, 4)


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: inside.build_inside_model("rope", TINY, 20), ValueError, "method must be one of"),
        (lambda: inside.run(TINY, task="text"), ValueError, "task must be one of"),
        (lambda: inside.run(TINY, workers=0), ValueError, "workers"),
        (lambda: inside.run(dataclasses.replace(TINY, methods=("rope",))), ValueError, r"config.methods must be among"),
    ],
)
def test_bad_input_is_named(call: Any, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        call()


# ---------------------------------------------------------------- the committed results


@pytest.mark.parametrize("task", ["lm", "retrieval"])
def test_committed_results_stand_beside_the_hybrid_rows(task: str) -> None:
    config = inside.CONFIGS["full"]
    results = inside.load_results(task)
    check_results(results, task, config)
    committed = json.loads(hybrid.RESULTS_PATHS[task].read_text())
    assert results["versions"] == committed["versions"]  # the same libraries as the rows beside them
    assert results["baseline"] == {"file": f"hybrid_{task}.json", "versions_match": True,
                                   "fields_equal": [k for k in config.as_dict() if k != "methods"]}
    assert results["device"] == committed["device"] == "cpu"
    for entry in results["methods"].values():  # the MQAR models were scored again from the run's own cache
        assert all(run["train_cpu_seconds"] > 0 for run in entry["runs"])
        assert all(not run["from_cache"] for run in entry["runs"]) or task == "retrieval"
    if task == "retrieval":
        assert results["depth_baseline"]["file"] == "depth.json"
        assert results["settings"] == depth.load_results()["settings"]
        assert results["mean_distance"] == depth.load_results()["mean_distance"]  # the same test sequences


def test_committed_parameters_are_those_of_the_models() -> None:
    from posenc.experiments import retrieval
    from posenc.experiments.data import load_corpus

    vocab = {"lm": load_corpus(inside.CONFIGS["full"].validation_fraction).vocab_size,
             "retrieval": retrieval.vocab_size(inside.CONFIGS["full"].retrieval_symbols)}
    for task, size in vocab.items():
        for method, entry in inside.load_results(task)["methods"].items():
            model = inside.build_inside_model(method, inside.CONFIGS["full"], size)
            assert entry["parameters"] == sum(p.numel() for p in model.parameters())


def test_the_table_reads_both_studies() -> None:
    header, rows = inside.inside_table()
    assert header == ["method", "ppl@64", "ppl@512", "recall@64", "recall@512", "train s"]
    assert [row[0] for row in rows] == [*inside.REFERENCE_ROWS, *inside.METHODS]
    rope = hybrid.load_results("lm")["methods"]["rope"]
    assert rows[0][2].startswith(f"{rope['perplexity'][-1]:.2f} (")


def test_claims_read_the_inside_rows_seed_by_seed() -> None:
    from posenc.experiments.claims import measure

    text, recall = inside.load_results("lm"), inside.load_results("retrieval")
    for method in inside.METHODS:
        assert measure(f"ilm.{method}@8L").values() == tuple(r["perplexity"][-1] for r in text["methods"][method]["runs"])
        assert measure(f"irecall.{method}@L").values() == tuple(r["accuracy"][0] for r in recall["methods"][method]["runs"])
        assert measure(f"idepth.{method}.middle@8L").values() == \
            tuple(r["depth_accuracy"]["middle"][-1] for r in recall["methods"][method]["runs"])
