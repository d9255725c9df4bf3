"""Collect every docs example and every docstring example with Sybil (see tests/doc_examples.py)."""

from __future__ import annotations

from typing import Any

from sybil import Sybil
from sybil.parsers.rest import DocTestParser

from tests.doc_examples import DOCTEST_FLAGS, PythonFenceParser, ReasonedSkipParser


def _fresh_namespace(namespace: dict[str, Any]) -> None:
    """Each page starts from the same state: seeded generators, fixed print options."""
    import numpy as np
    import torch

    torch.manual_seed(0)
    np.random.seed(0)
    torch.set_printoptions(precision=4, sci_mode=False, linewidth=100)
    np.set_printoptions(precision=4, suppress=True, linewidth=100)


def _reset_print_options(namespace: dict[str, Any]) -> None:
    import numpy as np
    import torch

    torch.set_printoptions(profile="default")
    np.set_printoptions(precision=8, suppress=False, linewidth=75)


markdown_examples = Sybil(
    parsers=[PythonFenceParser(), ReasonedSkipParser()],
    patterns=["*.md", "**/*.md"],
    path="docs",
    setup=_fresh_namespace,
    teardown=_reset_print_options,
    name="docs",
)
docstring_examples = Sybil(
    parsers=[DocTestParser(optionflags=DOCTEST_FLAGS)],
    patterns=["*.py", "**/*.py"],
    path="posenc",
    setup=_fresh_namespace,
    teardown=_reset_print_options,
    name="docstrings",
)
pytest_collect_file = (markdown_examples + docstring_examples).pytest()
