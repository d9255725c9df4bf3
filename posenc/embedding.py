"""A complete embedding layer: token vectors plus the vector of each position.

Only the absolute methods act on the embeddings: the sinusoidal encoding
(`posenc.sinusoidal.SinusoidalPositionalEncoding`) and a learned table
(`posenc.learned.LearnedPositionalEmbedding`). Both answer the same calls, `PositionTable`:
``table(x, offset)`` adds the rows of ``offset .. offset + seq - 1``, ``table.rows(positions)``
gives the rows of any integer positions, and ``table.position_limit`` says how many positions it
can answer for. `PositionalEmbedding` adds one of them to a token table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from torch import Tensor, nn

from posenc._checks import (
    check_elements,
    check_float,
    check_int,
    check_position_ids,
    check_size_int,
    check_token_ids,
)
from posenc.learned import LearnedPositionalEmbedding
from posenc.sinusoidal import SinusoidalPositionalEncoding

__all__ = ["EMBEDDING_KINDS", "PositionTable", "PositionalEmbedding"]


class PositionTable(Protocol):
    """What `PositionalEmbedding` needs of a position method that acts on the embeddings."""

    def __call__(self, x: Tensor, offset: int = 0) -> Tensor:
        """``x [batch, seq, dim]`` plus the rows of positions ``offset .. offset + seq - 1``."""
        ...  # pragma: no cover - a protocol

    def rows(self, positions: Tensor) -> Tensor:
        """The rows ``[..., dim]`` of integer ``positions``."""
        ...  # pragma: no cover - a protocol

    @property
    def position_limit(self) -> int | None:
        """How many positions (0 .. limit - 1) it can answer for; None: any."""
        ...  # pragma: no cover - a protocol


def _learned(dim: int, max_len: int | None) -> LearnedPositionalEmbedding:
    if max_len is None:
        raise ValueError("max_len must be given for kind='learned': the table has one row per position")
    return LearnedPositionalEmbedding(check_size_int("max_len", max_len), dim)


#: The ``kind`` values of `PositionalEmbedding`, and how each builds its table from ``(dim, max_len)``.
_TABLES: dict[str, Callable[[int, int | None], PositionTable]] = {
    "sinusoidal": lambda dim, max_len: SinusoidalPositionalEncoding(dim, max_len=max_len),
    "learned": _learned,
}
#: The ``kind`` values of `PositionalEmbedding`: the methods that act on the embeddings.
EMBEDDING_KINDS = tuple(_TABLES)


class PositionalEmbedding(nn.Module):
    r"""Token embedding plus an absolute position: ids to vectors.

    ``[batch, seq]`` token ids give ``[batch, seq, dim]`` vectors.

    Args:
        vocab_size: number of token ids.
        dim: model width (even for ``kind="sinusoidal"``).
        kind: ``"sinusoidal"`` (a fixed buffer, no parameters) or
            ``"learned"`` (a trainable table of ``max_len`` rows). RoPE,
            ALiBi and T5 do not act on the embeddings; use
            `posenc.model.TinyTransformer` for them.
        max_len: rows of the position table. Required for ``"learned"``,
            whose table cannot answer for positions ``>= max_len``; for
            ``"sinusoidal"`` it only sets how many rows are precomputed
            (longer inputs are computed on demand).
        dropout: dropout on the sum, as in Vaswani et al. (2017),
            section 5.4.

    ``forward(tokens, offset=0, *, positions=None)`` embeds ``tokens`` at ``offset .. offset + seq - 1``,
    or at the given ``positions [batch, seq]`` (integer ids, e.g. from `posenc.positions_from_mask`).
    The token table keeps PyTorch's \(\mathcal{N}(0, 1)\) initialisation, so a token row
    has norm about \(\sqrt{d}\) (\(d\) = ``dim``), the same order as a sinusoidal row (norm
    \(\sqrt{d/2}\)). This is the balance the paper obtains by multiplying
    \(\mathcal{N}(0, 1/d)\) embeddings by \(\sqrt{d}\) (section 3.4).

    Examples:
        >>> import torch
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
            raise ValueError(f"kind must be one of 'sinusoidal', 'learned', got {kind!r} (RoPE, ALiBi and T5 act "
                             "inside attention, not on the embeddings: use TinyTransformer(position=...))")
        self.kind = kind
        check_elements("the token table (vocab_size x dim)", self.vocab_size, self.dim)
        check_float("dropout", dropout, minimum=0.0, maximum=1.0)
        self.token = nn.Embedding(self.vocab_size, self.dim)
        self.position: PositionTable = _TABLES[kind](self.dim, max_len)
        self.dropout = nn.Dropout(dropout)

    def forward(self, tokens: Tensor, offset: int = 0, *, positions: Tensor | None = None) -> Tensor:
        tokens = check_token_ids("tokens", tokens, self.vocab_size)
        offset = check_int("offset", offset, minimum=0)
        if positions is not None:
            if offset:
                raise ValueError(f"give either offset or positions, not both (got offset={offset})")
            positions = check_position_ids("positions", positions, like=(tokens.shape[0], tokens.shape[1]))
        return self._embed(tokens, offset, None if positions is None else positions.to(tokens.device))

    # --8<-- [start:embedding]
    def _embed(self, tokens: Tensor, offset: int,
               positions: Tensor | None) -> Tensor:
        # [batch, seq, dim]: the same vector for a token wherever it is
        x = self.token(tokens)
        if positions is None:  # + the rows of offset .. offset + seq - 1
            return self.dropout(self.position(x, offset))
        # + the row of each position, [batch (or 1), seq, dim]
        return self.dropout(x + self.position.rows(positions).to(x.dtype))
    # --8<-- [end:embedding]

    def rows(self, positions: Tensor) -> Tensor:
        """The position vectors ``[..., dim]`` of integer ``positions``."""
        return self.position.rows(positions)

    @property
    def position_limit(self) -> int | None:
        """How many positions (0 .. limit - 1) the table answers for; None: any."""
        return self.position.position_limit
