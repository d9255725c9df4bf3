"""Layers that rotate only under a config flag, and layer lists a config class rewrites (issue 33):
read_config against transformers, live.

Zamba2's ``hybrid`` layers are a shared attention block before a Mamba layer; the attention rotates
q and k only with ``use_mem_rope`` (modeling_zamba2.py:305-307), over the whole
``attention_head_dim`` (2 * hidden_size // num_attention_heads unless the config gives it:
configuration_zamba2.py:115). Each test builds transformers' config class or model and compares what
``read_config`` says; ``tests/test_explorer_ports.py`` compares the inspector's JavaScript port with
the same readings.
"""

from __future__ import annotations

import pytest
import torch

from posenc.configs import read_config

transformers = pytest.importorskip("transformers")

ZAMBA2 = {"num_hidden_layers": 4, "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 4,
          "layers_block_type": ["mamba", "hybrid", "mamba", "hybrid"], "n_mamba_heads": 4, "mamba_d_state": 8,
          "vocab_size": 50, "use_mamba_kernels": False, "num_mem_blocks": 1}


def _zamba2_attention(use_mem_rope: bool, step: int) -> torch.Tensor:
    """Zamba2's shared attention (eager, one hybrid layer) on one input, given the rotary module's
    cos and sin at positions 0, step, 2 * step, ..."""
    from transformers.models.zamba2.modeling_zamba2 import Zamba2Attention, Zamba2RotaryEmbedding

    live = transformers.Zamba2Config(**ZAMBA2, use_mem_rope=use_mem_rope)
    live._attn_implementation = "eager"
    torch.manual_seed(0)
    attention = Zamba2Attention(live, layer_idx=1, num_fwd_mem_blocks=2, block_id=0).eval()
    x = torch.randn(1, 6, live.attention_hidden_size)
    tables = Zamba2RotaryEmbedding(live)(x, torch.arange(6)[None] * step)
    with torch.no_grad():
        return attention(x, layer_idx=1, position_embeddings=tables)[0]


@pytest.mark.parametrize("use_mem_rope", [False, True])
def test_zamba2_hybrid_layers_rotate_only_with_use_mem_rope(use_mem_rope: bool) -> None:
    """Run live: the shared attention given the rotary tables of positions 0, 1, 2, ... or 0, 7,
    14, ... (other distances between tokens) gives the same output without use_mem_rope (it does not
    use them) and different ones with it; the model builds no rotary module without it; read_config
    reads the hybrid layers as rotating exactly then, Mamba layers never."""
    from transformers.models.zamba2.modeling_zamba2 import Zamba2Model

    moved = not torch.allclose(_zamba2_attention(use_mem_rope, 1), _zamba2_attention(use_mem_rope, 7), atol=1e-6)
    assert moved == use_mem_rope
    small = {**ZAMBA2, "num_hidden_layers": 2, "layers_block_type": ["mamba", "hybrid"]}
    assert hasattr(Zamba2Model(transformers.Zamba2Config(**small, use_mem_rope=use_mem_rope)), "rotary_emb") == use_mem_rope
    live = transformers.Zamba2Config(**ZAMBA2, use_mem_rope=use_mem_rope)
    rope = read_config(live.to_dict())
    assert {name: (layer.rotates, layer.layers) for name, layer in rope.layers.items()} == {
        "linear_attention": (False, (0, 2)), "hybrid": (use_mem_rope, (1, 3))}
    assert not any("does not classify" in note or "depends on" in note for note in rope.notes)
    if not use_mem_rope:
        assert "use_mem_rope" in (rope.layers["hybrid"].note or "")


@pytest.mark.parametrize("settings", [{}, {"hidden_size": 96, "num_attention_heads": 3}, {"attention_head_dim": 8},
                                      {"use_long_context": True}])
def test_zamba2_rotation_as_its_rotary_module(settings: dict[str, object]) -> None:
    """With use_mem_rope, the hybrid layers' rotation against Zamba2's rotary module and
    apply_rotary_pos_emb (frequencies, attention factor, rotated q and k), on the class's dict and on
    a config.json without the keys the class computes (attention_head_dim: 2 * hidden_size // heads)."""
    from tests import rope_live

    live = transformers.Zamba2Config(**{**ZAMBA2, **settings}, use_mem_rope=True)
    rope = rope_live.check_config(live, torch.tensor([0, 1, 5, 100, 5000]))
    assert rope.layers["hybrid"].dim == live.attention_head_dim == rope.layers["hybrid"].rotary_dim
    computed = ("attention_head_dim", "attention_hidden_size", "kv_channels", "mamba_headdim", "hybrid_layer_ids")
    given = {k: v for k, v in live.to_dict().items() if k not in computed or k in settings}
    assert read_config(given).layers["hybrid"] == rope.layers["hybrid"]


@pytest.mark.parametrize("settings", [{"use_long_context": True, "max_position_embeddings": 4096},
                                      {"use_long_context": True}, {"use_long_context": False, "max_position_embeddings": 2048}])
def test_zamba2_long_context_sets_the_length(settings: dict[str, object]) -> None:
    """Zamba2's use_long_context sets max_position_embeddings to 16384 whatever the config gives
    (posenc.configs._plan.LONG_CONTEXT); run live: the class's value and its rotary module's length."""
    from transformers.models.zamba2.modeling_zamba2 import Zamba2RotaryEmbedding

    live = transformers.Zamba2Config(**ZAMBA2, use_mem_rope=True, **settings)
    rope = read_config({"model_type": "zamba2", **ZAMBA2, "use_mem_rope": True, **settings})
    assert rope.max_position_embeddings == live.max_position_embeddings == Zamba2RotaryEmbedding(live).max_seq_len_cached


def test_zamba2_bad_switch_and_widths_are_named() -> None:
    from huggingface_hub.errors import StrictDataclassFieldValidationError

    config = {"model_type": "zamba2", **ZAMBA2}
    for value in (1, None):  # both refused by Zamba2Config's strict field, as here
        with pytest.raises(StrictDataclassFieldValidationError, match="expected bool"):
            transformers.Zamba2Config(**ZAMBA2, use_mem_rope=value)
        with pytest.raises(TypeError, match=rf"config\['use_mem_rope'\] must be true or false, got \w+ {value}"):
            read_config({**config, "use_mem_rope": value})
        with pytest.raises(StrictDataclassFieldValidationError, match="expected bool"):
            transformers.Zamba2Config(**ZAMBA2, use_long_context=value)
        with pytest.raises(TypeError, match=rf"config\['use_long_context'\] must be true or false, got \w+ {value}"):
            read_config({**config, "use_long_context": value})
    with pytest.raises(ValueError, match=r"2 \* config\['hidden_size'\] \(128\) must be a multiple of "
                                         r"config\['num_attention_heads'\] \(3\)"):
        read_config({**config, "num_attention_heads": 3, "use_mem_rope": True})


DOTS3_LEGACY = ["full_attention", "full_attention", "sliding_attention", "sliding_attention", "full_attention",
                "full_attention"]


@pytest.mark.parametrize("settings", [
    {}, {"layer_types": DOTS3_LEGACY}, {"layer_types": DOTS3_LEGACY, "use_dsa": False}, {"use_sliding_window": False},
    {"use_dsa": False}, {"per_layer_config": {}, "layer_types": ["full_attention"] * 6}, {"use_dsa": None},
    {"num_hidden_layers": 9, "use_dsa": True}, {"use_dsa": False, "use_sliding_window": False},
    {"use_sliding_window": None},
])
def test_dots3_legacy_configs_as_its_class_rewrites_them(settings: dict[str, object]) -> None:
    """A legacy Dots3 config.json (layers named full_attention, or no layer_types): its class renames
    and derives the layer types (configuration_dots3_note.py:286-320; posenc.configs._plan.LEGACY_LAYER_TYPES),
    and read_config reads what it then runs. Run live: the class's layer types and, per kind of layer,
    its rotary module and rotation (rope_live.check_config on the legacy dict itself)."""
    from tests import rope_live

    config = {"model_type": "dots3_note_text", "num_hidden_layers": 6, **settings}
    live = transformers.Dots3NoteTextConfig(**{k: v for k, v in config.items() if k != "model_type"})
    rope = rope_live.check_config(config, torch.tensor([0, 1, 5, 100, 5000]))
    assert [name.removesuffix(":nope") for name in rope.pattern] == live.layer_types
    for name, layer in rope.layers.items():
        assert layer.rotates and (layer.window is not None) == (name == "sliding_attention"), name


def test_dots3_bad_legacy_switches_are_named() -> None:
    config = {"model_type": "dots3_note_text", "num_hidden_layers": 6}
    with pytest.raises(TypeError, match=r"config\['use_dsa'\] must be true, false or null, got int 1"):
        read_config({**config, "use_dsa": 1})
    with pytest.raises(TypeError, match=r"config\['use_sliding_window'\] must be true, false or null, got str 'yes'"):
        read_config({**config, "use_sliding_window": "yes"})


LEGACY_NAMED = {
    "qwen3_next": {"num_hidden_layers": 4, "layer_types": ["linear_attention"] * 3 + ["attention"]},
    "qwen3_5_text": {"num_hidden_layers": 4, "layer_types": ["linear_attention"] * 3 + ["attention"]},
    "zamba2": {"num_hidden_layers": 3, "hidden_size": 64, "num_attention_heads": 4, "use_mem_rope": True,
               "layers_block_type": ["mamba", "hybrid", "mamba"]},
    "glm_moe_dsa": {"num_hidden_layers": 2, "layer_types": ["deepseek_sparse_attention"] * 2},
    "deepseek_v32": {"num_hidden_layers": 2, "layer_types": ["deepseek_sparse_attention"] * 2},
}


@pytest.mark.parametrize("model_type", sorted(LEGACY_NAMED))
def test_legacy_layer_names_as_every_config_class_renames_them(model_type: str) -> None:
    """Every config class renames legacy layer types at the end of its __post_init__ (mamba,
    attention, deepseek_sparse_attention, qwen_sparse_attention: configuration_utils.py:94-99, :514;
    posenc.configs._plan.LEGACY_NAMES). Run live: the class's names and, per kind of layer, its rotary
    module and rotation (rope_live.check_config on the dict with the legacy names)."""
    from tests import rope_live

    config = {"model_type": model_type, **LEGACY_NAMED[model_type]}
    live = transformers.AutoConfig.for_model(**config).get_text_config(decoder=True)
    rope = rope_live.check_config(config, torch.tensor([0, 1, 5, 100, 5000]))
    assert [name.removesuffix(":nope") for name in rope.pattern] == list(live.layer_types)
    assert all(layer.rotates is not None for layer in rope.layers.values())


def test_dots3_with_a_legacy_name_is_refused_as_transformers_fails_on_it() -> None:
    """Dots3 builds its rope parameters keyed by the layer names it is given, and the base class then
    renames 'attention' to 'full_attention': its rotary module fails (KeyError), so read_config refuses
    the config naming the key and the name."""
    from transformers.models.dots3_note.modeling_dots3_note import Dots3NoteTextRotaryEmbedding

    types = ["attention", "full_attention", "sliding_attention", "sliding_attention"]
    live = transformers.Dots3NoteTextConfig(num_hidden_layers=4, layer_types=types)
    assert live.layer_types[0] == "full_attention" and "attention" in live.rope_parameters
    with pytest.raises(KeyError, match="full_attention"):
        Dots3NoteTextRotaryEmbedding(live)
    with pytest.raises(ValueError, match=r"config\['layer_types'\] names 'attention' layers"):
        read_config({"model_type": "dots3_note_text", "num_hidden_layers": 4, "layer_types": types})
    # with full_attention layers beside them (use_dsa false keeps that name), the renamed layers find theirs
    from tests import rope_live

    config = {"model_type": "dots3_note_text", "num_hidden_layers": 4, "use_dsa": False,
              "layer_types": ["attention", "indexed_attention"] * 2}
    rope = rope_live.check_config(config, torch.tensor([0, 1, 5, 100]))
    assert list(rope.layers) == ["full_attention"]
