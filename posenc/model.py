"""A complete embedding layer and a tiny decoder-only transformer that can use every method here.

Position information enters a transformer in one of three places, and this module wires each
posenc method into its place without re-implementing any of them:

* on the input embeddings, added to the token vectors: ``"sinusoidal"``
  (`posenc.sinusoidal.SinusoidalPositionalEncoding`) and ``"learned"``
  (`posenc.learned.LearnedPositionalEmbedding`);
* on the attention logits, as an additive bias: ``"alibi"`` (`posenc.alibi.alibi_bias`)
  and ``"t5"`` (`posenc.relative.T5RelativeBias`);
* on queries and keys, before their dot product: ``"rope"``
  (`posenc.rope.RotaryEmbedding`);

and ``"none"`` uses no position method at all (only the causal mask tells positions apart).
"""

from __future__ import annotations


import torch
from torch import Tensor, nn

from posenc._checks import check_choice, check_float, check_int, check_positive_int, check_tensor
from posenc.alibi import alibi_bias
from posenc.attention import QueryKeyTransform, SelfAttention
from posenc.learned import LearnedPositionalEmbedding
from posenc.relative import T5RelativeBias
from posenc.rope import RotaryEmbedding
from posenc.sinusoidal import SinusoidalPositionalEncoding

#: The ``kind`` values of `PositionalEmbedding`: the methods that act on the embeddings.
EMBEDDING_KINDS = ("sinusoidal", "learned")
#: The ``position`` values of `TinyTransformer`.
POSITION_METHODS = ("none", "sinusoidal", "learned", "rope", "alibi", "t5")


def _check_tokens(tokens: object) -> Tensor:
    tensor = check_tensor("tokens", tokens, ndim=2)
    if tensor.dtype.is_floating_point or tensor.dtype.is_complex or tensor.dtype == torch.bool:
        raise TypeError(f"tokens must be an integer tensor of token ids, got dtype {tensor.dtype}")
    return tensor


# --8<-- [start:embedding]
class PositionalEmbedding(nn.Module):
    """Token embedding plus an absolute position, ``[batch, seq] ids -> [batch, seq, dim]``.

    Args:
        vocab_size: number of token ids.
        dim: model width (even for ``kind="sinusoidal"``).
        kind: ``"sinusoidal"`` (a fixed buffer, no parameters) or ``"learned"`` (a trainable
            table of ``max_len`` rows). RoPE, ALiBi and T5 do not act on the embeddings; use
            `TinyTransformer` for them.
        max_len: rows of the position table. Required for ``"learned"``, whose table cannot
            answer for positions ``>= max_len``; for ``"sinusoidal"`` it only sets how many
            rows are precomputed (longer inputs are computed on demand).
        dropout: dropout on the sum, as in Vaswani et al. (2017), section 5.4.

    The token table keeps PyTorch's N(0, 1) initialisation, so a token row has norm about
    sqrt(dim), the same order as a sinusoidal row (norm sqrt(dim / 2)). This is the balance the
    paper obtains by multiplying N(0, 1/dim) embeddings by sqrt(dim) (section 3.4).

    Examples:
        >>> layer = PositionalEmbedding(100, 8, kind="learned", max_len=20)
        >>> sum(p.numel() for p in layer.parameters())      # 100*8 token rows + 20*8 position rows
        960
        >>> layer(torch.tensor([[5, 7, 5]])).shape
        torch.Size([1, 3, 8])
    """

    def __init__(self, vocab_size: int, dim: int, *, kind: str, max_len: int | None = None,
                 dropout: float = 0.0) -> None:
        super().__init__()
        self.vocab_size = check_positive_int("vocab_size", vocab_size)
        self.dim = check_positive_int("dim", dim)
        if not isinstance(kind, str) or kind not in EMBEDDING_KINDS:
            raise ValueError(
                f"kind must be one of 'sinusoidal', 'learned', got {kind!r} (RoPE, ALiBi and T5 act "
                "inside attention, not on the embeddings: use TinyTransformer(position=...))"
            )
        self.kind = kind
        check_float("dropout", dropout, minimum=0.0, maximum=1.0)
        self.token = nn.Embedding(self.vocab_size, self.dim)
        self.position: nn.Module
        if kind == "sinusoidal":
            self.position = SinusoidalPositionalEncoding(self.dim, max_len=max_len)
        else:
            if max_len is None:
                raise ValueError("max_len must be given for kind='learned': the table has one row per position")
            self.position = LearnedPositionalEmbedding(check_positive_int("max_len", max_len), self.dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, tokens: Tensor, offset: int = 0) -> Tensor:
        tokens = _check_tokens(tokens)
        offset = check_int("offset", offset, minimum=0)
        x = self.token(tokens)  # [batch, seq, dim]: the same vector for a token wherever it is
        return self.dropout(self.position(x, offset))  # + the row of each position
# --8<-- [end:embedding]


# --8<-- [start:block]
class _Block(nn.Module):
    """One pre-norm decoder block: x + attention(norm(x)), then x + mlp(norm(x))."""

    def __init__(self, dim: int, num_heads: int, hidden: int) -> None:
        super().__init__()
        self.attention_norm = nn.LayerNorm(dim)
        self.attention = SelfAttention(dim, num_heads)
        self.mlp_norm = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))

    def forward(self, x: Tensor, *, bias: Tensor | None,
                rotary: QueryKeyTransform | None) -> tuple[Tensor, Tensor]:
        attended, weights = self.attention(self.attention_norm(x), bias=bias, rotary=rotary, causal=True)
        x = x + attended
        return x + self.mlp(self.mlp_norm(x)), weights
# --8<-- [end:block]


# --8<-- [start:model]
class TinyTransformer(nn.Module):
    """A small decoder-only (GPT-style) language model, ``[batch, seq] ids -> [batch, seq, vocab] logits``.

    Args:
        vocab_size: number of token ids.
        dim: model width.
        num_heads: attention heads per layer (``dim`` must be divisible by it; the head width
            must be even for ``"rope"``).
        num_layers: number of pre-norm decoder blocks.
        position: where position information comes from, one of ``"none"``, ``"sinusoidal"``,
            ``"learned"``, ``"rope"``, ``"alibi"``, ``"t5"``.
        max_len: rows of the learned table (required for ``"learned"``; the model then refuses
            longer inputs); for ``"sinusoidal"`` only the number of precomputed rows.
        mlp_ratio: width of the feed-forward layer, as a multiple of ``dim``.

    Attention is causal in every block. T5's bias is shared by all layers, each head with its
    own value per bucket, as in Raffel et al. (2020); its buckets are the causal ones
    (``bidirectional=False``) with T5's defaults of 32 buckets and a maximum distance of 128.

    Examples:
        >>> model = TinyTransformer(50, dim=16, num_heads=2, num_layers=1, position="alibi")
        >>> model(torch.tensor([[1, 2, 3, 4]])).shape
        torch.Size([1, 4, 50])
    """

    def __init__(self, vocab_size: int, dim: int, num_heads: int, num_layers: int, *, position: str,
                 max_len: int | None = None, mlp_ratio: int = 4) -> None:
        super().__init__()
        self.vocab_size = check_positive_int("vocab_size", vocab_size)
        self.dim = check_positive_int("dim", dim)
        self.num_heads = check_positive_int("num_heads", num_heads)
        self.num_layers = check_positive_int("num_layers", num_layers)
        self.position = check_choice("position", position, POSITION_METHODS)
        mlp_ratio = check_positive_int("mlp_ratio", mlp_ratio)
        if self.dim % self.num_heads:
            raise ValueError(f"dim must be divisible by num_heads, got dim={dim}, num_heads={num_heads}")
        self.head_dim = self.dim // self.num_heads
        if position == "rope" and self.head_dim % 2:
            raise ValueError(f"position='rope' needs an even head width dim // num_heads, got {self.head_dim}")
        self.max_len = max_len
        self.embedding: nn.Module
        if position in EMBEDDING_KINDS:
            self.embedding = PositionalEmbedding(self.vocab_size, self.dim, kind=position, max_len=max_len)
        else:
            self.embedding = nn.Embedding(self.vocab_size, self.dim)
        self._build_position_hooks()
        self.blocks = nn.ModuleList(_Block(self.dim, self.num_heads, mlp_ratio * self.dim) for _ in range(self.num_layers))
        self.final_norm = nn.LayerNorm(self.dim)
        self.head = nn.Linear(self.dim, self.vocab_size, bias=False)

    def _build_position_hooks(self) -> None:
        """Create the module that each attention-side method needs (none for the others)."""
        self.rotary: RotaryEmbedding | None = None
        self.relative_bias: T5RelativeBias | None = None
        if self.position == "rope":  # rotates queries and keys inside every attention layer
            self.rotary = RotaryEmbedding(self.head_dim)
        elif self.position == "t5":  # one learned scalar per (bucket, head), shared by all layers
            self.relative_bias = T5RelativeBias(self.num_heads, bidirectional=False)

    def attention_bias(self, seq_len: int) -> Tensor | None:
        """The additive logit bias ``[heads, seq, seq]`` of ALiBi or T5 (``None`` otherwise)."""
        if self.position == "alibi":  # fixed: -slope_h * |i - j|
            return alibi_bias(self.num_heads, seq_len)
        if self.relative_bias is not None:  # learned: bias[h, bucket(j - i)]
            return self.relative_bias(seq_len, seq_len)
        return None

    def forward(self, tokens: Tensor) -> Tensor:
        logits, _ = self._run(tokens)
        return logits

    def _run(self, tokens: Tensor) -> tuple[Tensor, list[Tensor]]:
        tokens = _check_tokens(tokens)
        seq_len = tokens.shape[1]
        if self.position == "learned" and self.max_len is not None and seq_len > self.max_len:
            raise ValueError(f"tokens has {seq_len} positions but the learned table has max_len={self.max_len}")
        x = self.embedding(tokens)  # sinusoidal / learned: token + position; else token only
        bias = self.attention_bias(seq_len)
        if bias is not None:
            bias = bias.to(x.dtype)
        rotary = self.rotary  # RotaryEmbedding(q, k) -> (q, k), or None
        maps = []
        for block in self.blocks:  # the same bias and the same rotary hook in every layer
            x, weights = block(x, bias=bias, rotary=rotary)
            maps.append(weights)
        return self.head(self.final_norm(x)), maps
    # --8<-- [end:model]

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

