"""Figures for "A tiny transformer" and "Which encoding extrapolates? Measured".

Both are drawn from the committed results file of the length-extrapolation experiment
(``posenc/experiments/results/length_extrapolation.json``), read with
`posenc.experiments.length_extrapolation.load_results`: the figures show the numbers the
pages print, never a re-run.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.figure import Figure

from posenc.experiments.length_extrapolation import load_results
from posenc.figures import figure
from posenc.figures._style import FONT, method_style, new_figure, palette


def _results_and_styles() -> tuple[dict[str, Any], list[str], dict[str, dict[str, Any]]]:
    """The committed results, their methods in order, and each method's line style (colour,
    marker and label from the site-wide method table)."""
    results = load_results()
    methods = list(results["methods"])
    return results, methods, {method: method_style(method) for method in methods}


@figure(
    "length-extrapolation",
    alt=(
        "Two panels from the committed experiment results. Left: validation perplexity of each "
        "position method at 1, 2, 4 and 8 times the training length of 64 characters; the learned "
        "table has a single point because it has no rows past 64. Right: loss by position inside "
        "the longest windows, with the training length marked."
    ),
)
def length_extrapolation() -> Figure:
    results, methods, styles = _results_and_styles()
    lengths = results["eval_lengths"]
    train_length = results["config"]["train_length"]
    bucket = results["config"]["position_bucket"]
    colours = palette()
    fig, (left, right) = new_figure(1, 2, height=4.4)

    for method in methods:
        entry = results["methods"][method]
        points = [(n, p) for n, p in zip(lengths, entry["perplexity"]) if p is not None]
        xs, ys = zip(*points)
        left.plot(xs, ys, markersize=6, **styles[method])
        curve = np.asarray(entry["position_loss"], dtype=float)
        centres = bucket * (np.arange(curve.size) + 0.5)
        right.plot(centres, curve, color=styles[method]["color"], label=styles[method]["label"])
    learned = results["methods"].get("learned")
    if learned is not None:
        point = (train_length, learned["perplexity"][0])
        left.annotate(f"learned: no rows\npast max_len = {learned['max_len']}",
                      xy=point, xytext=(train_length * 1.06, 0.6 * max(_scored(results))),
                      textcoords="data", fontsize=FONT["small"], color=colours.foreground, va="top",
                      arrowprops={"arrowstyle": "->", "color": colours.muted, "lw": 0.9})
    left.set_xscale("log", base=2)
    left.set_yscale("log")
    left.set_xticks(lengths, [str(n) for n in lengths])
    left.minorticks_off()
    ticks = _nice_ticks(_scored(results))
    left.set_yticks(ticks, [f"{t:g}" for t in ticks])
    left.set_xlabel("evaluation length (characters)")
    left.set_ylabel("validation perplexity (log scale)")
    left.set_title("Perplexity vs evaluation length")
    left.axvline(train_length, color=colours.muted, lw=1, ls="--")

    right.axvline(train_length, color=colours.muted, lw=1, ls="--")
    right.text(train_length * 1.08, 0.97, "training\nlength", transform=right.get_xaxis_transform(),
               fontsize=FONT["small"], color=colours.muted, va="top")
    right.set_xlabel(f"position in a {max(lengths)}-character window")
    right.set_ylabel("mean loss (nats per character)")
    right.set_title("Loss by position")
    right.set_xlim(0, max(lengths))
    handles, labels = left.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=(len(methods) + 1) // 2, frameon=False,
               handletextpad=0.3, columnspacing=1.0)
    return fig


def _scored(results: dict[str, Any]) -> list[float]:
    return [p for entry in results["methods"].values() for p in entry["perplexity"] if p is not None]


def _nice_ticks(values: list[float]) -> list[float]:
    """Round tick values spanning ``values`` on a log axis (at most about ten)."""
    low, high = min(values), max(values)
    candidates = [m * 10.0**e for e in range(-1, 5) for m in (1, 1.5, 2, 3, 4, 5, 7)]
    inside = [c for c in candidates if low * 0.85 <= c <= high * 1.15]
    step = max(1, -(-len(inside) // 10))
    return inside[::step]


@figure(
    "training-loss-by-method",
    alt=(
        "Training loss against training step for the six tiny transformers of the experiment, "
        "one line per position method, all trained on the same batches of 64-character windows; "
        "the lines for the methods that carry position information end close together."
    ),
)
def training_loss_by_method() -> Figure:
    results, methods, styles = _results_and_styles()
    fig, ax = new_figure(1, 1, height=3.8)
    for method in methods:
        entry = results["methods"][method]
        curve = np.asarray(entry["train_curve"], dtype=float)
        steps = entry["train_curve_block"] * (np.arange(curve.size) + 1)
        ax.plot(steps, curve, color=styles[method]["color"], label=styles[method]["label"])
    ax.set_xlabel("training step")
    ax.set_ylabel("training loss (nats per character)")
    ax.set_title(f"Training at length {results['config']['train_length']}, same batches for every method")
    ax.legend(ncols=3)
    return fig
