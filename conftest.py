"""Collect every docs example and every docstring example with Sybil (see tests/doc_examples.py),
and mark the slow parts of the suite (`SLOW`), which ``make test-fast`` leaves out."""

from __future__ import annotations

from typing import Any

import pytest

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


# The slow parts, marked `slow` here so that `make test-fast` (-m "not slow") stays near two minutes
# on a 2-core machine; `make test` runs them all. Chosen by CPU time per test function (all its
# parameters together), measured over the whole suite: each entry here took 2 to 90 s. Each entry: the start of a test id (a file, or a
# file and a test name) or, prefixed "*", a piece of a test name, and why it is slow. Tests may
# also carry @pytest.mark.slow themselves (tests/test_rope_base.py).
SLOW: dict[str, str] = {
    # builds, renders, notebooks, studies
    "tests/test_reproducible.py": "three whole-site builds",
    "tests/test_notebooks.py": "executes every notebook",
    "*_end_to_end": "a study's tiny configuration through the command line (trains models)",
    "tests/test_figures.py::test_figure_renders_in_both_palettes_deterministically": "renders every figure twice",
    "tests/test_figures.py::test_figure_colours_and_text": "renders every figure",
    "tests/test_experiments.py::test_every_method_is_studied_and_seeds_differ": "trains a model per method",
    "tests/test_later_results.py": "recomputes what the later studies' committed results say",
    "tests/test_rope_base.py::test_lower_bound_of_the_studies": "the bound at every length of the studies",
    "tests/test_rope_base.py::test_the_paper_bound_for_head_width_128_at_1k": "the bound at head width 128",
    # transformers' own code, run live for every model type or config
    "tests/test_transformers_parity.py": "transformers' rotary code for every model type",
    "tests/test_rope_sweep.py": "transformers' config classes, live",
    "tests/test_rope_windows.py": "transformers' attention masks, live",
    "tests/test_rope_divergences.py": "transformers' rotary modules, live",
    "tests/test_rope_sites.py": "DeepSeek, GLM and other latent-attention models built and run per rotary site",
    "tests/test_config_vision.py": "transformers' vision encoders built and run on patch grids",
    "tests/test_rope_zoo.py::test_zoo_entry_matches_transformers": "transformers' code for every zoo checkpoint",
    "tests/test_architectures_parity.py::test_latent_attention_is_deepseek_v3_attention": "DeepSeek-V3 attention, live",
    # a model per method (and per window, cache or design), run token by token
    "tests/test_model.py::test_causal_a_later_token_never_changes_earlier_logits": "a model per method",
    "tests/test_model.py::test_logits_shape_and_gradients_reach_every_parameter": "a model per method, backward",
    "tests/test_model.py::test_forward_without_keywords_is_unchanged_by_explicit_default_positions": "a model per method",
    "tests/test_model.py::test_scrambled_sentence_gives_different_outputs": "a model per method",
    "tests/test_inference.py::test_windowed_cache_equals_a_full_forward_with_the_window_mask": "per method and window",
    "tests/test_inference.py::test_token_by_token_decoding_equals_the_full_forward": "decodes per method",
    "tests/test_inference.py::test_generation_with_the_cache_equals_recomputing_the_prefix": "generates per method",
    "tests/test_inference.py::test_left_padded_batch_equals_each_row_alone": "per method and row",
    "tests/test_inference.py::test_packed_row_equals_its_documents_run_separately": "per method and document",
    "tests/test_inference.py::test_per_row_offsets_with_the_cache": "per method",
    "tests/test_designs.py::test_drawn_plans_decode_in_chunks_like_the_full_forward": "decodes drawn plans step by step",
    "tests/test_designs.py::test_a_plan_of_pair_offsets_is_the_remapped_model": "runs the training-free remapped models",
    "tests/test_designs.py::test_each_design_generates_like_recomputing": "generates token by token per design",
    "tests/test_designs.py::test_each_design_decodes_like_its_full_forward": "decodes token by token per design",
    "tests/test_designs.py::test_each_design_survives_a_cast_to_half_precision": "a model per design, in half precision",
    "tests/test_windowing.py::test_max_windows_is_allowed_exactly": "attention over the largest number of windows",
    # other processes
    "tests/test_inspect.py::test_bad_input_is_one_line_and_status_2": "a python process per bad input",
    "tests/test_inspect.py::test_standard_input_and_engine_names": "python processes",
    "tests/test_inspect.py::test_a_good_run_from_the_shell": "a python process",
    "tests/test_explorer_ports.py::test_the_sweeps_configs_read_alike": "every sweep config in Python and in node",
}


def _slow_reason(nodeid: str) -> str | None:
    for key, reason in SLOW.items():
        if (key[1:] in nodeid.split("::")[-1]) if key.startswith("*") else nodeid.startswith(key):
            return reason
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        reason = _slow_reason(item.nodeid)
        if reason is not None:
            item.add_marker(pytest.mark.slow(reason=reason))
