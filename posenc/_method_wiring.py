"""The position method's side of `posenc.model.TinyTransformer`.

`MethodWiring` builds the module of the method's place (the row of
`posenc.methods.METHODS` the model's ``position`` names) and one RoPE module
per per-layer base, checks and draws randomized positions, and hands each
layer the rotation and the inputs its plan asks for. The model itself
(`posenc.model`) holds the blocks, the call and the public methods.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor, nn

from posenc._cache_layers import check_unbroken_cache
from posenc._checks import MAX_POSITION_ID, check_elements, check_int
from posenc.alibi import AlibiBias
from posenc.embedding import PositionalEmbedding
from posenc.fire import FireBias
from posenc.inference import StepPlan
from posenc.kerple import KerpleBias
from posenc.layer_hooks import (
    CallInputs,
    LayerInputs,
    RotationModule,
    _layer_inputs,
)
from posenc.layer_plan import LayerPlan
from posenc.methods import METHODS, RANDOMIZED_METHODS
from posenc.pope import PolarEmbedding
from posenc.randomized import randomized_positions
from posenc.relative import T5RelativeBias
from posenc.rope import RotaryEmbedding
from posenc.stick_breaking import StickBreaking
from posenc.xpos import XPos


class MethodWiring(nn.Module):
    """The base of `posenc.model.TinyTransformer`: where its method sits."""

    # The sizes the builders of METHODS read, and the module of each place
    # (one of them is set, by METHODS; the others stay None or empty).
    vocab_size: int
    dim: int
    num_heads: int
    head_dim: int
    num_layers: int
    max_len: int | None
    rotary: RotaryEmbedding | None
    xpos: XPos | None
    alibi: AlibiBias | None
    relative_bias: T5RelativeBias | None
    learned_bias: KerpleBias | FireBias | None
    cope: nn.ModuleList
    content: nn.ModuleList
    weighting: StickBreaking | None
    pope: PolarEmbedding | None
    # what the model sets before it builds its method
    position: str
    randomized_max_len: int | None
    layer_plans: tuple[LayerPlan, ...]

    def _build_method(self) -> None:
        """The embedding, the module of the method's place, and one RoPE
        module per per-layer base."""
        method = METHODS[self.position]
        build = method.build
        self.embedding = (build(self) if build and method.place == "embedding"
                          else nn.Embedding(self.vocab_size, self.dim))
        limit = self._position_limit()
        if (self.randomized_max_len is not None and limit is not None
                and limit < self.randomized_max_len):
            raise ValueError(
                f"randomized_max_len={self.randomized_max_len} needs a "
                f"{self.position} table of at least as many rows, got "
                f"max_len={limit}")
        # every place exists: None, or an empty list of per-layer modules
        for other in METHODS.values():
            if other.attribute is not None and other.place != "embedding":
                setattr(self, other.attribute,
                        nn.ModuleList() if other.place in ("logits", "content")
                        else None)
        if build and method.attribute and method.place != "embedding":
            setattr(self, method.attribute, build(self))
        # FoX with RoPE: the gates inside attention, RoPE on q and k as well
        if method.rope:
            self.rotary = RotaryEmbedding(self.head_dim)
        rotations = {plan.rotation_key: plan for plan in self.layer_plans
                     if plan.rotation_key is not None}
        self.layer_rotaries = nn.ModuleDict({key: RotaryEmbedding(
            self.head_dim,
            base=10000.0 if plan.rope_base is None else plan.rope_base,
            scaling=(None if plan.rope_scaling is None
                     else plan.rope_scaling.to_dict()))
            for key, plan in sorted(
                rotations.items(),
                key=lambda item: (item[1].rope_base or 10000.0, item[0]))})

    def _at(self, place: str) -> Any:
        """The module of the method if it acts at ``place``, else None."""
        method = METHODS[self.position]
        if method.place == place and method.attribute:
            return getattr(self, method.attribute)
        return None

    def _position_limit(self) -> int | None:
        if isinstance(self.embedding, PositionalEmbedding):
            return self.embedding.position_limit
        return None

    def _embed(self, tokens: Tensor, step: StepPlan, *,
               default: bool) -> Tensor:
        """Token vectors, plus the position rows of an embedding method."""
        # a learned table refuses sequences longer than it
        limit = self._position_limit()
        if default and limit is not None and tokens.shape[1] > limit:
            raise ValueError(f"tokens has {tokens.shape[1]} positions but the "
                             f"{self.position} table has max_len={limit}")
        if default:
            # token + rows 0 .. seq-1, or token only
            return self.embedding(tokens)
        if isinstance(self.embedding, PositionalEmbedding):
            # token + the row of each position
            return self.embedding(
                tokens, positions=step.query_positions.to(tokens.device))
        return self.embedding(tokens)

    def _check_randomized(self, value: object) -> int | None:
        if value is None:
            return None
        if not METHODS[self.position].takes_positions:
            names = (", ".join(repr(name) for name in RANDOMIZED_METHODS[:-1])
                     + f" or {RANDOMIZED_METHODS[-1]!r}")
            raise ValueError(
                f"randomized_max_len needs position={names} (a method that "
                f"takes positions), got position={self.position!r}")
        return check_int("randomized_max_len", value, minimum=1,
                         maximum=MAX_POSITION_ID)

    def _random_positions(self, tokens: Tensor) -> Tensor:
        """One sorted random subset of ``0 .. randomized_max_len - 1`` per row
        (training only)."""
        length, (batch, seq) = self.randomized_max_len, tokens.shape
        assert length is not None
        if seq > length:
            raise ValueError(
                f"tokens has {seq} positions but randomized_max_len={length}: "
                f"each row draws distinct positions from 0 .. {length - 1}")
        check_elements("the random permutations (batch x randomized_max_len)",
                       batch, length)
        return torch.stack([randomized_positions(seq, length)
                            for _ in range(batch)]).to(tokens.device)

    def _rotation(self, layer: int) -> RotationModule | None:
        plan, rotation = self.layer_plans[layer], self._at("rotation")
        if rotation is None and METHODS[self.position].rope:
            rotation = self.rotary
        if rotation is None or not plan.uses_position:
            return None
        if plan.rotation_key is not None:  # a base of its own
            module = self.layer_rotaries[plan.rotation_key]
            assert isinstance(module, RotaryEmbedding)
            return module
        return rotation

    def _layer_inputs(self, layer: int, plan: LayerPlan, call: CallInputs,
                      rotation: RotationModule | None) -> LayerInputs:
        """The layer's inputs; a method inside attention adds its module:
        stick-breaking's ``weighting``, or FoX's and PaTH's ``content``, whose
        cached keys carry each token's gate or transform."""
        cope = self._at("logits")  # CoPE: one module per layer
        inputs = _layer_inputs(plan, layer, call, rotation,
                               None if cope is None else cope[layer])
        place = METHODS[self.position].place
        if place == "weights" and plan.uses_position:
            inputs.weighting = self.weighting
        elif place == "content" and plan.uses_position:
            if call.cache is not None:
                check_unbroken_cache(call.cache, layer, self.position)
            # a ForgetGate or HouseholderPath
            inputs.content = self.content[layer]  # type: ignore[assignment]
        return inputs
