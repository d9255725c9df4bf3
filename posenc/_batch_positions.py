"""Position ids of a padded or packed batch, and the masks that go with them.

Private: import these from `posenc.inference`, whose docstring says when each is needed. They are
plain functions of a mask or of document lengths; the cache and the plan of each forward call,
which use them, stay there.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from posenc._checks import check_tensor, is_integer

#: Total length accepted by `packed_attention_mask` (its mask has length² entries).
MAX_PACKED_LENGTH = 2**14


def check_bool_mask(name: str, value: object, *, ndim: int | tuple[int, ...]) -> Tensor:
    tensor = check_tensor(name, value, ndim=ndim)
    if tensor.dtype != torch.bool:
        raise TypeError(f"{name} must be a boolean tensor (True = a real token / may attend), got dtype "
                        f"{tensor.dtype}; convert a 0/1 mask with .bool()")
    return tensor


def positions_from_mask(attention_mask: Tensor) -> Tensor:
    """Position ids of a padded batch: each row counts its real tokens from 0.

    Args:
        attention_mask: ``[batch, seq]`` booleans, True for a real token, False for padding.

    Returns:
        ``[batch, seq]`` int64: for each real token, the number of real tokens before it, so
            that a left-padded row starts at 0 on its first real token, as if it had not been
            padded; for each padding token, 0 (it is masked anyway, and -1 is no valid row of a
            learned position table).

    Examples:
        >>> mask = torch.tensor([[False, False, True, True, True],
        ...                      [True, True, True, True, True]])
        >>> positions_from_mask(mask)
        tensor([[0, 0, 0, 1, 2],
                [0, 1, 2, 3, 4]])
    """
    mask = check_bool_mask("attention_mask", attention_mask, ndim=2)
    counted = mask.long().cumsum(dim=-1) - 1  # real tokens up to and including this one, minus 1
    return counted.masked_fill(~mask, 0)


def check_lengths(document_lengths: object) -> list[int]:
    if isinstance(document_lengths, Tensor):
        tensor = check_tensor("document_lengths", document_lengths, ndim=1)
        if tensor.is_floating_point() or tensor.is_complex() or tensor.dtype == torch.bool:
            raise TypeError(f"document_lengths must hold integers, got dtype {tensor.dtype}")
        values: list[object] = [int(v) for v in tensor.tolist()]
    elif isinstance(document_lengths, Sequence) and not isinstance(document_lengths, (str, bytes)):
        values = list(document_lengths)
    else:
        raise TypeError(f"document_lengths must be a sequence of positive integers, "
                        f"got {type(document_lengths).__name__}")
    if not values:
        raise ValueError("document_lengths must hold at least one length, got an empty sequence")
    lengths = []
    for value in values:
        if not is_integer(value):
            raise TypeError(f"document_lengths must hold integers, got {type(value).__name__} {value!r}")
        if int(value) < 1:  # type: ignore[call-overload]
            raise ValueError(f"document_lengths must be >= 1 each, got {value}")
        lengths.append(int(value))  # type: ignore[call-overload]
    if sum(lengths) > MAX_PACKED_LENGTH:
        raise ValueError(f"document_lengths must add up to at most {MAX_PACKED_LENGTH} tokens, "
                         f"got {sum(lengths)}")
    return lengths


def packed_positions(document_lengths: Sequence[int] | Tensor) -> Tensor:
    """Position ids of documents packed into one row: each document restarts at 0.

    Examples:
        >>> packed_positions([3, 2, 4])
        tensor([0, 1, 2, 0, 1, 0, 1, 2, 3])
    """
    lengths = check_lengths(document_lengths)
    return torch.cat([torch.arange(n) for n in lengths])


def packed_attention_mask(document_lengths: Sequence[int] | Tensor) -> Tensor:
    """``[L, L]`` booleans: query i may attend to key j if both are in the same document and j <= i.

    Examples:
        >>> packed_attention_mask([2, 1]).int()
        tensor([[1, 0, 0],
                [1, 1, 0],
                [0, 0, 1]], dtype=torch.int32)
    """
    lengths = check_lengths(document_lengths)
    document = torch.repeat_interleave(torch.arange(len(lengths)), torch.tensor(lengths))
    same_document = document[:, None] == document[None, :]
    causal = torch.ones(len(document), len(document), dtype=torch.bool).tril()
    return same_document & causal
