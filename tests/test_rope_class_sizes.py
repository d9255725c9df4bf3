"""A config that leaves out the head sizes is read with the config class's defaults for them, as
transformers builds it: ``LlamaConfig()`` is 4096 wide with 32 heads (configuration_llama.py:65-68)
and sets ``head_dim = hidden_size // num_attention_heads`` in ``__post_init__`` (:86-88), and its
model runs. read_config refused such a config ("config needs 'head_dim', or 'hidden_size' and
'num_attention_heads'"). The table now records the class defaults of ``hidden_size`` and
``num_attention_heads`` where the class has no default ``head_dim`` (tools/rope_model_types,
classes.size_defaults), and a note names the keys so read: a config.json that transformers saves
carries them (``save_pretrained`` writes ``to_diff_dict``, which keeps every key the base
``PreTrainedConfig`` lacks, configuration_utils.py:785, 1199-1240), so a config without them is
probably a partial copy.

A wrapper's class builds its text model with defaults of its own where the config has no
``text_config`` (GOT-OCR2's Qwen2 is 1024 wide with 16 heads, configuration_got_ocr2.py:91-99):
the table records those that differ from the text class's (``text_field_defaults``, also the
context length and a head_dim that the sizes do not give), read over the text model's.

Checked live: for every model type whose config class builds with no arguments and that has a
rotary reading, the bare config ``{"model_type": t}`` reads as the class's own ``to_dict()`` does,
kind of layer by kind of layer (a bare config has no layer count, so the layer indices are left
out of the comparison), or both are refused with the same words; the widths agree everywhere, and
the few model types that differ elsewhere are listed with the reason (`OTHER_FIELDS`). Partial
configs read as the class built from them; without a class default (no class, or a size given as
null) the sizes are still asked for by name; the browser's port reads alike."""

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
from posenc.configs._table import entry, model_types

NEEDS = "config needs 'head_dim', or 'hidden_size' and 'num_attention_heads'"


def _reading(config: dict[str, Any]) -> tuple[str, Any]:
    """read_config's reading, or its refusal's words with the model types named left out (a
    wrapper's bare config names the wrapper, its class's to_dict() the text model)."""
    try:
        return "ok", read_config(config)
    except (ValueError, TypeError) as error:
        return "refused", re.sub(r"model type '[^']*'", "model type T", f"{type(error).__name__}: {error}")


def _class_dict(model_type: str) -> dict[str, Any] | None:
    """The class's defaults as a config.json (None: the class does not build without arguments)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return dict(transformers.CONFIG_MAPPING[model_type]().to_dict())
        except Exception:  # noqa: BLE001 - not in this release, or a class that needs arguments
            return None


# What this change reads, equal for every model type: the widths, the layout, the scaling.
WIDTHS = ("rotates", "dim", "rotary_dim", "layout", "scaling", "attention_factor", "softmax_scale", "temperature")
# Model types whose bare config reads other than the class's to_dict() in fields outside WIDTHS, and
# why: readings that need the layer count or a wrapper's default rope parameters, which a bare config
# does not give posenc (the gaps named in this test's report, not this change's).
OTHER_FIELDS: dict[str, str] = {
    **dict.fromkeys(["embedding_gemma2", "modernvbert", "pe_audio", "pe_audio_video", "pe_video", "t5gemma2_encoder",
                     "ultravbert"], "window_sides (and a base): read per kind of layer from the layer types and "
                    "flags the class fills in from the layer count"),
    **dict.fromkeys(["llama4", "llama4_text", "muse_glimmer", "muse_glimmer_text", "muse_spark", "muse_spark_text"],
                    "the kinds of layer: without a layer count the rotating layers read as full attention, where "
                    "the class fills in NoPE layers and chunked or windowed ones"),
    "dots3_note": "base and window: per kind of layer, from the layer types the class fills in from the layer count",
    **dict.fromkeys(["got_ocr2", "pp_chart2table", "lighton_ocr", "mistral3", "moss_transcribe_diarize", "voxtral",
                     "voxtral_realtime"], "base (and window): the wrapper's default rope parameters for its text "
                    "model (text_field_defaults holds its sizes and length only)"),
}


def _bare_against_class() -> tuple[list[str], list[str], dict[str, list[str]]]:
    """(model types read alike, refused alike, and the differences by model type)."""
    alike: list[str] = []
    refused: list[str] = []
    problems: dict[str, list[str]] = {}
    for model_type in sorted(model_types()):
        found = entry(model_type)
        full = _class_dict(model_type) if found and found.get("rope") is not False else None
        if full is None:  # no rotary reading, or a class that does not build without arguments
            continue
        (bare_kind, bare), (full_kind, whole) = _reading({"model_type": model_type}), _reading(full)
        if bare_kind == full_kind == "refused":
            if bare == whole:
                refused.append(model_type)
            else:
                problems[model_type] = [f"refused: {bare} / {whole}"]
            continue
        if bare_kind != full_kind:
            problems[model_type] = [f"bare {bare_kind} ({bare!s:.160}), class {full_kind} ({whole!s:.160})"]
            continue
        found_here = [f"max_position_embeddings {bare.max_position_embeddings} / {whole.max_position_embeddings}"
                      ] if bare.max_position_embeddings != whole.max_position_embeddings else []
        for name, layer in bare.layers.items():
            # a bare config has no layer count: its kinds of layer are those of its rope parameters (a
            # "full_attention" where the class names its layers "indexed_attention"; Laguna's
            # "sliding_attention", which no layer of its class's defaults is; Llama 4's rotating
            # "full_attention", whose rotating layers the class calls chunked)
            ours = dataclasses.replace(layer, layers=())
            theirs = [dataclasses.replace(other, layer_type=name, layers=()) for other in whole.layers.values()]
            if ours in theirs or name not in whole.pattern:
                continue
            same = [t for t in theirs if all(getattr(t, key) == getattr(ours, key) for key in WIDTHS)]
            found_here.append(f"{name}: " + ("other fields" if same else "WIDTHS") + f" {ours} / {theirs}")
        if found_here:
            problems[model_type] = found_here
        else:
            alike.append(model_type)
    return alike, refused, problems


def test_bare_configs_read_as_their_class_defaults() -> None:
    alike, refused, problems = _bare_against_class()
    assert refused  # vision towers, GLM-4-MoE's 4096 over 96 heads, ...: refused alike
    unexplained = {t: p for t, p in problems.items() if t not in OTHER_FIELDS or any("WIDTHS" in d for d in p)}
    assert not unexplained, "\n".join(f"{t}: {p}" for t, p in list(unexplained.items())[:10])
    assert sorted(problems) == sorted(OTHER_FIELDS)  # a listed type that now reads alike leaves the list
    for model_type in ("llama", "qwen2", "roformer", "mistral", "gpt_neox", "gptj", "codegen", "dbrx", "zamba2"):
        assert model_type in alike
    assert len(alike) > 250, len(alike)  # the pinned release: Llama, Qwen2, RoFormer and the others


def test_the_note_names_the_defaulted_keys() -> None:
    rope = read_config({"model_type": "llama"})
    assert rope.layers["full_attention"].dim == transformers.LlamaConfig().head_dim == 128
    assert ("'hidden_size' (4096) and 'num_attention_heads' (32) are not in the config: read as the defaults of "
            "transformers' config class for model type 'llama', as it builds such a config; a config.json that "
            "transformers saves carries them") in rope.notes
    saved = transformers.LlamaConfig().to_diff_dict()  # what save_pretrained writes (use_diff=True)
    assert saved["hidden_size"] == 4096 and saved["num_attention_heads"] == 32
    assert not any("not in the config" in note for note in read_config(saved).notes)
    given = read_config({"model_type": "llama", "head_dim": 64})  # the sizes are not read at all
    assert given.layers["full_attention"].dim == 64 and not any("not in the config" in n for n in given.notes)


@pytest.mark.parametrize("given", ["hidden_size", "num_attention_heads", "both"])
@pytest.mark.parametrize("model_type", ["llama", "qwen2", "roformer", "gptj"])
def test_partial_configs_read_as_the_class_builds_them(model_type: str, given: str) -> None:
    """One size given (chosen for 64-wide heads), the other left to the class, which builds that."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cls = transformers.CONFIG_MAPPING[model_type]
        hidden, heads = cls().hidden_size, cls().num_attention_heads  # GPT-J's n_embd, n_head
        more = {"hidden_size": {"hidden_size": 64 * heads}, "num_attention_heads": {"num_attention_heads": hidden // 64},
                "both": {"hidden_size": 256, "num_attention_heads": 4}}[given]
        built = cls(**more)
    assert built.hidden_size // built.num_attention_heads == 64
    rope = read_config({"model_type": model_type, **more})
    layer = next(layer for layer in rope.layers.values() if layer.rotates)
    assert layer.dim == 64
    notes = [note for note in rope.notes if "not in the config" in note]
    left = {"hidden_size": f"'num_attention_heads' ({heads}) is", "num_attention_heads": f"'hidden_size' ({hidden}) is"}
    assert len(notes) == (given in left) and (given not in left or notes[0].startswith(left[given]))


def test_without_a_class_default_the_sizes_are_still_needed() -> None:
    """Every model type of the pinned table with a rotary reading has class defaults for its sizes
    (no bare config of one is refused for want of them, shown above); without a class (no model
    type, or one transformers lacks) or with a size given as null (the class's strict field refuses
    None), read_config still names the keys it needs."""
    for config in ({"rope_theta": 1e4}, {"model_type": "posenc_no_such_model", "rope_theta": 1e4},
                   {"model_type": "llama", "hidden_size": None}, {"model_type": "llama", "num_attention_heads": None}):
        with pytest.raises(ValueError, match=re.escape(NEEDS)):
            read_config(config, layout="half")
    with warnings.catch_warnings(), pytest.raises(Exception, match="expected int, got NoneType"):
        warnings.simplefilter("ignore")
        transformers.LlamaConfig(hidden_size=None)


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the site's JavaScript")
def test_the_browser_port_reads_alike(tmp_path: Path) -> None:
    from tests.site.check_inspector import API_READING, posenc_reading
    from tests.test_explorer_ports import port_against_posenc, run_js
    configs: list[dict[str, Any]] = [{"model_type": t} for t in ("llama", "qwen2", "roformer", "gptj", "zamba2", "glm4_moe", "mistral4")]
    configs += [{"model_type": "llama", "hidden_size": 256}, {"model_type": "gptj", "n_head": 8},
                {"model_type": "llama", "head_dim": 64}, {"model_type": "llama", "hidden_size": None}]
    cases = [(json.dumps(c), None, None) for c in configs]
    problems, outcomes = port_against_posenc(tmp_path, cases)
    assert not problems, "\n".join(problems[:10])
    assert outcomes.count(True) >= 8
    refused = [case for case, ok in zip(cases, outcomes) if not ok]
    theirs = run_js(tmp_path, API_READING.replace("([cases])", "(cases)"), refused)
    assert isinstance(theirs, list)
    assert [json.loads(t)["error"] for t in theirs] == [posenc_reading(*c)["error"] for c in refused]
