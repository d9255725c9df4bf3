"""A tiny decoder-only transformer that can use every position method here.

The table `posenc.methods.METHODS` says where each method acts and how the
model builds it: on the embeddings (sinusoidal, learned), as an additive bias
on the logits (ALiBi, T5, KERPLE, FIRE), on queries and keys (RoPE, xPos,
PoPE), as a term computed from the logits (CoPE), from each token's input
inside attention (FoX, FoX with RoPE, PaTH) or in place of the softmax
(stick-breaking); ``"none"`` has no position method at all. The per-layer plan
(`posenc.layer_plan`) says which layers use it. The design notes are in the
chapter "A tiny transformer".
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor, nn

from posenc._bias import pair_shape
from posenc._checks import (
    MAX_POSITION_ID,
    check_choice,
    check_elements,
    check_int,
    check_position_ids,
    check_size_int,
    check_token_ids,
)
from posenc._method_wiring import MethodWiring
from posenc.attention import SelfAttention
from posenc.embedding import EMBEDDING_KINDS, PositionalEmbedding
from posenc.inference import KVCache, StepPlan, plan_step, positions_from_mask
from posenc.layer_hooks import LayerInputs, _attend_layer, _call_inputs
from posenc.layer_plan import LAYER_POSITION_METHODS, LayerPlan
from posenc.layer_plan import (
    layer_plans as _plans,  # the keyword layer_plans= would shadow it
)
from posenc.methods import (
    COPE_MAX_POSITION,
    METHODS,
    POSITION_METHODS,
    RANDOMIZED_METHODS,
    Method,
    xpos_centre,
)
from posenc.rope import RotaryEmbedding

__all__ = ["COPE_MAX_POSITION", "EMBEDDING_KINDS", "LAYER_POSITION_METHODS",
           "METHODS", "POSITION_METHODS", "RANDOMIZED_METHODS", "Method",
           "PositionalEmbedding", "TinyTransformer"]

# --8<-- [start:block]
class _Block(nn.Module):
    """One pre-norm decoder block.

    ``x + attention(norm(x))``, then ``x + mlp(norm(x))``.
    """

    def __init__(self, dim: int, num_heads: int, hidden: int, *,
                 sinks: bool = False) -> None:
        super().__init__()
        self.attention_norm = nn.LayerNorm(dim)
        self.attention = SelfAttention(dim, num_heads, sinks=sinks)
        self.mlp_norm = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(),
                                 nn.Linear(hidden, dim))

    def forward(self, x: Tensor, inputs: LayerInputs) -> tuple[Tensor, Tensor]:
        # x: (batch, seq, dim); inputs: this layer's tables, mask, bias and
        # cache (posenc.layer_hooks)
        attended, weights = _attend_layer(self.attention,
                                          self.attention_norm(x), inputs)
        x = x + attended
        return x + self.mlp(self.mlp_norm(x)), weights
# --8<-- [end:block]


class TinyTransformer(MethodWiring):
    """A small decoder-only (GPT-style) language model: ids to logits.

    ``[batch, seq]`` token ids give ``[batch, seq, vocab]`` logits.

    Args:
        vocab_size: number of token ids.
        dim: model width.
        num_heads: attention heads per layer (dividing ``dim``; an even head
            width for ``"rope"``, ``"xpos"``).
        num_layers: number of pre-norm decoder blocks.
        position: where position information comes from, one of
            `POSITION_METHODS` (see `METHODS`).
        max_len: rows of the learned table (required for ``"learned"``, which
            refuses positions ``>= max_len``); the precomputed rows of
            ``"sinusoidal"``; FIRE's initial threshold L (default 512); CoPE's
            position embeddings per layer (default `COPE_MAX_POSITION`);
            xPos's fixed centre ``ceil(max_len / 2)`` (default 0). Ignored by
            the others.
        mlp_ratio: width of the feed-forward layer, a multiple of ``dim``.
        layer_plans: one `posenc.layer_plan.LayerPlan` per layer: its
            positions (per layer only for ``position="rope"``) and, for any
            method, its window or chunk, learned sinks, q/k norm and query
            temperature (`posenc.designs` builds today's patterns); or the
            shorthands:
        layer_positions: ``"rope"`` or ``"none"`` per layer (e.g. a NoPE layer
            after three RoPE ones).
        layer_rope_bases: the RoPE base of each layer (e.g. small in local
            layers, large in global ones).
        randomized_max_len: for ``"sinusoidal"``, ``"learned"`` and
            ``"rope"``: in training mode, a call without ``positions`` and
            ``cache`` numbers each row with a sorted random subset of
            ``0 .. randomized_max_len - 1`` (Ruoss et al., 2023), drawn from
            torch's global generator; evaluation mode keeps ``0 .. seq-1``.

    ``forward(tokens, *, positions=None, attention_mask=None, cache=None)``:
    ``positions`` ``[batch, seq]`` integer ids (default: continue from the
    cache, else ``0 .. seq-1``); ``attention_mask`` booleans, True = attend,
    ``[batch, k_len]`` for padding or ``[batch, seq, k_len]`` for any pattern
    (``k_len`` = cached entries + seq), combined with the causal mask;
    ``cache`` a `posenc.inference.KVCache`, updated in place.

    Examples:
        >>> model = TinyTransformer(50, dim=16, num_heads=2, num_layers=1,
        ...                         position="alibi")
        >>> model(torch.tensor([[1, 2, 3, 4]])).shape
        torch.Size([1, 4, 50])
        >>> cache = KVCache()
        >>> # positions 0, 1, 2, then position 3, from the cache
        >>> first = model(torch.tensor([[1, 2, 3]]), cache=cache)
        >>> last = model(torch.tensor([[4]]), cache=cache)
        >>> full = model(torch.tensor([[1, 2, 3, 4]]))
        >>> torch.allclose(last[0, 0], full[0, 3], atol=1e-5)
        True
    """

    def __init__(self, vocab_size: int, dim: int, num_heads: int,
                 num_layers: int, *, position: str,
                 max_len: int | None = None, mlp_ratio: int = 4,
                 layer_positions: Sequence[str] | None = None,
                 layer_rope_bases: Sequence[float] | None = None,
                 randomized_max_len: int | None = None,
                 layer_plans: Sequence[LayerPlan] | None = None) -> None:
        super().__init__()
        self.vocab_size = check_size_int("vocab_size", vocab_size)
        self.dim = check_size_int("dim", dim)
        self.num_heads = check_size_int("num_heads", num_heads)
        self.num_layers = check_size_int("num_layers", num_layers)
        self.position = check_choice("position", position, POSITION_METHODS)
        mlp_ratio = check_size_int("mlp_ratio", mlp_ratio)
        check_elements("the token table (vocab_size x dim)",
                       self.vocab_size, self.dim)
        check_elements(
            "the feed-forward weights (num_layers x dim x mlp_ratio * dim)",
            self.num_layers, self.dim, mlp_ratio * self.dim)
        if self.dim % self.num_heads:
            raise ValueError(f"dim must be divisible by num_heads, got "
                             f"dim={dim}, num_heads={num_heads}")
        self.head_dim = self.dim // self.num_heads
        if self.method.pairs and self.head_dim % 2:
            raise ValueError(f"position={position!r} needs an even head width "
                             f"dim // num_heads, got {self.head_dim}")
        self.max_len = None if max_len is None else check_int(
            "max_len", max_len, minimum=1, maximum=MAX_POSITION_ID)
        self.randomized_max_len = self._check_randomized(randomized_max_len)
        self.layer_plans = _plans(self.position, self.num_layers,
                                  layer_plans=layer_plans,
                                  layer_positions=layer_positions,
                                  layer_rope_bases=layer_rope_bases)
        # each layer's window or chunk, for the cache
        self._spans = [plan.span for plan in self.layer_plans]
        self._build_method()
        self.blocks = nn.ModuleList(
            _Block(self.dim, self.num_heads, mlp_ratio * self.dim,
                   sinks=plan.sinks)
            for plan in self.layer_plans)
        self.final_norm = nn.LayerNorm(self.dim)
        self.head = nn.Linear(self.dim, self.vocab_size, bias=False)

    @property
    def method(self) -> Method:
        """Where the model's method acts and how it was built: its row of
        `METHODS`."""
        return METHODS[self.position]

    @property
    def xpos_centre(self) -> float:
        """The fixed centre of xPos's decay, ``ceil(max_len / 2)`` or 0 (the
        centre cancels in q . k)."""
        if self.xpos is not None:
            return self.xpos.centre
        return xpos_centre(self.max_len)

    def forward(self, tokens: Tensor, *, positions: Tensor | None = None,
                attention_mask: Tensor | None = None,
                cache: KVCache | None = None) -> Tensor:
        tokens = check_token_ids("tokens", tokens, self.vocab_size)
        return self._run(tokens, positions=positions,
                         attention_mask=attention_mask, cache=cache)[0]

    # --8<-- [start:forward]
    def _run(self, tokens: Tensor, *, positions: Tensor | None = None,
             attention_mask: Tensor | None = None,
             cache: KVCache | None = None) -> tuple[Tensor, list[Tensor]]:
        # tokens [batch, seq], checked
        if (positions is None and cache is None and self.training
                and self.randomized_max_len):
            # Ruoss et al. (2023): random sorted positions
            positions = self._random_positions(tokens)
        # the positions of this call's queries and of every key (cached ones
        # first), and the mask
        step = plan_step(cache, owner=self, num_layers=self.num_layers,
                         batch=tokens.shape[0], q_len=tokens.shape[1],
                         positions=positions, device=tokens.device,
                         attention_mask=attention_mask)
        # [batch, seq, dim]
        x = self._embed(tokens, step,
                        default=positions is None and cache is None)
        # [batch or 1, heads, seq, k_len], or None
        bias = self._step_bias(step, x)
        rotations = [self._rotation(layer) for layer in range(self.num_layers)]
        # what every layer shares, computed once: positions, mask, bias,
        # each rotation's tables
        call = _call_inputs(step, bias, cache, x.device, self.layer_plans,
                            [r for r, plan in zip(rotations, self.layer_plans)
                             if plan.pair_offsets is None], x.dtype)
        maps = []
        # each layer by its plan
        for layer, (plan, block) in enumerate(zip(self.layer_plans,
                                                  self.blocks)):
            x, weights = block(x, self._layer_inputs(layer, plan, call,
                                                     rotations[layer]))
            maps.append(weights)
        if cache is not None:
            cache.commit(step, owner=self, spans=self._spans)
        return self.head(self.final_norm(x)), maps  # [batch, seq, vocab]
    # --8<-- [end:forward]

    # --8<-- [start:position-bias]
    def _step_bias(self, step: StepPlan, x: Tensor) -> Tensor | None:
        """The bias of this call, from the positions of its queries and of
        every key."""
        # [batch, q_len], [batch, k_len]
        query_ids, key_ids = step.query_positions, step.key_positions
        if (bool((query_ids == query_ids[:1]).all())
                and bool((key_ids == key_ids[:1]).all())):
            # one bias for every row (no GPU sync: CPU)
            query_ids, key_ids = query_ids[:1], key_ids[:1]
        bias = self.position_bias(query_ids.to(x.device),
                                  key_ids.to(x.device))
        if bias is None:
            return None
        # at least float32
        return bias.to(x.dtype if x.dtype == torch.float64 else torch.float32)
    # --8<-- [end:position-bias]

    def layer_rotary(self, layer: int) -> RotaryEmbedding | None:
        """The RoPE module of layer ``layer`` (None if that layer has no
        RoPE)."""
        rotation = self._rotation(check_int("layer", layer, minimum=0,
                                            maximum=self.num_layers - 1))
        return rotation if isinstance(rotation, RotaryEmbedding) else None

    def position_bias(self, query_positions: Tensor,
                      key_positions: Tensor) -> Tensor | None:
        """The logit bias ``[batch, heads, q_len, k_len]``, or ``None``.

        ALiBi, T5, KERPLE and FIRE have one. Computed from the positions
        themselves (``[batch, q_len]`` and ``[batch, k_len]`` integer ids), so
        it is right for cached keys, padded rows and packed documents.
        """
        q_ids = check_position_ids("query_positions", query_positions, ndim=2)
        k_ids = check_position_ids("key_positions", key_positions, ndim=2)
        batch, q_len, k_len = pair_shape("query_positions", q_ids,
                                         "key_positions", k_ids)
        check_elements("the bias (batch x heads x q_len x k_len)",
                       batch, self.num_heads, q_len, k_len)
        method = self._at("bias")
        return None if method is None else method.bias(q_ids, k_ids)

    def attention_bias(self, seq_len: int) -> Tensor | None:
        """The logit bias ``[heads, seq, seq]`` (ALiBi, T5, KERPLE, FIRE)."""
        seq_len = check_int("seq_len", seq_len, minimum=0,
                            maximum=MAX_POSITION_ID)
        positions = torch.arange(seq_len)[None]
        bias = self.position_bias(positions, positions)
        return None if bias is None else bias[0]

    @torch.no_grad()
    def generate(self, tokens: Tensor, max_new_tokens: int, *,
                 attention_mask: Tensor | None = None,
                 window: int | None = None, sinks: int = 0) -> Tensor:
        """Greedy decoding with a `posenc.inference.KVCache`:
        ``[batch, seq + max_new_tokens]`` ids.

        Args:
            tokens: the prompts ``[batch, seq]``, left-padded if their lengths
                differ.
            max_new_tokens: how many tokens to append to each row.
            attention_mask: ``[batch, seq]`` booleans, False on the padding
                (positions then come from
                `posenc.inference.positions_from_mask`).
            window: None, or sliding-window attention over this many recent
                tokens.
            sinks: with a window, the number of first tokens kept as attention
                sinks.

        Examples:
            >>> _ = torch.manual_seed(0)
            >>> model = TinyTransformer(10, dim=8, num_heads=2, num_layers=1,
            ...                         position="rope")
            >>> model.generate(torch.tensor([[1, 2, 3]]), 4).shape
            torch.Size([1, 7])
        """
        tokens = check_token_ids("tokens", tokens, self.vocab_size)
        max_new_tokens = check_int("max_new_tokens", max_new_tokens,
                                   minimum=0, maximum=MAX_POSITION_ID)
        cache = KVCache(window=window, sinks=sinks)
        positions = None
        if attention_mask is not None:
            positions = positions_from_mask(attention_mask)
            if tuple(attention_mask.shape) != tuple(tokens.shape):
                raise ValueError(
                    f"attention_mask must have the shape of tokens "
                    f"{tuple(tokens.shape)}, "
                    f"got shape {tuple(attention_mask.shape)}")
        out = [tokens]
        if max_new_tokens == 0:
            return tokens
        logits = self(tokens, positions=positions,
                      attention_mask=attention_mask, cache=cache)
        for step in range(max_new_tokens):
            # greedy
            next_token = logits[:, -1].argmax(dim=-1, keepdim=True)
            out.append(next_token)
            # the cache remembers the padding and the positions
            if step + 1 < max_new_tokens:
                logits = self(next_token, cache=cache)
        return torch.cat(out, dim=1)

    def attention_maps(self, tokens: Tensor) -> list[Tensor]:
        """The attention weights of every layer, each ``[batch, heads, seq,
        seq]``, for inspection.

        Examples:
            >>> model = TinyTransformer(10, dim=8, num_heads=2, num_layers=3,
            ...                         position="none")
            >>> maps = model.attention_maps(torch.tensor([[4, 4, 4]]))
            >>> len(maps), tuple(maps[0].shape)
            (3, (1, 2, 3, 3))
            >>> first_layer = maps[0]
            >>> # one token repeated, no position: uniform over the visible keys
            >>> first_layer[0, 0]
            tensor([[1.0000, 0.0000, 0.0000],
                    [0.5000, 0.5000, 0.0000],
                    [0.3333, 0.3333, 0.3333]])
        """
        with torch.no_grad():
            _, maps = self._run(check_token_ids("tokens", tokens,
                                                self.vocab_size))
        return maps
