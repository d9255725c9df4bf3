"""The committed larger run of the inside-attention study (``results/large/inside_*.json``, one seed,
on a GPU): its configuration is the hybrid study's larger one but for the methods, its numbers are
consistent with its own runs, and the page's claims about it read these files."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest

from posenc.experiments import depth, hybrid, inside
from posenc.experiments._results import large_path, spread
from posenc.experiments.claims import value
from posenc.experiments.config import SETTINGS

RAN = ("fox", "fox_rope", "stick_breaking", "pope")  # PaTH did not fit the GPU time (the page says so)
LARGE = dataclasses.replace(inside.CONFIGS["large"], methods=RAN)
METRIC = {"lm": "perplexity", "retrieval": "accuracy"}


@pytest.fixture(params=["lm", "retrieval"])
def task(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_the_run_is_the_hybrid_studys_larger_protocol(task: str) -> None:
    results = inside.load_results(task, large_path(inside.RESULTS_PATHS[task]))
    hybrid_run = json.loads(large_path(hybrid.RESULTS_PATHS[task]).read_text())
    assert results["config"] == LARGE.as_dict() and results["device"] == "cuda"
    assert {k: v for k, v in results["config"].items() if k != "methods"} == \
        {k: v for k, v in hybrid_run["config"].items() if k != "methods"}
    assert results["baseline"]["file"] == f"hybrid_{task}.json" and results["baseline"]["versions_match"]
    assert results["versions"] == hybrid_run["versions"]  # the same GPU PyTorch as the rows beside it


def test_each_row_is_the_spread_of_its_one_run(task: str) -> None:
    results = inside.load_results(task, large_path(inside.RESULTS_PATHS[task]))
    metric = METRIC[task]
    assert list(results["methods"]) == list(RAN)
    for entry in results["methods"].values():
        (run,) = entry["runs"]
        assert run["seed"] == 0 and len(run[metric]) == len(LARGE.eval_lengths)
        assert {k: entry[k] for k in (metric, f"{metric}_min", f"{metric}_max")} == spread(metric, [run[metric]])
        assert all(math.isfinite(v) for v in run[metric])
        assert all(v > 1 for v in run[metric]) if task == "lm" else all(0 <= v <= 1 for v in run[metric])
    if task == "retrieval":
        assert results["chance"] == 1 / LARGE.retrieval_symbols
        assert list(results["depths"]) == [depth.depth_label(d) for d in SETTINGS["large"].depths]


def test_the_pages_numbers_are_these_files() -> None:
    text = inside.load_results("lm", large_path(inside.RESULTS_PATHS["lm"]))
    fox = text["methods"]["fox"]["perplexity"]
    assert value("large.ilm.fox@8L / @L", ".6f") == f"{fox[-1] / fox[0]:.6f}"
    recall = inside.load_results("retrieval", large_path(inside.RESULTS_PATHS["retrieval"]))
    best = max(entry["accuracy"][0] for entry in recall["methods"].values())
    assert value("max(large.irecall.*@L)", ".4f") == f"{best:.4f}"
