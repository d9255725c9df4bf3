r"""Read the rotary positions of a vision or video encoder from its config, as ``transformers`` runs them.

`read_vision_config` turns a ``config.json`` (a dict or a ``transformers`` config object) of an
encoder that rotates over patches into a `VisionRope`: the axes, how many of a head's pairs
each axis owns (``sections``), the speed of every pair, the coordinates each patch gets and how
they are normalised, the base, the layout, the patch grid and the training-time changes of the
coordinates. A multimodal config (Qwen2.5-VL, Llama 4, GLM-4V, ...) is read through its vision
sub-config. `VisionRope.positions`, `VisionRope.angles` and `VisionRope.rotate` then give the
coordinates, the angle of every rotated feature and the rotated queries on a patch grid, in
float64, in the order in which transformers lays out its patches; the tests compare them with
transformers' own modules. Every rule below names the file and line of transformers 5.23.0
(``transformers/models/...``) it comes from.

Like the rest of the config reader, reading imports neither torch nor numpy; the three grid
methods import numpy when called.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from posenc._checks import MAX_ELEMENTS, MAX_GRID_CELLS, check_choice, check_int
from posenc.configs._vision_data import vision_data  # noqa: F401 - hooks/rope_data.py imports it from here
from posenc.configs._vision_models import (
    _DEFAULTS,
    _FIXED_CHILDREN,
    _PARENTS,
    _READERS,
    ENCODER_MODEL_TYPES,
    VISION_MODEL_TYPES,
    _family,
)
from posenc.configs._vision_refused import refusal
from posenc.configs._vision_towers import ALIASES, BY_INPUT, INPUT_KINDS, SUB_DEFAULTS

__all__ = ["BY_INPUT_KIND", "ENCODER_MODEL_TYPES", "INPUT_KINDS", "VISION_MODEL_TYPES", "VisionRope",
           "read_vision_config"]

#: The model types (encoders and their parents) read only with an ``input_kind``: the model places an
#: image's patches and a video's differently, and the config does not say which input comes.
BY_INPUT_KIND = tuple(sorted({*BY_INPUT, *(p for p, (_, child) in _PARENTS.items() if child in BY_INPUT)}))


@dataclasses.dataclass(frozen=True)
class VisionRope:
    """How a vision or video encoder rotates its patch tokens.

    Attributes:
        model_type: the (sub-)config's model type.
        axes: the axes in the order their pairs come in the head (``"frame"``, ``"row"``, ``"column"``).
        head_dim: features per head (EfficientLoFTR: its whole hidden vector, which it rotates before
            the split into heads; num_heads is then 1).
        num_heads: heads.
        sections: pairs of the head each axis owns, in the order of ``axes`` (sums to rotary_dim / 2).
        rotary_dim: features rotated; the rest of the head passes unchanged.
        base: the base of the frequency ladder (``rope_theta``).
        speeds: per axis, the angle per unit of coordinate of each of its pairs (radians, float64).
        angle_scale: a factor on every angle (2 pi for DINOv3's coordinates in [-1, 1], else 1).
        layout: ``"half"`` (pair i with i + rotary_dim / 2), ``"interleaved"`` (2i with 2i + 1), or
            ``"half_per_axis"`` (each axis's block of 2 * sections features is its own half layout: Gemma 4).
        pairing: ``"rotation"``, or ``"vjepa2"``: within each third the table is tiled, so the two
            features of a pair turn by different rungs (V-JEPA 2's released models; not a rotation).
        coordinates: what a patch's coordinate is: ``"patch_centre"`` (centre of the cell scaled to
            [-1, 1] per axis), ``"index"`` (row and column from 0), ``"index_from_one"`` (from 1).
        patch_size: (height, width) of a patch in pixels (frames per tubelet first for video);
            (1, 1) for a memory attention (SAM 2, SAM 3, EdgeTAM), whose grid is the image
            encoder's feature map: one cell.
        grid: the grid the config fixes, or None where the input's grid is used.
        grid_rule: ``"any"`` (any grid), ``"configured"`` (only ``grid``, frames free),
            ``"merge_blocks"`` (rows and columns multiples of ``spatial_merge_size``).
        token_order: ``"row_major"`` or ``"merge_blocks"`` (m x m blocks of patches, each row-major).
        spatial_merge_size: Qwen-style towers' merge block, else None.
        unrotated: which tokens are not rotated.
        augmentation: training-time changes of the coordinates (DINOv3's shift, jitter, rescale).
        coordinate_scale: a factor on the coordinates (SAM 3's global layers: window / grid).
        layers: the layers this reading is for, where others differ (empty: every layer).
        windowed: the reading of the other layers, which rotate within windows (SAM 3's ViT).
        notes: anything else a reader of the config should know.
        axis_pairs: ``"blocks"`` (each axis's pairs together, in the order of ``axes``) or
            ``"alternating"`` (one pair of each axis in turn, rung by rung: Kimi K2.5's tower).
        keys: the reading of the keys where they sit on another grid than the queries (EdgeTAM's
            cross-attention to its compressed memory), else None.
        input_kind: the kind of input the reading is for (``"image"`` or ``"video"``) where the model
            places the two differently (VideoLLaMA 3's merge size), else None.
    """

    model_type: str
    axes: tuple[str, ...]
    head_dim: int
    num_heads: int
    sections: tuple[int, ...]
    rotary_dim: int
    base: float
    speeds: tuple[tuple[float, ...], ...]
    angle_scale: float
    layout: str
    pairing: str
    coordinates: str
    patch_size: tuple[int, ...]
    grid: tuple[int, ...] | None
    grid_rule: str
    token_order: str = "row_major"
    spatial_merge_size: int | None = None
    unrotated: str = "none"
    augmentation: dict[str, float | None] | None = None
    coordinate_scale: float = 1.0
    layers: tuple[int, ...] = ()
    windowed: VisionRope | None = None
    notes: tuple[str, ...] = ()
    axis_pairs: str = "blocks"
    keys: VisionRope | None = None
    input_kind: str | None = None

    def positions(self, grid: Sequence[int] | None = None) -> Any:
        """The coordinates of the patch tokens of ``grid``, float64 numpy ``[tokens, len(axes)]``.

        ``grid`` is (rows, columns), or (frames, rows, columns); None: the configured grid. Tokens
        are in transformers' order; for 2-D readings the frames of a video repeat the same positions.
        """
        import numpy as np

        frames, rows, cols = self._check_grid(grid)
        grids: list[Any] = list(np.meshgrid(np.arange(rows, dtype=np.float64), np.arange(cols, dtype=np.float64),
                                            indexing="ij"))
        r, c = grids
        if self.token_order == "merge_blocks":  # vision_utils.py:118-120: m x m blocks, block-major
            m = self.spatial_merge_size or 1
            r, c = (a.reshape(rows // m, m, cols // m, m).transpose(0, 2, 1, 3) for a in (r, c))
        r, c = r.reshape(-1), c.reshape(-1)
        if self.coordinates == "patch_centre":  # dinov3_vit/modeling_dinov3_vit.py:112-120
            r, c = 2 * (r + 0.5) / rows - 1, 2 * (c + 0.5) / cols - 1
        elif self.coordinates == "index_from_one":  # llama4/modeling_llama4.py:1000-1001
            r, c = r + 1, c + 1
        r, c = r * self.coordinate_scale, c * self.coordinate_scale  # sam3/modeling_sam3.py:773
        by_axis = {"row": r, "column": c}
        if "frame" in self.axes:  # vjepa2/modeling_vjepa2.py:245-277: frame, then row, then column
            by_axis = {"frame": np.repeat(np.arange(frames, dtype=np.float64), rows * cols),
                       "row": np.tile(r, frames), "column": np.tile(c, frames)}
            return np.stack([by_axis[a] for a in self.axes], axis=-1)
        return np.tile(np.stack([by_axis[a] for a in self.axes], axis=-1), (frames, 1))

    def angles(self, grid: Sequence[int] | None = None) -> Any:
        """The angle of every rotated feature, float64 numpy ``[tokens, rotary_dim]``.

        Laid out as transformers' cos and sin tables: in the half layout the pair angles twice
        (``[a, a]``), in the interleaved one each pair's angle on both its features; for V-JEPA 2's
        pairing each third's rungs tiled twice.
        """
        import numpy as np

        pos = self.positions(grid)
        blocks = [pos[:, a:a + 1] * np.asarray(s, dtype=np.float64)[None] for a, s in enumerate(self.speeds)]
        if self.pairing == "vjepa2":  # vjepa2/modeling_vjepa2.py:195-196: repeat, not repeat_interleave
            return self.angle_scale * np.concatenate([np.tile(b, (1, 2)) for b in blocks], axis=-1)
        if self.layout == "half_per_axis":  # gemma4/modeling_gemma4.py:767-768: [x, x, y, y]
            return self.angle_scale * np.concatenate([np.concatenate([b, b], axis=-1) for b in blocks], axis=-1)
        if self.axis_pairs == "alternating":  # kimi_k25/modeling_kimi_k25.py:234: (w0, h0, w1, h1, ...)
            pairs = self.angle_scale * np.stack(blocks, axis=-1).reshape(pos.shape[0], -1)
        else:
            pairs = self.angle_scale * np.concatenate(blocks, axis=-1)  # [tokens, rotary_dim / 2]
        if self.layout == "half":
            return np.concatenate([pairs, pairs], axis=-1)
        return np.repeat(pairs, 2, axis=-1)

    def rotate(self, x: Any, grid: Sequence[int] | None = None) -> Any:
        """``x [..., tokens, head_dim]`` (patch tokens only) rotated as the model does, float64 numpy."""
        import numpy as np

        try:
            array = np.asarray(x)
        except (TypeError, ValueError, RuntimeError):  # ragged lists, bfloat16 tensors, ...
            raise TypeError(f"x must be an array or tensor of real floating-point numbers, got {type(x).__name__}") \
                from None
        if array.dtype.kind != "f":
            raise TypeError(f"x must hold real floating-point numbers, got dtype {array.dtype}")
        x = array.astype(np.float64)
        angles = self.angles(grid)
        if x.ndim < 2 or x.shape[-1] != self.head_dim or x.shape[-2] != angles.shape[0]:
            raise ValueError(f"x must have shape [..., {angles.shape[0]}, {self.head_dim}] (the grid's tokens, "
                             f"head_dim), got {x.shape}")
        rot, rest = x[..., :self.rotary_dim], x[..., self.rotary_dim:]
        if self.layout == "half" and self.pairing == "rotation":
            half = self.rotary_dim // 2
            partner = np.concatenate([-rot[..., half:], rot[..., :half]], axis=-1)
        elif self.layout == "half_per_axis":  # each axis's block rotated on its own (rotate_half within it)
            edges = np.cumsum([0, *(2 * s for s in self.sections)])
            partner = np.concatenate([np.concatenate([-rot[..., a + s:b], rot[..., a:a + s]], axis=-1)
                                      for a, b, s in zip(edges[:-1], edges[1:], self.sections)], axis=-1)
        else:  # pairs (2i, 2i + 1): partner (-x_{2i+1}, x_{2i})
            partner = np.stack([-rot[..., 1::2], rot[..., 0::2]], axis=-1).reshape(rot.shape)
        return np.concatenate([rot * np.cos(angles) + partner * np.sin(angles), rest], axis=-1)

    def _check_grid(self, grid: Sequence[int] | None) -> tuple[int, int, int]:
        if grid is None:
            if self.grid is None:
                raise ValueError(f"grid is needed: model type {self.model_type!r} takes the grid of its input; "
                                 f"pass (rows, columns) or (frames, rows, columns)")
            grid = self.grid
        if isinstance(grid, (str, bytes)) or not isinstance(grid, Sequence) or len(grid) not in (2, 3):
            raise TypeError(f"grid must be (rows, columns) or (frames, rows, columns), got {grid!r}")
        sizes = [check_int(f"grid[{i}]", g, minimum=1, maximum=MAX_GRID_CELLS) for i, g in enumerate(grid)]
        frames, rows, cols = sizes if len(sizes) == 3 else [1, *sizes]
        if frames * rows * cols > MAX_GRID_CELLS or frames * rows * cols * self.rotary_dim > MAX_ELEMENTS:
            raise ValueError(f"grid must hold at most {MAX_GRID_CELLS} patches and {MAX_ELEMENTS} angles "
                             f"({self.rotary_dim} per patch), got {tuple(grid)}")
        if self.grid_rule == "configured" and self.grid is not None and (rows, cols) != tuple(self.grid[-2:]):
            raise ValueError(f"grid must have the configured {self.grid[-2]} x {self.grid[-1]} patches for model "
                             f"type {self.model_type!r} ({self.notes[0] if self.notes else 'fixed in its code'}), "
                             f"got {rows} x {cols}")
        m = self.spatial_merge_size
        if self.grid_rule == "merge_blocks" and m and (rows % m or cols % m):
            raise ValueError(f"grid must have rows and columns that are multiples of spatial_merge_size={m} "
                             f"for model type {self.model_type!r}, got {rows} x {cols}")
        return frames, rows, cols


# ---------------------------------------------------------------- reading

def read_vision_config(config: Mapping[str, Any] | Any, input_kind: str | None = None) -> VisionRope:
    """Read how a vision or video encoder rotates its patches, from its config.

    Args:
        config: a ``config.json`` as a dict, or a ``transformers`` config object, of one of
            `VISION_MODEL_TYPES`; a multimodal config (``qwen2_5_vl``, ``llama4``, ``glm4v``,
            ``mistral3``, ...) is read through its ``vision_config``.
        input_kind: ``"image"`` or ``"video"``, needed only for the model types of `BY_INPUT_KIND`
            (VideoLLaMA 3 builds an image's ids with a merge size of 1 and a video's with 2, and
            its config holds neither); for the others the reading is the same for both kinds.

    Returns:
        a `VisionRope`.

    Raises:
        ValueError: a model type not read here (named, with the reason), a missing ``input_kind``
            where it is needed, or a config transformers'
            code would not run: a head that does not split into the axes' pairs, a non-square
            image or crop where the model's grid is square, an unknown rope type. The message
            names the key and its value.

    Examples:
        >>> r = read_vision_config({"model_type": "dinov3_vit", "hidden_size": 384,
        ...                         "num_attention_heads": 6})
        >>> r.axes, r.sections, r.base, r.layout, r.coordinates, r.grid
        (('row', 'column'), (16, 16), 100.0, 'half', 'patch_centre', (14, 14))
    """
    cfg = _as_dict(config)
    if input_kind is not None:
        check_choice("input_kind", input_kind, INPUT_KINDS)
    model_type = cfg.get("model_type")
    if isinstance(model_type, str) and model_type in _PARENTS:
        keys, child = _PARENTS[model_type]
        for key in keys:  # a missing sub-config: the parent's defaults for it (CHMv2's), else its type's
            sub = cfg.get(key) or SUB_DEFAULTS.get(model_type, {}).get(key) or {}
            if not isinstance(sub, Mapping):
                raise TypeError(f"{key} must be a dict (a sub-config of {model_type!r}), got {sub!r}")
            cfg = dict(sub)
        # a fixed sub-config class (qwen2_5_vl/configuration_qwen2_5_vl.py:180-205, and the other Qwen, GLM-4V
        # and Llama 4 parents) reads the dict whatever its model_type says (published Qwen2.5-VL files say
        # "qwen2_5_vl"); an AutoConfig one (Mistral 3, SAM 3) follows the sub-config's own model_type
        model_type = child if child in _FIXED_CHILDREN else cfg.get("model_type") or child
    if not isinstance(model_type, str) or model_type not in _DEFAULTS:
        raise ValueError(f"config['model_type'] is {model_type!r}: posenc does not read a vision encoder's rotary "
                         f"positions for it{refusal(model_type)}; it reads {', '.join(VISION_MODEL_TYPES)}")
    values = {**_DEFAULTS[model_type], **{k: v for k, v in cfg.items() if v is not None or k.startswith("pos_embed")},
              "_given": tuple(k for k, v in cfg.items() if v is not None), "_input_kind": input_kind}
    for alias, key in ALIASES.get(model_type, {}).items():  # the class's attribute_map: the alias, where given, wins
        if cfg.get(alias) is not None:
            values[key] = cfg[alias]
    return _READERS[_family(model_type)](model_type, values)


def _as_dict(config: Any) -> dict[str, Any]:
    if isinstance(config, Mapping):
        return dict(config)
    if hasattr(config, "to_dict"):  # a transformers config object
        return dict(config.to_dict())
    raise TypeError(f"config must be a dict (a config.json) or a transformers config, got {type(config).__name__}")
