"""transformers' own RoPE code for a model type, run on a probe, beside posenc's reading of the same config.

Shared by test_rope_zoo.py (every zoo checkpoint) and test_transformers_parity.py (every model type
at its config class's defaults): for each kind of layer `posenc.configs.read_config` finds, the
frequencies, the attention factor and the rotated queries must equal transformers' (its rotary
module and the rotation function its attention calls), at positions inside and beyond the trained
context; NoPE kinds must be the layers transformers' config leaves unrotated; what acts outside the
rotation (Ministral's query temperature, DeepSeek's softmax scale) must equal transformers' own.
"""

from __future__ import annotations

import copy
import inspect
import logging
import math
import warnings
from collections.abc import Mapping
from typing import Any

import torch

from posenc.rope import RotaryEmbedding
from posenc.configs import ConfigRope, LayerRope, query_temperature, read_config
from posenc.rope_layouts import layout_permutation
from tools.rope_model_types import derive

logging.getLogger("transformers").setLevel(logging.ERROR)
warnings.filterwarnings("ignore", module="transformers")


def transformers_config(config: Mapping[str, Any]) -> Any:
    """The transformers config object for a config.json dict (its text part for a wrapper)."""
    import transformers

    # a deep copy: some config classes rewrite the dict they are given (Kimi K2.5 renames its
    # text_config's model_type), and posenc must read the config as published
    built = transformers.AutoConfig.for_model(**copy.deepcopy(dict(config)))
    return built.get_text_config(decoder=True)


class Reference:
    """transformers' rotary module and rotation function for one model type and config."""

    def __init__(self, text: Any) -> None:
        self.text = text
        self.module = derive._module(text.model_type)
        source = inspect.getsource(self.module)
        functions = derive._rotation_functions(self.module)
        used = derive._called_in_attention(source, derive.own_name(text))
        functions = {n: f for n, f in functions.items() if n in used} or functions
        if len(functions) > 1:  # DeepSeek: the branch the config's rope_interleave selects
            wanted = "apply_rotary_pos_emb_interleave" if getattr(text, "rope_interleave", False) \
                else "apply_rotary_pos_emb"
            functions = {wanted: functions[wanted]}
        if len(functions) != 1:
            raise LookupError(f"no single rotation function in {self.module.__name__}: {sorted(functions)}")
        self.function = next(iter(functions.values()))
        rotaries = derive._rotary_candidates(self.module, text) or derive._legacy_rotary(self.module, text)
        if not rotaries:
            raise LookupError(f"no rotary module in {self.module.__name__} builds from this config")
        self.rotary = rotaries[0].double()

    def layer_type(self, name: str) -> str | None:
        """The layer type to ask the rotary module for, for posenc's kind ``name`` (None: one for all)."""
        per_type = "layer_type" in inspect.signature(self.rotary.forward).parameters
        return name.removesuffix(":nope") if per_type else None

    def runs(self, name: str, width: int) -> None:
        """Run transformers' rotation once for the layers ``name`` (raises what it raises)."""
        q = torch.zeros(1, 1, 2, width, dtype=torch.float64)
        self.rotate(q, q.clone(), torch.tensor([0, 1]), self.layer_type(name))

    def inv_freq(self, layer_type: str | None) -> torch.Tensor:
        found = derive._inv_freq(self.rotary, layer_type)
        assert found is not None, f"{type(self.rotary).__name__} has no inv_freq for {layer_type!r}"
        return found

    def attention_scaling(self, layer_type: str | None) -> float:
        for name in (f"{layer_type}_attention_scaling", "attention_scaling"):
            if hasattr(self.rotary, name):
                return float(getattr(self.rotary, name))
        return 1.0

    def rotate(self, q: torch.Tensor, k: torch.Tensor, positions: torch.Tensor,
               layer_type: str | None) -> tuple[torch.Tensor, torch.Tensor]:
        """q and k ``[1, heads, len(positions), width]`` rotated by transformers at ``positions``."""
        x = torch.zeros(1, positions.numel(), 8, dtype=torch.float64)
        args: list[Any] = [x, positions[None, :]]
        if layer_type is not None and "layer_type" in inspect.signature(self.rotary.forward).parameters:
            args.append(layer_type)
        try:
            tables = self.rotary(*args)
        except Exception:
            tables = self.rotary(x, positions[None, None, :].expand(3, 1, -1), *args[2:])  # M-RoPE
        out = derive._apply(self.function, q, k, tables)
        assert out is not None, f"{self.function.__name__} could not be called on the probe"
        return out


def _tolerance(positions: torch.Tensor, theta: torch.Tensor) -> float:
    # transformers forms angles in float32: a few float32 steps of the largest angle, times |q| <= ~5
    return 5 * (16 * 2**-24 * float(positions.max()) * float(theta.max()) + 1e-6)


def check_layer(ref: Reference, layer: LayerRope, name: str, positions: torch.Tensor) -> None:
    """One rotating kind of layer: frequencies, attention factor and rotated q and k."""
    layer_type = ref.layer_type(name)
    ours = RotaryEmbedding(**layer.rotary_kwargs())
    # in posenc's order, largest first: Ernie 4.5 VL stores its rungs permuted and its M-RoPE sections
    # put them back in that order for text tokens (the rotated q below checks the order used)
    theirs = ref.inv_freq(layer_type).sort(descending=True).values
    torch.testing.assert_close(ours.inv_freq.float(), theirs.float(), rtol=4e-6, atol=1e-30,
                               msg=lambda m: f"{name}: inverse frequencies differ: {m}")
    assert math.isclose(layer.attention_factor, ref.attention_scaling(layer_type), rel_tol=1e-6), name
    assert layer.dim is not None and layer.rotary_dim is not None
    generator = torch.Generator().manual_seed(len(positions))
    tolerance = _tolerance(positions, ours.inv_freq)
    checked = 0
    # the head as posenc reads it; then only its rotated part (models that slice q before rotating)
    for width in dict.fromkeys((layer.dim, layer.rotary_dim)):
        q, k = (torch.randn(1, 2, positions.numel(), width, dtype=torch.float64, generator=generator) for _ in "qk")
        try:
            their_q, their_k = ref.rotate(q, k, positions, layer_type)
        except AssertionError:
            continue
        if their_q.shape != q.shape:
            continue
        partial = layer.rotary_dim if width != layer.rotary_dim else None
        module = RotaryEmbedding(**{**layer.rotary_kwargs(), "dim": width, "rotary_dim": partial})
        our_q, our_k = module(q, k, positions)
        if not torch.allclose(our_q, their_q.double(), atol=tolerance, rtol=0):
            # DeepSeek's interleaved branch writes the rotated pairs back in the half order
            inverse = torch.argsort(layout_permutation(width, rotary_dim=partial))
            our_q, our_k = our_q[..., inverse], our_k[..., inverse]
        torch.testing.assert_close(our_q, their_q.double(), atol=tolerance, rtol=0,
                                   msg=lambda m: f"{name}: rotated q differs: {m}")
        torch.testing.assert_close(our_k, their_k.double(), atol=tolerance, rtol=0,
                                   msg=lambda m: f"{name}: rotated k differs: {m}")
        checked += 1
    assert checked, f"{name}: transformers' {ref.function.__name__} could not be called on a probe"


def check_outside(ref: Reference, rope: ConfigRope, positions: torch.Tensor) -> None:
    """What acts outside the rotation, against transformers' own code for it."""
    for name, layer in rope.layers.items():
        if layer.temperature and layer.temperature["rule"] == "llama_4_scaling_beta":
            scale = ref.module.get_llama_4_attn_scale(positions[None, :].double(),
                                                      ref.text.rope_parameters.get("llama_4_scaling_beta"),
                                                      ref.text.rope_parameters.get("original_max_position_embeddings"))
            ours = torch.tensor([query_temperature(layer.temperature, int(p)) for p in positions], dtype=torch.float64)
            torch.testing.assert_close(ours, scale.flatten().double(), rtol=1e-12, atol=0)
        if layer.temperature and layer.temperature["rule"] == "llama4_nope_tuning":
            assert ref.text.attn_temperature_tuning
            assert (layer.temperature["floor_scale"], layer.temperature["attn_scale"]) == (
                ref.text.floor_scale, ref.text.attn_scale), name
        if hasattr(ref.module, "yarn_apply_mscale") and layer.rotates:
            expected = ref.module.yarn_apply_mscale(ref.text.rope_parameters, 1.0)
            assert math.isclose(layer.softmax_scale, expected, rel_tol=1e-12), (name, layer.softmax_scale, expected)


def check_pattern(rope: ConfigRope, text: Any) -> None:
    """Layer kinds against transformers' config: layer types, and NoPE layers where it flags them."""
    types = getattr(text, "layer_types", None)
    # a config object keeps any key it is given: no_rope_layers counts where the model's code reads it
    reads_flags = "no_rope_layers" in inspect.getsource(derive._module(text.model_type))
    flags = getattr(text, "no_rope_layers", None) if reads_flags else None
    for name, layer in rope.layers.items():
        for index in layer.layers:
            if types:
                assert name.removesuffix(":nope") == types[index], (name, index, types[index])
            if flags is not None and layer.rotates is not None and not name.startswith("linear"):
                assert bool(flags[index]) == layer.rotates, (name, index)


def check_config(config: Mapping[str, Any] | Any, positions: torch.Tensor | None = None,
                 layout: str | None = None) -> ConfigRope:
    """Everything above, for one config (a dict, or a transformers config object), read with
    ``layout`` where given (a model type whose layout posenc does not derive)."""
    text = config if not isinstance(config, Mapping) else transformers_config(config)
    rope = read_config(config, layout=layout)
    ref = Reference(text)
    if positions is None:
        trained = rope.original_max_position_embeddings or rope.max_position_embeddings or 4096
        positions = torch.tensor(sorted({0, 1, 2, 7, trained - 1, trained, trained + 1, 2 * trained + 3,
                                         4 * trained + 7}))
    rotating = [(name, layer) for name, layer in rope.layers.items() if layer.rotates]
    if not rotating:  # then transformers' config must have no attention layer either
        kinds = set(getattr(text, "layer_types", None) or ())
        assert kinds and not kinds & set(derive.ATTENTION_LAYER_TYPES), f"no layer rotates, but layers {kinds}"
    for name, layer in rotating:
        check_layer(ref, layer, name, positions)
    check_outside(ref, rope, positions)
    check_pattern(rope, text)
    return rope
