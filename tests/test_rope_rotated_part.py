"""Mistral 4's rotated part read as transformers runs it: its attention turns the last
``qk_rope_head_dim`` features of heads ``qk_nope_head_dim + qk_rope_head_dim`` wide
(modeling_mistral4.py:379, 450-469) with cos and sin its rotary module builds from ``head_dim``
(``int(head_dim * partial_rotary_factor)`` features with a scaled rule, modeling_rope_utils.py:181;
all of ``head_dim`` with its default rule, modeling_mistral4.py:88-104); its class sets head_dim to
the sum and a missing fraction to ``qk_rope_head_dim`` over it, and keeps a head_dim the config
gives (configuration_mistral4.py:112-133, configuration_utils.py:500-504). read_config refused
other ``qk_*`` sizes with a fraction ("depends on keys this config changes") or without one
("config needs 'partial_rotary_factor'"), and any given head_dim other than the sum, although
transformers runs many of these. It now reads every config whose module builds the width the
attention turns, and refuses the others (where the model fails).

Checked live: each config built and run by transformers' own model; where it runs, read_config's
widths and its frequencies equal the module's; where it fails, read_config refuses it, naming the
two widths; the browser's port reads and refuses alike."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import torch

transformers = pytest.importorskip("transformers", reason="transformers is a test dependency (requirements.lock)")

from posenc.configs import from_config, read_config
from posenc.rope_scaling import rope_inverse_frequencies
from tests.test_rope_params_partial_ignored import mistral4, run_model

SMALL = {"qk_nope_head_dim": 32, "qk_rope_head_dim": 96}  # the sum stays 128
# its default rule builds all of head_dim; with no llama_4_scaling_beta the attention's query scale
# fails too (modeling_mistral4.py:476-480), after the rotation (:466-469): the width fails first
DEFAULT = {"rope_type": "default", "rope_theta": 10000.0}
CASES: dict[str, tuple[dict[str, Any], bool]] = {  # name: (config, whether transformers' model runs)
    "head_dim 96, fraction 2/3": (mistral4(2 / 3, head_dim=96), True),
    "head_dim 64, fraction 1": (mistral4(1.0, head_dim=64), True),
    "head_dim 256, fraction 1/4": (mistral4(0.25, head_dim=256), True),
    "rope 96 of 128, fraction 3/4": (mistral4(0.75, **SMALL), True),
    "rope 96 of 128, the class's fraction": (mistral4(None, **SMALL), True),
    "rope 96 of 128, no rope_parameters": ({k: v for k, v in mistral4(None, **SMALL).items()
                                            if k != "rope_parameters"}, True),
    "rope 32 of 128, fraction 1/4": (mistral4(0.25, qk_nope_head_dim=96, qk_rope_head_dim=32), True),
    "rope 96 of 128, head_dim 128, fraction 3/4": (mistral4(0.75, head_dim=128, **SMALL), True),
    "rope 96 of 128, fraction 1/2": (mistral4(0.5, **SMALL), False),
    "head_dim 96, the class's fraction": (mistral4(None, head_dim=96), False),
    "head_dim 96, fraction 1/2": (mistral4(0.5, head_dim=96), False),
    "rope type default": ({**mistral4(None), "rope_parameters": DEFAULT}, False),
    "rope 34 of 128, the class's fraction": (mistral4(None, qk_nope_head_dim=94, qk_rope_head_dim=34), True),
}
ODD = mistral4(None, qk_nope_head_dim=95, qk_rope_head_dim=33)  # 33 features cannot turn in pairs


def _module(config: dict[str, Any]) -> torch.Tensor:
    """The inverse frequencies transformers' rotary module builds for the config."""
    from transformers.models.mistral4.modeling_mistral4 import Mistral4RotaryEmbedding
    built = transformers.Mistral4Config.from_dict({k: v for k, v in copy.deepcopy(config).items() if k != "model_type"})
    return Mistral4RotaryEmbedding(built).inv_freq


def _runs(config: dict[str, Any]) -> bool:
    try:
        run_model(config)
    except RuntimeError as error:
        assert "must match the size" in str(error), error
        return False
    return True


@pytest.mark.parametrize("name", CASES)
def test_read_exactly_where_transformers_runs(name: str) -> None:
    config, runs = CASES[name]
    assert _runs(config) is runs
    rope = config.get("qk_rope_head_dim", 64)
    if not runs:
        built = 2 * _module(config).numel()
        relation = "narrower" if built < rope else "other"
        with pytest.raises(ValueError, match=rf"builds cos and sin for {built} features .*, {relation} than the "
                                             rf"config\['qk_rope_head_dim'\] = {rope} features its attention turns"):
            read_config(config)
        return
    (layer,) = read_config(config).layers.values()
    assert (layer.dim, layer.rotary_dim) == (128, rope)
    theirs = _module(config).double()
    kwargs = from_config(config)
    ours = rope_inverse_frequencies(kwargs["dim"], base=kwargs["base"], scaling=kwargs["scaling"],
                                    rotary_dim=kwargs["rotary_dim"])
    torch.testing.assert_close(ours.double(), theirs, rtol=1e-6, atol=0.0)


def test_an_odd_rotated_part_is_refused() -> None:
    with pytest.raises(RuntimeError):  # transformers' rotation splits the part in two halves (or pairs)
        run_model(ODD)
    with pytest.raises(ValueError, match=r"config\['qk_rope_head_dim'\] must be a positive even integer .*, got 33"):
        read_config(ODD)


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the site's JavaScript")
def test_the_browser_port_reads_alike(tmp_path: Path) -> None:
    from tests.site.check_inspector import API_READING, posenc_reading
    from tests.test_explorer_ports import port_against_posenc, run_js
    cases = [(json.dumps(config), None, None) for config in [*(c for c, _ in CASES.values()), ODD]]
    problems, outcomes = port_against_posenc(tmp_path, cases)
    assert not problems, "\n".join(problems[:10])
    assert outcomes == [runs for _, runs in CASES.values()] + [False]
    refused = [case for case, ok in zip(cases, outcomes) if not ok]
    theirs = run_js(tmp_path, API_READING.replace("([cases])", "(cases)"), refused)
    assert isinstance(theirs, list)
    assert [json.loads(t)["error"] for t in theirs] == [posenc_reading(*c)["error"] for c in refused]
