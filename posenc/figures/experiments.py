"""Figures for "A tiny transformer" and "Which encoding extrapolates? Measured".

All are drawn from the committed results files of the studies (``posenc/experiments/results/``):
language modelling (`posenc.experiments.length_extrapolation`), retrieval
(`posenc.experiments.retrieval`), context extension (`posenc.experiments.context_extension`)
and windows (`posenc.experiments.inference_windows`). The figures show the numbers the pages
print, never a re-run. Where several seeds were run, a marker is the mean and its bar spans the
lowest to the highest seed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from posenc.experiments import context_extension, inference_windows, retrieval
from posenc.experiments.length_extrapolation import load_results
from posenc.figures import figure
from posenc.figures._layout import narrow
from posenc.figures._style import FONT, line_colours, method_style, new_figure, palette

#: The two panels of the per-method figures: the methods of the first edition, and those after ALiBi.
GROUPS = {
    "RoPE, T5, ALiBi and earlier": ("none", "sinusoidal", "learned", "rope", "alibi", "t5"),
    "after ALiBi": ("rope-randomized", "xpos", "kerple", "fire", "cope"),
}


#: A row of a study panel: one method's results entry (the metric's mean, min and max at each
#: length) and the style of its line (colour, marker, label, width, ...).
StudyRow = tuple[dict[str, Any], dict[str, Any]]
#: A panel of `text_and_retrieval`: its rows, the evaluated lengths and the training length.
StudyPanel = tuple[list[StudyRow], list[int], int]


def _spread_line(ax: Axes, xs: list[int], entry: dict[str, Any], metric: str, style: dict[str, Any],
                 offset: float = 1.0, elinewidth: float = 1.2) -> None:
    """One row's mean with min–max bars, at the lengths where it was scored."""
    points = [(x * offset, m, lo, hi) for x, m, lo, hi in
              zip(xs, entry[metric], entry[f"{metric}_min"], entry[f"{metric}_max"]) if m is not None]
    x, mean, low, high = (np.asarray(v, dtype=float) for v in zip(*points))
    ax.errorbar(x, mean, yerr=[mean - low, high - mean], markersize=5, capsize=3, elinewidth=elinewidth, **style)


def study_line(style: dict[str, Any], *, reference: bool = False) -> dict[str, Any]:
    """``style`` for a row of `text_and_retrieval`: a study's own methods bold, the references
    they are set beside thinner and dashed."""
    return {**style, "ls": "--", "lw": 1.1} if reference else {**style, "lw": 1.8}


def text_and_retrieval(text: StudyPanel, recall: StudyPanel, *, height: float, title_suffix: str = "",
                       chance: float | None = None) -> Figure:
    """A study's two panels against evaluation length: perplexity on text (left, log scale) and
    MQAR accuracy (right; the chance level dotted where ``chance`` is given), the legend below.
    Each row's lengths are set a little sideways, in the order of the rows, so the bars stay apart."""
    fig, axes = new_figure(1, 2, height=height)
    for ax, (rows, lengths, train_length), metric in ((axes[0], text, "perplexity"), (axes[1], recall, "accuracy")):
        for i, (entry, style) in enumerate(rows):
            _spread_line(ax, lengths, entry, metric, style, offset=1.025 ** (i - (len(rows) - 1) / 2), elinewidth=1.0)
        _length_axis(ax, lengths, "characters" if metric == "perplexity" else "tokens", train_length)
        if metric == "perplexity":
            _log_ticks(ax, [v for entry, _ in rows for v in (*entry["perplexity_min"], *entry["perplexity_max"])])
    _text_and_retrieval_labels(axes, title_suffix)
    if chance is not None:
        axes[1].axhline(chance, color=palette().muted, lw=1, ls=":")
    _legend_below(fig, axes[:1], 2 if narrow() else 4)
    return fig


def _text_and_retrieval_labels(axes: Any, title_suffix: str = "") -> None:
    """Name a pair of panels: perplexity on text (left, log scale), MQAR accuracy (right, 0 to 1)."""
    axes[0].set_ylabel("perplexity (log scale)")
    axes[0].set_title(f"Language model{title_suffix}")
    axes[1].set_ylim(0, 1.05)
    axes[1].set_ylabel("MQAR accuracy")
    axes[1].set_title(f"Retrieval{title_suffix}")


def _legend_below(fig: Figure, axes: Sequence[Axes], columns: int, extra: Sequence[tuple[Any, str]] = ()) -> None:
    """One legend under the panels: the labelled lines of ``axes`` in order (matplotlib leaves
    out labels that start with "_"), then the ``extra`` (handle, label) pairs."""
    pairs = [*(pair for ax in axes for pair in zip(*ax.get_legend_handles_labels())), *extra]
    fig.legend([h for h, _ in pairs], [lab for _, lab in pairs], loc="outside lower center", ncols=columns,
               frameon=False, handletextpad=0.3, columnspacing=1.0)


def _length_axis(ax: Axes, lengths: list[int], unit: str, train_length: int | None = None) -> None:
    """A log-2 x axis with a tick at each evaluated length (and the training length dashed)."""
    ax.set_xscale("log", base=2)
    ax.set_xticks(lengths, [str(n) for n in lengths])
    ax.minorticks_off()
    if train_length is not None:
        ax.axvline(train_length, color=palette().muted, lw=1, ls="--")
    ax.set_xlabel(f"evaluation length ({unit})")


def _log_ticks(ax: Axes, values: list[float], axis: str = "y") -> None:
    """A log scale on ``axis`` with round tick labels spanning ``values`` (see `_nice_ticks`)."""
    ticks = _nice_ticks(values)
    if axis == "y":
        ax.set_yscale("log")
        ax.set_yticks(ticks, [f"{t:g}" for t in ticks])
    else:
        ax.set_xscale("log")
        ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
    ax.minorticks_off()


def _nice_ticks(values: list[float]) -> list[float]:
    """Round tick values spanning ``values`` on a log axis (at most about ten)."""
    low, high = min(values), max(values)
    candidates = [m * 10.0**e for e in range(-1, 5) for m in (1, 1.5, 2, 3, 4, 5, 7)]
    inside = [c for c in candidates if low * 0.85 <= c <= high * 1.15]
    step = max(1, -(-len(inside) // 10))
    return inside[::step]


@figure(
    "length-extrapolation",
    alt=(
        "Two panels of validation perplexity (log scale) against evaluation length, 64 to 512 "
        "characters, for models trained at 64, from the committed results: mean over three seeds with "
        "bars from the lowest to the highest seed. Left: none, sinusoidal, learned (one point), RoPE, "
        "ALiBi and T5's bias. Right: RoPE trained on randomized positions, xPos, KERPLE, FIRE and CoPE."
    ),
)
def length_extrapolation() -> Figure:
    results = load_results()
    lengths = results["eval_lengths"]
    fig, axes = new_figure(1, 2, height=4.6, sharey=True)
    for (title, group), ax in zip(GROUPS.items(), axes):
        for i, method in enumerate(group):
            # a small sideways offset per method keeps the min–max bars apart
            _spread_line(ax, lengths, results["methods"][method], "perplexity", {**method_style(method), "lw": 1.6},
                         offset=1.025 ** (i - 2.5))
        _length_axis(ax, lengths, "characters", results["config"]["train_length"])
        ax.set_title(title)
        _log_ticks(ax, [v for e in results["methods"].values() for v in
                        (*e["perplexity_min"], *e["perplexity_max"]) if v is not None])
        ax.legend(loc="best", fontsize=FONT["small"])
    axes[0].set_ylabel("validation perplexity (log scale)")
    return fig


@figure(
    "loss-by-position",
    alt=(
        "Two panels of mean loss against position inside the 512-character windows, averaged over "
        "three seeds, for every method; the training length of 64 is dashed. Lines that stay flat past "
        "it keep working at positions the model never saw."
    ),
)
def loss_by_position() -> Figure:
    results = load_results()
    bucket, train_length = results["config"]["position_bucket"], results["config"]["train_length"]
    longest = max(results["eval_lengths"])
    fig, axes = new_figure(1, 2, height=4.2, sharey=True)
    for (title, group), ax in zip(GROUPS.items(), axes):
        for method in group:
            runs = results["methods"][method]["runs"]
            curve = np.mean([run["position_loss"] for run in runs], axis=0)
            if curve.size * bucket < longest:
                continue  # the learned table stops at L
            centres = bucket * (np.arange(curve.size) + 0.5)
            style = method_style(method)
            ax.plot(centres, curve, color=style["color"], label=style["label"], lw=1.6)
        ax.axvline(train_length, color=palette().muted, lw=1, ls="--")
        ax.set_xlim(0, longest)
        ax.set_xlabel(f"position in a {longest}-character window")
        ax.set_title(title)
        ax.legend(fontsize=FONT["small"], loc="best")
    axes[0].set_ylabel("mean loss (nats per character)")
    return fig


def _per_seed_lines(ax: Axes, xs: list[int], method: str, runs: list[dict[str, Any]], metric: str) -> None:
    """One thin line per seed (the retrieval seeds split into learned and not learned, which a
    mean with a range would hide)."""
    style = method_style(method)
    for i, run in enumerate(runs):
        points = [(x, v) for x, v in zip(xs, run[metric]) if v is not None]
        px, py = zip(*points)
        ax.plot(px, py, color=style["color"], marker=style["marker"], markersize=5, lw=1.3,
                label=style["label"] if i == 0 else "_seed")


@figure(
    "retrieval-vs-length",
    alt=(
        "Two panels of MQAR accuracy against test length, 64 to 512 tokens, for models trained at 64: "
        "one line per seed (three per method), and the chance level dotted. Left: the methods of the "
        "first edition; right: those after ALiBi. Seeds either start near 1 or near 0.3."
    ),
)
def retrieval_vs_length() -> Figure:
    results = retrieval.load_results()
    lengths, train_length = results["eval_lengths"], results["config"]["train_length"]
    fig, axes = new_figure(1, 2, height=4.8, sharey=True)
    for (title, group), ax in zip(GROUPS.items(), axes):
        for method in group:
            _per_seed_lines(ax, lengths, method, results["methods"][method]["runs"], "accuracy")
        _length_axis(ax, lengths, "tokens", train_length)
        ax.axhline(results["chance"], color=palette().muted, lw=1, ls=":")
        ax.text(lengths[-1], results["chance"], "chance ", ha="right", va="bottom", fontsize=FONT["small"],
                color=palette().muted)
        ax.set_title(title)
    axes[0].set_ylim(0, 1.05)
    axes[0].set_ylabel("accuracy (one line per seed)")
    _legend_below(fig, axes, 4)
    return fig


@figure(
    "perplexity-vs-retrieval",
    alt=(
        "Scatter plot at eight times the training length: each method's mean perplexity on text (log "
        "scale, x) against the MQAR accuracy of each of its three seeds (y). Methods at the left keep a "
        "low perplexity; points near the top also retrieve distant tokens."
    ),
)
def perplexity_vs_retrieval() -> Figure:
    lm, recall = load_results(), retrieval.load_results()
    fig, ax = new_figure(1, 1, height=5.2)
    for method, entry in lm["methods"].items():
        if entry["perplexity"][-1] is None:
            continue
        accuracies = [run["accuracy"][-1] for run in recall["methods"][method]["runs"]]
        style = method_style(method)
        # seeds with the same accuracy would hide each other: set them side by side, 3% apart
        # on the log axis (the mean perplexity is the middle one), and let overlaps show through
        spread = [entry["perplexity"][-1] * 1.03 ** (i - (len(accuracies) - 1) / 2) for i in range(len(accuracies))]
        ax.plot(spread, accuracies, ls="none", markersize=7, alpha=0.85, **style)
    _log_ticks(ax, [e["perplexity"][-1] for e in lm["methods"].values() if e["perplexity"][-1] is not None], "x")
    ax.axhline(recall["chance"], color=palette().muted, lw=1, ls=":")
    longest = lm["eval_lengths"][-1]
    ax.set_xlabel(f"mean perplexity at {longest} characters (log scale; left is better)")
    ax.set_ylabel(f"MQAR accuracy at {longest} tokens, each seed")
    ax.set_ylim(0, 1.05)
    ax.set_title("At 8 × the training length: text vs retrieval")
    _legend_below(fig, [ax], 4)
    return fig


RULE_LABELS = {"none": "plain RoPE", "linear": "linear (PI)", "ntk": "NTK-aware", "dynamic": "dynamic NTK",
               "yarn": "YaRN", "llama3": "Llama 3"}


@figure(
    "context-extension",
    alt=(
        "Two panels for the trained RoPE models at 128, 256 and 512 tokens (twice to eight times their "
        "training length) with each scaling rule: left, perplexity on text (log scale); right, MQAR "
        "accuracy. Solid lines: no training, the factor matched to the length. Dashed lines: after a "
        "short fine-tune at 128 tokens with factor 2."
    ),
)
def context_extension_figure() -> Figure:
    results = context_extension.load_results()
    lengths = results["eval_lengths"]
    colours = palette().cycle
    fig, axes = new_figure(1, 2, height=4.6)
    for ax, task in zip(axes, ("lm", "retrieval")):  # the order `_text_and_retrieval_labels` names
        entry = results["tasks"][task]
        metric = entry["metric"]
        for i, rule in enumerate(entry["no_training"]):
            colour = colours[i % len(colours)]
            ax.plot(lengths, entry["no_training"][rule][metric], color=colour, marker="o", lw=1.6,
                    label=RULE_LABELS[rule])
            tuned = entry["fine_tuned"].get(rule)
            if tuned is not None:
                ax.plot(lengths, tuned[metric], color=colour, marker="s", ls="--", lw=1.4, label="_tuned")
        _length_axis(ax, lengths, "characters" if metric == "perplexity" else "tokens")
        if metric == "perplexity":
            _log_ticks(ax, [v for setting in ("no_training", "fine_tuned") for e in entry[setting].values()
                            for v in e[metric]])
    _text_and_retrieval_labels(axes)
    muted = palette().muted
    _legend_below(fig, axes[:1], 4, [(Line2D([], [], color=muted, marker="o"), "no training"),
                                     (Line2D([], [], color=muted, marker="s", ls="--"), "fine-tuned at 2L")])
    return fig


@figure(
    "windows-by-method",
    alt=(
        "Horizontal bars, one group per method, of perplexity at 512 characters (eight times the "
        "training length, log scale) with full attention, a sliding window of 64 keys, and 4 sinks "
        "plus a window of 60, means over three seeds."
    ),
)
def windows_by_method() -> Figure:
    results = inference_windows.load_results()
    methods = list(results["methods"])
    labels = list(results["methods"][methods[0]])
    colours = line_colours(len(labels))  # not the method colours: the bars are settings
    fig, ax = new_figure(1, 1, height=5.6)
    height = 0.8 / len(labels)
    rows = np.arange(len(methods))
    for i, label in enumerate(labels):
        values = [results["methods"][m][label]["perplexity"][0] for m in methods]
        ax.barh(rows + (i - (len(labels) - 1) / 2) * height, values, height=height, color=colours[i],
                label=label)
    ax.set_yticks(rows, [method_style(m)["label"] for m in methods], fontsize=FONT["small"])
    ax.invert_yaxis()
    _log_ticks(ax, [e[label]["perplexity"][0] for e in results["methods"].values() for label in labels], "x")
    ax.set_xlabel(f"perplexity at {results['length']} characters (log scale)")
    ax.legend(loc="lower right", fontsize=FONT["small"])
    return fig


@figure(
    "training-loss-by-method",
    alt=(
        "Training loss against training step for the eleven tiny transformers of the experiment (seed "
        "0), one line per position method with its marker on every sixth point, all trained on the same "
        "batches of 64-character windows."
    ),
)
def training_loss_by_method() -> Figure:
    results = load_results()
    fig, axes = new_figure(1, 2, height=4.0, sharey=True)
    for (title, group), ax in zip(GROUPS.items(), axes):
        for i, method in enumerate(group):
            run = results["methods"][method]["runs"][0]
            curve = np.asarray(run["train_curve"], dtype=float)
            steps = run["train_curve_block"] * (np.arange(curve.size) + 1)
            # the method's marker on every sixth point, each method starting at another: lines of
            # near hues that run close together (learned and ALiBi) differ by shape too
            ax.plot(steps, curve, lw=1.6, markersize=5, markevery=(3 + i, 6), **method_style(method))
        ax.set_xlabel("training step")
        ax.set_title(title)
        ax.legend(fontsize=FONT["small"])
    axes[0].set_ylabel("training loss (nats per character)")
    return fig
