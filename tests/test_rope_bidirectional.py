"""Gemma models made bidirectional by a config flag (issue 33, windows): read_config against transformers, live.

Gemma 3's text model (EmbeddingGemma) and Gemma 4's ``use_bidirectional_attention`` open every layer's
mask both ways, the sliding layers to half the window on each side
(``posenc.configs._windows.BIDIRECTIONAL``); Gemma's and Gemma 2's flag keeps the causal mask and only
sets the attention's ``is_causal`` (``CAUSAL_KEPT``). Each test runs tiny transformers models (or their
mask builders) and compares the keys each query attends to with what ``read_config`` says;
``tests/test_explorer_ports.py`` compares the inspector's JavaScript port with the same readings.
"""

from __future__ import annotations

import pytest
import torch

from posenc.configs import read_config
from posenc.configs._windows import reach
from tests.test_rope_sites_windows import _band

transformers = pytest.importorskip("transformers")


@pytest.mark.parametrize("window", [2, 5, 6, 9])
@pytest.mark.parametrize("flag", [True, False, None])
def test_gemma3_bidirectional_windows_as_its_model_runs_them(window: int, flag: bool | None) -> None:
    """Gemma 3's text model with use_bidirectional_attention (EmbeddingGemma; _windows.BIDIRECTIONAL):
    its class halves the window and its masks open both ways. Run live: a tiny model in eager
    attention, each layer's nonzero attention weights against read_config's window and sides (full
    layers: every token, or the causal prefix with the flag off); also read from the class's to_dict."""
    from tests.rope_windows_live import _NARROW, LENGTH, transformers_masks

    config = {"model_type": "gemma3_text", "num_hidden_layers": 6, "sliding_window": window,
              "use_bidirectional_attention": flag, **_NARROW}
    rope = read_config(config)
    q, k = torch.arange(LENGTH)[:, None], torch.arange(LENGTH)[None, :]
    for index, (name, seen) in enumerate(zip(rope.pattern, transformers_masks(config), strict=True)):
        layer = rope.layers[name]
        if layer.window is None:
            expected = torch.ones(LENGTH, LENGTH, dtype=torch.bool) if flag else (k <= q)
        else:
            before, after = reach(layer.window, layer.window_sides)
            expected = (k - q >= -before) & (k - q <= after)
        assert seen is not None and torch.equal(seen, expected), (index, name, layer.window, layer.window_sides)
    sliding = rope.layers["sliding_attention"]
    assert (sliding.window, sliding.window_sides) == ((window // 2, "both") if flag else (window, "before"))
    assert any("use_bidirectional_attention" in note for note in rope.notes) == bool(flag)
    live = transformers.Gemma3TextConfig(**{k: v for k, v in config.items() if k != "model_type"})
    assert read_config(live.to_dict()).layers["sliding_attention"] == sliding


def test_gemma3_bidirectional_bad_input_is_named() -> None:
    config = {"model_type": "gemma3_text", "num_hidden_layers": 6}
    with pytest.raises(TypeError, match=r"config\['use_bidirectional_attention'\] must be one of true, false, null, got int 1"):
        read_config({**config, "use_bidirectional_attention": 1})
    with pytest.raises(ValueError, match=r"config\['sliding_window'\] is null while"):
        read_config({**config, "use_bidirectional_attention": True, "sliding_window": None})
    gemma4 = {"model_type": "gemma4_text", "num_hidden_layers": 6}
    with pytest.raises(ValueError, match=r"must be one of 'all', 'vision', null, got str 'both'"):
        read_config({**gemma4, "use_bidirectional_attention": "both"})
    with pytest.raises(TypeError, match=r"must be one of 'all', 'vision', null, got bool True"):
        read_config({**gemma4, "use_bidirectional_attention": True})


@pytest.mark.parametrize("window", [6, 9])
@pytest.mark.parametrize("flag", ["all", "vision", None])
@pytest.mark.parametrize("model_type", ["gemma4_text", "gemma4_unified_text", "diffusion_gemma_text"])
def test_gemma4_all_bidirectional_windows_as_transformers_masks_them(model_type: str, flag: str | None,
                                                                      window: int) -> None:
    """Gemma 4's use_bidirectional_attention 'all' (and Gemma 4 Unified's, DiffusionGemma's): the class
    sets is_causal False and the window to W // 2 + 1, and transformers' mask builders then open both
    ways, the sliding one inclusive (|q - k| <= W // 2 + 1). Run live: a tiny model's nonzero attention
    weights per layer (DiffusionGemma's text model, which AutoModel does not build: the two mask
    builders its forward calls, modeling_diffusion_gemma.py:947-948, on its config class)."""
    from transformers.masking_utils import create_causal_mask, create_sliding_window_causal_mask

    from tests.rope_windows_live import _NARROW, LENGTH, transformers_masks

    config = {"model_type": model_type, "num_hidden_layers": 6, "sliding_window": window,
              "use_bidirectional_attention": flag, **_NARROW}
    rope = read_config(config)
    if model_type == "diffusion_gemma_text":
        live = transformers.AutoConfig.for_model(**config)
        live._attn_implementation = "eager"
        kwargs = {"config": live, "inputs_embeds": torch.zeros(1, LENGTH, 8), "attention_mask": None,
                  "past_key_values": None, "position_ids": torch.arange(LENGTH)[None]}
        built = {"full_attention": create_causal_mask(**kwargs), "sliding_attention": create_sliding_window_causal_mask(**kwargs)}
        # None: the builder skipped the mask, every key is attended (masking_utils.py:536, eager included)
        seen_by_layer = [torch.ones(LENGTH, LENGTH, dtype=torch.bool) if built[name] is None else _band(built[name])
                         for name in rope.pattern]
    else:
        seen_by_layer = transformers_masks(config)
    q, k = torch.arange(LENGTH)[:, None], torch.arange(LENGTH)[None, :]
    for index, (name, seen) in enumerate(zip(rope.pattern, seen_by_layer, strict=True)):
        layer = rope.layers[name]
        if layer.window is None:
            expected = torch.ones(LENGTH, LENGTH, dtype=torch.bool) if flag == "all" else (k <= q)
        else:
            before, after = reach(layer.window, layer.window_sides)
            expected = (k - q >= -before) & (k - q <= after)
        assert seen is not None and torch.equal(seen, expected), (index, name, layer.window, layer.window_sides)
    sliding = rope.layers["sliding_attention"]
    assert (sliding.window, sliding.window_sides) == ((window // 2 + 1, "both") if flag == "all" else (window, "before"))
    assert any("use_bidirectional_attention" in note for note in rope.notes) == (flag == "all")


def _first_tokens_see_later_ones(name: str, implementation: str, padded: bool) -> bool:
    """Whether, in a tiny model of ``name`` with use_bidirectional_attention, token 1's output moves
    when the last token changes (a batch with or without a padded first token)."""
    from tests.rope_windows_live import _NARROW, later_token_moves_an_earlier_one

    keys = ("hidden_size", "num_attention_heads", "num_key_value_heads", "head_dim", "intermediate_size", "vocab_size",
            "pad_token_id", "bos_token_id", "eos_token_id")
    live = getattr(transformers, name)(num_hidden_layers=2, use_bidirectional_attention=True,
                                       **{k: _NARROW[k] for k in keys})
    return later_token_moves_an_earlier_one(live, implementation, padded)


@pytest.mark.parametrize(("name", "model_type"), [("GemmaConfig", "gemma"), ("Gemma2Config", "gemma2")])
def test_gemma_and_gemma2_keep_the_causal_mask_with_the_flag(name: str, model_type: str) -> None:
    """Gemma's and Gemma 2's use_bidirectional_attention only sets the attention's is_causal
    (_windows.CAUSAL_KEPT). Run live: eager attention stays causal, padded or not, and Gemma's sdpa
    runs both ways on a batch without padding only; read_config reads causal and says so in a note."""
    assert not _first_tokens_see_later_ones(name, "eager", padded=False)
    assert not _first_tokens_see_later_ones(name, "eager", padded=True)
    if model_type == "gemma":  # Gemma 2 has no sdpa path in the pinned release
        assert _first_tokens_see_later_ones(name, "sdpa", padded=False)
        assert not _first_tokens_see_later_ones(name, "sdpa", padded=True)
    config = {"model_type": model_type, "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4}
    rope = read_config({**config, "use_bidirectional_attention": True})
    assert all(layer.window_sides == "before" for layer in rope.layers.values())
    assert any("keeps building the causal mask" in note for note in rope.notes)
    assert not any("causal mask" in note for note in read_config(config).notes)
    with pytest.raises(TypeError, match=r"config\['use_bidirectional_attention'\] must be one of true, false, null"):
        read_config({**config, "use_bidirectional_attention": "all"})
