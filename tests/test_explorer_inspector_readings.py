"""The config inspector's readings a reader found short or misleading (review5 X3, X6, X7, X9), under
node with the page stand-in of tests/test_explorer_inspector_words.py.

X6: a config whose scaling rule reaches past the context it declares (Qwen2.5-7B's YaRN file: factor 4
on 32,768, declared 32,768) shows the length the rule reaches, as posenc.inspect compares it ("the
rule's"): in the Scaling row, the summary, the caption and as a line of the chart. X3: the slowest pair
of a length-dependent rule (LongRoPE, dynamic NTK) says which length it holds for, in posenc.inspect's
words. X7: posenc's own kind name "full_attention:nope" is said once to be posenc's. X9: an engine
warning's "(see engines.md#...)" is the terminal's pointer; the page shows the link instead.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from posenc.inspect import describe
from tests.test_explorer_inspector_words import RUNNER, VISION, zoo
from tests.test_explorer_ports import MODULES, ROOT, rope_data

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the site's JavaScript")

# The stand-in's chart draws nothing; here it records the lines the chart would draw (inspector_chart.js
# draws one dashed line per entry of contexts(result, layer), labelled "<label> <n>"), per kind of layer.
CHANGES = [
    ("chart: () => {}};", "chart: (box, holder, name, layer, data, result) => holder.append(Object.assign(new Node('svg'), "
     "{className: 'lines', textContent: JSON.stringify(window.posencInspectorChart.contexts(result, layer))}))};"),
    ('caption: find(section, (n) => n.className === "posenc-inspector__caption").map(text).join("")};',
     'caption: find(section, (n) => n.className === "posenc-inspector__caption").map(text).join(""),\n'
     '      lines: JSON.parse(find(section, (n) => n.className === "lines").map(text).join("") || "[]")};'),
]


def shown(tmp_path: Path, configs: list[tuple[dict[str, Any], int | None]]) -> list[dict[str, Any]]:
    script = RUNNER
    for old, new in CHANGES:
        assert script.count(old) == 1, f"the stand-in changed: {old!r}"
        script = script.replace(old, new)
    data = tmp_path / "rope-data.js"
    data.write_text(rope_data.rope_data_script())
    names = [*MODULES, *VISION, "inspector_chart.js", "inspector_words.js", "inspector_results.js", "inspector.js"]
    files = [str(ROOT / "docs" / "javascripts" / "explorer" / name) for name in names]
    cases = [[json.dumps(config), "" if length is None else str(length)] for config, length in configs]
    done = subprocess.run(["node", "-e", script, str(data), json.dumps(files)], input=json.dumps(cases),
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return list(json.loads(done.stdout))


def _only(page: dict[str, Any]) -> dict[str, Any]:
    [layer] = page["layers"].values()
    return dict(layer)


def test_the_length_a_rule_reaches_is_shown(tmp_path: Path) -> None:
    """Qwen2.5-7B's YaRN file: 4 x 32,768 from its own rope_scaling keys, past its declared 32,768. The
    Scaling row, the summary, the caption and the chart name 131,072; the pairs counted within it are
    transformers' own YaRN frequencies' (ROPE_INIT_FUNCTIONS). Llama 3.2 1B's llama3 rule (32 x 8,192)
    reaches 262,144 past its 131,072 likewise; Qwen3's YaRN file declares what its rule reaches (4 x
    32,768 = 131,072), so nothing is added there."""
    transformers = pytest.importorskip("transformers", reason="the expected pairs are transformers' YaRN frequencies")
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    qwen25, llama32, qwen3 = zoo("qwen2.5-7b-instruct-yarn"), zoo("llama-3.2-1b"), zoo("qwen3-1.7b-yarn")
    scaling = qwen25["rope_scaling"]
    reach = int(scaling["factor"] * scaling["original_max_position_embeddings"])
    assert reach == 4 * 32768 > qwen25["max_position_embeddings"]
    live = transformers.AutoConfig.for_model(**{k: v for k, v in qwen25.items() if not k.startswith("_")})
    inv_freq, _ = ROPE_INIT_FUNCTIONS["yarn"](live, "cpu")
    turning = sum(2 * math.pi / f <= reach for f in inv_freq.tolist())
    pages = shown(tmp_path, [(qwen25, None), (llama32, None), (qwen3, None)])
    layer = _only(pages[0])
    assert layer["rows"]["Scaling"].endswith(f"; reached by the rule: {reach:,} (4 \u00d7 32,768)")
    assert f", reached by the scaling rule {reach:,}." in pages[0]["readout"]
    assert f"the rule's {reach:,})" in layer["caption"]
    assert f"Pairs completing a turn within the rule's context: {turning} of {len(inv_freq)}." in layer["caption"]
    assert ["rule's", reach] in layer["lines"]  # the chart's line, "rule's 131,072"
    # posenc.inspect says the same count (the terminal's half of review5 X6)
    assert f"pairs completing a turn within the rule's context: {turning} of {len(inv_freq)}" in describe(qwen25)
    rule = llama32["rope_scaling"]
    stretched = int(rule["factor"] * rule["original_max_position_embeddings"])
    assert stretched == 262144 > llama32["max_position_embeddings"]
    assert _only(pages[1])["rows"]["Scaling"].endswith(f"; reached by the rule: {stretched:,} (32 \u00d7 8,192)")
    assert ["rule's", stretched] in _only(pages[1])["lines"]
    assert qwen3["rope_scaling"]["factor"] * qwen3["rope_scaling"]["original_max_position_embeddings"] == \
        qwen3["max_position_embeddings"]
    untouched = _only(pages[2])
    assert "rule" not in untouched["rows"]["Scaling"] + untouched["caption"] + pages[2]["readout"]
    assert [label for label, _ in untouched["lines"]] == ["trained", "declared"]


def test_the_slowest_pair_of_a_length_dependent_rule_says_its_length(tmp_path: Path) -> None:
    """Phi-4-mini's LongRoPE (trained 4,096 in its file): 'for inputs up to 4,096 tokens' with no length,
    'at a length of 131,072' with one; a dynamic NTK config without a trained context: 'for short
    inputs' (posenc reads no trained context for dynamic scaling); a static rule (YaRN) names no length. Each is posenc.inspect's own line's start."""
    phi = zoo("phi-4-mini-instruct")
    dynamic = {"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2,
               "max_position_embeddings": 4096, "rope_scaling": {"rope_type": "dynamic", "factor": 2.0}}
    cases = [(phi, None), (phi, 131072), (dynamic, None), (dynamic, 10000), (zoo("qwen2.5-7b-instruct-yarn"), None)]
    expected = [f"Slowest pair for inputs up to {phi['original_max_position_embeddings']:,} tokens: ",
                "Slowest pair at a length of 131,072: ", "Slowest pair for short inputs: ",
                "Slowest pair at a length of 10,000: ",
                "Slowest pair: "]
    pages = shown(tmp_path, cases)
    for (config, length), page, words in zip(cases, pages, expected):
        caption = _only(page)["caption"]
        python = re.search(r"^  (slowest pair[^:]*: )", describe(config, length=length), re.M)
        assert python is not None
        assert caption.startswith(python.group(1).capitalize()), (caption[:80], python.group(1))
        assert caption.startswith(words), caption[:80]


def test_posencs_own_kind_name_is_said_once(tmp_path: Path) -> None:
    """SmolLM3: transformers' layer type is full_attention for all 36 layers; posenc names the 9 whose
    entry in no_rope_layers is 0 (its attention's use_rope = config.no_rope_layers[layer_idx],
    modeling_smollm3.py:192) full_attention:nope, and says so once, on their section."""
    smollm3 = zoo("smollm3-3b")
    assert set(smollm3["layer_types"]) == {"full_attention"}
    nope = smollm3["no_rope_layers"].count(0)
    [page] = shown(tmp_path, [(smollm3, None)])
    assert f"full_attention:nope ({nope} layers)" in page["layers"]
    rows = page["layers"][f"full_attention:nope ({nope} layers)"]["rows"]
    assert list(rows)[0] == "Name"
    assert rows["Name"] == ("posenc's name for the full_attention layers whose entry in no_rope_layers is 0; "
                            "the config calls them full_attention")
    everything = json.dumps([page["layers"], page["findings"], page["readout"]])
    assert everything.count("posenc's name") == 1
    assert not any("Name" in layer["rows"] for heading, layer in page["layers"].items() if ":nope" not in heading)


def test_engine_warnings_show_the_link_not_the_path(tmp_path: Path) -> None:
    """Phi-4-mini's engine warnings: posenc.engines ends each with '(see engines.md#<section>)' for the
    terminal (kept there); the page shows the text without it, then a 'Read more' link to that section."""
    from posenc.configs import read_config
    from posenc.engines import engine_warnings

    phi = zoo("phi-4-mini-instruct")
    rope = read_config(phi)
    said = engine_warnings(rope.model_type, [layer.scaling for layer in rope.layers.values() if layer.rotates])
    pointers = [re.search(r" \(see engines\.md#([\w-]+)\)$", text) for text in said]
    assert said and all(pointers)
    [page] = shown(tmp_path, [(phi, None)])
    shown_warnings = [f for f in page["findings"] if f.startswith("Engine warning: ")]
    assert len(shown_warnings) == len(said)
    for text, pointer, on_page in zip(said, pointers, shown_warnings):
        assert pointer is not None
        assert on_page == f"Engine warning: {text[:pointer.start()]}Read more"
        assert f"../engines/#{pointer.group(1)}" in page["links"]
