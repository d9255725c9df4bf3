"""Figures for chapters 6-8: learned embeddings, relative positions (Shaw, T5) and ALiBi."""

from __future__ import annotations

import numpy as np
import torch
from matplotlib.figure import Figure

from posenc.alibi import alibi_bias, alibi_slopes
from posenc.figures import figure
from posenc.figures._style import (
    FONT,
    cell_text_colour,
    line_colours,
    method_colour,
    new_figure,
    palette,
    show_matrix,
)
from posenc.learned import LearnedPositionalEmbedding
from posenc.relative import (
    ShawRelativeAttention,
    T5RelativeBias,
    relative_positions,
    t5_relative_position_bucket,
)
from posenc.sinusoidal import sinusoidal_encoding


def _cosine_to(table: torch.Tensor, position: int) -> np.ndarray:
    unit = table / table.norm(dim=-1, keepdim=True)
    return (unit @ unit[position]).numpy()


# ---------------------------------------------------------------------------------------------
# Chapter 6: learned position embeddings


@figure(
    "learned-table-init",
    alt=(
        "Left: heatmap of a freshly initialised learned position table, 64 positions by 32 "
        "dimensions, showing unstructured noise of size about 0.02. Right: the sinusoidal table "
        "of the same size, with smooth stripes that widen from left to right."
    ),
)
def learned_table_init(max_len: int = 64, dim: int = 32) -> Figure:
    torch.manual_seed(0)
    learned = LearnedPositionalEmbedding(max_len, dim).table.detach().numpy()
    sinusoidal = sinusoidal_encoding(max_len, dim).numpy()
    fig, axes = new_figure(1, 2, height=3.9, wspace=0.12)
    for ax, table, title in ((axes[0], learned, "learned table at initialisation\nN(0, 0.02²)"),
                             (axes[1], sinusoidal, "sinusoidal table\n(fixed, no parameters)")):
        image = show_matrix(ax, table, limit=float(np.abs(table).max()), aspect="auto", title=title,
                            xlabel="dimension", ylabel="position")
        fig.colorbar(image, ax=ax, shrink=0.85, label="value")
    return fig


@figure(
    "learned-similarity-init",
    alt=(
        "Line plot of the cosine similarity between position 20 and every position from 0 to 63. "
        "For the learned table at initialisation it is 1 at position 20 and scattered around 0 "
        "elsewhere; for the sinusoidal table it falls over the first few positions on both sides of "
        "position 20, then wobbles, rising again at some larger distances."
    ),
)
def learned_similarity_init(max_len: int = 64, dim: int = 64, anchor: int = 20) -> Figure:
    torch.manual_seed(0)
    learned = LearnedPositionalEmbedding(max_len, dim).table.detach()
    sinusoidal = sinusoidal_encoding(max_len, dim)
    fig, ax = new_figure(height=3.4)
    colours = palette()
    positions = np.arange(max_len)
    ax.plot(positions, _cosine_to(sinusoidal, anchor), color=method_colour("sinusoidal"), label="sinusoidal")
    ax.plot(positions, _cosine_to(learned, anchor), color=method_colour("learned"), marker="D", markersize=3,
            linewidth=1.0, label="learned, at initialisation")
    ax.axvline(anchor, color=colours.muted, linewidth=1.0, linestyle=":")
    ax.set_xlabel("position")
    ax.set_ylabel(f"cosine similarity to position {anchor}")
    ax.set_ylim(-0.5, 1.05)
    ax.legend(loc="upper right")
    return fig


# ---------------------------------------------------------------------------------------------
# Chapter 7: relative positions


@figure(
    "relative-distance-matrix",
    alt=(
        "Two 8-by-8 heatmaps with numbers in the cells. Left: the offset j minus i of key j from "
        "query i, zero on the diagonal, positive above it and negative below, constant along each "
        "diagonal. Right: the same offsets clipped to the range minus 3 to 3, as in Shaw et al."
    ),
)
def relative_distance_matrix(seq: int = 8, max_distance: int = 3) -> Figure:
    offsets = relative_positions(seq, seq)
    layer = ShawRelativeAttention(dim=4, num_heads=1, max_distance=max_distance)
    clipped = layer.table_rows(seq, seq) - max_distance  # back from table rows to clipped offsets
    fig, axes = new_figure(1, 2, height=3.9)
    for ax, values, title in ((axes[0], offsets, "offset j − i"),
                              (axes[1], clipped, f"clipped to ±{max_distance} (Shaw et al.)")):
        data = values.numpy()
        image = show_matrix(ax, data, limit=seq, title=title, xlabel="key position j",
                            ylabel="query position i", xticks=range(seq), yticks=range(seq))
        for (i, j), value in np.ndenumerate(data):
            ax.text(j, i, f"{value:d}", ha="center", va="center", fontsize=FONT["small"],
                    color=cell_text_colour(image.to_rgba(value)))
    return fig


@figure(
    "t5-buckets",
    alt=(
        "Step plots of T5's bucket number against the offset of the key from the query, from "
        "minus 160 to 160, with 32 buckets and max distance 128. Left, bidirectional: buckets 0 to "
        "15 for keys at or before the query and 17 to 31 for keys after it, one bucket per offset "
        "up to distance 7, then ever wider steps up to 128, flat beyond. Right, causal: 32 "
        "buckets for the past, bucket 0 for every future key. The horizontal axis is linear up to "
        "8 and logarithmic beyond, so the log-spaced buckets appear as steps of equal width."
    ),
)
def t5_buckets(limit: int = 160) -> Figure:
    offsets = torch.arange(-limit, limit + 1)
    fig, axes = new_figure(1, 2, height=4.0, sharey=True)
    colours = palette()
    for ax, bidirectional, title in ((axes[0], True, "bidirectional (encoder)"), (axes[1], False, "causal (decoder)")):
        buckets = t5_relative_position_bucket(offsets, bidirectional=bidirectional)
        exact = 8 if bidirectional else 16
        ax.axvspan(-(exact - 0.5), exact - 0.5 if bidirectional else 0.5, color=colours.cycle[2], alpha=0.2,
                   linewidth=0, label="one bucket per distance (below 8 per direction / 16 causal)")
        for edge in (-128, 128):
            ax.axvline(edge, color=colours.muted, linestyle=":", linewidth=1.2)
        ax.step(offsets.numpy(), buckets.numpy(), where="mid", color=method_colour("t5"), label="bucket")
        ax.set_xscale("symlog", linthresh=16, linscale=1.0)
        ticks = [-128, -40, -16, -8, 0, 8, 16, 40, 128]
        ax.set_xticks(ticks, [str(t) for t in ticks])
        ax.set_title(title)
        ax.set_xlabel("offset j − i (key − query), symlog scale")
    axes[0].set_ylabel("bucket")
    axes[0].set_yticks(range(0, 33, 4))
    handles, labels = axes[1].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=2)
    return fig


@figure(
    "t5-bias-heads",
    alt=(
        "Three 24-by-24 heatmaps for a T5 bias with 16 buckets and max distance 32. Left: the "
        "bucket of each query and key pair, constant along "
        "diagonals, with bands that widen away from the diagonal. Middle and right: the bias of two "
        "heads of a freshly initialised T5 bias module, each a different set of values laid out "
        "on the same diagonal bands."
    ),
)
def t5_bias_heads(seq: int = 24) -> Figure:
    torch.manual_seed(0)
    module = T5RelativeBias(num_heads=2, num_buckets=16, max_distance=32)
    with torch.no_grad():
        bias = module(seq).numpy()
    buckets = module.buckets(seq).numpy()
    fig, axes = new_figure(1, 3, height=3.8, wspace=0.06)
    ticks = [0, 8, 16]
    image = show_matrix(axes[0], buckets, title="bucket of (i, j)\n(16 buckets)", xlabel="key j",
                        ylabel="query i", xticks=ticks, yticks=ticks)
    # colour bars below the panels, so that the three heatmaps get the figure's width
    fig.colorbar(image, ax=axes[0], orientation="horizontal", shrink=0.9, label="bucket", ticks=range(0, 16, 5))
    limit = float(np.abs(bias).max())
    for h in range(2):
        image = show_matrix(axes[h + 1], bias[h], limit=limit, title=f"bias of head {h}\n(at initialisation)",
                            xlabel="key j", ylabel="query i", xticks=ticks, yticks=ticks)
    fig.colorbar(image, ax=axes[1:], orientation="horizontal", shrink=0.6, label="added to the logit")
    return fig


# ---------------------------------------------------------------------------------------------
# Chapter 8: ALiBi


@figure(
    "alibi-slopes",
    alt=(
        "Dot plot of the ALiBi slope of each head on a log scale, for 8, 12 and 16 heads. The 8 "
        "and 16 head slopes fall geometrically from 1/2 and 1/sqrt(2) to 1/256. For 12 heads the "
        "first 8 are the 8-head slopes and the last 4 fall between them, at 2 to the minus 0.5, "
        "1.5, 2.5 and 3.5."
    ),
)
def alibi_slopes_figure() -> Figure:
    fig, ax = new_figure(height=3.6)
    for row, (heads, colour) in enumerate(zip((8, 12, 16), line_colours(3))):
        slopes = alibi_slopes(heads, dtype=torch.float64).numpy()
        index = np.arange(heads)
        main = index < 8 if heads == 12 else index >= 0
        ax.scatter(slopes[main], np.full(main.sum(), row), color=colour, s=36, zorder=3,
                   label=f"{heads} heads" if heads != 12 else "12 heads: the 8-head slopes")
        if heads == 12:
            ax.scatter(slopes[~main], np.full((~main).sum(), row), color=colour, marker="D", s=40, zorder=3,
                       facecolors="none", linewidths=1.6, label="12 heads: heads 8-11, every other 16-head slope")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("slope m (log scale)")
    ax.set_yticks([0, 1, 2], ["8 heads", "12 heads", "16 heads"])
    ax.set_ylim(-0.6, 3.6)
    ax.legend(loc="upper left", ncol=1)
    return fig


@figure(
    "alibi-bias-matrices",
    alt=(
        "Three 12-by-12 heatmaps of the causal ALiBi bias of heads 0, 3 and 7 of an 8-head model, "
        "on one shared colour scale. Future keys are blank. The bias is 0 on the diagonal and "
        "falls linearly with distance: steeply for head 0 (slope 1/2, reaching minus 5.5), barely "
        "for head 7 (slope 1/256)."
    ),
)
def alibi_bias_matrices(seq: int = 12, heads: int = 8) -> Figure:
    bias = alibi_bias(heads, seq).numpy()
    future = np.triu(np.ones((seq, seq), dtype=bool), 1)
    slopes = alibi_slopes(heads, dtype=torch.float64).numpy()
    fig, axes = new_figure(1, 3, height=3.2)
    low = float(bias.min())
    for ax, h in zip(axes, (0, 3, heads - 1)):
        image = show_matrix(ax, np.ma.masked_array(bias[h], mask=future), vmin=low, vmax=0.0,
                            title=f"head {h}: m = 1/{round(1 / slopes[h])}", xlabel="key j",
                            ylabel="query i" if h == 0 else None, xticks=[0, 4, 8], yticks=[0, 4, 8])
    fig.colorbar(image, ax=axes, shrink=0.8, label="bias −m·(i − j)")
    return fig


@figure(
    "alibi-attention-distance",
    alt=(
        "Log-scale line plot of the attention weight that the last query of a 64-token causal "
        "sequence gives to each earlier key, when all content scores are equal and only the ALiBi "
        "bias differs, for the 8 heads of an 8-head model. Head 0 puts almost all weight within a "
        "few tokens; head 7 spreads it almost evenly over all 64."
    ),
)
def alibi_attention_distance(seq: int = 64, heads: int = 8) -> Figure:
    bias = alibi_bias(heads, seq, dtype=torch.float64)[:, -1, :]  # last query, all keys (all in the past)
    weights = torch.softmax(bias, dim=-1).flip(-1).numpy()  # index = distance i - j
    slopes = alibi_slopes(heads, dtype=torch.float64).numpy()
    fig, ax = new_figure(height=4.6)
    markers = "osD^vPX*"  # neighbouring shades of the map are close: a marker tells each head apart
    for h, colour in enumerate(line_colours(heads)):  # each >= 3:1 against the background
        ax.plot(np.arange(seq), weights[h], color=colour, marker=markers[h % len(markers)], markersize=4,
                markevery=(h % 4 * 2, 8), label=f"{h}: m = 1/{round(1 / slopes[h])}")
    ax.set_yscale("log")
    ax.set_ylim(1e-6, 1.0)
    ax.set_xlabel("distance i − j from the query (tokens)")
    ax.set_ylabel("attention weight")
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncol=4, title="head: slope",
               columnspacing=1.2)
    return fig

