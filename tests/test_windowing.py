"""Tests of posenc.windowing: the windows tile the input, and stitching keeps each output once."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc.windowing import MAX_WINDOWS, apply_in_windows, window_spans


@st.composite
def sizes(draw: st.DrawFn) -> tuple[int, int, int]:
    max_len = draw(st.integers(1, 40))
    stride = draw(st.integers(1, max_len))
    length = draw(st.integers(1, 200))
    return length, max_len, stride


@settings(max_examples=200, deadline=None)
@given(sizes())
def test_windows_tile_the_input(case: tuple[int, int, int]) -> None:
    length, max_len, stride = case
    windows = window_spans(length, max_len, stride)
    kept = [t for w in windows for t in range(w.keep_from, w.end)]
    assert kept == list(range(length))                  # every token kept once, in order
    assert windows[0].start == 0 and windows[-1].end == length
    for previous, window in zip(windows, windows[1:]):
        assert window.start - previous.start == stride
        assert window.keep_from == previous.end
        assert window.keep_from - window.start >= max_len - stride   # context before the kept part
    for window in windows:
        assert 1 <= window.end - window.start <= max_len
        assert window.start <= window.keep_from < window.end


def test_windows_match_a_plain_loop() -> None:
    # Independent reference: slide a window by hand until it reaches the end.
    length, max_len, stride = 23, 8, 5
    expected = []
    start, done = 0, 0
    while True:
        end = min(start + max_len, length)
        expected.append((start, end, done))
        done = end
        if end == length:
            break
        start += stride
    assert [(w.start, w.end, w.keep_from) for w in window_spans(length, max_len, stride)] == expected


@settings(max_examples=100, deadline=None)
@given(sizes(), st.integers(1, 3))
def test_apply_in_windows_keeps_each_output_once(case: tuple[int, int, int], batch: int) -> None:
    length, max_len, stride = case
    x = torch.randn(batch, length, 3)
    # A model whose output for a token depends only on that token gives the unwindowed result.
    assert torch.equal(apply_in_windows(lambda w: 2 * w, x, max_len, stride), 2 * x)

    # A model that reports each token's index inside its window: the output is the index of the
    # token minus the start of the window that kept it.
    def index_in_window(w: torch.Tensor) -> torch.Tensor:
        if w.shape[1] > max_len:
            raise AssertionError("window longer than max_len")
        return torch.arange(w.shape[1]).expand(w.shape[0], -1)

    out = apply_in_windows(index_in_window, x, max_len, stride)
    starts = torch.empty(length, dtype=torch.long)
    for window in window_spans(length, max_len, stride):
        starts[window.keep_from:window.end] = window.start
    assert torch.equal(out, (torch.arange(length) - starts).expand(batch, -1))


def test_windowed_learned_model_runs_past_max_len() -> None:
    from posenc.learned import LearnedPositionalEmbedding

    table = LearnedPositionalEmbedding(max_len=8, dim=4)
    x = torch.zeros(1, 20, 4)
    with pytest.raises(ValueError):
        table(x)
    with torch.no_grad():
        out = apply_in_windows(table, x, max_len=8, stride=6)
    assert out.shape == (1, 20, 4)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"length": 0, "max_len": 4, "stride": 2}, ValueError, "length must be an integer >= 1, got 0"),
        ({"length": 5, "max_len": 0, "stride": 1}, ValueError, "max_len must be an integer >= 1, got 0"),
        ({"length": 5, "max_len": 4, "stride": 5}, ValueError, "stride must be an integer <= 4, got 5"),
        ({"length": 5, "max_len": 4, "stride": 0}, ValueError, "stride must be an integer >= 1, got 0"),
        ({"length": 5.0, "max_len": 4, "stride": 2}, TypeError, "length must be an integer"),
        ({"length": 5, "max_len": True, "stride": 1}, TypeError, "max_len must be an integer"),
        ({"length": 5, "max_len": 4, "stride": "2"}, TypeError, "stride must be an integer"),
        ({"length": 10**12, "max_len": 4, "stride": 1}, ValueError, "windows; at most"),
    ],
)
def test_window_spans_rejects_bad_input(kwargs: dict[str, object], error: type[Exception],
                                        message: str) -> None:
    with pytest.raises(error, match=message):
        window_spans(**kwargs)  # type: ignore[arg-type]


def test_max_windows_is_allowed_exactly() -> None:
    # The bound is computed, not allocated past: MAX_WINDOWS windows is fine, one more is refused.
    assert len(window_spans(MAX_WINDOWS, max_len=1, stride=1)) == MAX_WINDOWS
    with pytest.raises(ValueError, match="windows; at most"):
        window_spans(MAX_WINDOWS + 1, max_len=1, stride=1)


def test_apply_in_windows_rejects_bad_input() -> None:
    with pytest.raises(TypeError, match="x must be a torch.Tensor"):
        apply_in_windows(lambda w: w, [[1.0]], max_len=2, stride=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="x must have at least 2 dimensions"):
        apply_in_windows(lambda w: w, torch.zeros(5), max_len=2, stride=1)
    with pytest.raises(ValueError, match="x must hold at least one token"):
        apply_in_windows(lambda w: w, torch.zeros(1, 0, 3), max_len=2, stride=1)
    with pytest.raises(ValueError, match="model must return a tensor whose first two sizes"):
        apply_in_windows(lambda w: w[:, :1], torch.zeros(1, 5), max_len=2, stride=1)
    with pytest.raises(ValueError, match="model must return a tensor whose first two sizes"):
        apply_in_windows(lambda w: 3, torch.zeros(1, 5), max_len=2, stride=1)  # type: ignore[arg-type,return-value]
    with pytest.raises(ValueError, match="stride must be an integer <= 2"):
        apply_in_windows(lambda w: w, torch.zeros(1, 5), max_len=2, stride=3)
