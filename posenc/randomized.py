"""Randomized positional encodings (Ruoss et al., "Randomized Positional Encodings Boost Length
Generalization of Transformers", ACL 2023).

A model trained on sequences of at most N tokens with positions ``0 .. N-1`` has never seen a
larger position, so a longer test sequence feeds it positions out of its training distribution,
for absolute and relative methods alike. The fix changes only which positions are used: each
training sequence of length n gets a *sorted random subset* of ``0 .. L-1``, with L much larger
than any test length. Order is kept (the positions increase), gaps are random, and over training
every position up to L - 1 is seen. It works with any method that takes positions (sinusoidal,
learned tables of size L, RoPE, ...).
"""

from __future__ import annotations

import torch
from torch import Tensor

from posenc._checks import MAX_EXACT_POSITION, check_int

__all__ = ["randomized_positions"]

#: Above this ``max_len`` the subset is drawn without a permutation of all of ``0 .. max_len-1``.
_PERMUTATION_LIMIT = 1 << 20
#: The longest sequence this draws positions for (a bound on the work of one call).
MAX_SEQ_LEN = 1 << 20


def randomized_positions(
    seq_len: int, max_len: int, *, generator: torch.Generator | None = None,
) -> Tensor:
    """A sorted random subset of ``0 .. max_len - 1`` of size ``seq_len``.

    Returns a LongTensor ``[seq_len]``. Every subset is equally likely. Use
    it in training in place of ``arange(seq_len)``, for any method that
    takes positions (the paper samples anew for every sequence).

    Examples:
        >>> g = torch.Generator().manual_seed(0)
        >>> positions = randomized_positions(5, 100, generator=g)
        >>> positions.shape, bool((positions.diff() > 0).all())
        (torch.Size([5]), True)
        >>> bool(positions.max() < 100)
        True
    """
    seq_len = check_int("seq_len", seq_len, minimum=0, maximum=MAX_SEQ_LEN)
    max_len = check_int("max_len", max_len, minimum=1,
                        maximum=MAX_EXACT_POSITION)
    if seq_len > max_len:
        raise ValueError(f"seq_len must be <= max_len (positions are "
                         f"distinct), got seq_len={seq_len}, "
                         f"max_len={max_len}")
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator or None, "
                        f"got {type(generator).__name__}")
    return _sorted_subset(seq_len, max_len, generator)


# --8<-- [start:randomized]
def _sorted_subset(
    seq_len: int, max_len: int, generator: torch.Generator | None
) -> Tensor:
    """seq_len distinct positions of 0 .. max_len - 1, drawn uniformly, in
    increasing order."""
    if max_len <= _PERMUTATION_LIMIT:
        chosen = torch.randperm(max_len, generator=generator)[:seq_len]
    else:  # Floyd's algorithm: seq_len draws, no table of max_len entries
        picked: set[int] = set()
        for top in range(max_len - seq_len, max_len):
            draw = int(torch.randint(top + 1, (1,), generator=generator))
            picked.add(top if draw in picked else draw)
        chosen = torch.tensor(sorted(picked), dtype=torch.long)
    return chosen.sort().values
# --8<-- [end:randomized]
