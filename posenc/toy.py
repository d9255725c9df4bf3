"""Made-up word vectors for the examples: the same word always gets the same vector.

Real models learn their embeddings; the chapters only need vectors that are fixed, distinct and
reproducible, so that "dog" in "dog bites man" is the very same vector as "dog" in "man bites dog".
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import torch
from torch import Tensor

from posenc._checks import check_float, check_int, check_size_int

__all__ = ["sentence_embeddings", "word_vector"]


def word_vector(word: str, dim: int, *, seed: int = 0, std: float = 1.0) -> Tensor:
    r"""A deterministic \(\mathcal{N}(0, \sigma^2)\) vector ``[dim]`` (\(\sigma\) = ``std``) for ``word`` (seeded by a CRC of the word)."""
    if not isinstance(word, str):
        raise TypeError(f"word must be a non-empty string, got {type(word).__name__} {word!r:.60}")
    if not word:
        raise ValueError(f"word must be a non-empty string, got {word!r}")
    dim = check_size_int("dim", dim)
    seed = check_int("seed", seed, minimum=0, maximum=(1 << 63) - (1 << 32))  # + CRC32 fits the seed
    std = check_float("std", std, positive=True, maximum=1e30)  # float32 stays finite
    generator = torch.Generator().manual_seed(zlib.crc32(word.encode()) + seed)
    return torch.randn(dim, generator=generator) * std


def sentence_embeddings(sentence: str | Sequence[str], dim: int, *, seed: int = 0, std: float = 1.0) -> Tensor:
    """Stack the vectors of a sentence's words into ``[1, seq, dim]`` (a batch of one).

    Examples:
        >>> dog_first = sentence_embeddings("dog bites man", 4)
        >>> man_first = sentence_embeddings("man bites dog", 4)
        >>> torch.equal(dog_first[0, 0], man_first[0, 2])
        True
    """
    if isinstance(sentence, str):
        words = sentence.split()
    elif isinstance(sentence, Sequence) and all(isinstance(w, str) and w for w in sentence):
        words = list(sentence)
    else:
        raise TypeError(f"sentence must be a string or a sequence of non-empty strings, got {sentence!r:.60}")
    if not words:
        raise ValueError("sentence must contain at least one word")
    dim = check_size_int("dim", dim)
    if len(words) * dim > 1 << 27:
        raise ValueError(f"sentence of {len(words)} words x dim {dim} is too large")
    return torch.stack([word_vector(w, dim, seed=seed, std=std) for w in words]).unsqueeze(0)
