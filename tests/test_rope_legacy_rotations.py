"""Rotations outside transformers' usual pattern, read (or refused) as the code runs them, live
(the table's keys from tools/rope_model_types/legacy.py):

* ESM rotates only with ``position_embedding_type`` "rotary" (modeling_esm.py:368-370, 631-632),
  half layout, base ``rope_theta``, the whole head; with "absolute" it adds learned position
  embeddings instead (:209-212, 253-255); its rotary module reads no ``rope_parameters`` (:116-139).
* RoFormer turns q and k by a sinusoidal table of base 10000 (modeling_roformer.py:55-67) in
  interleaved pairs (:220-236), the whole head (:394-396); with ``rotary_value`` it turns the
  values too (:180-187, 237-242), which posenc refuses.
* Qwen2.5-Omni's DiT rotates its first head only, de-interleaved (modeling_qwen2_5_omni.py:2985-2991),
  which posenc refuses with what the code does.
"""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest
import torch

from posenc.configs import from_config, read_config
from posenc.configs._table import TABLE_PATH

transformers = pytest.importorskip("transformers")

from posenc.rope import RotaryEmbedding  # noqa: E402

SMALL = {"hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2, "intermediate_size": 32}
POSITIONS = torch.arange(9)


def _table() -> dict[str, Any]:
    return json.loads(TABLE_PATH.read_text())["model_types"]


def _qk(dim: int, heads: int = 2) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(3)
    return tuple(torch.randn(1, heads, len(POSITIONS), dim, dtype=torch.float64, generator=generator) for _ in "qk")


def _esm(**extra: Any) -> Any:
    return transformers.EsmConfig(vocab_size=33, pad_token_id=1, mask_token_id=32, **SMALL, **extra)


# ---------------------------------------------------------------- ESM
def test_esm_with_rotary_positions_reads_as_its_rotary_module_turns() -> None:
    from transformers.models.esm import modeling_esm

    assert _table()["esm"]["rope_switch"] == {"key": "position_embedding_type", "rotary": "rotary",
                                              "absolute": "absolute", "default": "absolute"}
    config = _esm(position_embedding_type="rotary", rope_theta=500.0)
    model = modeling_esm.EsmModel(config, add_pooling_layer=False).double()
    assert model.rotary_embeddings is not None and not hasattr(model.embeddings, "position_embeddings")
    layer = read_config(config).layers["full_attention"]
    assert (layer.rotates, layer.dim, layer.rotary_dim, layer.base, layer.layout, layer.scaling) == (
        True, 16, 16, 500.0, "half", None)
    q, k = _qk(16)
    cos, sin = model.rotary_embeddings(q, POSITIONS[None])
    theirs = modeling_esm.apply_rotary_pos_emb(q, k, cos, sin)
    ours = RotaryEmbedding(**from_config(config)).double()(q, k, POSITIONS)
    for mine, reference in zip(ours, theirs):
        torch.testing.assert_close(mine, reference.double(), atol=1e-5, rtol=0)  # transformers' angles: float32


def test_esm_ignores_rope_parameters_as_its_rotary_module_does() -> None:
    from transformers.models.esm import modeling_esm

    scaling = {"rope_type": "linear", "factor": 4.0, "rope_theta": 7.0}
    config = _esm(position_embedding_type="rotary", rope_theta=500.0, rope_parameters=scaling)
    inv_freq = modeling_esm.EsmRotaryEmbedding(config).inv_freq.double()
    rope = read_config(config)
    assert rope.layers["full_attention"].base == 500.0 and rope.layers["full_attention"].scaling is None
    torch.testing.assert_close(RotaryEmbedding(**from_config(config)).inv_freq.double(), inv_freq, rtol=1e-6, atol=0)
    assert any("reads only config['rope_theta']" in note and "config['rope_parameters']" in note for note in rope.notes)


@pytest.mark.parametrize("value", ["absolute", None, "relative_key"])
def test_esm_without_rotary_positions_does_not_rotate(value: str | None) -> None:
    from transformers.models.esm import modeling_esm

    config = _esm(position_embedding_type=value)
    model = modeling_esm.EsmModel(config, add_pooling_layer=False)
    assert model.rotary_embeddings is None  # no rotation: modeling_esm.py:631-632
    adds = hasattr(model.embeddings, "position_embeddings")
    assert adds == (value == "absolute")  # learned absolute positions only for "absolute"
    layer = read_config(config).layers["full_attention"]
    assert layer.rotates is False and f"config['position_embedding_type'] is {value!r}" in layer.note
    assert ("adds learned absolute position embeddings to the token embeddings instead" in layer.note) == adds
    assert ("no position information" in layer.note) == (not adds)
    with pytest.raises(ValueError, match="no layer of this config uses RoPE"):
        from_config(config)
    assert read_config({"model_type": "esm", **SMALL}).layers["full_attention"].rotates is False  # the default
    with pytest.raises(TypeError, match=r"config\['position_embedding_type'\] must be a string such as 'rotary'"):
        read_config({"model_type": "esm", **SMALL, "position_embedding_type": 1})


def test_esm_and_roformer_at_their_class_defaults() -> None:
    """ESM's default is "absolute" (configuration_esm.py:208): no rotation; RoFormer's defaults
    (configuration_roformer.py:49-62): a head of 768 / 12 = 64 features, interleaved, base 10000."""
    assert read_config(transformers.EsmConfig()).layers["full_attention"].rotates is False
    assert from_config(transformers.RoFormerConfig()) == {"dim": 64, "base": 10000.0, "layout": "interleaved",
                                                         "scaling": None, "rotary_dim": None}


# ---------------------------------------------------------------- RoFormer
def test_roformer_reads_as_its_sinusoidal_table_turns() -> None:
    from transformers.models.roformer import modeling_roformer

    entry = _table()["roformer"]
    assert entry["fixed_tables"] is True and entry["layout"] == "interleaved"
    assert entry["rotates_values"] == {"key": "rotary_value", "default": False}
    config = transformers.RoFormerConfig(vocab_size=50, **SMALL, max_position_embeddings=64)
    model = modeling_roformer.RoFormerModel(config).double()
    layer = read_config(config).layers["full_attention"]
    assert (layer.rotates, layer.dim, layer.rotary_dim, layer.base, layer.layout, layer.scaling) == (
        True, 16, 16, 10000.0, "interleaved", None)
    table = model.encoder.embed_positions((1, len(POSITIONS)))[None, None].double()
    q, k = _qk(16)
    theirs = modeling_roformer.RoFormerSelfAttention.apply_rotary_position_embeddings(table, q, k)
    ours = RotaryEmbedding(**from_config(config)).double()(q, k, POSITIONS)
    for mine, reference in zip(ours, theirs):
        torch.testing.assert_close(mine, reference, atol=1e-5, rtol=0)  # the table is stored in float32
    half = RotaryEmbedding(**{**from_config(config), "layout": "half"}).double()(q, k, POSITIONS)
    assert not torch.allclose(half[0], theirs[0], atol=1e-2)


def test_roformer_rotating_its_values_is_refused() -> None:
    from transformers.models.roformer import modeling_roformer

    q, k = _qk(16)
    table = modeling_roformer.RoFormerSinusoidalPositionalEmbedding(len(POSITIONS), 16).create_weight()
    turned = modeling_roformer.RoFormerSelfAttention.apply_rotary_position_embeddings(table.double(), q, k, q.clone())
    assert not torch.equal(turned[2], q)  # the values turn too
    config = transformers.RoFormerConfig(vocab_size=50, **SMALL, rotary_value=True)
    with pytest.raises(ValueError, match=r"config\['rotary_value'\] is true: .* rotates the values as well as q and k"):
        read_config(config)
    with pytest.raises(TypeError, match=r"config\['rotary_value'\] must be true or false"):
        read_config({"model_type": "roformer", **SMALL, "rotary_value": "yes"})


# ---------------------------------------------------------------- Qwen2.5-Omni's DiT
def test_qwen2_5_omni_dit_rotates_its_first_head_only_and_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from transformers.models.qwen2_5_omni import modeling_qwen2_5_omni as omni

    assert _table()["qwen2_5_omni_dit"]["head_slice"] == {
        "attention": "DiTAttention", "sliced": "query[:, :1], key[:, :1]", "through": ["deinterleave_head_dim"]}
    config = transformers.Qwen2_5OmniDiTConfig(hidden_size=64, num_attention_heads=4, head_dim=16)
    attention = omni.DiTAttention(config).double()
    attention.config = SimpleNamespace(_attn_implementation="posenc_capture")  # what reaches the softmax
    rotary = omni.Qwen2_5OmniDiTRotaryEmbedding(config)
    x = torch.randn(1, len(POSITIONS), 64, dtype=torch.float64, generator=torch.Generator().manual_seed(5))
    cos, sin = (t.double() for t in rotary(x, POSITIONS[None]))
    seen: dict[str, torch.Tensor] = {}

    def capture(module: Any, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, **_: Any) -> Any:
        seen["scores"] = query @ key.transpose(-1, -2)
        return value.transpose(1, 2), None

    monkeypatch.setitem(omni.ALL_ATTENTION_FUNCTIONS._local_mapping, "posenc_capture", capture)
    attention(x, (cos, sin))
    q, k = (proj(x).view(1, -1, 4, 16).transpose(1, 2) for proj in (attention.to_q, attention.to_k))
    ours = RotaryEmbedding(dim=16, base=config.rope_parameters["rope_theta"], layout="interleaved").double()
    turned = ours(q[:, :1], k[:, :1], POSITIONS)
    torch.testing.assert_close(seen["scores"][:, :1], turned[0] @ turned[1].transpose(-1, -2), atol=1e-5, rtol=0)
    half = RotaryEmbedding(dim=16, base=config.rope_parameters["rope_theta"], layout="half").double()
    other = half(q[:, :1], k[:, :1], POSITIONS)
    assert not torch.allclose(seen["scores"][:, :1], other[0] @ other[1].transpose(-1, -2), atol=1e-2)
    torch.testing.assert_close(seen["scores"][:, 1:], q[:, 1:] @ k[:, 1:].transpose(-1, -2))  # not rotated
    for layout in (None, "half", "interleaved"):
        with pytest.raises(ValueError, match=r"rotates only query\[:, :1\], key\[:, :1\] \(.*its first head\), after "
                                             r"deinterleave_head_dim reorders their features") as refused:
            read_config({"model_type": "qwen2_5_omni_dit"}, layout=layout)
        assert "layout is needed" not in str(refused.value)


# ---------------------------------------------------------------- Moshi's depth decoder
def test_moshi_depth_builds_its_attention_with_the_rotation_off() -> None:
    """MoshiDepthDecoder builds its layers with use_rope=False (modeling_moshi.py:597), so each
    MoshiAttention's rotary_emb is None and its rotation is skipped (:448-450, 467-469); Moshi's main
    decoder builds the same class with it on."""
    from transformers.models.moshi import modeling_moshi

    entry = _table()["moshi_depth"]
    assert entry["rotation_off"] == {"MoshiAttention": "rotary_emb"} and entry["rotates_elsewhere"] == ["MoshiAttention"]
    with torch.device("meta"):
        depth = modeling_moshi.MoshiDepthDecoder(transformers.MoshiDepthConfig())
        main = modeling_moshi.MoshiModel(transformers.MoshiConfig().get_text_config(decoder=True))
    attentions = [m for m in depth.modules() if isinstance(m, modeling_moshi.MoshiAttention)]
    assert attentions and all(m.rotary_emb is None for m in attentions)
    assert any(m.rotary_emb is not None for m in main.modules() if isinstance(m, modeling_moshi.MoshiAttention))
    with pytest.raises(ValueError, match=r"model type 'moshi_depth' uses no rotary position embedding: no module .* "
                                         r"rotates: it builds MoshiAttention with self.rotary_emb None, which skips"):
        read_config({"model_type": "moshi_depth"})
