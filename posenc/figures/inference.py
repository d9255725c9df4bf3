"""Figures for "Positions at inference time".

Drawn from the committed results of the windows experiment
(``posenc/experiments/results/inference_windows.json``), read with
`posenc.experiments.inference_windows.load_results`: the figure shows the numbers the page
prints, never a re-run.
"""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from posenc.experiments.inference_windows import load_results
from posenc.figures import figure
from posenc.figures._style import FONT, new_figure, palette


def _short(label: str) -> str:
    return label.replace(", in-cache positions", "\n(in-cache pos.)").replace(" + ", " +\n")


@figure(
    "inference-windows",
    alt=(
        "Two panels from the committed results of the windows experiment on the RoPE model trained "
        "at 64 characters and scored at 512. Left: perplexity with full attention, a sliding window, "
        "and sinks plus a window, with positions as cached and re-assigned in the cache. Right: "
        "mean loss in each block of 64 positions for the same settings."
    ),
)
def inference_windows() -> Figure:
    results = load_results()
    rows = results["settings"]
    train_length = results["config"]["train_length"]
    colours = palette()
    cycle = colours.cycle
    fig, (left, right) = new_figure(1, 2, height=4.8)

    values = [row["perplexity"] for row in rows]
    positions = np.arange(len(rows))
    bars = left.barh(positions, values, color=[cycle[i % len(cycle)] for i in range(len(rows))])
    for bar, value in zip(bars, values):
        left.annotate(f"{value:.2f}", (bar.get_width(), bar.get_y() + bar.get_height() / 2), xytext=(4, 0),
                      textcoords="offset points", va="center", fontsize=FONT["small"], color=colours.foreground)
    left.set_yticks(positions, [_short(row["label"]) for row in rows], fontsize=FONT["small"])
    left.invert_yaxis()
    left.set_xlim(0, max(values) * 1.3)
    left.set_xlabel(f"perplexity at {results['length']} characters")
    left.set_title(f"RoPE model trained at L = {train_length}")

    for i, row in enumerate(rows):
        if row["key_positions"] == "in-cache":
            continue  # drawn on the left; the loss curves of the two choices nearly overlap
        curve = np.asarray(row["loss_by_block"], dtype=float)
        starts = train_length * np.arange(curve.size) + train_length / 2
        right.plot(starts, curve, marker="o", markersize=4, color=cycle[i % len(cycle)], label=row["label"])
    right.axvline(train_length, color=colours.muted, lw=1, ls="--")
    right.set_xlabel("position (mean over blocks of L)")
    right.set_ylabel("mean loss (nats per character)")
    right.set_title("Loss by position")
    handles, labels = right.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=len(labels), frameon=False,
               handletextpad=0.3, columnspacing=1.0)
    return fig
