"""posenc: positional encodings for transformers, each checked against its published formula.

The public API is re-exported here. Importing ``posenc`` is cheap: each name is imported from its
module on first use, so ``import posenc`` does not load torch until you touch a method.

Examples:
    >>> import posenc
    >>> posenc.sinusoidal_encoding(3, 4).shape
    torch.Size([3, 4])
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# Public name -> module that defines it: the one list of the public API (`__all__` and the lazy
# look-up below are built from it; the figure cache imports it to know which module a
# `from posenc import name` depends on). Add a name with one line here. Type checkers see each name
# through the module-level `__getattr__` (PEP 562) as `Any`; import from the defining module
# (`from posenc.rope import apply_rope`) where full types matter.
_EXPORTS: dict[str, str] = {
    "scaled_dot_product_attention": "posenc.attention",
    "SelfAttention": "posenc.attention",
    "sinusoidal_encoding": "posenc.sinusoidal",
    "SinusoidalPositionalEncoding": "posenc.sinusoidal",
    "offset_matrix": "posenc.sinusoidal",
    "LearnedPositionalEmbedding": "posenc.learned",
    "relative_positions": "posenc.relative",
    "ShawRelativeAttention": "posenc.relative",
    "t5_relative_position_bucket": "posenc.relative",
    "T5RelativeBias": "posenc.relative",
    "alibi_slopes": "posenc.alibi",
    "alibi_bias": "posenc.alibi",
    "AlibiBias": "posenc.alibi",
    "rope_inverse_frequencies": "posenc.rope",
    "apply_rope": "posenc.rope",
    "RotaryEmbedding": "posenc.rope",
    "rope_attention_scaling": "posenc.rope",
    "convert_rope_layout": "posenc.rope",
    "read_config": "posenc.configs",
    "from_config": "posenc.configs",
    "apply_rope_nd": "posenc.rope_nd",
    "mrope_positions": "posenc.rope_nd",
    "sinusoidal_encoding_2d": "posenc.vision",
    "LearnedPositionalEmbedding2D": "posenc.vision",
    "TinyViT": "posenc.tiny_vit",
    "patch_center_coordinates": "posenc.rope_images",
    "augment_patch_coordinates": "posenc.rope_images",
    "apply_dinov3_rope": "posenc.rope_images",
    "apply_rope_head_thirds": "posenc.rope_images",
    "apply_pixtral_rope": "posenc.rope_images",
    "RopeMixed": "posenc.rope_images",
    "flux_position_ids": "posenc.rope_video",
    "video_axes_dims": "posenc.rope_video",
    "axes_frequencies": "posenc.rope_video",
    "ntk_axis_factor": "posenc.rope_video",
    "riflex_intrinsic_index": "posenc.rope_video",
    "riflex_frequencies": "posenc.rope_video",
    "apply_axes_rope": "posenc.rope_video",
    "PositionalEmbedding": "posenc.embedding",
    "TinyTransformer": "posenc.model",
    "LayerPlan": "posenc.layer_plan",
    "KVCache": "posenc.inference",
    "positions_from_mask": "posenc.inference",
    "packed_positions": "posenc.inference",
    "packed_attention_mask": "posenc.inference",
    "XPos": "posenc.xpos",
    "KerpleBias": "posenc.kerple",
    "FireBias": "posenc.fire",
    "CoPE": "posenc.cope",
    "contextual_positions": "posenc.cope",
    "forgetting_bias": "posenc.forgetting",
    "ForgetGate": "posenc.forgetting",
    "stick_breaking_weights": "posenc.stick_breaking",
    "StickBreaking": "posenc.stick_breaking",
    "path_logits": "posenc.path_attention",
    "HouseholderPath": "posenc.path_attention",
    "pope_frequencies": "posenc.pope",
    "PolarEmbedding": "posenc.pope",
    "randomized_positions": "posenc.randomized",
    "window_spans": "posenc.windowing",
    "attention_temperature": "posenc.temperature",
    "LatentAttention": "posenc.latent",
    "LatentCache": "posenc.latent",
    "span_mask": "posenc.spans",
    "AttentionSpan": "posenc.spans",
    "design_plans": "posenc.designs",
    "transformer_xl_scores": "posenc.relative_terms",
    "deberta_relative_index": "posenc.relative_terms",
    "deberta_scores": "posenc.relative_terms",
    "QueryTemperature": "posenc.temperature",
    "apply_in_windows": "posenc.windowing",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'posenc' has no attribute {name!r}")
    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

