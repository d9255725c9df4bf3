"""Serve posenc's RoPE data to the explorer's config inspector (docs/javascripts/explorer/).

The inspector's JavaScript port of ``posenc.configs`` reads the same table of model types
(``posenc/configs/model_types.json``) and the same zoo of published configs (``posenc/zoo/*.json``)
that posenc reads: this hook writes them, unchanged, into ``assets/posenc/rope-data.js`` at build
time, as JSON text (the port reads it into Python's values, docs/javascripts/explorer/json_values.js,
so that ``8.0`` stays a float and ``8`` an int, as posenc sees them), with posenc.engines' data
and the vision encoders read_config refuses. Nothing is retyped in JavaScript.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

__all__ = ["DATA_FILE", "divergences", "on_files", "rope_data_script", "zoo_entries"]

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "posenc" / "configs" / "model_types.json"
ZOO = ROOT / "posenc" / "zoo"
DATA_FILE = "assets/posenc/rope-data.js"


def zoo_entries() -> list[dict[str, str]]:
    """The zoo's configs, by family then name: ``{"name", "family", "text"}`` (the file's own text)."""
    entries = []
    for path in sorted(ZOO.glob("*.json")):
        text = path.read_text(encoding="utf-8")
        notes = json.loads(text)
        entries.append({"name": str(notes.get("_name", path.stem)), "family": str(notes.get("_family", path.stem)),
                        "text": text})
    return sorted(entries, key=lambda e: (e["family"].lower(), e["name"]))


def divergences() -> list[dict[str, Any]]:
    """The register of transformers' departures from published models (posenc.configs._divergences)."""
    from posenc.configs._divergences import DIVERGENCES
    return [{"model_type": d.model_type, "key": d.key, "published": d.published, "transformers": d.transformers,
             "evidence": list(d.evidence), "when": [list(c) for c in d.when]} for d in DIVERGENCES]


def rope_data_script() -> str:
    """The script that defines ``window.posencRopeData = {table, zoo, divergences}`` (the table as JSON
    text in a string literal)."""
    table = json.dumps(json.loads(TABLE.read_text(encoding="utf-8")), separators=(",", ":"))
    from posenc.configs._vision_data import vision_data  # read_vision_config's tables
    from posenc.configs.vision import ENCODER_MODEL_TYPES  # read_config refuses these
    from posenc.configs._windows import (BIDIRECTIONAL, CAUSAL_KEPT, CENTRED, FILLED, LAYER_KINDS, NOPE_LAYERS_SLIDE,
                                         TWO_SIDED)
    from posenc.configs.sites import site_data  # the rotary-site rules and DeepSeek-V4's defaults, as data
    from posenc.engines import engine_data  # the engines' layout names and known disagreements, as data

    data: dict[str, Any] = {"table": table, "zoo": zoo_entries(), "divergences": divergences(),
                            "engines": engine_data(), "vision_encoders": list(ENCODER_MODEL_TYPES),
                            "sites": json.dumps(site_data()),  # JSON text: floats stay floats in the port
                            "two_sided": TWO_SIDED,  # the encoders whose windows reach both ways
                            "centred": CENTRED,  # the encoders whose windows are centred on the query (T5Gemma2)
                            "bidirectional": BIDIRECTIONAL,  # a flag that opens every mask both ways (Gemma 3)
                            "causal_kept": CAUSAL_KEPT,  # the same flag, the causal mask kept (Gemma, Gemma 2)
                            "filled": FILLED,  # windows the config classes fill (ModernBERT's, Dots3's)
                            "layer_kinds": LAYER_KINDS,  # layer types a model's code runs as another kind (ZAYA's)
                            "nope_layers_slide": NOPE_LAYERS_SLIDE}  # SmolLM3's sliding NoPE layers
    data["vision"] = vision_data()  # read_vision_config's tables as JSON text, for rope_vision.js (VISION)
    return ("// Generated at build time by hooks/rope_data.py from posenc/configs/model_types.json and posenc/zoo/*.json.\n"
            f"window.posencRopeData = {json.dumps(data, separators=(',', ':'))};\n")


def on_files(files: Files, config: MkDocsConfig) -> Files:
    files.append(File.generated(config, DATA_FILE, content=rope_data_script()))
    return files
