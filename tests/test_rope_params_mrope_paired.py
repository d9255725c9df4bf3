"""Ernie 4.5 VL's M-RoPE sections: read_config refuses those transformers' rotary module crashes on.

Its rotary module (transformers 5.23.0, modeling_ernie4_5_vl_moe.py) reads three sections [h, w, t]:
at build it pre-rotates the first h + w rungs (evens, then odds) and keeps the last t
(``inv_freq[:-t]``, :94-99: with t = 0 that slice is empty and the build fails), and in its forward
it splits the frequencies by the sections, unpacks three parts and interleaves h and w with
``torch.stack`` (:123-126), which needs h == w. posenc checked only the sum (the table's
``mrope_sections.sum``); with ``mrope_sections.paired`` (derived by the table's generator by running
the module with unequal first sections of the same sum) it also refuses the rest.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import torch
from transformers import Ernie4_5_VLMoeTextConfig
from transformers.models.ernie4_5_vl_moe.modeling_ernie4_5_vl_moe import (
    Ernie4_5_VLMoeTextRotaryEmbedding,
)

from posenc.configs import _table, read_config
from posenc.rope import RotaryEmbedding

logging.getLogger("transformers").setLevel(logging.ERROR)

TYPE = "ernie4_5_vl_moe_text"
SMALL = {"hidden_size": 1024, "num_attention_heads": 8}  # head_dim 128: 64 rungs


def config_with(sections: list[int] | None) -> dict[str, Any]:
    params: dict[str, Any] = {"rope_type": "default", "rope_theta": 500000.0}
    if sections is not None:
        params["mrope_section"] = sections
    return {**SMALL, "model_type": TYPE, "rope_parameters": params}


def transformers_outcome(sections: list[int] | None) -> str | torch.Tensor:
    """The module's cos for text positions 0..5, or the name of the error it raises."""
    config = config_with(sections)
    try:
        rotary = Ernie4_5_VLMoeTextRotaryEmbedding(Ernie4_5_VLMoeTextConfig(**{
            k: v for k, v in config.items() if k != "model_type"}))
        cos, _ = rotary(torch.zeros(1, 6, 128), torch.arange(6)[None])
        return cos
    except Exception as error:  # noqa: BLE001 (what transformers raises is the point)
        return type(error).__name__


def test_the_table_marks_ernie_4_5_vl_paired() -> None:
    marked = sorted(t for t, e in _table.model_types().items() if (e.get("mrope_sections") or {}).get("paired"))
    assert marked == [TYPE]


# sections that sum to the 64 rungs, and what transformers does with them
CRASHING = [([24, 20, 20], "RuntimeError"),  # torch.stack of 24 and 20 frequencies
            ([20, 24, 20], "RuntimeError"),
            ([32, 32, 0], "RuntimeError"),   # the build's inv_freq[:-0] is empty
            ([22, 22, 20, 0], "ValueError"),  # three parts unpacked from four
            ([22, 42], "IndexError")]         # mrope_section[2] at the build


@pytest.mark.parametrize(("sections", "error"), CRASHING)
def test_sections_transformers_crashes_on_are_refused(sections: list[int], error: str) -> None:
    assert transformers_outcome(sections) == error
    message = re.escape(f"config['rope_parameters']['mrope_section'] ({sections}) must be three, [h, w, t] with "
                        f"h == w and t > 0: transformers' rotary module for model type '{TYPE}'")
    with pytest.raises(ValueError, match=message):
        read_config(config_with(sections))
    wrapped = {"model_type": "ernie4_5_vl_moe", "text_config": config_with(sections)}
    with pytest.raises(ValueError, match="must be three"):
        read_config(wrapped)


@pytest.mark.parametrize("sections", [None, [22, 22, 20], [0, 0, 64], [31, 31, 2]])
def test_sections_it_runs_read_as_its_text_rotation(sections: list[int] | None) -> None:
    # text tokens share one position on the three axes: the module's rungs come back in order, interleaved
    cos = transformers_outcome(sections)
    assert isinstance(cos, torch.Tensor)
    rope = read_config(config_with(sections))
    (layer,) = rope.layers.values()
    assert (layer.layout, layer.rotary_dim, layer.base) == ("interleaved", 128, 500000.0)
    ours, _ = RotaryEmbedding(dim=128, base=500000.0, layout="interleaved").tables(torch.arange(6))
    torch.testing.assert_close(cos[0, :, 0::2].double(), ours.double(), rtol=0, atol=1e-5)  # float32 angles


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the site's JavaScript")
def test_the_browser_port_refuses_them_alike(tmp_path: Path) -> None:
    from tests.test_explorer_ports import port_against_posenc
    every = [sections for sections, _ in CRASHING] + [None, [22, 22, 20], [0, 0, 64], [22, 22, 21]]
    configs = [config_with(sections) for sections in every]
    configs.append({"model_type": "ernie4_5_vl_moe", "text_config": config_with([24, 20, 20])})
    cases = [(json.dumps(config), None, None) for config in configs]
    problems, outcomes = port_against_posenc(tmp_path, cases)
    read = outcomes.count(True)
    assert not problems, "\n".join(problems[:10])
    assert read == 3  # None, [22, 22, 20], [0, 0, 64]; [22, 22, 21] fails the sum
