"""The later studies (training-free extension, the base against the context, depth): their pieces,
the tiny configuration end to end, and the MQAR generator's depth layout."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc.experiments import base_context, context_extension, depth, retrieval, training_free
from posenc.experiments.__main__ import main
from posenc.experiments._remapped import REMAPS, RemappedRoPE, remapped, self_extend_group
from posenc.experiments._training import IGNORE
from posenc.experiments.config import CONFIGS, SETTINGS, STUDIED_METHODS, build_model
from posenc.experiments.length_extrapolation import train_and_evaluate
from posenc.extension import relative_offsets, rerope_offsets
from posenc.model import TinyTransformer

TINY = CONFIGS["tiny"]


@pytest.fixture(autouse=True)
def model_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "model-cache"
    monkeypatch.setenv("POSENC_EXPERIMENT_CACHE", str(folder))
    return folder


# ---------------------------------------------------------------- MQAR with the pairs at a depth


def test_the_default_mqar_layout_is_unchanged() -> None:
    # sha256 of the test sets of every configuration and of five small batches, computed with the
    # generator as it was before `depth` was added (commit b75c0a3): the committed results stand.
    digest = hashlib.sha256()
    for config in CONFIGS.values():
        for n in config.eval_lengths:
            tokens, targets = retrieval.test_set(config, n)
            digest.update(tokens.numpy().tobytes())
            digest.update(targets.numpy().tobytes())
    for seed in range(5):
        tokens, targets = retrieval.mqar_batch(3, 40, pairs=4, queries=5, symbols=9,
                                               generator=torch.Generator().manual_seed(seed))
        digest.update(tokens.numpy().tobytes())
        digest.update(targets.numpy().tobytes())
    assert digest.hexdigest() == "cdaae7e9a5a2a5f39fade2387646195ca46eb3683e324d7f02e4ad0d48b165a5"


@settings(max_examples=60, deadline=None)
@given(pairs=st.integers(1, 5), queries=st.integers(1, 5), extra_span=st.integers(0, 6), slack=st.integers(0, 30),
       where=st.floats(0.0, 1.0), batch=st.integers(1, 3), seed=st.integers(0, 2**31))
def test_mqar_pairs_sit_at_the_depth_and_the_queries_at_the_end(pairs: int, queries: int, extra_span: int,
                                                                slack: int, where: float, batch: int,
                                                                seed: int) -> None:
    span = queries + extra_span
    length = 2 * pairs + span + slack
    symbols = pairs + 2
    tokens, targets = retrieval.mqar_batch(batch, length, pairs=pairs, queries=queries, symbols=symbols,
                                           generator=torch.Generator().manual_seed(seed), depth=where, query_span=span)
    again, _ = retrieval.mqar_batch(batch, length, pairs=pairs, queries=queries, symbols=symbols,
                                    generator=torch.Generator().manual_seed(seed), depth=where, query_span=span)
    assert torch.equal(tokens, again)
    first = math.floor(where * slack + 0.5)  # the room before the queries' span is `slack` tokens
    for row, answers in zip(tokens.tolist(), targets.tolist()):
        keys, values = row[first:first + 2 * pairs:2], row[first + 1:first + 2 * pairs:2]
        assert len(set(keys)) == pairs and all(1 <= k <= symbols < v <= 2 * symbols for k, v in zip(keys, values))
        asked = [p for p, answer in enumerate(answers) if answer != IGNORE]
        assert len(asked) == queries and min(asked) >= length - span  # every query in the last span
        for p in asked:
            assert answers[p] == dict(zip(keys, values))[row[p]]
        pair_block = set(range(first, first + 2 * pairs))
        assert all(row[p] == 0 for p in range(length) if p not in pair_block and p not in asked)


def test_query_distances_are_how_far_back_each_key_stands() -> None:
    tokens, targets = retrieval.mqar_batch(6, 40, pairs=3, queries=4, symbols=5,
                                           generator=torch.Generator().manual_seed(3), depth=0.5, query_span=10)
    expected = [p - row.index(row[p]) for row, answers in zip(tokens.tolist(), targets.tolist())
                for p, answer in enumerate(answers) if answer != IGNORE]
    assert base_context.query_distances(tokens, targets).tolist() == expected


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"query_span": 5}, ValueError, "query_span=5 needs a depth"),
        ({"depth": 0.5, "query_span": 1}, ValueError, "query_span must be an integer >= 2"),
        ({"depth": 1.5, "query_span": 4}, ValueError, "depth must be <= 1.0"),
        ({"depth": 0.5}, TypeError, "query_span must be an integer"),
        ({"depth": 0.5, "query_span": 17}, ValueError, "length must be an integer >= 21"),
    ],
)
def test_bad_depth_layouts_are_clear_errors(kwargs: dict[str, Any], error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        retrieval.mqar_batch(2, 20, pairs=2, queries=2, symbols=4, generator=torch.Generator(), **kwargs)


# ---------------------------------------------------------------- a trained RoPE model, remapped


def rope_model(**kwargs: Any) -> TinyTransformer:
    torch.manual_seed(0)
    return TinyTransformer(20, 16, 2, 2, position="rope", **kwargs).eval()


@pytest.mark.parametrize("plan", [{}, {"layer_rope_bases": [100.0, 10000.0]}, {"layer_positions": ["rope", "none"]}])
def test_rope_offsets_through_the_hooks_give_the_models_own_logits(plan: dict[str, Any]) -> None:
    model = rope_model(**plan)
    tokens = torch.randint(0, 20, (3, 24), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        assert torch.allclose(RemappedRoPE(model, relative_offsets)(tokens), model(tokens), atol=1e-5)
        assert torch.allclose(remapped(model, "rope", 24, 16)(tokens), model(tokens), atol=1e-5)


def test_the_offsets_reach_attention() -> None:
    # Offsets 2 (i - j) are what RoPE sees when the positions are 0, 2, 4, ...: the model's own rotary path.
    model = rope_model()
    tokens = torch.randint(0, 20, (2, 12), generator=torch.Generator().manual_seed(2))
    doubled = RemappedRoPE(model, lambda i, j: 2 * relative_offsets(i, j))
    with torch.no_grad():
        assert torch.allclose(doubled(tokens), model(tokens, positions=2 * torch.arange(12)[None]), atol=1e-5)
        clipped = RemappedRoPE(model, lambda i, j: rerope_offsets(i, j, window=3))(tokens)
    assert not torch.allclose(clipped, model(tokens), atol=1e-3)  # ReRoPE with a window of 3 changes the logits


def test_methods_that_change_nothing_at_the_training_length() -> None:
    model = rope_model()
    tokens = torch.randint(0, 20, (2, 16), generator=torch.Generator().manual_seed(4))
    with torch.no_grad():  # Leaky ReRoPE with s = n / L = 1 is RoPE, and log-n scales nothing within L
        assert torch.allclose(remapped(model, "leaky-rerope", 16, 16)(tokens), model(tokens), atol=1e-5)
    assert self_extend_group(64, 64, 16) == 3 and self_extend_group(512, 64, 16) == 31
    assert REMAPS["self-extend"].settings(512, 64) == {"window": 16, "group_size": 31}
    with pytest.raises(ValueError, match="method must be one of 'rope', 'rerope'"):
        remapped(model, "yarn", 16, 16)
    with pytest.raises(ValueError, match="position='rope'"):
        RemappedRoPE(build_model("alibi", TINY, 20), relative_offsets)


def test_the_default_base_is_the_studies_rope_model() -> None:
    # Base 10000 reuses the RoPE model of the other studies: building it per layer changes no weight
    # and no logit, so the cached model is the model this study would train.
    plain = base_context.build_base_model(10000.0, TINY, 20, seed=3)
    per_layer = TinyTransformer(20, TINY.dim, TINY.num_heads, TINY.num_layers, position="rope",
                                layer_rope_bases=[10000.0] * TINY.num_layers)
    per_layer.load_state_dict(plain.state_dict())
    torch.manual_seed(3)
    drawn = TinyTransformer(20, TINY.dim, TINY.num_heads, TINY.num_layers, position="rope",
                            layer_rope_bases=[10000.0] * TINY.num_layers)
    assert all(torch.equal(a, b) for a, b in zip(drawn.state_dict().values(), plain.state_dict().values()))
    tokens = torch.randint(0, 20, (2, 9))
    with torch.no_grad():
        assert torch.equal(per_layer.eval()(tokens), plain.eval()(tokens))
    assert base_context.model_name(10000.0) == "rope" and base_context.model_name(50.0) == "rope-base50"


# ---------------------------------------------------------------- end to end, tiny


def check_common(results: dict[str, Any], experiment: str) -> None:
    assert results["experiment"] == experiment
    assert results["config"] == TINY.as_dict()
    assert {"python", "torch", "numpy", "tqdm", "posenc"} == set(results["versions"])
    assert results["wall_seconds"] >= 0 and results["workers"] >= 1 and results["device"] == "cpu"


def test_training_free_study_end_to_end(tmp_path: Path) -> None:
    results = training_free.run(TINY, workers=1)
    check_common(results, "training_free")
    output = tmp_path / "training-free.json"
    assert main(["training-free", "--config", "tiny", "--output", str(output), "--workers", "1", "--no-progress"]) == 0
    again = json.loads(output.read_text())
    for task, entry in results["tasks"].items():
        assert list(entry["methods"]) == list(training_free.METHODS)
        assert [r["scores"] for r in entry["runs"]] == [r["scores"] for r in again["tasks"][task]["runs"]]
        for run in entry["runs"]:
            model, _ = context_extension.trained_rope(task, TINY, run["seed"], "cpu")
            assert run["scores"]["rope"][0] == context_extension.score(task, model, TINY, TINY.train_length)
            assert run["scores"]["leaky-rerope"][0] == pytest.approx(run["scores"]["rope"][0], rel=1e-4)
            assert all(math.isfinite(v) for scores in run["scores"].values() for v in scores)
    assert results["settings"]["self-extend"][str(8 * TINY.train_length)]["group_size"] == \
        self_extend_group(8 * TINY.train_length, TINY.train_length, TINY.train_length // 4)


def test_base_study_end_to_end() -> None:
    results = base_context.run(TINY, workers=1)
    check_common(results, "base_context")
    settings_ = SETTINGS["tiny"]
    assert list(results["bases"]) == [base_context.base_key(b) for b in settings_.bases]
    assert base_context.base_key(1e6) == "1000000" and base_context.base_key(2.5) == "2.5"
    assert len(results["distance_buckets"]) == TINY.train_length // settings_.distance_bucket
    head_dim = TINY.dim // TINY.num_heads
    assert results["head_dim"] == head_dim and results["lower_bound"]["base"] > 1
    default = results["bases"]["10000"]
    for run, seed in zip(default["runs"], TINY.seeds):  # the other studies' own RoPE models and test sets
        assert run["perplexity"] == train_and_evaluate("rope", TINY, seed)["perplexity"]
        assert run["accuracy"] == retrieval.evaluate_model(retrieval.train_retrieval_model("rope", TINY, seed)[0],
                                                           TINY, None)
    for entry in results["bases"].values():
        assert len(entry["accuracy_by_distance"]) == len(results["distance_buckets"])
        assert all(0 <= a <= 1 for run in entry["runs"] for a in run["accuracy_by_distance"] if a is not None)


def test_depth_study_end_to_end(tmp_path: Path) -> None:
    results = depth.run(TINY, workers=1)
    check_common(results, "depth")
    assert list(results["rows"]) == list(depth.ROWS)
    assert list(results["depths"]) == ["start", "middle", "end"]
    for row, entry in results["rows"].items():
        for label, scores in entry["accuracy"].items():
            assert (scores["accuracy"][1] is None) == (row == "learned")  # no rows past L
    # at L, leaky ReRoPE (s = 1) is RoPE itself
    assert results["rows"]["rope + leaky-rerope"]["accuracy"]["start"]["accuracy"][0] == \
        pytest.approx(results["rows"]["rope"]["accuracy"]["start"]["accuracy"][0], abs=1e-4)
    # the pairs at the end sit as near the queries at every length; at the start they move away
    near, far = results["mean_distance"]["end"], results["mean_distance"]["start"]
    assert max(near) - min(near) < 1.0 and far == sorted(far) and far[-1] > far[0]


def test_settings_exist_for_every_configuration() -> None:
    assert set(SETTINGS) == set(CONFIGS)
    for name, settings_ in SETTINGS.items():
        config = CONFIGS[name]
        assert settings_.name == name and 10000.0 in settings_.bases
        assert config.retrieval_queries <= settings_.depth_query_span <= config.train_length - 2 * config.retrieval_pairs
        assert config.train_length % settings_.distance_bucket == 0
    assert set(depth.ROWS) >= set(STUDIED_METHODS)


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: training_free.run(TINY, workers=0), ValueError, "workers must be an integer >= 1"),
        (lambda: depth.run(TINY, device="tpu"), ValueError, "device must be 'cpu' or 'cuda'"),
        (lambda: base_context.run(TINY, device=1), TypeError, "device must be a string"),
        (lambda: base_context.build_base_model(0.5, TINY, 20), ValueError, "base must be >= 1.0"),
        (lambda: base_context.train_base_model("vision", 100.0, TINY), ValueError, "task must be one of"),
        (lambda: depth.depth_label(2.0), ValueError, "depth must be <= 1.0"),
        (lambda: main(["depth", "--config", "huge"]), SystemExit, "2"),
    ],
)
def test_bad_input_is_a_clear_error(call, error, match) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(error, match=match):
        call()
