"""Learned absolute position embeddings, as in BERT (Devlin et al., 2019) and GPT-2 (Radford et al., 2019).

The model owns a trainable table with one row per position, ``[max_len, dim]``. Position ``p``
adds row ``p`` to the token embedding at that position. The table is a parameter, so it is
trained with the rest of the model; in exchange it has no row for positions ``>= max_len``,
and asking for one is an error rather than a silent wrap-around.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from posenc._checks import (
    check_elements,
    check_float,
    check_int,
    check_position_ids,
    check_size,
    check_size_int,
    check_tensor,
)

__all__ = ["LearnedPositionalEmbedding"]


# --8<-- [start:module]
class LearnedPositionalEmbedding(nn.Module):
    """Adds a trainable row per position to a batch of embeddings
    ``[batch, seq, dim]``.

    Args:
        max_len: number of positions the table holds (512 in BERT, 1024 in
            GPT-2).
        dim: model width.
        init_std: standard deviation of the normal initialisation (BERT and
            Hugging Face's GPT-2 use 0.02; the original GPT-2 code uses 0.01 for
            this table).

    ``forward(x, offset=0)`` adds rows ``offset .. offset + seq - 1``;
    ``rows(positions)`` gives the rows of any integer positions (the interface
    it shares with `posenc.sinusoidal.SinusoidalPositionalEncoding`). A position
    ``>= max_len`` raises ``ValueError``.

    Examples:
        >>> layer = LearnedPositionalEmbedding(max_len=4, dim=2)
        >>> tuple(layer.table.shape), sum(p.numel() for p in layer.parameters())
        ((4, 2), 8)
        >>> torch.equal(layer(torch.zeros(1, 3, 2))[0],
        ...             layer.table[:3].detach())
        True
    """

    def __init__(self, max_len: int, dim: int, *,
                 init_std: float = 0.02) -> None:
        super().__init__()
        self.max_len = check_size_int("max_len", max_len)
        self.dim = check_size_int("dim", dim)
        check_elements("the table (max_len x dim)", self.max_len, self.dim)
        self.init_std = check_float("init_std", init_std, minimum=0.0,
                                    maximum=1e30)  # float32 stays finite
        self.table = nn.Parameter(torch.empty(self.max_len, self.dim))
        nn.init.normal_(self.table, mean=0.0, std=self.init_std)

    def encoding(self, seq_len: int, offset: int = 0) -> Tensor:
        """Rows ``offset .. offset + seq_len - 1`` of the table,
        ``[seq_len, dim]``."""
        seq_len = check_int("seq_len", seq_len, minimum=0)
        offset = check_int("offset", offset, minimum=0)
        end = offset + seq_len
        if end > self.max_len:
            raise ValueError(
                f"requested length {end} (offset {offset} + seq_len "
                f"{seq_len}) exceeds max_len={self.max_len}: the learned "
                f"table has rows for positions "
                f"0..{self.max_len - 1} only"
            )
        return self.table[offset:end]

    def forward(self, x: Tensor, offset: int = 0) -> Tensor:
        check_tensor("x", x, ndim=3, floating=True)
        check_size("x", x, -1, self.dim, expected_from="the module's dim")
        return x + self.encoding(x.shape[1], offset).to(x.dtype)
    # --8<-- [end:module]

    def rows(self, positions: Tensor) -> Tensor:
        """The rows ``[..., dim]`` of integer ``positions`` (each below ``max_len``)."""
        positions = check_position_ids("positions", positions)
        top = int(positions.max()) if positions.numel() else -1
        if top >= self.max_len:
            raise ValueError(f"positions must be < max_len={self.max_len} (the learned table has rows for "
                             f"positions 0..{self.max_len - 1}), got {top}")
        return self.table[positions]

    @property
    def position_limit(self) -> int:
        """How many positions the table can answer for: ``max_len``."""
        return self.max_len

