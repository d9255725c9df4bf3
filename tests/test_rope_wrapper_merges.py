"""Voxtral, Voxtral Realtime, PE audio, audio-video and video, and GLM-ASR merge defaults of their
own under a text_config the config gives (``{**init_kwargs, **text_config}``,
configuration_voxtral.py:121-122 and the files `posenc.configs._params.wrapper_merges` names), so a
text_config without ``rope_theta`` builds Voxtral's text model with a base of 1e8, not Llama's 1e4.
read_config read the text class's defaults there; it now merges the wrapper's first, as the class.

Checked live: the wrappers whose class builds a text model other than the text class's from the
same minimal text_config are exactly those whose table entry has ``text_config_merges`` (the
generator's record, `posenc.configs._params.wrapper_merges`), each recorded as the class's own
``init_kwargs``; minimal and partial text_configs read as the class's ``to_dict()`` does, layer by
layer; the browser's port reads alike and keeps the same record."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import warnings
from pathlib import Path
from typing import Any

import pytest

transformers = pytest.importorskip("transformers", reason="transformers is a test dependency (requirements.lock)")

from posenc.configs import read_config
from posenc.configs._params import wrapper_merges
from posenc.configs._table import model_types

WRAPPER_MERGES = wrapper_merges()  # the generator's record (model_types.json), not a hand list
KEYS = ("rope_theta", "rope_parameters", "head_dim", "hidden_size", "num_attention_heads", "sliding_window",
        "max_position_embeddings", "num_hidden_layers", "layer_types")


def _built(model_type: str, text: dict[str, Any]) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return transformers.CONFIG_MAPPING[model_type](text_config=dict(text))


def _merging() -> list[str]:
    """The table's wrappers whose class builds, from text_config={"model_type": t}, a text model
    whose rotary keys differ from the text class's own defaults."""
    found = []
    for model_type, item in sorted(model_types().items()):
        text = item.get("text_model_type")
        if not text or model_type not in transformers.CONFIG_MAPPING:
            continue
        try:
            ours = _built(model_type, {"model_type": text}).text_config.to_dict()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                own = transformers.CONFIG_MAPPING[text]().to_dict()
        except Exception:  # noqa: BLE001 - a class that does not build from a minimal text_config
            continue
        if any(ours.get(key) != own.get(key) for key in KEYS):
            found.append(model_type)
    return found


def test_the_record_is_the_classes_merge() -> None:
    assert _merging() == sorted(WRAPPER_MERGES)
    for model_type, merged in WRAPPER_MERGES.items():
        assert transformers.CONFIG_MAPPING[model_type].sub_configs_defaults["text_config"].init_kwargs == merged


def _unnoted(rope: Any) -> dict[str, Any]:
    return {name: dataclasses.replace(layer, note=None) for name, layer in rope.layers.items()}


# GLM-ASR merges rope_parameters (base 1e4), whose base wins over a flat rope_theta given beside them
IGNORED = {("glmasr", json.dumps({"rope_theta": 5e5}))}
CASES = [(t, extra) for t in sorted(WRAPPER_MERGES)
         for extra in ({}, {"hidden_size": 2048, "num_attention_heads": 16}, {"rope_theta": 5e5},
                       {"num_hidden_layers": 4})]
# a base given in rope_parameters, where the merge carries a base of its own (ModernBERT's are by layer type)
CASES += [(t, extra) for t in ("glmasr", "voxtral", "voxtral_realtime")
          for extra in ({"rope_parameters": {"rope_type": "default", "rope_theta": 5.0}},
                        {"rope_parameters": None, "rope_theta": 5e5})]


@pytest.mark.parametrize(("model_type", "extra"), CASES)
def test_a_given_text_config_reads_as_the_class_builds_it(model_type: str, extra: dict[str, Any]) -> None:
    text = {"model_type": model_types()[model_type]["text_model_type"], **extra}
    config = {"model_type": model_type, "text_config": text}
    built = _built(model_type, text)
    if (model_type, json.dumps(extra)) in IGNORED:  # transformers drops the given base; posenc refuses it
        assert built.text_config.rope_parameters["rope_theta"] == 1e4
        with pytest.raises(ValueError, match=re.escape(
                "model type 'glmasr': config['text_config']['rope_theta'] = 500000.0 is not read (the config class "
                "merges its own rope_parameters, base 10000.0, under the text_config, and their base wins): give "
                "it in config['text_config']['rope_parameters']")):
            read_config(config)
        return
    assert _unnoted(read_config(config)) == _unnoted(read_config(built.to_dict()))


def test_voxtral_reads_its_own_base() -> None:
    rope = read_config({"model_type": "voxtral", "text_config": {"model_type": "llama"}})
    assert [layer.base for layer in rope.layers.values()] == [1e8]
    assert _built("voxtral", {"model_type": "llama"}).text_config.rope_parameters["rope_theta"] == 1e8


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the site's JavaScript")
def test_the_browser_port_reads_alike(tmp_path: Path) -> None:
    from tests.site.check_inspector import API_READING, posenc_reading
    from tests.test_explorer_ports import port_against_posenc, run_js
    cases = [(json.dumps({"model_type": t, "text_config": {"model_type": model_types()[t]["text_model_type"], **e}}),
              None, None) for t, e in CASES]
    problems, outcomes = port_against_posenc(tmp_path, cases)
    assert not problems, "\n".join(problems[:10])
    refused = [case for case, ok in zip(cases, outcomes) if not ok]
    assert len(refused) == len(IGNORED)
    theirs = run_js(tmp_path, API_READING.replace("([cases])", "(cases)"), refused)
    assert isinstance(theirs, list)
    assert [json.loads(t)["error"] for t in theirs] == [posenc_reading(*c)["error"] for c in refused]
    assert run_js(tmp_path, "() => window.posencRopeParams.wrapperMerges()") == WRAPPER_MERGES
