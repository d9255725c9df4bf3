"""The models table's *layers* cell and its departures mark (†), against the zoo files' own keys.

The expected cells are written from the raw JSON (the model-wide window and
the declared context, the layer count, Qwen3-Next's full-attention interval;
for the mark, the register's model types, keys and value conditions), not
from `read_config`, which the cells read.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from posenc._zoo_rows import DEPARTS, zoo_departures_table, zoo_row
from posenc.configs import DIVERGENCES
from posenc.configs._divergences import Divergence

ZOO = Path(__file__).resolve().parents[1] / "posenc" / "zoo"

# a model-wide window (no layer_types): every layer is masked by it
WHOLE_MODEL_WINDOW = ["mistral-7b-v0.1", "starcoder2-7b",
                      "phi-3.5-mini-instruct", "phi-4-mini-instruct"]


def _entry(name: str) -> dict[str, Any]:
    return json.loads((ZOO / f"{name}.json").read_text())


@pytest.mark.parametrize("name", WHOLE_MODEL_WINDOW)
def test_a_model_wide_window_is_sliding_only_where_it_cuts(name: str) -> None:
    entry = _entry(name)
    assert "layer_types" not in entry
    window, context = entry["sliding_window"], entry["max_position_embeddings"]
    kind = "sliding" if window < context else "full"
    assert window % 1024 == 0  # the cell gives the width in k of 1,024 tokens: 4096 is "4k"
    width = f" ({window // 1024}k)" if kind == "sliding" else ""
    assert zoo_row(entry)[1] == f"{entry['num_hidden_layers']} {kind}{width}"


def test_the_phi_windows_are_longer_than_the_context() -> None:
    # the case the rule is for: without it both would read "32 sliding"
    for name in ("phi-3.5-mini-instruct", "phi-4-mini-instruct"):
        entry = _entry(name)
        assert entry["sliding_window"] > entry["max_position_embeddings"]


def test_linear_attention_layers_are_named_so() -> None:
    entry = _entry("qwen3-next-80b-a3b-instruct")
    layers, every = entry["num_hidden_layers"], entry["full_attention_interval"]
    full = layers // every
    assert zoo_row(entry)[1] == (f"{layers - full} linear attention, "
                                 f"{full} full")


# --- the departures mark (†) and its list, against the register and the files' own keys ---------
#
# Expected from the raw JSON and the register's fields (model type, key, value conditions: a key
# holds its value only with the same JSON type, so 1 is not true), not from read_config's notes,
# which the mark reads.

def _triggers(config: dict[str, Any], entry: Divergence) -> bool:
    conditions = all(type(config.get(key)) is type(value) and config.get(key) == value
                     for key, value in entry.when)
    return config["model_type"] == entry.model_type and config.get(entry.key) is not None and conditions


def _expected_keys(zoo_entry: dict[str, Any]) -> list[str]:
    config = {key: value for key, value in zoo_entry.items() if not key.startswith("_")}
    config["model_type"] = zoo_entry.get("_read_as", config["model_type"])
    return list(dict.fromkeys(entry.key for entry in DIVERGENCES if _triggers(config, entry)))


TABLE_ROWS = sorted(path.stem for path in ZOO.glob("*.json") if _entry(path.stem).get("_table_row"))


@pytest.mark.parametrize("name", TABLE_ROWS)
def test_a_row_is_marked_exactly_where_a_register_entry_fits_its_file(name: str) -> None:
    entry = _entry(name)
    cell = zoo_row(entry)[0]
    marked = f"{entry['_name']} {DEPARTS}]" in cell
    assert marked == bool(_expected_keys(entry)), (name, cell)
    assert cell.count(DEPARTS) == int(marked)


def test_qwen25_1m_is_marked_for_its_dual_chunk_key_and_only_for_it() -> None:
    entry = _entry("qwen2.5-14b-instruct-1m")
    assert entry["dual_chunk_attention_config"]["chunk_size"] == 262144  # the published value
    assert _expected_keys(entry) == ["dual_chunk_attention_config"]
    assert zoo_row(entry)[0].startswith(f"[Qwen2.5-1M: qwen2.5-14b-instruct-1m {DEPARTS}](https://huggingface.co/")
    # the same file without the key: no departure, no mark; every other cell unchanged
    plain = {key: value for key, value in entry.items() if key != "dual_chunk_attention_config"}
    assert DEPARTS not in zoo_row(plain)[0] and zoo_row(plain)[1:] == zoo_row(entry)[1:]


def test_at_least_one_row_is_marked() -> None:
    # a mark that never shows would pass the parametrized test above: the zoo holds a departure
    assert any(_expected_keys(_entry(name)) for name in TABLE_ROWS)


def test_the_departures_list_names_each_key_of_each_marked_row() -> None:
    header, rows = zoo_departures_table()
    assert header == ["model", "key"]
    expected = [(entry["_name"], key) for entry in map(_entry, TABLE_ROWS) for key in _expected_keys(entry)]
    names = [re.fullmatch(r"\[[^:]+: (?P<name>[^\]]+)\]\(https://\S+\)", model) for model, _ in rows]
    got = [(name["name"] if name else None, key) for name, (_, key) in zip(names, rows)]
    assert got == expected and expected
