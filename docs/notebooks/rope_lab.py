# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lab: RoPE rotations and relative attention
#
# A companion to [RoPE](../../rope/) and [The RoPE animator](../../rope-animator/): it rotates
# query and key vectors with RoPE, compares the rotation with the sinusoidal and learned tables
# on the same input, and checks which scores depend only on the offset.
#
# **To run it yourself** (Python 3.11 or newer): clone posenc's repository (the site links it at
# the top of each page when it has one) and, in the clone, run `make install` (it needs make and npm
# besides Python). That creates `.venv/`
# with the pinned versions and registers its Jupyter kernel; in an environment of your own,
# `pip install -e .` in the clone does the same for posenc alone. Then either run this file as a
# script, `.venv/bin/python docs/notebooks/rope_lab.py`, or open it as a notebook:
# `.venv/bin/pip install jupyterlab`, then `.venv/bin/jupyter lab` and open the downloaded
# `rope_lab.ipynb` (or this `.py` file with *Open With > Jupytext Notebook*). Where the site shows
# an *Open in Binder* link above, Binder runs it in the browser with nothing to install.
#
# The tasks are a common RoPE exercise; the
# solutions use `posenc`, and the mistakes these tasks invite are on the
# [errata](../../errata/#rope) page, linked where they come up.
#
# 1. Implement and plot the sinusoidal, learned and rotary encodings.
# 2. Compare them side by side on real, non-zero inputs.
# 3. Show where word order becomes visible.
# 4. Answer the reflection questions, checking each answer by computation.

# %%
import math

import matplotlib.pyplot as plt
import torch

from posenc import (
    LearnedPositionalEmbedding,
    RotaryEmbedding,
    SelfAttention,
    apply_rope,
    rope_inverse_frequencies,
    sinusoidal_encoding,
)
from posenc.figures import notebook_style
from posenc.toy import sentence_embeddings

# %matplotlib inline
# The site's figure style: its fonts and colours, as SVG that follows the
# page's light or dark palette on the site (plain light colours elsewhere).
notebook_style()
torch.manual_seed(0)
DIM = 64

# %% [markdown]
# ## Task 1a: the sinusoidal encoding
#
# Column $2i$ holds $\sin(m/10000^{2i/d})$ and column $2i+1$ the matching cosine. A direct
# implementation in a few lines, checked against `posenc.sinusoidal_encoding`:


# %%
def my_sinusoidal(n_positions: int, dim: int) -> torch.Tensor:
    position = torch.arange(n_positions, dtype=torch.float64)[:, None]
    frequency = 10000.0 ** (
        -torch.arange(0, dim, 2, dtype=torch.float64) / dim
    )
    table = torch.zeros(n_positions, dim, dtype=torch.float64)
    table[:, 0::2] = torch.sin(position * frequency)
    table[:, 1::2] = torch.cos(position * frequency)
    return table


pe = sinusoidal_encoding(100, DIM, dtype=torch.float64)
print("matches posenc:", torch.allclose(my_sinusoidal(100, DIM), pe))

# %%
# 3.9 inches wide, panels one above the other: the text reads at 11 px or
# more on a phone too, where the plot is shrunk to the column
fig, (top, bottom) = plt.subplots(
    2, 1, figsize=(3.9, 7.2), layout="constrained"
)
# positions down, dimensions across: as in the chapter's heatmaps
image = top.imshow(
    pe.numpy(),
    aspect="auto",
    cmap="RdBu_r",
    vmin=-1,
    vmax=1,
    interpolation="nearest",
)
top.set(
    xlabel="dimension",
    ylabel="position",
    title="sinusoidal encoding:\n100 positions × 64 dimensions",
)
top.grid(False)
fig.colorbar(image, ax=top, label="value", location="bottom")
for column in (0, 1, 8, 16):
    bottom.plot(pe[:, column].numpy(), label=f"dimension {column}")
bottom.set(
    xlabel="position",
    ylabel="value",
    title="dimension 0 oscillates fastest",
)
# the legend in the room above the curves, which stay within ±1
bottom.set(ylim=(-1.15, 2.1), yticks=[-1, -0.5, 0, 0.5, 1])
bottom.legend(ncols=2, loc="upper center", frameon=False)
plt.show()

# %% [markdown]
# ## Task 1b: learned position embeddings
#
# A learned table is a parameter with one row per position, here initialised like BERT's (standard
# deviation 0.02). It holds `max_len` rows and nothing past them.

# %%
learned = LearnedPositionalEmbedding(max_len=5000, dim=DIM)
print("parameters:", sum(p.numel() for p in learned.parameters()))
print("row std at init:", round(learned.table.std().item(), 4))
x = torch.randn(2, 10, DIM)
print("output shape:", tuple(learned(x).shape))

# %% [markdown]
# ## Task 1c: rotary position embedding
#
# RoPE rotates pairs of coordinates of each query and key by $m\theta_i$. The important detail:
# **both members of a pair must use the same angle.** In the interleaved layout, pair $i$ is
# dimensions $(2i, 2i+1)$, so each frequency must be repeated twice *next to each other*
# (`repeat_interleave`). Building the table with `cat([freqs, freqs])` instead puts different
# frequencies on the two members, and the map is then not a rotation
# ([errata](../../errata/#rope-lab-rotation-mixes-two-frequencies)).


# %%
def my_rope(x: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """Interleaved RoPE on x [..., seq, dim], positions 0 .. seq-1."""
    seq, dim = x.shape[-2:]
    theta = base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    positions = torch.arange(seq, dtype=torch.float64)[:, None]
    angles = positions * theta  # [seq, dim/2]
    cos = angles.cos().repeat_interleave(2, dim=-1)  # [c0, c0, c1, c1, ...]
    sin = angles.sin().repeat_interleave(2, dim=-1)
    x = x.double()
    # (-x1, x0) in place of each pair (x0, x1)
    swapped = torch.stack((-x[..., 1::2], x[..., 0::2]), dim=-1).flatten(-2)
    return x * cos + swapped * sin


q = torch.randn(2, 4, 10, DIM, dtype=torch.float64)
print(
    "matches posenc (interleaved):",
    torch.allclose(my_rope(q), apply_rope(q, layout="interleaved")),
)
print(
    "norms preserved:",
    torch.allclose(my_rope(q).norm(dim=-1), q.norm(dim=-1)),
)

# %% [markdown]
# To see the rotation, rotate a real 2-D vector with `apply_rope`. A head of width 2 has one pair,
# turning 1 rad per position; to keep eight arrows within one turn, the positions given are
# 0, 0.7, 1.4, ... (RoPE accepts fractional positions), so each step turns 0.7 rad. Below,
# the angle of four pairs of a 64-wide head grows linearly with position, each at its own rate:
# pair 0 turns 1 rad per position (a full turn every 6.3 positions), pair 16 only 0.01.

# %%
fig, (arrows, angles) = plt.subplots(
    2, 1, figsize=(3.9, 7.0), layout="constrained"
)
vector = torch.tensor([[1.0, 0.3]]).expand(8, 2)
rotated = apply_rope(
    vector, torch.arange(8) * 0.7
)  # step m is given as position 0.7 * m
for m, (u, v) in enumerate(rotated.tolist()):
    arrows.annotate(
        "",
        xy=(u, v),
        xytext=(0, 0),
        arrowprops={"arrowstyle": "->", "color": "C0"},
    )
    arrows.text(1.15 * u, 1.15 * v, str(m), ha="center", va="center")
arrows.set(
    xlim=(-1.4, 1.4),
    ylim=(-1.4, 1.4),
    aspect="equal",
    title="one pair, steps 0-7 of 0.7 rad",
    xlabel="first coordinate",
    ylabel="second coordinate",
)
theta = rope_inverse_frequencies(DIM)
positions = torch.arange(21, dtype=torch.float64)
for i in (0, 1, 4, 16):
    angles.plot(
        positions,
        positions * theta[i],
        "o-",
        ms=3,
        label=f"pair {i}: θ = {theta[i]:.3g}",
    )
angles.set(
    xlabel="position m",
    ylabel="angle m·θᵢ (rad)",
    title="angle grows linearly with m",
)
angles.legend()
plt.show()

# %% [markdown]
# ## Task 2: the three side by side, on real inputs
#
# Feeding zeros to all three methods shows the two *additive* tables, but RoPE rotates its input,
# and a rotation of zero is zero: its panel would be blank
# ([errata](../../errata/#rope-on-zero-inputs-shows-nothing)).

# %%
print(
    "RoPE of zeros, largest entry:",
    apply_rope(torch.zeros(1, 50, DIM)).abs().max().item(),
)

# %% [markdown]
# A like-for-like comparison looks at what reaches attention. Put the *same word* at 24 positions
# (a non-zero vector) and compute the score between every pair of positions. Additive methods
# score $(x + p_m)\cdot(x + p_n)$; RoPE scores $(R_m x)\cdot(R_n x)$. A method is *relative* if
# the score depends only on $n - m$, i.e. the matrix is constant along its diagonals. The
# learned table is random, as before training; its rows are drawn with standard deviation 0.5
# instead of 0.02 so that they are not invisible next to the word vector.

# %%
n = 24
word = sentence_embeddings("dog", DIM)[0, 0].double().expand(n, DIM)
with_sinusoidal = word + sinusoidal_encoding(n, DIM, dtype=torch.float64)
with_learned = (
    word
    + LearnedPositionalEmbedding(max_len=n, dim=DIM, init_std=0.5)
    .table.detach()
    .double()
)
rotated = apply_rope(word, base=100.0)
scores = {
    "sinusoidal (added)": with_sinusoidal @ with_sinusoidal.T,
    "learned (added, random init)": with_learned @ with_learned.T,
    "RoPE (rotated)": rotated @ rotated.T,
}


def spread_along_diagonals(matrix: torch.Tensor) -> float:
    """Largest spread of the entries along one diagonal.

    0 for a score that depends only on the offset n - m.
    """
    size = matrix.shape[0]
    return max(
        (matrix.diagonal(o).max() - matrix.diagonal(o).min()).item()
        for o in range(-size + 1, size)
    )


fig, axes = plt.subplots(3, 1, figsize=(3.9, 9.0), layout="constrained")
for ax, (name, matrix) in zip(axes, scores.items()):
    image = ax.imshow(
        matrix.numpy(), cmap="viridis"
    )  # row m (query position) down, column n across
    ax.set(
        title=name,
        xlabel="position n",
        ylabel="position m",
    )
    ax.grid(False)
    fig.colorbar(image, ax=ax, label="score")
    print(
        f"{name:<30} spread along diagonals:",
        f"{spread_along_diagonals(matrix):.2e}",
    )
plt.show()

# %% [markdown]
# Only RoPE's matrix is constant along its diagonals (spread at rounding level). With additive
# encodings the term $x\cdot(p_m + p_n)$ depends on the absolute positions. (RoPE uses base 100
# here so that 24 positions show a visible pattern; the property holds for any base.)
#
# ## Task 3: where word order becomes visible
#
# Comparing the **sums** of word vectors with positions added, for "dog bites man" and "man bites
# dog", cannot show order: both sentences add the same three position vectors, so the sums are
# equal ([errata](../../errata/#summing-encoded-tokens-cannot-show-order)). The order *is* in the
# per-token vectors (token 0 is "dog" + $p_0$ in one sentence, "man" + $p_0$ in the other);
# summing them throws it away.

# %%
a, b = (
    sentence_embeddings("dog bites man", 16),
    sentence_embeddings("man bites dog", 16),
)
p = sinusoidal_encoding(3, 16)
print(
    "sums equal without positions:",
    torch.allclose(a.sum(1), b.sum(1), atol=1e-6),
)
print(
    "sums equal with positions:   ",
    torch.allclose((a + p).sum(1), (b + p).sum(1), atol=1e-6),
)
print(
    "per-token vectors equal with positions:",
    torch.allclose(a + p, b + p, atol=1e-6),
)

# %% [markdown]
# To keep the order through pooling, the tokens must be processed with their positions before
# they are summed, for example by attention. Pool the attention outputs and compare the two
# sentences: without positions the pooled vectors are equal (attention only permutes its outputs
# when the inputs are permuted); with sinusoidal positions added, or with RoPE on queries and keys,
# they differ. RoPE adds nothing to the token vectors, so attention is where it acts.

# %%
torch.manual_seed(0)
attention = SelfAttention(dim=16, num_heads=2).eval()
rotary = RotaryEmbedding(8)
with torch.no_grad():
    for label, run in {
        "no positions": lambda s: attention(s)[0],
        "sinusoidal added": lambda s: attention(s + p)[0],
        "RoPE on q and k": lambda s: attention(s, rotary=rotary)[0],
    }.items():
        gap = (run(a).mean(1) - run(b).mean(1)).norm().item()
        print(f"{label:<18} distance between pooled outputs: {gap:.6f}")

# %% [markdown]
# ## Task 4: reflection questions, answered by computation
#
# **Q1. What patterns do you see in the sinusoidal heatmap?** Waves whose frequency *falls* with the
# dimension: dimensions 0 and 1 are the fastest (wavelength $2\pi$), the last pair the slowest.
# (Reading the heatmap the other way round is a common slip:
# [errata](../../errata/#low-dimensions-oscillate-fastest).)

# %%
wavelength = 2 * math.pi / rope_inverse_frequencies(DIM)
print(
    "wavelengths of pairs 0, 8, 31:",
    [round(v, 2) for v in wavelength[[0, 8, 31]].tolist()],
)
sign_changes = [
    (torch.diff(torch.sign(pe[1:, c])) != 0).sum().item()
    for c in (0, 16, 62)
]
print(
    "sign changes over positions 1-99 in dimensions 0, 16, 62:",
    sign_changes,
)

# %% [markdown]
# **Q2. How does the RoPE rotation change with position?** The angle of pair $i$ is $m\theta_i$,
# linear in $m$. A single pair's angle is unique only modulo $2\pi$: in pair 0, positions 0 and 44
# are 0.018 rad apart ([errata](../../errata/#a-pair-angle-is-unique-only-modulo-2pi)). Positions
# are told apart by all pairs together. Take a vector $u$ whose 32 pairs each have length 1
# (so $\lVert u\rVert = \sqrt{32} \approx 5.66$); the distance between its copies rotated to
# positions $m$ and $m + k$ depends only on $k$ and is
# $\sqrt{\sum_i (2 - 2\cos k\theta_i)}$. Over every offset from 1 to 9999 it never falls
# below the value printed here.

# %%
theta = rope_inverse_frequencies(DIM)
print(
    "pair 0, positions 0 and 44, angle apart:",
    round(abs(math.remainder(44 * theta[0].item(), 2 * math.pi)), 4),
)
offsets = torch.arange(1, 10_000, dtype=torch.float64)
distance = (2 - 2 * torch.cos(offsets[:, None] * theta)).sum(-1).sqrt()
print(
    "smallest distance between rotated copies of u, offsets 1-9999:",
    round(distance.min().item(), 3),
)

# %% [markdown]
# And the relative part: a query and a key rotated to positions $m$ and $n$ have the same score
# for every $m$ with the same $n - m$.

# %%
qv, kv = torch.randn(2, 1, DIM, dtype=torch.float64)
score = lambda m, n: (
    apply_rope(qv, torch.tensor([m])) @ apply_rope(kv, torch.tensor([n])).T
).item()
print([round(score(m, m + 5), 8) for m in (0, 10, 1000, 50_000)])

# %% [markdown]
# **Q3. Why can't learned embeddings go beyond `max_len`?** The table has rows 0 to `max_len - 1`;
# there is nothing to look up past them (`posenc` raises a clear error). With `max_len` 5000, position
# 5000 is already one too far, not only 5001
# ([errata](../../errata/#learned-table-last-row)). The sinusoidal and
# rotary formulas can be *evaluated* at any position, but that does not make a trained model work
# there: see Q5.

# %%
try:
    learned(torch.zeros(1, 5001, DIM))
except ValueError as error:
    print("ValueError:", error)

# %% [markdown]
# **Q4. Absolute versus relative?** Sinusoidal and learned encodings are absolute: they add a vector
# that depends on the position. RoPE is both: each vector is rotated by its *absolute* position,
# but the query-key score depends only on the *relative* offset. With a sinusoidal encoding added
# before the projections, the score of the same two words at the same offset changes with where
# they stand:

# %%
w_q, w_k = torch.randn(2, DIM, DIM, dtype=torch.float64) / math.sqrt(DIM)
x_dog, x_man = (
    sentence_embeddings(w, DIM)[0, 0].double() for w in ("dog", "man")
)


def sinusoidal_score(m: int, n: int) -> float:
    table = sinusoidal_encoding(
        torch.tensor([m, n]), DIM, dtype=torch.float64
    )
    return ((x_dog + table[0]) @ w_q.T @ (w_k @ (x_man + table[1]))).item()


def rope_score(m: int, n: int) -> float:
    q = apply_rope((x_dog @ w_q.T)[None], torch.tensor([m]))
    k = apply_rope((x_man @ w_k.T)[None], torch.tensor([n]))
    return (q @ k.T).item()


for m in (0, 10, 100):
    print(
        f"m={m:>3}, n=m+2:",
        f"sinusoidal {sinusoidal_score(m, m + 2):+.4f}",
        f"  RoPE {rope_score(m, m + 2):+.4f}",
    )

# %% [markdown]
# **Q5. Does RoPE work better for long sequences?** Not by itself. The common answer ("the
# rotation mechanism extrapolates naturally", "used in LLaMA for this reason") is not supported:
# RoPE models degrade past their training length (Press et al. 2022; Chen et al. 2023), and the
# LLaMA paper gives no such reason. What a longer input brings is new *offsets*: query-key pairs
# further apart than any in training. The usual explanation (the one behind YaRN's per-pair rule,
# Peng et al. 2023, section 3.2) points at the slow pairs: even at the largest trained offset they
# have not completed a turn, so larger offsets give them relative angles the model never saw. That
# offsets matter, not positions, is measured on this site: a model read with a sliding window, so
# that no offset exceeds the trained ones, keeps its loss at positions far past its training length
# ([testing the RoPE explanation](../../extrapolation/#testing-the-rope-explanation)).
# Context-extension methods change the frequencies ([Context extension](../../context-extension/),
# [errata](../../errata/#rope-does-not-extrapolate-by-itself)).

# %%
trained = 4096
turns = (trained - 1) * rope_inverse_frequencies(128) / (2 * math.pi)
print(
    f"head width 128, trained on {trained}:",
    f"{int((turns < 1).sum())} of 64 pairs never complete a turn",
)
