"""The browser's port of read_vision_config (docs/javascripts/explorer/rope_vision.js) against posenc.

Each config is read by both: ``dataclasses.asdict(read_vision_config(c, kind))`` and the port's
``readVisionConfig(c, kind)`` under node (``kind``: the ``input_kind``, None unless given), with the
tables hooks/rope_data.py ships. Same means: equal strings, bools, None and dict key order, numbers
to 1e-12 relative (the speeds are powers computed by each language's own ``pow``); for a config
posenc refuses, the same kind of error (``check_inspector.error_kind``: the class and the key the
message names).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import random
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "hooks"))

import rope_data

from posenc.configs.vision import (
    _DEFAULTS,
    BY_INPUT_KIND,
    INPUT_KINDS,
    VISION_MODEL_TYPES,
    read_vision_config,
)
from tests.site.check_inspector import error_kind

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the site's JavaScript")

MODULES = ["pyvalues.js", "json_values.js", "rope_vision_towers.js", "rope_vision.js"]
RUNNER = """
const fs = require("fs");
globalThis.window = globalThis;
eval(fs.readFileSync(process.argv[1], "utf8"));
for (const file of JSON.parse(process.argv[2])) eval(fs.readFileSync(file, "utf8"));
const texts = JSON.parse(fs.readFileSync(0, "utf8"));
const out = texts.map(([text, kind]) => {
  try {
    return {ok: true, value: window.posencRopeVision.readVisionConfig(window.posencJSON.parseJSON(text), kind)};
  } catch (error) {
    if (!(error instanceof window.posencPython.PyError)) throw error;
    return {ok: false, error: `${error.name}: ${error.message}`};
  }
});
process.stdout.write(JSON.stringify(out, (k, v) => (typeof v === "bigint" ? Number(v) : v)));
"""


def read_in_node(tmp_path: Path, configs: list[Any], kinds: list[Any]) -> list[dict[str, Any]]:
    data = tmp_path / "rope-data.js"
    data.write_text(rope_data.rope_data_script())
    files = [str(ROOT / "docs" / "javascripts" / "explorer" / name) for name in MODULES]
    done = subprocess.run(["node", "-e", RUNNER, str(data), json.dumps(files)],
                          input=json.dumps([[json.dumps(c), k] for c, k in zip(configs, kinds)]), capture_output=True,
                          text=True,
                          timeout=120, check=True)
    return list(json.loads(done.stdout))


def posenc_side(config: Any, kind: Any = None) -> dict[str, Any]:
    try:
        reading = read_vision_config(config, kind)
        return {"ok": True, "value": json.loads(json.dumps(dataclasses.asdict(reading)))}
    except (ValueError, TypeError) as error:
        return {"ok": False, "error": f"{type(error).__name__}: {error}"}


def differences(ours: Any, theirs: Any, path: str = "") -> list[str]:
    if isinstance(theirs, bool) or theirs is None or isinstance(theirs, str):
        same = ours == theirs and type(ours) is type(theirs)
        return [] if same else [f"{path}: JavaScript {ours!r:.100}, posenc {theirs!r:.100}"]
    if isinstance(theirs, (int, float)):
        if isinstance(ours, bool) or not isinstance(ours, (int, float)):
            return [f"{path}: JavaScript {ours!r:.60}, posenc {theirs!r}"]
        return [] if math.isclose(ours, theirs, rel_tol=1e-12) else [f"{path}: JavaScript {ours!r}, posenc {theirs!r}"]
    if isinstance(theirs, list):
        if not isinstance(ours, list) or len(ours) != len(theirs):
            return [f"{path}: JavaScript {ours!r:.100}, posenc {theirs!r:.100}"]
        return [d for i, (a, b) in enumerate(zip(ours, theirs)) for d in differences(a, b, f"{path}[{i}]")]
    if not isinstance(ours, dict) or list(ours) != list(theirs):
        return [f"{path}: keys {list(ours) if isinstance(ours, dict) else ours!r:.100}, posenc {list(theirs)!r:.100}"]
    return [d for key in theirs for d in differences(ours[key], theirs[key], f"{path}.{key}")]


def compare_all(tmp_path: Path, configs: list[Any], kinds: list[Any] | None = None) -> tuple[list[str], int]:
    """The differences, and how many configs posenc refused (each compared by kind of error); ``kinds``:
    each config's input_kind (default: None for all)."""
    problems, refused = [], 0
    kinds = [None] * len(configs) if kinds is None else kinds
    for config, kind, ours in zip(configs, kinds, read_in_node(tmp_path, configs, kinds)):
        theirs = posenc_side(config, kind)
        if not theirs["ok"]:
            refused += 1
            if ours["ok"] or error_kind(ours["error"]) != error_kind(theirs["error"]):
                problems.append(f"{json.dumps(config)[:120]}: JavaScript {ours!r:.160}; posenc {theirs['error']!r:.160}")
            continue
        found = differences(ours["value"], theirs["value"]) if ours["ok"] else [f"JavaScript refused: {ours['error']}"]
        problems += [f"{json.dumps(config)[:120]}: {d}" for d in found[:3]]
    return problems, refused


# The configs of tests/test_config_vision.py (its live tests' dicts, its bad-input table) and more.
GOOD = [
    {"model_type": "dinov3_vit", "hidden_size": 32, "num_attention_heads": 2, "image_size": 32, "patch_size": 8,
     "num_register_tokens": 2, "pos_embed_shift": 0.1, "pos_embed_jitter": 1.5, "rope_theta": 50.0},
    {"model_type": "eomt_dinov3", "hidden_size": 32, "num_attention_heads": 2, "image_size": [48, 32], "patch_size": 8,
     "rope_parameters": {"rope_type": "default", "rope_theta": 50.0}},
    {"model_type": "vjepa2", "crop_size": 16, "patch_size": 4, "frames_per_clip": 6, "tubelet_size": 2, "hidden_size": 40,
     "num_attention_heads": 2, "pred_hidden_size": 28, "pred_num_attention_heads": 2},
    {"model_type": "pixtral", "hidden_size": 64, "num_attention_heads": 4, "image_size": 64, "patch_size": 8,
     "rope_parameters": {"rope_type": "axial", "rope_theta": 1000.0}},
    {"model_type": "mistral3", "vision_config": {"model_type": "pixtral", "hidden_size": 64, "num_attention_heads": 4}},
    {"model_type": "llama4", "vision_config": {"hidden_size": 32, "num_attention_heads": 2, "image_size": 20, "patch_size": 4}},
    {"model_type": "qwen2_vl_vision", "embed_dim": 48, "num_heads": 3, "rope_parameters": {"rope_type": "axial", "rope_theta": 500.0}},
    {"model_type": "qwen2_5_vl", "vision_config": {"model_type": "qwen2_5_vl", "hidden_size": 1280, "num_heads": 16,
                                                   "patch_size": 14, "window_size": 112, "depth": 32}},
    {"model_type": "qwen2_5_vl_vision", "hidden_size": 64, "num_heads": 8, "num_attention_heads": 4},
    {"model_type": "qwen3_vl_vision", "hidden_size": 64, "num_attention_heads": 4, "head_dim": 16.0},
    {"model_type": "sam2_video", "memory_attention_hidden_size": 32, "memory_attention_num_attention_heads": 2,
     "memory_attention_rope_feat_sizes": [6, 4]},
    {"model_type": "sam3_tracker_video", "image_size": 56, "vision_config": {"backbone_config": {"patch_size": 7}}},
    {"model_type": "sam3_vit_model", "hidden_size": 32, "num_attention_heads": 2, "image_size": 48, "patch_size": 4,
     "window_size": 4, "num_hidden_layers": 4, "global_attn_indexes": [1, 3, 9, -1]},
    {"model_type": "sam3_video", "detector_config": {"vision_config": {"backbone_config": {"image_size": 56, "patch_size": 14}}}},
    {"model_type": "sam3", "vision_config": {"model_type": "sam3_vision_model", "backbone_config": {}}},
    {"model_type": "glm4v", "vision_config": None},
]
BAD = [
    {"model_type": "dinov3_vit", "hidden_size": 36, "num_attention_heads": 2},
    {"model_type": "dinov3_vit", "hidden_size": 30, "num_attention_heads": 4},
    {"model_type": "pixtral", "hidden_size": 24, "num_attention_heads": 4},
    {"model_type": "qwen2_5_vl_vision", "hidden_size": 40, "num_heads": 4},
    {"model_type": "qwen2_5_vl_vision", "hidden_size": 64, "num_heads": 4, "head_dim": 32},
    {"model_type": "llama4_vision_model", "image_size": [448, 336]},
    {"model_type": "vjepa2", "crop_size": [256, 384]},
    {"model_type": "vjepa2", "hidden_size": 8, "num_attention_heads": 2},
    {"model_type": "sam2_video", "memory_attention_hidden_size": 36, "memory_attention_num_attention_heads": 2},
    {"model_type": "pixtral", "rope_parameters": {"rope_type": "yarn", "rope_theta": 1e4}},
    {"model_type": "pixtral", "rope_theta": -1.0},
    {"model_type": "siglip"},
    {"model_type": "sam3_vit_model", "image_size": [1008, 672]},
    # and the other ways a config can be wrong: types, sub-configs, lists, floats for ints
    [1, 2], {"model_type": ["pixtral"]}, {"model_type": 5}, {},
    {"model_type": "qwen2_5_vl", "vision_config": [1]},
    {"model_type": "sam3_tracker_video", "vision_config": 5},
    {"model_type": "sam3_tracker_video", "vision_config": {"backbone_config": {"patch_size": None}}},
    {"model_type": "sam3_vit_model", "global_attn_indexes": "7"},
    {"model_type": "sam3_vit_model", "global_attn_indexes": [7, 1.5]},
    {"model_type": "sam3_vit_model", "image_size": 10},
    {"model_type": "dinov3_vit", "hidden_size": 384.0},
    {"model_type": "dinov3_vit", "pos_embed_jitter": 0.5},
    {"model_type": "dinov3_vit", "num_register_tokens": -1},
    {"model_type": "dinov3_vit", "patch_size": "16"},
    {"model_type": "eomt_dinov3", "rope_parameters": {"rope_type": "axial"}},
    {"model_type": "eomt_dinov3", "rope_parameters": [1]},
    {"model_type": "llama4_vision_model", "rope_parameters": {"rope_theta": float("inf")}},
    {"model_type": "qwen2_vl_vision", "spatial_merge_size": 0},
    {"model_type": "qwen3_vl_vision", "temporal_patch_size": True},
    {"model_type": "sam2_video", "memory_attention_rope_feat_sizes": [64]},
    {"model_type": "sam2_video", "memory_attention_downsample_rate": 2 ** 70},
    {"model_type": "vjepa2", "patch_size": [16, 8]},
    {"model_type": "vjepa2", "pred_hidden_size": 30, "pred_num_attention_heads": 4},
    {"model_type": "vjepa2", "frames_per_clip": 0},
]


def test_every_model_type_reads_alike(tmp_path: Path) -> None:
    pairs = [(t, k) for t in VISION_MODEL_TYPES for k in (INPUT_KINDS if t in BY_INPUT_KIND else (None,))]
    problems, refused = compare_all(tmp_path, [{"model_type": t} for t, _ in pairs], [k for _, k in pairs])
    assert not problems, "\n".join(problems[:10])
    assert refused == 0 and len(pairs) == len(VISION_MODEL_TYPES) + len(BY_INPUT_KIND) >= 39


def test_the_input_kind_reads_alike(tmp_path: Path) -> None:
    """VideoLLaMA 3 (tests/test_config_vision_inputs.py): each kind, its parent, and the refusals (no kind, a
    wrong kind, a head_dim its attention does not use); elsewhere a kind is checked and changes nothing."""
    tower = {"model_type": "video_llama_3_vision", "hidden_size": 48, "num_attention_heads": 3, "patch_size": 2,
             "rope_parameters": {"rope_type": "default", "rope_theta": 500.0}}
    parent = {"model_type": "video_llama_3", "vision_config": {**tower, "model_type": "siglip_vision_model"}}
    good = [(tower, "image"), (tower, "video"), (parent, "image"), (parent, "video"),
            ({"model_type": "qwen2_5_vl_vision"}, "video"), ({"model_type": "vjepa2"}, "image")]
    bad = [(tower, None), (parent, None), (tower, "frames"), (tower, "Image"), (tower, 1),
           ({**tower, "head_dim": 32}, "image"), ({**tower, "hidden_size": 40}, "video"), ({"model_type": "dinov3_vit"}, "x"),
           ({**tower, "rope_parameters": {"rope_type": "yarn", "rope_theta": 1.0}}, "video")]
    problems, refused = compare_all(tmp_path, [c for c, _ in good + bad], [k for _, k in good + bad])
    assert not problems, "\n".join(problems[:10])
    assert refused == len(bad)


def test_the_live_tests_configs_and_bad_configs_read_alike(tmp_path: Path) -> None:
    problems, refused = compare_all(tmp_path, GOOD + BAD)
    assert not problems, "\n".join(problems[:10])
    assert refused == len(BAD)  # every bad config refused by posenc, each by the port with the same kind of error


def test_each_default_changed_reads_alike(tmp_path: Path) -> None:
    """Every class default of every model type replaced by another value of its kind, and by a wrong one."""
    configs: list[Any] = []
    for model_type, defaults in _DEFAULTS.items():
        for key, value in defaults.items():
            if isinstance(value, bool) or value is None:
                others: list[Any] = [1.5, "x"]
            elif isinstance(value, int):
                others = [value * 2, value + 1, 0, float(value), None]
            elif isinstance(value, float):
                others = [value * 3, 0.0, int(value), "1"]
            else:
                others = [[v * 2 for v in value], value[:1], copy.deepcopy(value) + [1], None]
            configs += [{"model_type": model_type, key: other} for other in others]
    kinds = [("image", "video")[i % 2] if c["model_type"] in BY_INPUT_KIND else None for i, c in enumerate(configs)]
    problems, refused = compare_all(tmp_path, configs, kinds)
    assert not problems, "\n".join(problems[:10])
    assert 0 < refused < len(configs)


def test_the_zoo_configs_with_a_vision_encoder_read_alike(tmp_path: Path) -> None:
    """The published configs the inspector offers (Mistral 3, Llama 4, Qwen2.5-VL): read through their vision_config."""
    zoo = [json.loads(path.read_text()) for path in sorted((ROOT / "posenc" / "zoo").glob("*.json"))]
    configs = [c for c in zoo if c.get("model_type") in VISION_MODEL_TYPES]
    problems, refused = compare_all(tmp_path, configs)
    assert not problems, "\n".join(problems[:10])
    assert len(configs) >= 4 and refused == 0


def test_random_configs_read_alike(tmp_path: Path) -> None:
    """Seeded configs of every model type with one to three keys set to values of every kind (parents' keys inside
    their sub-config): read alike, or refused with the same kind of error."""
    from posenc.configs._vision_models import _PARENTS

    rng = random.Random(33)
    pool: list[Any] = [0, 1, 2, 3, 7, 16, 48, 64, 96, 1000, -4, 2 ** 70, 2.0, 0.5, 1e400, None, True, "16", [16], [24, 16],
                       [1, 2, 3], {}, {"rope_type": "axial", "rope_theta": 50.0}, {"rope_type": "yarn"}, {"rope_theta": "x"}]
    extra = ["rope_parameters", "rope_theta", "head_dim", "num_heads", "num_attention_heads", "adapter_merge_size",
             "spatial_merge_size", "patch_size", "image_size"]
    configs: list[Any] = []
    for _ in range(600):
        model_type = rng.choice(VISION_MODEL_TYPES)
        child = _PARENTS[model_type][1] if model_type in _PARENTS else model_type
        keys = rng.sample(sorted({*_DEFAULTS[child], *extra}), rng.randint(1, 3))
        inner = {key: rng.choice(pool) for key in keys}
        if model_type in _PARENTS:
            config: dict[str, Any] = {"model_type": model_type}
            node = config
            for key in _PARENTS[model_type][0]:
                node[key] = {}
                node = node[key]
            node.update(inner)
        else:
            config = {"model_type": model_type, **inner}
        configs.append(config)
    kinds = [rng.choice([None, *INPUT_KINDS]) if c["model_type"] in BY_INPUT_KIND else None for c in configs]
    problems, refused = compare_all(tmp_path, configs, kinds)
    assert not problems, "\n".join(problems[:10])
    assert 100 < refused < len(configs) - 100  # both outcomes compared often


def test_the_refused_types_give_posencs_reason_word_for_word(tmp_path: Path) -> None:
    """The rotating image and video types posenc does not read (posenc/configs/_vision_refused.py): refused by
    the port with posenc's message, reason included; and CHMv2's backbone read alike, given or not."""
    from posenc.configs._vision_refused import REFUSED

    configs: list[Any] = [{"model_type": t} for t in sorted(REFUSED)]
    for config, ours in zip(configs, read_in_node(tmp_path, configs, [None] * len(configs))):
        assert not ours["ok"] and ours["error"] == posenc_side(config)["error"], config
    chmv2 = [{"model_type": "chmv2"}, {"model_type": "chmv2", "backbone_config": None},
             {"model_type": "chmv2", "backbone_config": {"model_type": "dinov3_vit", "hidden_size": 64,
                                                         "num_attention_heads": 4}},
             {"model_type": "sapiens2", "image_size": [48, 32], "patch_size": 8, "hidden_size": 32,
              "num_attention_heads": 2, "pos_embed_rescale": None}]
    problems, refused = compare_all(tmp_path, chmv2)
    assert not problems and refused == 0, problems


def test_efficientloftr_reads_alike_and_refuses_word_for_word(tmp_path: Path) -> None:
    """EfficientLoFTR (tests/test_config_vision_sweep.py): its rung count read from head_dim or the heads and
    partial_rotary_factor (in rope_parameters, else the top-level key, else 4.0), and its refusals."""
    good = [{"model_type": "efficientloftr"}, {"model_type": "efficientloftr", "hidden_size": 64, "num_attention_heads": 4,
                                               "partial_rotary_factor": 2.0},
            {"model_type": "efficientloftr", "hidden_size": 64, "head_dim": 32,
             "rope_parameters": {"rope_type": "default", "rope_theta": 7.0, "partial_rotary_factor": 1.0}}]
    bad = [{"model_type": "efficientloftr", "hidden_size": 64, "num_attention_heads": 4},
           {"model_type": "efficientloftr", "hidden_size": 66, "num_attention_heads": 6, "partial_rotary_factor": 1.5},
           {"model_type": "efficientloftr", "partial_rotary_factor": 0.0},
           {"model_type": "efficientloftr", "rope_parameters": {"rope_type": "yarn", "factor": 2.0}}]
    problems, refused = compare_all(tmp_path, good + bad)
    assert not problems and refused == len(bad), problems
    for config, ours in zip(bad[:2], read_in_node(tmp_path, bad[:2], [None, None])):
        assert ours["error"] == posenc_side(config)["error"]
