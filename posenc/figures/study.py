"""Figures for the later studies of "Which encoding extrapolates? Measured": today's hybrid designs,
training-free extension, the base against the context, and depth.

All are drawn from the committed results files (``posenc/experiments/results/``) of
`posenc.experiments.hybrid`, `posenc.experiments.training_free`, `posenc.experiments.base_context`
and `posenc.experiments.depth`. A marker is the mean over the seeds and its bar spans the lowest
to the highest seed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from posenc.experiments import base_context, context_extension, depth, hybrid, retrieval, training_free
from posenc.experiments._measures import evaluate
from posenc.experiments.length_extrapolation import load_results
from posenc.figures import figure
from posenc.figures._layout import narrow
from posenc.figures._style import FONT, line_colours, method_style, new_figure, palette
from posenc.figures.experiments import _legend_below, _length_axis, _log_ticks, _text_and_retrieval_labels

#: How the designs are named in legends, with a marker each (their colours come from the palette's
#: cycle, avoiding the method colours of RoPE, NoPE and ALiBi beside them).
DESIGN_LABELS = {"rnope-swa": "RNoPE-SWA", "irope": "iRoPE", "rope-sinks": "gpt-oss style (sinks)"}
DESIGN_MARKERS = {"rnope-swa": "D", "irope": "s", "rope-sinks": "X"}
#: How the training-free methods are named in legends.
REMAP_LABELS = {"rerope": "ReRoPE", "leaky-rerope": "Leaky ReRoPE", "self-extend": "Self-Extend",
                "dual-chunk": "Dual Chunk Attention", "string": "STRING"}


def _design_style(method: str) -> dict[str, Any]:
    """Colour, marker and label of a row of the hybrid study (a plain method keeps its own)."""
    if method not in DESIGN_LABELS:
        return method_style(method)
    cycle = palette().cycle
    colour = {"rnope-swa": cycle[0], "irope": cycle[1], "rope-sinks": cycle[5]}[method]
    return {"color": colour, "marker": DESIGN_MARKERS[method], "label": DESIGN_LABELS[method]}


def _errorbars(ax: Axes, xs: list[float], entry: dict[str, Any], metric: str, style: dict[str, Any],
               **kwargs: Any) -> None:
    """A mean with min–max bars at each x."""
    mean, low, high = (np.asarray(entry[key], dtype=float) for key in (metric, f"{metric}_min", f"{metric}_max"))
    ax.errorbar(xs, mean, yerr=[mean - low, high - mean], markersize=5, capsize=3, lw=1.6, elinewidth=1.1,
                **style, **kwargs)


@figure(
    "hybrid-designs",
    alt=(
        "Two panels for four-layer models trained at 64 tokens and tested at 64 to 512: left, perplexity "
        "on text (log scale); right, MQAR accuracy. One line per design (RNoPE-SWA, iRoPE, RoPE with "
        "sinks and alternating windows) and for RoPE, NoPE and ALiBi, means over three seeds with bars "
        "from the lowest to the highest seed."
    ),
)
def hybrid_designs() -> Figure:
    text, recall = hybrid.load_results("lm"), hybrid.load_results("retrieval")
    lengths = text["eval_lengths"]
    fig, axes = new_figure(1, 2, height=4.6)
    for ax, results, metric in ((axes[0], text, "perplexity"), (axes[1], recall, "accuracy")):
        for i, (method, entry) in enumerate(results["methods"].items()):
            xs = [n * 1.03 ** (i - 2.5) for n in lengths]  # a sideways offset keeps the bars apart
            _errorbars(ax, xs, entry, metric, _design_style(method))
        _length_axis(ax, lengths, "characters" if metric == "perplexity" else "tokens", lengths[0])
    _log_ticks(axes[0], [v for e in text["methods"].values() for v in (*e["perplexity_min"], *e["perplexity_max"])])
    _text_and_retrieval_labels(axes, ", 4 layers")
    axes[1].axhline(recall["chance"], color=palette().muted, lw=1, ls=":")
    _legend_below(fig, [axes[0]], 3)
    return fig


@figure(
    "training-free",
    alt=(
        "Two panels for the trained RoPE models at 64 to 512 tokens (one to eight times their training "
        "length): left, perplexity on text (log scale); right, MQAR accuracy. One line for the model as "
        "trained and one per training-free method (ReRoPE, Leaky ReRoPE, Self-Extend, Dual Chunk "
        "Attention, STRING), means over three seeds; YaRN without training is dashed for comparison."
    ),
)
def training_free_figure() -> Figure:
    results = training_free.load_results()
    extension = context_extension.load_results()["tasks"]
    lengths = results["eval_lengths"]
    cycle = palette().cycle
    colours = [cycle[i] for i in (0, 1, 3, 4, 5)]  # the cycle without RoPE's green
    fig, axes = new_figure(1, 2, height=4.6)
    for ax, (task, entry) in zip(axes, results["tasks"].items()):
        metric = entry["metric"]
        for i, (method, scores) in enumerate(entry["methods"].items()):
            style = method_style("rope") if method == "rope" else \
                {"color": colours[i - 1], "marker": "os^Dv"[i - 1], "label": REMAP_LABELS[method]}
            _errorbars(ax, [n * 1.03 ** (i - 2.5) for n in lengths], scores, metric, style)
        yarn = extension[task]
        ax.plot(lengths, [yarn["at_train_length"][metric][0], *yarn["no_training"]["yarn"][metric]],
                color=palette().muted, ls="--", lw=1.4, label="_yarn")
        _length_axis(ax, lengths, "characters" if metric == "perplexity" else "tokens", lengths[0])
        if metric == "perplexity":
            _log_ticks(ax, [v for e in entry["methods"].values() for v in (*e["perplexity_min"], *e["perplexity_max"])])
    _text_and_retrieval_labels(axes)
    _legend_below(fig, [axes[0]], 3, [(Line2D([], [], color=palette().muted, ls="--"), "YaRN, no training")])
    return fig


@figure(
    "rope-base",
    alt=(
        "Two panels for RoPE models trained at 64 tokens with bases from 50 to one million, means over "
        "three seeds. Left: MQAR accuracy at 64 tokens by the distance from the query back to its key, in "
        "buckets of 8 tokens. Right: perplexity on text at 64 to 512 characters (log scale). The legend "
        "gives each base and how far its B(m) stays non-negative."
    ),
)
def rope_base_figure() -> Figure:
    results = base_context.load_results()
    buckets, lengths = results["distance_buckets"], results["eval_lengths"]
    colours = line_colours(len(results["bases"]))
    fig, axes = new_figure(1, 2, height=4.8)
    centres = [(low + high) / 2 for low, high in buckets]
    horizon = max(lengths)
    for i, (colour, (key, entry)) in enumerate(zip(colours, results["bases"].items())):
        reach = f"{entry['context_length']}" if entry["context_length"] < horizon else f"{horizon}+"
        style = {"color": colour, "marker": "osD^vPX"[i % 7], "label": f"base {entry['base']:,.0f}: B ≥ 0 to {reach}"}
        shift = (i - (len(results["bases"]) - 1) / 2) * 0.5  # apart sideways, so that the bars do not hide each other
        _errorbars(axes[0], [c + shift for c in centres], entry, "accuracy_by_distance", style)
        _errorbars(axes[1], lengths, entry, "perplexity", {**style, "label": "_" + key})
    axes[0].set_xlabel("distance from the query to its key (tokens)")
    axes[0].set_ylabel(f"MQAR accuracy at {results['eval_lengths'][0]} tokens")
    axes[0].set_ylim(0, 1.05)
    axes[0].axhline(results["chance"], color=palette().muted, lw=1, ls=":")
    axes[0].set_title("Retrieval by distance")
    _length_axis(axes[1], lengths, "characters", lengths[0])
    _log_ticks(axes[1], [v for e in results["bases"].values() for v in (*e["perplexity_min"], *e["perplexity_max"])])
    axes[1].set_ylabel("perplexity (log scale)")
    axes[1].set_title("Text by length")
    bound = results["lower_bound"]["base"]
    _legend_below(fig, [axes[0]], 1 if narrow() else 2,
                  [(Line2D([], [], ls="none"), f"(lower bound of the base for {lengths[0]}: {bound:,.0f})")])
    return fig


@figure(
    "depth",
    alt=(
        "Left: for every model of the depth study, its MQAR accuracy at 512 tokens (eight times the "
        "training length) with the key-value pairs at the start, in the middle and at the end of the "
        "sequence, means over three seeds. Right: the same models' perplexity on text at 512 characters "
        "(log scale). A model that loses the middle shows its middle marker left of the other two."
    ),
)
def depth_figure() -> Figure:
    results = depth.load_results()
    rows = list(results["rows"])
    text = {m: e["perplexity"][-1] for m, e in load_results()["methods"].items()}
    text |= {f"rope + {m}": e["perplexity"][-1]
             for m, e in training_free.load_results()["tasks"]["lm"]["methods"].items()}
    text |= {f"{m} (4 layers)": e["perplexity"][-1] for m, e in hybrid.load_results("lm")["methods"].items()}
    places = list(results["depths"])
    colours = palette().cycle
    fig, axes = new_figure(1, 2, height=7.2, sharey=True, width_ratios=[3, 2], narrow_height=10.5)
    y = np.arange(len(rows))
    for i, place in enumerate(places):
        means = [results["rows"][row]["accuracy"][place]["accuracy"][-1] for row in rows]
        shown = [(m, j) for j, m in enumerate(means) if m is not None]
        axes[0].plot([m for m, _ in shown], [y[j] + (i - 1) * 0.22 for _, j in shown], ls="none",
                     marker="o^s"[i], markersize=6, color=colours[i], label=f"pairs at the {place}")
    axes[0].axvline(results["chance"], color=palette().muted, lw=1, ls=":")
    axes[0].set_xlim(0, 1.05)
    axes[0].set_xlabel(f"MQAR accuracy at {results['eval_lengths'][-1]} tokens")
    axes[0].set_yticks(y, rows, fontsize=FONT["small"])
    axes[0].invert_yaxis()
    bars = [(j, text[row]) for j, row in enumerate(rows) if text.get(row) is not None]
    axes[1].barh([j for j, _ in bars], [v for _, v in bars], height=0.6, color=palette().muted)
    _log_ticks(axes[1], [v for _, v in bars], "x")
    axes[1].set_xlabel(f"perplexity at {results['eval_lengths'][-1]} (log)")
    if narrow():
        axes[1].tick_params(labelleft=True)
        axes[1].set_yticks(y, rows, fontsize=FONT["small"])
    _legend_below(fig, [axes[0]], 3)
    return fig


#: The options of the chapter's "In short", one row each: a label, the measure of its text study and
#: of its MQAR study (names of `posenc.experiments.claims`), all at 8L of the same protocol.
AT_A_GLANCE = (
    ("RoPE as trained", "free.lm.rope", "free.recall.rope"),
    ("+ YaRN, no training", "ext.lm.yarn", "ext.recall.yarn"),
    ("+ ReRoPE", "free.lm.rerope", "free.recall.rerope"),
    ("+ Self-Extend", "free.lm.self-extend", "free.recall.self-extend"),
    ("+ Dual Chunk Attention", "free.lm.dual-chunk", "free.recall.dual-chunk"),
    ("+ STRING", "free.lm.string", "free.recall.string"),
    ("RoPE, base 1,000,000", "base.lm.1000000", "base.recall.1000000"),
    ("RoPE, 4 layers", "hlm.rope", "hrecall.rope"),
    ("RNoPE-SWA, 4 layers", "hlm.rnope-swa", "hrecall.rnope-swa"),
    ("iRoPE, 4 layers", "hlm.irope", "hrecall.irope"),
    ("gpt-oss style, 4 layers", "hlm.rope-sinks", "hrecall.rope-sinks"),
)


def _glance(rows: Sequence[tuple[str, str, str]], *, separator: float | None = None,
            recall_at_length: bool = False) -> Figure:
    """Two panels with one row per option at 8L: perplexity at 8L over perplexity at L (left,
    log scale) and MQAR accuracy at 8L (right, chance dotted). ``rows`` are (label, text measure,
    MQAR measure) names of `posenc.experiments.claims`; ``separator`` draws a rule between rows
    at that y; ``recall_at_length`` adds each row's accuracy at L as an open marker."""
    colours = palette()
    count = len(rows)
    fig, axes = new_figure(1, 2, height=0.3 * count + 1.5, sharey=True, narrow_height=0.5 * count + 3.5)
    y = np.arange(len(rows))
    labels = [row[0] for row in rows]
    for ax, expression, column in ((axes[0], "{}@8L / @L", 1), (axes[1], "{}@8L", 2)):
        measures = [evaluate(expression.format(row[column])) for row in rows]
        means = np.array([m.mean for m in measures])
        low, high = (np.array(bounds) for bounds in zip(*(m.spread() for m in measures)))
        ax.errorbar(means, y, xerr=[means - low, high - means], ls="none", marker="o", markersize=6,
                    capsize=3, color=colours.foreground, label="at 8L")
        ax.set_yticks(y, labels, fontsize=FONT["small"])
        if separator is not None:
            ax.axhline(separator, color=colours.muted, lw=1)  # darker than the grid: a rule
    if recall_at_length:
        at_length = [evaluate(f"{row[2]}@L").mean for row in rows]
        axes[1].plot(at_length, y, ls="none", marker="o", markersize=7, markerfacecolor="none",
                     color=colours.muted, label="at L")
        _legend_below(fig, [axes[1]], 2)
    axes[0].set_xscale("log")
    axes[0].axvline(1, color=colours.muted, lw=1, ls="--")
    _log_ticks(axes[0], [1.0, *(evaluate(f"{row[1]}@8L / @L").spread()[1] for row in rows)], "x")
    axes[0].set_xlabel("perplexity at 8L ÷ at L (log)")
    axes[0].set_title("Text: level is 1")
    axes[1].set_xlim(0, 1.05)
    axes[1].axvline(retrieval.load_results()["chance"], color=colours.muted, lw=1, ls=":")
    axes[1].set_xlabel("MQAR accuracy" if recall_at_length else "MQAR accuracy at 8L")
    axes[1].set_title("Retrieval: the pairs far back")
    axes[0].invert_yaxis()
    if narrow():
        axes[1].tick_params(labelleft=True)
        axes[1].set_yticks(y, labels, fontsize=FONT["small"])
    return fig


@figure(
    "extension-at-a-glance",
    alt=(
        "Two panels, one row per option at eight times the training length: the RoPE models as "
        "trained, with YaRN, ReRoPE, Self-Extend, Dual Chunk Attention or STRING, with base one "
        "million, and four-layer RoPE, RNoPE-SWA, iRoPE and gpt-oss-style models. Left: perplexity "
        "at 8L divided by perplexity at L (log scale; 1 is level). Right: MQAR accuracy at 8L. "
        "Means over three seeds with bars from the lowest to the highest seed."
    ),
)
def extension_at_a_glance() -> Figure:
    return _glance(AT_A_GLANCE, separator=6.5)  # the two-layer models above, the four-layer below


def _extrapolation_rows() -> list[tuple[str, str, str]]:
    """The first study's methods that run at 8L, ordered by how much their perplexity rose."""
    methods = [m for m in load_results()["methods"] if m != "learned"]  # no rows past L
    methods.sort(key=lambda m: evaluate(f"lm.{m}@8L / @L").mean)
    return [(method_style(m)["label"], f"lm.{m}", f"recall.{m}") for m in methods]


@figure(
    "extrapolation-at-a-glance",
    alt=(
        "Two panels, one row per position method of the first study (all but the learned table, "
        "which cannot run past its rows), ordered by how much their perplexity rose. Left: "
        "perplexity at eight times the training length divided by perplexity at the training length "
        "(log scale; 1 is level). Right: MQAR accuracy at eight times the training length (filled) "
        "and at the training length (open). Means over three seeds with bars from the lowest to the "
        "highest seed."
    ),
)
def extrapolation_at_a_glance() -> Figure:
    return _glance(_extrapolation_rows(), recall_at_length=True)
