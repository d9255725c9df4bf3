"""Qwen4-Exp's indexer head must hold the rotated width: once any key of the sparse attention's
indexer is given, its config class refuses ``int(head_dim * partial_rotary_factor)`` wider than
``indexer_head_dim`` (validate_architecture, configuration_qwen4_exp.py:205-230), as the indexer
turns the first rotated-width features of its queries and pooled keys with the attention's cos and
sin (modeling_qwen4_exp.py:652-664, 711, 743-747). read_config read such a config (the one "gap" of
tests/test_rope_class_code.py); it now refuses it, and reads every config the class builds.
Checked live against the class, and in the browser's port."""

from __future__ import annotations

import json
import re
import shutil
import warnings
from pathlib import Path
from typing import Any

import pytest

transformers = pytest.importorskip("transformers", reason="transformers is a test dependency (requirements.lock)")
from huggingface_hub.errors import StrictDataclassClassValidationError

from posenc.configs import read_config

INDEXER = {"indexer_n_heads": 4, "indexer_kv_heads": 1, "indexer_budget": 64, "indexer_compress_ratio": 4}
SHAPE = {"hidden_size": 256, "num_attention_heads": 4, "head_dim": 64, "num_hidden_layers": 4}
CASES = [  # (indexer_head_dim, partial_rotary_factor, indexer keys given)
    (32, None, True), (64, None, True), (128, None, True), (32, 0.5, True), (16, 0.5, True), (8, None, False)]


def _config(size: int, fraction: float | None, given: bool) -> dict[str, Any]:
    params: dict[str, Any] = {"rope_type": "default", "rope_theta": 10000.0}
    if fraction is not None:
        params["partial_rotary_factor"] = fraction
    extra = {**INDEXER, "indexer_head_dim": size} if given else {}
    return {"model_type": "qwen4_exp_text", **SHAPE, **extra, "rope_parameters": params}


def _class_builds(config: dict[str, Any]) -> bool:
    keys = {k: v for k, v in config.items() if k != "model_type"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            transformers.Qwen4ExpTextConfig(**keys)
        except (ValueError, StrictDataclassClassValidationError) as error:
            assert "QSA index head" in str(error), error
            return False
    return True


@pytest.mark.parametrize(("size", "fraction", "given"), CASES)
def test_refused_exactly_where_the_class_refuses(size: int, fraction: float | None, given: bool) -> None:
    config = _config(size, fraction, given)
    width = int(64 * (fraction or 1.0))
    if _class_builds(config):
        assert size >= width or not given
        layer = next(layer for layer in read_config(config).layers.values() if layer.rotates)
        assert layer.rotary_dim == width
    else:
        assert size < width and given
        with pytest.raises(ValueError, match=rf"config\['indexer_head_dim'\] is {size}, narrower than the rotated "
                                             rf"width {width} \(head_dim \* partial_rotary_factor\)"):
            read_config(config)


def test_the_class_refuses_some_and_builds_others() -> None:
    built = [_class_builds(_config(*case)) for case in CASES]
    assert built == [False, True, True, True, False, True]


PARTIAL = {"model_type": "qwen4_exp_text", **SHAPE, "indexer_head_dim": 256}
PARTIAL_WORDS = ("config needs 'indexer_n_heads', 'indexer_kv_heads', 'indexer_budget', 'indexer_compress_ratio' "
                 "beside the indexer's other keys: transformers' config class for model type 'qwen4_exp_text' "
                 "refuses part of them (QSA config is missing required fields): give all of 'indexer_n_heads', "
                 "'indexer_kv_heads', 'indexer_head_dim', 'indexer_budget', 'indexer_compress_ratio', or none")


def test_part_of_the_indexer_keys_is_refused_as_the_class_refuses_it() -> None:
    with warnings.catch_warnings(), pytest.raises((ValueError, StrictDataclassClassValidationError),
                                                  match="QSA config is missing required fields"):
        warnings.simplefilter("ignore")
        transformers.Qwen4ExpTextConfig(**{k: v for k, v in PARTIAL.items() if k != "model_type"})
    with pytest.raises(ValueError, match=re.escape(PARTIAL_WORDS)):
        read_config(PARTIAL)


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the site's JavaScript")
def test_the_browser_port_reads_alike(tmp_path: Path) -> None:
    from tests.site.check_inspector import API_READING, posenc_reading
    from tests.test_explorer_ports import port_against_posenc, run_js
    cases = [(json.dumps(_config(*case)), None, None) for case in CASES]
    cases.append((json.dumps({"model_type": "qwen4_exp", "text_config": _config(16, None, True)}), None, None))
    cases.append((json.dumps(PARTIAL), None, None))
    problems, outcomes = port_against_posenc(tmp_path, cases)
    assert not problems, "\n".join(problems[:10])
    assert outcomes == [False, True, True, True, False, True, False, False]
    refused = [case for case, ok in zip(cases, outcomes) if not ok]
    theirs = run_js(tmp_path, API_READING.replace("([cases])", "(cases)"), refused)
    assert isinstance(theirs, list)
    assert [json.loads(t)["error"] for t in theirs] == [posenc_reading(*c)["error"] for c in refused]
