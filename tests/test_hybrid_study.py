"""The hybrid-designs study (posenc.experiments.hybrid): its models, the tiny configuration end to
end through the command line, and the committed results."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

import pytest
import torch

from posenc.designs import design_plans
from posenc.experiments import hybrid, retrieval
from posenc.experiments.__main__ import main
from posenc.experiments._results import large_path, spread
from posenc.experiments.config import LATER_CONFIGS, build_model

TINY = hybrid.CONFIGS["tiny"]


@pytest.fixture(autouse=True)
def model_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "model-cache"
    monkeypatch.setenv("POSENC_EXPERIMENT_CACHE", str(folder))
    return folder


def test_configurations_differ_from_the_later_studies_only_in_depth_and_methods() -> None:
    for name, config in hybrid.CONFIGS.items():
        assert config.num_layers == hybrid.LAYERS and config.methods == hybrid.METHODS
        assert dataclasses.replace(config, num_layers=LATER_CONFIGS[name].num_layers,
                                   methods=LATER_CONFIGS[name].methods) == LATER_CONFIGS[name]


def test_spans_are_a_quarter_window_and_a_half_chunk() -> None:
    assert hybrid.spans("rnope-swa", 64) == {"window": 16}
    assert hybrid.spans("rope-sinks", 64) == {"window": 16}
    assert hybrid.spans("irope", 64) == {"chunk": 32}
    with pytest.raises(ValueError, match="design must be one of"):
        hybrid.spans("rope", 64)


@pytest.mark.parametrize("method", hybrid.METHODS)
def test_each_row_is_its_design_on_a_four_layer_model(method: str) -> None:
    model = hybrid.build_hybrid_model(method, TINY, 20, seed=1)
    assert model.num_layers == 4
    if method in hybrid.DESIGNS_STUDIED:
        expected = design_plans(method, 4, **hybrid.spans(method, TINY.train_length))
        assert tuple(model.layer_plans) == expected
    else:
        plain = build_model(method, TINY, 20, seed=1)
        assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), plain.state_dict().values()))
    assert len(hybrid.describe(method, TINY)) == 4


def test_describe_names_each_layer() -> None:
    assert hybrid.describe("irope", hybrid.CONFIGS["full"]) == ["rope, chunk 32, q/k norm"] * 3 + ["none, temperature"]
    assert hybrid.describe("rnope-swa", hybrid.CONFIGS["full"]) == ["rope, window 16"] * 3 + ["none"]
    assert hybrid.describe("rope-sinks", hybrid.CONFIGS["full"]) == ["rope, window 16, sinks", "rope, sinks"] * 2


def check_results(results: dict[str, Any], task: str, config: Any) -> None:
    metric = "perplexity" if task == "lm" else "accuracy"
    assert results["experiment"] == f"hybrid_{task}"
    assert results["config"] == config.as_dict()
    assert results["eval_lengths"] == config.eval_lengths
    assert {"python", "torch", "numpy", "tqdm", "posenc"} == set(results["versions"])
    assert list(results["methods"]) == list(hybrid.METHODS)
    assert results["spans"] == {d: hybrid.spans(d, config.train_length) for d in hybrid.DESIGNS_STUDIED}
    for method, entry in results["methods"].items():
        assert [r["seed"] for r in entry["runs"]] == list(config.seeds)
        assert entry["layers"] == hybrid.describe(method, config)
        assert {k: entry[k] for k in (metric, f"{metric}_min", f"{metric}_max")} == \
            spread(metric, [r[metric] for r in entry["runs"]])
        for run in entry["runs"]:
            assert len(run[metric]) == len(config.eval_lengths)
            assert all(math.isfinite(v) for v in run[metric])
            if task == "lm":
                assert all(v > 1 for v in run[metric])
                assert len(run["position_loss"]) == max(config.eval_lengths) // config.position_bucket
            else:
                assert all(0 <= v <= 1 for v in run[metric])
                assert len(run["accuracy_by_block"]) == max(config.eval_multiples)
            assert run["train_cpu_seconds"] >= 0 and len(run["train_curve"]) > 0


@pytest.mark.parametrize("task", ["lm", "retrieval"])
def test_tiny_study_end_to_end(task: str, tmp_path: Path) -> None:
    results = hybrid.run(TINY, task=task, workers=1)
    check_results(results, task, TINY)
    output = tmp_path / "hybrid.json"
    assert main([f"hybrid-{task}", "--config", "tiny", "--output", str(output), "--workers", "2",
                 "--no-progress"]) == 0
    again = json.loads(output.read_text())
    check_results(again, task, TINY)
    metric = "perplexity" if task == "lm" else "accuracy"
    for method in hybrid.METHODS:  # from the cache, in other processes: the same numbers
        assert [r[metric] for r in again["methods"][method]["runs"]] == \
            [r[metric] for r in results["methods"][method]["runs"]]
        assert all(r["from_cache"] for r in again["methods"][method]["runs"])


def test_a_design_is_not_the_plain_rope_model() -> None:
    # the same seed draws the same weights; the windows, chunks and NoPE layers change the logits
    tokens, _ = retrieval.mqar_batch(2, 16, pairs=3, queries=3, symbols=8, generator=torch.Generator().manual_seed(0))
    plain = hybrid.build_hybrid_model("rope", TINY, 17, seed=2).eval()
    with torch.no_grad():
        for design in hybrid.DESIGNS_STUDIED:
            model = hybrid.build_hybrid_model(design, TINY, 17, seed=2).eval()
            if design != "rope-sinks":  # gpt-oss's sink logits are extra parameters
                model.load_state_dict(plain.state_dict())
            assert not torch.allclose(model(tokens), plain(tokens), atol=1e-4), design


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: hybrid.run(TINY, task="vision"), ValueError, "task must be one of"),
        (lambda: hybrid.run(LATER_CONFIGS["tiny"]), ValueError, "config must have at least 4 layers"),
        (lambda: hybrid.build_hybrid_model("kerple", TINY, 20), ValueError, "method must be one of"),
        (lambda: hybrid.load_results("vision"), ValueError, "task must be one of"),
    ],
)
def test_bad_input_is_a_clear_error(call, error, match) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(error, match=match):
        call()


# ---------------------------------------------------------------- the committed results


@pytest.mark.parametrize("task", ["lm", "retrieval"])
def test_committed_results(task: str) -> None:
    path = hybrid.RESULTS_PATHS[task]
    if not path.is_file():
        pytest.skip(f"{path.name} is not committed yet (make experiments-hybrid-{task})")
    check_results(hybrid.load_results(task), task, hybrid.CONFIGS["full"])
    large = large_path(path)
    if large.is_file():
        check_results(hybrid.load_results(task, large), task, hybrid.CONFIGS["large"])
