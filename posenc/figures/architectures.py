"""Figures for "Positions in today's architectures".

Every number comes from posenc: the layer patterns and windows from the configs of
``posenc/zoo`` (published files copied whole, or rebuilt from named sources) read by
`posenc.configs.read_config`, the temperatures from `posenc.temperature.attention_temperature`,
the attention rows from `posenc.attention.scaled_dot_product_attention`, the cache widths from
`posenc.latent.latent_cache_widths` and the entries a layer keeps from `posenc.spans.AttentionSpan`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import torch
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from posenc.attention import scaled_dot_product_attention
from posenc.figures import figure
from posenc.figures._style import FONT, method_colour, new_figure, palette, show_matrix
from posenc.figures._layout import narrow
from posenc.latent import latent_cache_widths
from posenc.configs import ConfigRope, read_config
from posenc.spans import AttentionSpan
from posenc.temperature import attention_temperature

ZOO = Path(__file__).resolve().parents[1] / "zoo"


def zoo_config(name: str) -> dict[str, Any]:
    """A config of ``posenc/zoo``, without the zoo's own ``_`` notes."""
    entry = json.loads((ZOO / f"{name}.json").read_text(encoding="utf-8"))
    return {key: value for key, value in entry.items() if not key.startswith("_")}


# ---------------------------------------------------------------- layer patterns

#: The kinds of layer the pattern figure tells apart, in legend order.
KINDS = ("RoPE, full attention", "RoPE, window or chunk", "NoPE, full attention", "linear attention (no positions)")
#: (zoo file, label) of the models in the pattern figure, top to bottom.
PATTERN_MODELS = (
    ("llama-4-scout-17b-16e-instruct", "Llama 4 Scout"),
    ("gpt-oss-120b", "gpt-oss-120b"),
    ("gemma-3-27b-it", "Gemma 3 27B"),
    ("c4ai-command-r7b-12-2024", "Command R7B"),
    ("smollm3-3b", "SmolLM3 3B"),
    ("modernbert-base", "ModernBERT base"),
    ("qwen3-next-80b-a3b-instruct", "Qwen3-Next 80B"),
    ("deepseek-v3", "DeepSeek-V3"),
)


def layer_kinds(rope: ConfigRope) -> list[int]:
    """The kind (index into `KINDS`) of each layer of a config read by `read_config`."""
    kinds = []
    for name in rope.pattern:
        layer = rope.layers[name]
        if layer.rotates:
            local = layer.window is not None or layer.layer_type in ("sliding_attention", "chunked_attention")
            kinds.append(1 if local else 0)
        else:
            kinds.append(3 if layer.layer_type == "linear_attention" else 2)
    return kinds


def _kind_colours() -> list[str]:
    colours = palette()
    rope = method_colour("rope")
    return [rope, colours.cycle[0], method_colour("none"), colours.cycle[4]]


@figure(
    "architectures-layer-patterns",
    alt=("One row per model, one cell per layer, coloured by what the layer does with positions, read from "
         "their configs in posenc's zoo: Llama 4 Scout repeats three chunked RoPE layers and one NoPE layer; "
         "gpt-oss-120b alternates windowed and full RoPE layers; Gemma 3 27B has five windowed RoPE layers per "
         "full RoPE layer; Command R7B three windowed RoPE layers per NoPE layer; SmolLM3 three full RoPE "
         "layers per NoPE layer; ModernBERT one full RoPE layer then two windowed ones; Qwen3-Next three "
         "linear-attention layers per full RoPE layer; DeepSeek-V3 RoPE with full attention in every layer."),
)
def layer_patterns() -> Figure:
    colours = palette()
    rows = [layer_kinds(read_config(zoo_config(name))) for name, _ in PATTERN_MODELS]
    shown = 24 if narrow() else max(len(row) for row in rows)  # a phone shows the first 24 layers
    grid = np.full((len(rows), shown), np.nan)
    for i, row in enumerate(rows):
        grid[i, :min(shown, len(row))] = row[:shown]
    fig, ax = new_figure(1, 1, height=4.4, narrow_height=5.4)
    cmap = ListedColormap(_kind_colours()).with_extremes(bad=colours.background)
    ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, vmin=-0.5, vmax=3.5, aspect="auto", interpolation="nearest")
    ax.set_yticks(range(len(rows)), [f"{label} ({len(row)})" for (_, label), row in zip(PATTERN_MODELS, rows)])
    ax.set_xticks(np.arange(-0.5, shown), minor=True)
    ax.set_yticks(np.arange(-0.5, len(rows)), minor=True)
    ax.grid(False)
    ax.grid(which="minor", color=colours.background, lw=1.5 if shown > 40 else 2.5, axis="both")
    ax.tick_params(which="minor", length=0)
    step = 4 if narrow() else 8
    ax.set_xticks(range(0, shown, step), [str(i) for i in range(0, shown, step)])
    ax.set_xlabel(f"layer (the first {shown})" if narrow() else "layer (the number of layers in brackets)")
    handles = [Patch(color=c, label=k) for c, k in zip(_kind_colours(), KINDS)]
    fig.legend(handles=handles, loc="outside lower center", ncols=2, frameon=False, handlelength=1.2)
    return fig


# ---------------------------------------------------------------- temperature

#: (zoo file, label) of the models whose queries carry a temperature.
TEMPERATURE_MODELS = (
    ("llama-4-scout-17b-16e-instruct", "Llama 4 (NoPE layers)"),
    ("ministral-3-3b-2512", "Ministral 3 3B"),
    ("devstral-small-2-24b-instruct-2512", "Devstral Small 2"),
)


def temperature_settings(name: str) -> tuple[float, int, int]:
    """``(beta, length, offset)`` of the query temperature a zoo config declares."""
    for layer in read_config(zoo_config(name)).layers.values():
        found = layer.temperature
        if found is None:
            continue
        if found["rule"] == "llama4_nope_tuning":
            return float(found["attn_scale"]), int(found["floor_scale"]), 1
        return float(found["beta"]), int(found["length"]), 0
    raise ValueError(f"{name}: no layer with a query temperature")


#: The logit of the key a query matches, every other key's logit being 0 (the needle demonstration).
NEEDLE_LOGIT = 10.0


def needle_weight(keys: np.ndarray, factor: np.ndarray) -> np.ndarray:
    """Softmax weight on one key of logit ``factor * NEEDLE_LOGIT`` among ``keys`` keys, the others at 0."""
    top = np.exp(factor * NEEDLE_LOGIT)
    return top / (top + keys - 1)


@figure(
    "architectures-temperature",
    alt=("Two panels with a logarithmic position axis from 1 thousand to 10 million. Left: the factor on the "
         "queries. Llama 4's NoPE layers and Devstral Small 2 stay at 1 up to position 8191, Ministral 3 up "
         "to 16383, then each steps up at every multiple of its length, to about 1.5 at 10 million for Llama 4. "
         "Right: the softmax weight on one key whose logit is 10 when every other key's is 0, for a query "
         "at the last position: without the temperature it falls from about 0.7 at 8 thousand keys to "
         "below 0.01 at 10 million; with Llama 4's temperature it stays above 0.5."),
)
def temperature_curve() -> Figure:
    colours = palette()
    positions = np.unique(np.geomspace(1000, 10**7, 400).astype(np.int64))
    fig, (left, right) = new_figure(1, 2, height=3.6)
    lines = [colours.cycle[0], colours.cycle[1], colours.cycle[2]]
    for (name, label), colour, style in zip(TEMPERATURE_MODELS, lines, ("-", "-", ":")):
        beta, length, offset = temperature_settings(name)
        factor = attention_temperature(torch.from_numpy(positions), beta=beta, length=length, offset=offset).numpy()
        left.plot(positions, factor, color=colour, label=label, drawstyle="steps-post", ls=style,
                  lw=2.4 if style == ":" else 1.6)
    left.set_xscale("log")
    left.set_xlabel("query position p")
    left.set_ylabel("factor on the query")
    left.set_title("1 + β log(1 + floor((p + offset) / L))")
    left.legend(frameon=False, fontsize=FONT["small"], loc="upper left", handlelength=1.6)

    beta, length, offset = temperature_settings("llama-4-scout-17b-16e-instruct")
    factor = attention_temperature(torch.from_numpy(positions - 1), beta=beta, length=length, offset=offset).numpy()
    right.plot(positions, needle_weight(positions, np.ones_like(factor)), color=colours.muted,
               label="plain softmax", ls="--")
    right.plot(positions, needle_weight(positions, factor), color=lines[0], label="with Llama 4's temperature")
    right.set_xscale("log")
    right.set_ylim(0, 1)
    right.set_xlabel("keys the query sees (its position + 1)")
    right.set_ylabel("weight on the matching key")
    right.set_title(f"one key of logit {NEEDLE_LOGIT:g}, the others 0")
    right.legend(frameon=False, fontsize=FONT["small"], loc="lower left")
    return fig


# ---------------------------------------------------------------- sinks

#: The sink logit of the sinks figure, and its number of tokens.
SINK_LOGIT, SINK_TOKENS = 1.5, 12


def sink_example(sink: float | None) -> torch.Tensor:
    """Causal attention weights ``[tokens, tokens]`` of one head with random q and k, with a sink logit or without."""
    generator = torch.Generator().manual_seed(3)
    q = torch.randn(1, 1, SINK_TOKENS, 16, generator=generator, dtype=torch.float64)
    k = torch.randn(1, 1, SINK_TOKENS, 16, generator=generator, dtype=torch.float64)
    sinks = None if sink is None else torch.tensor([sink], dtype=torch.float64)
    _, weights = scaled_dot_product_attention(q, k, k, causal=True, sinks=sinks)
    return weights[0, 0]


@figure(
    "architectures-sinks",
    alt=("Three panels for one head over twelve tokens with causal attention. Left: the weights of an "
         "ordinary softmax; every row sums to 1, so the first query puts all its weight on itself. Middle: "
         "the same logits with a learned sink logit of 1.5 in each row's softmax; every weight is smaller, "
         "and the first query keeps about a quarter for itself. Right: the sum of each row, 1 without the "
         "sink, between about 0.27 and 0.84 with it, the rest going to the sink."),
)
def sinks_figure() -> Figure:
    colours = palette()
    plain, with_sink = sink_example(None).numpy(), sink_example(SINK_LOGIT).numpy()
    fig, axes = new_figure(1, 3, height=3.3, narrow_height=8.4, width_ratios=[1, 1, 1.1])
    for ax, weights, title in ((axes[0], plain, "softmax over the keys"),
                               (axes[1], with_sink, f"with a sink logit of {SINK_LOGIT:g}")):
        image = show_matrix(ax, weights, title=title, xlabel="key", ylabel="query", vmin=0.0, vmax=1.0,
                            xticks=range(0, SINK_TOKENS, 3), yticks=range(0, SINK_TOKENS, 3))
    fig.colorbar(image, ax=list(axes[:2]) if not narrow() else axes[1], shrink=0.8, label="weight")
    queries = np.arange(SINK_TOKENS)
    axes[2].plot(queries, plain.sum(-1), color=colours.muted, ls="--", marker="o", markersize=4, label="no sink")
    axes[2].plot(queries, with_sink.sum(-1), color=colours.cycle[0], marker="s", markersize=4, label="with the sink")
    axes[2].set_ylim(0, 1.08)
    axes[2].set_xticks(range(0, SINK_TOKENS, 3))
    axes[2].set_xlabel("query")
    axes[2].set_ylabel("weight on the keys")
    axes[2].set_title("row sums")
    axes[2].legend(frameon=False, fontsize=FONT["small"], loc="lower right")
    return fig


# ---------------------------------------------------------------- latent attention's cache


def deepseek_v3_widths() -> dict[str, int]:
    """Numbers cached per token and layer by DeepSeek-V3's latent attention and by the same heads expanded.

    The zoo's published config gives the heads and the rotated and unrotated widths; the latent and
    value widths it leaves out are transformers' ``DeepseekV3Config`` defaults, DeepSeek-V3's sizes.
    """
    from transformers import DeepseekV3Config

    defaults = DeepseekV3Config()
    config = zoo_config("deepseek-v3") | {"kv_lora_rank": defaults.kv_lora_rank, "v_head_dim": defaults.v_head_dim}
    return latent_cache_widths(config)


#: Bytes per cached number (bfloat16).
BYTES = 2


@figure(
    "architectures-mla-cache",
    alt=("The key-value cache of one sequence in gibibytes against its length, both axes logarithmic, for "
         "DeepSeek-V3's 61 layers in bfloat16: multi-head latent attention caches 576 numbers per token and "
         "layer, the same 128 heads with their keys and values expanded would cache 40960, about 71 times "
         "more: roughly 8.6 GiB against 610 GiB at 128 thousand tokens."),
)
def mla_cache() -> Figure:
    colours = palette()
    widths = deepseek_v3_widths()
    layers = int(zoo_config("deepseek-v3")["num_hidden_layers"])
    lengths = np.geomspace(1024, 2**17, 50)
    fig, ax = new_figure(1, 1, height=3.6)
    for key, label, colour, style in (("expanded", "128 heads, keys and values expanded", colours.muted, "--"),
                                      ("latent", "latent attention (latent + shared rotated key)",
                                       colours.cycle[0], "-")):
        gib = lengths * widths[key] * layers * BYTES / 2**30
        ax.loglog(lengths, gib, color=colour, ls=style, label=f"{label}:\n{widths[key]:,} numbers per token and layer")
        ax.annotate(f"{gib[-1]:,.1f} GiB", (lengths[-1], gib[-1]), xytext=(5, 0), textcoords="offset points",
                    ha="left", va="center", fontsize=FONT["small"], color=colours.foreground)
    ax.set_xlim(lengths[0] / 1.5, lengths[-1] * (6 if narrow() else 4))  # room for the labels at the ends
    low = lengths[0] * widths["latent"] * layers * BYTES / 2**30
    ax.set_ylim(low / 80, None)  # room for the legend below the lines
    ax.set_xlabel("tokens in the sequence")
    ax.set_ylabel("cache (GiB, bfloat16)")
    ax.set_title(f"DeepSeek-V3's cache per sequence, {layers} layers")
    ax.legend(frameon=False, fontsize=FONT["small"], loc="lower right")
    return fig


# ---------------------------------------------------------------- per-layer windows in the cache

#: (zoo file, label) of the models in the cache-size figure.
CACHE_MODELS = (
    ("gemma-3-27b-it", "Gemma 3 27B"),
    ("llama-4-scout-17b-16e-instruct", "Llama 4 Scout"),
    ("c4ai-command-r7b-12-2024", "Command R7B"),
    ("gpt-oss-120b", "gpt-oss-120b"),
)


def kept_fraction(name: str, tokens: int) -> float:
    """The share of a full cache (every layer, every token) that a model's layers keep after ``tokens`` tokens.

    A layer with a window or chunk keeps what its next query can see (`AttentionSpan.keeps`); the
    other layers keep every token.
    """
    rope = read_config(zoo_config(name))
    positions = torch.arange(tokens)
    kept = 0
    for layer in rope.layers.values():  # one count per kind of layer, times its layers
        if layer.window is None:
            kept += tokens * len(layer.layers)
            continue
        chunked = layer.layer_type == "chunked_attention"
        span = AttentionSpan(chunk=layer.window) if chunked else AttentionSpan(window=layer.window)
        kept += int(span.keeps(positions, torch.tensor(tokens)).sum()) * len(layer.layers)
    return kept / (len(rope.pattern) * tokens)


@figure(
    "architectures-cache-sizes",
    alt=("The share of a full key-value cache that four models keep, against the number of tokens on a "
         "logarithmic axis from 1 thousand to 1 million, computed from their configs in posenc's zoo. Each curve "
         "starts at 1 while the sequence is shorter than the windows and falls towards the share of global "
         "layers: 10 of 62 for Gemma 3 27B, one in four for Llama 4 Scout and Command R7B, one in two for "
         "gpt-oss-120b. Llama 4's curve has teeth, because a chunked layer's cache empties at each chunk "
         "boundary."),
)
def cache_sizes() -> Figure:
    colours = palette()
    tokens = np.unique(np.geomspace(1024, 2**20, 90).astype(np.int64))
    fig, ax = new_figure(1, 1, height=3.6)
    for (name, label), colour in zip(CACHE_MODELS, colours.cycle):
        ax.plot(tokens, [kept_fraction(name, int(n)) for n in tokens], color=colour, label=label)
    ax.set_xscale("log")
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("tokens decoded")
    ax.set_ylabel("share of a full cache kept")
    ax.set_title("per-layer windows and chunks in the cache")
    ax.legend(frameon=False, fontsize=FONT["small"], loc="upper right")
    return fig
