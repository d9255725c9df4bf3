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
# # Order blindness in a notebook
#
# A companion to [Why position matters](../../why-position/): the same experiment as a notebook
# you can download and run.
#
# **To run it yourself** (Python 3.11 or newer): clone posenc's repository (the site links it at
# the top of each page when it has one) and, in the clone, run `make install` (it needs make and npm
# besides Python). That creates `.venv/`
# with the pinned versions and registers its Jupyter kernel; in an environment of your own,
# `pip install -e .` in the clone does the same for posenc alone. Then either run this file as a
# script, `.venv/bin/python docs/notebooks/order_blindness.py`, or open it as a notebook:
# `.venv/bin/pip install jupyterlab`, then `.venv/bin/jupyter lab` and open the downloaded
# `order_blindness.ipynb` (or this `.py` file with *Open With > Jupytext Notebook*). Where the
# site shows an *Open in Binder* link above, Binder runs it in the browser with nothing to install.
#
# Shuffle the words of a sentence with a permutation $P$ and run one self-attention layer on
# both orders. Without positions, attention is permutation-*equivariant*: the outputs for the
# shuffled words are the original outputs, shuffled the same way, $\mathrm{out}(Px) = P\,\mathrm{out}(x)$.
# So $\lVert \mathrm{out}(x) - \mathrm{out}(Px) \rVert$ is not the thing to measure (it is non-zero
# simply because the rows are in another order); we measure
# $\lVert \mathrm{out}(Px) - P\,\mathrm{out}(x) \rVert$, which is zero exactly when the layer cannot
# tell the two orders apart, and the distance between the mean-pooled outputs, which a mean
# makes blind to order in the same case.

# %%
import torch

from posenc import SelfAttention, sinusoidal_encoding
from posenc.toy import sentence_embeddings

torch.manual_seed(0)
attention = SelfAttention(dim=16, num_heads=1).eval()
words = ["the", "cat", "sat", "on", "the", "mat"]
# P: the shuffled sentence takes word permutation[k] at place k
permutation = [5, 0, 3, 2, 1, 4]
shuffled = [words[k] for k in permutation]
print(" ".join(words), "->", " ".join(shuffled))


# %%
def outputs(sentence: list[str], *, with_positions: bool) -> torch.Tensor:
    """The layer's outputs for ``sentence``, one row per word."""
    x = sentence_embeddings(sentence, 16)
    if with_positions:
        x = x + sinusoidal_encoding(len(sentence), 16)
    with torch.no_grad():
        out, _ = attention(x)
    return out[0]


for with_positions in (False, True):
    out_x = outputs(words, with_positions=with_positions)
    out_px = outputs(shuffled, with_positions=with_positions)
    # ||out(Px) - P out(x)||: zero when the layer only permutes its outputs
    equivariance_gap = (out_px - out_x[permutation]).norm()
    pooled_gap = (out_px.mean(dim=0) - out_x.mean(dim=0)).norm()
    print(
        f"positions added: {with_positions!s:5}",
        f" ||out(Px) - P out(x)|| = {equivariance_gap:.6f}",
        f"  pooled distance = {pooled_gap:.6f}",
    )

# %% [markdown]
# Without positions both numbers are zero up to floating-point rounding: the layer only permutes
# its outputs, and the mean forgets the permutation. With sinusoidal positions added, the word
# at place $k$ carries $p_k$ whatever the word is, so the shuffled sentence is no longer the
# original one permuted; both numbers move away from zero and the model can tell the orders apart.
