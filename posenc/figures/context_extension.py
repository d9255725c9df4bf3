"""Figures for the chapter on context extension: which angles a longer input reaches, and what each
scaling rule (position interpolation, NTK-aware, dynamic NTK, YaRN, Llama 3.1's) does to the
wavelength of every rotation pair."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch
from matplotlib.figure import Figure

from posenc.figures import figure
from posenc.figures._layout import narrow
from posenc.figures._style import new_figure, palette
from posenc.rope import rope_inverse_frequencies

# The context-extension example: a LLaMA-2-like head (dim 128, base 10000) trained on 4096 positions,
# extended 4 times. Llama 3.1 uses its own published setting.
DIM, BASE, TRAINED, FACTOR = 128, 10000.0, 4096, 4.0
LLAMA3 = {"type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
          "original_max_position_embeddings": 8192}
LLAMA3_BASE = 500000.0
LLAMA3_MAX_LENGTH = 131072  # max_position_embeddings of the released Llama 3.1 configuration
SCALINGS: dict[str, dict[str, object]] = {
    "linear": {"type": "linear", "factor": FACTOR},
    "ntk": {"type": "ntk", "factor": FACTOR},
    "dynamic": {"type": "dynamic", "factor": FACTOR, "original_max_position_embeddings": TRAINED},
    "yarn": {"type": "yarn", "factor": FACTOR, "original_max_position_embeddings": TRAINED},
    "llama3": LLAMA3,
}


def _wavelengths(theta: torch.Tensor) -> np.ndarray:
    return (2 * math.pi / theta).numpy()


def _context_axes(title: str, trained: int, extended: float,
                  extended_label: str = "target length") -> tuple[Figure, Any]:
    colours = palette()
    fig, ax = new_figure(1, 1, height=3.5, narrow_height=4.2)
    ax.set_yscale("log")
    ax.axhline(trained, color=colours.muted, ls="--", lw=1.1)
    ax.axhline(extended, color=colours.muted, ls=":", lw=1.3)
    ax.text(1, trained * 1.15, f"trained length {trained}", color=colours.foreground, fontsize=9.5)
    ax.text(1, extended * 1.15, f"{extended_label} {int(extended)}", color=colours.foreground, fontsize=9.5)
    ax.set_xlabel("rotation pair i (fast → slow)")
    ax.set_ylabel("wavelength 2π/θᵢ (positions)")
    ax.set_title(title)
    return fig, ax


@figure(
    "context-unseen-angles",
    alt=("Two lines, on a log scale, of the largest angle in turns that each of the 64 rotation pairs reaches "
         "within 4096 positions (the training length) and within 16384: fast pairs make hundreds of turns, "
         "while pairs from index 46 on never complete one turn in training, so longer inputs give them "
         "angles never seen."),
)
def unseen_angles() -> Figure:
    colours = palette()
    theta = rope_inverse_frequencies(DIM, base=BASE)
    turns_trained = (TRAINED - 1) * theta / (2 * math.pi)
    turns_long = (FACTOR * TRAINED - 1) * theta / (2 * math.pi)  # the chapter's 4x longer input
    pairs = np.arange(DIM // 2)
    fig, ax = new_figure(1, 1, height=3.5, narrow_height=4.6)
    ax.set_yscale("log")
    ax.plot(pairs, turns_long.numpy(), color=colours.cycle[1], label=f"positions up to {int(FACTOR * TRAINED)}")
    ax.plot(pairs, turns_trained.numpy(), color=colours.cycle[0], label=f"positions up to {TRAINED} (training)")
    ax.axhline(1.0, color=colours.muted, ls="--", lw=1.1)
    ax.text(1, 1.2, "one full turn", color=colours.foreground, fontsize=9.5)
    first = int(torch.nonzero(turns_trained < 1)[0])
    ax.axvspan(first - 0.5, DIM // 2 - 0.5, color=colours.cycle[1], alpha=0.12, lw=0)
    # on a phone the band is narrower than the words: end them at the band's right edge instead
    x, align = (DIM // 2 - 1, "right") if narrow() else (first + 0.5, "left")
    ax.text(x, 30, "angles past training\nare new to these pairs", color=colours.foreground, fontsize=9.5, ha=align)
    ax.set_xlabel("rotation pair i (fast → slow), head dim 128, base 10000")
    ax.set_ylabel("largest angle reached (turns)")
    ax.set_title("How far each pair turns over the context")
    if narrow():  # inside the narrow axes the legend would cover the lines' ends
        fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", frameon=False)
    else:
        ax.legend(loc="lower left")
    return fig


# The rules of the chapter's table, drawn together at the top of the page: label and line style.
AT_A_GLANCE = (("linear", "position interpolation", "--"), ("ntk", "NTK-aware", "-."),
               ("dynamic", f"dynamic NTK at {int(FACTOR * TRAINED)}", ":"), ("yarn", "YaRN", "-"),
               ("llama3", "Llama 3.1 (base 500000, L 8192)", (0, (5, 1, 1, 1))))


def _slowed(kind: str) -> np.ndarray:
    """How much the rule `kind` of AT_A_GLANCE divides each pair's frequency (dynamic NTK at 4x)."""
    base = LLAMA3_BASE if kind == "llama3" else BASE
    seq_len = int(FACTOR * TRAINED) if kind == "dynamic" else None
    after = rope_inverse_frequencies(DIM, base=base, scaling=SCALINGS[kind], seq_len=seq_len)
    return (rope_inverse_frequencies(DIM, base=base) / after).numpy()


@figure(
    "context-rules-at-a-glance",
    alt=("Line plot, on a log scale, of how much each rule divides the frequency of each of the 64 "
         "rotation pairs of a 128-wide head (base 10000, trained on 4096 positions, factor 4): position "
         "interpolation divides every pair by 4; NTK-aware scaling rises from 1 at the fastest pair to 4 "
         "at the slowest; dynamic NTK at 16384 positions rises to {dynamic_top}; YaRN keeps the fast pairs at 1, "
         "divides the slow ones by 4 and ramps between; Llama 3.1 with its own settings keeps the fast "
         "pairs, divides the slow ones by 8 and blends a few between.").format(
        dynamic_top=round(float(_slowed("dynamic").max()))),
)
def rules_at_a_glance() -> Figure:
    colours = palette()
    fig, ax = new_figure(1, 1, height=3.5, narrow_height=4.6)
    pairs = np.arange(DIM // 2)
    top = 1.0
    for j, (kind, label, style) in enumerate(AT_A_GLANCE):
        slower = _slowed(kind)
        top = max(top, float(slower.max()))
        ax.plot(pairs, slower, color=colours.cycle[1 + j], ls=style, lw=1.6, label=label)
    ax.set_yscale("log", base=2)
    # powers of two up to the largest divisor, and the largest itself (dynamic NTK's, not a power)
    ticks = [2 ** k for k in range(int(math.log2(top)) + 1)]
    if round(top) not in ticks:
        ticks.append(round(top))
    ax.set_yticks(ticks, [f"{t}" for t in ticks])
    ax.minorticks_off()
    ax.set_xlabel("rotation pair i (fast → slow)")
    ax.set_ylabel("frequency divided by")
    ax.set_title("How much each rule slows each pair")
    fig.legend(loc="outside lower center", ncols=1 if narrow() else 2, frameon=False)
    return fig


def _method_figure(kind: str) -> Figure:
    colours = palette()
    scaling = SCALINGS[kind]
    base = LLAMA3_BASE if kind == "llama3" else BASE
    trained = int(scaling.get("original_max_position_embeddings", TRAINED))  # type: ignore[call-overload]
    factor = float(scaling["factor"])  # type: ignore[arg-type]
    pairs = np.arange(DIM // 2)
    before = rope_inverse_frequencies(DIM, base=base)
    titles = {
        "linear": f"Position interpolation: every wavelength × {FACTOR:g}",
        "ntk": f"NTK-aware: base {BASE:g} → {BASE * FACTOR ** (DIM / (DIM - 2)):.0f}; slowest pair × {FACTOR:g}",
        "dynamic": "Dynamic NTK: the base grows with the current length",
        "yarn": f"YaRN: fast pairs kept, slow pairs × {FACTOR:g}, a ramp between",
        "llama3": "Llama 3.1: kept below 2048, ×8 above 8192, blended between",
    }
    if kind == "llama3":  # the released config: factor 8, but 131072 = 16 x 8192 positions
        fig, ax = _context_axes(titles[kind], trained, LLAMA3_MAX_LENGTH, "max length")
    else:
        fig, ax = _context_axes(titles[kind], trained, trained * factor)
    ax.plot(pairs, _wavelengths(before), color=colours.cycle[0], label=f"original (base {base:g})")
    if kind == "dynamic":
        for j, seq_len in enumerate((TRAINED, 2 * TRAINED, 4 * TRAINED, 8 * TRAINED)):
            after = rope_inverse_frequencies(DIM, base=base, scaling=scaling, seq_len=seq_len)
            if seq_len > TRAINED:
                ax.plot(pairs, _wavelengths(after), color=colours.cycle[1 + j], lw=1.3,
                        label=f"current length {seq_len}")
    else:
        after = rope_inverse_frequencies(DIM, base=base, scaling=scaling)
        ax.plot(pairs, _wavelengths(after), color=colours.cycle[1], ls="-", label="after scaling")
    if kind == "llama3":
        threshold = trained / float(LLAMA3["high_freq_factor"])  # type: ignore[arg-type]
        if narrow():  # no room beside the curves: the line is named in the legend, under the plot
            ax.axhline(threshold, color=colours.cycle[2], lw=0.9, ls="-.", label=f"{threshold:g} = L / high_freq_factor")
            fig.legend(loc="outside lower center", ncols=1, frameon=False)
            return fig
        ax.axhline(threshold, color=colours.cycle[2], lw=0.9, ls="-.")
        ax.text(36, threshold * 0.55, f"{threshold:g} = L / high_freq_factor\n(L / low_freq_factor = {trained})",
                color=colours.foreground, fontsize=9.5, va="top")
    ax.legend(loc="lower right")
    return fig


def _register(kind: str, alt: str) -> None:
    def draw() -> Figure:
        return _method_figure(kind)
    draw.__name__ = f"context_{kind}"
    draw.__module__ = __name__
    figure(f"context-{kind}", alt=alt)(draw)


CONTEXT_ALTS: Mapping[str, str] = {
    "linear": ("Log-scale plot of the wavelength of each of the 64 rotation pairs before and after position "
               "interpolation by 4: the whole curve moves up by a factor of 4."),
    "ntk": ("Log-scale plot of per-pair wavelengths before and after the NTK-aware base change by 4: the "
            "fastest pairs are nearly unchanged and the slowest pair's wavelength is 4 times longer."),
    "dynamic": ("Log-scale plot of per-pair wavelengths for dynamic NTK scaling at current lengths 8192, 16384 "
                "and 32768: at or below the trained length nothing changes, and the slow pairs stretch more "
                "as the input grows."),
    "yarn": ("Log-scale plot of per-pair wavelengths before and after YaRN with factor 4: pairs that turn more "
             "than 32 times in 4096 positions are unchanged, pairs that turn less than once are stretched 4 "
             "times, and a ramp joins the two."),
    "llama3": ("Log-scale plot of per-pair wavelengths before and after Llama 3.1 scaling (factor 8, trained "
               "length 8192): wavelengths under 2048 are kept, those over 8192 are 8 times longer, and the "
               "ones between are blended."),
}
for _kind, _alt in CONTEXT_ALTS.items():
    _register(_kind, _alt)
