"""A head width the config class adds up from two keys is read as their sum, not as hidden / heads.

Mistral 4's config class sets ``head_dim = qk_nope_head_dim + qk_rope_head_dim`` whatever
``hidden_size`` and ``num_attention_heads`` give (transformers 5.23.0,
configuration_mistral4.py:131), and its rotary module builds ``head_dim * partial_rotary_factor / 2``
frequencies from that (modeling_mistral4.py:99, the class's fraction 0.5). read_config took
``hidden_size // num_attention_heads`` for a config without ``head_dim``: equal at the class's
defaults (4096 / 32 = 128 = 64 + 64), not at others (hidden 256 over 4 heads: read 64 wide, 32
rotated, where transformers has 128 and 64). The table's ``head_dim_from`` now carries the sum
(``{"key": a, "plus": [b]}``), derived by tools/rope_model_types/classes._summed_source: each key
moves ``head_dim`` by its own change and both by their sum. A ``head_dim`` the config gives is kept
by the class (set from the leftover arguments after the sum, configuration_utils.py:500-504), so the
sum does not win over it (``over_head_dim`` false); the rotary module then builds its frequencies
from the given one while the attention's heads stay the sum wide (modeling_mistral4.py:379, 450-457),
and the model fails where its rotary module's width, ``int(head_dim * partial_rotary_factor)``, is
not ``qk_rope_head_dim``: read_config refuses those (96 at the class's fraction) and reads the others
(posenc.configs._rotated_part; tests/test_rope_rotated_part.py).
"""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

transformers = pytest.importorskip("transformers", reason="transformers is a test dependency (requirements.lock)")

from posenc.configs import _table, read_config
from tests.test_rope_params_partial_ignored import mistral4, run_model

FOUR_HEADS = {"num_attention_heads": 4, "num_key_value_heads": 4}  # hidden 256 / 4 = 64, the class's 128
CASES = {
    "four heads, the class's fraction": mistral4(None, **FOUR_HEADS),
    "four heads, fraction 0.5 given": mistral4(0.5, **FOUR_HEADS),
    "four heads, no rope_parameters": {k: v for k, v in mistral4(None, **FOUR_HEADS).items()
                                       if k != "rope_parameters"},
    "two heads (hidden / heads is the sum)": mistral4(0.5),
    "head_dim given as the sum": mistral4(0.5, head_dim=128, **FOUR_HEADS),
}
OTHER_HEAD_DIM = mistral4(0.5, head_dim=96)
REFUSED = [OTHER_HEAD_DIM, mistral4(0.5, **FOUR_HEADS, qk_nope_head_dim=-2),
           mistral4(0.5, **FOUR_HEADS, qk_nope_head_dim=0, qk_rope_head_dim=0),
           mistral4(0.5, **FOUR_HEADS, qk_rope_head_dim=1.5)]


def live(config: dict[str, Any]) -> tuple[int, int]:
    """The class's head_dim and the number of frequencies its rotary module builds."""
    from transformers.models.mistral4.modeling_mistral4 import Mistral4RotaryEmbedding
    built = transformers.Mistral4Config.from_dict({k: v for k, v in copy.deepcopy(config).items() if k != "model_type"})
    return built.head_dim, int(Mistral4RotaryEmbedding(built).inv_freq.shape[-1])


def test_the_table_derives_the_sum_for_mistral_4_only() -> None:
    found = _table.model_types()
    assert found["mistral4"]["head_dim_from"] == {"key": "qk_nope_head_dim", "plus": ["qk_rope_head_dim"],
                                                  "over_head_dim": False}
    assert {k: v for k, v in found["mistral4"]["field_defaults"].items() if k.startswith("qk_")} == {
        "qk_rope_head_dim": 64, "qk_nope_head_dim": 64}
    # the generator probes every model type's class: no other one adds keys into head_dim
    assert [m for m, entry in found.items() if "plus" in (entry.get("head_dim_from") or {})] == ["mistral4"]


@pytest.mark.parametrize("name", CASES)
def test_read_config_reads_the_class_head_width(name: str) -> None:
    config = CASES[name]
    head_dim, frequencies = live(config)
    (layer,) = read_config(config).layers.values()
    assert (layer.dim, layer.rotary_dim) == (head_dim, 2 * frequencies)
    if "head_dim" not in config:
        assert head_dim == 128  # the sum of the class's defaults, 64 + 64, whatever hidden / heads is


def test_the_sum_is_what_transformers_runs() -> None:
    """hidden 256 over 4 heads: transformers' model runs with 128-wide heads, 64 features turned."""
    config = CASES["four heads, the class's fraction"]
    assert live(config) == (128, 32)
    run_model(config)
    (layer,) = read_config(config).layers.values()
    assert (layer.dim, layer.rotary_dim) == (128, 64)


def test_a_head_dim_given_other_than_the_sum_is_refused() -> None:
    assert live(OTHER_HEAD_DIM) == (96, 24)  # the class keeps 96: its rotary module builds 96 * 0.5 / 2 frequencies
    with pytest.raises(RuntimeError, match="must match the size"):  # the attention turns 64 features of 128
        run_model(OTHER_HEAD_DIM)
    words = (r"builds cos and sin for 48 features \(int\(head_dim \* partial_rotary_factor\) = int\(96 \* 0.5\)\), "
             r"narrower than the config\['qk_rope_head_dim'\] = 64 features its attention turns")
    with pytest.raises(ValueError, match=words):
        read_config(OTHER_HEAD_DIM)


@pytest.mark.parametrize(("more", "words"), [
    ({"qk_nope_head_dim": -2}, r"config\['qk_nope_head_dim'\] must be an integer >= 0, got -2"),
    ({"qk_nope_head_dim": 0, "qk_rope_head_dim": 0},
     r"config\['qk_nope_head_dim'\] \+ config\['qk_rope_head_dim'\] must be an integer >= 2, got 0"),
    ({"qk_rope_head_dim": 1.5}, r"config\['qk_rope_head_dim'\] must be an integer, got float 1.5"),
])
def test_bad_widths_are_refused_by_name(more: dict[str, Any], words: str) -> None:
    with pytest.raises((ValueError, TypeError), match=words):
        read_config(mistral4(0.5, **FOUR_HEADS, **more))


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the site's JavaScript")
def test_the_browser_port_reads_alike(tmp_path: Path) -> None:
    from tests.site.check_inspector import API_READING, posenc_reading
    from tests.test_explorer_ports import port_against_posenc, run_js
    configs = [*CASES.values(), *REFUSED]
    cases = [(json.dumps(c), None, None) for c in configs]
    problems, outcomes = port_against_posenc(tmp_path, cases)
    assert not problems, "\n".join(problems[:10])
    assert outcomes == [True] * len(CASES) + [False] * len(REFUSED)
    # the refusals' words themselves, not only their kinds
    theirs = run_js(tmp_path, API_READING.replace("([cases])", "(cases)"), cases[len(CASES):])
    assert isinstance(theirs, list)
    assert [json.loads(t)["error"] for t in theirs] == [posenc_reading(*c)["error"] for c in cases[len(CASES):]]
