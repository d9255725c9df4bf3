"""`posenc.inspect`'s words for a vision or video encoder: the settings `read_vision_config` reads,
as the browser's inspector shows them (``docs/javascripts/explorer/inspector_vision.js``).

An encoder's own config (DINOv3, V-JEPA 2, Pixtral, a Qwen-VL tower, SAM 2/3 ...) gets this reading
alone, since `read_config` refuses it; a parent with a language model (Qwen2.5-VL, Llama 4,
GLM-4V ...) gets it after its text reading.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from posenc.configs.vision import (
    BY_INPUT_KIND,
    ENCODER_MODEL_TYPES,
    INPUT_KINDS,
    VISION_MODEL_TYPES,
    VisionRope,
    read_vision_config,
)

__all__ = ["is_encoder", "reads_vision", "vision_lines"]

LAYOUTS = {
    "half": "half: features i and i + d/2 form a pair",
    "interleaved": "interleaved: features 2i and 2i + 1 form a pair",
    "half_per_axis": "half within each axis's block of features: i and i + (block width)/2 form a pair",
}
COORDINATES = {
    "patch_centre": "the centre of each patch, scaled to [-1, 1] on each axis",
    "index": "row and column indexes from 0",
    "index_from_one": "row and column indexes from 1",
}


def _model_type(config: Mapping[str, Any]) -> object:
    return config.get("model_type") if isinstance(config, Mapping) else None


def reads_vision(config: Mapping[str, Any]) -> bool:
    """Whether ``config``'s model type is one `read_vision_config` reads (an encoder or a parent of one)."""
    return _model_type(config) in VISION_MODEL_TYPES


def is_encoder(config: Mapping[str, Any]) -> bool:
    """Whether ``config`` is an encoder's own config, which `read_config` refuses (no text model)."""
    return _model_type(config) in ENCODER_MODEL_TYPES


def _num(value: float) -> str:
    return f"{int(value):,}" if float(value).is_integer() else f"{value:.6g}"


def _grid(rope: VisionRope) -> str:
    if rope.grid_rule == "merge_blocks":
        m = rope.spatial_merge_size
        return f"each input's own (rows and columns multiples of {m}); tokens in {m} x {m} blocks, each row by row"
    if rope.grid is None:
        return "each input's own"
    shape = " x ".join(map(_num, rope.grid))
    return f"{shape}, fixed by the config" if rope.grid_rule == "configured" else \
        f"each input's own (the configured image gives {shape})"


def _settings(rope: VisionRope) -> list[tuple[str, str]]:
    order = " (alternating pair by pair in the head)" if rope.axis_pairs == "alternating" else " (in this order in the head)"
    tiled = "; each third's table tiled, so a pair's two features turn by different rungs" \
        if rope.pairing == "vjepa2" else ""
    scaled = f", x {rope.coordinate_scale:.4g}" if rope.coordinate_scale != 1 else ""
    patch = "(frames, pixels, pixels)" if len(rope.patch_size) == 3 else "pixels"
    patch = f"{' x '.join(map(_num, rope.patch_size))} {patch}"
    if tuple(rope.patch_size) == (1, 1):  # a memory attention's (SAM 2/3, EdgeTAM): a feature-map grid
        patch = "one feature-map cell (the grid counts cells of a feature map, not pixels)"
    rows = [
        ("axes", ", ".join(f"{axis} {n} pairs" for axis, n in zip(rope.axes, rope.sections)) + order),
        ("rotated width", f"{_num(rope.rotary_dim)} of {_num(rope.head_dim)} features, "
                          f"{_num(rope.num_heads)} head{'s' if rope.num_heads != 1 else ''}"),
        ("base", _num(rope.base) + ("; every angle x 2 pi" if rope.angle_scale != 1 else "")),
        ("layout", LAYOUTS[rope.layout] + tiled),
        ("coordinates", COORDINATES[rope.coordinates] + scaled),
        ("patch", patch),
        ("grid", _grid(rope)),
        ("unrotated tokens", rope.unrotated),
    ]
    if rope.augmentation:
        parts = (f"{key} {'off' if value is None else _num(value)}" for key, value in rope.augmentation.items())
        rows.append(("augmentation", f"{', '.join(parts)} (training only)"))
    return rows


def vision_lines(rope: VisionRope, label: str = "vision encoder") -> list[str]:
    """The reading in words: a header, one line per setting, the notes, then SAM 3's windowed layers
    and EdgeTAM's keys as readings of their own."""
    n = len(rope.layers)
    layers = f" ({n} layer{'s' if n != 1 else ''}{': ' + ', '.join(map(str, rope.layers)) if n <= 8 else ''})" if n else ""
    kind = f", for {rope.input_kind}s" if rope.input_kind else ""  # VideoLLaMA 3: one reading per kind of input
    lines = [f"{label} {rope.model_type}{layers}{kind}: {len(rope.axes)}-D RoPE over {', '.join(rope.axes)}"]
    lines += [f"  {term}: {value}" for term, value in _settings(rope)]
    lines += [f"  note: {note}" for note in rope.notes]
    if rope.windowed is not None:
        lines += vision_lines(rope.windowed, "windowed layers of")
    if rope.keys is not None:
        lines += vision_lines(rope.keys, "its cross-attention's keys,")
    return lines


def describe_vision(config: Mapping[str, Any], label: str = "vision encoder") -> list[str]:
    """`vision_lines` of ``config``'s reading (a ``ValueError`` / ``TypeError`` names what is wrong);
    for a model type read per kind of input (`BY_INPUT_KIND`), the reading for images, then for videos."""
    kinds = INPUT_KINDS if _model_type(config) in BY_INPUT_KIND else (None,)
    return [line for kind in kinds for line in vision_lines(read_vision_config(config, kind), label)]
