r"""What each vision or video model type's config means, as transformers 5.23.0 runs it: the class
defaults, where a multimodal config keeps its encoder, and one reader per family of rotary code.

Each reader returns a `posenc.configs.vision.VisionRope`; the rules cite the file and line of
``transformers/models/...`` they come from. The public entry point is
`posenc.configs.vision.read_vision_config`.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from posenc._checks import check_float, check_int, is_integer
from posenc.configs._vision_sam import read_sam2_video, read_sam3_vit
from posenc.configs._vision_towers import (DINO_LINES, IDS_ROW_MAJOR, OTHER_DEFAULTS, OTHER_PARENTS, OTHER_READERS, OVERRIDES,
                                           TOWER_PARENTS, TOWERS, tower_defaults)

#: The SAM family's readers (posenc/configs/_vision_sam.py), given this module's checks.
SAM_READERS = {"sam2_video": read_sam2_video, "sam3_vit_model": read_sam3_vit}

if TYPE_CHECKING:
    from posenc.configs.vision import VisionRope

_TWO_PI = 2 * math.pi

#: The class defaults each reading falls back on, as the config classes of transformers 5.23.0
#: declare them (each checked live against the class by tests/test_config_vision.py).
_DEFAULTS: dict[str, dict[str, Any]] = {
    # dinov3_vit/configuration_dinov3_vit.py:74-97
    "dinov3_vit": {"hidden_size": 384, "num_attention_heads": 6, "rope_theta": 100.0, "image_size": 224,
                   "patch_size": 16, "num_register_tokens": 0, "pos_embed_shift": None, "pos_embed_jitter": None,
                   "pos_embed_rescale": 2.0},
    # eomt_dinov3/configuration_eomt_dinov3.py:69-108 (default_theta 100, rope_type "default")
    "eomt_dinov3": {"hidden_size": 1024, "num_attention_heads": 16, "rope_theta": 100.0, "image_size": 640,
                    "patch_size": 16, "num_register_tokens": 4, "pos_embed_shift": None, "pos_embed_jitter": None,
                    "pos_embed_rescale": 2.0},
    # vjepa2/configuration_vjepa2.py:64-82
    "vjepa2": {"hidden_size": 1024, "num_attention_heads": 16, "patch_size": 16, "crop_size": 256,
               "frames_per_clip": 64, "tubelet_size": 2, "pred_hidden_size": 384, "pred_num_attention_heads": 12},
    # pixtral/configuration_pixtral.py:43-52 (rope_theta: PreTrainedConfig's 10000)
    "pixtral": {"hidden_size": 1024, "num_attention_heads": 16, "image_size": 1024, "patch_size": 16,
                "rope_theta": 10000.0},
    # llama4/configuration_llama4.py:53-74 (Llama4VisionConfig)
    "llama4_vision_model": {"hidden_size": 768, "num_attention_heads": 16, "image_size": 448, "patch_size": 14,
                            "rope_theta": 10000.0},
    # qwen2_vl/configuration_qwen2_vl.py:28-44 (Qwen2VLVisionConfig): the rotary width is embed_dim / num_heads
    "qwen2_vl_vision": {"embed_dim": 1280, "num_heads": 16, "patch_size": 14, "spatial_merge_size": 2,
                        "temporal_patch_size": 2, "rope_theta": 10000.0},
    # sam2_video/configuration_sam2_video.py:228-257
    "sam2_video": {"memory_attention_hidden_size": 256, "memory_attention_num_attention_heads": 1,
                   "memory_attention_downsample_rate": 1, "memory_attention_rope_feat_sizes": [64, 64],
                   "rope_theta": 10000.0},
}
# The Qwen-style towers share one rotary module (qwen2_5_vl/modeling_qwen2_5_vl.py:119-177: half
# the head's pairs for rows, half for columns, one ladder) and one id rule (vision_utils.py:81-126).
_QWEN_STYLE = {
    # model type: (hidden_size, num_heads, patch_size), the class defaults of its *VisionConfig
    "qwen2_5_vl_vision": (3584, 16, 14), "qwen3_vl_vision": (1152, 16, 16), "qwen3_vl_moe_vision": (1152, 16, 16),
    "glm4v_vision": (1536, 12, 14), "glm4v_moe_vision": (1536, 12, 14),
    # the same module and ids (each checked live): qwen3_5/modeling_qwen3_5.py:73, 1175; qwen3_5_moe :69, 1264;
    # qwen2_5_omni :916, 1248; qwen3_omni_moe :986, 1200; glm_ocr :496, 607; glm5_next :1746, 1860
    "qwen3_5_vision": (1152, 16, 16), "qwen3_5_moe_vision": (1152, 16, 16), "qwen2_5_omni_vision_encoder": (3584, 16, 14),
    "qwen3_omni_moe_vision_encoder": (1152, 16, 16), "glm_ocr_vision": (1024, 16, 14), "glm5_next_vision": (1024, 16, 14),
}
for _name, (_hidden, _heads, _patch) in _QWEN_STYLE.items():
    _DEFAULTS[_name] = {"hidden_size": _hidden, "num_heads": _heads, "patch_size": _patch, "spatial_merge_size": 2,
                        "temporal_patch_size": 2, "rope_theta": 10000.0}
_DEFAULTS.update(tower_defaults())  # the other towers with the same module and ids (_vision_towers.py)
_DEFAULTS.update(OTHER_DEFAULTS)  # and the encoders read by their own readers there
# sam3_tracker_video: the same memory attention (configuration_sam3_tracker_video.py:234-265)
_DEFAULTS["sam3_tracker_video"] = {**_DEFAULTS["sam2_video"], "memory_attention_rope_feat_sizes": [72, 72],
                                   "image_size": 1008}

# sam3/configuration_sam3.py:25-62 (Sam3ViTConfig; global_attn_indexes None -> [7, 15, 23, 31] at 61)
_DEFAULTS["sam3_vit_model"] = {"hidden_size": 1024, "num_attention_heads": 16, "image_size": 1008, "patch_size": 14,
                               "window_size": 24, "global_attn_indexes": [7, 15, 23, 31], "num_hidden_layers": 32,
                               "rope_theta": 10000.0}

#: Configs whose rotating encoder is a sub-config: model type -> (the keys down to it, its model type).
_PARENTS = {
    "qwen2_vl": (("vision_config",), "qwen2_vl_vision"), "qwen2_5_vl": (("vision_config",), "qwen2_5_vl_vision"),
    "qwen3_vl": (("vision_config",), "qwen3_vl_vision"), "qwen3_vl_moe": (("vision_config",), "qwen3_vl_moe_vision"),
    "glm4v": (("vision_config",), "glm4v_vision"), "glm4v_moe": (("vision_config",), "glm4v_moe_vision"),
    "llama4": (("vision_config",), "llama4_vision_model"), "mistral3": (("vision_config",), "pixtral"),
    "qwen3_5": (("vision_config",), "qwen3_5_vision"), "qwen3_5_moe": (("vision_config",), "qwen3_5_moe_vision"),
    "glm_ocr": (("vision_config",), "glm_ocr_vision"), "glm5_next": (("vision_config",), "glm5_next_vision"),
    "glm46v": (("vision_config",), "glm4v_vision"),  # AutoConfig, glm4v_vision by default (configuration_glm46v.py:55-58)
    # SAM 3's image encoder is a ViT that rotates (sam3/configuration_sam3.py:81, sam3_video/...:107)
    "sam3_vision_model": (("backbone_config",), "sam3_vit_model"),
    "sam3": (("vision_config", "backbone_config"), "sam3_vit_model"),
    "sam3_tracker": (("vision_config", "backbone_config"), "sam3_vit_model"),
    "sam3_lite_text": (("vision_config", "backbone_config"), "sam3_vit_model"),
    "sam3_video": (("detector_config", "vision_config", "backbone_config"), "sam3_vit_model"),
    "chmv2": (("backbone_config",), "dinov3_vit"),  # AutoConfig, dinov3_vit by default (configuration_chmv2.py:69-87)
    **{parent: (("vision_config",), tower) for parent, tower in {**TOWER_PARENTS, **OTHER_PARENTS}.items()},
}

#: Sub-config types a parent builds with a fixed class, whatever the dict's own model_type.
_FIXED_CHILDREN = frozenset({"qwen2_vl_vision", "qwen2_5_vl_vision", "qwen3_vl_vision", "qwen3_vl_moe_vision",
                             "glm4v_vision", "glm4v_moe_vision", "llama4_vision_model", "qwen3_5_vision",
                             "qwen3_5_moe_vision", "glm_ocr_vision", "glm5_next_vision", *TOWER_PARENTS.values(),
                             *OTHER_PARENTS.values()})

#: Every model type `read_vision_config` reads (the parents through their vision sub-config).
VISION_MODEL_TYPES = tuple(sorted({*_DEFAULTS, *_PARENTS}))
#: Those whose only rotation is the encoder's: the rest (Qwen-VL, GLM-4V, Llama 4, Mistral 3, ...) also
#: have a language model that `posenc.configs.read_config` reads.
ENCODER_MODEL_TYPES = tuple(t for t in VISION_MODEL_TYPES  # SAM 3's and CHMv2's (a depth head) have none
                            if t in _DEFAULTS or _PARENTS[t][1].startswith("sam3") or t == "chmv2")


def _rope(*args: Any, **kwargs: Any) -> VisionRope:
    # the record lives with its grid methods in posenc.configs.vision, which imports this module
    from posenc.configs.vision import VisionRope

    return VisionRope(*args, **kwargs)


def _family(model_type: str) -> str:
    if model_type in _QWEN_STYLE or model_type == "qwen2_vl_vision" or model_type in TOWERS:
        return "qwen"
    return {"eomt_dinov3": "dinov3_vit", "sapiens2": "dinov3_vit", "sam3_tracker_video": "sam2_video"}.get(model_type,
                                                                                                      model_type)


def _base(model_type: str, values: Mapping[str, Any], allowed: tuple[str, ...]) -> float:
    """rope_theta from rope_parameters (where transformers 5 keeps it), else the top-level key."""
    params = values.get("rope_parameters")
    if params is not None and not isinstance(params, Mapping):
        raise TypeError(f"rope_parameters must be a dict, got {params!r}")
    params = params or {}
    rope_type = params.get("rope_type", allowed[0])
    if rope_type not in allowed:
        raise ValueError(f"rope_parameters['rope_type'] must be {' or '.join(map(repr, allowed))} for model type "
                         f"{model_type!r} (its rotary module refuses others), got {rope_type!r}")
    theta = params.get("rope_theta", values.get("rope_theta"))
    return check_float("rope_theta", theta, positive=True)


def _size(name: str, value: object) -> int:
    return check_int(name, value, minimum=1, maximum=1 << 20)


def _pair(name: str, value: object) -> tuple[int, int]:
    """image_size / patch_size: an int, or (height, width)."""
    if is_integer(value):
        return _size(name, value), _size(name, value)
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)) and len(value) == 2:
        return _size(f"{name}[0]", value[0]), _size(f"{name}[1]", value[1])
    raise TypeError(f"{name} must be an integer or [height, width], got {value!r}")


def _head(model_type: str, values: Mapping[str, Any], width_key: str, heads_key: str, multiple: int,
          why: str) -> tuple[int, int]:
    width, heads = _size(width_key, values[width_key]), _size(heads_key, values[heads_key])
    if width % heads:
        raise ValueError(f"{width_key}={width} must be a multiple of {heads_key}={heads} for model type "
                         f"{model_type!r} (each head gets {width_key} / {heads_key} features)")
    head_dim = width // heads
    if head_dim % multiple:
        raise ValueError(f"{width_key}={width} / {heads_key}={heads} = {head_dim} features per head must be a "
                         f"multiple of {multiple} for model type {model_type!r} ({why})")
    return head_dim, heads


def _ladder(base: float, count: int, step: float, offset: float = 0.0) -> tuple[float, ...]:
    """base ** -((offset + step * k)) for k < count, in float64."""
    return tuple(base ** -(offset + step * k) for k in range(count))


def _read_dinov3(model_type: str, values: Mapping[str, Any]) -> VisionRope:
    head_dim, heads = _head(model_type, values, "hidden_size", "num_attention_heads", 4,
                            "a quarter of the head per axis and feature half")
    if model_type != "eomt_dinov3":  # modeling_dinov3_vit.py:160 (sapiens2 :280): config.rope_theta, no rope_parameters
        base = check_float("rope_theta", values["rope_theta"], positive=True)
    else:  # modeling_eomt_dinov3.py:397-400, 452: rope_parameters, type "default" only
        base = _base(model_type, values, ("default",))
    image, patch = _pair("image_size", values["image_size"]), _pair("patch_size", values["patch_size"])
    q = head_dim // 4
    # modeling_dinov3_vit.py:171: inv_freq = base ** -(4k / head_dim), k < head_dim / 4; 199-201: angles
    # 2 pi * coordinate * inv_freq, rows then columns, tiled twice (the half layout, rotate_half at 210)
    speeds = _ladder(base, q, 4 / head_dim)
    aug = {key: (None if values.get(f"pos_embed_{key}") is None
                 else check_float(f"pos_embed_{key}", values[f"pos_embed_{key}"], minimum=0.0 if key == "shift" else 1.0))
           for key in ("shift", "jitter", "rescale")}
    prefix = 1 + check_int("num_register_tokens", values["num_register_tokens"], minimum=0, maximum=1 << 20)
    unrotated = (f"the first {prefix} tokens (class token and {prefix - 1} register tokens"
                 + (", and in its last blocks EoMT's query tokens" if model_type == "eomt_dinov3" else "") + ")")
    grid_at, drawn_at = DINO_LINES.get(model_type, ("modeling_dinov3_vit.py:175-182", "modeling_dinov3_vit.py:190-196"))
    return _rope(
        model_type, ("row", "column"), head_dim, heads, (q, q), head_dim, base, (speeds, speeds), _TWO_PI, "half",
        "rotation", "patch_centre", patch, (image[0] // patch[0], image[1] // patch[1]), "any",
        unrotated=unrotated, augmentation=aug,
        notes=(f"the grid is the input's: rows = image height // patch height, columns likewise ({grid_at}); the "
               "configured grid is image_size // patch_size",
               "training only: pos_embed_shift, pos_embed_jitter, pos_embed_rescale are drawn once per forward "
               f"({drawn_at}); evaluation uses the plain coordinates"))


def _read_vjepa2(model_type: str, values: Mapping[str, Any]) -> VisionRope:
    crop, patch = _pair("crop_size", values["crop_size"]), _pair("patch_size", values["patch_size"])
    if crop[0] != crop[1] or not is_integer(values["crop_size"]):
        raise ValueError(f"crop_size must be one integer (V-JEPA 2's grid is crop_size // patch_size on both "
                         f"axes, modeling_vjepa2.py:235), got {values['crop_size']!r}")
    if patch[0] != patch[1]:
        raise ValueError(f"patch_size must be square for model type 'vjepa2' (its ids assume a square grid, "
                         f"modeling_vjepa2.py:235-277), got {values['patch_size']!r}")
    heads_ = [_head(model_type, values, w, h, 1, "")
              for w, h in (("hidden_size", "num_attention_heads"), ("pred_hidden_size", "pred_num_attention_heads"))]
    (head_dim, heads), (pred_dim, _) = heads_
    # modeling_vjepa2.py:238-240: each of frame, row, column gets w = 2 * ((head_dim // 3) // 2) features
    w = 2 * ((head_dim // 3) // 2)
    if w == 0:
        raise ValueError(f"hidden_size={values['hidden_size']} / num_attention_heads={heads} = {head_dim} features "
                         f"per head must be at least 6 for model type 'vjepa2' (a pair per axis)")
    speeds = _ladder(10000.0, w // 2, 2 / w)  # modeling_vjepa2.py:186-188: 10000 ** -(j / (w / 2)), fixed base
    frames = _size("frames_per_clip", values["frames_per_clip"]) // _size("tubelet_size", values["tubelet_size"])
    side = crop[0] // patch[0]
    pred_w = 2 * ((pred_dim // 3) // 2)
    return _rope(
        model_type, ("frame", "row", "column"), head_dim, heads, (w // 2,) * 3, 3 * w, 10000.0, (speeds,) * 3, 1.0,
        "interleaved", "vjepa2", "index", (values["tubelet_size"], *patch), (frames, side, side), "configured",
        notes=(f"V-JEPA 2 derives a token's (frame, row, column) from its index and the configured {side} x {side} "
               "grid (modeling_vjepa2.py:245-277): another grid's rows wrap",
               f"{head_dim - 3 * w} of the {head_dim} features pass unrotated (modeling_vjepa2.py:289-293)",
               "the pairing is the released models': each third's table is tiled (repeat), so the features of a "
               "pair turn by different rungs (modeling_vjepa2.py:195-196)",
               f"the predictor rotates the same way with its own heads of {pred_dim} features "
               f"(thirds of {pred_w}), at the ids of the tokens it is given (modeling_vjepa2.py:258-266)"))


def _read_pixtral(model_type: str, values: Mapping[str, Any]) -> VisionRope:
    # configuration_pixtral.py:55-56 sets head_dim = hidden_size // num_attention_heads (a head_dim key is
    # overwritten); modeling_pixtral.py:68-74: the 1-D ladder base ** -(2j / d), rows the even rungs,
    # columns the odd ones; 93-97: rows then columns, tiled twice (half layout)
    head_dim, heads = _head(model_type, values, "hidden_size", "num_attention_heads", 4,
                            "a quarter of the head per axis and feature half")
    base = _base(model_type, values, ("axial", "default"))
    q = head_dim // 4
    rows, cols = _ladder(base, q, 4 / head_dim), _ladder(base, q, 4 / head_dim, 2 / head_dim)
    image, patch = _pair("image_size", values["image_size"]), _pair("patch_size", values["patch_size"])
    return _rope(
        model_type, ("row", "column"), head_dim, heads, (q, q), head_dim, base, (rows, cols), 1.0, "half", "rotation",
        "index", patch, (image[0] // patch[0], image[1] // patch[1]), "any",
        notes=("each image's patches count rows and columns from 0 on its own grid (modeling_pixtral.py:428-436); "
               "image_size bounds the grid",))


def _read_llama4(model_type: str, values: Mapping[str, Any]) -> VisionRope:
    head_dim, heads = _head(model_type, values, "hidden_size", "num_attention_heads", 4,
                            "a quarter of the head per axis: pairs of complex numbers, columns then rows")
    image, patch = _pair("image_size", values["image_size"]), _pair("patch_size", values["patch_size"])
    if not is_integer(values["image_size"]) or not is_integer(values["patch_size"]):
        raise ValueError(f"image_size and patch_size must be integers for model type {model_type!r} (its grid is "
                         f"square, image_size // patch_size per side, modeling_llama4.py:989), got image_size="
                         f"{values['image_size']!r}, patch_size={values['patch_size']!r}")
    base = _base(model_type, values, ("default",))
    side = image[0] // patch[0]
    # modeling_llama4.py:995-1002: rungs base ** -(4k / d), k < d / 4; columns (x) first, then rows, both
    # counted from 1; the class token (last) at angle 0; applied to complex pairs (2i, 2i + 1)
    speeds = _ladder(base, head_dim // 4, 4 / head_dim)
    return _rope(
        model_type, ("column", "row"), head_dim, heads, (head_dim // 4,) * 2, head_dim, base, (speeds, speeds), 1.0,
        "interleaved", "rotation", "index_from_one", patch, (side, side), "configured",
        unrotated="the class token, placed last (angle 0)",
        notes=(f"the table is built once for the configured {side} x {side} grid (modeling_llama4.py:989-1005)",))


def _read_qwen(model_type: str, values: Mapping[str, Any]) -> VisionRope:
    given = values.get("_given", ())
    width_key = "embed_dim" if model_type == "qwen2_vl_vision" else "hidden_size"  # modeling_qwen2_vl.py:226
    # attribute_map num_attention_heads -> num_heads (qwen2_5_vl/configuration_qwen2_5_vl.py:51): the alias,
    # where given, is what the class keeps (it is set after num_heads); a class without the alias has only
    # num_attention_heads (lfm3_vl, dots3_note, muse_*, paddleocr_vl: _vision_towers.py)
    aliased = "num_heads" in _DEFAULTS[model_type]
    heads_key = "num_attention_heads" if "num_attention_heads" in given or not aliased else "num_heads"
    head_dim, heads = _head(model_type, values, width_key, heads_key, 4,
                            "a quarter of the head per axis and feature half")
    if values.get("head_dim") not in (None, head_dim):
        raise ValueError(f"head_dim={values['head_dim']!r} must equal {width_key} / {heads_key} = {head_dim} for "
                         f"model type {model_type!r}: its attention splits heads that way")
    base = _base(model_type, values, ("axial", "default"))
    row_major = IDS_ROW_MAJOR.get(model_type)  # ids built with a merge size of 1, whatever the config says
    merge = None if row_major else _size("spatial_merge_size", values["spatial_merge_size"])
    # modeling_qwen2_5_vl.py:153-158: spatial_dim = d / 2, rungs base ** -(2k / spatial_dim), k < d / 4;
    # 170-177: rows then columns, tiled twice (half layout, rotate_half)
    speeds = _ladder(base, head_dim // 4, 4 / head_dim)
    patch = _size("patch_size", values["patch_size"])  # an integer: the towers' patch embedding is one Conv3d size
    sizes: tuple[Any, ...] = (patch, patch)  # the frames of a temporal patch first where the class has them
    if "temporal_patch_size" in _DEFAULTS[model_type]:
        sizes = (_size("temporal_patch_size", values["temporal_patch_size"]), patch, patch)
    changes: dict[str, Any] = dict(OVERRIDES.get(model_type, {}))  # where a tower departs from Qwen2.5-VL's
    more: tuple[str, ...] = tuple(changes.pop("notes", ()))
    video = () if changes.pop("images_only", False) else (  # their language models: not checked here
        "a video's frames repeat the same 2-D ids (vision_utils.py:125)" if model_type in TOWERS else
        "a video's frames repeat the same 2-D ids: time is placed by the language model's M-RoPE",)
    start = 1 if changes.get("coordinates") == "index_from_one" else 0
    ids = (f"the grid is each image's (grid_thw); ids count rows and columns from {start}, in blocks of {merge} x "
           f"{merge} patches (vision_utils.py:112-125)" if merge else
           f"the grid is each image's; ids count rows and columns from {start}, row by row ({row_major})")
    reading = _rope(
        model_type, ("row", "column"), head_dim, heads, (head_dim // 4,) * 2, head_dim, base, (speeds, speeds), 1.0,
        "half", "rotation", "index", sizes, None, "merge_blocks" if merge else "any",
        token_order="merge_blocks" if merge else "row_major", spatial_merge_size=merge,
        notes=(ids, *more, *video))
    if "axes" in changes:
        changes["axes"] = tuple(changes["axes"])
    return dataclasses.replace(reading, **changes) if changes else reading


class _Helpers:
    """What a reader in another module uses of this one's checks."""

    head, base, size, ladder = staticmethod(_head), staticmethod(_base), staticmethod(_size), staticmethod(_ladder)
    rope, pair, real = staticmethod(_rope), staticmethod(_pair), staticmethod(check_float)
    sam2_video = staticmethod(lambda model_type, values: read_sam2_video(model_type, values, _Helpers))


_READERS: dict[str, Callable[[str, Mapping[str, Any]], VisionRope]] = {"dinov3_vit": _read_dinov3, "vjepa2": _read_vjepa2, "pixtral": _read_pixtral,
            "llama4_vision_model": _read_llama4, "qwen": _read_qwen,
            **{name: functools.partial(reader, helpers=_Helpers) for name, reader in SAM_READERS.items()},
            **{name: functools.partial(reader, helpers=_Helpers) for name, reader in OTHER_READERS.items()}}
