"""A wrapper's language model where transformers keeps it: ``text_config``, or an encoder-decoder's
``decoder`` / ``generator`` / ``decoder_config`` (posenc.configs._params.TEXT_CONFIG_KEYS). A whole
T5Gemma 2 config was read from its top-level keys, so a window or base set in its decoder was
silently replaced by the class defaults; these tests pin the part read against transformers."""

from __future__ import annotations

import json

import pytest
import torch

transformers = pytest.importorskip("transformers")

from posenc.configs import read_config  # noqa: E402
from posenc.configs._params import _text_key  # noqa: E402
from posenc.configs._table import model_types  # noqa: E402

WRAPPERS = sorted(name for name, entry in model_types().items() if entry.get("text_model_type"))


def _defaults(model_type: str) -> dict:
    return json.loads(transformers.AutoConfig.for_model(model_type).to_json_string())


def _attribute(config: object, part: object) -> str | None:
    """The attribute of ``config`` that holds ``part`` (None where get_text_config returns the
    config itself or a part nested deeper, as ColPali's vlm_config.text_config)."""
    names = [name for name in vars(config) if getattr(config, name) is part and part is not config]
    return names[0] if len(names) == 1 else None


@pytest.mark.parametrize("model_type", WRAPPERS)
def test_the_part_read_is_the_one_transformers_returns(model_type: str) -> None:
    """At the class defaults of every wrapper of the table: the key posenc reads is the attribute
    get_text_config(decoder=True) returns (where it is one attribute of the config)."""
    try:
        config = transformers.AutoConfig.for_model(model_type)
    except ValueError as error:  # a table entry with no config class of its own (checked: none at 5.23)
        pytest.skip(f"no config class for {model_type!r}: {error}")
    expected = _attribute(config, config.get_text_config(decoder=True))
    if expected is None:
        assert _text_key(_defaults(model_type)) in (None, "text_config")
        return
    assert _text_key(_defaults(model_type)) == expected


def test_a_whole_t5gemma2_config_is_read_as_its_decoder() -> None:
    """The decoder's window and bases, not the class defaults; the note names the part read; the
    reading equals that of the decoder's config given alone, and its rotary module's (live)."""
    from tests import rope_live

    whole = _defaults("t5gemma2")
    decoder = whole["decoder"]
    decoder.update(sliding_window=1024, rope_parameters={
        "full_attention": {"rope_type": "default", "rope_theta": 123456.0},
        "sliding_attention": {"rope_type": "default", "rope_theta": 777.0}})
    rope = read_config(whole)
    layers = {name: (layer.base, layer.window) for name, layer in rope.layers.items()}
    assert layers == {"full_attention": (123456.0, None), "sliding_attention": (777.0, 1024)}
    assert rope.layers == read_config(decoder).layers
    assert any(note.startswith("read: config['decoder']") and "config['encoder']" in note for note in rope.notes)
    rope_live.check_config(decoder, torch.tensor([0, 1, 5, 100, 2000]))


def test_an_encoder_decoder_reads_its_decoder_by_its_own_type() -> None:
    """VisionEncoderDecoder with a Llama decoder: read as Llama with the decoder's base (the table's
    entry names BERT, the class's default decoder, which uses no RoPE)."""
    config = transformers.VisionEncoderDecoderConfig(
        encoder=transformers.ViTConfig().to_dict(),
        decoder=transformers.LlamaConfig(hidden_size=64, num_attention_heads=4, rope_theta=5e5).to_dict())
    rope = read_config(json.loads(config.to_json_string()))
    assert rope.model_type == "llama"
    assert rope.layers["full_attention"].base == 5e5
    assert config.get_text_config(decoder=True) is config.decoder


def test_a_language_model_that_is_not_a_dict_is_refused_by_key() -> None:
    with pytest.raises(TypeError, match=r"config\['decoder'\] must be a dict"):
        read_config({"model_type": "t5gemma2", "decoder": "t5gemma2_decoder"})
    with pytest.raises(TypeError, match=r"config\['decoder'\]\['model_type'\] must be a string"):
        read_config({"model_type": "t5gemma2", "decoder": {"model_type": 5}})
