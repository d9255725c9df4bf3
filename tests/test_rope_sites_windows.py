"""Windows on both sides, and SmolLM3's sliding NoPE layers (issue 33, windows): read_config against transformers, live.

ModernBERT's local layers attend both ways, ``local_attention // 2`` tokens on each side, as do the
sliding layers (or every layer) of the other model types of ``posenc.configs._windows.TWO_SIDED``;
SmolLM3 names its NoPE layers ``sliding_attention`` when ``use_sliding_window`` is on. Each test
runs transformers (its mask function on the live config, or the config class) and compares what
``read_config`` says; ``tests/test_explorer_ports.py`` compares the inspector's JavaScript port with
the same readings.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import torch

from posenc.configs import read_config
from posenc.configs._windows import TWO_SIDED, reach

transformers = pytest.importorskip("transformers")
MODELS = Path(transformers.__file__).parent / "models"


def test_which_model_types_build_a_bidirectional_sliding_mask() -> None:
    """The model types whose modeling file builds transformers' bidirectional sliding-window mask
    (|q - k| <= sliding_window): found in the pinned source, so a new one shows up here."""
    found = sorted(path.parent.name for path in MODELS.glob("*/modeling_*.py")
                   if re.search(r"create_bidirectional_sliding_window_mask\(", path.read_text()))
    # encoders, and assistant or diffusion models of the pinned release: read as two-sided windows
    # (TWO_SIDED) but for T5Gemma and the Gemma 4 assistants (see TWO_SIDED's comment for why)
    assert found == ['embedding_gemma2', 'gemma4_assistant', 'gemma4_unified_assistant', 'modernbert', 'muse_glimmer_assistant', 'neomme', 'openai_privacy_filter', 't5gemma', 'ultrabert']


def modernbert_local_mask(local_attention: int, length: int) -> torch.Tensor:
    from transformers.masking_utils import create_bidirectional_sliding_window_mask
    config = transformers.ModernBertConfig(num_hidden_layers=3, local_attention=local_attention)
    config._attn_implementation = "eager"
    mask = create_bidirectional_sliding_window_mask(config=config, inputs_embeds=torch.zeros(1, length, 8),
                                                    attention_mask=None)
    assert isinstance(mask, torch.Tensor)
    return mask[0, 0] if mask.dtype == torch.bool else mask[0, 0] == 0


@pytest.mark.parametrize("local_attention", [8, 9, 128])
def test_modernbert_sees_half_the_local_window_on_each_side(local_attention: int) -> None:
    seen = modernbert_local_mask(local_attention, 300)
    q, k = torch.arange(300)[:, None], torch.arange(300)[None, :]
    assert torch.equal(seen, (q - k).abs() <= local_attention // 2)


@pytest.mark.parametrize("local_attention", [8, 9, 128])
def test_read_config_reports_modernbert_local_window(local_attention: int) -> None:
    config = transformers.ModernBertConfig(num_hidden_layers=3, local_attention=local_attention).to_dict()
    rope = read_config(config)
    local = rope.layers["sliding_attention"]
    assert (local.window, local.window_sides) == (local_attention // 2, "both")
    q, k = torch.arange(300)[:, None], torch.arange(300)[None, :]
    assert torch.equal(modernbert_local_mask(local_attention, 300), (q - k).abs() <= local.window)
    assert rope.layers["full_attention"].window is None


# The config class of each model type of TWO_SIDED (ModernBERT above), with a small window
TWO_SIDED_CLASSES = {
    "embedding_gemma2_text": ("EmbeddingGemma2TextConfig", {"sliding_window": 6}),
    "muse_glimmer_assistant": ("MuseGlimmerAssistantConfig", {"sliding_window": 6}),
    "neomme": ("NeoMMEConfig", {"sliding_window": 6}),
    "ultrabert": ("UltrabertConfig", {"sliding_window": 6}),
    "openai_privacy_filter": ("OpenAIPrivacyFilterConfig", {"sliding_window": 6}),
}


def test_every_two_sided_model_type_is_checked() -> None:
    assert set(TWO_SIDED) == {"modernbert", *TWO_SIDED_CLASSES}
    for model_type, rule in TWO_SIDED.items():  # the cited line builds the mask
        name, line = rule["where"].split(":")
        folder = model_type.removesuffix("_text")
        assert "create_bidirectional_sliding_window_mask(" in (MODELS / folder / name).read_text().splitlines()[int(line) - 1]


@pytest.mark.parametrize("model_type", sorted(TWO_SIDED_CLASSES))
def test_two_sided_windows_as_transformers_masks_them(model_type: str) -> None:
    """read_config's window on both sides is the mask transformers builds for these layers, run live:
    a query sees the keys within W positions, before and after."""
    from transformers.masking_utils import create_bidirectional_sliding_window_mask

    name, settings = TWO_SIDED_CLASSES[model_type]
    live = getattr(transformers, name)(num_hidden_layers=4, **settings)
    rope = read_config(live.to_dict(), layout="half" if model_type == "neomme" else None)
    windowed = [layer for layer in rope.layers.values() if layer.window is not None]
    assert windowed and all(layer.window == 6 and layer.window_sides == "both" for layer in windowed)
    if TWO_SIDED[model_type].get("every_layer"):
        assert len(windowed) == len(rope.layers) and any("both sides" in note for note in rope.notes)
    masked = live.per_layer_config[windowed[0].layers[0]] if model_type == "neomme" else live
    masked._attn_implementation = "eager"
    mask = create_bidirectional_sliding_window_mask(config=masked, inputs_embeds=torch.zeros(1, 40, 8),
                                                    attention_mask=None)
    assert isinstance(mask, torch.Tensor)
    seen = mask[0, 0] if mask.dtype == torch.bool else mask[0, 0] == 0
    q, k = torch.arange(40)[:, None], torch.arange(40)[None, :]
    assert torch.equal(seen, (q - k).abs() <= windowed[0].window)


def test_smollm3_names_its_nope_layers_sliding_when_the_window_is_on() -> None:
    live = transformers.SmolLM3Config(num_hidden_layers=4, use_sliding_window=True, sliding_window=16)
    assert live.layer_types == ["full_attention"] * 3 + ["sliding_attention"] and live.no_rope_layers == [1, 1, 1, 0]
    # given those layer types, read_config reads them as transformers runs them
    rope = read_config(live.to_dict())
    assert rope.layers["sliding_attention"].window == 16 and not rope.layers["sliding_attention"].rotates


@pytest.mark.parametrize("settings", [
    {"num_hidden_layers": 4, "use_sliding_window": True, "sliding_window": 16},
    {"num_hidden_layers": 9, "use_sliding_window": True, "sliding_window": 16, "no_rope_layer_interval": 3},
    {"num_hidden_layers": 5, "use_sliding_window": True, "sliding_window": 16, "no_rope_layers": [0, 1, 0, 1, 1]},
    {"num_hidden_layers": 4, "use_sliding_window": True, "sliding_window": None},
    {"num_hidden_layers": 4, "use_sliding_window": False, "sliding_window": 16},
])
def test_smollm3_without_layer_types_is_read_as_its_class_derives_them(settings: dict[str, Any]) -> None:
    # transformers fills layer_types and no_rope_layers from use_sliding_window, sliding_window and
    # no_rope_layer_interval (configuration_smollm3.py:100-112): with the window on, the NoPE layers
    # are the sliding ones. Before, posenc refused such a config (and earlier read four rotating layers).
    live = transformers.SmolLM3Config(**settings)
    config = {k: v for k, v in live.to_dict().items() if k not in ("layer_types", "no_rope_layers")}
    config.update({k: v for k, v in settings.items() if k == "no_rope_layers"})
    rope = read_config(config)
    layers = [rope.layers[name] for name in rope.pattern]
    assert [layer.layer_type.removesuffix(":nope") for layer in layers] == live.layer_types
    assert [layer.rotates for layer in layers] == [bool(flag) for flag in live.no_rope_layers]
    assert [layer.window for layer in layers] == [live.sliding_window if kind == "sliding_attention" else None
                                                  for kind in live.layer_types]


def test_smollm3_bad_window_switch_is_named() -> None:
    config = {"model_type": "smollm3", "num_hidden_layers": 4, "hidden_size": 64, "num_attention_heads": 4,
              "use_sliding_window": 1, "sliding_window": 16}
    with pytest.raises(TypeError, match=r"config\['use_sliding_window'\] must be true or false"):
        read_config(config)


def test_the_inspector_says_a_window_reaches_both_ways() -> None:
    from posenc.inspect import describe

    config = transformers.ModernBertConfig(num_hidden_layers=3, hidden_size=64, num_attention_heads=4).to_dict()
    lines = describe(config).splitlines()
    assert any(line.startswith("sliding_attention (2 layers)") and line.endswith("attends within 64 tokens on each side")
               for line in lines)
    assert not any("on each side" in line for line in describe({**config, "model_type": "gemma3_text"}).splitlines())


def test_smollm3_sliding_layers_with_the_switch_off_are_noted() -> None:
    """With layer_types naming sliding layers and use_sliding_window off, SmolLM3's eager and sdpa masks
    band those layers while its flash path gets neither a window nor a mask: read_config reads the
    mask's window and says so."""
    from transformers.masking_utils import create_sliding_window_causal_mask
    from transformers.models.smollm3.modeling_smollm3 import SmolLM3Attention

    live = transformers.SmolLM3Config(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, num_key_value_heads=4,
                                      layer_types=["full_attention", "sliding_attention"], no_rope_layers=[1, 0],
                                      sliding_window=4, use_sliding_window=False)
    assert SmolLM3Attention(live, 1).sliding_window is None  # what the flash path is given
    seen = {}
    for implementation in ("eager", "sdpa", "flash_attention_2"):
        live._attn_implementation = implementation
        seen[implementation] = create_sliding_window_causal_mask(
            config=live, inputs_embeds=torch.zeros(1, 10, 64), attention_mask=torch.ones(1, 10, dtype=torch.long),
            past_key_values=None, position_ids=torch.arange(10)[None])
    assert seen["flash_attention_2"] is None
    rope = read_config(live.to_dict())
    window = rope.layers["sliding_attention"].window
    q, k = torch.arange(10)[:, None], torch.arange(10)[None, :]
    for implementation in ("eager", "sdpa"):
        mask = seen[implementation][0, 0]
        assert torch.equal(mask if mask.dtype == torch.bool else mask == 0, (k <= q) & (k > q - window))
    assert any("flash attention does not" in note for note in rope.notes)
    on = read_config({**live.to_dict(), "use_sliding_window": True})
    assert not any("flash attention does not" in note for note in on.notes)


@pytest.mark.parametrize("settings", [{}, {"local_attention": 256}, {"local_attention": 9}, {"sliding_window": 10}])
@pytest.mark.parametrize("name", ["ModernBertConfig", "ModernBertDecoderConfig"])
def test_modernbert_windows_from_local_attention(name: str, settings: dict[str, Any]) -> None:
    """Without sliding_window in the dict, both ModernBERTs take half of local_attention
    (posenc.configs._windows.HALVED); a given sliding_window wins, as in their config classes. The
    decoder's window is causal: its mask is transformers' sliding causal one, run live."""
    from transformers.masking_utils import create_sliding_window_causal_mask

    live = getattr(transformers, name)(num_hidden_layers=3, **settings)
    config = {k: v for k, v in live.to_dict().items() if k != "sliding_window"}
    config.update({k: v for k, v in settings.items() if k == "sliding_window"})
    layer = read_config(config).layers["sliding_attention"]
    assert layer.window == live.sliding_window
    assert layer.window_sides == ("both" if name == "ModernBertConfig" else "before")
    if name == "ModernBertDecoderConfig":
        live._attn_implementation = "eager"
        mask = create_sliding_window_causal_mask(config=live, inputs_embeds=torch.zeros(1, 300, 8), attention_mask=None,
                                                 past_key_values=None, position_ids=torch.arange(300)[None])
        assert isinstance(mask, torch.Tensor)
        q, k = torch.arange(300)[:, None], torch.arange(300)[None, :]
        seen = mask[0, 0] if mask.dtype == torch.bool else mask[0, 0] == 0
        assert torch.equal(seen, (k <= q) & (k > q - layer.window))


def _band(mask: torch.Tensor) -> torch.Tensor:
    """A transformers mask (bool, or additive floats) as a bool matrix of what each query sees."""
    mask = mask[0, 0]
    return mask if mask.dtype == torch.bool else mask == 0


@pytest.mark.parametrize("settings", [{}, {"sliding_window_size": 100}, {"sliding_window": None, "sliding_window_size": 7},
                                      {"sliding_window": 9, "sliding_window_size": 7}])
def test_dots3_window_as_its_config_class_fills_it(settings: dict[str, Any]) -> None:
    """Dots3's class fills sliding_window in __post_init__ from the older sliding_window_size, else 512
    (configuration_dots3_note.py:305-306; FILLED); its sliding layers take it (modeling_dots3_note.py:495)
    through the sliding causal mask (:757), run live here."""
    from transformers.masking_utils import create_sliding_window_causal_mask

    live = transformers.Dots3NoteTextConfig(num_hidden_layers=6, **settings)
    config = {k: v for k, v in live.to_dict().items() if k not in ("sliding_window", "sliding_window_size")} | settings
    rope = read_config(config)
    assert rope.layers["sliding_attention"].window == live.sliding_window
    assert rope.layers["indexed_attention"].window is None
    assert rope.layers["sliding_attention"].layers == tuple(i for i, t in enumerate(live.layer_types) if t == "sliding_attention")
    live._attn_implementation = "eager"
    mask = create_sliding_window_causal_mask(config=live, inputs_embeds=torch.zeros(1, 600, 8), attention_mask=None,
                                             past_key_values=None, position_ids=torch.arange(600)[None])
    assert isinstance(mask, torch.Tensor)
    q, k = torch.arange(600)[:, None], torch.arange(600)[None, :]
    assert torch.equal(_band(mask), (k <= q) & (k > q - rope.layers["sliding_attention"].window))


def test_dots3_without_a_window_is_refused_by_key() -> None:
    """A null sliding_window_size leaves Dots3 with no window, and its sliding layers' mask then fails:
    posenc refuses the config naming the key; a window of 0 is refused too."""
    from transformers.masking_utils import create_sliding_window_causal_mask

    live = transformers.Dots3NoteTextConfig(num_hidden_layers=4, sliding_window_size=None)
    assert live.sliding_window is None
    live._attn_implementation = "eager"
    with pytest.raises(ValueError, match="sliding_window"):
        create_sliding_window_causal_mask(config=live, inputs_embeds=torch.zeros(1, 8, 8), attention_mask=None,
                                          past_key_values=None, position_ids=torch.arange(8)[None])
    config = {k: v for k, v in live.to_dict().items() if k != "sliding_window"}
    with pytest.raises(TypeError, match=r"config\['sliding_window_size'\] must be an integer, got NoneType None"):
        read_config({**config, "sliding_window_size": None})
    with pytest.raises(ValueError, match=r"config\['sliding_window_size'\] must be an integer >= 1 .*got 0"):
        read_config({**config, "sliding_window_size": 0})


def _unlimited_ocr_seen(window: int, prompt: int, generated: int) -> list[list[int]]:
    """The positions each query attends to in a one-layer Unlimited-OCR text model (eager attention,
    nonzero weights): the prompt in one pass, then one generated token at a time with its cache."""
    from transformers.models.unlimited_ocr.modeling_unlimited_ocr import UnlimitedOcrTextModel

    live = transformers.UnlimitedOcrTextConfig(num_hidden_layers=1, hidden_size=32, num_attention_heads=2,
                                               num_key_value_heads=2, intermediate_size=16, moe_intermediate_size=8,
                                               n_routed_experts=4, num_experts_per_tok=2, vocab_size=50,
                                               sliding_window=window)
    live._attn_implementation = "eager"
    torch.manual_seed(0)
    model = UnlimitedOcrTextModel(live).eval()
    with torch.no_grad():
        out = model(input_ids=torch.randint(0, 50, (1, prompt)), use_cache=True, output_attentions=True)
        seen = [(row > 0).nonzero().flatten().tolist() for row in out.attentions[0][0, 0]]
        for position in range(prompt, prompt + generated):
            out = model(input_ids=torch.randint(0, 50, (1, 1)), past_key_values=out.past_key_values, use_cache=True,
                        output_attentions=True, position_ids=torch.tensor([[position]]))
            weights = out.attentions[0][0, 0, 0]
            kept = weights.shape[-1] - prompt  # the cache's generated part: the latest positions, this one last
            keys = list(range(prompt)) + list(range(position - kept + 1, position + 1))
            seen.append([keys[i] for i in (weights > 0).nonzero().flatten().tolist()])
    return seen


def test_unlimited_ocr_reference_sliding_layers_as_transformers_runs_them() -> None:
    """R-SWA (posenc.configs._windows.REFERENCE_SLIDING), run live: every prompt token is seen, causally,
    and a generated token sees the prompt and the last W generated tokens, itself among them; so
    read_config reads these layers as rotating attention with no window, and says what the window does."""
    from tests import rope_live

    window, prompt = 3, 6
    seen = _unlimited_ocr_seen(window, prompt, 6)
    expected = [list(range(q + 1)) if q < prompt else list(range(prompt)) + list(range(max(prompt, q - window + 1), q + 1))
                for q in range(prompt + 6)]
    assert seen == expected
    live = transformers.UnlimitedOcrTextConfig(num_hidden_layers=3, sliding_window=window)
    rope = read_config(live.to_dict())
    layer = rope.layers["reference_sliding_attention"]
    assert (layer.rotates, layer.window, layer.layers) == (True, None, (0, 1, 2))
    assert any(f"the last {window} generated tokens" in note for note in rope.notes)
    assert not any("does not classify" in note for note in rope.notes)
    rope_live.check_config(live, torch.tensor([0, 1, 5, 100, 5000]))  # the rotation itself, against its rotary code
    from huggingface_hub.errors import StrictDataclassClassValidationError  # the class's check, raised by its validator

    with pytest.raises(StrictDataclassClassValidationError, match="sliding_window` cannot be `None"):
        transformers.UnlimitedOcrTextConfig(num_hidden_layers=3, layer_types=["reference_sliding_attention"] * 3,
                                            sliding_window=None)
    with pytest.raises(ValueError, match=r"config\['sliding_window'\] is null"):
        read_config({**live.to_dict(), "sliding_window": None})


def test_zaya_hybrid_layers_are_read_as_the_attention_they_run() -> None:
    """ZAYA's own layer types (posenc.configs._windows.LAYER_KINDS): 'hybrid' layers are causal attention,
    'hybrid_sliding' ones sliding-window attention, both rotated; run live: the rotation of each kind
    against its rotary module and rotation function (the layout the table now derives), the window its
    attention takes (ZayaAttention.sliding_window) and the sliding causal mask's band."""
    from transformers.masking_utils import create_sliding_window_causal_mask
    from transformers.models.zaya.modeling_zaya import ZayaAttention

    from tests import rope_live

    live = transformers.ZayaConfig(num_hidden_layers=4, hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
                                   head_dim=16, sliding_window=5,
                                   layer_types=["hybrid", "hybrid_sliding", "hybrid", "hybrid_sliding"])
    rope = read_config(live.to_dict())
    assert {name: (layer.rotates, layer.window, layer.layers) for name, layer in rope.layers.items()} == {
        "hybrid": (True, None, (0, 2)), "hybrid_sliding": (True, 5, (1, 3))}
    assert not any("does not classify" in note for note in rope.notes)
    assert [ZayaAttention(live, i).sliding_window for i in range(4)] == [None, 5, None, 5]
    rope_live.check_config(live, torch.tensor([0, 1, 5, 100, 5000]))
    live._attn_implementation = "eager"
    mask = create_sliding_window_causal_mask(config=live, inputs_embeds=torch.zeros(1, 20, 8), attention_mask=None,
                                             past_key_values=None, position_ids=torch.arange(20)[None])
    assert isinstance(mask, torch.Tensor)
    q, k = torch.arange(20)[:, None], torch.arange(20)[None, :]
    assert torch.equal(_band(mask), (k <= q) & (k > q - 5))


def test_falcon_h1_hybrid_layers_rotate() -> None:
    """Falcon-H1's layers are all 'hybrid' (a Mamba mixer and attention in one block; LAYER_KINDS): read as
    rotating attention, with no note that posenc does not classify them; the rotation checked live against
    its rotary module and apply_rotary_pos_emb. (Its layers_block_type is computed: a dict that gives it is
    refused by the class, a property without a setter.)"""
    from tests import rope_live

    live = transformers.FalconH1Config(num_hidden_layers=3, hidden_size=64, num_attention_heads=4, num_key_value_heads=2)
    assert live.layers_block_type == ["hybrid"] * 3
    rope = read_config(live.to_dict())
    assert all(layer.rotates and layer.window is None for layer in rope.layers.values())
    assert not any("does not classify" in note for note in rope.notes)
    rope_live.check_config(live.to_dict(), torch.tensor([0, 1, 5, 100, 5000]))


def test_t5gemma2_encoder_window_as_its_mask() -> None:
    from transformers.masking_utils import create_bidirectional_mask
    from transformers.models.t5gemma2.modeling_t5gemma2 import sliding_window_mask_function

    text = transformers.T5Gemma2EncoderConfig(text_config={
        "num_hidden_layers": 2, "sliding_window": 4, "hidden_size": 64, "num_attention_heads": 4,
        "num_key_value_heads": 2, "head_dim": 16}).text_config
    text._attn_implementation = "eager"
    mask = create_bidirectional_mask(config=text, inputs_embeds=torch.zeros(1, 12, 8), attention_mask=None,
                                     and_mask_function=sliding_window_mask_function(text.sliding_window, is_causal=False))
    assert isinstance(mask, torch.Tensor)
    q, k = torch.arange(12)[:, None], torch.arange(12)[None, :]
    assert torch.equal(_band(mask), (k - q >= -1) & (k - q <= 2))  # the mask as it is: 1 before, 2 after, for W = 4
    layer = read_config(text.to_dict()).layers["sliding_attention"]
    assert (layer.window, layer.window_sides) == (4, "centred")
    before, after = reach(layer.window, layer.window_sides)
    assert torch.equal(_band(mask), (k - q >= -before) & (k - q <= after))


@pytest.mark.parametrize("window", [1, 2, 3, 4, 5, 8, 9])
def test_t5gemma2_encoder_windows_of_every_parity(window: int) -> None:
    """T5Gemma2's encoder window, odd and even, run live through its own mask function and its
    encoder config (as a config.json, and as its text part): read_config's reach is the band each
    query sees; the full layers see every token both ways; the decoder's windows stay causal."""
    from transformers.masking_utils import create_bidirectional_mask, create_sliding_window_causal_mask
    from transformers.models.t5gemma2.modeling_t5gemma2 import sliding_window_mask_function

    encoder = transformers.T5Gemma2EncoderConfig(text_config={
        "num_hidden_layers": 6, "sliding_window": window, "hidden_size": 64, "num_attention_heads": 4,
        "num_key_value_heads": 2, "head_dim": 16})
    text = encoder.text_config
    text._attn_implementation = "eager"
    mask = create_bidirectional_mask(config=text, inputs_embeds=torch.zeros(1, 20, 8), attention_mask=None,
                                     and_mask_function=sliding_window_mask_function(window, is_causal=False))
    q, k = torch.arange(20)[:, None], torch.arange(20)[None, :]
    for config in (encoder.to_dict(), text.to_dict()):
        rope = read_config(config)
        layer = rope.layers["sliding_attention"]
        before, after = reach(layer.window, layer.window_sides)
        assert torch.equal(_band(mask), (k - q >= -before) & (k - q <= after)), (window, before, after)
        assert rope.layers["full_attention"].window is None
    decoder = transformers.T5Gemma2DecoderConfig(num_hidden_layers=6, sliding_window=window, hidden_size=64,
                                                 num_attention_heads=4, num_key_value_heads=2, head_dim=16)
    layer = read_config(decoder.to_dict()).layers["sliding_attention"]
    assert (layer.window, layer.window_sides) == (window, "before")
    decoder._attn_implementation = "eager"
    causal = create_sliding_window_causal_mask(config=decoder, inputs_embeds=torch.zeros(1, 20, 8), attention_mask=None,
                                               past_key_values=None, position_ids=torch.arange(20)[None])
    before, after = reach(layer.window, layer.window_sides)
    assert torch.equal(_band(causal), (k - q >= -before) & (k - q <= after))


def test_the_inspector_says_a_centred_window_reaches_unevenly() -> None:
    from posenc.inspect import describe

    text = transformers.T5Gemma2EncoderConfig(text_config={"num_hidden_layers": 6, "sliding_window": 4096}).text_config
    lines = [line for line in describe(text.to_dict()).splitlines() if line.startswith("sliding_attention")]
    assert len(lines) == 1 and lines[0].endswith("attends within 4,096 tokens: 2,047 before the query and 2,048 after")
