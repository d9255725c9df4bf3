"""The attention span of every layer as transformers' models apply it, beside posenc's reading.

A config is read by `posenc.configs.read_config` and built by transformers as a tiny model of
the same layer count (narrow widths, the config's own window keys with the window shrunk to a few
tokens so that a short input shows it), run in eager attention on a short input; each layer's
attention weights give the keys each query may see (a masked key gets exactly zero weight). That
set must be what posenc's reading says: the whole causal prefix, a sliding window of W tokens
(the query and the W - 1 before it) or a chunk of C tokens (the query's own block up to it).
"""

from __future__ import annotations

import copy
import logging
import warnings
from typing import Any

import torch

from posenc.configs import read_config

logging.getLogger("transformers").setLevel(logging.ERROR)
warnings.filterwarnings("ignore", module="transformers")

LENGTH = 11       # tokens in the probe input
WINDOW = 3        # a sliding window shrunk to this
CHUNK = 4         # a chunk shrunk to this
_NARROW = {"hidden_size": 64, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 32,
           "intermediate_size": 32, "vocab_size": 64, "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2, "num_experts": 2, "num_local_experts": 2,
           "n_routed_experts": 2, "num_experts_per_tok": 1, "moe_intermediate_size": 16,
           "shared_expert_intermediate_size": 16, "n_shared_experts": 1}


# Configs whose spans test_rope_windows.py compares with transformers (test_explorer_ports.py: with the port).
WINDOWED = {"use_sliding_window": True, "sliding_window": 4096}
CASES: dict[str, dict[str, Any]] = {
    "mistral, a window": {"model_type": "mistral", "num_hidden_layers": 4, "sliding_window": 4096},
    "mistral, null": {"model_type": "mistral", "num_hidden_layers": 4, "sliding_window": None},
    "mistral, left out (class default 4096)": {"model_type": "mistral", "num_hidden_layers": 4},
    "mixtral, a window": {"model_type": "mixtral", "num_hidden_layers": 3, "sliding_window": 4096},
    "starcoder2, a window": {"model_type": "starcoder2", "num_hidden_layers": 3, "sliding_window": 4096},
    "phi3, a window": {"model_type": "phi3", "num_hidden_layers": 3, "sliding_window": 2047},
    "minimax, a window": {"model_type": "minimax", "num_hidden_layers": 4, "sliding_window": 4096},
    "qwen2, switched on": {"model_type": "qwen2", "num_hidden_layers": 6, "max_window_layers": 2, **WINDOWED},
    "qwen2, switched off": {"model_type": "qwen2", "num_hidden_layers": 6, "max_window_layers": 2,
                            "use_sliding_window": False, "sliding_window": 4096},
    "qwen3, switched on": {"model_type": "qwen3", "num_hidden_layers": 5, "max_window_layers": 3, **WINDOWED},
    "qwen2_moe, switched on": {"model_type": "qwen2_moe", "num_hidden_layers": 6, "max_window_layers": 4,
                               **WINDOWED},
    "qwen3_moe, switched on": {"model_type": "qwen3_moe", "num_hidden_layers": 4, **WINDOWED},
    "qwen3_moe, switched off": {"model_type": "qwen3_moe", "num_hidden_layers": 4, "sliding_window": 4096},
    "dots1, windowed layers": {"model_type": "dots1", "num_hidden_layers": 5, "max_window_layers": 2,
                               "sliding_window": 4096},
    "dots1, past the layer count": {"model_type": "dots1", "num_hidden_layers": 5, "sliding_window": 4096},
    "gemma3_text, by layer type": {"model_type": "gemma3_text", "num_hidden_layers": 7},
    "llama4_text, chunks": {"model_type": "llama4_text", "num_hidden_layers": 4},
}


def shrunk(config: dict[str, Any]) -> dict[str, Any]:
    """``config`` with positive windows and chunks shrunk (nulls, zeros and switches kept), narrow
    widths and a RoPE without per-feature factor lists (which depend on the width)."""
    out = copy.deepcopy(config)
    text = out.get("text_config") if isinstance(out.get("text_config"), dict) else out
    for key, size in (("sliding_window", WINDOW), ("attention_chunk_size", CHUNK)):
        if isinstance(text.get(key), int) and not isinstance(text.get(key), bool) and text[key] > 0:
            text[key] = size
    text.update(_NARROW)  # keys a model type does not read are kept by its config class and unused
    for key in ("rope_scaling", "rope_parameters"):
        params = text.get(key)
        if isinstance(params, dict) and any(isinstance(v, list) for v in params.values()):
            text.pop(key)
    text.pop("per_layer_config", None)
    return out


def expected_masks(config: dict[str, Any]) -> list[torch.Tensor | None]:
    """The keys each query sees at each layer, by posenc's reading (None: not attention)."""
    rope = read_config(config)
    q = torch.arange(LENGTH)[:, None]
    k = torch.arange(LENGTH)[None, :]
    masks: list[torch.Tensor | None] = []
    for name in rope.pattern:
        layer = rope.layers[name]
        kind = name.removesuffix(":nope")
        if kind in ("linear_attention", "mamba", "conv", "mlp", "moe"):
            masks.append(None)
            continue
        causal = k <= q
        if layer.window is None:
            masks.append(causal)
        elif kind == "chunked_attention":
            masks.append(causal & (k // layer.window == q // layer.window))
        else:
            masks.append(causal & (k > q - layer.window))
    return masks


def transformers_masks(config: dict[str, Any]) -> list[torch.Tensor | None]:
    """The keys each query sees at each layer of transformers' model built from ``config``."""
    import transformers

    built = transformers.AutoConfig.for_model(**copy.deepcopy(config))
    text = built.get_text_config(decoder=True)
    text._attn_implementation = "eager"
    torch.manual_seed(0)
    model = transformers.AutoModel.from_config(text, attn_implementation="eager").eval()
    layers = _decoder_layers(model)
    seen: dict[int, torch.Tensor] = {}
    handles = []
    for index, layer in enumerate(layers):
        attention = getattr(layer, "self_attn", None)
        if attention is None:
            continue
        handles.append(attention.register_forward_hook(
            lambda _m, _i, out, index=index: seen.__setitem__(index, out[1]) if isinstance(out, tuple) and
            isinstance(out[1], torch.Tensor) else None))
    try:
        with torch.no_grad():
            model(input_ids=torch.arange(1, LENGTH + 1)[None] % 60 + 1, use_cache=False)
    finally:
        for handle in handles:
            handle.remove()
    return [(seen[i][0, 0] > 0) if i in seen else None for i in range(len(layers))]


def _decoder_layers(model: Any) -> Any:
    for path in ("layers", "model.layers", "language_model.layers", "decoder.layers"):
        found = model
        for part in path.split("."):
            found = getattr(found, part, None)
        if found is not None:
            return found
    raise LookupError(f"no decoder layers in {type(model).__name__}")


def differences(config: dict[str, Any]) -> list[str]:
    """Layers whose span posenc reads otherwise than transformers applies (empty: they agree)."""
    probe = shrunk(config)
    ours, theirs = expected_masks(probe), transformers_masks(probe)
    if len(ours) != len(theirs):
        return [f"posenc reads {len(ours)} layers, transformers builds {len(theirs)}"]
    out = []
    for index, (a, b) in enumerate(zip(ours, theirs)):
        if a is None or b is None:
            continue  # not softmax attention (posenc), or no weights to read (transformers)
        if not torch.equal(a, b):
            out.append(f"layer {index}: posenc sees {a.sum(1).tolist()} keys per query, transformers {b.sum(1).tolist()}")
    return out


def later_token_moves_an_earlier_one(live: Any, implementation: str, padded: bool) -> bool:
    """Whether, in a tiny model built from the transformers config ``live``, token 1's output moves when
    the last of five tokens changes (a batch with or without a padded first token)."""
    import transformers

    torch.manual_seed(0)
    model = transformers.AutoModel.from_config(live, attn_implementation=implementation).eval()
    mask = torch.tensor([[0 if padded else 1, 1, 1, 1, 1]])
    with torch.no_grad():
        one, two = (model(input_ids=torch.tensor([[5, 6, 7, 8, last]]), attention_mask=mask).last_hidden_state[0, 1]
                    for last in (9, 10))
    return not torch.allclose(one, two, atol=1e-6)
