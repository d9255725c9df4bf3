"""Where each zoo file (``posenc/zoo/*.json``) comes from, and that its config cannot drift.

Every file carries ``_provenance``: whether it is a verbatim copy of the model's published
``config.json`` (then where it was read, on which date), or, when it is not, a note that says so
and what it rests on; the copies that a reader cannot open (code-search hits that name no
repository) are kept under ``dropped``, never under ``_checked_against``; and a SHA-256 of the
file's own part (every key but the zoo's notes) written as transformers writes a config.json
(``json.dumps(part, indent=2, sort_keys=True) + "\\n"``), recomputed here so that an edit of a value
without a new checksum fails. For a verbatim entry whose copy is itself written that way (sorted keys,
indent 2) that text is the copied file, so the checksum is the copied text's; for a copy in another
layout (key order, indentation, line ends) it is the checksum of the same keys and values.

A verbatim entry names its copy by a GitHub URL pinned to a commit, so that a reader opens the very
text that was compared, and its identity is checked against the model card where the card gives a
size: the parameters its shapes count (``IDENTITY`` below) must lie within the card's last digit.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import date
from pathlib import Path
from typing import Any

import pytest

ZOO = sorted((Path(__file__).resolve().parents[1] / "posenc" / "zoo").glob("*.json"))
ENTRIES = {path.stem: json.loads(path.read_text()) for path in ZOO}


# The zoo's own notes; every other key is the config's (a published file may hold "_name_or_path").
NOTES = {"_name", "_family", "_table_row", "_read_as", "_source", "_checked_against", "_notes", "_provenance"}


def config_part(entry: dict[str, Any]) -> dict[str, Any]:
    """What posenc's readers are given: the keys that do not start with "_"."""
    return {key: value for key, value in entry.items() if not key.startswith("_")}


def published_text(entry: dict[str, Any]) -> str:
    """The entry's own part, written the way transformers writes a config.json."""
    return json.dumps({k: v for k, v in entry.items() if k not in NOTES}, indent=2, sort_keys=True) + "\n"


def config_sha256(entry: dict[str, Any]) -> str:
    """The checksum ``_provenance["sha256"]`` records."""
    return hashlib.sha256(published_text(entry).encode("utf-8")).hexdigest()


@pytest.mark.parametrize("name", ENTRIES)
def test_the_config_part_has_not_drifted_from_its_checksum(name: str) -> None:
    recorded = ENTRIES[name]["_provenance"]["sha256"]
    assert re.fullmatch(r"[0-9a-f]{64}", recorded)
    assert config_sha256(ENTRIES[name]) == recorded, f"{name}: a value changed without its provenance"


def test_a_changed_value_changes_the_checksum() -> None:
    entry = ENTRIES["llama-3.1-8b"]
    assert config_sha256({**entry, "rope_theta": 500001.0}) != entry["_provenance"]["sha256"]
    assert config_sha256({**entry, "_notes": "a note is not the config"}) == entry["_provenance"]["sha256"]
    assert config_sha256({**entry, "_name_or_path": "x"}) != entry["_provenance"]["sha256"]


@pytest.mark.parametrize("name", ENTRIES)
def test_only_a_published_file_brings_keys_that_start_with_an_underscore(name: str) -> None:
    entry = ENTRIES[name]
    extra = {key for key in entry if key.startswith("_")} - NOTES
    assert not extra or entry["_provenance"]["verbatim"], (name, extra)  # a typo such as "_note" fails here


@pytest.mark.parametrize("name", ENTRIES)
def test_every_entry_says_whether_it_is_the_published_file(name: str) -> None:
    prov = ENTRIES[name]["_provenance"]
    assert isinstance(prov["verbatim"], bool)
    assert prov["identity"]
    if prov["verbatim"]:
        assert prov["published"].startswith("https://huggingface.co/"), name
        assert prov["read_at"].startswith(("https://", "http://")), name
        date.fromisoformat(prov["read_on"])
        assert prov["note"].startswith("verbatim"), name
    else:
        assert prov["note"].startswith("not verbatim: "), name


@pytest.mark.parametrize("name", ENTRIES)
def test_no_source_cites_an_index_id_a_reader_cannot_open(name: str) -> None:
    entry = ENTRIES[name]
    for item in entry["_checked_against"]:
        assert "code index" not in item and not re.search(r"\bid \d{8,}", item), (name, item)
    for item in entry["_provenance"].get("dropped", []):
        assert not re.search(r"\bid \d{8,}", item), (name, item)
        assert item.endswith("so a reader cannot open it]"), (name, item)
    if not entry["_checked_against"] and not entry["_provenance"]["verbatim"]:
        assert "no citable source remains" in entry["_provenance"]["note"], name


def test_qwen3_vl_reads_the_base_its_configs_set_not_the_class_default() -> None:
    pytest.importorskip("transformers", reason="transformers is a test dependency (requirements.lock)")
    from transformers import Qwen3VLTextConfig

    from posenc import read_config

    entry = config_part(ENTRIES["qwen3-vl-yarn"])
    assert Qwen3VLTextConfig().rope_parameters["rope_theta"] == 500000.0  # what leaving it out would give
    assert entry["rope_theta"] == 5000000 and entry["head_dim"] == 128
    layer = read_config(entry).layers["full_attention"]
    assert (layer.base, layer.dim) == (5000000.0, 128)


def test_starcoder2_file_has_the_7b_shapes() -> None:
    """The card ('Model Summary') says 7B parameters; these shapes count 7.2e9 (the 15B's 15.4e9)."""
    def count(width: int, layers: int, heads: int, kv_heads: int, vocab: int = 49152) -> float:
        head = width // heads
        attention = 2 * width * width + 2 * width * kv_heads * head      # q, o and k, v projections
        mlp = 2 * width * 4 * width                                      # c_fc and c_proj, 4x wide
        return layers * (attention + mlp) + 2 * vocab * width            # untied embeddings

    entry = config_part(ENTRIES["starcoder2-7b"])
    shapes = (entry["hidden_size"], entry["num_hidden_layers"], entry["num_attention_heads"],
              entry["num_key_value_heads"])
    assert 6.8e9 < count(*shapes) < 7.6e9
    assert count(6144, 40, 48, 4) > 14e9
    assert (entry["max_position_embeddings"], entry["sliding_window"]) == (16384, 4096)  # as the card says


GITHUB_PINNED = re.compile(r"https://github\.com/[\w.-]+/[\w.-]+/blob/[0-9a-f]{40}/\S+")


@pytest.mark.parametrize("name", [n for n, e in ENTRIES.items() if e["_provenance"]["verbatim"]])
def test_a_verbatim_entry_names_a_copy_a_reader_can_open(name: str) -> None:
    prov = ENTRIES[name]["_provenance"]
    assert GITHUB_PINNED.fullmatch(prov["read_at"]), (name, prov["read_at"])  # a commit, not a branch
    assert prov["published"] == ENTRIES[name]["_source"], name
    assert date.fromisoformat(prov["read_on"]) <= date.today()


# Parameter counts from a config's shapes, written from each architecture's description (a dense
# decoder with gated MLP; DeepSeek's latent attention with shared and routed experts; gpt-oss's
# attention with biases and sinks and its gated experts), to check a file's identity against its card.
def _dense(c: dict[str, Any], vocab: int | None = None) -> float:
    width, heads = c["hidden_size"], c["num_attention_heads"]
    head, kv = c.get("head_dim") or width // heads, c.get("num_key_value_heads", heads)
    layer = 2 * width * heads * head + 2 * width * kv * head + 3 * width * c["intermediate_size"] + 2 * width
    embeddings = (vocab or c["vocab_size"]) * width * (1 if c.get("tie_word_embeddings", False) else 2)
    return c["num_hidden_layers"] * layer + embeddings + width


def _deepseek(c: dict[str, Any], active: bool = False) -> float:
    w, h, q, kv = c["hidden_size"], c["num_attention_heads"], c["q_lora_rank"], c["kv_lora_rank"]
    nope, rope, v = c["qk_nope_head_dim"], c["qk_rope_head_dim"], c["v_head_dim"]
    attention = w * q + q + q * h * (nope + rope) + w * (kv + rope) + kv + kv * h * (nope + v) + h * v * w + 2 * w
    expert, routed = 3 * w * c["moe_intermediate_size"], c["n_routed_experts"]
    moe = (c["num_experts_per_tok"] if active else routed) * expert + c["n_shared_experts"] * expert + routed * w
    dense, layers = c["first_k_dense_replace"], c["num_hidden_layers"]
    return (layers * attention + dense * 3 * w * c["intermediate_size"] + (layers - dense) * moe
            + 2 * c["vocab_size"] * w + w)


def _gpt_oss(c: dict[str, Any], active: bool = False) -> float:
    w, h, kv, d, i = (c[k] for k in ("hidden_size", "num_attention_heads", "num_key_value_heads", "head_dim",
                                     "intermediate_size"))
    attention = (w + 1) * h * d + 2 * (w + 1) * kv * d + h * d * w + w + h          # biases, sinks
    experts = c["num_local_experts"]
    moe = (c["num_experts_per_tok"] if active else experts) * (w * 2 * i + 2 * i + i * w + w) + experts * (w + 1)
    return c["num_hidden_layers"] * (attention + moe + 2 * w) + 2 * c["vocab_size"] * w + w


def _mixtral(c: dict[str, Any], active: bool = False) -> float:
    w, experts = c["hidden_size"], c["num_local_experts"]
    dense = _dense({**c, "intermediate_size": 0})                     # attention, norms, embeddings
    expert = 3 * w * c["intermediate_size"]
    return dense + c["num_hidden_layers"] * ((c["num_experts_per_tok"] if active else experts) * expert + experts * w)


def _gptj(c: dict[str, Any]) -> float:
    """GPT-J: attention and MLP side by side after one LayerNorm; no attention biases, MLP
    biases; an untied output layer with a bias."""
    w, inner, vocab = c["n_embd"], c.get("n_inner") or 4 * c["n_embd"], c["vocab_size"]
    layer = 4 * w * w + 2 * w * inner + inner + w + 2 * w
    return c["n_layer"] * layer + vocab * w + 2 * w + vocab * w + vocab


def _without_embeddings(c: dict[str, Any]) -> float:
    return _dense(c) - c["vocab_size"] * c["hidden_size"] * (1 if c.get("tie_word_embeddings", False) else 2)


# zoo name -> (count, the card's figure in billions, how far from it a count may lie: its last digit)
IDENTITY = {
    "llama-3.1-8b": (lambda c: _dense(c), 8, 1),                     # llama3_1/MODEL_CARD.md: 8B
    "llama-3.2-3b": (lambda c: _dense(c), 3.21, 0.01),               # llama3_2/MODEL_CARD.md: 3B (3.21B)
    "llama-3.2-1b": (lambda c: _dense(c), 1.23, 0.01),               # llama3_2/MODEL_CARD.md: 1B (1.23B)
    "deepseek-v3": (lambda c: _deepseek(c), 671, 1),                 # README: 671B total ...
    "deepseek-v3:active": (lambda c: _deepseek(c, active=True), 37, 1),          # ... 37B activated
    "gpt-oss-120b": (lambda c: _gpt_oss(c), 117, 1),                 # README: 117B parameters ...
    "gpt-oss-120b:active": (lambda c: _gpt_oss(c, True) - c["vocab_size"] * c["hidden_size"], 5.1, 0.1),
    "gemma-3-27b-it": (lambda c: _dense({**c["text_config"], "tie_word_embeddings": True}, 262208), 27, 1),
    "qwen3-0.6b:non-embedding": (_without_embeddings, 0.44, 0.01),  # card: 0.6B, non-embedding 0.44B
    "qwen3-1.7b:non-embedding": (_without_embeddings, 1.4, 0.1),    # card: 1.7B, non-embedding 1.4B
    "mixtral-8x7b-v0.1": (lambda c: _mixtral(c), 46.7, 0.1),         # 46.7B total ...
    "mixtral-8x7b-v0.1:active": (lambda c: _mixtral(c, active=True), 12.9, 0.1),   # ... 12.9B per token
    # huggingface/smollm README: a 3B model; the file leaves tie_word_embeddings to SmolLM3Config (true)
    "smollm3-3b": (lambda c: _dense({**c, "tie_word_embeddings": True}), 3, 1),
    "mistral-7b-v0.1": (lambda c: _dense(c), 7, 1),                  # its card: 7 billion parameters
    "gpt-j-6b": (_gptj, 6.053, 0.01),                                # its card: 6053381344 parameters
    "qwen2.5-3b-instruct": (lambda c: _dense(c), 3.09, 0.01),        # card: 3.09B ...
    "qwen2.5-3b-instruct:non-embedding": (_without_embeddings, 2.77, 0.01),  # ... 2.77B non-embedding
    "qwen2.5-7b-instruct-yarn": (lambda c: _dense(c), 7.61, 0.01),   # card: 7.61B ...
    "qwen2.5-7b-instruct-yarn:non-embedding": (_without_embeddings, 6.53, 0.01),  # ... 6.53B non-embedding
}


@pytest.mark.parametrize("key", IDENTITY)
def test_a_published_file_counts_the_parameters_its_card_gives(key: str) -> None:
    count, billions, precision = IDENTITY[key]
    counted = count(config_part(ENTRIES[key.split(":")[0]])) / 1e9
    assert abs(counted - billions) < precision, (key, counted)
    assert ENTRIES[key.split(":")[0]]["_provenance"]["identity"] != "not checked against a model card"


KEY_SOURCE = re.compile(r"(?P<list>_checked_against|dropped)\[(?P<index>\d+)\]|transformers class default: .+")


def _leaves(config: dict[str, Any]) -> set[str]:
    """Top-level keys, and 'text_config.key' for the keys of a nested text_config."""
    keys = {key for key in config if key != "text_config"}
    return keys | {f"text_config.{key}" for key in config.get("text_config", {})}


@pytest.mark.parametrize("name", [n for n, e in ENTRIES.items() if not e["_provenance"]["verbatim"]])
def test_a_rebuilt_entry_names_the_source_of_every_key(name: str) -> None:
    """keys_from maps each source to the keys it gave: every key once, every source one a reader finds."""
    entry = ENTRIES[name]
    keys_from = entry["_provenance"]["keys_from"]
    named = [key for keys in keys_from.values() for key in keys]
    assert len(named) == len(set(named)), (name, "a key named twice")
    assert set(named) == _leaves(config_part(entry)), (name, set(named) ^ _leaves(config_part(entry)))
    for source in keys_from:
        match = KEY_SOURCE.fullmatch(source)
        assert match, (name, source)
        if match["list"] == "_checked_against":
            assert int(match["index"]) < len(entry["_checked_against"]), (name, source)
        elif match["list"] == "dropped":
            assert int(match["index"]) < len(entry["_provenance"].get("dropped", [])), (name, source)
