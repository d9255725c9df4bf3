"""What a wrapper's config class does with the text model's keys given at its top level, without a
``text_config``: most build the text model from their own defaults and ignore them (LlavaConfig(rope_theta=5.0)
keeps Llama's 10000); a few forward some (Qwen2-VL's, for backward compatibility). Found by building
each wrapper class with one key at a time and comparing its text model with the class default's."""

from __future__ import annotations

import copy
import warnings
from typing import Any

#: A probe value for each of the keys read_config reads from a text model's config
#: (posenc.configs._params.TOP_LEVEL_KEYS), none a class default; `COMPANIONS` go with some.
PROBES: dict[str, Any] = {
    "rope_theta": 12345.0, "rope_parameters": {"rope_type": "default", "rope_theta": 12345.0},
    "rope_scaling": {"rope_type": "linear", "factor": 3.0}, "partial_rotary_factor": 0.375,
    "hidden_size": 1536, "num_attention_heads": 8, "head_dim": 48, "max_position_embeddings": 777,
    "num_hidden_layers": 3, "layer_types": ["sliding_attention"] * 3, "sliding_window": 77,
    "use_sliding_window": True, "max_window_layers": 1, "attention_chunk_size": 99, "no_rope_layers": [1, 0, 1],
    "rope_interleave": False, "qk_rope_head_dim": 24, "use_bidirectional_attention": True,
    "attn_temperature_tuning": False, "floor_scale": 777, "attn_scale": 0.25, "use_mem_rope": True,
    "layer_rope_theta": [12345.0] * 3,
}
#: Keys a probe needs beside it to take effect: Qwen2-VL's text model keeps a sliding_window only
#: where use_sliding_window is set (configuration_qwen2_vl.py), and a layer list needs its count.
COMPANIONS: dict[str, dict[str, Any]] = {"sliding_window": {"use_sliding_window": True},
                                         "max_window_layers": {"use_sliding_window": True},
                                         "layer_types": {"num_hidden_layers": 3},
                                         "no_rope_layers": {"num_hidden_layers": 3},
                                         "layer_rope_theta": {"num_hidden_layers": 3}}


def _text_dict(cls: type, **kwargs: Any) -> dict[str, Any] | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return dict(cls(**copy.deepcopy(kwargs)).get_text_config(decoder=True).to_dict())
    except Exception:  # noqa: BLE001 - a probe the class refuses: not shown ignored
        return None


def top_level_read(config_name: str) -> list[str] | None:
    """The keys of ``TOP_LEVEL_KEYS`` that a wrapper's class, built without ``text_config``, may read
    into its text model (the text model differs from the class default's with the key given at the
    top, or the class refuses the probe); None where it reads none (every key left out)."""
    import transformers
    from posenc.configs._params import TOP_LEVEL_KEYS
    cls = getattr(transformers, config_name)
    read = [key for key in TOP_LEVEL_KEYS if not _left_out(cls, key)]
    return read or None


def _left_out(cls: type, key: str) -> bool:
    """Whether the text model is the same with ``key`` at the top level as without (both built)."""
    without = _text_dict(cls, **COMPANIONS.get(key, {}))
    return without is not None and _text_dict(cls, **COMPANIONS.get(key, {}), **{key: PROBES[key]}) == without
