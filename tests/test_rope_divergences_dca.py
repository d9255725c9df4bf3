"""Qwen2.5-1M's Dual Chunk Attention: the register's entry, the authors' side in float64, transformers' side live.

Qwen2.5-7B- and 14B-Instruct-1M publish ``dual_chunk_attention_config`` (chunk_size 262144, local_size 8192,
original_max_position_embeddings 262144), which their authors' vLLM reads and the pinned transformers keeps
unread. The authors' position mapping is written again here from their code (HKUNLP/ChunkLlama@2add4d7,
vllm/vllm/model_executor/layers/rotary_embedding.py:783-873 and
vllm/vllm/attention/backends/dual_chunk_flash_attn.py:444-471, 690-757), so that the lengths the note
states are checked by a route of their own; transformers' rotary module and attention scale are run.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("transformers", reason="transformers is a test dependency (requirements.lock)")

import torch
import transformers
from transformers import Qwen2Config
from transformers.models.qwen2.modeling_qwen2 import Qwen2Attention

from posenc.configs import read_config
from posenc.configs._divergences import DIVERGENCES
from posenc.extension import dual_chunk_offsets
from tests import rope_live

# Qwen/Qwen2.5-14B-Instruct-1M's config.json (revision d5c878c4), its attention and position keys
DCA: dict[str, int] = {"chunk_size": 262144, "local_size": 8192, "original_max_position_embeddings": 262144}
QWEN25_14B_1M: dict[str, Any] = {
    "model_type": "qwen2", "hidden_size": 5120, "intermediate_size": 13824, "num_attention_heads": 40,
    "num_key_value_heads": 8, "num_hidden_layers": 48, "max_position_embeddings": 1010000, "max_window_layers": 48,
    "rope_theta": 10000000.0, "rope_scaling": None, "sliding_window": 1010000, "use_sliding_window": False,
    "vocab_size": 152064, "dual_chunk_attention_config": DCA}
CHUNK, LOCAL, TRAINED = DCA["chunk_size"], DCA["local_size"], DCA["original_max_position_embeddings"]
CHUNK_LEN = CHUNK - LOCAL  # the authors' chunk_len (rotary_embedding.py:787)


def _entry():  # type: ignore[no-untyped-def]
    (entry,) = [e for e in DIVERGENCES if e.key == "dual_chunk_attention_config"]
    return entry


def authors_distances(query: int) -> torch.Tensor:
    """The query-key distance the authors' vLLM rotates with, from the query at ``query`` to every key 0..query.

    Keys turn at position mod chunk_len (k_t); the query at its position mod chunk_len against keys of its own
    chunk (q_t), at that plus chunk_len capped at chunk_size against the previous chunk (qc_t), and at
    qc_t[chunk_len - 1] against the chunks before (query_inter); the chunks start at multiples of chunk_len
    (prev_chunk_end_pos = (begin // chunk_len) * chunk_len)."""
    keys = torch.arange(query + 1, dtype=torch.int64)
    own_start = (query // CHUNK_LEN) * CHUNK_LEN
    inner = query % CHUNK_LEN
    query_at = torch.where(keys >= own_start, torch.tensor(inner), torch.where(
        keys >= own_start - CHUNK_LEN, torch.tensor(min(inner + CHUNK_LEN, CHUNK)),
        torch.tensor(min(2 * CHUNK_LEN - 1, CHUNK))))
    return query_at - keys % CHUNK_LEN


def authors_logit_factor(length: int) -> float:
    """The factor the authors' attention multiplies the keys by (dual_chunk_flash_attn.py:444-471)."""
    return max(0.1 * math.log(length / TRAINED) + 1.0, 1.0)


def test_the_vllm_mapping_is_posencs_dual_chunk_offsets() -> None:
    """posenc.extension.dual_chunk_offsets, written from the same authors' Hugging Face code
    (chunkllama_attn_replace.py), gives the offsets their vLLM rotates with, at the published sizes."""
    for query in (CHUNK_LEN + LOCAL + 7, CHUNK + 1, 2 * CHUNK_LEN + 3, 1009999):
        ours = dual_chunk_offsets(torch.tensor([query]), torch.arange(query + 1), chunk_size=CHUNK,
                                  local_window=LOCAL)[0]
        assert torch.equal(ours, authors_distances(query).double()), query


def test_the_lengths_in_the_note_are_the_authors() -> None:
    # every query up to position chunk_size sees every key at its plain distance ...
    for query in (0, 4095, CHUNK_LEN - 1, CHUNK_LEN, CHUNK_LEN + LOCAL, CHUNK - 1, CHUNK):
        assert torch.equal(authors_distances(query), query - torch.arange(query + 1)), query
    # ... the next one does not, and no distance of the 1,010,000-token context exceeds chunk_size
    assert not torch.equal(authors_distances(CHUNK + 1), CHUNK + 1 - torch.arange(CHUNK + 2))
    last = authors_distances(QWEN25_14B_1M["max_position_embeddings"] - 1)
    assert int(last.max()) == CHUNK and int(last.min()) == 0
    # the logits keep their scale up to original_max_position_embeddings tokens, not one token more
    assert authors_logit_factor(TRAINED) == 1.0 < authors_logit_factor(TRAINED + 1)
    plain = min(CHUNK + 2, TRAINED + 1) - 1  # the first length where a distance or the scale changes, less one
    published = _entry().published
    assert f"a sequence of up to {plain:,} tokens gets plain RoPE's" in published
    assert f"chunks of {CHUNK_LEN:,} tokens" in published and f"at most {CHUNK:,} (chunk_size)" in published
    assert f"0.1 ln(length / {TRAINED}) + 1" in published


def test_transformers_keeps_the_key_and_never_reads_it() -> None:
    built = Qwen2Config(**{k: v for k, v in QWEN25_14B_1M.items() if k != "model_type"})
    assert "dual_chunk_attention_config" not in built.__dataclass_fields__  # no field of Qwen2Config
    assert built.dual_chunk_attention_config == DCA  # kept as a plain attribute (configuration_utils.py:499-504)
    root = Path(transformers.__file__).parent
    readers = [p for p in root.rglob("*.py") if "dual_chunk" in p.read_text(encoding="utf-8", errors="replace")]
    assert readers == []  # no code of the pinned transformers names it


def test_transformers_turns_every_position_plainly() -> None:
    text = rope_live.transformers_config(QWEN25_14B_1M)
    reference = rope_live.Reference(text)
    inv = reference.inv_freq(None)
    base = float(QWEN25_14B_1M["rope_theta"])
    assert torch.allclose(inv.double(), base ** (-torch.arange(0, 128, 2, dtype=torch.float64) / 128), rtol=1e-6)
    positions = torch.tensor([5, CHUNK_LEN + 5, CHUNK + 1, 600000, 1009999])
    cos, _ = reference.rotary(torch.zeros(1, 5, 8, dtype=torch.float64), positions[None, :])
    # transformers' own float32 product, at the position itself ...
    plain = (positions[:, None].float() * inv.float()[None, :]).cos().double()
    assert torch.allclose(cos[0, :, :64], plain, atol=1e-6)
    # ... where the authors turn a key at position mod chunk_len
    authors = ((positions % CHUNK_LEN)[:, None].float() * inv.float()[None, :]).cos().double()
    assert torch.equal(plain[0], authors[0])
    assert all(float((plain[i] - authors[i]).abs().max()) > 0.5 for i in range(1, 5))


def test_transformers_scales_the_logits_alike_at_every_length() -> None:
    extra: dict[str, Any] = {"dual_chunk_attention_config": DCA}  # no field of Qwen2Config
    small = Qwen2Config(hidden_size=256, num_attention_heads=2, num_key_value_heads=2, num_hidden_layers=1,
                        intermediate_size=16, vocab_size=16, **extra)
    assert Qwen2Attention(small, layer_idx=0).scaling == 128 ** -0.5  # fixed in __init__, no length in it
    assert authors_logit_factor(QWEN25_14B_1M["max_position_embeddings"]) > 1.13  # the authors' at 1,010,000


def test_read_config_reads_transformers_side_and_names_both() -> None:
    reading = read_config(QWEN25_14B_1M)
    layer = reading.layers["full_attention"]
    assert (layer.rotary_dim, layer.base, layer.scaling, layer.window) == (128, 1e7, None, None)
    notes = [n for n in reading.notes if "departs" in n]
    assert len(notes) == 1
    assert notes[0].startswith("config['dual_chunk_attention_config'] = {'chunk_size': 262144, ")
    assert notes[0].endswith(_entry().transformers) and "Published: " + _entry().published in notes[0]
    # the key absent or null: no note
    assert not [n for n in read_config({**QWEN25_14B_1M, "dual_chunk_attention_config": None}).notes if "departs" in n]
    # another model type with the key (vLLM reads it for Qwen3 too): not registered, no note
    assert not [n for n in read_config({**QWEN25_14B_1M, "model_type": "qwen3"}).notes if "departs" in n]


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the site's JavaScript")
def test_the_browser_port_gives_the_same_note(tmp_path: Path) -> None:
    from tests.site.check_inspector import API_READING, compare, kinds, posenc_reading
    from tests.rope_port_cases import _case
    from tests.test_explorer_ports import run_js

    cases = [_case(QWEN25_14B_1M), _case({**QWEN25_14B_1M, "dual_chunk_attention_config": None})]
    results = run_js(tmp_path, API_READING.replace("([cases])", "(cases)"), cases)
    assert isinstance(results, list) and len(results) == 2
    for (text, layout, length), ours in zip(cases, results):
        assert not compare(kinds(json.loads(ours)), kinds(posenc_reading(text, layout, length))), text[:80]
    notes = [json.loads(r)["value"]["rope"]["notes"] for r in results]
    assert notes[0] == list(read_config(json.loads(cases[0][0])).notes)
    assert [n for n in notes[0] if "departs" in n] == [n for n in read_config(QWEN25_14B_1M).notes if "departs" in n]
    assert not any("departs" in n for n in notes[1])


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the site's JavaScript")
def test_the_inspector_explains_the_new_notes_as_departures(tmp_path: Path) -> None:
    """The browser inspector's 'What this means' (inspector_words.js MEANINGS) for Qwen2.5-1M's and Phi-3's
    notes: the register's departure meaning, not the last, generic row ('does something posenc does not
    read'), since posenc reads the model as transformers runs it."""
    from tests.test_explorer_ports import MODULES, run_js
    from tests.test_rope_divergences_windows import PHI3_MINI_4K

    chart = tmp_path / "chart.js"  # inspector_chart.js draws with d3; its number format is all the words use
    chart.write_text('window.posencInspectorChart = {num: (v) => Number(v).toLocaleString("en-US")};')
    notes = [n for c in (QWEN25_14B_1M, PHI3_MINI_4K) for n in read_config(c).notes if "departs" in n]
    assert len(notes) == 2
    meanings = run_js(tmp_path, """(notes) => notes.map((note) => {
      const M = window.posencInspectorWords.MEANINGS;
      const i = M.findIndex(([pattern]) => pattern.test(note));
      return [i, M.length - 1, M[i][1]];
    })""", notes, modules=[*MODULES, str(chart), "inspector_words.js"])
    assert isinstance(meanings, list)
    for note, (found, generic, meaning) in zip(notes, meanings):
        assert found < generic, note[:60]
        assert meaning.startswith("The reading above is the model as transformers builds it"), note[:60]
