r"""RoPE on several axes: axial 2-D/3-D RoPE for images and video, and M-RoPE for text mixed with images.

A token on a grid has one coordinate per axis (row and column; or time, row and column). RoPE
extends to it by giving each axis some of the \(d/2\) rotation pairs (\(d\) = ``dim``): pair \(j\) is
rotated by the angle \(p_a \theta_j\), where \(p_a\) is the token's coordinate on the axis \(a\) that
owns the pair. Each axis is then an ordinary 1-D RoPE on its own pairs, so the score of a query at
\(p\) and a key at \(q\) depends only on the offset \(p - q\), one number per axis.

Two choices make the variants in use:

* which pairs an axis owns: consecutive blocks of ``sections[a]`` pairs (Qwen2-VL's M-RoPE,
  Wang et al. 2024, and axial RoPE) or turn by turn, pair \(j\) to axis ``j % n_axes`` (the
  interleaved M-RoPE of Qwen3-VL, ``mrope_interleaved`` in transformers; see `rope_axis_assignment`);
* which frequency a pair turns at: ``"global"``, the 1-D ladder of the whole head,
  \(\theta_j = \text{base}^{-2j/d}\) whichever axis owns pair \(j\) (M-RoPE), or ``"per_axis"``, a full
  ladder for each axis, \(\theta_k = \text{base}^{-k/n_a}\) for its \(k\)-th pair, \(n_a\) =
  ``sections[a]`` (axial RoPE of Heo et al. 2024, and the vision encoder of Qwen2-VL).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from posenc._checks import (
    MAX_GRID_CELLS,
    check_choice,
    check_float,
    check_int,
    check_position_tensor,
    check_positions_match,
    check_tensor,
    is_integer,
)
from posenc._rotary import LAYOUTS, apply_table, frequency_ladder

__all__ = ["ASSIGNMENTS", "FREQUENCIES", "apply_rope_nd", "grid_positions", "mrope_positions",
           "rope_axis_assignment"]

#: How pairs are given to axes: consecutive blocks, or a round robin (Qwen3-VL).
ASSIGNMENTS = ("blocks", "interleaved")
#: Which frequency ladder a pair uses: the whole head's, or one per axis.
FREQUENCIES = ("global", "per_axis")
_MAX_PAIRS = 1 << 16  # a bound on rotation pairs per head


def _check_sections(sections: object) -> tuple[int, ...]:
    if isinstance(sections, (str, bytes)) or not isinstance(sections, Sequence):
        raise TypeError(f"sections must be a list or tuple of positive integers (pairs per axis), "
                        f"got {type(sections).__name__} {sections!r}")
    if len(sections) == 0:
        raise ValueError("sections must name at least one axis, got an empty sequence")
    for value in sections:
        if not is_integer(value) or int(value) < 1:
            raise ValueError(f"sections must hold positive integers (pairs per axis), got {list(sections)!r}")
    checked = tuple(int(value) for value in sections)
    if len(checked) > _MAX_PAIRS or sum(checked) > _MAX_PAIRS:
        raise ValueError(f"sections must hold at most {_MAX_PAIRS} pairs in all, got {len(checked)} axes "
                         f"and {sum(checked) if sum(checked) < 10**12 else 'more than 10**12'} pairs")
    return checked


def rope_axis_assignment(sections: Sequence[int], *, assignment: str = "blocks") -> Tensor:
    """The axis that owns each rotation pair, ``[sum(sections)]`` int64.

    Args:
        sections: how many pairs each axis owns, e.g. Qwen2-VL's ``mrope_section`` (16, 24, 24)
            for (time, height, width).
        assignment: ``"blocks"``: the first ``sections[0]`` pairs to axis 0, the next
            ``sections[1]`` to axis 1, ... (Qwen2-VL). ``"interleaved"``: pair j goes to axis
            ``a = j % n_axes`` (a >= 1) while ``j < n_axes * sections[a]``, every other pair to axis
            0 (Qwen3-VL's ``mrope_interleaved``); each axis must then still own exactly its
            ``sections[a]`` pairs.

    Examples:
        >>> rope_axis_assignment([2, 1, 1])
        tensor([0, 0, 1, 2])
        >>> rope_axis_assignment([3, 2, 2], assignment="interleaved")
        tensor([0, 1, 2, 0, 1, 2, 0])
    """
    sections = _check_sections(sections)
    assignment = check_choice("assignment", assignment, ASSIGNMENTS)
    counts = torch.tensor(sections)
    if assignment == "blocks":
        return torch.repeat_interleave(torch.arange(len(sections)), counts)
    n = len(sections)
    pair = torch.arange(int(counts.sum()))
    owner = torch.zeros_like(pair)
    for axis in range(1, n):
        owner[(pair % n == axis) & (pair < n * sections[axis])] = axis
    if not torch.equal(torch.bincount(owner, minlength=n), counts):
        raise ValueError(f"sections={list(sections)} cannot be interleaved: axis a >= 1 owns the pairs "
                         f"j = a, a + {n}, ... below {n} * sections[a], and among the {int(counts.sum())} pairs "
                         f"that is not sections[a] pairs for every axis (axis 0 needs at least as many as the others)")
    return owner


def _pair_frequencies(owner: Tensor, sections: tuple[int, ...], frequencies: str, base: float) -> Tensor:
    """theta of each pair, float64: the head's ladder, or the k-th rung of its axis's own ladder."""
    if frequencies == "global":
        return frequency_ladder(2 * owner.numel(), base)  # base^(-2j/dim)
    theta = torch.empty(owner.numel(), dtype=torch.float64)
    for axis, pairs in enumerate(sections):
        theta[owner == axis] = frequency_ladder(2 * pairs, base)  # base^(-k/pairs)
    return theta


def apply_rope_nd(x: Tensor, positions: Tensor, *, sections: Sequence[int], base: float = 10000.0,
                  layout: str = "half", assignment: str = "blocks", frequencies: str = "global") -> Tensor:
    r"""Rotate queries or keys ``x [..., seq, dim]`` by coordinates on several axes.

    Args:
        x: queries or keys, e.g. ``[batch, heads, seq, head_dim]``.
        positions: one coordinate per axis, ``[seq, n_axes]`` or ``[batch, seq, n_axes]``
            (integer or real), e.g. (row, column) of image patches, or (time, height, width).
            Transformers' Qwen2-VL ``position_ids [3, batch, seq]`` are ``position_ids.permute(1, 2, 0)``.
        sections: pairs per axis (``n_axes`` entries, summing to ``dim // 2``).
        base: the RoPE base (10000 for language models; Heo et al. use 100 for ViTs).
        layout: ``"half"`` pairs (i, i + dim/2), ``"interleaved"`` pairs (2i, 2i + 1), as in
            `posenc.rope.apply_rope`.
        assignment: ``"blocks"`` or ``"interleaved"``, see `rope_axis_assignment`.
        frequencies: ``"global"`` (pair \(j\) turns at \(\text{base}^{-2j/d}\), \(d\) = ``dim``: M-RoPE)
            or ``"per_axis"`` (the \(k\)-th pair of axis \(a\) turns at \(\text{base}^{-k/n_a}\),
            \(n_a\) = ``sections[a]``: axial RoPE).

    Returns:
        The rotated tensor, same shape and dtype as x (angles in float64, rotation in at least float32).

    Examples:
        >>> # 3 tokens, 2 pairs: pair 0 row, pair 1 column
        >>> x = torch.ones(3, 4)
        >>> rows_cols = torch.tensor([[0, 0], [1, 0], [0, 1]])
        >>> apply_rope_nd(x, rows_cols, sections=[1, 1], frequencies="per_axis")
        tensor([[ 1.0000,  1.0000,  1.0000,  1.0000],
                [-0.3012,  1.0000,  1.3818,  1.0000],
                [ 1.0000, -0.3012,  1.0000,  1.3818]])
    """
    x = check_tensor("x", x, min_ndim=2, floating=True)  # complex is not floating point
    sections = _check_sections(sections)
    if 2 * sum(sections) != x.shape[-1]:
        raise ValueError(f"sections must sum to dim // 2 = {x.shape[-1] // 2} (x has last dimension "
                         f"{x.shape[-1]}), got {list(sections)} (sum {sum(sections)})")
    base = check_float("base", base, positive=True)
    if base == 1.0:
        raise ValueError("base must be > 0 and != 1 (every pair would have the same frequency), got 1.0")
    layout = check_choice("layout", layout, LAYOUTS)
    frequencies = check_choice("frequencies", frequencies, FREQUENCIES)
    owner = rope_axis_assignment(sections, assignment=assignment)
    pos = check_positions_match("positions", check_position_tensor("positions", positions, ndim=(2, 3)), "x", x,
                                coordinates=len(sections))
    return _rotate_nd(x, pos, owner, sections, frequencies=frequencies, base=base, layout=layout)


# --8<-- [start:apply]
def _rotate_nd(x: Tensor, positions: Tensor, owner: Tensor,
               sections: tuple[int, ...], *, frequencies: str, base: float,
               layout: str) -> Tensor:
    """Turn pair j of ``x [..., seq, dim]`` by the coordinate of its axis
    ``owner[j]`` times its theta."""
    pos = positions.to(torch.float64)  # [..., seq, n_axes]
    theta = _pair_frequencies(owner, sections, frequencies, base)
    theta = theta.to(pos.device)  # [dim/2]
    # [..., seq, dim/2]: the coordinate of each pair's axis, times its theta
    angles = pos[..., owner.to(pos.device)] * theta
    return apply_table(x, angles.cos(), angles.sin(), layout)
# --8<-- [end:apply]


def grid_positions(*sizes: int) -> Tensor:
    """The integer coordinates of every cell of a grid, row-major, ``[prod(sizes), len(sizes)]``.

    ``grid_positions(height, width)`` lists (row, column) of image patches in the order a ViT
    flattens them; ``grid_positions(t, h, w)`` the (time, row, column) of video patches.

    Examples:
        >>> grid_positions(2, 3).T
        tensor([[0, 0, 0, 1, 1, 1],
                [0, 1, 2, 0, 1, 2]])
    """
    if not sizes:
        raise ValueError("grid_positions needs at least one size, got none")
    checked = [check_int(f"sizes[{i}]", size, minimum=1, maximum=MAX_GRID_CELLS) for i, size in enumerate(sizes)]
    total = 1
    for size in checked:
        total *= size
    if total > MAX_GRID_CELLS:
        raise ValueError(f"the grid {tuple(checked)} has {total} cells, more than the {MAX_GRID_CELLS} allowed")
    axes = torch.meshgrid(*(torch.arange(size) for size in checked), indexing="ij")
    return torch.stack(axes, dim=-1).reshape(-1, len(checked))


def _check_segment(index: int, segment: object, merge: int) -> tuple[int, int, int] | int:
    if is_integer(segment):
        return check_int(f"segments[{index}]", segment, minimum=1, maximum=MAX_GRID_CELLS)
    if not isinstance(segment, tuple) or len(segment) != 3 or not all(is_integer(v) for v in segment):
        raise TypeError(f"segments[{index}] must be an int (text tokens) or a tuple (t, h, w) of ints "
                        f"(a grid of patches), got {segment!r}")
    t, h, w = (check_int(f"segments[{index}][{i}]", v, minimum=1, maximum=MAX_GRID_CELLS) for i, v in enumerate(segment))
    if h % merge or w % merge:
        raise ValueError(f"segments[{index}] = {segment!r}: h and w must be multiples of "
                         f"spatial_merge_size={merge} (patches are merged {merge} x {merge})")
    if t * (h // merge) * (w // merge) > MAX_GRID_CELLS:
        raise ValueError(f"segments[{index}] = {segment!r} has more than {MAX_GRID_CELLS} tokens")
    return (t, h, w)


def _check_time(segments: list[int | tuple[int, int, int]], tokens_per_second: object,
                second_per_grid_ts: object) -> list[float]:
    """The temporal step of each grid segment: 1 (Qwen2-VL, images), or tokens_per_second * seconds (videos)."""
    grids = [s for s in segments if not isinstance(s, int)]
    videos = sum(1 for g in grids if g[0] > 1)
    if tokens_per_second is None:
        if second_per_grid_ts is not None:
            raise ValueError("second_per_grid_ts needs tokens_per_second (Qwen2.5-VL's vision_config.tokens_per_second)")
        return [1.0] * len(grids)
    rate = check_float("tokens_per_second", tokens_per_second, positive=True, maximum=1e6)
    seconds = [1.0] * videos  # transformers' default: one second per temporal patch
    if second_per_grid_ts is not None:
        if isinstance(second_per_grid_ts, Tensor):
            second_per_grid_ts = second_per_grid_ts.tolist() if second_per_grid_ts.ndim == 1 else second_per_grid_ts
        if isinstance(second_per_grid_ts, (str, bytes)) or not isinstance(second_per_grid_ts, Sequence):
            raise TypeError(f"second_per_grid_ts must be a list of seconds, one per video, "
                            f"got {type(second_per_grid_ts).__name__}")
        if len(second_per_grid_ts) != videos:
            raise ValueError(f"second_per_grid_ts must have one entry per video (a grid with t > 1; segments have "
                             f"{videos}), got {len(second_per_grid_ts)}")
        seconds = [check_float(f"second_per_grid_ts[{i}]", v, minimum=0.0, maximum=1e6)
                   for i, v in enumerate(second_per_grid_ts)]
    steps, video = [], iter(seconds)
    for t, _, _ in grids:
        steps.append(rate * next(video) if t > 1 else 1.0)  # an image (t = 1) has one frame: no step to scale
    return steps


def mrope_positions(segments: Sequence[int | tuple[int, int, int]], *, spatial_merge_size: int = 2,
                    tokens_per_second: float | None = None,
                    second_per_grid_ts: Sequence[float] | Tensor | None = None) -> Tensor:
    """Qwen2-VL's (time, height, width) position ids of a sequence of text and images, ``[3, seq]``.

    Args:
        segments: in order, an int ``n`` for n text tokens, or a tuple ``(t, h, w)`` for an image
            (t = 1) or a video, its grid in patches before merging (transformers' ``image_grid_thw``).
        spatial_merge_size: the vision encoder merges ``m x m`` neighbouring patches into one
            token (2 in Qwen2-VL), so a grid gives ``t * (h/m) * (w/m)`` tokens.
        tokens_per_second: Qwen2.5-VL's time-aligned temporal ids (its ``vision_config.tokens_per_second``):
            frame i of a video gets the temporal id ``s + floor(i * tokens_per_second *
            second_per_grid_ts[v])``, so the temporal ids of every video count absolute time at
            the same rate, whatever its frame rate. None: Qwen2-VL, ``s + i``.
        second_per_grid_ts: with ``tokens_per_second``, the seconds each temporal patch of each video
            covers (``temporal_patch_size / fps``), one entry per video, in order; a video is a grid
            with ``t > 1`` (a video of one temporal patch gets the ids of an image: leave its
            entry out). Default: 1 second each, as transformers.

    A text token gets the same id on all three axes, one more than the token before it. A visual
    block starting at id ``s`` gives its token at (frame i, row r, column c) the ids
    ``(s + i, s + r, s + c)`` (the temporal id time-aligned as above); the text after it continues
    at ``s + max(h, w) / m``, as transformers' ``Qwen2VLModel.get_rope_index`` and
    ``Qwen2_5_VLModel.get_rope_index`` (version 5, ``models/qwen2_5_vl/modeling_qwen2_5_vl.py:876-1034``)
    do. (Earlier versions continue at one past the largest id of the block on any axis; the two
    agree whenever ``t <= max(h, w) / m``, so for every image.) The temporal step is computed in
    float64; transformers multiplies in float32, which can differ when a product should be an
    exact integer but is not representable (e.g. a step of 2/3).

    Examples:
        >>> mrope_positions([2, (1, 4, 6), 1])
        tensor([[0, 1, 2, 2, 2, 2, 2, 2, 5],
                [0, 1, 2, 2, 2, 3, 3, 3, 5],
                [0, 1, 2, 3, 4, 2, 3, 4, 5]])
        >>> mrope_positions([1, (3, 2, 2), 1], tokens_per_second=2,
        ...                 second_per_grid_ts=[1.5])[0]
        tensor([0, 1, 4, 7, 2])
    """
    merge = check_int("spatial_merge_size", spatial_merge_size, minimum=1, maximum=MAX_GRID_CELLS)
    if isinstance(segments, (str, bytes)) or not isinstance(segments, Sequence):
        raise TypeError(f"segments must be a list of ints and (t, h, w) tuples, "
                        f"got {type(segments).__name__}")
    if len(segments) == 0:
        raise ValueError("segments must hold at least one segment, got an empty list")
    checked = [_check_segment(i, segment, merge) for i, segment in enumerate(segments)]
    total = sum(s if isinstance(s, int) else s[0] * (s[1] // merge) * (s[2] // merge) for s in checked)
    if total > MAX_GRID_CELLS:
        raise ValueError(f"segments describe {total} tokens, more than the {MAX_GRID_CELLS} allowed")
    steps = _check_time(checked, tokens_per_second, second_per_grid_ts)
    if any(s[0] * step > MAX_GRID_CELLS for s, step in zip([s for s in checked if not isinstance(s, int)], steps)):
        raise ValueError(f"the temporal ids would pass {MAX_GRID_CELLS} (tokens_per_second x second_per_grid_ts "
                         f"x frames)")
    return _mrope_ids(checked, merge, steps)


# --8<-- [start:mrope-positions]
def _mrope_ids(segments: Sequence[int | tuple[int, int, int]], merge: int,
               steps: Sequence[float]) -> Tensor:
    """The ``[3, seq]`` (time, height, width) ids of text runs (ints) and
    grids ``(t, h, w)``, the temporal id of frame i ``floor(i * step)``
    after the grid's start."""
    blocks, start, step = [], 0, iter(steps)
    for segment in segments:
        if isinstance(segment, int):  # text: one id, repeated on 3 axes
            blocks.append((start + torch.arange(segment)).expand(3, -1))
            start += segment
        else:  # a grid: its (time, row, column) offset by the current start
            t, h, w = segment[0], segment[1] // merge, segment[2] // merge
            ids = grid_positions(t, h, w).T  # [3, t*h*w]: (frame, row, col)
            frames = torch.arange(t, dtype=torch.float64)
            # time-aligned: frame i at floor(i * step)
            frame_ids = torch.floor(frames * next(step)).long()
            blocks.append(
                start + torch.stack((frame_ids[ids[0]], ids[1], ids[2])))
            start += max(h, w)
    return torch.cat(blocks, dim=1)
# --8<-- [end:mrope-positions]
