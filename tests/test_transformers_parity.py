"""posenc's RoPE against Hugging Face transformers (the version pinned in requirements.lock), live.

transformers is the most used implementation of the RoPE scaling rules, so it is the reference:

* for every ``rope_type`` in ``transformers.modeling_rope_utils.ROPE_INIT_FUNCTIONS``, over a grid of
  head dims, bases, factors, partial rotary factors and sequence lengths, posenc's inverse
  frequencies and attention factor agree with transformers' to float32 precision (transformers
  computes in float32, posenc in float64);
* `posenc.rope.from_config` on transformers' own config classes gives a `RotaryEmbedding` whose
  frequencies, attention factor and cos/sin tables match the rotary modules of those models.

* `posenc.configs.read_config` at the class defaults of every model type transformers registers
  (``tests/rope_live.py``): frequencies, attention factor and rotated q/k per layer type; the zoo
  of published configs is checked the same way in test_rope_zoo.py.

A rope_type transformers has and posenc lacks fails `test_every_transformers_rope_type_is_covered`.
transformers' ``"default"`` type is RoPE without scaling (``scaling=None``). posenc's ``"ntk"`` (the
static NTK-aware base change) has no rope_type in transformers: it is checked here against
transformers' ``"dynamic"`` rule, which equals it at factor 1 and ``seq_len = factor * L``
(base * (seq_len / L)^(d/(d-2))), and against its formula in test_rope.py.
"""

from __future__ import annotations

import itertools
import logging
import math
import random
from typing import Any

import pytest
import torch

transformers = pytest.importorskip("transformers", reason="transformers is a test dependency (requirements.lock)")
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

from posenc.rope import (
    RotaryEmbedding,
    from_config,
    rope_attention_scaling,
    rope_inverse_frequencies,
)
from posenc.rope_scaling import SCALING_TYPES

logging.getLogger("transformers").setLevel(logging.ERROR)  # config validation chatter

MAX_POSITIONS = 512
HEAD_DIMS = (64, 80, 128)
BASES = (10000.0, 500000.0)
FACTORS = (2.0, 8.0)
PARTIAL = (1.0, 0.5)


def close(ours: torch.Tensor, theirs: torch.Tensor) -> None:
    """float32 precision: transformers rounds each frequency to float32 (and computes in it)."""
    torch.testing.assert_close(ours.float(), theirs.float(), rtol=4e-6, atol=1e-30)


def parameters(kind: str, factor: float, partial: float, dim: int) -> dict[str, Any]:
    """transformers' rope_parameters for one case of the grid (without rope_theta)."""
    rotated = int(dim * partial)
    rng = random.Random(f"{kind}{factor}{partial}{dim}")
    return {
        "linear": {"factor": factor},
        "dynamic": {"factor": factor},
        "yarn": {"factor": factor, "original_max_position_embeddings": MAX_POSITIONS // 4, "beta_fast": 32.0,
                 "beta_slow": 1.0},
        "longrope": {"factor": factor, "original_max_position_embeddings": MAX_POSITIONS // 4,
                     "short_factor": [1 + rng.random() for _ in range(rotated // 2)],
                     "long_factor": [1 + 10 * rng.random() for _ in range(rotated // 2)]},
        "llama3": {"factor": factor, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                   "original_max_position_embeddings": MAX_POSITIONS // 4},
        "proportional": {"factor": factor},
    }[kind]


def posenc_scaling(kind: str, params: dict[str, Any], partial: float) -> dict[str, Any]:
    """The same rule as a posenc scaling dict, written out by hand from the two documentations."""
    scaling = {"type": kind, **params}
    if kind == "dynamic":
        scaling["original_max_position_embeddings"] = MAX_POSITIONS  # transformers counts from max_position_embeddings
    if kind == "proportional":
        scaling["partial_rotary_factor"] = partial
    return scaling


def llama_config(dim: int, base: float, kind: str, params: dict[str, Any], partial: float) -> Any:
    rope = {"rope_type": kind, "rope_theta": base, **params}
    if partial != 1.0:
        rope["partial_rotary_factor"] = partial
    return transformers.LlamaConfig(hidden_size=4 * dim, num_attention_heads=4, head_dim=dim, num_key_value_heads=2,
                                    max_position_embeddings=MAX_POSITIONS, rope_parameters=rope)


def test_every_transformers_rope_type_is_covered() -> None:
    missing = sorted(set(ROPE_INIT_FUNCTIONS) - set(SCALING_TYPES))
    assert not missing, (f"transformers has rope_type(s) {missing} that posenc.rope_scaling does not implement: "
                         f"add them to SCALING_TYPES (and to from_config's ROPE_TYPES)")


def seq_lens(kind: str) -> tuple[int | None, ...]:
    if kind == "dynamic":
        return (None, MAX_POSITIONS // 2, MAX_POSITIONS, 3 * MAX_POSITIONS + 5)
    if kind == "longrope":
        return (None, MAX_POSITIONS // 4, MAX_POSITIONS // 4 + 1, 4 * MAX_POSITIONS)
    return (None,)


@pytest.mark.parametrize("kind", sorted(ROPE_INIT_FUNCTIONS))
def test_frequencies_and_attention_factor_match(kind: str) -> None:
    compute = ROPE_INIT_FUNCTIONS[kind]
    for dim, base, factor, partial in itertools.product(HEAD_DIMS, BASES, FACTORS, PARTIAL):
        params = parameters(kind, factor, partial, dim)
        config = llama_config(dim, base, kind, params, partial)
        scaling = posenc_scaling(kind, params, partial)
        rotary_dim = None if kind == "proportional" or partial == 1.0 else int(dim * partial)
        for seq_len in seq_lens(kind):
            theirs, their_factor = compute(config, None, seq_len=seq_len)
            ours = rope_inverse_frequencies(dim, base=base, scaling=scaling, seq_len=seq_len, rotary_dim=rotary_dim)
            close(ours, theirs)
            assert math.isclose(rope_attention_scaling(scaling), their_factor, rel_tol=1e-12), (kind, dim, factor)
            # from_config reads the same config into the same frequencies
            kwargs = from_config(reader_config(config, kind, partial))
            from_ours = rope_inverse_frequencies(kwargs["dim"], base=kwargs["base"], scaling=kwargs["scaling"],
                                                 seq_len=seq_len, rotary_dim=kwargs["rotary_dim"])
            torch.testing.assert_close(from_ours, ours, rtol=0, atol=0)


def reader_config(config: Any, kind: str, partial: float) -> Any:
    """The config from_config reads: Llama's, or with a fraction and a scaled rule, the same settings on
    Phi, whose attention rotates the first head_dim * fraction features (modeling_phi.py:200-205); Llama's
    rotates whole heads and fails on the narrower frequencies the rule computes, and read_config refuses
    it there (tests/test_rope_params_partial_ignored.py)."""
    if partial == 1.0 or kind == "proportional":
        return config
    return transformers.PhiConfig(hidden_size=config.hidden_size, num_attention_heads=config.num_attention_heads,
                                  max_position_embeddings=config.max_position_embeddings,
                                  rope_parameters=dict(config.rope_parameters))


@pytest.mark.parametrize(
    "extra",
    [{"attention_factor": 0.8}, {"mscale": 1.0, "mscale_all_dim": 1.0}, {"mscale": 0.707, "mscale_all_dim": 0.5},
     {"mscale": 1.0}, {"truncate": False}, {"beta_fast": 16.0, "beta_slow": 2.0}],
)
def test_yarn_options_match(extra: dict[str, Any]) -> None:
    for dim, base, factor in itertools.product(HEAD_DIMS, BASES, (4.0, 40.0)):
        params = {"factor": factor, "original_max_position_embeddings": MAX_POSITIONS // 4, **extra}
        theirs, their_factor = ROPE_INIT_FUNCTIONS["yarn"](llama_config(dim, base, "yarn", params, 1.0), None)
        scaling = {"type": "yarn", **params}
        close(rope_inverse_frequencies(dim, base=base, scaling=scaling), theirs)
        assert math.isclose(rope_attention_scaling(scaling), their_factor, rel_tol=1e-12)


def test_longrope_attention_factor_given_and_factor_from_lengths() -> None:
    dim = 96
    params = parameters("longrope", 1.0, 1.0, dim)
    del params["factor"]  # Phi-3 style: the factor is max_position_embeddings / original
    for extra in ({}, {"attention_factor": 1.19}):
        config = llama_config(dim, 10000.0, "longrope", {**params, **extra}, 1.0)
        theirs, their_factor = ROPE_INIT_FUNCTIONS["longrope"](config, None, seq_len=MAX_POSITIONS)
        kwargs = from_config(config)
        assert "factor" not in kwargs["scaling"] and kwargs["scaling"]["max_position_embeddings"] == MAX_POSITIONS
        close(rope_inverse_frequencies(dim, scaling=kwargs["scaling"], seq_len=MAX_POSITIONS), theirs)
        assert math.isclose(rope_attention_scaling(kwargs["scaling"]), their_factor, rel_tol=1e-12)


@pytest.mark.parametrize("dim", HEAD_DIMS)
def test_boundary_values_transformers_accepts(dim: int) -> None:
    """llama3 with low_freq_factor == high_freq_factor (Llama 4 Scout: a step), YaRN with
    beta_fast == beta_slow (Kimi K2), LongRoPE without a factor, proportional without a fraction."""
    cases: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
        ("llama3", {"factor": 16.0, "low_freq_factor": 1.0, "high_freq_factor": 1.0,
                    "original_max_position_embeddings": 128}, {}),
        ("yarn", {"factor": 32.0, "original_max_position_embeddings": 128, "beta_fast": 1.0, "beta_slow": 1.0}, {}),
        ("yarn", {"factor": 32.0, "original_max_position_embeddings": 128, "beta_fast": 1.0, "beta_slow": 1.0,
                  "truncate": False}, {}),
        ("proportional", {}, {}),
    ]
    for kind, params, extra in cases:
        config = llama_config(dim, 500000.0, kind, params, 1.0)
        theirs, their_factor = ROPE_INIT_FUNCTIONS[kind](config, None)
        kwargs = from_config(config)
        ours = rope_inverse_frequencies(kwargs["dim"], base=kwargs["base"], scaling=kwargs["scaling"], **extra)
        close(ours, theirs)
        assert math.isclose(rope_attention_scaling(kwargs["scaling"]), their_factor, rel_tol=1e-12), (kind, params)
    # LongRoPE's factor derived from max_position_embeddings / original (Phi-3's configs give none)
    params = parameters("longrope", 1.0, 1.0, dim)
    del params["factor"]
    config = llama_config(dim, 10000.0, "longrope", params, 1.0)
    _, their_factor = ROPE_INIT_FUNCTIONS["longrope"](config, None)
    scaling = {"type": "longrope", "max_position_embeddings": MAX_POSITIONS, **params}
    assert math.isclose(rope_attention_scaling(scaling), their_factor, rel_tol=1e-12)


@pytest.mark.parametrize(("factor", "dim"), [(2, 64), (4, 128), (8, 80)])
def test_static_ntk_is_dynamic_at_factor_one(factor: int, dim: int) -> None:
    assert "ntk" not in ROPE_INIT_FUNCTIONS  # if transformers adds it, compare directly instead
    config = llama_config(dim, 10000.0, "dynamic", {"factor": 1.0}, 1.0)
    theirs, _ = ROPE_INIT_FUNCTIONS["dynamic"](config, None, seq_len=factor * MAX_POSITIONS)
    close(rope_inverse_frequencies(dim, scaling={"type": "ntk", "factor": float(factor)}), theirs)


# ---------------------------------------------------------------- from_config against the rotary modules
def tables_match(rotary: Any, config: Any, layer_type: str | None = None, length: int = 3 * MAX_POSITIONS) -> None:
    kwargs = from_config(config, layer_type) if layer_type else from_config(config)
    ours = RotaryEmbedding(**kwargs)
    positions = torch.arange(length)[None, :]
    width = kwargs["rotary_dim"] or kwargs["dim"]
    x = torch.zeros(1, length, width)
    their_cos, their_sin = rotary(x, positions, layer_type) if layer_type else rotary(x, positions)
    cos, sin = ours.tables(positions[0])
    # transformers forms angles in float32: allow a few float32 steps of the largest angle
    tolerance = 8 * 2**-24 * float(length * ours.inv_freq.max()) + 1e-6
    for a, b in ((cos, their_cos), (sin, their_sin)):
        assert b.shape[-1] == 2 * a.shape[-1]  # [cos, cos] for rotate_half
        torch.testing.assert_close(a.float(), b[0, :, : a.shape[-1]].float(), rtol=0, atol=tolerance)


def module(path: str, name: str) -> Any:
    return getattr(__import__(f"transformers.models.{path}", fromlist=[name]), name)


def test_from_config_llama_every_type() -> None:
    rotary_class = module("llama.modeling_llama", "LlamaRotaryEmbedding")
    for kind in ("default", *sorted(ROPE_INIT_FUNCTIONS)):
        params = {} if kind == "default" else parameters(kind, 4.0, 1.0, 64)
        if kind == "proportional":
            params["partial_rotary_factor"] = 0.5
        config = llama_config(64, 10000.0, kind, params, 1.0)
        rotary = rotary_class(config)
        kwargs = from_config(config)
        close(RotaryEmbedding(**kwargs).inv_freq, rotary.inv_freq)
        assert math.isclose(RotaryEmbedding(**kwargs).attention_scaling, rotary.attention_scaling, rel_tol=1e-12)
        tables_match(rotary_class(config), config)  # past the trained length: dynamic and longrope switch


@pytest.mark.parametrize(
    ("path", "config_name", "rotary_name", "arguments"),
    [
        ("phi.modeling_phi", "PhiConfig", "PhiRotaryEmbedding",
         {"hidden_size": 2560, "num_attention_heads": 32, "partial_rotary_factor": 0.4}),
        ("gpt_neox.modeling_gpt_neox", "GPTNeoXConfig", "GPTNeoXRotaryEmbedding",
         {"hidden_size": 512, "num_attention_heads": 4, "rotary_pct": 0.25}),
        ("phi3.modeling_phi3", "Phi3Config", "Phi3RotaryEmbedding",
         {"hidden_size": 3072, "num_attention_heads": 32, "max_position_embeddings": 4 * MAX_POSITIONS,
          "original_max_position_embeddings": MAX_POSITIONS,
          "rope_scaling": {"type": "longrope", "short_factor": [1.0 + i / 96 for i in range(48)],
                           "long_factor": [1.0 + i / 4 for i in range(48)]}}),
        ("deepseek_v3.modeling_deepseek_v3", "DeepseekV3Config", "DeepseekV3RotaryEmbedding",
         {"max_position_embeddings": 4 * MAX_POSITIONS,
          "rope_scaling": {"type": "yarn", "factor": 40.0, "original_max_position_embeddings": MAX_POSITIONS,
                           "mscale": 1.0, "mscale_all_dim": 1.0, "beta_fast": 32, "beta_slow": 1}}),
        ("qwen2.modeling_qwen2", "Qwen2Config", "Qwen2RotaryEmbedding", {"rope_theta": 1000000.0}),
    ],
)
def test_from_config_model_families(path: str, config_name: str, rotary_name: str, arguments: dict[str, Any]) -> None:
    config = getattr(transformers, config_name)(**arguments)
    rotary = module(path, rotary_name)(config)
    kwargs = from_config(config)
    ours = RotaryEmbedding(**kwargs)
    close(ours.inv_freq, rotary.inv_freq)
    assert math.isclose(ours.attention_scaling, rotary.attention_scaling, rel_tol=1e-12)
    tables_match(module(path, rotary_name)(config), config, length=4 * MAX_POSITIONS + 7)


@pytest.mark.parametrize(("config_name", "path", "rotary_name"),
                         [("Gemma3TextConfig", "gemma3.modeling_gemma3", "Gemma3RotaryEmbedding"),
                          ("Gemma4TextConfig", "gemma4.modeling_gemma4", "Gemma4TextRotaryEmbedding")])
def test_from_config_per_layer_types(config_name: str, path: str, rotary_name: str) -> None:
    config = getattr(transformers, config_name)()
    rotary = module(path, rotary_name)(config)
    for layer_type in ("sliding_attention", "full_attention"):
        ours = RotaryEmbedding(**from_config(config, layer_type))
        close(ours.inv_freq, getattr(rotary, f"{layer_type}_inv_freq"))
        assert ours.attention_scaling == getattr(rotary, f"{layer_type}_attention_scaling")
        tables_match(rotary, config, layer_type, length=64)


# ---------------------------------------------------------------- every model type, at its class defaults
def _table() -> dict[str, Any]:
    from posenc.configs._table import model_types

    return model_types()


# Model types whose class defaults posenc reads differently from transformers, each for a stated reason.
DEFAULTS_DIFFER = {
    "glm4_moe": "the class defaults split hidden_size 4096 over 96 heads (no head_dim): transformers floors it "
                "to 42, posenc refuses the config",
    "qwen3_omni_moe_text": "the class defaults split hidden_size 2048 over 28 heads (no head_dim): transformers "
                           "floors it, posenc refuses the config",
    "glm4v_moe_text": "the class defaults split hidden_size 4096 over 96 heads (no head_dim), as GLM-4-MoE's: "
                      "transformers floors it to 42, posenc refuses the config",
}
# M-RoPE models whose class defaults transformers' rotary module fails on (posenc refuses them alike)
from tests.test_rope_text_parts import SECTIONS_DO_NOT_FIT
from tests.test_rope_text_parts import _fitted as fitted_sections

# Model types with a layer type posenc does not classify, each for a stated reason (none at present:
# Zamba2's 'hybrid' layers are read since posenc.configs._windows.LAYER_KINDS and the table's use_mem_rope).
UNKNOWN_LAYERS: dict[str, str] = {}
# (ESM's switch and RoFormer's sinusoidal table turn q and k outside a rotary module: their own modules are run
# by tests/test_rope_legacy_rotations.py, at the class defaults too)
READABLE = sorted(k for k, v in _table().items() if v.get("layout") and v.get("rope", True)
                  and not v.get("rope_switch") and not v.get("rotates_values"))
# (a rotation turned the other way, a config whose parts rotate and a rotation of a slice of the heads are
# refused for that: tests/test_rope_text_parts.py, tests/test_rope_legacy_rotations.py)
UNDERIVED = sorted(k for k, v in _table().items() if "layout" in v and v["layout"] is None and not v.get("read_by")
                   and not v.get("turns_backward") and not v.get("rotating_parts") and not v.get("head_slice"))
# Model types the table's generator cannot derive one layout for, read by a reader of their own (DeepSeek-V4)
READ_ELSEWHERE = sorted(k for k, v in _table().items() if v.get("read_by"))


@pytest.mark.parametrize("model_type", READABLE)
def test_every_model_type_at_its_defaults(model_type: str) -> None:
    """read_config on transformers' config class at its defaults, against its rotary code, every layer type."""
    from tests import rope_live
    from tools.rope_model_types import derive as rope_model_types

    if model_type in UNKNOWN_LAYERS:
        pytest.xfail(UNKNOWN_LAYERS[model_type])
    text = rope_model_types._text_config(rope_model_types._model_types()[model_type])
    if model_type in DEFAULTS_DIFFER:
        with pytest.raises(ValueError, match="must be a multiple"):
            rope_live.check_config(text)
        pytest.xfail(DEFAULTS_DIFFER[model_type])
    if model_type in SECTIONS_DO_NOT_FIT:  # transformers fails on them at the defaults; read with sections that fit
        with pytest.raises(ValueError, match=SECTIONS_DO_NOT_FIT[model_type]):
            rope_live.check_config(text)
        text = fitted_sections(text, [16, 24, 24])
    rope_live.check_config(text, torch.tensor([0, 1, 5, 100, 5000, 40000]))


@pytest.mark.parametrize("model_type", UNDERIVED)
def test_a_model_type_without_a_derived_layout_asks_for_it(model_type: str) -> None:
    from posenc.configs import read_config
    from tools.rope_model_types import derive as rope_model_types

    try:
        text = rope_model_types._text_config(rope_model_types._model_types()[model_type])
    except Exception as error:
        pytest.skip(f"transformers cannot build {model_type}'s config at its defaults: {error!r:.80}")
    # a vision or video encoder is refused first, pointing to the reader that reads it in 2-D or 3-D
    from posenc.configs.vision import ENCODER_MODEL_TYPES

    own = getattr(text, "model_type", model_type)
    expected = "read_vision_config reads it" if own in ENCODER_MODEL_TYPES else "layout is needed"
    with pytest.raises(ValueError, match=expected):
        read_config(text)


@pytest.mark.parametrize("model_type", READ_ELSEWHERE)
def test_a_model_type_read_elsewhere_is_read_at_its_defaults(model_type: str) -> None:
    """The table names the reader (``read_by``); read_config reaches it on the class defaults."""
    from posenc.configs import read_config
    from tools.rope_model_types import derive as rope_model_types

    entry = _table()[model_type]
    assert entry["layout"] is None and entry["read_by"].startswith("posenc.configs.")
    text = rope_model_types._text_config(rope_model_types._model_types()[model_type])
    rope = read_config(text)
    assert rope.model_type == model_type and rope.layers
    assert all(layer.layout in ("half", "interleaved") for layer in rope.layers.values() if layer.rotates)
