"""A wrapper's config without ``text_config`` whose top level carries text-model keys: most config
classes build the text model from their own defaults and ignore them (LlavaConfig(rope_theta=5e5)
keeps Llama's 1e4), while read_config read them, a silently wrong answer; a few forward some
(Qwen2-VL's class, for older configs). The table records, per wrapper, those of the keys read_config
reads (``posenc.configs._params.TOP_LEVEL_KEYS``) that its class may read there (``top_level_read``,
found by the generator, tools/rope_model_types/wrappers.py); read_config refuses the others by name
where reading them would change its answer, and reads these as the class forwards them. Other names
of the text model (Gemma 3's rope_local_base_freq): tests/test_rope_wrapper_top_names.py.

Checked live with values other than the generator's probes: each recorded key leaves the class's
text model as it builds it by default; read_config refuses it naming the key, its value and the
text_config, or reads as without it where it changes nothing; a key the class forwards reads as the
class's to_dict(); the browser port alike."""

from __future__ import annotations

import dataclasses
import json
import shutil
import warnings
from pathlib import Path
from typing import Any

import pytest

transformers = pytest.importorskip("transformers", reason="transformers is a test dependency (requirements.lock)")

from posenc.configs import read_config
from posenc.configs._params import TOP_LEVEL_KEYS
from posenc.configs._table import model_types
from posenc.configs.vision import ENCODER_MODEL_TYPES

# values other than the generator's probes (tools/rope_model_types/wrappers.PROBES)
VALUES: dict[str, Any] = {"rope_theta": 5e5, "max_position_embeddings": 1234, "sliding_window": 64,
                          "hidden_size": 2048, "rope_scaling": {"rope_type": "linear", "factor": 2.0},
                          "head_dim": 64, "num_hidden_layers": 4}
WRAPPERS = sorted(t for t, item in model_types().items() if item.get("text_model_type"))


def ignored(model_type: str) -> list[str]:
    return [key for key in TOP_LEVEL_KEYS if key not in model_types()[model_type].get("top_level_read", [])]


# SAM 3's own types are refused first as encoders that read_vision_config reads (tests/test_config_vision.py)
IGNORING = [t for t in WRAPPERS if ignored(t) and t not in ENCODER_MODEL_TYPES]


def _text(model_type: str, **kwargs: Any) -> dict[str, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dict(transformers.CONFIG_MAPPING[model_type](**kwargs).get_text_config(decoder=True).to_dict())


def words(model_type: str, key: str, value: Any) -> str:
    return (f"model type {model_type!r}: config[{key!r}] = {value!r} is not read (without a text_config the "
            f"config class builds its text model from its own defaults and ignores it): give it in the "
            f"language model's part, config['text_config'] (or the 'decoder', 'generator' or "
            f"'decoder_config' its class keeps)")


CASES = [(t, key) for t in IGNORING for key in VALUES if key in ignored(t)]


def test_most_wrappers_ignore_the_top_level() -> None:
    assert {"llava", "mistral3", "gemma3", "qwen3_vl", "voxtral"} <= set(IGNORING)
    assert len(CASES) > 5 * len(IGNORING)


def _answer(read: Any, config: dict[str, Any]) -> Any:
    try:
        return read(config)
    except ValueError as error:
        return str(error)


def _unchecked(config: dict[str, Any]) -> Any:
    """What read_config would answer without its check of the top level (the reading, or its error)."""
    from posenc.configs._reader import _read
    return _answer(lambda c: _read(c, None), config)


@pytest.mark.parametrize(("model_type", "key"), CASES)
def test_an_ignored_key_is_refused_by_name(model_type: str, key: str) -> None:
    """Refused in these words where reading it would change the answer; else read as without it
    (Llama's code has no window: a sliding_window at the top of a LLaVA config changes nothing)."""
    value = VALUES[key]
    assert _text(model_type, **{key: value}) == _text(model_type)  # the class's text model: unchanged
    base, config = {"model_type": model_type}, {"model_type": model_type, key: value}
    changes = _unchecked(config) != _unchecked(base)
    assert _answer(read_config, config) == (words(model_type, key, value) if changes else _answer(read_config, base))


def _changing() -> list[tuple[str, str]]:
    return [case for case in CASES if _unchecked({"model_type": case[0], case[1]: VALUES[case[1]]})
            != _unchecked({"model_type": case[0]})]


def test_most_ignored_keys_would_change_the_reading() -> None:
    assert len(_changing()) > 3 * len(IGNORING)


def _unnoted(rope: Any) -> dict[str, Any]:
    """The reading of each kind of layer, without its note and its layer list (a config without the
    layer count lists none; the class fills in its default count)."""
    return {name: dataclasses.replace(layer, note=None, layers=()) for name, layer in rope.layers.items()}


# keys the class forwards to its text model (Qwen2-VL: configuration_qwen2_vl.py's backward compatibility)
FORWARDED: list[tuple[str, dict[str, Any]]] = [
    ("qwen2_vl", {"rope_theta": 5e5}), ("qwen2_vl", {"max_position_embeddings": 1234}),
    ("qwen2_5_vl", {"rope_theta": 5e5}), ("fuyu", {"rope_theta": 5e5})]


@pytest.mark.parametrize(("model_type", "extra"), FORWARDED)
def test_a_forwarded_key_reads_as_the_class_builds_it(model_type: str, extra: dict[str, Any]) -> None:
    (key, value), = extra.items()
    assert key not in ignored(model_type)
    assert _text(model_type, **extra) != _text(model_type)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        built = transformers.CONFIG_MAPPING[model_type](**extra).to_dict()
    assert _unnoted(read_config({"model_type": model_type, **extra})) == _unnoted(read_config(built))


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the site's JavaScript")
def test_the_browser_port_refuses_alike(tmp_path: Path) -> None:
    from tests.site.check_inspector import API_READING, posenc_reading
    from tests.test_explorer_ports import port_against_posenc, run_js
    refused = [(json.dumps({"model_type": t, key: VALUES[key]}), None, None) for t, key in _changing()[::7]]
    read = [(json.dumps({"model_type": t, **extra}), None, None) for t, extra in FORWARDED]
    problems, outcomes = port_against_posenc(tmp_path, refused + read)
    assert not problems, "\n".join(problems[:10])
    assert outcomes == [False] * len(refused) + [True] * len(read)
    theirs = run_js(tmp_path, API_READING.replace("([cases])", "(cases)"), refused)
    assert isinstance(theirs, list)
    assert [json.loads(t)["error"] for t in theirs] == [posenc_reading(*c)["error"] for c in refused]
    assert run_js(tmp_path, "() => window.posencRopeParams.TOP_LEVEL_KEYS") == list(TOP_LEVEL_KEYS)
