"""A trained RoPE model scored with a training-free method of `posenc.extension`.

`RemappedRoPE` wraps a RoPE `posenc.model.TinyTransformer` and runs it with RoPE's offsets
replaced, pair by pair, by a method's offset matrix (ReRoPE, Self-Extend, Dual Chunk Attention,
STRING), plus the query scale the authors' code applies. Nothing is trained or changed in the
wrapped model.

How it reaches the attention: `TinyTransformer.forward` takes no hooks, so the wrapper walks the
model's own modules (its embedding, each block's norms, attention and MLP, the final norm and
head) and calls each block's `posenc.attention.SelfAttention` with two of its public hooks and
no rotation: ``kv_hook`` keeps the block's keys, and ``logit_hook`` returns the exact logits of
`posenc.extension.rope_logits` minus the unrotated ones attention computed, so that their sum
is the method's logits (to within a rounding of the unrotated logits). A layer without RoPE
(a NoPE layer of a per-layer plan) runs as it is. With RoPE's own offsets ``i - j`` the wrapper
gives the model's own logits (checked in the tests).

`REMAPS` is the table of methods with the settings the studies use, each a function of the
scored length n and the training length L; a new method is one row.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import cast

import torch
from torch import Tensor, nn

from posenc._checks import check_choice, check_int
from posenc.attention import SelfAttention
from posenc.extension import (
    dual_chunk_offsets,
    log_length_scale,
    relative_offsets,
    rerope_offsets,
    rope_logits,
    self_extend_offsets,
    string_offsets,
)
from posenc.model import TinyTransformer

#: Offsets ``[..., q_len, k_len]`` of query and key positions ``[batch, seq]``.
OffsetRule = Callable[[Tensor, Tensor], Tensor]
#: The factor each query is multiplied by, ``[batch, seq]``, from its positions.
QueryScale = Callable[[Tensor], Tensor]


class RemappedRoPE(nn.Module):
    """``model`` (RoPE) scored with the offsets ``offsets(positions, positions)`` and queries
    multiplied by ``query_scale(positions)``; ``forward(tokens, *, positions=None)`` gives logits."""

    randomized_max_len = None  # scored on the positions 0 .. n-1, like the wrapped model

    def __init__(self, model: TinyTransformer, offsets: OffsetRule, query_scale: QueryScale | None = None) -> None:
        super().__init__()
        if not isinstance(model, TinyTransformer) or model.rotary is None:
            raise ValueError("model must be a TinyTransformer with position='rope'")
        self.model = model
        self.offsets = offsets
        self.query_scale = query_scale

    def forward(self, tokens: Tensor, *, positions: Tensor | None = None) -> Tensor:
        model = self.model
        ids = torch.arange(tokens.shape[1])[None] if positions is None else positions.cpu()  # [batch or 1, seq]
        offsets = self.offsets(ids, ids)[:, None].to(tokens.device)  # [batch or 1, 1 (heads), seq, seq]
        scale = None if self.query_scale is None else self.query_scale(ids)[:, None, :, None].to(tokens.device)
        x = model.embedding(tokens)  # [batch, seq, dim]: RoPE adds nothing to the embeddings
        for layer, block in enumerate(model.blocks):
            attention, attention_norm, mlp, mlp_norm = (
                cast(nn.Module, getattr(block, name)) for name in ("attention", "attention_norm", "mlp", "mlp_norm"))
            assert isinstance(attention, SelfAttention)
            h = attention_norm(x)
            rotary = model.layer_rotary(layer)
            if rotary is None:  # a layer without positions
                attended, _ = attention(h, causal=True)
            else:
                attended = self._attend(attention, h, rotary.inv_freq, rotary.attention_scaling, offsets, scale)
            x = x + attended
            x = x + mlp(mlp_norm(x))
        return model.head(model.final_norm(x))

    @staticmethod
    def _attend(attention: SelfAttention, h: Tensor, inv_freq: Tensor, attention_scaling: float, offsets: Tensor,
                scale: Tensor | None) -> Tensor:
        kept: dict[str, Tensor] = {}

        def keep_keys(q: Tensor, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor, Tensor]:
            kept["k"] = k
            return q, k, v

        def method_logits(q: Tensor, unrotated: Tensor) -> Tensor:  # unrotated: q k^T / sqrt(d), no -inf
            queries = q if scale is None else q * scale.to(q.dtype)
            exact = rope_logits(queries, kept["k"].to(q.dtype), inv_freq, offsets, layout="half")
            return exact * (attention_scaling ** 2 / math.sqrt(q.shape[-1])) - unrotated

        attended, _ = attention(h, causal=True, kv_hook=keep_keys, logit_hook=method_logits)
        return attended


@dataclass(frozen=True)
class Remap:
    """A training-free method with the studies' settings at length n for a model trained on L."""

    offsets: Callable[[int, int], OffsetRule]  # (n, L) -> offset rule
    query_scale: Callable[[int, int], QueryScale | None] = lambda n, L: None
    settings: Callable[[int, int], dict[str, float]] = lambda n, L: {}


def self_extend_group(length: int, train_length: int, window: int) -> int:
    """The smallest group size G with ``window + (length - window) / G <= train_length / 2``.

    The LongLM README's rule is ``G (L - window) + window >= length`` with L the pretraining length
    (its section 3, which suggests (1/2 to 2/3) x L); this applies it to half of L, the lower end,
    so that only the better-trained half of the offsets is used, as the README suggests trying larger groups when large positions are poorly
    trained (a tiny model trained on L tokens meets offsets near L - 1 in few pairs)."""
    room = train_length / 2 - window
    if room <= 0:
        raise ValueError(f"window={window} must be below half the training length {train_length}")
    return max(1, math.ceil((length - window) / room))


#: STRING's attention factor on q and k (HKUNLP/STRING string_for_llama.py:739, :308-309).
STRING_FACTOR = 0.1 * math.log(2) + 1

REMAPS: dict[str, Remap] = {
    # ReRoPE (bojone/rerope): window L/4 (its README's w1024 for a 4k model), log-n query scale (patch line 56)
    "rerope": Remap(offsets=lambda n, L: partial(rerope_offsets, window=L // 4),
                    query_scale=lambda n, L: partial(log_length_scale, train_length=L),
                    settings=lambda n, L: {"window": L // 4}),
    # Leaky ReRoPE: the same, with offsets past the window growing 1 / s as fast (s = n / L, at least 1;
    # the patch fixes scaling_factor = 16 for 4k): the largest, w + (n - w) / s, ends a little past L
    "leaky-rerope": Remap(offsets=lambda n, L: partial(rerope_offsets, window=L // 4, factor=max(1.0, n / L)),
                          query_scale=lambda n, L: partial(log_length_scale, train_length=L),
                          settings=lambda n, L: {"window": L // 4, "factor": max(1.0, n / L)}),
    # Self-Extend (datamllab/LongLM): neighbour window L/4, the smallest group that fits the README's rule at L/2
    "self-extend": Remap(offsets=lambda n, L: partial(self_extend_offsets, window=L // 4,
                                                      group_size=self_extend_group(n, L, L // 4)),
                         settings=lambda n, L: {"window": L // 4, "group_size": self_extend_group(n, L, L // 4)}),
    # Dual Chunk Attention (HKUNLP/ChunkLlama): chunk_size 3L/4, local window L/8, its defaults
    "dual-chunk": Remap(offsets=lambda n, L: partial(dual_chunk_offsets, chunk_size=3 * L // 4,
                                                     local_window=L // 8),
                        settings=lambda n, L: {"chunk_size": 3 * L // 4, "local_window": L // 8}),
    # STRING (HKUNLP/STRING): shift 0.33 L and a small local window (L/16), with its attention factor
    "string": Remap(offsets=lambda n, L: partial(string_offsets, shift=int(0.33 * L), local_window=max(1, L // 16)),
                    query_scale=lambda n, L: lambda ids: torch.full(ids.shape, STRING_FACTOR ** 2, dtype=torch.float64),
                    settings=lambda n, L: {"shift": int(0.33 * L), "local_window": max(1, L // 16),
                                           "logit_factor": round(STRING_FACTOR ** 2, 6)}),
}


def remapped(model: TinyTransformer, method: str, length: int, train_length: int) -> RemappedRoPE:
    """``model`` scored at ``length`` with the method of `REMAPS` (``"rope"``: RoPE's own offsets)."""
    method = check_choice("method", method, ("rope", *REMAPS))
    length = check_int("length", length, minimum=1)
    train_length = check_int("train_length", train_length, minimum=2)
    if method == "rope":
        return RemappedRoPE(model, relative_offsets)
    remap = REMAPS[method]
    return RemappedRoPE(model, remap.offsets(length, train_length), remap.query_scale(length, train_length))
