r"""More Qwen-style vision towers of transformers 5.23.0: the class defaults and where each parent
keeps its tower. Each one's rotary module is Qwen2.5-VL's line for line (half the head's pairs for
rows, half for columns, one ladder, tiled twice; ``apply_rotary_pos_emb_vision``: the half layout),
and each tower takes its ids from ``vision_utils.get_vision_position_ids``; what differs is named
here: the key of the head count, whether the patch has a temporal size, and the merge size the ids
are built with. Read by `posenc.configs._vision_models._read_qwen`; each entry is checked live
against its own classes by tests/test_config_vision_towers.py.
"""

from __future__ import annotations

from typing import Any

# model type: (hidden_size, heads key and its default, patch_size, spatial_merge_size or None,
# temporal_patch_size or None, rope_theta), the class defaults of its *VisionConfig, with the
# rotary class, the ids and the rotation of q and k in its modeling file
_TOWERS = {
    # cohere_compass/configuration_cohere_compass.py:29-61; modeling :647, ids :922, q/k :765
    "cohere_compass_vision": (1152, ("num_heads", 16), 16, 2, 2, 10000.0),
    # ernie4_5_vl_moe/configuration_ernie4_5_vl_moe.py:32-64; modeling :828, ids :928, q/k :578
    "ernie4_5_vl_moe_vision": (1280, ("num_heads", 16), 14, 2, None, 10000.0),
    # exaone4_5/configuration_exaone4_5.py:30-63; modeling :74, ids :578, q/k :267
    "exaone4_5_vision": (3584, ("num_heads", 16), 14, 2, 2, 10000.0),
    # qwen4_exp/configuration_qwen4_exp.py:261-291; modeling :1677, ids :1973, q/k :1828
    "qwen4_exp_vision": (1152, ("num_heads", 16), 16, 2, 2, 10000.0),
    # lfm3_vl/configuration_lfm3_vl.py:29-62 (no attribute_map: num_attention_heads); modeling :77, ids :436, q/k :232
    "lfm3_vl_vision": (1024, ("num_attention_heads", 16), 16, 2, 2, 1000000.0),
    # dots3_note/configuration_dots3_note.py:28-115; modeling :1187, ids :1542, q/k :1378
    "dots3_note_vision_encoder": (1536, ("num_attention_heads", 24), 14, 2, None, 10000.0),
    # muse_glimmer/configuration_muse_glimmer.py:29-79; modeling :712, ids :858 (merge 1, set at :817), q/k :571
    "muse_glimmer_vision": (1536, ("num_attention_heads", 16), 14, None, None, 10000.0),
    # muse_spark/configuration_muse_spark.py:31-74; modeling :861, ids :1007 (merge 1, set at :966), q/k :769
    "muse_spark_vision": (1536, ("num_attention_heads", 16), 14, None, None, 10000.0),
    # paddleocr_vl/configuration_paddleocr_vl.py:37-74; modeling :104, ids :841 (merge 1 whatever the
    # config's spatial_merge_size, which the projector uses), q/k :687
    "paddleocr_vl_vision": (1152, ("num_attention_heads", 16), 14, 2, None, 10000.0),
    # step3p7/configuration_step3p7.py:30-78 (model type step3p5_vision); modeling :57, columns first :113,
    # ids :425 (merge 1), q/k :224; the patches also get learned absolute position embeddings (:298, 338)
    "step3p5_vision": (1536, ("num_attention_heads", 16), 14, None, None, 10000.0),
    # inkling2/configuration_inkling2.py:139-193; modeling :874, columns first and pairs interleaved :929-930,
    # ids from 1 in merge blocks, class tokens at (0, 0) :1438-1456, q/k :940-949 (rotate_pairwise :933-937)
    "inkling2_vision": (1024, ("num_attention_heads", 16), 20, 2, None, 10000.0),
    # kimi_k25/configuration_kimi_k25.py:29-58; modeling :177, the axes alternate pair by pair :234,
    # ids :528 (merge 1; the 2 x 2 merge_kernel_size merges after the encoder), q/k :338
    "kimi_k25_vision": (1152, ("num_attention_heads", 16), 14, None, None, 10000.0),
    # mlcd/configuration_mlcd.py:28-80 (MLCDVisionConfig, model types mlcd_vision_model and mlcd); modeling
    # :52 (Qwen2.5-VL's module), ids :520-528, the class token's learned angles :481, 532-535, q/k :287
    "mlcd_vision_model": (1664, ("num_attention_heads", 16), 14, None, None, 10000.0),
    "mlcd": (1664, ("num_attention_heads", 16), 14, None, None, 10000.0),
}

#: Every tower read here.
TOWERS = frozenset(_TOWERS)
#: Towers whose ids are in plain row-major order, with where the code says so.
_MERGE_1 = "get_vision_position_ids with a merge size of 1"
IDS_ROW_MAJOR = {"muse_glimmer_vision": f"{_MERGE_1}, muse_glimmer/modeling_muse_glimmer.py:817, 858",
                 "muse_spark_vision": f"{_MERGE_1}, muse_spark/modeling_muse_spark.py:966, 1007",
                 "paddleocr_vl_vision": f"{_MERGE_1}, paddleocr_vl/modeling_paddleocr_vl.py:841",
                 "step3p5_vision": f"{_MERGE_1}, step3p7/modeling_step3p7.py:425",
                 "kimi_k25_vision": f"{_MERGE_1}, kimi_k25/modeling_kimi_k25.py:528",
                 "mlcd_vision_model": "a meshgrid of the image's patches, mlcd/modeling_mlcd.py:520-528"}
IDS_ROW_MAJOR["mlcd"] = IDS_ROW_MAJOR["mlcd_vision_model"]
#: Where a tower's reading departs from Qwen2.5-VL's: VisionRope fields set, notes added, and
#: images_only (no video: no note on frames).
OVERRIDES: dict[str, dict[str, object]] = {
    "step3p5_vision": {"axes": ["column", "row"],
                       "notes": ["the columns' pairs come first in the head (step3p7/modeling_step3p7.py:113)"]},
    "inkling2_vision": {"axes": ["column", "row"], "layout": "interleaved", "coordinates": "index_from_one",
                        "unrotated": "the class token in front of each image (ids (0, 0): angle 0)",
                        "notes": ["the columns' pairs come first, each angle on two adjacent features, rotated "
                                  "pairwise (inkling2/modeling_inkling2.py:929-930, 933-949)",
                                  "patches count from 1; the class token sits at (0, 0) "
                                  "(inkling2/modeling_inkling2.py:1454-1456)"]},
}
OVERRIDES["kimi_k25_vision"] = {
    "axes": ["column", "row"], "axis_pairs": "alternating",
    "notes": ["the axes alternate pair by pair, columns first: pair 2k turns with the column, 2k + 1 with the row, "
              "both at rung k (kimi_k25/modeling_kimi_k25.py:234)"]}
for _mlcd in ("mlcd_vision_model", "mlcd"):
    OVERRIDES[_mlcd] = {"unrotated": "the class token (first) turns by learned angles, not by a position "
                                     "(class_pos_emb, mlcd/modeling_mlcd.py:481, 532-535)", "images_only": True}
#: Keys a tower's config class maps onto its own (attribute_map): where given, the alias is what the class keeps.
ALIASES = {"inkling2_vision": {"native_patch_size": "patch_size", "adapter_merge_size": "spatial_merge_size"}}


def tower_defaults() -> dict[str, dict[str, object]]:
    """The class defaults of each tower, in the keys its config class uses."""
    out: dict[str, dict[str, object]] = {}
    for name, (hidden, (heads_key, heads), patch, merge, temporal, theta) in _TOWERS.items():
        entry: dict[str, object] = {"hidden_size": hidden, heads_key: heads, "patch_size": patch}
        if merge is not None:
            entry["spatial_merge_size"] = merge
        if temporal is not None:
            entry["temporal_patch_size"] = temporal
        out[name] = {**entry, "rope_theta": theta}
    return out


#: Each parent's tower (a fixed sub-config class: its sub_configs name the class, not AutoConfig).
TOWER_PARENTS = {"cohere_compass": "cohere_compass_vision", "ernie4_5_vl_moe": "ernie4_5_vl_moe_vision",
                 "exaone4_5": "exaone4_5_vision", "qwen4_exp": "qwen4_exp_vision", "lfm3_vl": "lfm3_vl_vision",
                 "dots3_note": "dots3_note_vision_encoder", "muse_glimmer": "muse_glimmer_vision",
                 "muse_spark": "muse_spark_vision", "paddleocr_vl": "paddleocr_vl_vision", "step3p7": "step3p5_vision",
                 "inkling2": "inkling2_vision", "kimi_k25": "kimi_k25_vision"}


def read_minimax_m3_vl(model_type: str, values: Any, helpers: Any) -> Any:
    """MiniMax-M3-VL's tower: 3-D RoPE over (frame, row, column), a third of the head's pairs each.

    minimax_m3_vl/modeling_minimax_m3_vl.py:1011-1016: per axis w = 2 * ((d // 3) // 2) features, rungs
    base ** -(2k / w), k < w / 2; 1033-1034: frame, row, column blocks, tiled twice (half layout);
    1037-1047: only those 3w features rotate, rotate_half; 1215-1217, 1238-1240: ids (frame, row,
    column) from 0, rows and columns in merge blocks.
    """
    head_dim, heads = helpers.head(model_type, values, "hidden_size", "num_attention_heads", 1, "")
    if values.get("head_dim") not in (None, head_dim):
        raise ValueError(f"head_dim={values['head_dim']!r} must equal hidden_size / num_attention_heads = {head_dim} "
                         f"for model type {model_type!r}: its attention splits heads that way")
    w = 2 * ((head_dim // 3) // 2)
    if w == 0:
        raise ValueError(f"hidden_size={values['hidden_size']} / num_attention_heads={heads} = {head_dim} features "
                         f"per head must be at least 6 for model type {model_type!r} (a pair per axis)")
    base = helpers.base(model_type, values, ("axial", "default"))
    merge = helpers.size("spatial_merge_size", values["spatial_merge_size"])
    speeds = helpers.ladder(base, w // 2, 2 / w)
    patch = helpers.size("patch_size", values["patch_size"])
    temporal = helpers.size("temporal_patch_size", values["temporal_patch_size"])
    return helpers.rope(
        model_type, ("frame", "row", "column"), head_dim, heads, (w // 2,) * 3, 3 * w, base, (speeds,) * 3, 1.0,
        "half", "rotation", "index", (temporal, patch, patch), None, "merge_blocks", token_order="merge_blocks",
        spatial_merge_size=merge,
        notes=(f"the grid is each input's (grid_thw); ids count frames, rows and columns from 0, rows and columns in "
               f"blocks of {merge} x {merge} patches (vision_utils.py:112-123)",
               f"{head_dim - 3 * w} of the {head_dim} features pass unrotated "
               "(minimax_m3_vl/modeling_minimax_m3_vl.py:1037-1047)"))


def read_gemma4_vision(model_type: str, values: Any, helpers: Any) -> Any:
    """Gemma 4's vision encoder: each axis rotates its own half of the head as a half-layout RoPE.

    gemma4/modeling_gemma4.py:744-748: rungs base ** -(4k / d), k < d / 4 (d: head_dim, else hidden / heads);
    767-768: the table is [x, x, y, y], the halves named h and w but holding the processor's (x, y) ids
    (image_processing_gemma4.py:252-256: meshgrid "xy", row-major patches); 846-899
    (apply_multidimensional_rope): the head split in two, each half rotated with rotate_half on its own.
    """
    heads = helpers.size("num_attention_heads", values["num_attention_heads"])
    if values.get("head_dim") is None:
        head_dim, heads = helpers.head(model_type, values, "hidden_size", "num_attention_heads", 4,
                                       "each axis rotates half the head, in pairs")
    else:
        head_dim = helpers.size("head_dim", values["head_dim"])
        if head_dim % 4:
            raise ValueError(f"head_dim={head_dim} must be a multiple of 4 for model type {model_type!r} (each axis "
                             f"rotates half the head, in pairs; modeling_gemma4.py:876, 886-889)")
    base = helpers.base(model_type, values, ("axial", "default"))
    speeds = helpers.ladder(base, head_dim // 4, 4 / head_dim)
    patch = helpers.size("patch_size", values["patch_size"])
    return helpers.rope(
        model_type, ("column", "row"), head_dim, heads, (head_dim // 4,) * 2, head_dim, base, (speeds, speeds), 1.0,
        "half_per_axis", "rotation", "index", (patch, patch), None, "any",
        unrotated="none (padding patches, at id -1, are masked)",
        notes=("ids (x, y) count columns and rows from 0, row by row, from the image processor "
               "(image_processing_gemma4.py:252-256); the model's table names its halves h and w, but the first holds "
               "x (modeling_gemma4.py:767-768)",
               "each axis's half of the head is rotated as its own half-layout RoPE: feature i with i + head_dim / 4 "
               "within the half (apply_multidimensional_rope, modeling_gemma4.py:846-899)"))


def read_edgetam_video(model_type: str, values: Any, helpers: Any) -> Any:
    """EdgeTAM's memory attention: SAM 2's (the same rotary module and pairwise rotation), but the
    cross-attention's keys, its compressed memory, sit on their own grid.

    edgetam_video/modeling_edgetam_video.py:1263-1279: query ids (column, row) on
    memory_attention_rope_feat_sizes, key ids on memory_attention_rope_k_sizes; 310-336: the self-attention
    turns queries and keys at the query ids; 400-472: the cross-attention turns each memory frame's last
    (spatial) tokens at the key ids, repeated per frame, and leaves the tokens before them and the object
    pointers at the end.
    """
    import dataclasses

    reading = helpers.sam2_video(model_type, values)
    sizes = values["memory_attention_rope_k_sizes"]
    if isinstance(sizes, (str, bytes)) or not isinstance(sizes, (list, tuple)) or len(sizes) != 2:
        raise TypeError(f"memory_attention_rope_k_sizes must be [width, height], got {sizes!r}")
    cols = helpers.size("memory_attention_rope_k_sizes[0]", sizes[0])
    rows = helpers.size("memory_attention_rope_k_sizes[1]", sizes[1])
    where = "edgetam_video/modeling_edgetam_video.py"
    keys = dataclasses.replace(
        reading, grid=(rows, cols),
        unrotated="in each memory frame's group, the tokens before its spatial ones; the object pointers at the end",
        notes=(f"the cross-attention's keys: each memory frame's spatial tokens on this {rows} x {cols} grid "
               f"(memory_attention_rope_k_sizes), ids (column, row) from 0, repeated for every frame "
               f"({where}:400-472)",))
    return dataclasses.replace(
        reading, unrotated="none among the queries; see keys", keys=keys,
        notes=(f"the queries (the current frame's features) sit on memory_attention_rope_feat_sizes, ids (column, row) "
               f"from 0 ({where}:1263-1279); the self-attention turns its keys there too ({where}:310-336)",
               "the cross-attention's keys sit on their own grid, memory_attention_rope_k_sizes: see keys"))


#: Model types whose reading depends on the kind of input (read_vision_config's ``input_kind``): the merge
#: size each kind's processor builds the ids with. VideoLLaMA 3: image_processing_video_llama_3.py:98 (and
#: image_processing_pil_video_llama_3.py:97) set 1, video_processing_video_llama_3.py:106 sets 2; the model
#: takes them per input (modeling_video_llama_3.py:455-468, image_merge_sizes / video_merge_sizes :652-684).
BY_INPUT = {"video_llama_3_vision": {"image": 1, "video": 2}}
#: The kinds of input `posenc.configs.vision.read_vision_config`'s ``input_kind`` names.
INPUT_KINDS = ("image", "video")


def read_video_llama_3(model_type: str, values: Any, helpers: Any) -> Any:
    """VideoLLaMA 3's vision tower: Qwen2.5-VL's 2-D RoPE, with the merge size of each input.

    video_llama_3/modeling_video_llama_3.py:80-85: rungs base ** -(4k / d), k < d / 4 (d: head_dim, else
    hidden / heads; the attention splits heads as hidden / heads, :209-211); 99-105: rows then columns,
    tiled twice; 189-200: rotate_half over the whole head (half layout); 468: ids from
    vision_utils.get_vision_position_ids with the input's merge size, which no config key holds.
    """
    kind = values.get("_input_kind")
    if kind is None:
        raise ValueError(f"input_kind is needed for model type {model_type!r}: its ids are built with the merge size "
                         f"of each input, which the config does not hold (1 for images, 2 for videos, the processors' "
                         f"defaults); pass input_kind='image' or input_kind='video'")
    head_dim, heads = helpers.head(model_type, values, "hidden_size", "num_attention_heads", 4,
                                   "a quarter of the head per axis and feature half")
    if values.get("head_dim") not in (None, head_dim):  # the rotary module reads head_dim, the attention does not
        raise ValueError(f"head_dim={values['head_dim']!r} must equal hidden_size / num_attention_heads = {head_dim} "
                         f"for model type {model_type!r}: its attention splits heads that way "
                         f"(modeling_video_llama_3.py:81, 211)")
    base = helpers.base(model_type, values, ("axial", "default"))
    patch = helpers.size("patch_size", values["patch_size"])  # one Conv2d kernel size (:115-125)
    merge, where = BY_INPUT[model_type][kind], "video_llama_3/modeling_video_llama_3.py"
    image, video = BY_INPUT[model_type]["image"], BY_INPUT[model_type]["video"]
    shrunk = f"each frame's features are shrunk {video} x {video} after the encoder (bilinear, {where}:429-450)"
    notes: tuple[str, ...]
    if kind == "image":
        notes = ((f"the reading for images: the image processor's merge size is {image} "
                  f"(image_processing_video_llama_3.py:98), so ids count rows and columns from 0, row by row "
                  f"(vision_utils.py:112-125)"),
                 (f"for videos the merge size is {video} (video_processing_video_llama_3.py:106): ids and tokens in "
                  f"{video} x {video} blocks, and {shrunk}; read them with input_kind='video'"))
    else:
        notes = ((f"the reading for videos: the video processor's merge size is {video} "
                  f"(video_processing_video_llama_3.py:106), so ids count rows and columns from 0 in blocks of "
                  f"{video} x {video} patches (vision_utils.py:112-125)"),
                 (f"each frame repeats the same 2-D ids and attends only within itself "
                  f"(vision_utils.py:61-65, 125); {shrunk}"),
                 f"for images the merge size is {image}: ids row by row; read them with input_kind='image'")
    speeds = helpers.ladder(base, head_dim // 4, 4 / head_dim)
    blocks = "merge_blocks" if merge > 1 else "row_major"
    return helpers.rope(
        model_type, ("row", "column"), head_dim, heads, (head_dim // 4,) * 2, head_dim, base, (speeds, speeds), 1.0,
        "half", "rotation", "index", (patch, patch), None, "merge_blocks" if merge > 1 else "any",
        token_order=blocks, spatial_merge_size=merge, notes=notes, input_kind=kind)


def read_efficientloftr(model_type: str, values: Any, helpers: Any) -> Any:
    """EfficientLoFTR's matcher: its self-attention turns each query and key as one vector of hidden_size
    features, pairs (2i, 2i + 1), pair 2m by the row and pair 2m + 1 by the column, both at rung m.

    efficientloftr/modeling_efficientloftr.py:111-122: rungs base ** -(2m / dim), dim = int((head_dim or
    hidden / heads) * partial_rotary_factor); 76-86, 125-134: rows and columns counted from 1 on the
    aggregated feature map, alternating pair by pair, each angle on both features of its pair; 272-306:
    Cohere's interleaved rotation; 383-396: applied before the split into heads; 498-515: the
    self-attention rotates, the cross-attention between the two images does not.
    """
    hidden = helpers.size("hidden_size", values["hidden_size"])
    heads = helpers.size("num_attention_heads", values["num_attention_heads"])
    base = helpers.base(model_type, values, ("default",))
    params = values.get("rope_parameters") or {}
    factor = params.get("partial_rotary_factor", values.get("partial_rotary_factor", 4.0))  # the class's 4.0
    factor = helpers.real("partial_rotary_factor", factor, positive=True, maximum=1 << 20)
    head = helpers.size("head_dim", values["head_dim"]) if values.get("head_dim") else hidden // heads
    dim = int(head * factor)
    if hidden % 4 or (dim + 1) // 2 != hidden // 4:
        raise ValueError(f"hidden_size={hidden} must be a multiple of 4 and hold one rung per row and column pair "
                         f"for model type {model_type!r}: (head_dim or hidden_size / num_attention_heads) = {head} "
                         f"times partial_rotary_factor={factor} gives {(dim + 1) // 2} rungs, not hidden_size / 4 "
                         f"(modeling_efficientloftr.py:82-84, 117-121)")
    speeds = helpers.ladder(base, hidden // 4, 2 / dim)
    where = "efficientloftr/modeling_efficientloftr.py"
    return helpers.rope(
        model_type, ("row", "column"), hidden, 1, (hidden // 4,) * 2, hidden, base, (speeds, speeds), 1.0,
        "interleaved", "rotation", "index_from_one", (1, 1), None, "any", axis_pairs="alternating",
        unrotated="none in the self-attention; the cross-attention between the two images does not rotate",
        notes=(f"the grid is the aggregated coarse feature map of each image ((cells - q_aggregation_kernel_size) // "
               f"q_aggregation_stride + 1 per axis), rows and columns counted from 1, row by row ({where}:125-134, "
               f"757-760); the keys, aggregated with kv_aggregation_kernel_size and kv_aggregation_stride, must "
               f"fall on the same grid",
               f"one rotation of all {hidden} features before the split into {heads} heads ({where}:383-396): "
               f"each head holds its own run of the pairs, so the heads turn at different rungs",
               f"pairs alternate between the axes: pair 2m turns with the row, 2m + 1 with the column, both at "
               f"rung m ({where}:82-84)"))


# The encoders read by their own readers above: class defaults, parents (fixed sub-config classes), readers.
OTHER_DEFAULTS: dict[str, dict[str, object]] = {
    # minimax_m3_vl/configuration_minimax_m3_vl.py:158-186 (MiniMaxM3VLVisionConfig)
    "minimax_m3_vl_vision": {"hidden_size": 1280, "num_attention_heads": 16, "patch_size": 14, "spatial_merge_size": 2,
                             "temporal_patch_size": 2, "rope_theta": 10000.0},
    # gemma4/configuration_gemma4.py:270-321 (Gemma4VisionConfig)
    "gemma4_vision": {"hidden_size": 768, "num_attention_heads": 12, "head_dim": 64, "patch_size": 16,
                      "rope_theta": 100.0},
}
# sapiens2/configuration_sapiens2.py:180-205 (Sapiens2Config): DINOv3's scheme line for line (rope_theta :280, rungs
# :291, patch centres :213-241, training draws :244-270, 310-316, angles :318-321, patches only :392-420)
OTHER_DEFAULTS["sapiens2"] = {"hidden_size": 1024, "num_attention_heads": 16, "rope_theta": 100.0, "image_size": 224,
                              "patch_size": 16, "num_register_tokens": 8, "pos_embed_shift": None,
                              "pos_embed_jitter": None, "pos_embed_rescale": 2.0}
# efficientloftr/configuration_efficientloftr.py:79-96, 123 (partial_rotary_factor 4.0 unless given; default_theta)
OTHER_DEFAULTS["efficientloftr"] = {"hidden_size": 256, "num_attention_heads": 8, "rope_theta": 10000.0}
#: A parent's defaults for a sub-config it is not given (SubConfigSpec init_kwargs): CHMv2's DINOv3 backbone,
#: chmv2/configuration_chmv2.py:69-87 (the keys a reading uses; a given backbone_config keeps its class's defaults).
SUB_DEFAULTS = {"chmv2": {"backbone_config": {"model_type": "dinov3_vit", "image_size": 416, "hidden_size": 1024,
                                              "num_attention_heads": 16, "num_register_tokens": 4}}}
#: Where a DINOv3-style encoder's own file builds the grid from the input and draws the training changes.
DINO_LINES = {"sapiens2": ("sapiens2/modeling_sapiens2.py:294-303", "sapiens2/modeling_sapiens2.py:310-316")}
OTHER_DEFAULTS["edgetam_video"] = {  # edgetam_video/configuration_edgetam_video.py:249-259, 290-297
    "memory_attention_hidden_size": 256, "memory_attention_num_attention_heads": 1,
    "memory_attention_downsample_rate": 1, "memory_attention_rope_feat_sizes": [64, 64],
    "memory_attention_rope_k_sizes": [16, 16], "rope_theta": 10000.0}
# video_llama_3/configuration_video_llama_3.py:49-60 (VideoLlama3VisionConfig; rope_theta: the default 10000)
OTHER_DEFAULTS["video_llama_3_vision"] = {"hidden_size": 768, "num_attention_heads": 12, "patch_size": 16,
                                          "rope_theta": 10000.0}
# configuration_video_llama_3.py:67-70: vision_config is always VideoLlama3VisionConfig
OTHER_PARENTS = {"minimax_m3_vl": "minimax_m3_vl_vision", "gemma4": "gemma4_vision",
                 "video_llama_3": "video_llama_3_vision"}
OTHER_READERS = {"minimax_m3_vl_vision": read_minimax_m3_vl, "gemma4_vision": read_gemma4_vision,
                 "edgetam_video": read_edgetam_video, "video_llama_3_vision": read_video_llama_3,
                 "efficientloftr": read_efficientloftr}
