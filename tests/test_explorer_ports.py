"""The explorer's JavaScript ports of posenc (docs/javascripts/explorer/) run under node against posenc.

The full parity check runs in Chromium (``make check-site``: tests/site/check_explorer.py and
check_inspector.py); this is its quick form for ``make test``: the ports of Python's JSON decoder,
of ``read_config`` / ``from_config`` / the frequencies and of inspect's warnings, on every zoo
config and each kind of bad input, compared with posenc by the same rules (equal strings and
messages, numbers to 1e-9), and the data file hooks/rope_data.py serves.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "hooks"))

import rope_data  # noqa: E402

from tests.site.check_inspector import API_READING, BAD_INPUTS, ZOO, compare, posenc_reading  # noqa: E402

MODULES = ["pyvalues.js", "pyjson.js", "rope_scaling.js", "rope_params.js", "rope_config.js", "formulas.js"]
RUNNER = """
const fs = require("fs");
globalThis.window = globalThis;
eval(fs.readFileSync(process.argv[1], "utf8"));
for (const file of JSON.parse(process.argv[2])) eval(fs.readFileSync(file, "utf8"));
const [code, args] = JSON.parse(fs.readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(eval(code)(...args)));
"""

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the site's JavaScript")


def run_js(tmp_path: Path, code: str, *args: object) -> object:
    data = tmp_path / "rope-data.js"
    data.write_text(rope_data.rope_data_script())
    files = [str(ROOT / "docs" / "javascripts" / "explorer" / name) for name in MODULES]
    done = subprocess.run(["node", "-e", RUNNER, str(data), json.dumps(files)], input=json.dumps([code, list(args)]),
                          capture_output=True, text=True, timeout=120, check=True)
    return json.loads(done.stdout)


def test_the_data_file_holds_the_table_and_the_zoo_unchanged() -> None:
    script = rope_data.rope_data_script()
    prefix = "window.posencRopeData = "
    data = json.loads(script[script.index(prefix) + len(prefix):].rstrip().rstrip(";"))
    assert json.loads(data["table"]) == json.loads((ROOT / "posenc" / "rope_model_types.json").read_text())
    assert sorted(entry["text"] for entry in data["zoo"]) == sorted(path.read_text() for path in ZOO)
    assert len(data["zoo"]) == len(ZOO) >= 35


@needs_node
def test_zoo_configs_and_bad_inputs_read_as_posenc_reads_them(tmp_path: Path) -> None:
    cases = [(path.read_text(), None, length) for path in ZOO for length in (None, 300000)]
    cases += [(text, None, None) for _, text, _ in BAD_INPUTS]
    results = run_js(tmp_path, API_READING.replace("([cases])", "(cases)"), cases)
    assert isinstance(results, list) and len(results) == len(cases)
    problems = []
    for (text, layout, length), ours in zip(cases, results):
        theirs = posenc_reading(text, layout, length)
        problems += [f"{text[:60]!r}: {d}" for d in compare(json.loads(ours), theirs)]
    assert not problems, "\n".join(problems[:10])


@needs_node
def test_json_errors_and_python_values(tmp_path: Path) -> None:
    docs = ['{"a": 1,}', '[1 2]', '{"a" 1}', '"\\q"', '"\\u12"', "\ufeff{}", "01", "[1e400, NaN, -0.0, 8.0, 8]",
            '{"a": 1, "a": 2.5}', '"x\ty"', "1" * 4400]
    code = """(docs) => docs.map((d) => { try { return window.posencPython.repr(window.posencJSON.parseJSON(d)); }
                                       catch (e) { return `${e.name}: ${e.message}`; } })"""
    expected = []
    for doc in docs:
        try:
            expected.append(repr(json.loads(doc)))
        except ValueError as error:  # JSONDecodeError is a ValueError, as the port's errors are
            expected.append(f"ValueError: {error}")
    assert run_js(tmp_path, code, docs) == expected
