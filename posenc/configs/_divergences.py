"""Where transformers runs a published model otherwise than its authors do: a register.

posenc reads a config as the pinned ``transformers`` runs it (`posenc.configs.read_config`),
and says so where that departs from the model as published: each entry names the model type, the
config key, what the model card or the authors' code does, what transformers does, and the
evidence (a URL and section, a file and line). `read_config` adds a note naming both sides to a
config that sets the key (and, for an entry with a value condition, holds the values it names:
Qwen2's ``max_window_layers`` matters only once ``use_sliding_window`` is true);
``tests/test_rope_divergences.py`` (with ``test_rope_divergences_dca.py`` for Qwen2.5-1M's Dual Chunk
Attention and ``test_rope_divergences_windows.py`` for Phi-3's window) shows transformers' side live, and pins
the leads checked and found equal (DeepSeek-V3, V2-Lite and Kimi K2's YaRN and softmax scale, Llama 4,
gpt-oss, its initial_context_length included, Gemma 2 and 3, Phi-3's LongRoPE, GPT-J, GPT-NeoX,
Mistral 7B's and OLMo 3's windows of sliding_window keys, and Llama 3.1 and 3.2's frequency scaling, where transformers
follows the published configs' factor 32 for 3.2 1B and 3B and Meta's reference code hard-codes 8:
``test_rope_divergences_llama3.py``) against the authors' code.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["DIVERGENCES", "Condition", "Divergence", "departed_keys", "divergence_notes"]

# Qwen2.5-7B- and 14B-Instruct-1M's published dual_chunk_attention_config (evidence in the register's entry);
# the lengths its note states are computed from these, as the authors' vLLM computes them
_QWEN25_1M = {"chunk_size": 262144, "local_size": 8192, "original_max_position_embeddings": 262144}
_DCA_CHUNK, _DCA_LOCAL, _DCA_TRAINED = (_QWEN25_1M[k] for k in ("chunk_size", "local_size",
                                                                  "original_max_position_embeddings"))
_DCA_CHUNK_LEN = _DCA_CHUNK - _DCA_LOCAL  # vLLM's chunk_len: key positions restart every chunk_len tokens
# the longest sequence DCA leaves as plain RoPE: its distances are plain while the query is at most chunk_size
# (chunk_size + 1 tokens), its logits while the length is at most original_max_position_embeddings
_DCA_PLAIN = min(_DCA_CHUNK + 1, _DCA_TRAINED)
# Phi-3-mini-4k-instruct's published sliding_window (evidence in the register's phi3 entry)
_PHI3_WINDOW = 2047

# A value condition: a config key and the exact value it must hold (true, false, a string, or None for
# absent or null). Kept to these JSON values so that the browser's port compares them the same way.
Condition = tuple[str, bool | str | None]


@dataclasses.dataclass(frozen=True)
class Divergence:
    """One place where transformers departs from the published model.

    Attributes:
        model_type: the config's ``model_type`` the entry applies to.
        key: the config key whose meaning differs (the note appears where a config sets it).
        published: what the model card or the authors' code does with it.
        transformers: what the pinned transformers does with it, ending with a full stop (the note ends
            with it; ``published`` gets its full stop from the note).
        evidence: locators for both sides (URL and section; repository, file and line).
        when: the other keys' values under which the departure shows, every one required (1 is not
            true: the type must match too); empty: wherever the config sets ``key``.
    """

    model_type: str
    key: str
    published: str
    transformers: str
    evidence: tuple[str, ...]
    when: tuple[Condition, ...] = ()


DIVERGENCES: tuple[Divergence, ...] = (
    Divergence(
        model_type="minimax",
        key="rotary_dim",
        published="MiniMax-01 (MiniMax-Text-01) rotates half of each 128-wide attention head, 64 features "
                  "(model card); its configs give that width as rotary_dim",
        transformers="MiniMaxConfig has no rotary_dim: the key is kept as an unused attribute, and the rotary "
                     "module and apply_rotary_pos_emb rotate the whole head.",
        evidence=(
            ("https://huggingface.co/MiniMaxAI/MiniMax-Text-01 (model card, section 2 'Model Architecture': "
            "'Rotary Position Embedding (RoPE) applied to half of the attention head dimension with a base "
            "frequency of 10,000,000'; read through the search tool's copy of README.md at revision e1640d7a; "
            "the published config.json with rotary_dim 64 was not opened here)"),
            ("the same sentence in the authors' repository: github.com/MiniMax-AI/MiniMax-01 @57cf223 "
             "MiniMax-Text-01-Model-Card.md:65 and README.md:72; its docs/transformers_deployment_guide.md:38 and "
             "inference/minimax-text-01.py:51, 77-82 load the model with trust_remote_code=True, i.e. with the "
             "authors' own modeling code from the Hub, not transformers' minimax type"),
            ("transformers 5.23.0 models/minimax/configuration_minimax.py (no rotary_dim or "
            "partial_rotary_factor field) and models/minimax/modeling_minimax.py:329-351 "
            "(apply_rotary_pos_emb over the whole head_dim)"),
            ("a later transformers agrees with the card for one wrapper: huggingface/transformers "
            "src/transformers/models/minimax_vl_01/configuration_minimax_vl_01.py @b0da567, "
            "_migrate_legacy_text_config ('Translate the released remote-code MiniMax-Text-01 schema'), maps "
            "rotary_dim to partial_rotary_factor = rotary_dim / head_dim, and its default MiniMax-VL-01 text "
            "config has partial_rotary_factor 0.5 with head_dim 128 and rope_theta 10,000,000; the pinned "
            "transformers has no minimax_vl_01 model type, and its minimax type still ignores rotary_dim"),
        ),
    ),
    # Qwen2 and Qwen2-MoE as their authors added them to transformers (Qwen team, January and March 2024):
    # the window on the bottom max_window_layers layers. No published config turns it on (the zoo's four
    # Qwen2 files, Qwen2.5-VL's included, set use_sliding_window false), hence the condition. Eight more
    # model types' classes read max_window_layers (Qwen2-VL, Qwen2.5-VL, Qwen2.5-Omni, Qwen3, dots1, ...):
    # not registered. Qwen2-VL's authors added it after transformers' rule turned, and their code windows the
    # top layers as transformers does (transformers@19e6e80e modeling_qwen2_vl.py:707-714) though its
    # documentation still says the bottom (:601-602); the others' authors' code was not read.
    Divergence(
        model_type="qwen2",
        key="max_window_layers",
        published="with use_sliding_window true, the sliding window is on the bottom max_window_layers layers "
                  "(layer index below it) and the layers above attend in full (the authors' config documentation "
                  "and their flash-attention path)",
        transformers="Qwen2Config names the layers from max_window_layers on sliding_attention and those below it "
                     "full_attention: the window lands on the top layers, the bottom ones attend in full.",
        evidence=(
            ("https://github.com/huggingface/transformers/pull/28436 ('Add qwen2', Junyang Lin of the Qwen "
             "team), merged as huggingface/transformers@d6ffe74d (read in the fork bozheng-hit/transformers, "
             "whose history holds it): src/transformers/models/qwen2/configuration_qwen2.py:77-78 ('The number of "
             "layers that use SWA (Sliding Window Attention). The bottom layers use SWA while the top use full "
             "attention.'), modeling_qwen2.py:330-332 ('we apply SWA only to the bottom config.max_window_layers "
             "layers'), :387-392 (the window needs use_sliding_window and a sequence longer than it) and :518-520 "
             "(off at and above max_window_layers); its eager path masks every layer (:1027-1034) and its SDPA "
             "path none: the flash path and the documentation are where the code names the layers"),
            ("transformers 5.23.0 models/qwen2/configuration_qwen2.py:84 (sliding_window None unless "
             "use_sliding_window) and :88-94 (layer_types: sliding_attention where i >= max_window_layers); "
             "utils/auto_docstring.py:1639-1643 now documents max_window_layers as the number of full-attention "
             "layers, the first ones"),
            ("where it turned: huggingface/transformers@e3143952 ('Refactor flash attention implementation in "
             "transformers', #31446, July 2024, by the library's maintainers; read in the history of "
             "F4biian/transformers-v4.47.1-and-internal-states) makes modeling_qwen2.py:417-424 window the layers "
             "at and above max_window_layers, while that file's docstring (:306-307) and configuration_qwen2.py:73-74 "
             "still say the bottom layers"),
            ("https://github.com/huggingface/transformers/issues/35896 ('Qwen2FlashAttention sliding windows are "
             "applied to wrong layers', quoting the authors' docstring; closed, with PR #36162 listed as fixing it, "
             "and the pinned transformers still windows the top layers)"),
        ),
        when=(("use_sliding_window", True), ("layer_types", None)),
    ),
    Divergence(
        model_type="qwen2_moe",
        key="max_window_layers",
        published="with use_sliding_window true, the sliding window is on every one of the bottom max_window_layers "
                  "layers (layer index below it) and the layers above attend in full (the authors' config "
                  "documentation and their flash-attention path)",
        transformers="Qwen2MoeConfig names sliding_attention only the even-numbered layers (0, 2, 4, ...) below "
                     "max_window_layers: the odd ones there attend in full, as do all from max_window_layers on.",
        evidence=(
            ("https://github.com/huggingface/transformers/pull/29377 ('Add Qwen2MoE', Bo Zheng of the Qwen team), "
             "merged as huggingface/transformers@1c39974a (read in the fork bozheng-hit/transformers): "
             "src/transformers/models/qwen2_moe/configuration_qwen2_moe.py:77-78 ('The number of layers that use "
             "SWA (Sliding Window Attention). The bottom layers use SWA while the top use full attention.'), "
             "modeling_qwen2_moe.py:408-409 ('we apply SWA only to the bottom config.max_window_layers layers'), "
             ":464-469 (the window needs use_sliding_window) and :595-597 (off at and above max_window_layers; "
             "no rule on odd or even layers)"),
            ("transformers 5.23.0 models/qwen2_moe/configuration_qwen2_moe.py:113 (sliding_window 0 unless "
             "use_sliding_window) and :114-120 (layer_types: sliding_attention where (i + 1) % 2 and "
             "i < max_window_layers)"),
        ),
        when=(("use_sliding_window", True), ("layer_types", None)),
    ),
    # Qwen2.5-1M: the lengths below are computed from the published values (_QWEN25_1M), not typed. Not registered:
    # Qwen3-2507's config_1m.json (qwen3_moe; its model card swaps it in for 1M tokens, 'length extrapolation and
    # sparse attention'); no copy of that file was found to read its values.
    Divergence(
        model_type="qwen2",
        key="dual_chunk_attention_config",
        published=(f"Qwen2.5-7B- and 14B-Instruct-1M run in their authors' vLLM with Dual Chunk Attention; with the "
                   f"published chunk_size {_DCA_CHUNK}, local_size {_DCA_LOCAL} and original_max_position_embeddings "
                   f"{_DCA_TRAINED}, a sequence of up to {_DCA_PLAIN:,} tokens gets plain RoPE's query-key distances "
                   f"and logits; a longer one is cut into chunks of {_DCA_CHUNK_LEN:,} tokens (chunk_size - local_size), "
                   f"a query sees a key of an earlier chunk at a distance of at most {_DCA_CHUNK:,} (chunk_size), "
                   f"however far back it lies, and the attention logits are multiplied by "
                   f"0.1 ln(length / {_DCA_TRAINED}) + 1 (the model card: other frameworks may lose accuracy beyond "
                   f"{_DCA_TRAINED:,} tokens)"),
        transformers=("Qwen2Config has no dual_chunk_attention_config: the key is kept as an unused attribute, so "
                      "every position turns by plain RoPE up to max_position_embeddings and the attention scale stays "
                      "head_dim ** -0.5 at every length."),
        evidence=(
            ("https://huggingface.co/Qwen/Qwen2.5-14B-Instruct-1M/blob/d5c878c4e4970d754350de81bb78658bb2748dc4/"
             "config.json (dual_chunk_attention_config chunk_size 262144, local_size 8192, "
             "original_max_position_embeddings 262144; max_position_embeddings 1010000, rope_theta 1e7; read through "
             "the search tool's copy); Qwen2.5-7B-Instruct-1M's config.json carries the same three values (read in "
             "copies whose _name_or_path is Qwen/Qwen2.5-7B-Instruct-1M, e.g. huggingface.co/AIFunOver/"
             "Qwen2.5-7B-Instruct-1M-openvino-fp16 commit 5d94b178; the Qwen repository's own file was not opened)"),
            ("https://huggingface.co/Qwen/Qwen2.5-14B-Instruct-1M/blob/main/README.md @620fad3 (model card, "
             "'Context Length: Full 1,010,000 tokens': 'We recommend deploying with our custom vLLM, which introduces "
             "sparse attention and length extrapolation methods', and 'accuracy degradation may occur for sequences "
             "exceeding 262,144 tokens' in the previous frameworks); the 7B card @5947669 says the same"),
            ("the authors' blog: github.com/QwenLM/qwenlm.github.io @027a71a content/blog/qwen2.5-1m/index.md:116-120 "
             "(trained to 256K tokens, extended to 1M by Dual Chunk Attention, 'remapping relative positions to "
             "smaller values') and :175-179 (install vLLM from QwenLM/vllm, branch dev/dual-chunk-attn)"),
            ("the method's authors' vLLM (Chenxin An and Fei Huang of the Qwen team): github.com/HKUNLP/ChunkLlama "
             "@2add4d7 vllm/vllm/model_executor/models/qwen2.py:136-158, 175-176 and 195-197 (config."
             "dual_chunk_attention_config builds the dual-chunk rotary module and attention), "
             "vllm/vllm/model_executor/layers/rotary_embedding.py:783-806 (chunk_len = chunk_size - local_size; keys "
             "at position mod chunk_len, queries at position mod chunk_len, at that plus chunk_len capped at "
             "chunk_size for the previous chunk, and at chunk_size for earlier ones) and :908-936, "
             "vllm/vllm/attention/backends/dual_chunk_flash_attn.py:400-403, 444-471 (keys times "
             "max(0.1 ln(length / original_max_position_embeddings) + 1, 1)) and :690-757 (the chunks)"),
            ("the same in vLLM itself: vllm-project/vllm @07b13497 vllm/model_executor/layers/rotary_embedding/"
             "dual_chunk_rope.py (DualChunkRotaryEmbedding._compute_cos_sin_cache) and @006e0acb "
             "vllm/attention/backends/dual_chunk_flash_attn.py (DualChunkFlashAttentionMetadata.prefill_metadata "
             "and decode_metadata: scaling_factor; its sparse attention, read from sparse_attention_config.json, "
             "was not followed here)"),
            ("transformers 5.23.0: no file of the package names dual_chunk; configuration_utils.py:499-504 keeps "
             "an unknown key as an attribute; models/qwen2/modeling_qwen2.py:50-94 (Qwen2RotaryEmbedding: "
             "position times inv_freq at every position) and :178 (scaling head_dim ** -0.5)"),
        ),
    ),
    # Phi-3's window as Microsoft added it: one key more than transformers keeps now. The condition keeps the note
    # to configs without rope_scaling (Phi-3-mini-4k's kind): the long-context Phi-3/3.5/4-mini configs give LongRoPE
    # and a window of 262144, longer than their context, where the one key never shows. Not registered: StarCoder2,
    # whose authors' port (huggingface/transformers@63caa370e, ServiceNow, February 2024) kept sliding_window + 1 keys
    # in flash attention (modeling_starcoder2.py:532, 554) but sliding_window in its eager mask of that day (before
    # 608fa5496): their code disagreed with itself, and the training code was not read.
    Divergence(
        model_type="phi3",
        key="sliding_window",
        published=(f"Phi-3 as Microsoft added it to transformers (April 2024) lets each query attend to itself and the "
                   f"sliding_window keys before it, sliding_window + 1 keys in all ({_PHI3_WINDOW + 1:,} for "
                   f"Phi-3-mini-4k-instruct's {_PHI3_WINDOW}), in its flash-attention path (window_size "
                   f"(sliding_window, sliding_window)) and in its eager and SDPA mask alike"),
        transformers=("Phi3's mask keeps a key only while the query is fewer than sliding_window positions after it, "
                      "sliding_window keys in all, the query's own included (its flash-attention path passes "
                      "sliding_window - 1): the key exactly sliding_window positions back is dropped, in every sequence "
                      "longer than sliding_window tokens."),
        evidence=(
            ("https://huggingface.co/Alignment-Lab-AI/idfkphi4kiguess/blob/main/config.json ('Duplicate from "
             "microsoft/Phi-3-mini-4k-instruct': sliding_window 2047, max_position_embeddings 4096, rope_scaling null, "
             "auto_map to the authors' configuration_phi3 and modeling_phi3; read through the search tool's copy, as "
             "are other copies naming microsoft/Phi-3-mini-4k-instruct with the same values; Microsoft's own file "
             "and its remote modeling_phi3.py were not opened)"),
            ("the authors' code as added to transformers: huggingface/transformers@c9693db2f ('Phi-3 (#30423)', "
             "Gustavo de Rosa of Microsoft, 2024-04-24; read in F4biian/transformers-v4.47.1-and-internal-states): "
             "src/transformers/models/phi3/modeling_phi3.py:491-494 (the window once the keys outnumber "
             "sliding_window), :654 and :676 (flash_attn window_size=(sliding_window, sliding_window): keys from "
             "i - sliding_window to i inclusive), :1123-1129 (eager and SDPA: _prepare_4d_causal_attention_mask "
             "with sliding_window), whose src/transformers/modeling_attn_mask_utils.py:166-170 at that commit masks "
             "keys at or before i - sliding_window - 1 (inclusive since huggingface/transformers@608fa5496, 'Make "
             "sliding window size inclusive in eager attention', March 2024)"),
            ("transformers 5.23.0 models/phi3/configuration_phi3.py:81, models/phi3/modeling_phi3.py:384 "
             "(create_sliding_window_causal_mask) and :246, masking_utils.py:88-97 (sliding_window_overlay: "
             "kv_idx > q_idx - sliding_window) and :130-134, modeling_flash_attention_utils.py:687-692 (window_size "
             "(sliding_window - 1, sliding_window - 1)); the flash path turned after "
             "https://github.com/huggingface/transformers/issues/39408 ('Off-by-one error when using flash_attention "
             "with a sliding window', July 2025)"),
        ),
        when=(("rope_scaling", None),),
    ),
)


def _holds(config: Mapping[str, Any], condition: Condition) -> bool:
    """config[key] is exactly the value (a missing key reads as None)."""
    key, value = condition
    given = config.get(key)
    return type(given) is type(value) and given == value


_DEPARTS = "transformers departs from the published model here"


def divergence_notes(model_type: str | None, config: Mapping[str, Any]) -> list[str]:
    """The notes `read_config` adds for a config that sets a key of a registered divergence (and holds
    the values of its condition)."""
    return [f"config[{entry.key!r}] = {config[entry.key]!r}: {_DEPARTS}. Published: {entry.published}. "
            f"transformers (what posenc reads): {entry.transformers}"
            for entry in DIVERGENCES if entry.model_type == model_type and config.get(entry.key) is not None
            and all(_holds(config, condition) for condition in entry.when)]


def departed_keys(notes: Sequence[str]) -> list[str]:
    """The keys of the register's entries that ``notes`` (a `ConfigRope`'s) say transformers departs on,
    in the register's order: read back from the notes `divergence_notes` writes."""
    return [key for key in dict.fromkeys(entry.key for entry in DIVERGENCES)
            if any(note.startswith(f"config[{key!r}] = ") and _DEPARTS in note for note in notes)]
