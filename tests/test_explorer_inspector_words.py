"""The config inspector's panel (docs/javascripts/explorer/inspector.js and inspector_words.js) under node,
with a stand-in for the page: the rows of each kind of layer, the findings and the summary line it shows
for a config, against posenc's reading of the same config.

The browser check (tests/site/check_inspector.py, ``make check-site``) opens the built page; this is the
quick form for the words: layers that are not attention (recurrent, convolution, per-token) get what
carries order in them and no window or temperature rows; a window at least as long as the declared
context is said to cut nothing within it; the summary names the pasted model type.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from posenc.configs import read_config
from posenc.configs._table import NOT_ATTENTION_LAYER_TYPES
from tests.test_explorer_ports import MODULES, ROOT, rope_data

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the site's JavaScript")

VISION = ["rope_vision_towers.js", "rope_vision.js", "inspector_vision.js"]
# a page of nodes that keep their children, text and parent; the widgets' helpers that draw nothing
RUNNER = """
const fs = require("fs");
globalThis.window = globalThis;
class Node {
  constructor(tag) { Object.assign(this, {tag, children: [], textContent: "", dataset: {}, value: "", parent: null});
    this.classList = {add() {}, remove() {}, toggle() {}}; }
  adopt(nodes) { for (const n of nodes) n.parent = this; return nodes; }
  append(...nodes) { this.children.push(...this.adopt(nodes)); }
  prepend(...nodes) { this.children.unshift(...this.adopt(nodes)); }
  replaceChildren(...nodes) { this.children = this.adopt(nodes); }
  replaceWith(node) { this.parent.children[this.parent.children.indexOf(this)] = node; node.parent = this.parent; }
  before(node) { this.parent.children.splice(this.parent.children.indexOf(this), 0, node); node.parent = this.parent; }
  get parentElement() { return this.parent; }
  setAttribute() {}
  addEventListener() {}
}
globalThis.document = {createElement: (tag) => new Node(tag),
  createTextNode: (text) => Object.assign(new Node("#text"), {textContent: text})};
let widget = null;
globalThis.posencExplorerWidgets = {register: (name, make) => { widget = make; },
  helpers: {fmt: (v, d = 3) => Number(Number(v).toPrecision(d)).toString(), minus: (s) => String(s),
            timed: (box, update) => update,
            frame: (host, title) => {
              const [root, controls, plots, readout] = ["div", "div", "div", "p"].map((t) => new Node(t));
              readout.className = "posenc-explorer__readout";
              root.append(controls, readout, plots);
              host.append(root);
              return {root, controls, plots, readout};
            }}};
eval(fs.readFileSync(process.argv[1], "utf8"));
const files = JSON.parse(process.argv[2]);
for (const file of files.slice(0, -2)) eval(fs.readFileSync(file, "utf8"));
window.posencInspectorChart = {...window.posencInspectorChart, chart: () => {}}; // d3 draws nothing here
for (const file of files.slice(-2)) eval(fs.readFileSync(file, "utf8"));
const find = (n, test) => (test(n) ? [n] : n.children.flatMap((c) => find(c, test)));
const text = (n) => n.textContent + n.children.map(text).join("");
const out = JSON.parse(fs.readFileSync(0, "utf8")).map(([config, length]) => {
  const host = new Node("div");
  const redraw = widget(host);
  find(host, (n) => n.tag === "textarea")[0].value = config;
  find(host, (n) => n.tag === "select")[0].value = ""; // as typing in the text area sets the zoo's menu
  find(host, (n) => n.tag === "input" && n.inputMode === "numeric")[0].value = length;
  redraw();
  const layers = {};
  for (const section of find(host, (n) => n.className === "posenc-inspector__layer")) {
    const rows = {};
    const [terms, values] = ["dt", "dd"].map((tag) => find(section, (n) => n.tag === tag).map(text));
    terms.forEach((term, i) => { rows[term] = values[i]; });
    layers[text(find(section, (n) => n.tag === "h3")[0])] = {rows,
      caption: find(section, (n) => n.className === "posenc-inspector__caption").map(text).join("")};
  }
  const [readout] = find(host, (n) => n.className === "posenc-explorer__readout");
  return {layers, findings: find(host, (n) => n.tag === "li").map(text), readout: text(readout),
          links: find(host, (n) => n.tag === "a").map((a) => a.href),
          options: find(find(host, (n) => n.tag === "select")[0], (n) => n.tag === "option" && n.value)
            .map((o) => [o.value, text(o)]),
          labels: find(host, (n) => n.tag === "label").map(text)};
});
process.stdout.write(JSON.stringify(out));
"""


def shown(tmp_path: Path, configs: list[tuple[dict[str, Any], int | None]]) -> list[dict[str, Any]]:
    """What the inspector shows for each (config, chosen length): rows per layer heading, findings, readout."""
    data = tmp_path / "rope-data.js"
    data.write_text(rope_data.rope_data_script())
    names = [*MODULES, *VISION, "inspector_chart.js", "inspector_words.js", "inspector_results.js", "inspector.js"]
    files = [str(ROOT / "docs" / "javascripts" / "explorer" / name) for name in names]
    cases = [[json.dumps(config), "" if length is None else str(length)] for config, length in configs]
    done = subprocess.run(["node", "-e", RUNNER, str(data), json.dumps(files)], input=json.dumps(cases),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return list(json.loads(done.stdout))


def zoo(name: str) -> dict[str, Any]:
    return dict(json.loads((ROOT / "posenc" / "zoo" / f"{name}.json").read_text()))


def test_the_stand_in_shows_a_plain_reading(tmp_path: Path) -> None:
    """The page stand-in works: Llama 3.1's one kind of layer, its rows and the summary, as posenc reads it."""
    [page] = shown(tmp_path, [(zoo("llama-3.1-8b"), None)])
    [(heading, layer)] = page["layers"].items()
    assert heading == "full_attention (32 layers)"
    assert layer["rows"]["Rotates"] == "yes" and layer["rows"]["Window"] == "none: every earlier token"
    assert layer["rows"]["Base"] == "500,000" and "Temperature" in layer["rows"]
    assert page["readout"].startswith("Read your config: model type llama, one kind of layer; declared context 131,072")


def test_layers_that_are_not_attention_say_what_carries_order(tmp_path: Path) -> None:
    """Qwen3-Next's Gated DeltaNet layers and Zamba2's Mamba layers (both read as linear_attention), and each
    kind posenc files as not attention: no 'no positions', no window or temperature rows, their own finding."""
    zamba2 = {"model_type": "zamba2", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 6,
              "layers_block_type": ["mamba", "hybrid", "mamba", "mamba", "hybrid", "mamba"], "use_mem_rope": True}
    kinds = {"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 6,
             "layer_types": ["full_attention", *NOT_ATTENTION_LAYER_TYPES]}
    configs = [zoo("qwen3-next-80b-a3b-instruct"), zamba2, kinds]
    pages = shown(tmp_path, [(c, None) for c in configs])
    for config, page in zip(configs, pages):
        reading = read_config(config)
        others = [n for n in reading.layers if n in NOT_ATTENTION_LAYER_TYPES]
        assert others, config["model_type"]
        for heading, layer in page["layers"].items():
            name = heading.split(" (")[0]
            rotates = layer["rows"]["Rotates"]
            if name in others:
                assert rotates.startswith("no: ") and rotates.endswith("only attention layers rotate"), heading
                assert "Window" not in layer["rows"] and "Temperature" not in layer["rows"], heading
            else:
                assert "Window" in layer["rows"] and rotates == ("yes" if reading.layers[name].rotates else rotates)
        assert not any(f.startswith(n) and ("only through the other layers" in f or "no positions" in f)
                       for n in others for f in page["findings"])
    recurrent = next(f for f in pages[0]["findings"] if f.startswith("linear_attention: not attention"))
    assert "carries order by itself" in recurrent and "../architectures/#hybrids" in pages[0]["links"]
    assert pages[1]["layers"]["linear_attention (4 layers)"]["rows"]["Rotates"].startswith("no: a recurrent layer")
    # one fact per way order reaches them (mamba is read as linear_attention, as transformers renames it)
    facts = [f.split(": not attention: ")[0] for f in pages[2]["findings"] if ": not attention: " in f]
    assert facts == ["linear_attention", "conv", "mlp, moe"]
    findings = " ".join(pages[2]["findings"])
    assert "short causal convolution" in findings and "act on each token alone" in findings


def test_a_window_across_the_whole_context_is_said_to_cut_nothing(tmp_path: Path) -> None:
    """Qwen2-7B-Instruct's published window (131,072) switched on against its declared 32,768: the Window row
    and the finding say it cuts nothing there, and no pairs are counted 'within the window'; a window shorter
    than the context, or a chosen length past the window, keeps the window's words and count."""
    qwen2 = {**zoo("qwen2-7b-instruct"), "use_sliding_window": True, "max_window_layers": 21}
    cases = [(qwen2, None), ({**qwen2, "sliding_window": 4096}, None), (qwen2, 200_000),
             ({"model_type": "modernbert", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 3,
              "max_position_embeddings": 64,
               "local_attention": 128}, None)]
    pages = shown(tmp_path, cases)
    for (config, _), page in zip(cases, pages):
        reading = read_config(config)
        assert reading.layers["sliding_attention"].window == config.get("sliding_window", 64)
    idle = pages[0]["layers"]["sliding_attention (7 layers)"]
    assert idle["rows"]["Window"] == ("the last 131,072 tokens; it reaches across the whole declared context, "
                                      "32,768: no effect within it")
    assert "within the window" not in idle["caption"] and "within the declared context" in idle["caption"]
    assert not any("their context is the window" in f for f in pages[0]["findings"])
    assert any(f.startswith("sliding_attention: window of 131,072 tokens, no effect within the declared context "
                            "32,768: The window reaches across the whole context shown") for f in pages[0]["findings"])
    cut = pages[1]["layers"]["sliding_attention (7 layers)"]
    assert cut["rows"]["Window"] == "the last 4,096 tokens" and "within the window of 4,096" in cut["caption"]
    assert any("their context is the window" in f for f in pages[1]["findings"])
    longer = pages[2]["layers"]["sliding_attention (7 layers)"]  # 200,000 chosen: the window cuts past 131,072
    assert longer["rows"]["Window"] == "the last 131,072 tokens" and "within the window of 131,072" in longer["caption"]
    # ModernBERT: 64 tokens on each side of the query reach across a context of 64
    both = pages[3]["layers"]["sliding_attention (2 layers)"]
    assert both["rows"]["Window"].endswith("on each side of the query; it reaches across the whole declared "
                                           "context, 64: no effect within it")


def test_the_facts_say_what_the_reading_gives(tmp_path: Path) -> None:
    """Gemma 4's p-RoPE layers: one 'p-RoPE' (it was doubled); T5Gemma2's centred window: the fact gives the
    reach exactly as posenc.configs._windows.reach does (2,047 before, 2,048 after for 4,096)."""
    from posenc.configs._windows import reach

    small = {"hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 6, "max_position_embeddings": 8192}
    gemma4 = {**small, "model_type": "gemma4_text"}
    t5 = {**small, "model_type": "t5gemma2_text", "sliding_window": 4096}
    assert read_config(gemma4).layers["full_attention"].scaling["type"] == "proportional"
    pages = shown(tmp_path, [(gemma4, None), (t5, None)])
    [p_rope] = [f for f in pages[0]["findings"] if "p-RoPE" in f]
    assert p_rope.startswith("full_attention: p-RoPE: The slowest pairs do not turn at all") and p_rope.count("p-RoPE") == 1
    before, after = reach(4096, read_config(t5).layers["sliding_attention"].window_sides)
    [centred] = [f for f in pages[1]["findings"] if "before the query" in f]
    assert centred.startswith(f"sliding_attention: {before:,} tokens before the query and {after:,} after: ")
    assert "(W - 1) // 2 before it and W // 2 after, one more after than before when W is even" in centred


def test_the_summary_names_the_pasted_model_type(tmp_path: Path) -> None:
    """A config whose language model posenc reads as another model type (VideoLLaMA 3's qwen2, T5Gemma2's
    encoder's t5gemma2_text) is summed up under its own model_type, the one read named beside it."""
    transformers = pytest.importorskip("transformers", reason="the configs are transformers' class defaults")
    video, t5 = (json.loads(transformers.AutoConfig.for_model(t).to_json_string()) for t in ("video_llama_3", "t5gemma2"))
    configs = [video, t5["encoder"]]  # T5Gemma2's encoder: model type t5gemma2_encoder, read as t5gemma2_text
    pages = shown(tmp_path, [(c, None) for c in configs])
    for config, page in zip(configs, pages):
        read = read_config(config).model_type
        assert read != config["model_type"]
        assert page["readout"].startswith(f"Read your config: model type {config['model_type']} "
                                          f"(its text model read as {read}), "), page["readout"]


def test_an_encoder_decoder_config_says_which_part_was_read(tmp_path: Path) -> None:
    """A whole T5Gemma 2 config is read as its decoder (posenc.configs._reader._part_notes): its
    window, as given in config['decoder'], and a meaning that says so, not the catch-all."""
    transformers = pytest.importorskip("transformers", reason="the config is transformers' class defaults")
    whole = json.loads(transformers.T5Gemma2Config().to_json_string())
    whole["decoder"]["sliding_window"] = 1024
    [page] = shown(tmp_path, [(whole, None)])
    assert page["layers"]["sliding_attention (22 layers)"]["rows"]["Window"].startswith("the last 1,024 tokens")
    [finding] = [f for f in page["findings"] if "config['decoder']" in f]
    assert "the part that writes the text" in finding and "does something posenc does not read" not in finding
    assert any(note.startswith("read: config['decoder']") for note in read_config(whole).notes)


def test_the_zoo_menu_marks_the_rebuilt_configs(tmp_path: Path) -> None:
    """The menu is 'a config of posenc's zoo', not 'a published config': each file that is not a published
    config.json copied whole (its _provenance.verbatim) is marked rebuilt."""
    [page] = shown(tmp_path, [(zoo("llama-3.1-8b"), None)])
    assert "Start from a config of posenc's zoo" in page["labels"]
    assert not any("published config" in label for label in page["labels"])
    files = {json.loads(p.read_text()).get("_name", p.stem): json.loads(p.read_text())
             for p in (ROOT / "posenc" / "zoo").glob("*.json")}
    assert sorted(name for name, _ in page["options"]) == sorted(files)
    for name, label in page["options"]:
        copied = files[name].get("_provenance", {}).get("verbatim") is True
        assert label == (name if copied else f"{name} (rebuilt)"), name
    assert 0 < sum(label == name for name, label in page["options"]) < len(files)


def test_p_rope_layers_count_the_pairs_that_turn(tmp_path: Path) -> None:
    """Gemma 4's proportional layers rotate the whole head in form, but only a quarter of the pairs turn:
    the width, the caption and the summary say how many, as posenc's frequencies give them."""
    from posenc.configs import from_config
    from posenc.rope_scaling import rope_inverse_frequencies

    gemma4 = {"hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 6, "max_position_embeddings": 8192,
              "model_type": "gemma4_text"}
    kwargs = from_config(gemma4, "full_attention")
    theta = rope_inverse_frequencies(kwargs["dim"], base=kwargs["base"], scaling=kwargs["scaling"],
                                     rotary_dim=kwargs["rotary_dim"])
    turning, pairs = int((theta > 0).sum()), theta.numel()
    assert 0 < turning < pairs
    [page] = shown(tmp_path, [(gemma4, None)])
    layer = page["layers"]["full_attention (1 layer)"]
    assert layer["rows"]["Rotated width"].endswith(f"({pairs} pairs; {turning} turn, {pairs - turning} never do: \u03b8 = 0)")
    assert f"within the declared context: {turning} of {turning} that turn." in layer["caption"]
    assert f"({turning} of {pairs} pairs turn)" in page["readout"]


def test_layers_opened_both_ways_say_so(tmp_path: Path) -> None:
    """A config's own is_causal false (Llama: no window; Mistral: its window both ways) and Step 3p7's
    flag (its window not halved): full layers read 'every token, before and after' (window_sides 'both'),
    the windows 'on each side', and each note its own meaning, never the halving of Gemma's."""
    small = {"hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2}
    step = {**small, "model_type": "step3p5", "layer_types": ["full_attention", "sliding_attention"],
            "sliding_window": 9, "use_bidirectional_attention": True,
            "rope_parameters": {k: {"rope_type": "default"} for k in ("full_attention", "sliding_attention")}}
    configs = [{**small, "model_type": "llama", "is_causal": False},
               {**small, "model_type": "mistral", "sliding_window": 7, "is_causal": False}, step]
    pages = shown(tmp_path, [(c, None) for c in configs])
    windows = [{h.split(" (")[0]: layer["rows"]["Window"] for h, layer in page["layers"].items()} for page in pages]
    assert windows[0]["full_attention"].startswith("none: every token, before and after")
    assert windows[1]["full_attention"].startswith("7 tokens on each side of the query")
    assert windows[2]["full_attention"].startswith("none: every token, before and after")
    assert windows[2]["sliding_attention"].startswith("8 tokens on each side of the query")
    assert read_config(step).layers["sliding_attention"].window == 8
    for page, meaning in zip(pages, ["turns the model's causal masks into two-way ones"] * 2 + ["as far as the numbers shown"]):
        [finding] = [f for f in page["findings"] if "after the query" in f]
        assert meaning in finding and "already halved" not in finding, finding


def test_this_sessions_readings_get_warnings_of_their_own(tmp_path: Path) -> None:
    """The notes of the readings added for issue 33 this session (T5Gemma's module config without its
    flag, Granite 4's switch, per-layer bases, HunYuan-VL's legacy names) each get a meaning of their
    own in inspector_words.js, not the catch-all (as the zoo's and the parity cases' do)."""
    from tests.test_explorer_ports import NOTES_MEANING, run_js
    from tests.test_rope_class_renames import FLAT
    from tests.test_rope_legacy_names import GRANITE
    from tests.test_rope_windows_bidirectional import T5

    shape = {"hidden_size": 64, "num_attention_heads": 2, "num_key_value_heads": 2, "num_hidden_layers": 8}
    configs = [T5, {**GRANITE, "position_embedding_type": "nope"}, {**shape, "model_type": "muse_spark_text"},
               {**shape, "model_type": "granite_swa", "layer_rope_theta": [0, 1e4] * 4}, FLAT]
    assert "is_decoder" in " ".join(read_config(T5).notes)  # the note is there to be given a meaning
    chart = tmp_path / "chart.js"
    chart.write_text('window.posencInspectorChart = {num: (v) => Number(v).toLocaleString("en-US")};')
    results = run_js(tmp_path, NOTES_MEANING, [json.dumps(c) for c in configs],
                     modules=[*MODULES, str(chart), "inspector_words.js"])
    assert results == [[]] * len(configs)


def test_qwen25_1m_s_departure_says_what_dual_chunk_attention_changes(tmp_path: Path) -> None:
    """Qwen2.5-14B-Instruct-1M's published config (posenc/zoo): its register note (qwen2's
    dual_chunk_attention_config) gets its own meaning, with the chapter on Dual Chunk Attention, not the
    register's generic one; the other departures keep theirs."""
    config = zoo("qwen2.5-14b-instruct-1m")
    assert any(n.startswith("config['dual_chunk_attention_config']") for n in read_config(config).notes)
    [page] = shown(tmp_path, [(config, None)])
    [finding] = [f for f in page["findings"] if "departs from the published model" in f]
    assert "Dual Chunk Attention, the same up to the length the note gives" in finding
    assert "../extension-designs-measured/#training-free" in page["links"]
    assert "meet other windows or rotations" not in finding
