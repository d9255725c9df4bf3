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
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# Public name -> module that defines it. One line per name; the figure cache reads this table
# to know which module a `from posenc import name` depends on.
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
    "apply_rope_nd": "posenc.rope_nd",
    "mrope_positions": "posenc.rope_nd",
    "sinusoidal_encoding_2d": "posenc.vision",
    "LearnedPositionalEmbedding2D": "posenc.vision",
    "TinyViT": "posenc.vision",
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


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from posenc.alibi import AlibiBias, alibi_bias, alibi_slopes
    from posenc.attention import SelfAttention, scaled_dot_product_attention
    from posenc.cope import CoPE, contextual_positions
    from posenc.designs import design_plans
    from posenc.embedding import PositionalEmbedding
    from posenc.fire import FireBias
    from posenc.inference import KVCache, packed_attention_mask, packed_positions, positions_from_mask
    from posenc.kerple import KerpleBias
    from posenc.latent import LatentAttention, LatentCache
    from posenc.layer_plan import LayerPlan
    from posenc.learned import LearnedPositionalEmbedding
    from posenc.model import TinyTransformer
    from posenc.randomized import randomized_positions
    from posenc.relative import (
        ShawRelativeAttention,
        T5RelativeBias,
        relative_positions,
        t5_relative_position_bucket,
    )
    from posenc.relative_terms import deberta_relative_index, deberta_scores, transformer_xl_scores
    from posenc.rope import (
        RotaryEmbedding,
        apply_rope,
        convert_rope_layout,
        rope_attention_scaling,
        rope_inverse_frequencies,
    )
    from posenc.rope_nd import apply_rope_nd, mrope_positions
    from posenc.sinusoidal import SinusoidalPositionalEncoding, offset_matrix, sinusoidal_encoding
    from posenc.spans import AttentionSpan, span_mask
    from posenc.temperature import QueryTemperature, attention_temperature
    from posenc.vision import LearnedPositionalEmbedding2D, TinyViT, sinusoidal_encoding_2d
    from posenc.windowing import apply_in_windows, window_spans
    from posenc.xpos import XPos
