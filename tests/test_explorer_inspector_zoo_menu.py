"""The config inspector's zoo menu (docs/javascripts/explorer/inspector.js) under node, with the page
stand-in of tests/test_explorer_inspector_words.py, here choosing each config from the menu.

A zoo file of a model type the pinned transformers lacks, whose notes name the code it runs with
(``_read_as``: Kimi K2 as deepseek_v3), is read as that type when chosen from the menu, as posenc's
models table reads it (posenc/_zoo_rows.py) and as the summary line says; typed or pasted, the same
text is read as it stands. A config posenc cannot read without a layout asks for one in the Layout
menu's words, not in Python's (``pass layout='half'``).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from posenc._zoo_rows import zoo_row
from posenc.configs import read_config
from tests.test_explorer_inspector_words import RUNNER, VISION
from tests.test_explorer_ports import MODULES, ROOT, rope_data

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the site's JavaScript")

ZOO = ROOT / "posenc" / "zoo"
# The stand-in types into the text area (so the menu reads ""); here each case names the menu's choice, and the
# problem line (the error the widget shows) comes back too.
CHANGES = [
    ("map(([config, length]) => {", "map(([config, length, chosen]) => {"),
    ('[0].value = ""; // as typing in the text area sets the zoo\'s menu', "[0].value = chosen;"),
    ('labels: find(host, (n) => n.tag === "label").map(text)};',
     ('labels: find(host, (n) => n.tag === "label").map(text),\n'
      '          problem: find(host, (n) => n.className === "posenc-inspector__problem").map(text).join("")};')),
]


def runner() -> str:
    script = RUNNER
    for old, new in CHANGES:
        assert script.count(old) == 1, f"the stand-in changed: {old!r}"
        script = script.replace(old, new)
    return script


def shown(tmp_path: Path, cases: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """What the inspector shows for each (text, menu choice): "" is typed text."""
    data = tmp_path / "rope-data.js"
    data.write_text(rope_data.rope_data_script())
    names = [*MODULES, *VISION, "inspector_chart.js", "inspector_words.js", "inspector_results.js", "inspector.js"]
    files = [str(ROOT / "docs" / "javascripts" / "explorer" / name) for name in names]
    done = subprocess.run(["node", "-e", runner(), str(data), json.dumps(files)],
                          input=json.dumps([[text, "", chosen] for text, chosen in cases]),
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return list(json.loads(done.stdout))


def entries() -> list[dict[str, Any]]:
    return [json.loads(path.read_text()) for path in sorted(ZOO.glob("*.json"))]


def test_a_zoo_file_with_read_as_is_read_as_the_models_table_reads_it(tmp_path: Path) -> None:
    """Kimi K2 (model type kimi_k2, which the pinned transformers lacks) chosen from the menu: read as
    deepseek_v3, the same rows as that text with its model type replaced, the layout the models table
    shows, and the summary says so; typed, its text is refused for want of a layout, as read_config does."""
    named = [e for e in entries() if "_read_as" in e]
    assert [e["_name"] for e in named] == ["kimi-k2-instruct"]  # the zoo's one such file today
    texts = [(ZOO / f"{e['_name']}.json").read_text() for e in named]
    renamed = [json.dumps({**e, "model_type": e["_read_as"]}) for e in named]
    pages = shown(tmp_path, [*((t, e["_name"]) for t, e in zip(texts, named)), *((t, "") for t in renamed),
                             *((t, "") for t in texts)])
    chosen, retyped, typed = pages[:len(named)], pages[len(named):2 * len(named)], pages[2 * len(named):]
    for entry, menu, same, own in zip(named, chosen, retyped, typed):
        assert menu["problem"] == "" and menu["layers"] == same["layers"] and menu["findings"] == same["findings"]
        row = zoo_row(entry)  # the models table's cells: model, layers, layout, ...
        rope = read_config({**{k: v for k, v in entry.items() if not k.startswith("_")}, "model_type": entry["_read_as"]})
        for heading, layer in menu["layers"].items():
            assert layer["rows"]["Layout"].split(":")[0] == row[2]
            assert heading.split(" ")[0] in rope.layers
        assert (f"model type {entry['model_type']} (read as {entry['_read_as']}, as the models table reads this zoo "
                "file)") in menu["readout"]
        with pytest.raises(ValueError, match="layout is needed"):
            read_config({k: v for k, v in entry.items() if not k.startswith("_")})
        assert own["problem"].startswith("Not read: layout is needed")


def test_a_missing_layout_is_asked_for_in_the_menus_words(tmp_path: Path) -> None:
    """InternLM2.5 (model type internlm2, not in the pinned transformers, no _read_as: the models table
    says 'not in transformers'): chosen from the menu it asks for a layout, in the Layout menu's words,
    with read_config's reason and its description of each layout; no Python keyword is shown."""
    entry = json.loads((ZOO / "internlm2.5-7b.json").read_text())
    assert "_read_as" not in entry and zoo_row(entry)[2] == "not in transformers"
    with pytest.raises(ValueError) as raised:
        read_config({k: v for k, v in entry.items() if not k.startswith("_")})
    words = re.fullmatch(r"layout is needed: (.*); pass layout='half' \((.*)\) or "
                         r"layout='interleaved' \((.*)\)", str(raised.value))
    assert words, raised.value
    why, half, interleaved = words.groups()
    [page] = shown(tmp_path, [((ZOO / "internlm2.5-7b.json").read_text(), "internlm2.5-7b")])
    assert page["problem"] == (f"Not read: layout is needed: {why}: choose half ({half}) or interleaved "
                               f"({interleaved}) in the Layout menu above.")
    assert "pass layout" not in page["problem"] and "layout=" not in page["problem"]
