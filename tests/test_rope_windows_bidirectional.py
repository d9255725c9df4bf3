"""Masks opened both ways by Step 3p7's flag and by a config's own ``is_causal`` (issue 33, windows).

Step 3p7's text model (``step3p5``) ORs its masks with its own overlay when
``use_bidirectional_attention`` is true (modeling_step3p7.py:800-808, 885-892); transformers' causal
mask builders build bidirectional masks for a config whose ``is_causal`` is false
(masking_utils.py:954-963, 1180-1189). Each test runs tiny transformers models in eager attention
and compares the keys each query attends to with what ``read_config`` says
(``posenc.configs.reach`` of each layer's window and sides; no window: every token, or the causal
prefix). ``tests/test_explorer_ports.py`` compares the inspector's JavaScript port with the same
readings (``tests/rope_port_cases.py``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import torch

from posenc.configs import reach, read_config

transformers = pytest.importorskip("transformers")

STEP = {"model_type": "step3p5", "num_hidden_layers": 3,
        "layer_types": ["full_attention", "sliding_attention", "sliding_attention"],
        "rope_parameters": {kind: {"rope_type": "default", "rope_theta": 10000.0}
                            for kind in ("full_attention", "sliding_attention")}}


def _expected(window: int | None, sides: str, length: int, kind: str = "") -> torch.Tensor:
    """The keys each query sees by posenc's reading: ``reach``'s tokens before and after (a chunk: the
    query's own block of ``window`` positions up to it)."""
    before, after = reach(window, sides)
    q, k = torch.arange(length)[:, None], torch.arange(length)[None, :]
    if kind == "chunked_attention" and window is not None:
        return (k <= q) & (k // window == q // window)
    return (k - q >= -(length if before is None else before)) & (k - q <= (length if after is None else after))


def _step_masks(config: dict[str, Any], length: int) -> list[torch.Tensor]:
    """Each layer's attended keys in a tiny Step 3p7 text model (AutoModel does not build it)."""
    from transformers.models.step3p7 import configuration_step3p7, modeling_step3p7

    from tests.rope_windows_live import _NARROW

    live = configuration_step3p7.Step3p7TextConfig(**{k: v for k, v in {**config, **_NARROW}.items()
                                                      if k != "model_type"})
    live._attn_implementation = "eager"
    torch.manual_seed(0)
    model = modeling_step3p7.Step3p7TextModel(live).eval()
    seen: dict[int, torch.Tensor] = {}
    for index, layer in enumerate(model.layers):
        layer.self_attn.register_forward_hook(lambda _m, _i, out, index=index: seen.__setitem__(index, out[1]))
    with torch.no_grad():
        model(input_ids=torch.arange(1, length + 1)[None] % 60 + 1, use_cache=False)
    return [seen[i][0, 0] > 0 for i in range(len(model.layers))]


@pytest.mark.parametrize("window", [1, 2, 5, 6])
@pytest.mark.parametrize("flag", [True, False, None])
def test_step3p7_bidirectional_windows_as_its_model_runs_them(flag: bool | None, window: int) -> None:
    """Step 3p7 with use_bidirectional_attention: full layers see every token, sliding ones the
    sliding causal mask OR |q - k| < W, so W - 1 tokens on each side (its class keeps W as given).
    Run live in eager attention, and read again from the class's to_dict."""
    config = {**STEP, "sliding_window": window, "use_bidirectional_attention": flag}
    rope = read_config(config)
    for index, (name, seen) in enumerate(zip(rope.pattern, _step_masks(config, 11), strict=True)):
        layer = rope.layers[name]
        assert torch.equal(seen, _expected(layer.window, layer.window_sides, 11)), (index, name)
    full, sliding = rope.layers["full_attention"], rope.layers["sliding_attention"]
    assert (full.window, full.window_sides) == (None, "both" if flag else "before")
    assert (sliding.window, sliding.window_sides) == ((window - 1, "both") if flag else (window, "before"))
    assert any("|q - k| < config['sliding_window']" in note for note in rope.notes) == bool(flag)
    from transformers.models.step3p7 import configuration_step3p7

    live = configuration_step3p7.Step3p7TextConfig(**{k: v for k, v in config.items() if k != "model_type"})
    assert read_config(live.to_dict()).layers == rope.layers


def test_step3p7_bad_flag_and_missing_window_are_named() -> None:
    with pytest.raises(TypeError, match=r"config\['use_bidirectional_attention'\] must be one of true, false, null, got int 1"):
        read_config({**STEP, "sliding_window": 4, "use_bidirectional_attention": 1})
    with pytest.raises(ValueError, match=r"config\['sliding_window'\] is null while config\['use_bidirectional_attention'\]"):
        read_config({**STEP, "sliding_window": None, "use_bidirectional_attention": True})


# Configs with is_causal false, each with a layer plan transformers builds: a decoder (llama), one
# sliding mask for the whole model (mistral), sliding layers named by a switch (qwen2), Gemma 3 with
# its own flag too, Gemma's flag that otherwise keeps the causal mask, chunked layers (llama4_text).
NOT_CAUSAL = {
    "llama": {"model_type": "llama", "num_hidden_layers": 2},
    "mistral": {"model_type": "mistral", "num_hidden_layers": 2, "sliding_window": 3},
    "qwen2": {"model_type": "qwen2", "num_hidden_layers": 4, "max_window_layers": 2, "use_sliding_window": True,
              "sliding_window": 3},
    "gemma3_text": {"model_type": "gemma3_text", "num_hidden_layers": 6, "sliding_window": 6,
                    "use_bidirectional_attention": True},
    "gemma": {"model_type": "gemma", "num_hidden_layers": 2, "use_bidirectional_attention": True},
    "llama4_text": {"model_type": "llama4_text", "num_hidden_layers": 4, "attention_chunk_size": 4},
}


@pytest.mark.parametrize("name", list(NOT_CAUSAL))
def test_is_causal_false_as_transformers_masks_it(name: str) -> None:
    """A config's is_causal false: each layer's attended keys in a tiny model (eager) against the
    reading, which says both ways for full and sliding layers (|q - k| <= W) and keeps chunks causal;
    is_causal true reads as the key left out."""
    from tests.rope_windows_live import _NARROW, transformers_masks

    given = {**_NARROW, **NOT_CAUSAL[name]}
    config = {**given, "is_causal": False}
    rope = read_config(config)
    for index, (kind, seen) in enumerate(zip(rope.pattern, transformers_masks(config), strict=True)):
        layer = rope.layers[kind]
        assert seen is not None and torch.equal(seen, _expected(layer.window, layer.window_sides, 11, kind)), (index, kind)
    sides = {kind: layer.window_sides for kind, layer in rope.layers.items()}
    assert {sides[k] for k in sides if k != "chunked_attention"} == {"both"}
    assert any(n.startswith("config['is_causal'] is false") for n in rope.notes)
    assert not any("keeps building the causal mask" in n for n in rope.notes)  # Gemma's note no longer holds
    if name == "llama4_text":
        assert sides["chunked_attention"] == "before" and any("keep their causal chunks" in n for n in rope.notes)
    assert read_config({**config, "is_causal": True}).layers == read_config(given).layers


def _later_token_moves_an_earlier_one(implementation: str, padded: bool) -> bool:
    """Whether, in a tiny Llama with is_causal false, token 1's output moves when the last token changes."""
    from tests.rope_windows_live import _NARROW, later_token_moves_an_earlier_one

    keys = ("hidden_size", "num_attention_heads", "num_key_value_heads", "head_dim", "intermediate_size", "vocab_size")
    live = transformers.LlamaConfig(num_hidden_layers=2, is_causal=False, **{k: _NARROW[k] for k in keys})
    return later_token_moves_an_earlier_one(live, implementation, padded)


def test_is_causal_false_opens_eager_and_sdpa_alike() -> None:
    """The note's claim: eager and sdpa attention both run both ways, padded batch or not."""
    assert all(_later_token_moves_an_earlier_one(implementation, padded)
               for implementation in ("eager", "sdpa") for padded in (False, True))


def test_config_classes_that_touch_is_causal_are_accounted_for() -> None:
    """Every config class of the pinned transformers that names is_causal, and why none changes the
    reading: Gemma 4's three set it with use_bidirectional_attention 'all' (read by that flag), JEV
    writes it into the text config read_config reads, Dots3's vision config pops it (configuration_
    dots3_note.py:100; its text config keeps it: checked live), PI0 sets its DiT's (not a text model)."""
    models = Path(transformers.__file__).parent / "models"
    naming = {path.parent.name for path in models.glob("*/configuration_*.py") if "is_causal" in path.read_text()}
    assert naming == {"dots3_note", "gemma4", "gemma4_unified", "diffusion_gemma", "jev", "pi0"}
    dots3 = (models / "dots3_note" / "configuration_dots3_note.py").read_text().splitlines()
    assert dots3[99].strip() == 'kwargs.pop("is_causal", None)' and "class Dots3NoteVisionConfig" in dots3[27]
    assert getattr(transformers.AutoConfig.for_model("dots3_note_text", is_causal=False), "is_causal", True) is False


def test_is_causal_bad_values_and_unread_layers_are_refused() -> None:
    with pytest.raises(TypeError, match=r"config\['is_causal'\] must be true or false, got NoneType None"):
        read_config({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 2,
                     "is_causal": None})
    dots3 = {"model_type": "dots3_note_text", "num_hidden_layers": 2, "is_causal": False}  # indexed_attention
    with pytest.raises(ValueError, match=r"config\['is_causal'\] is false, and posenc does not know which mask "
                                         r"layers of type 'indexed_attention'"):
        read_config(dots3)


def test_reach_names_bad_arguments() -> None:
    assert reach(None, "both") == (None, None) and reach(0, "both") == (0, 0)
    with pytest.raises(ValueError, match=r"sides must be one of 'before', 'both', 'centred', got 'after'"):
        reach(4, "after")
    with pytest.raises(ValueError, match=r"window must be an integer >= 1 with sides 'before'"):
        reach(0, "before")
    with pytest.raises(TypeError, match=r"window must be an integer or None, got float 4.0"):
        reach(4.0, "both")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"window must be a positive integer when sides is 'centred'"):
        reach(None, "centred")


def _bidirectional_only() -> set[str]:
    """The rotating model types of the table whose modeling files build only bidirectional masks."""
    from transformers.models.auto.configuration_auto import model_type_to_module_name

    from posenc.configs import _table

    models = Path(transformers.__file__).parent / "models"
    found = set()
    for model_type, entry in _table.model_types().items():
        if not isinstance(entry, dict) or entry.get("layout") is None:
            continue
        source = "".join(path.read_text() for path in (models / model_type_to_module_name(model_type)).glob("modeling_*.py"))
        if (re.search(r"create_bidirectional_(sliding_window_)?mask\(|_prepare_4d_attention_mask\(", source)
                and not re.search(r"create_(causal|sliding_window_causal|chunked_causal)_mask\b", source)):
            found.add(model_type)
    return found


def test_encoders_are_the_model_types_that_build_only_bidirectional_masks() -> None:
    """ENCODERS and TWO_SIDED are exactly the rotating model types whose modeling files build
    bidirectional masks and no causal one (a new encoder in transformers fails here), and every layer
    of theirs with no window reads window_sides 'both' (config is_causal changes nothing)."""
    from posenc.configs._two_way import ENCODERS, TWO_SIDED

    # the encoder configs of files that also build causal masks (for another part): run below, or read
    mixed = {"dia_encoder", "nemotron3_5_transcribe_asr_audio", "nemotron3_5_transcribe_word_timestamp"}
    assert _bidirectional_only() == (set(ENCODERS) - mixed) | set(TWO_SIDED)
    for model_type in ENCODERS:
        config = {"model_type": model_type, "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 2}
        rope = read_config(config)
        assert {(layer.window, layer.window_sides) for layer in rope.layers.values()} == {(None, "both")}, model_type
        assert read_config({**config, "is_causal": False}) == rope


@pytest.mark.parametrize("model_type", ["gte", "nomic_bert", "eurobert"])
def test_encoders_see_both_ways_as_their_models_run(model_type: str) -> None:
    """Run live (eager, a tiny model): token 1's output moves when the last token changes."""
    from tests.rope_windows_live import _NARROW

    keys = ("hidden_size", "num_attention_heads", "intermediate_size", "vocab_size")
    live = transformers.AutoConfig.for_model(model_type, num_hidden_layers=2, pad_token_id=0,
                                             **{k: _NARROW[k] for k in keys})
    torch.manual_seed(0)
    model = transformers.AutoModel.from_config(live, attn_implementation="eager").eval()
    with torch.no_grad():
        one, two = (model(input_ids=torch.tensor([[5, 6, 7, 8, last]])).last_hidden_state[0, 1] for last in (9, 10))
    assert not torch.allclose(one, two, atol=1e-6)
    assert read_config({"model_type": model_type, **{k: _NARROW[k] for k in keys}}).layers["full_attention"].window_sides == "both"


def test_the_decoder_switch_is_the_model_types_that_test_is_decoder() -> None:
    """DECODER_SWITCH is exactly the rotating model types whose modeling files build the causal mask
    only when config.is_decoder is true (else the bidirectional one)."""
    from transformers.models.auto.configuration_auto import model_type_to_module_name

    from posenc.configs import _table
    from posenc.configs._two_way import DECODER_SWITCH

    switch = re.compile(r"create_causal_mask if self\.config\.is_decoder else create_bidirectional_mask|"
                        r"if self\.config\.is_decoder:\s+attention_mask = create_causal_mask")
    models = Path(transformers.__file__).parent / "models"
    found = {model_type for model_type, entry in _table.model_types().items()
             if isinstance(entry, dict) and entry.get("layout") is not None and switch.search(
                 "".join(p.read_text() for p in (models / model_type_to_module_name(model_type)).glob("modeling_*.py")))}
    assert found == set(DECODER_SWITCH)


@pytest.mark.parametrize("model_type", ["roformer", "esm"])
@pytest.mark.parametrize("decoder", [False, True, None])
def test_is_decoder_decides_the_sides_as_the_model_runs(model_type: str, decoder: bool | None) -> None:
    """RoFormer and ESM (rotary) in eager: token 1 sees later tokens unless is_decoder is true, as
    read_config reads (window_sides 'both', else 'before'); is_causal false opens a decoder too."""
    from tests.rope_windows_live import _NARROW

    keys = ("hidden_size", "num_attention_heads", "intermediate_size", "vocab_size")
    given = {k: _NARROW[k] for k in keys} | {"pad_token_id": 0, "num_hidden_layers": 2}
    if model_type == "esm":
        given |= {"position_embedding_type": "rotary", "mask_token_id": 3}
    if decoder is not None:
        given["is_decoder"] = decoder
    live = transformers.AutoConfig.for_model(model_type, **given)
    torch.manual_seed(0)
    model = transformers.AutoModel.from_config(live, attn_implementation="eager").eval()
    with torch.no_grad():
        one, two = (model(input_ids=torch.tensor([[5, 6, 7, 8, last]])).last_hidden_state[0, 1] for last in (9, 10))
    sees_later = not torch.allclose(one, two, atol=1e-6)
    assert sees_later == (not decoder)
    rope = read_config({"model_type": model_type, **given})
    assert rope.layers["full_attention"].window_sides == ("before" if decoder else "both")
    assert read_config({"model_type": model_type, **given, "is_causal": False}).layers["full_attention"].window_sides == "both"
    with pytest.raises(TypeError, match=r"config\['is_decoder'\] must be true, false or null, got int 1"):
        read_config({"model_type": model_type, **given, "is_decoder": 1})


def test_the_encoders_of_mixed_files_see_both_ways() -> None:
    """Dia's encoder and Nemotron 3.5 Transcribe's word-timestamp model, run live in eager (their files
    also build causal masks, for the decoder): token 1's output moves with the last token. The ASR
    audio model's forward builds create_bidirectional_mask and no causal one (read from its source)."""
    import inspect

    from transformers.models.dia import modeling_dia
    from transformers.models.nemotron3_5_transcribe import (
        modeling_nemotron3_5_transcribe as nemotron,
    )

    small = {"hidden_size": 64, "num_attention_heads": 2, "num_key_value_heads": 2, "head_dim": 32,
             "intermediate_size": 32, "num_hidden_layers": 2}
    torch.manual_seed(0)
    dia = modeling_dia.DiaEncoder(transformers.DiaEncoderConfig(**small, vocab_size=64)).eval()
    timestamps = nemotron.Nemotron3_5TranscribeWordTimestampModel(
        transformers.AutoConfig.for_model("nemotron3_5_transcribe_word_timestamp", **small)).eval()
    embeds = torch.randn(1, 5, 64)
    with torch.no_grad():
        runs = {"dia_encoder": [dia(input_ids=torch.tensor([[5, 6, 7, 8, last]])).last_hidden_state[0, 1]
                                for last in (9, 10)],
                "nemotron3_5_transcribe_word_timestamp": [
                    timestamps(inputs_embeds=torch.cat([embeds[:, :4], embeds[:, 4:] + shift], 1)).last_hidden_state[0, 1]
                    for shift in (0.0, 1.0)]}
    for model_type, (one, two) in runs.items():
        assert not torch.allclose(one, two, atol=1e-6), model_type
        assert read_config({"model_type": model_type, **small}).layers["full_attention"].window_sides == "both"
    source = inspect.getsource(nemotron.Nemotron3_5TranscribeAsrAudioModel.forward)
    assert "create_bidirectional_mask(" in source and "causal" not in source


# ---------------------------------------------------------------- T5Gemma: one module config, two stacks
T5 = {"model_type": "t5_gemma_module", "hidden_size": 64, "num_attention_heads": 2, "num_key_value_heads": 1,
      "head_dim": 32, "intermediate_size": 32, "vocab_size": 64, "num_hidden_layers": 4, "sliding_window": 3,
      "layer_types": ["sliding_attention", "full_attention", "sliding_attention", "full_attention"]}


def _t5gemma_masks(part: str, length: int) -> list[torch.Tensor]:
    """Each self-attention layer's attended keys in a tiny T5Gemma's encoder or decoder (eager)."""
    module = {k: v for k, v in T5.items() if k != "model_type"}
    live = transformers.T5GemmaConfig(encoder=dict(module), decoder=dict(module), vocab_size=64, pad_token_id=0)
    live._attn_implementation = "eager"
    torch.manual_seed(0)
    model = transformers.T5GemmaModel(live).eval()
    seen: dict[int, torch.Tensor] = {}
    for index, layer in enumerate(getattr(model, part).layers):
        layer.self_attn.register_forward_hook(lambda _m, _i, out, index=index: seen.__setitem__(index, out[1]))
    ids = torch.arange(1, length + 1)[None] % 60 + 3
    with torch.no_grad():
        model(input_ids=ids, decoder_input_ids=ids, use_cache=False)
    return [seen[i][0, 0] > 0 for i in range(len(seen))]


@pytest.mark.parametrize(("given", "part"), [({"is_decoder": False}, "encoder"), ({}, "encoder"),
                                             ({"is_decoder": True}, "decoder")])
def test_t5gemma_module_config_reads_its_stack_as_the_model_masks_it(given: dict, part: str) -> None:
    """T5Gemma's encoder builds bidirectional masks (its sliding layers |q - k| <= W), its decoder causal
    ones (modeling_t5gemma.py:670-672, 765-767): a module config with is_decoder false (or left out,
    the class's default) reads both ways, true reads causal; live, each layer's attended keys."""
    rope = read_config({**T5, **given})
    for index, (name, seen) in enumerate(zip(rope.pattern, _t5gemma_masks(part, 9), strict=True)):
        layer = rope.layers[name]
        assert torch.equal(seen, _expected(layer.window, layer.window_sides, 9)), (part, index, name)
    assert {layer.window_sides for layer in rope.layers.values()} == {"both" if part == "encoder" else "before"}
    assert any("is not given" in note for note in rope.notes) == (not given)


def test_a_whole_t5gemma_config_reads_its_decoder_as_a_decoder() -> None:
    # T5GemmaConfig sets decoder.is_decoder true whatever the part says (configuration_t5gemma.py:151)
    module = {k: v for k, v in T5.items() if k != "model_type"}
    whole = {"model_type": "t5gemma", "encoder": {**module, "is_decoder": False},
             "decoder": {**module, "is_decoder": False}}
    live = transformers.T5GemmaConfig(**{k: v for k, v in whole.items() if k != "model_type"})
    assert (live.encoder.is_decoder, live.decoder.is_decoder) == (False, True)
    rope = read_config(whole)
    assert {layer.window_sides for layer in rope.layers.values()} == {"before"}
    assert read_config(live.to_dict()).layers == rope.layers
    with pytest.raises(TypeError, match=r"config\['is_decoder'\] must be true or false, got NoneType None"):
        read_config({**T5, "is_decoder": None})


def test_the_browser_port_reads_t5gemma_alike(tmp_path: Path) -> None:
    import json
    import shutil

    from posenc.configs._two_way import PARTS
    from tests.test_explorer_ports import port_against_posenc, run_js

    if shutil.which("node") is None:
        pytest.skip("needs node to run the site's JavaScript")
    assert run_js(tmp_path, "() => window.posencRopeTwoWay.PARTS") == PARTS
    module = {k: v for k, v in T5.items() if k != "model_type"}
    cases = [{**T5, **given} for given in ({}, {"is_decoder": False}, {"is_decoder": True}, {"is_decoder": None},
                                           {"is_decoder": False, "is_causal": False}, {"is_decoder": 0})]
    cases += [{"model_type": "t5gemma", "encoder": module, "decoder": {**module, "is_decoder": False}}]
    problems, read = port_against_posenc(tmp_path, [(json.dumps(case), None, None) for case in cases])
    assert problems == []
    assert read == [True, True, True, False, True, False, True]


def test_the_parts_are_the_classes_that_set_is_decoder_on_their_parts() -> None:
    """PARTS is exactly the module configs of the wrapper classes whose __post_init__ sets is_decoder on their
    parts (T5GemmaConfig; the encoder-decoder wrappers set it only in from_encoder_decoder_configs or on a
    default decoder, so a given decoder dict says it itself)."""
    import inspect

    from transformers.models.auto.configuration_auto import (
        CONFIG_MAPPING,
        CONFIG_MAPPING_NAMES,
    )

    from posenc.configs._two_way import PARTS

    found = set()
    for model_type in CONFIG_MAPPING_NAMES:
        cls = CONFIG_MAPPING[model_type]
        post = vars(cls).get("__post_init__")
        if post is None or not re.search(r"self\.\w+\.is_decoder = (True|False)", inspect.getsource(post)):
            continue
        found |= {spec.config_class.model_type for spec in cls.sub_configs_defaults.values()}
    assert found == set(PARTS)
