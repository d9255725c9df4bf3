"""The text of the experiments: English prose that ships with Python, read character by character.

The corpus is the Python Language Reference's topic help (``pydoc_data.topics``, the text that
``help("assert")`` and friends print), which is part of the standard library and needs no
download. It is about 465,000 characters of technical English: explanations in full sentences,
interleaved with grammar rules and short code fragments. Nothing in it was generated here.

The topics are joined in sorted order of their keys; the first 90% of the characters are the
training text and the last 10% the held-out validation text. The vocabulary is every character
that occurs in the corpus, in code-point order.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import torch
from torch import Tensor

from posenc._checks import check_float

#: Where the text comes from (recorded in the results file).
SOURCE = "pydoc_data.topics (Python Language Reference topic help, standard library)"


def corpus_text() -> str:
    """The whole corpus: every topic text, joined by blank lines in sorted order of the keys."""
    from pydoc_data.topics import topics

    return "\n\n".join(topics[key] for key in sorted(topics))


@dataclass(frozen=True)
class Corpus:
    """Token ids of the training and validation text, and the character vocabulary."""

    vocabulary: str
    train: Tensor  # int64 [n_train]
    validation: Tensor  # int64 [n_validation]
    sha256: str  # of the UTF-8 corpus text: changes when Python ships a different reference
    characters: int

    @property
    def vocab_size(self) -> int:
        return len(self.vocabulary)

    def encode(self, text: str) -> Tensor:
        index = {char: i for i, char in enumerate(self.vocabulary)}
        return torch.tensor([index[char] for char in text], dtype=torch.long)

    def decode(self, ids: Tensor) -> str:
        return "".join(self.vocabulary[int(i)] for i in ids.reshape(-1))


def load_corpus(validation_fraction: float = 0.1) -> Corpus:
    """Split the corpus into training and validation ids (the validation text is the last part).

    Examples:
        >>> corpus = load_corpus()
        >>> corpus.decode(corpus.train[:22])
        'The "assert" statement'
    """
    fraction = check_float("validation_fraction", validation_fraction, minimum=0.01, maximum=0.5)
    text = corpus_text()
    vocabulary = "".join(sorted(set(text)))
    index = {char: i for i, char in enumerate(vocabulary)}
    ids = torch.tensor([index[char] for char in text], dtype=torch.long)
    split = len(text) - int(len(text) * fraction)
    return Corpus(
        vocabulary=vocabulary,
        train=ids[:split],
        validation=ids[split:],
        sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
        characters=len(text),
    )
