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
out of the comparison), or both are refused with the same words, or the bare config alone is refused
naming the key it needs where the class fills in from defaults what posenc does not read
(`NEEDS_GIVEN`: NoPE layers placed by the default layer count, a wrapper's own text base); given
that key, it reads as the class does. A wrapper read without its text_config follows its text
model's window rules (its masks' sides, ModernBERT's and Dots3's filled windows). Partial
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
# Model types whose bare config is refused by name, where the class fills in what posenc does not read from
# defaults: the layers without RoPE from its default layer count ('num_hidden_layers': Llama 4,
# configuration_llama4.py:170-171; SmolLM3, configuration_smollm3.py:101-104; Mistral Large 4,
# configuration_mistral_large4.py:156-157; Muse's layer_rope_theta, configuration_muse_spark.py:174-180), or a
# wrapper's own base and window for its text model ('text_config': _plan.WRAPPER_TEXT_ROPE's files).
# A wrapper among them needs its text_config: its class builds the text model with the text class's layer
# count whatever the config gives at the top (Llama4Config(num_hidden_layers=8).text_config has 48 layers).
COUNTED = ("llama4", "llama4_text", "muse_glimmer", "muse_glimmer_text", "muse_spark", "muse_spark_text", "smollm3",
           "mistral_large4", "mistral_large4_text")
NEEDS_GIVEN: dict[str, str] = {
    **dict.fromkeys(["llama4_text", "muse_glimmer_text", "muse_spark_text", "smollm3", "mistral_large4_text"],
                    "num_hidden_layers"),
    **dict.fromkeys(["llama4", "muse_glimmer", "muse_spark", "mistral_large4", "got_ocr2", "pp_chart2table",
                     "lighton_ocr", "mistral3", "moss_transcribe_diarize", "voxtral", "voxtral_realtime"],
                    "text_config"),
}


def _differences(bare: Any, whole: Any) -> list[str]:
    """How a reading differs from the class's, kind of layer by kind of layer (a bare config has no
    layer count, so the layer indices are left out of the comparison)."""
    found_here = [f"max_position_embeddings {bare.max_position_embeddings} / {whole.max_position_embeddings}"
                  ] if bare.max_position_embeddings != whole.max_position_embeddings else []
    for name, layer in bare.layers.items():
        # without a layer count the kinds of layer are those of the rope parameters (a "full_attention" where
        # the class names its layers "indexed_attention"; Laguna's "sliding_attention", which no layer of
        # its class's defaults is)
        ours = dataclasses.replace(layer, layers=())
        theirs = [dataclasses.replace(other, layer_type=name, layers=()) for other in whole.layers.values()]
        if ours in theirs or name not in whole.pattern:
            continue
        same = [t for t in theirs if all(getattr(t, key) == getattr(ours, key) for key in WIDTHS)]
        found_here.append(f"{name}: " + ("other fields" if same else "WIDTHS") + f" {ours} / {theirs}")
    return found_here


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
        found_here = _differences(bare, whole)
        if found_here:
            problems[model_type] = found_here
        else:
            alike.append(model_type)
    return alike, refused, problems


def test_bare_configs_read_as_their_class_defaults() -> None:
    alike, refused, problems = _bare_against_class()
    assert refused  # vision towers, GLM-4-MoE's 4096 over 96 heads, ...: refused alike
    unexplained = {t: p for t, p in problems.items() if t not in NEEDS_GIVEN}
    assert not unexplained, "\n".join(f"{t}: {p}" for t, p in list(unexplained.items())[:10])
    assert sorted(problems) == sorted(NEEDS_GIVEN)  # a listed type that now reads alike leaves the list
    assert all(problems[t][0].startswith("bare refused") for t in NEEDS_GIVEN), problems
    for model_type in ("llama", "qwen2", "roformer", "mistral", "gpt_neox", "gptj", "codegen", "dbrx", "zamba2"):
        assert model_type in alike
    assert len(alike) > 250, len(alike)  # the pinned release: Llama, Qwen2, RoFormer and the others


@pytest.mark.parametrize("model_type", sorted(NEEDS_GIVEN))
def test_refused_by_name_where_the_class_fills_in_from_its_defaults(model_type: str) -> None:
    """`NEEDS_GIVEN`'s bare configs are refused naming the key; the class's reading shows why (NoPE
    layers it places by its default layer count; a text base other than the text class's default),
    and the config with that key given as the class has it reads as the class does, layer by layer."""
    key, full = NEEDS_GIVEN[model_type], _class_dict(model_type)
    assert full is not None
    whole = read_config(full)
    with pytest.raises(ValueError, match=re.escape(f"model type '{model_type}': config needs '{key}' (")):
        read_config({"model_type": model_type})
    text = full.get("text_config") or full
    if model_type in COUNTED:
        assert any(not layer.rotates for layer in whole.layers.values())  # the NoPE layers it fills in
    else:
        own = read_config({"model_type": text["model_type"]})  # the text class's own defaults
        assert [layer.base for layer in whole.layers.values()] != [layer.base for layer in own.layers.values()]
    given = {"model_type": model_type, key: text[key] if key == "num_hidden_layers" else text}
    unnoted = [{n: dataclasses.replace(layer, note=None) for n, layer in rope.layers.items()}
               for rope in (read_config(given), whole)]  # notes: where the class filled a key in, or the config
    assert unnoted[0] == unnoted[1]  # every layer, indices included


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
    # wrappers read by their text model's window rules; NEEDS_GIVEN's refusals
    configs += [{"model_type": t} for t in ("embedding_gemma2", "modernvbert", "dots3_note", "t5gemma",
                                            "t5gemma2_encoder", "llama4", "muse_spark_text", "smollm3", "got_ocr2",
                                            "voxtral_realtime")]
    configs += [{"model_type": "llama4_text", "num_hidden_layers": 8}, {"model_type": "smollm3", "num_hidden_layers": 8}]
    configs += [{"model_type": "llama", "hidden_size": 256}, {"model_type": "gptj", "n_head": 8},
                {"model_type": "llama", "head_dim": 64}, {"model_type": "llama", "hidden_size": None}]
    cases = [(json.dumps(c), None, None) for c in configs]
    problems, outcomes = port_against_posenc(tmp_path, cases)
    assert not problems, "\n".join(problems[:10])
    assert outcomes.count(True) >= 13
    refused = [case for case, ok in zip(cases, outcomes) if not ok]
    theirs = run_js(tmp_path, API_READING.replace("([cases])", "(cases)"), refused)
    assert isinstance(theirs, list)
    assert [json.loads(t)["error"] for t in theirs] == [posenc_reading(*c)["error"] for c in refused]
    from posenc.configs._plan import WRAPPER_TEXT_ROPE
    assert run_js(tmp_path, "() => window.posencRopePlan.WRAPPER_TEXT_ROPE") == WRAPPER_TEXT_ROPE
    assert sorted(WRAPPER_TEXT_ROPE) == sorted(t for t, key in NEEDS_GIVEN.items() if t not in COUNTED)
