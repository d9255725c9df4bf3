"""The browser inspector's vision section (docs/javascripts/explorer/inspector_vision.js) under node, with a
stand-in for the page: what it reads and the headings and notes it shows, against posenc.

VideoLLaMA 3's tower is read per kind of input (``read_vision_config``'s ``input_kind``): the inspector
shows both readings, images first, each headed with its kind and carrying posenc's notes for it (their
pointer to the other ``input_kind`` names where that reading is on the page instead); every
other model type keeps one reading (tests/site/inspector_widget.py checks those in Chromium).
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from posenc._inspect_vision import describe_vision
from posenc.configs.vision import (
    BY_INPUT_KIND,
    INPUT_KINDS,
    VISION_MODEL_TYPES,
    read_vision_config,
)
from tests.test_explorer_vision_port import MODULES, ROOT, differences, rope_data

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the site's JavaScript")

RUNNER = """
const fs = require("fs");
globalThis.window = globalThis;
globalThis.posencExplorerWidgets = {helpers: {fmt: (v, d) => v.toPrecision(d), minus: (s) => s}};
const node = (tag, cls, text) => ({tag, cls, text: text || "", children: [], append(...c) { this.children.push(...c); },
                                   setAttribute() {}});
globalThis.document = {createTextNode: (text) => node("#text", null, text)};
eval(fs.readFileSync(process.argv[1], "utf8"));
for (const file of JSON.parse(process.argv[2])) eval(fs.readFileSync(file, "utf8"));
const texts = (n, tag) => n.tag === tag ? [n.text] : (n.children || []).flatMap((c) => texts(c, tag));
const out = JSON.parse(fs.readFileSync(0, "utf8")).map((text) => {
  const config = window.posencJSON.parseJSON(text);
  const result = window.posencInspectorVision.readVision(config);
  const page = node("div");
  window.posencInspectorVision.render(node, page, {...result, rope: null, textError: null});
  return {vision: result.vision, error: result.visionError && result.visionError.message,
          headings: texts(page, "h3"), notes: texts(page, "li").filter((t) => t),
          readout: result.vision ? window.posencInspectorVision.readout(result.vision) : null};
});
process.stdout.write(JSON.stringify(out));
"""


def shown(tmp_path: Path, configs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    data = tmp_path / "rope-data.js"
    data.write_text(rope_data.rope_data_script())
    files = [str(ROOT / "docs" / "javascripts" / "explorer" / name) for name in [*MODULES, "inspector_vision.js"]]
    done = subprocess.run(["node", "-e", RUNNER, str(data), json.dumps(files)], input=json.dumps(list(map(json.dumps, configs))),
                          capture_output=True, text=True, timeout=120, check=True)
    return list(json.loads(done.stdout))


def _fields(config: dict[str, Any], kind: str | None) -> dict[str, Any]:
    return json.loads(json.dumps(dataclasses.asdict(read_vision_config(config, kind))))


@pytest.mark.parametrize("model_type", BY_INPUT_KIND)
def test_videollama_3_shows_the_image_then_the_video_reading(tmp_path: Path, model_type: str) -> None:
    config = {"model_type": model_type}
    [page] = shown(tmp_path, [config])
    assert page["error"] is None and isinstance(page["vision"], list) and len(page["vision"]) == 2
    for ours, kind in zip(page["vision"], INPUT_KINDS):
        assert not differences(ours, _fields(config, kind))
    assert page["headings"] == ["Vision encoder: video_llama_3_vision, for images",
                                "Vision encoder: video_llama_3_vision, for videos"]
    notes = [n for kind in INPUT_KINDS for n in read_vision_config(config, kind).notes]
    # each reading's notes, in order, under its heading; the pointer to the other input_kind names where that
    # reading is on the page (images first: the videos' below, the images' above)
    pointers = {"; read them with input_kind='video'": "; the reading for videos is below",
                "; read them with input_kind='image'": "; the reading for images is above"}
    for python, browser in pointers.items():
        assert sum(n.endswith(python) for n in notes) == 1
        notes = [n.removesuffix(python) + browser if n.endswith(python) else n for n in notes]
    assert [n for n in page["notes"] if n in notes] == notes
    assert not any("input_kind" in n for n in page["notes"])
    assert page["readout"].startswith("vision encoder video_llama_3_vision (read for images and videos): 2-D RoPE")
    # posenc-inspect prints the same two readings in the same order
    heads = [line for line in describe_vision(config) if line.startswith("vision encoder ")]
    assert [h.split(":")[0] for h in heads] == [f"vision encoder video_llama_3_vision, for {k}s" for k in INPUT_KINDS]


def test_every_other_model_type_keeps_one_reading(tmp_path: Path) -> None:
    types = [t for t in VISION_MODEL_TYPES if t not in BY_INPUT_KIND]
    pages = shown(tmp_path, [{"model_type": t} for t in types])
    for model_type, page in zip(types, pages):
        assert isinstance(page["vision"], dict), model_type
        assert not differences(page["vision"], _fields({"model_type": model_type}, None)), model_type
        assert page["headings"][0].startswith(f"Vision encoder: {page['vision']['model_type']}")
        assert ", for " not in page["headings"][0] and "(read for" not in page["readout"]


def test_a_bad_tower_config_is_refused_as_posenc_refuses_it(tmp_path: Path) -> None:
    config = {"model_type": "video_llama_3_vision", "hidden_size": 40, "num_attention_heads": 4}
    [page] = shown(tmp_path, [config])
    with pytest.raises(ValueError) as refused:
        read_vision_config(config, "image")
    assert page["vision"] is None and page["error"] == str(refused.value)
    assert page["headings"] == []
