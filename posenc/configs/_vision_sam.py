r"""The SAM family's readers for `posenc.configs.vision.read_vision_config`: SAM 3's ViT (global and
windowed layers) and SAM 2's memory attention (also SAM 3's tracker's), as transformers 5.23.0 runs
them. Each reader takes the checks of `posenc.configs._vision_models` as ``helpers``; the rules cite
the file and line of ``transformers/models/...`` they come from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from posenc._checks import check_int


def read_sam3_vit(model_type: str, values: Mapping[str, Any], helpers: Any) -> Any:
    head_dim, heads = helpers.head(model_type, values, "hidden_size", "num_attention_heads", 4,
                            "a quarter of the head per axis, in pairs")
    image, patch = helpers.pair("image_size", values["image_size"]), helpers.pair("patch_size", values["patch_size"])
    if image[0] != image[1] or patch[0] != patch[1]:
        # modeling_sam3.py:760-773 builds the global layers' ids on (image width // patch, image height //
        # patch) and scales both axes by the width: only a square image meets the token grid
        raise ValueError(f"image_size and patch_size must be square for model type {model_type!r} (its global "
                         f"layers' ids assume a square grid), got image_size={values['image_size']!r}, "
                         f"patch_size={values['patch_size']!r}")
    base = helpers.base(model_type, values, ("axial", "default"))
    side, window = image[0] // patch[0], helpers.size("window_size", values["window_size"])
    if side == 0:
        raise ValueError(f"image_size={image[0]} must be at least patch_size={patch[0]} for model type {model_type!r} "
                         f"(the grid has image_size // patch_size patches per side)")
    depth = helpers.size("num_hidden_layers", values["num_hidden_layers"])
    indexes = values["global_attn_indexes"]
    if isinstance(indexes, (str, bytes)) or not isinstance(indexes, Sequence):
        raise TypeError(f"global_attn_indexes must be a list of layer indexes, got {indexes!r}")
    indexes = [check_int(f"global_attn_indexes[{j}]", i) for j, i in enumerate(indexes)]
    global_layers = tuple(i for i in indexes if 0 <= i < depth)
    speeds = helpers.ladder(base, head_dim // 4, 4 / head_dim)  # modeling_sam3.py:437-443 (as Qwen's tower)
    common = dict(model_type=model_type, axes=("column", "row"), head_dim=head_dim, num_heads=heads,
                  sections=(head_dim // 4,) * 2, rotary_dim=head_dim, base=base, speeds=(speeds, speeds),
                  angle_scale=1.0, layout="interleaved", pairing="rotation", patch_size=patch, grid_rule="configured")
    # modeling_sam3.py:842: layers in global_attn_indexes see the whole grid, the others W x W windows;
    # 755-773: ids (column, row) from 0 on that grid, times window_size / grid width
    windowed = helpers.rope(**common, coordinates="index", grid=(window, window), coordinate_scale=1.0,
                          layers=tuple(i for i in range(depth) if i not in global_layers),
                          notes=(f"each {window} x {window} window (zero-padded at the edges) counts from 0 "
                                 "(modeling_sam3.py:664-692, 755-773)",))
    return helpers.rope(**common, coordinates="index", grid=(side, side), coordinate_scale=window / side,
                      layers=global_layers, windowed=windowed,
                      notes=(f"the global layers place the {side} x {side} patches at ids times {window}/{side}, so "
                             "the grid spans the range of one window (modeling_sam3.py:773)",
                             "rotate_pairwise (modeling_sam3.py:465-482): pairs (2i, 2i + 1), columns first"))


def read_sam2_video(model_type: str, values: Mapping[str, Any], helpers: Any) -> Any:
    # modeling_sam2_video.py:776-779: d = memory_attention_hidden_size // (downsample_rate * heads)
    hidden = helpers.size("memory_attention_hidden_size", values["memory_attention_hidden_size"])
    heads = helpers.size("memory_attention_num_attention_heads", values["memory_attention_num_attention_heads"])
    rate = helpers.size("memory_attention_downsample_rate", values["memory_attention_downsample_rate"])
    head_dim = hidden // (rate * heads)
    if hidden % (rate * heads) or head_dim % 4 or head_dim == 0:
        raise ValueError(f"memory_attention_hidden_size={hidden} / (memory_attention_downsample_rate={rate} * "
                         f"memory_attention_num_attention_heads={heads}) must be a positive multiple of 4 for model "
                         f"type {model_type!r} (a quarter of the head per axis, in pairs)")
    base = helpers.base(model_type, values, ("axial", "default"))
    sizes = values["memory_attention_rope_feat_sizes"]
    if model_type == "sam3_tracker_video":
        # configuration_sam3_tracker_video.py:261-303: __post_init__ sets image_size (1008 unless given),
        # whose setter overwrites memory_attention_rope_feat_sizes with image_size // the backbone's patch
        backbone = sub(sub(values, "vision_config"), "backbone_config")
        side = (helpers.size("image_size", values.get("image_size", 1008))
                // helpers.size("patch_size", backbone.get("patch_size", 14)))
        sizes = [side, side]
    if isinstance(sizes, (str, bytes)) or not isinstance(sizes, Sequence) or len(sizes) != 2:
        raise TypeError(f"memory_attention_rope_feat_sizes must be [width, height], got {sizes!r}")
    cols = helpers.size("memory_attention_rope_feat_sizes[0]", sizes[0])
    rows = helpers.size("memory_attention_rope_feat_sizes[1]", sizes[1])
    # 1012-1019: ids (column, row) from 0 on the fixed feature grid; 799-803: columns first, rows after,
    # each angle on both features of its pair (rotate_pairwise, 807-824: interleaved)
    speeds = helpers.ladder(base, head_dim // 4, 4 / head_dim)
    return helpers.rope(
        model_type, ("column", "row"), head_dim, heads, (head_dim // 4,) * 2, head_dim, base, (speeds, speeds), 1.0,
        "interleaved", "rotation", "index", (1, 1), (rows, cols), "configured",
        unrotated="the object-pointer tokens at the end of the memory keys (num_k_exclude_rope)",
        notes=("the memory attention's positions are fixed by memory_attention_rope_feat_sizes "
               "(modeling_sam2_video.py:1012-1019); memories of several frames repeat them on the keys",))


def sub(values: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    """A sub-config (an absent or empty one: the class defaults)."""
    sub = values.get(key) or {}
    if not isinstance(sub, Mapping):
        raise TypeError(f"{key} must be a dict (a sub-config), got {sub!r}")
    return sub
