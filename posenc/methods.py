"""Where each position method acts in `posenc.model.TinyTransformer`, and how the model builds it.

Position information enters a transformer in one of a few places: on the input embeddings, as an
additive bias on the attention logits, by turning queries and keys before their dot product, as a
term computed from the logits themselves, from each token's own input inside attention (FoX's
forget gates, PaTH's transforms), or in place of the softmax (stick-breaking). `METHODS` has one row per method: its place, the
model attribute that holds its module, and how to build that module from the model's sizes. The
model looks its method up here and nowhere else, so a new method is one more row. The methods
of one place answer the same calls: `posenc.attention.PositionBias` (``bias``),
`posenc.attention.Rotation` (``rotate_queries``, ``rotate_keys``),
`posenc.embedding.PositionTable` (``rows``); the data-dependent ones ``join`` and ``scores``
(`posenc.forgetting.ForgetGate`, `posenc.path_attention.HouseholderPath`, one per layer) or
``weights`` (`posenc.stick_breaking.StickBreaking`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from torch import nn

from posenc._checks import MAX_POSITION_ID, check_elements, check_int
from posenc.alibi import AlibiBias
from posenc.cope import CoPE
from posenc.embedding import PositionalEmbedding
from posenc.fire import FireBias
from posenc.forgetting import ForgetGate
from posenc.kerple import KerpleBias
from posenc.path_attention import HouseholderPath
from posenc.pope import PolarEmbedding
from posenc.relative import T5RelativeBias
from posenc.rope import RotaryEmbedding
from posenc.stick_breaking import StickBreaking
from posenc.xpos import XPos

__all__ = ["COPE_MAX_POSITION", "METHODS", "PLACES", "POSITION_METHODS", "RANDOMIZED_METHODS", "Method", "Sizes",
           "xpos_centre"]

#: Where a method can act.
PLACES = ("none", "embedding", "bias", "rotation", "logits", "content", "weights")


class Sizes(Protocol):
    """The sizes of a model that the builders read."""

    vocab_size: int
    dim: int
    num_heads: int
    head_dim: int
    num_layers: int
    max_len: int | None


@dataclass(frozen=True)
class Method:
    """Where a position method acts, and how the model builds it.

    Attributes:
        place: one of `PLACES`.
        attribute: the model attribute holding its module (its parameters' ``state_dict`` prefix).
        build: makes the module from the model's `Sizes`.
        takes_positions: can be trained on randomized positions (it reads any position given).
        pairs: needs an even head width (it turns pairs of features).
        per_layer: takes a plan per layer (`posenc.layer_plan`): layers without it, a base per layer.
        rope: also turns q and k with RoPE (FoX with RoPE), in the model's ``rotary``.
    """

    place: str
    attribute: str | None = None
    build: Callable[[Sizes], nn.Module] | None = None
    takes_positions: bool = False
    pairs: bool = False
    per_layer: bool = False
    rope: bool = False


#: CoPE's number of position embeddings per layer when ``max_len`` is not given.
COPE_MAX_POSITION = 64


def _cope_layers(model: Sizes) -> nn.ModuleList:
    rows = model.max_len or COPE_MAX_POSITION
    check_elements("CoPE's position embeddings (num_layers x head_dim x max_len)",
                   model.num_layers, model.head_dim, rows)
    return nn.ModuleList(CoPE(model.head_dim, max_position=rows) for _ in range(model.num_layers))


def xpos_centre(max_len: int | None) -> float:
    """xPos's fixed centre in a model: ``ceil(max_len / 2)``, or 0 (a constant, so cached keys stay valid)."""
    if max_len is None:
        return 0.0
    return float(-(-check_int("max_len", max_len, minimum=1, maximum=MAX_POSITION_ID) // 2))


def _per_layer_modules(kind: type[ForgetGate | HouseholderPath]) -> Callable[[Sizes], nn.Module]:
    """One module of ``kind`` per layer (FoX's gates, PaTH's transforms are computed in every layer)."""
    def build(model: Sizes) -> nn.Module:
        return nn.ModuleList(kind(model.dim, model.num_heads, model.head_dim) for _ in range(model.num_layers))
    return build


# --8<-- [start:methods]
#: Every ``position`` of `posenc.model.TinyTransformer`: where it acts and
#: how the model builds it.
METHODS: dict[str, Method] = {
    "none": Method("none"),
    "sinusoidal": Method("embedding", "embedding",
                         lambda m: PositionalEmbedding(
                             m.vocab_size, m.dim, kind="sinusoidal",
                             max_len=m.max_len),
                         takes_positions=True),
    "learned": Method("embedding", "embedding",
                      lambda m: PositionalEmbedding(
                          m.vocab_size, m.dim, kind="learned",
                          max_len=m.max_len),
                      takes_positions=True),
    # rotates q and k in every layer
    "rope": Method("rotation", "rotary",
                   lambda m: RotaryEmbedding(m.head_dim),
                   takes_positions=True, pairs=True, per_layer=True),
    # fixed slopes: -m_h |i - j|
    "alibi": Method("bias", "alibi", lambda m: AlibiBias(m.num_heads)),
    # one scalar per (bucket, head), shared by the layers; causal buckets, 32
    # of them up to 128
    "t5": Method("bias", "relative_bias",
                 lambda m: T5RelativeBias(m.num_heads, bidirectional=False)),
    # RoPE with a decay about a fixed centre
    "xpos": Method("rotation", "xpos",
                   lambda m: XPos(m.head_dim, centre=xpos_centre(m.max_len)),
                   pairs=True),
    # -r1 log(1 + r2 |i - j|), shared by the layers
    "kerple": Method("bias", "learned_bias",
                     lambda m: KerpleBias(m.num_heads)),
    # an MLP of the normalised distance, shared by the layers
    "fire": Method("bias", "learned_bias",
                   lambda m: FireBias(m.num_heads, max_len=m.max_len)),
    # position embeddings per layer, shared by its heads
    "cope": Method("logits", "cope", _cope_layers),
    # a forget gate per head and token: the logit gains the log gates between
    # key and query (Lin et al.)
    "fox": Method("content", "content", _per_layer_modules(ForgetGate)),
    "fox_rope": Method("content", "content", _per_layer_modules(ForgetGate),
                       pairs=True, rope=True),
    # sigmoid shares from the nearest key back, in place of the softmax (Tan
    # et al.)
    "stick_breaking": Method("weights", "weighting",
                             lambda m: StickBreaking()),
    # q . H_i ... H_{j+1} k: Householder-like transforms of the tokens in
    # between (Yang et al.)
    "path": Method("content", "content", _per_layer_modules(HouseholderPath)),
    # magnitudes from content, angles from position (Gopalakrishnan et al.)
    "pope": Method("rotation", "pope",
                   lambda m: PolarEmbedding(m.head_dim, m.num_heads),
                   takes_positions=True),
}
# --8<-- [end:methods]
#: The ``position`` values of `posenc.model.TinyTransformer`.
POSITION_METHODS = tuple(METHODS)
#: The methods that ``TinyTransformer(randomized_max_len=...)`` can train on random positions.
RANDOMIZED_METHODS = tuple(name for name, method in METHODS.items() if method.takes_positions)
