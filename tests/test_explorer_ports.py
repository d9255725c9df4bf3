"""The explorer's JavaScript ports of posenc (docs/javascripts/explorer/) run under node against posenc.

The full parity check runs in Chromium (``make check-site``: tests/site/check_explorer.py and
check_inspector.py); this is its quick form for ``make test``: the JSON reading (Python's values:
ints, floats, key order), the ports of ``read_config`` / ``from_config`` / the frequencies and of
inspect's warnings, on every zoo config and each kind of bad input, compared with posenc by the
same rules (equal values and warnings, numbers to 1e-9, and for bad input the same kind of error,
``check_inspector.error_kind``), and the data file hooks/rope_data.py serves.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "hooks"))

import rope_data  # noqa: E402

from tests.site.check_inspector import API_READING, BAD_INPUTS, ZOO, compare, error_kind, kinds, posenc_reading  # noqa: E402
from tests.test_rope_config_fuzz import CONFIGS, KEYS, NUMBERS, SMALL, WORDS  # noqa: E402
from tests.rope_port_cases import FOUND, _case  # noqa: E402,F401 (_case: tests/test_rope_divergences.py)

MODULES = ["pyvalues.js", "json_values.js", "rope_scaling.js", "rope_two_way.js", "rope_table.js", "rope_ntk_alpha.js",
           "rope_layer.js", "rope_sites.js", "rope_text_part.js", "rope_params.js", "rope_class_rope.js", "rope_plan.js",
           "rope_config.js", "rope_engines.js", "formulas.js"]
RUNNER = """
const fs = require("fs");
globalThis.window = globalThis;
eval(fs.readFileSync(process.argv[1], "utf8"));
for (const file of JSON.parse(process.argv[2])) eval(fs.readFileSync(file, "utf8"));
const [code, args] = JSON.parse(fs.readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(eval(code)(...args)));
"""

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the site's JavaScript")


def run_js(tmp_path: Path, code: str, *args: object, modules: list[str] = MODULES) -> object:
    data = tmp_path / "rope-data.js"
    data.write_text(rope_data.rope_data_script())
    files = [str(ROOT / "docs" / "javascripts" / "explorer" / name) for name in modules]
    done = subprocess.run(["node", "-e", RUNNER, str(data), json.dumps(files)], input=json.dumps([code, list(args)]),
                          capture_output=True, text=True, timeout=120, check=True)
    return json.loads(done.stdout)


def test_the_data_file_holds_the_table_and_the_zoo_unchanged() -> None:
    script = rope_data.rope_data_script()
    prefix = "window.posencRopeData = "
    data = json.loads(script[script.index(prefix) + len(prefix):].rstrip().rstrip(";"))
    assert json.loads(data["table"]) == json.loads((ROOT / "posenc" / "configs" / "model_types.json").read_text())
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
        problems += [f"{text[:60]!r}: {d}" for d in compare(kinds(json.loads(ours)), kinds(theirs))]
    assert not problems, "\n".join(problems[:10])


@needs_node
def test_json_errors_and_python_values(tmp_path: Path) -> None:
    docs = ['{"a": 1,}', '[1 2]', '{"a" 1}', '"\\q"', '"\\u12"', "\ufeff{}", "01", "[1e400, NaN, -0.0, 8.0, 8]",
            '{"a": 1, "a": 2.5}', '"x\ty"', "1" * 4400]
    code = """(docs) => docs.map((d) => { try { return [true, window.posencPython.repr(window.posencJSON.parseJSON(d))]; }
                                       catch (e) { return [false, `${e.name}: ${e.message}`]; } })"""
    expected = []
    for doc in docs:
        try:
            expected.append([True, repr(json.loads(doc))])  # the values as Python holds them: ints, floats, key order
        except ValueError as error:  # JSONDecodeError is a ValueError, as the reader's errors are
            expected.append([False, error_kind(f"ValueError: {error}")])
    got = [[ok, out if ok else error_kind(out)] for ok, out in run_js(tmp_path, code, docs)]
    assert got == expected
    assert [ok for ok, _ in expected].count(False) == 9  # both outcomes compared: 9 refusals, 2 values




def random_configs(count: int, seed: int = 22) -> list[tuple[str, str | None, int | None]]:
    """Seeded configs of the fuzz's kinds: a small config of any model type with a few keys set to odd
    values (any depth), or a zoo config with one value replaced."""
    rng = random.Random(seed)
    model_types = sorted(rope_data_model_types())

    def value(depth: int = 0) -> object:
        roll = rng.random()
        if roll < 0.6 or depth > 2:
            return rng.choice([*NUMBERS, *WORDS, None, True, False])
        if roll < 0.8:
            return [value(depth + 1) for _ in range(rng.randint(0, 3))]
        return {rng.choice(KEYS + WORDS): value(depth + 1) for _ in range(rng.randint(0, 3))}

    cases = []
    for _ in range(count):
        if rng.random() < 0.5:
            config: dict[str, object] = {**SMALL, "model_type": rng.choice(model_types)}
            for _ in range(rng.randint(1, 4)):
                config[rng.choice(KEYS)] = value()
        else:
            config = json.loads(json.dumps(rng.choice(CONFIGS)))
            parent = config
            while rng.random() < 0.5 and any(isinstance(v, dict) for v in parent.values()):
                parent = rng.choice([v for v in parent.values() if isinstance(v, dict)])
            parent[rng.choice([*parent, *KEYS])] = value()
        cases.append((json.dumps(config), rng.choice([None, None, None, "half", "interleaved"]),
                      rng.choice([None, 5000, 300000])))
    return cases


def rope_data_model_types() -> list[str]:
    return sorted(json.loads((ROOT / "posenc" / "configs" / "model_types.json").read_text())["model_types"])


def port_against_posenc(tmp_path: Path, cases: list) -> tuple[list[str], list[bool]]:
    """The port's reading of each (config text, layout, length) case against posenc's: the differences,
    each naming its case, and whether posenc read each case (False: refused)."""
    results = run_js(tmp_path, API_READING.replace("([cases])", "(cases)"), cases)
    assert isinstance(results, list) and len(results) == len(cases)
    problems, read = [], []
    for (text, layout, length), ours in zip(cases, results):
        theirs = posenc_reading(text, layout, length)
        read.append(theirs["ok"])
        problems += [f"{text[-120:]!r} (layout={layout}, length={length}): {d}"
                     for d in compare(kinds(json.loads(ours)), kinds(theirs))]
    return problems, read


@needs_node
def test_what_the_fuzz_found_and_random_configs_read_alike(tmp_path: Path) -> None:
    cases = FOUND + random_configs(400)
    problems, outcomes = port_against_posenc(tmp_path, cases)
    refused = outcomes.count(False)
    assert not problems, "\n".join(problems[:10])
    assert 0.2 * len(cases) < refused < 0.9 * len(cases)  # both kinds of outcome are exercised


@needs_node
def test_the_sweeps_configs_read_alike(tmp_path: Path) -> None:
    """The configs tests/rope_sweep.py builds for every model type (flat sets and null entries for
    per-layer-type classes, given layer lists, ...): compared with transformers there, with posenc here."""
    pytest.importorskip("transformers", reason="the sweep builds its configs from transformers' config classes")
    from tests import rope_sweep

    cases = [(json.dumps(config), None, length) for model_type in rope_sweep.model_types()
             for config in rope_sweep.cases(model_type).values() for length in (None, 300000)]
    results = run_js(tmp_path, API_READING.replace("([cases])", "(cases)"), cases)
    assert isinstance(results, list) and len(results) == len(cases)
    problems = []
    for (text, layout, length), ours in zip(cases, results):
        theirs = posenc_reading(text, layout, length)
        problems += [f"{text[:80]!r} (length={length}): {d}" for d in compare(kinds(json.loads(ours)), kinds(theirs))]
    assert not problems, "\n".join(problems[:10])


SITES_READING = """(cases) => cases.map(([text, layout]) => {
  const C = window.posencRopeConfig, L = window.posencRopeSites;
  try {
    const config = window.posencJSON.parseJSON(text);
    return {ok: true, value: L.rotarySites(config, C.readConfig(config, layout))};
  } catch (error) { return {ok: false, error: `${error.name}: ${error.message}`}; }
})"""


@needs_node
def test_rotary_sites_read_alike(tmp_path: Path) -> None:
    """The inspector's line per rotary site (rope_sites.js rotarySites) against posenc.configs.sites.rotary_sites:
    every model type with a rule, DeepSeek-V4's kinds of layer, a model with one site, and bad widths."""
    import dataclasses

    from posenc.configs.sites import _RULES, rotary_sites

    configs: list[tuple[dict[str, object], str | None]] = [({"model_type": m, "num_hidden_layers": 2}, None) for m in _RULES]
    configs += [({"model_type": "deepseek_v4", "num_hidden_layers": 3, "compress_ratios": [0, 4, 128]}, None),
                ({"model_type": "deepseek_v4", "num_hidden_layers": 1, "index_head_dim": 8}, None),
                ({"model_type": "deepseek_v4", "num_hidden_layers": 2, "index_head_dim": "x"}, None),
                ({"model_type": "deepseek_v32", "num_hidden_layers": 2, "index_head_dim": 32}, None),
                ({"model_type": "qwen4_exp_text", "num_hidden_layers": 4, "indexer_n_heads": 4, "indexer_kv_heads": 1,
                  "indexer_head_dim": 256, "indexer_budget": 64, "indexer_compress_ratio": 4}, None),
                ({"model_type": "glm_moe_dsa", "num_hidden_layers": 2, "index_head_dim": 2.0}, None),
                ({"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2}, None),
                ({"hidden_size": 64, "num_attention_heads": 4}, "interleaved"),
                (json.loads(ZOO[0].read_text()), None)]
    results = run_js(tmp_path, SITES_READING, [[json.dumps(c), layout] for c, layout in configs])
    problems, refused = [], 0
    for (config, layout), ours in zip(configs, results):
        try:
            sites = rotary_sites(config, layout=layout)
            theirs = {"ok": True, "value": {k: [dataclasses.asdict(s) for s in v] for k, v in sites.items()}}
        except (ValueError, TypeError) as error:
            theirs, refused = {"ok": False, "error": f"{type(error).__name__}: {error}"}, refused + 1
        problems += [f"{config}: {d}" for d in compare(kinds(ours), kinds(theirs))]
    assert not problems, "\n".join(problems[:10])
    assert refused == 3  # both outcomes compared


@needs_node
def test_engine_warnings_read_alike(tmp_path: Path) -> None:
    """The engines known to compute a config otherwise (posenc.engines.engine_warnings, applied in the
    page by rope_engines.js from the same data): every zoo config, and every case of
    tests/engines/test_engine_warnings.py, where each disagreement is met and, beside it, not met."""
    from tests.engines.test_engine_warnings import CASES as ENGINE_CASES

    cases = [(path.read_text(), None, None) for path in ZOO]
    cases += [(json.dumps(config), None, None) for config, _ in ENGINE_CASES.values()]
    results = run_js(tmp_path, API_READING.replace("([cases])", "(cases)"), cases)
    warned = []
    for (text, _, _), ours in zip(cases, results):
        theirs, ours = posenc_reading(text, None, None), json.loads(ours)
        if not theirs["ok"]:  # a zoo config that needs a layout: no engine warnings to compare
            assert error_kind(ours["error"]) == error_kind(theirs["error"])
            continue
        assert ours["value"]["engines"] == theirs["value"]["engines"], text[:80]
        warned += [json.loads(text).get("_name")] if theirs["value"]["engines"] else []
    # both outcomes are exercised: the zoo's six configs that an engine computes otherwise, and the cases
    zoo_warned = ["gpt-oss-120b", "llama-3.2-1b", "llama-3.2-3b", "phi-3.5-mini-instruct", "phi-4-mini-instruct",
                  "qwen3-vl-yarn"]
    assert sorted(name for name in warned if name) == zoo_warned
    assert len(warned) - len(zoo_warned) == sum(bool(expected) for _, expected in ENGINE_CASES.values())


@needs_node
def test_the_ports_encoders_are_pythons(tmp_path: Path) -> None:
    """rope_two_way.js's ENCODERS (the model types that see both ways with no window) and
    DECODER_SWITCH are posenc.configs._two_way's, in the same order."""
    from posenc.configs._two_way import DECODER_SWITCH, ENCODERS

    assert run_js(tmp_path, "() => [posencRopeTwoWay.ENCODERS, posencRopeTwoWay.DECODER_SWITCH]") == [
        list(ENCODERS), DECODER_SWITCH]


NOTES_MEANING = """(texts) => texts.map((text) => {
  let rope;
  try { rope = window.posencRopeConfig.readConfig(window.posencJSON.parseJSON(text)); } catch (e) { return []; }
  const W = window.posencInspectorWords, generic = W.MEANINGS.length - 1;
  // the findings' warnings (inspector.js findings: warnings_for's, the reading's notes among them)
  const said = window.posencRopeConfig.warningsFor(rope, null, window.posencJSON.parseJSON(text));
  return said.filter((w) => W.MEANINGS.findIndex(([pattern]) => pattern.test(w)) === generic);
})"""


@needs_node
def test_no_warning_of_the_zoo_or_the_parity_cases_gets_the_generic_meaning(tmp_path: Path) -> None:
    """Every warning the inspector shows for a zoo config or a parity case has a meaning of its
    own (inspector_words.js MEANINGS), never the catch-all 'does something posenc does not read'
    (review5 X4: the model-wide window's note fell to it)."""
    chart = tmp_path / "chart.js"
    chart.write_text('window.posencInspectorChart = {num: (v) => Number(v).toLocaleString("en-US")};')
    texts = [path.read_text() for path in ZOO] + [text for text, _, _ in FOUND]
    results = run_js(tmp_path, NOTES_MEANING, texts, modules=[*MODULES, str(chart), "inspector_words.js"])
    generic = sorted({warning[:120] for found in results for warning in found})
    assert not generic, "\n".join(generic)


def test_error_kinds_tell_problems_apart() -> None:
    """The kind of an error (what the parity checks compare for bad input) names the class and the key:
    two messages about different keys, or of different classes, are different kinds; a rewording is not."""
    kind = error_kind
    assert kind("TypeError: config['head_dim'] must be an integer, got str '8'") == "TypeError: config['head_dim']"
    assert kind("TypeError: config['head_dim'] must be a whole number") == "TypeError: config['head_dim']"  # reworded
    assert kind("ValueError: config['head_dim'] must be an integer <= 65536, got 100000") == "ValueError: config['head_dim']"
    assert kind("TypeError: config['hidden_size'] must be an integer, got str '8'") == "TypeError: config['hidden_size']"
    assert kind("ValueError: rope parameters of type 'linear' got the unknown key 'fator' (allowed: 'factor')") == \
        "ValueError: unknown key 'fator'"
    assert kind("ValueError: rope_theta must be > 0, got -5.0") == "ValueError: rope_theta"
    assert kind("ValueError: Expecting ',' delimiter: line 1 column 24 (char 23)") == "ValueError: not JSON"
    assert kind("ValueError: not JSON (',' or '}' expected, got \"hidden_size\" at line 1, column 24)") == "ValueError: not JSON"
    # over the site check's bad inputs: one kind for the five that are not JSON, a kind of its own for
    # each of the others except the three bad bases (rope_theta: negative, infinite, NaN)
    kinds_seen = [kind(posenc_reading(text, None, None)["error"]) for _, text, _ in BAD_INPUTS]
    assert kinds_seen.count("ValueError: not JSON") == 5 and kinds_seen.count("ValueError: rope_theta") == 3
    assert len(set(kinds_seen)) == len(BAD_INPUTS) - 4 - 2
    # a port that blamed the wrong key, or raised the wrong class, would fail the comparison
    theirs = {"ok": False, "error": "TypeError: config['head_dim'] must be an integer, got str '8'"}
    for wrong in ("TypeError: config['hidden_size'] must be an integer", "ValueError: config['head_dim'] must be an integer"):
        assert compare(kinds({"ok": False, "error": wrong}), kinds(theirs))
    assert not compare(kinds({"ok": False, "error": "TypeError: config['head_dim'] is not a whole number"}), kinds(theirs))


WORDS_READING = """(texts) => texts.map((text) => {
  const rope = window.posencRopeConfig.readConfig(window.posencJSON.parseJSON(text));
  const W = window.posencInspectorWords;
  const out = {};
  for (const [name, layer] of Object.entries(rope.layers)) out[name] = [W.windowWords(name, layer, rope, []),
    layer.window === null ? null : W.windowFact(layer, [])];
  const generic = W.MEANINGS.length - 1; // the last meaning: 'does something posenc does not read'
  return [out, W.FACTS.nope[0], rope.notes.map((note) => W.MEANINGS.findIndex(([pattern]) => pattern.test(note)) < generic)];
})"""


@needs_node
def test_the_inspectors_window_words_follow_the_reading(tmp_path: Path) -> None:
    """The inspector's Window row and finding (inspector_words.js) for each kind of window, against
    words built here from posenc's reading (posenc.configs._windows.reach for a centred window)."""
    from posenc.configs import read_config
    from posenc.configs._windows import reach

    configs = [{"model_type": "t5gemma2_text", "num_hidden_layers": 6, "sliding_window": 4096},
               {"model_type": "t5gemma2_text", "num_hidden_layers": 6, "sliding_window": 3},
               {"model_type": "modernbert", "num_hidden_layers": 3},
               {"model_type": "gemma3_text", "num_hidden_layers": 6, "sliding_window": 512,
                "use_bidirectional_attention": True},
               {"model_type": "mistral", "num_hidden_layers": 2, "sliding_window": 4096},
               {"model_type": "gemma4_text", "num_hidden_layers": 6, "use_bidirectional_attention": "all"},
               {"model_type": "gemma", "num_hidden_layers": 2, "use_bidirectional_attention": True},
               {"model_type": "llama4_text", "num_hidden_layers": 4}]
    # inspector_chart.js draws with d3 and the widgets; its integer format, num, is all the words use
    chart = tmp_path / "chart.js"
    chart.write_text('window.posencInspectorChart = {num: (v) => Number(v).toLocaleString("en-US")};')
    results = run_js(tmp_path, WORDS_READING, [json.dumps({**SMALL, **c}) for c in configs],
                     modules=[*MODULES, str(chart), "inspector_words.js"])
    assert isinstance(results, list)
    for config, (words, nope, explained) in zip(configs, results):
        rope = read_config({**SMALL, **config})
        two_sided = any(layer.window_sides != "before" for layer in rope.layers.values())
        for name, layer in rope.layers.items():
            if layer.window is None:
                expected = ["none: every token, before and after" if two_sided else "none: every earlier token", None]
            elif layer.window_sides == "centred":
                before, after = reach(layer.window, layer.window_sides)
                told = f"{before:,} token{'' if before == 1 else 's'} before the query and {after:,} after"
                expected = [f"{layer.window:,} tokens: {told}", ["window_centred", told]]
            elif layer.window_sides == "both":
                told = f"{layer.window:,} tokens on each side of the query"
                expected = [told, ["window_both", told]]
            elif name.startswith("chunked"):  # a chunk, not the last W tokens (review5 X1)
                told = f"chunks of {layer.window:,} tokens"
                expected = [told, ["window_chunked", told]]
            else:
                expected = [f"the last {layer.window:,} tokens", ["window", f"window of {layer.window:,} tokens"]]
            assert words[name] == expected, (config["model_type"], name)
        assert "where the model's attention is causal" in nope  # true of an encoder's NoPE layers too
        if "use_bidirectional_attention" in config:  # its note has a meaning of its own, not the generic one
            assert explained and all(explained), config["model_type"]
    assert results[0][0]["sliding_attention"][0] == "4,096 tokens: 2,047 tokens before the query and 2,048 after"
    assert results[1][0]["sliding_attention"][0] == "3 tokens: 1 token before the query and 1 after"
