"""A complete embedding layer and a tiny decoder-only transformer that can use every method here.

Position information enters a transformer in one of three places, and this module wires each
posenc method into its place without re-implementing any of them:

* on the input embeddings, added to the token vectors: ``"sinusoidal"``
  (`posenc.sinusoidal.SinusoidalPositionalEncoding`) and ``"learned"``
  (`posenc.learned.LearnedPositionalEmbedding`);
* on the attention logits, as an additive bias: ``"alibi"`` (`posenc.alibi.alibi_bias`),
  ``"t5"`` (`posenc.relative.T5RelativeBias`), ``"kerple"`` (`posenc.kerple.KerpleBias`) and
  ``"fire"`` (`posenc.fire.FireBias`);
* on queries and keys, before their dot product: ``"rope"``
  (`posenc.rope.RotaryEmbedding`) and ``"xpos"`` (`posenc.xpos.XPos`);
* on the logits, as a term computed from the logits themselves: ``"cope"``
  (`posenc.cope.CoPE`, one per layer);

and ``"none"`` uses no position method at all (only the causal mask tells positions apart).
``randomized_max_len`` trains sinusoidal, learned or RoPE models on random sorted positions
(`posenc.randomized.randomized_positions`).
"""

from __future__ import annotations


from collections.abc import Sequence

import torch
from torch import Tensor, nn

from posenc._checks import check_choice, check_elements, check_float, check_int, check_size_int, check_tensor
from posenc.alibi import alibi_slopes
from posenc.attention import KeyValueHook, LogitHook, QueryKeyTransform, SelfAttention
from posenc.cope import CoPE
from posenc.fire import FireBias
from posenc.inference import MAX_POSITION, KVCache, StepPlan, _check_position_ids, plan_step, positions_from_mask
from posenc.kerple import KerpleBias
from posenc.learned import LearnedPositionalEmbedding
from posenc.randomized import randomized_positions
from posenc.relative import T5RelativeBias, t5_relative_position_bucket
from posenc.rope import RotaryEmbedding
from posenc.sinusoidal import SinusoidalPositionalEncoding, sinusoidal_encoding
from posenc.xpos import XPos

#: The ``kind`` values of `PositionalEmbedding`: the methods that act on the embeddings.
EMBEDDING_KINDS = ("sinusoidal", "learned")
#: The ``position`` values of `TinyTransformer`.
POSITION_METHODS = ("none", "sinusoidal", "learned", "rope", "alibi", "t5", "xpos", "kerple", "fire", "cope")
#: The methods that ``TinyTransformer(randomized_max_len=...)`` can train on random positions.
RANDOMIZED_METHODS = ("sinusoidal", "learned", "rope")
#: CoPE's number of position embeddings per layer when ``max_len`` is not given.
COPE_MAX_POSITION = 64
#: The per-layer methods of ``TinyTransformer(position="rope", layer_positions=...)``.
LAYER_POSITION_METHODS = ("rope", "none")


def _check_per_layer(name: str, value: object, num_layers: int) -> list[object]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise TypeError(f"{name} must be a sequence with one entry per layer, got {type(value).__name__}")
    if len(value) != num_layers:
        raise ValueError(f"{name} must have one entry per layer ({num_layers}), got {len(value)}")
    return list(value)


def _base_key(base: float) -> str:
    return repr(float(base)).replace(".", "_")  # ModuleDict keys cannot contain dots


def _check_tokens(tokens: object, vocab_size: int) -> Tensor:
    tensor = check_tensor("tokens", tokens, ndim=2)
    if tensor.dtype.is_floating_point or tensor.dtype.is_complex or tensor.dtype == torch.bool:
        raise TypeError(f"tokens must be an integer tensor of token ids, got dtype {tensor.dtype}")
    if tensor.shape[0] == 0 or tensor.shape[1] == 0:
        raise ValueError(f"tokens must hold at least one row of at least one token, got shape {tuple(tensor.shape)}")
    if tensor.numel() and (int(tensor.min()) < 0 or int(tensor.max()) >= vocab_size):
        raise ValueError(f"tokens must be ids in [0, {vocab_size}) (vocab_size={vocab_size}), got values "
                         f"from {int(tensor.min())} to {int(tensor.max())}")
    return tensor


# --8<-- [start:embedding]
class PositionalEmbedding(nn.Module):
    """Token embedding plus an absolute position: ids to vectors.

    ``[batch, seq]`` token ids give ``[batch, seq, dim]`` vectors.

    Args:
        vocab_size: number of token ids.
        dim: model width (even for ``kind="sinusoidal"``).
        kind: ``"sinusoidal"`` (a fixed buffer, no parameters) or
            ``"learned"`` (a trainable table of ``max_len`` rows). RoPE,
            ALiBi and T5 do not act on the embeddings; use
            `TinyTransformer` for them.
        max_len: rows of the position table. Required for ``"learned"``,
            whose table cannot answer for positions ``>= max_len``; for
            ``"sinusoidal"`` it only sets how many rows are precomputed
            (longer inputs are computed on demand).
        dropout: dropout on the sum, as in Vaswani et al. (2017),
            section 5.4.

    The token table keeps PyTorch's N(0, 1) initialisation, so a token row
    has norm about sqrt(dim), the same order as a sinusoidal row (norm
    sqrt(dim / 2)). This is the balance the paper obtains by multiplying
    N(0, 1/dim) embeddings by sqrt(dim) (section 3.4).

    Examples:
        >>> layer = PositionalEmbedding(100, 8, kind="learned", max_len=20)
        >>> # 100*8 token rows + 20*8 position rows
        >>> sum(p.numel() for p in layer.parameters())
        960
        >>> layer(torch.tensor([[5, 7, 5]])).shape
        torch.Size([1, 3, 8])
    """

    def __init__(self, vocab_size: int, dim: int, *, kind: str,
                 max_len: int | None = None, dropout: float = 0.0) -> None:
        super().__init__()
        self.vocab_size = check_size_int("vocab_size", vocab_size)
        self.dim = check_size_int("dim", dim)
        if not isinstance(kind, str) or kind not in EMBEDDING_KINDS:
            raise ValueError(
                f"kind must be one of 'sinusoidal', 'learned', got "
                f"{kind!r} (RoPE, ALiBi and T5 act inside attention, not "
                "on the embeddings: use TinyTransformer(position=...))")
        self.kind = kind
        check_elements("the token table (vocab_size x dim)",
                       self.vocab_size, self.dim)
        check_float("dropout", dropout, minimum=0.0, maximum=1.0)
        self.token = nn.Embedding(self.vocab_size, self.dim)
        self.position: nn.Module
        if kind == "sinusoidal":
            self.position = SinusoidalPositionalEncoding(self.dim,
                                                         max_len=max_len)
        else:
            if max_len is None:
                raise ValueError("max_len must be given for "
                                 "kind='learned': the table has one row "
                                 "per position")
            rows = check_size_int("max_len", max_len)
            self.position = LearnedPositionalEmbedding(rows, self.dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, tokens: Tensor, offset: int = 0, *,
                positions: Tensor | None = None) -> Tensor:
        """Embed ``tokens [batch, seq]`` at ``offset .. offset + seq - 1``.

        Or at the given ``positions [batch, seq]`` (integer ids, e.g. from
        `posenc.positions_from_mask`).
        """
        tokens = _check_tokens(tokens, self.vocab_size)
        offset = check_int("offset", offset, minimum=0)
        # [batch, seq, dim]: the same vector for a token wherever it is
        x = self.token(tokens)
        if positions is None:  # + the row of each position
            return self.dropout(self.position(x, offset))
        if offset:
            raise ValueError(f"give either offset or positions, not both "
                             f"(got offset={offset})")
        ids = _check_embedding_positions(positions, tokens)
        return self.dropout(x + self.rows(ids).to(x.dtype))

    def rows(self, positions: Tensor) -> Tensor:
        """The position vectors ``[..., dim]`` of integer ``positions``."""
        positions = _check_position_ids("positions", positions)
        top = int(positions.max()) if positions.numel() else -1
        table = self.position
        if isinstance(table, LearnedPositionalEmbedding):
            if top >= table.max_len:
                raise ValueError(
                    f"positions must be < max_len={table.max_len} (the "
                    f"learned table has rows for positions "
                    f"0..{table.max_len - 1}), got {top}")
            return table.table[positions]
        assert isinstance(table, SinusoidalPositionalEncoding)
        if top < table.max_len:
            return table.table[positions]
        flat = positions.flatten().to(torch.float64)
        rows = sinusoidal_encoding(flat, self.dim, base=table.base)
        return rows.view(*positions.shape, self.dim).to(table.table.device)
# --8<-- [end:embedding]


def _check_embedding_positions(positions: object, tokens: Tensor) -> Tensor:
    tensor = _check_position_ids("positions", positions, ndim=2)
    if tensor.shape[1] != tokens.shape[1] or tensor.shape[0] not in (1, tokens.shape[0]):
        raise ValueError(f"positions must have the shape of tokens {tuple(tokens.shape)} (or one row), "
                         f"got shape {tuple(tensor.shape)}")
    return tensor.to(tokens.device)


# --8<-- [start:block]
class _Block(nn.Module):
    """One pre-norm decoder block.

    ``x + attention(norm(x))``, then ``x + mlp(norm(x))``.
    """

    def __init__(self, dim: int, num_heads: int, hidden: int) -> None:
        super().__init__()
        self.attention_norm = nn.LayerNorm(dim)
        self.attention = SelfAttention(dim, num_heads)
        self.mlp_norm = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(),
                                 nn.Linear(hidden, dim))

    def forward(
        self, x: Tensor, *, bias: Tensor | None,
        rotary: QueryKeyTransform | None, mask: Tensor | None = None,
        kv_hook: KeyValueHook | None = None,
        logit_hook: LogitHook | None = None,
    ) -> tuple[Tensor, Tensor]:
        attended, weights = self.attention(
            self.attention_norm(x), bias=bias, rotary=rotary,
            causal=mask is None, mask=mask, kv_hook=kv_hook,
            logit_hook=logit_hook)
        x = x + attended
        return x + self.mlp(self.mlp_norm(x)), weights
# --8<-- [end:block]


# --8<-- [start:model]
class TinyTransformer(nn.Module):
    """A small decoder-only (GPT-style) language model: ids to logits.

    ``[batch, seq]`` token ids give ``[batch, seq, vocab]`` logits.

    Args:
        vocab_size: number of token ids.
        dim: model width.
        num_heads: attention heads per layer (``dim`` must be divisible by
            it; the head width must be even for ``"rope"`` and ``"xpos"``).
        num_layers: number of pre-norm decoder blocks.
        position: where position information comes from, one of
            ``"none"``, ``"sinusoidal"``, ``"learned"``, ``"rope"``,
            ``"alibi"``, ``"t5"``, ``"xpos"``, ``"kerple"``, ``"fire"``,
            ``"cope"`` (see `POSITION_METHODS`).
        max_len: rows of the learned table (required for ``"learned"``;
            the model then refuses positions ``>= max_len``); for
            ``"sinusoidal"`` only the number of precomputed rows; for
            ``"fire"`` the initial threshold L (default 512); for
            ``"cope"`` the number of position embeddings per layer (default
            `COPE_MAX_POSITION`); for ``"xpos"`` it sets the centre
            (below). Ignored by the other methods.
        mlp_ratio: width of the feed-forward layer, a multiple of ``dim``.
        layer_positions: only with ``position="rope"``: a per-layer plan,
            one of ``"rope"`` or ``"none"`` per layer (e.g. RoPE in three
            layers out of four and none in the fourth, a NoPE/RoPE
            interleave). Default: RoPE in every layer.
        layer_rope_bases: only with ``position="rope"``: the RoPE base of
            each layer (e.g. a small base in local layers and a large one
            in global layers). Default: 10000.
        randomized_max_len: only for ``"sinusoidal"``, ``"learned"`` and
            ``"rope"``: in training mode, a call without ``positions`` and
            ``cache`` numbers each row with a sorted random subset of
            ``0 .. randomized_max_len - 1`` (Ruoss et al., 2023), drawn
            from torch's global generator; evaluation mode keeps
            ``0 .. seq-1``. A learned table needs
            ``max_len >= randomized_max_len``.

    The methods after ``"t5"`` are those of the "Beyond ALiBi" chapter.
    KERPLE (log kernel) and FIRE are one learned bias shared by all layers,
    like T5's; CoPE has one module per layer, shared by its heads, as in
    the authors' code. xPos scales its exponents about a *fixed* centre,
    ``ceil(max_len / 2)`` (0 without ``max_len``), instead of torchscale's
    ``ceil(length / 2)`` of each call: the centre cancels in ``q . k``,
    and a constant one keeps keys cached after the transform valid, so
    decoding with a cache gives the full forward's logits. In float32 it
    works while ``|position - centre|`` stays under about 35,000.

    Attention is causal in every block. T5's bias is shared by all layers,
    each head with its own value per bucket, as in Raffel et al. (2020);
    its buckets are the causal ones (``bidirectional=False``) with T5's
    defaults of 32 buckets and a maximum distance of 128.

    ``forward(tokens, *, positions=None, attention_mask=None, cache=None)``:
    ``positions`` ``[batch, seq]`` integer ids (default: continue from the
    cache, else ``0 .. seq-1``); ``attention_mask`` booleans, True =
    attend, ``[batch, k_len]`` for padding or ``[batch, seq, k_len]`` for
    any pattern (``k_len`` = cached entries + seq), combined with the
    causal mask; ``cache`` a `posenc.inference.KVCache`, updated in place.

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

    def __init__(
        self, vocab_size: int, dim: int, num_heads: int, num_layers: int,
        *, position: str, max_len: int | None = None, mlp_ratio: int = 4,
        layer_positions: Sequence[str] | None = None,
        layer_rope_bases: Sequence[float] | None = None,
        randomized_max_len: int | None = None,
    ) -> None:
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
        if position in ("rope", "xpos") and self.head_dim % 2:
            raise ValueError(f"position={position!r} needs an even head "
                             f"width dim // num_heads, got {self.head_dim}")
        if max_len is not None:
            max_len = check_int("max_len", max_len, minimum=1,
                                maximum=MAX_POSITION)
        self.max_len = max_len
        self.randomized_max_len = self._check_randomized(randomized_max_len)
        self.embedding: nn.Module
        if position in EMBEDDING_KINDS:
            self.embedding = PositionalEmbedding(
                self.vocab_size, self.dim, kind=position, max_len=max_len)
        else:
            self.embedding = nn.Embedding(self.vocab_size, self.dim)
        self._build_position_hooks()
        self._build_layer_plan(layer_positions, layer_rope_bases)
        hidden = mlp_ratio * self.dim
        self.blocks = nn.ModuleList(
            _Block(self.dim, self.num_heads, hidden)
            for _ in range(self.num_layers))
        self.final_norm = nn.LayerNorm(self.dim)
        self.head = nn.Linear(self.dim, self.vocab_size, bias=False)

    def _build_position_hooks(self) -> None:
        """Create the modules of the attention-side methods."""
        self.rotary: RotaryEmbedding | None = None
        self.relative_bias: T5RelativeBias | None = None
        self.learned_bias: KerpleBias | FireBias | None = None
        self.xpos: XPos | None = None
        self.xpos_centre = 0.0  # ceil(max_len / 2): fixed, so caches work
        if self.max_len is not None:
            self.xpos_centre = float(-(-self.max_len // 2))
        self.cope = nn.ModuleList()
        heads, head_dim = self.num_heads, self.head_dim
        if self.position == "rope":  # rotates q and k in every layer
            self.rotary = RotaryEmbedding(head_dim)
        elif self.position == "t5":  # a scalar per (bucket, head), shared
            self.relative_bias = T5RelativeBias(heads, bidirectional=False)
        elif self.position == "kerple":  # -r1 log(1 + r2 |i - j|), shared
            self.learned_bias = KerpleBias(heads)
        elif self.position == "fire":  # an MLP of the distance, shared
            self.learned_bias = FireBias(heads, max_len=self.max_len)
        elif self.position == "xpos":  # RoPE with a decay, every layer
            self.xpos = XPos(head_dim)
        elif self.position == "cope":  # position embeddings per layer
            rows = self.max_len or COPE_MAX_POSITION
            check_elements("CoPE's position embeddings "
                           "(num_layers x head_dim x max_len)",
                           self.num_layers, head_dim, rows)
            self.cope.extend(CoPE(head_dim, max_position=rows)
                             for _ in range(self.num_layers))

    def forward(self, tokens: Tensor, *, positions: Tensor | None = None,
                attention_mask: Tensor | None = None,
                cache: KVCache | None = None) -> Tensor:
        logits, _ = self._run(tokens, positions=positions,
                              attention_mask=attention_mask, cache=cache)
        return logits

    def _run(self, tokens: Tensor, *, positions: Tensor | None = None,
             attention_mask: Tensor | None = None,
             cache: KVCache | None = None) -> tuple[Tensor, list[Tensor]]:
        tokens = _check_tokens(tokens, self.vocab_size)
        given = positions is not None or cache is not None
        if not given and self.training and self.randomized_max_len:
            # Ruoss et al. (2023): train on random sorted positions
            positions = self._random_positions(tokens)
        step = plan_step(cache, owner=self, num_layers=self.num_layers,
                         batch=tokens.shape[0], q_len=tokens.shape[1],
                         positions=positions, device=tokens.device,
                         attention_mask=attention_mask)
        if positions is None and cache is None:  # 0 .. seq-1
            self._check_length(tokens.shape[1])
            # sinusoidal / learned: token + position; else token only
            x = self.embedding(tokens)
        elif isinstance(self.embedding, PositionalEmbedding):
            ids = step.query_positions.to(tokens.device)
            x = self.embedding(tokens, positions=ids)
        else:
            x = self.embedding(tokens)
        query_ids, key_ids = step.query_positions, step.key_positions
        if bool((query_ids == query_ids[:1]).all()) and bool((key_ids == key_ids[:1]).all()):
            # every row has the same positions: one bias, broadcast over the
            # batch (the plan is on the CPU, so this check costs no GPU sync)
            query_ids, key_ids = query_ids[:1], key_ids[:1]
        bias = self.position_bias(query_ids.to(x.device), key_ids.to(x.device))
        if bias is not None:
            wide = x.dtype if x.dtype == torch.float64 else torch.float32
            bias = bias.to(wide)
        maps = []
        for layer, block in enumerate(self.blocks):  # the same bias in each
            hooks = self._layer_hooks(layer, step, cache, x.device)
            rotary, kv_hook = hooks
            cope = self.cope[layer] if self.position == "cope" else None
            x, weights = block(x, bias=bias, rotary=rotary, mask=step.mask,
                               kv_hook=kv_hook, logit_hook=cope)
            maps.append(weights)
        if cache is not None:
            cache._commit(self, step)
        return self.head(self.final_norm(x)), maps
    # --8<-- [end:model]

    def _check_length(self, seq_len: int) -> None:
        """A learned table refuses sequences longer than ``max_len``."""
        if (self.position == "learned" and self.max_len is not None
                and seq_len > self.max_len):
            raise ValueError(f"tokens has {seq_len} positions but the "
                             f"learned table has max_len={self.max_len}")

    def _check_randomized(self, value: object) -> int | None:
        if value is None:
            return None
        if self.position not in RANDOMIZED_METHODS:
            raise ValueError(f"randomized_max_len needs position='sinusoidal', 'learned' or 'rope' (a method "
                             f"that takes positions), got position={self.position!r}")
        length = check_int("randomized_max_len", value, minimum=1, maximum=MAX_POSITION)
        if self.position == "learned" and self.max_len is not None and self.max_len < length:
            raise ValueError(f"randomized_max_len={length} needs a learned table of at least as many rows, "
                             f"got max_len={self.max_len}")
        return length

    def _random_positions(self, tokens: Tensor) -> Tensor:
        """One sorted random subset of ``0 .. randomized_max_len - 1`` per row (training only)."""
        length, (batch, seq) = self.randomized_max_len, tokens.shape
        assert length is not None
        if seq > length:
            raise ValueError(f"tokens has {seq} positions but randomized_max_len={length}: each row draws "
                             f"distinct positions from 0 .. {length - 1}")
        check_elements("the random permutations (batch x randomized_max_len)", batch, length)
        return torch.stack([randomized_positions(seq, length) for _ in range(batch)]).to(tokens.device)

    def _build_layer_plan(self, layer_positions: object, layer_rope_bases: object) -> None:
        """Per-layer RoPE or none, and per-layer bases: one rotary module per distinct base."""
        self.layer_positions: tuple[str, ...] | None = None
        self.layer_rope_bases: tuple[float, ...] | None = None
        self.layer_rotaries = nn.ModuleDict()
        if layer_positions is None and layer_rope_bases is None:
            return
        if self.position != "rope":
            raise ValueError(f"layer_positions and layer_rope_bases need position='rope', got position={self.position!r}")
        if layer_positions is not None:
            self.layer_positions = tuple(
                check_choice(f"layer_positions[{i}]", method, LAYER_POSITION_METHODS)
                for i, method in enumerate(_check_per_layer("layer_positions", layer_positions, self.num_layers)))
        if layer_rope_bases is not None:
            bases = _check_per_layer("layer_rope_bases", layer_rope_bases, self.num_layers)
            self.layer_rope_bases = tuple(check_float(f"layer_rope_bases[{i}]", b, positive=True)
                                          for i, b in enumerate(bases))
            for base in sorted(set(self.layer_rope_bases)):
                self.layer_rotaries[_base_key(base)] = RotaryEmbedding(self.head_dim, base=base)

    def layer_rotary(self, layer: int) -> RotaryEmbedding | None:
        """The RoPE module of layer ``layer`` (None if that layer has no rotation)."""
        layer = check_int("layer", layer, minimum=0, maximum=self.num_layers - 1)
        if self.layer_positions is not None and self.layer_positions[layer] == "none":
            return None
        if self.layer_rope_bases is not None:
            module = self.layer_rotaries[_base_key(self.layer_rope_bases[layer])]
            assert isinstance(module, RotaryEmbedding)
            return module
        return self.rotary

    # --8<-- [start:position-bias]
    def position_bias(self, query_positions: Tensor,
                      key_positions: Tensor) -> Tensor | None:
        """The logit bias ``[batch, heads, q_len, k_len]``, or ``None``.

        ALiBi, T5, KERPLE and FIRE have one. Computed from the positions
        themselves (``[batch, q_len]`` and ``[batch, k_len]`` integer ids),
        so it is right for cached keys, padded rows and packed documents.
        """
        q_ids = _check_position_ids("query_positions", query_positions,
                                    ndim=2)
        k_ids = _check_position_ids("key_positions", key_positions, ndim=2)
        batch_q, batch_k = q_ids.shape[0], k_ids.shape[0]
        if batch_k not in (1, batch_q) and batch_q != 1:
            raise ValueError(
                f"query_positions and key_positions must have the same "
                f"batch size (or 1), got shapes {tuple(q_ids.shape)} and "
                f"{tuple(k_ids.shape)}")
        check_elements("the bias (batch x heads x q_len x k_len)",
                       max(batch_q, batch_k), self.num_heads,
                       q_ids.shape[1], k_ids.shape[1])
        if self.learned_bias is not None:  # KERPLE, FIRE: learned, f(i, j)
            return self.learned_bias.bias(q_ids, k_ids)
        offsets = k_ids[:, None, :] - q_ids[:, :, None]  # j - i, [b, q, k]
        if self.position == "alibi":  # fixed: -slope_h * |i - j|
            slopes = alibi_slopes(self.num_heads, dtype=torch.float64)
            slopes = slopes.to(offsets.device)[None, :, None, None]
            distance = offsets.abs()[:, None].to(torch.float64)
            return (slopes * -distance).to(torch.float32)
        if self.relative_bias is not None:  # learned: bias[h, bucket]
            rb = self.relative_bias
            buckets = t5_relative_position_bucket(
                offsets, bidirectional=rb.bidirectional,
                num_buckets=rb.num_buckets, max_distance=rb.max_distance)
            table = rb.weight[buckets.to(rb.weight.device)]  # [b, q, k, h]
            return table.permute(0, 3, 1, 2)
        return None
    # --8<-- [end:position-bias]

    def attention_bias(self, seq_len: int) -> Tensor | None:
        """The logit bias ``[heads, seq, seq]`` (ALiBi, T5, KERPLE, FIRE)."""
        seq_len = check_int("seq_len", seq_len, minimum=0,
                            maximum=MAX_POSITION)
        positions = torch.arange(seq_len)[None]
        bias = self.position_bias(positions, positions)
        return None if bias is None else bias[0]

    # --8<-- [start:layer-hooks]
    def _layer_hooks(
        self, layer: int, step: StepPlan, cache: KVCache | None,
        device: torch.device,
    ) -> tuple[QueryKeyTransform | None, KeyValueHook | None]:
        """The rotary hook and the cache hook of one layer.

        This is the one place that wires them.
        """
        rotary, xpos = self.layer_rotary(layer), self.xpos
        centre = self.xpos_centre
        q_pos = step.query_positions.to(device)
        k_pos = step.key_positions.to(device)
        in_cache = cache is not None and cache.key_positions == "in-cache"
        rotate: QueryKeyTransform | None = None
        if rotary is not None and not in_cache:  # cached already rotated
            def rotate(q: Tensor, k: Tensor) -> tuple[Tensor, Tensor]:
                return rotary(q, k, q_pos)
        elif xpos is not None and not in_cache:  # one fixed centre
            def rotate(q: Tensor, k: Tensor) -> tuple[Tensor, Tensor]:
                return (xpos.queries(q, q_pos, centre=centre),
                        xpos.keys(k, q_pos, centre=centre))
        if cache is None:
            return rotate, None

        def kv_hook(q: Tensor, k: Tensor,
                    v: Tensor) -> tuple[Tensor, Tensor, Tensor]:
            # cached entries first, then this call's
            k_all, v_all = cache._extend(layer, k, v)
            if in_cache and rotary is not None:
                # re-rotate every key by its index in the cache
                q = rotary(q, q, q_pos)[0]
                k_all = rotary(k_all, k_all, k_pos)[1]
            elif in_cache and xpos is not None:
                q = xpos.queries(q, q_pos, centre=centre)
                k_all = xpos.keys(k_all, k_pos, centre=centre)
            return q, k_all, v_all

        return rotate, kv_hook
    # --8<-- [end:layer-hooks]

    # --8<-- [start:generate]
    @torch.no_grad()
    def generate(self, tokens: Tensor, max_new_tokens: int, *, attention_mask: Tensor | None = None,
                 window: int | None = None, sinks: int = 0) -> Tensor:
        """Greedy decoding with a `posenc.inference.KVCache`: ``[batch, seq + max_new_tokens]`` ids.

        Args:
            tokens: the prompts ``[batch, seq]``, left-padded if their lengths differ.
            max_new_tokens: how many tokens to append to each row.
            attention_mask: ``[batch, seq]`` booleans, False on the padding; positions then
                come from `posenc.inference.positions_from_mask`.
            window: None, or sliding-window attention over this many recent tokens (see
                `posenc.inference.KVCache`).
            sinks: with a window, the number of first tokens kept as attention sinks.

        Examples:
            >>> _ = torch.manual_seed(0)
            >>> model = TinyTransformer(10, dim=8, num_heads=2, num_layers=1, position="rope")
            >>> model.generate(torch.tensor([[1, 2, 3]]), 4).shape
            torch.Size([1, 7])
        """
        tokens = _check_tokens(tokens, self.vocab_size)
        max_new_tokens = check_int("max_new_tokens", max_new_tokens, minimum=0, maximum=MAX_POSITION)
        cache = KVCache(window=window, sinks=sinks)
        positions = None
        if attention_mask is not None:
            positions = positions_from_mask(attention_mask)
            if tuple(attention_mask.shape) != tuple(tokens.shape):
                raise ValueError(f"attention_mask must have the shape of tokens {tuple(tokens.shape)}, "
                                 f"got shape {tuple(attention_mask.shape)}")
        out = [tokens]
        if max_new_tokens == 0:
            return tokens
        logits = self(tokens, positions=positions, attention_mask=attention_mask, cache=cache)
        for step in range(max_new_tokens):
            next_token = logits[:, -1].argmax(dim=-1, keepdim=True)  # greedy
            out.append(next_token)
            if step + 1 < max_new_tokens:  # the cache remembers the padding and the positions
                logits = self(next_token, cache=cache)
        return torch.cat(out, dim=1)
    # --8<-- [end:generate]

    def attention_maps(self, tokens: Tensor) -> list[Tensor]:
        """The attention weights of every layer, each ``[batch, heads, seq, seq]``, for inspection.

        Examples:
            >>> model = TinyTransformer(10, dim=8, num_heads=2, num_layers=3, position="none")
            >>> maps = model.attention_maps(torch.tensor([[4, 4, 4]]))
            >>> len(maps), tuple(maps[0].shape)
            (3, (1, 2, 3, 3))
            >>> first_layer = maps[0]
            >>> first_layer[0, 0]        # one token repeated, no position: uniform over the visible keys
            tensor([[1.0000, 0.0000, 0.0000],
                    [0.5000, 0.5000, 0.0000],
                    [0.3333, 0.3333, 0.3333]])
        """
        with torch.no_grad():
            _, maps = self._run(tokens)
        return maps
