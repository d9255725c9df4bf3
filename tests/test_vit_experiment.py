"""The ViT resolution experiment end to end on its tiny configuration, and its committed results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from posenc.experiments.__main__ import main
from posenc.experiments.vit_resolution import CONFIGS, METHODS, RESULTS_PATH, load_results, summary_lines


def test_tiny_configuration_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    output = tmp_path / "vit.json"
    assert main(["vit-resolution", "--config", "tiny", "--output", str(output), "--workers", "1",
                 "--no-progress"]) == 0
    results = json.loads(output.read_text())
    config = CONFIGS["tiny"]
    assert results["config"]["name"] == "tiny"
    assert results["grids"] == [size // config.patch_size for size in config.eval_sizes]
    assert set(results["versions"]) >= {"torch", "scikit-learn", "numpy", "python"}
    assert results["data"]["train_images"] == config.max_train
    assert list(results["methods"]) == list(METHODS)
    for entry in results["methods"].values():
        assert len(entry["accuracy"]) == len(config.eval_sizes)
        assert all(len(per_seed) == len(config.seeds) for per_seed in entry["accuracy"])
        assert all(0.0 <= a <= 1.0 for per_seed in entry["accuracy"] for a in per_seed)
    # "rope-rescaled" is the RoPE model read at other coordinates: the same at the trained size
    assert results["methods"]["rope"]["accuracy"][0] == results["methods"]["rope-rescaled"]["accuracy"][0]
    assert results["methods"]["learned"]["parameters"] > results["methods"]["rope"]["parameters"]
    printed = capsys.readouterr().out
    assert printed.splitlines() == summary_lines(results)


def test_committed_results_are_the_full_configuration() -> None:
    results = load_results(RESULTS_PATH)
    config = CONFIGS["full"]
    assert results["config"] == config.as_dict()
    assert results["data"]["train_images"] + results["data"]["test_images"] == 1797
    for entry in results["methods"].values():
        for mean, per_seed in zip(entry["mean"], entry["accuracy"]):
            assert len(per_seed) == len(config.seeds)
            assert mean == pytest.approx(sum(per_seed) / len(per_seed), abs=1e-4)
    rope, rescaled = results["methods"]["rope"], results["methods"]["rope-rescaled"]
    assert rope["accuracy"][0] == rescaled["accuracy"][0]
