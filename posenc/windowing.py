"""Windowing: run a model with a length limit over a longer input, window by window.

A model with a hard ``max_len`` (a learned position table, for example) cannot take a longer
input in one pass. The remedy is to cut the input into overlapping windows of at most ``max_len``
tokens, advance by ``stride`` tokens, run each window on its own, and keep from each window only
the outputs of the tokens it sees for the first time. Every token's output is then kept exactly
once, and every token after the first window is computed with at least ``max_len - stride``
tokens of context before it.

Examples:
    >>> from posenc.windowing import window_spans
    >>> [(w.start, w.end, w.keep_from)
    ...  for w in window_spans(10, max_len=4, stride=3)]
    [(0, 4, 0), (3, 7, 4), (6, 10, 7)]
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor

from posenc._checks import check_int, check_tensor

__all__ = ["MAX_WINDOWS", "Window", "apply_in_windows", "window_spans"]

# A call that asks for more windows than this is a mistake (stride 1 over a huge length).
MAX_WINDOWS = 1_000_000


def window_spans(length: int, max_len: int, stride: int) -> list[Window]:
    """The windows that cover ``length`` tokens, at most ``max_len`` long, ``stride`` apart.

    The first window starts at token 0; each next one starts ``stride`` tokens later, until a
    window reaches the end. A window keeps the outputs of the tokens that no earlier window
    reached (``keep_from`` is the previous window's ``end``), so the kept ranges tile
    ``0:length`` with no gap and no overlap.

    Args:
        length: number of tokens in the input, at least 1.
        max_len: the longest input the model accepts, at least 1.
        stride: how far each window starts after the previous one, 1 to ``max_len``. Each
            window after the first sees at least ``max_len - stride`` tokens it does not keep,
            which serve as context for the ones it keeps.

    Returns:
        The windows, in order.

    Raises:
        TypeError: if an argument is not an integer.
        ValueError: if an argument is out of range, or the call would make more than
            1,000,000 windows.

    Examples:
        >>> [(w.start, w.end) for w in window_spans(5, max_len=8, stride=4)]
        [(0, 5)]
        >>> [(w.start, w.end, w.keep_from)
        ...  for w in window_spans(6, max_len=2, stride=2)]
        [(0, 2, 0), (2, 4, 2), (4, 6, 4)]
    """
    length = check_int("length", length, minimum=1)
    max_len = check_int("max_len", max_len, minimum=1)
    stride = check_int("stride", stride, minimum=1, maximum=max_len)
    count = 1 if length <= max_len else 1 + -(-(length - max_len) // stride)
    if count > MAX_WINDOWS:
        raise ValueError(
            f"length={length}, max_len={max_len} and stride={stride} would make {count} windows; "
            f"at most {MAX_WINDOWS} are allowed (use a larger stride)"
        )
    return _spans(length, max_len, stride, count)


# --8<-- [start:spans]
@dataclass(frozen=True)
class Window:
    """One window: the model sees tokens ``start:end`` and keeps outputs
    ``keep_from:end``."""

    start: int
    end: int
    keep_from: int


def _spans(length: int, max_len: int, stride: int,
           count: int) -> list[Window]:
    """``count`` windows, ``stride`` apart: each keeps what no earlier window
    reached."""
    windows = []
    kept_up_to = 0
    for index in range(count):
        start = index * stride
        end = min(start + max_len, length)
        windows.append(Window(start, end, kept_up_to))
        kept_up_to = end
    return windows
# --8<-- [end:spans]


def apply_in_windows(model: Callable[[Tensor], Tensor], x: Tensor, max_len: int,
                     stride: int) -> Tensor:
    """Run ``model`` over ``x`` window by window and stitch the kept outputs together.

    Args:
        model: maps a tensor ``[batch, window, ...]`` to an output ``[batch, window, ...]`` of
            the same window length (one output per input token).
        x: the input, ``[batch, seq, ...]`` (token ids or embeddings).
        max_len: the longest window ``model`` accepts.
        stride: how far each window starts after the previous one, 1 to ``max_len``.

    Returns:
        ``[batch, seq, ...]``: for each token, the output of the window that first reached it.

    Raises:
        TypeError: if ``model`` is not callable, ``x`` is not a real or integer tensor, or a size
            is not an integer.
        ValueError: if ``x`` has fewer than 2 dimensions or an empty sequence, a size is out of
            range, or ``model`` returns an output whose first two sizes differ from its input's.

    Examples:
        >>> import torch
        >>> x = torch.arange(7.0).reshape(1, 7)
        >>> apply_in_windows(lambda w: w - w[:, :1], x, max_len=3, stride=2)
        tensor([[0., 1., 2., 1., 2., 1., 2.]])
    """
    if not callable(model):
        raise TypeError(f"model must be callable (a module or a function of one tensor), "
                        f"got {type(model).__name__}")
    x = check_tensor("x", x, min_ndim=2)
    if x.dtype == torch.bool or x.is_complex():
        raise TypeError(f"x must hold token ids or real embeddings, got dtype {x.dtype}")
    if x.shape[1] == 0:
        raise ValueError(f"x must hold at least one token in dimension 1, got shape {tuple(x.shape)}")
    return _stitch(model, x, window_spans(x.shape[1], max_len, stride))


# --8<-- [start:apply]
def _stitch(model: Callable[[Tensor], Tensor], x: Tensor,
            windows: list[Window]) -> Tensor:
    """The outputs each window keeps, in order: ``[batch, seq, ...]``."""
    pieces = []
    for window in windows:
        chunk = x[:, window.start:window.end]
        out = model(chunk)
        if (not isinstance(out, Tensor)
                or tuple(out.shape[:2]) != tuple(chunk.shape[:2])):
            shape = (tuple(out.shape) if isinstance(out, Tensor)
                     else type(out).__name__)
            raise ValueError(
                f"model must return a tensor whose first two sizes match "
                f"its input {tuple(chunk.shape[:2])}, got {shape}"
            )
        pieces.append(out[:, window.keep_from - window.start:])
    return torch.cat(pieces, dim=1)
# --8<-- [end:apply]
