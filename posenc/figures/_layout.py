"""The narrow layout of the figures (phones): which layout is being drawn, and fitting a drawn
figure to the narrow width (wrapping texts, narrowing legends). `new_figure` in ``_style.py``
reads `narrow` to stack its panels; the renderer draws every figure under `use_layout` in both
layouts and calls `fit_to_width` on the narrow one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.text import Text

#: Width of the narrow layout, in inches: 270 pt = 360 px, the column of a 390-px phone.
NARROW_WIDTH = 3.75
#: The two layouts every figure is drawn in (each in both palettes).
LAYOUTS = ("wide", "narrow")

_layout = "wide"


@contextmanager
def use_layout(name: str) -> Iterator[str]:
    """Draw in a layout: ``"wide"`` (the default) or ``"narrow"`` (see `new_figure`)."""
    global _layout
    if name not in LAYOUTS:
        raise ValueError(f"name must be one of {LAYOUTS}, got {name!r}")
    previous, _layout = _layout, name
    try:
        if name == "narrow":
            with _recording_legends():
                yield name
        else:
            yield name
    finally:
        _layout = previous


def narrow() -> bool:
    """Whether the figure being drawn is the narrow (phone) layout."""
    return _layout == "narrow"


def _wrap_to(text: Any, fits: Callable[[Any], bool], renderer: Any) -> None:
    """Break ``text`` at spaces, longest line first, until ``fits(extent)`` (or no break is left)."""
    content = text.get_text()
    while not fits(text.get_window_extent(renderer)):
        lines = content.split("\n")
        longest = max(range(len(lines)), key=lambda i: len(lines[i]))
        words = lines[longest].split(" ")
        if len(words) < 2:
            return
        # the break that leaves the longer half shortest
        cut = min(range(1, len(words)), key=lambda i: max(len(" ".join(words[:i])), len(" ".join(words[i:]))))
        lines[longest:longest + 1] = [" ".join(words[:cut]), " ".join(words[cut:])]
        content = "\n".join(lines)
        text.set_text(content)


def _wrappable_texts(fig: Figure) -> list[Any]:
    """Titles, axis and colour-bar labels, figure texts and annotations: every text but tick
    labels and legend entries (a legend is fitted by its columns)."""
    skip: set[int] = set()
    for ax in fig.axes:
        skip.update(id(t) for t in [*ax.get_xticklabels(which="both"), *ax.get_yticklabels(which="both")])
    for legend in _legends(fig):
        skip.update(id(t) for t in [*legend.get_texts(), legend.get_title()])
    return [t for t in fig.findobj(Text) if id(t) not in skip and t.get_visible() and " " in t.get_text()]


def _legends(fig: Figure) -> list[Any]:
    return list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]


def _narrower_legend(fig: Figure, legend: Any, columns: int) -> Any:
    """The same legend (arguments recorded by `_recording_legends`) with ``columns`` columns, in
    its place."""
    parent, handles, labels, args, kwargs = legend._posenc_init
    kwargs = {key: value for key, value in kwargs.items() if key != "ncol"}  # the older spelling wins over ncols=1
    new = Legend(parent, handles, labels, *args, **{**kwargs, "ncols": columns})
    if legend in fig.legends:
        fig.legends[fig.legends.index(legend)] = new
        new._remove_method = fig.legends.remove  # type: ignore[attr-defined]
    else:
        parent.legend_ = new
        new._remove_method = parent._remove_legend  # type: ignore[attr-defined]
    return new


@contextmanager
def _recording_legends() -> Iterator[None]:
    """Legends made inside remember their arguments, so that `fit_to_width` can remake them."""
    original = Legend.__init__

    def init(self: Any, parent: Any, handles: Any, labels: Any, *args: Any, **kwargs: Any) -> None:
        original(self, parent, handles, labels, *args, **kwargs)
        self._posenc_init = (parent, list(handles), list(labels), args, kwargs)

    Legend.__init__ = init  # type: ignore[method-assign]
    try:
        yield
    finally:
        Legend.__init__ = original  # type: ignore[method-assign]


def fit_to_width(fig: Figure) -> None:
    """Make a drawn figure fit its width: every text that runs past an edge (titles, axis labels,
    annotations) is wrapped at spaces, and every legend wider than the figure loses columns.
    Used on every narrow figure by the renderer (its legends are made under `use_layout`, which
    records how to remake them); harmless on a figure that fits."""
    for _ in range(3):  # wrapping or narrowing moves things: look again
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
        box = fig.bbox
        changed = False
        for legend in _legends(fig):
            if not hasattr(legend, "_posenc_init"):
                continue
            parent = legend._posenc_init[0]
            if parent in fig.axes and legend.get_window_extent(renderer).width > parent.bbox.width * 0.95 \
                    and sum(ax.get_legend() is not None for ax in fig.axes) == 1:
                legend = _below_figure(fig, legend)  # it would squeeze its axes to nothing
                fig.canvas.draw()
                changed = True
            columns = legend._ncols
            while columns > 1 and legend.get_window_extent(renderer).width > box.width * 0.98:
                columns -= 1
                legend = _narrower_legend(fig, legend, columns)
                fig.canvas.draw()
                changed = True
            texts = legend.get_texts()
            if texts and legend.get_window_extent(renderer).width > box.width * 0.98:
                # one column and still too wide: wrap the labels that are too long
                room = box.width * 0.98 - (legend.get_window_extent(renderer).width
                                           - max(t.get_window_extent(renderer).width for t in texts))
                for entry in texts:
                    before = entry.get_text()
                    _wrap_to(entry, lambda e: e.width <= room, renderer)
                    changed |= entry.get_text() != before
        if changed:  # legends first: a squeezed axes would wrap titles needlessly
            fig.canvas.draw()
        for text in _wrappable_texts(fig):
            before = text.get_text()
            if round(text.get_rotation()) % 180 == 90:  # a vertical label: fit the height
                _wrap_to(text, lambda e: box.y0 - 1 <= e.y0 and e.y1 <= box.y1 + 1 and e.height <= box.height * 0.98, renderer)
            else:
                _wrap_to(text, lambda e: box.x0 - 1 <= e.x0 and e.x1 <= box.x1 + 1 and e.width <= box.width * 0.98, renderer)
            changed |= text.get_text() != before
        if not changed:
            return


def _below_figure(fig: Figure, legend: Any) -> Any:
    """An axes legend remade as a figure legend under the panels, in one column."""
    parent, handles, labels, _, kwargs = legend._posenc_init
    legend.remove()
    keep = {key: kwargs[key] for key in ("title", "fontsize", "handlelength", "handletextpad") if key in kwargs}
    return fig.legend(handles, labels, loc="outside lower center", ncols=1, frameon=False, **keep)
