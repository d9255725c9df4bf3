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
# you can download and run. We measure how far apart the outputs of one self-attention layer are
# for two orders of the same words, $\lVert \mathrm{out}(x) - \mathrm{out}(Px) \rVert$, with and
# without positions added to the inputs.

# %%
import torch

from posenc import SelfAttention, sinusoidal_encoding
from posenc.toy import sentence_embeddings

torch.manual_seed(0)
attention = SelfAttention(dim=16, num_heads=1).eval()
words = ["the", "cat", "sat", "on", "the", "mat"]
shuffled = ["mat", "the", "on", "sat", "cat", "the"]

# %% [markdown]
# Without positions, the sentence-level mean of the outputs is the same for both orders (up to
# floating-point rounding), because attention is permutation-equivariant and a mean ignores order.

# %%
def pooled(sentence: list[str], *, with_positions: bool) -> torch.Tensor:
    x = sentence_embeddings(sentence, 16)
    if with_positions:
        x = x + sinusoidal_encoding(len(sentence), 16)
    with torch.no_grad():
        out, _ = attention(x)
    return out.mean(dim=1)


for with_positions in (False, True):
    gap = (pooled(words, with_positions=with_positions) - pooled(shuffled, with_positions=with_positions)).norm()
    print(f"positions added: {with_positions!s:5}  distance between pooled outputs: {gap:.6f}")

# %% [markdown]
# With positions, the two orders give different pooled vectors: the model can now tell them apart.
