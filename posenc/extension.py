r"""Training-free context extension by re-mapping RoPE's relative positions.

RoPE's attention logit for a query at position i and a key at position j depends on the
positions only through the offset ``i - j``. The methods here leave the trained weights and
RoPE's frequencies alone and change, at inference, which offset each query-key pair is shown, so
that no pair sees an offset larger than the model met in training:

* **ReRoPE** (Su, 2023, https://github.com/bojone/rerope): offsets from ``window`` on are clipped
  to ``window``; Leaky ReRoPE lets them grow again, ``factor`` times slower.
* **Self-Extend** (Jin et al., 2024, "LLM Maybe LongLM", arXiv 2401.01325): keys within a
  neighbour ``window`` keep their offset; farther keys see the offset of grouped positions
  ``i // group_size - j // group_size``, shifted so that the two parts meet.
* **Dual Chunk Attention** (An et al., 2024, "Training-Free Long-Context Scaling of Large
  Language Models", arXiv 2402.17463; used by Qwen2 and Qwen2.5 for long inputs): the sequence is
  cut into chunks; intra-chunk pairs keep their offset, pairs in successive chunks and in distant
  chunks see positions that never exceed ``chunk_size``.
* **STRING** (An et al., 2024, "Why Does the Effective Context Length of LLMs Fall Short?",
  arXiv 2410.18745): offsets from ``shift`` on are shifted down by ``shift - local_window``,
  replacing the rarely trained largest offsets by well-trained ones.

Each method is a function from query and key positions to the matrix of offsets ``r[i, j]`` that
RoPE sees (float64, ``[..., q_len, k_len]``); `rope_logits` computes \(q_i^\top R(\theta\, r_{ij})\, k_j\)
exactly for any such matrix, which is what the authors' code computes piece by piece (two or
three attention matrices, one per kind of pair, combined by a mask or a log-sum-exp merge).
All methods change only keys at or before their query; a key after its query (masked in a causal
model) keeps ``i - j``.
"""

from __future__ import annotations

import torch
from torch import Tensor

from posenc._checks import (
    MAX_SIZE,
    check_broadcast,
    check_choice,
    check_elements,
    check_float,
    check_int,
    check_real_tensor,
    check_tensor,
)

__all__ = ["dual_chunk_offsets", "log_length_scale", "relative_offsets", "rerope_offsets", "rope_logits",
           "self_extend_offsets", "string_offsets"]


#: Largest position, window or chunk accepted (positions index tokens of one sequence).
_MAX_POSITION = MAX_SIZE


def _check_ids(name: str, value: object) -> Tensor:
    """Positions: a 1-D ``[seq]`` or 2-D ``[batch, seq]`` tensor of integers in [0, _MAX_POSITION]."""
    tensor = check_real_tensor(name, value, ndim=(1, 2), finite=True)
    if tensor.is_floating_point() and not bool((tensor == tensor.round()).all()):
        raise ValueError(f"{name} must hold whole-number positions, got a fractional value")
    if tensor.numel() and (float(tensor.min()) < 0 or float(tensor.max()) > _MAX_POSITION):
        raise ValueError(f"{name} must hold positions in [0, {_MAX_POSITION}], got values from "
                         f"{float(tensor.min()):g} to {float(tensor.max()):g}")
    return tensor.to(torch.int64)


def _pairs(query_positions: object, key_positions: object) -> tuple[Tensor, Tensor]:
    """Query positions ``[..., q_len, 1]`` and key positions ``[..., 1, k_len]`` (int64)."""
    i = _check_ids("query_positions", query_positions)
    j = _check_ids("key_positions", key_positions)
    if i.ndim != j.ndim:
        raise ValueError(f"query_positions and key_positions must both be 1-D or both 2-D, got shapes "
                         f"{tuple(i.shape)} and {tuple(j.shape)}")
    if i.ndim == 2 and i.shape[0] != j.shape[0] and 1 not in (i.shape[0], j.shape[0]):
        raise ValueError(f"query_positions and key_positions must have the same batch size (or 1), got "
                         f"shapes {tuple(i.shape)} and {tuple(j.shape)}")
    batch = max(i.shape[0], j.shape[0]) if i.ndim == 2 else 1
    check_elements("the offsets (batch x q_len x k_len)", batch, i.shape[-1], j.shape[-1])
    return i[..., :, None], j.to(i.device)[..., None, :]


def _where_past(i: Tensor, j: Tensor, changed: Tensor) -> Tensor:
    """``changed`` for keys at or before their query, ``i - j`` for keys after it (float64)."""
    return torch.where(j <= i, changed.to(torch.float64), (i - j).to(torch.float64))


# --8<-- [start:offsets]
def relative_offsets(query_positions: Tensor, key_positions: Tensor) -> Tensor:
    """RoPE's own offsets, ``i - j`` for every query-key pair (float64
    ``[..., q_len, k_len]``).

    Examples:
        >>> relative_offsets(torch.arange(3), torch.arange(3))
        tensor([[ 0., -1., -2.],
                [ 1.,  0., -1.],
                [ 2.,  1.,  0.]], dtype=torch.float64)
    """
    i, j = _pairs(query_positions, key_positions)
    return (i - j).to(torch.float64)


def rerope_offsets(query_positions: Tensor, key_positions: Tensor, *,
                   window: int, factor: float | None = None) -> Tensor:
    """ReRoPE: offsets below ``window`` as they are, larger ones clipped to
    ``window``.

    With ``factor`` (Leaky ReRoPE), offsets past the window grow again,
    ``factor`` times slower: ``window + (i - j - window) / factor``. The
    authors' patch computes two attention matrices, one with ordinary RoPE and
    one with the query rotated to ``window`` (to ``i + window (factor - 1)``
    with frequencies divided by ``factor`` for the leaky form) and the key
    unrotated (rotated to j), and picks per pair by ``|i - j| < window``
    (bojone/rerope ``rerope_patch.py:76-88``, ``leaky_rerope_patch.py:73-97``).
    The patch also scales queries by `log_length_scale`
    (``rerope_patch.py:56``), which is not an offset.

    Examples:
        >>> rerope_offsets(torch.arange(5), torch.arange(5), window=2)[4]
        tensor([2., 2., 2., 1., 0.], dtype=torch.float64)
        >>> rerope_offsets(torch.arange(5), torch.arange(5), window=2,
        ...                factor=2.0)[4]
        tensor([3.0000, 2.5000, 2.0000, 1.0000, 0.0000], dtype=torch.float64)
    """
    window = check_int("window", window, minimum=1, maximum=_MAX_POSITION)
    if factor is not None:
        factor = check_float("factor", factor, minimum=1.0)
    i, j = _pairs(query_positions, key_positions)
    r = (i - j).to(torch.float64)
    beyond = window if factor is None else window + (r - window) / factor
    return _where_past(i, j, torch.where(r < window, r, beyond))


def self_extend_offsets(query_positions: Tensor, key_positions: Tensor, *,
                        group_size: int, window: int) -> Tensor:
    """Self-Extend: neighbours (``i - j < window``) keep ``i - j``; farther keys
    see ``i // group_size - j // group_size + window - window / group_size``.

    The shift ``window - window / group_size`` makes the grouped offsets
    continue where the neighbour offsets stop. As in the authors' code
    (datamllab/LongLM ``self_extend_patch/Llama.py:133-135`` for the grouped
    query and key positions, ``:167-180`` for the neighbour mask); the largest
    offset at length n is about
    ``(n - 1) // group_size + window - window / group_size``.

    Examples:
        >>> self_extend_offsets(torch.arange(8), torch.arange(8),
        ...                     group_size=2, window=2)[7]
        tensor([4., 4., 3., 3., 2., 2., 1., 0.], dtype=torch.float64)
    """
    group_size = check_int("group_size", group_size, minimum=1,
                           maximum=_MAX_POSITION)
    window = check_int("window", window, minimum=0, maximum=_MAX_POSITION)
    i, j = _pairs(query_positions, key_positions)
    r = (i - j).to(torch.float64)
    grouped = ((i // group_size - j // group_size).to(torch.float64)
               + (window - window / group_size))
    return _where_past(i, j, torch.where(r < window, r, grouped))


def dual_chunk_offsets(query_positions: Tensor, key_positions: Tensor, *,
                       chunk_size: int, local_window: int) -> Tensor:
    """Dual Chunk Attention: every offset at most ``chunk_size``.

    Positions are cut into chunks of ``c = chunk_size - local_window``; a key
    sits at ``j % c``. A query in the key's chunk sits at ``i % c``
    (intra-chunk: ``i - j``); a query in the next chunk at
    ``min(i % c + c, chunk_size)`` (successive chunks: exact offsets for the
    first ``local_window`` queries of a chunk); a query two or more chunks later
    at ``min(2c - 1, chunk_size)`` (inter-chunk). As in HKUNLP/ChunkLlama
    ``chunkllama_attn_replace.py:47-52`` (the three position tables) and
    ``:161-192`` (which pairs use which); its defaults are ``chunk_size = 3L/4``
    and ``local_window = L/8`` for a model trained on L tokens (``:251-252``;
    ``L/16`` in ``chunkqwen_attn_replace.py:371-372``).

    Examples:
        >>> dual_chunk_offsets(torch.arange(9), torch.arange(9),
        ...                    chunk_size=4, local_window=1)[8]
        tensor([4., 3., 2., 4., 3., 2., 2., 1., 0.], dtype=torch.float64)
    """
    chunk_size = check_int("chunk_size", chunk_size, minimum=2,
                           maximum=_MAX_POSITION)
    local_window = check_int("local_window", local_window, minimum=0,
                             maximum=chunk_size - 1)
    c = chunk_size - local_window
    i, j = _pairs(query_positions, key_positions)
    chunks_apart = i // c - j // c
    successive = torch.clamp(i % c + c, max=chunk_size) - j % c
    inter = min(2 * c - 1, chunk_size) - j % c
    changed = torch.where(chunks_apart == 1, successive, inter)
    return _where_past(i, j, torch.where(chunks_apart <= 0, i - j, changed))


def string_offsets(query_positions: Tensor, key_positions: Tensor, *,
                   shift: int, local_window: int) -> Tensor:
    """STRING: offsets below ``shift`` as they are; larger ones shifted to
    ``i - j - shift + local_window``.

    The authors' code attends with ordinary RoPE within a band of ``shift`` keys
    and with queries moved to ``i - shift + local_window`` to the keys beyond
    it, merging the two by their log-sum-exp (HKUNLP/STRING
    ``string_for_llama.py:323-367`` and ``:413-420``); its flash band includes
    the key at ``i - shift`` in both parts, which this matrix counts once,
    shifted. They suggest ``shift`` of 0.25 to 0.4 times the training length and
    ``local_window`` of 128 to 512 tokens for a 128K model (README).

    Examples:
        >>> string_offsets(torch.arange(6), torch.arange(6), shift=3,
        ...                local_window=1)[5]
        tensor([3., 2., 1., 2., 1., 0.], dtype=torch.float64)
    """
    shift = check_int("shift", shift, minimum=1, maximum=_MAX_POSITION)
    local_window = check_int("local_window", local_window, minimum=0,
                             maximum=shift - 1)
    i, j = _pairs(query_positions, key_positions)
    r = (i - j).to(torch.float64)
    return _where_past(i, j, torch.where(r < shift, r,
                                         r - shift + local_window))
# --8<-- [end:offsets]


def log_length_scale(positions: Tensor, train_length: int) -> Tensor:
    r"""ReRoPE's query scale \(\max(1, \log(p + 1) / \log L)\) at each position \(p\), \(L\) = ``train_length``
    (float64).

    It is 1 within the training length and grows slowly beyond it, sharpening the attention of
    late queries over their many keys (bojone/rerope ``rerope_patch.py:56``). Multiply the
    queries (not the keys) by it.

    Examples:
        >>> log_length_scale(torch.tensor([0, 15, 255]), 16)
        tensor([1., 1., 2.], dtype=torch.float64)
    """
    p = _check_ids("positions", positions).to(torch.float64)
    length = check_int("train_length", train_length, minimum=2, maximum=_MAX_POSITION)
    return torch.clamp(torch.log(p + 1) / torch.log(torch.tensor(float(length), dtype=torch.float64)), min=1.0)


def _check_offsets(offsets: object, shape: tuple[int, ...]) -> Tensor:
    tensor = check_real_tensor("offsets", offsets, min_ndim=2, finite=True)
    check_broadcast("offsets", tensor, shape)
    if tensor.numel() and float(tensor.abs().max()) > _MAX_POSITION:
        raise ValueError(f"offsets must lie within +-{_MAX_POSITION}, got {float(tensor.abs().max()):g}")
    return tensor


def rope_logits(q: Tensor, k: Tensor, inv_freq: Tensor, offsets: Tensor, *, layout: str = "half") -> Tensor:
    r"""\(q_i^\top R(\theta\, r_{ij})\, k_j\) for every query \(i\) and key \(j\): RoPE's logits for any offsets.

    With ``offsets = i - j`` this is ``apply_rope(q) @ apply_rope(k).T`` (no \(1/\sqrt{d}\)).
    Pair \(f\) of the head (features \(f\) and \(f + d/2\) in the ``"half"`` layout, \(2f\) and \(2f + 1\) in
    the ``"interleaved"`` one), with entries \((q_1, q_2)\) and \((k_1, k_2)\), contributes
    \((q_1 k_1 + q_2 k_2) \cos(\theta_f r) + (q_1 k_2 - q_2 k_1) \sin(\theta_f r)\); the angles are computed in float64, the sum in float32 (float64 for float64 inputs).

    Args:
        q: queries ``[..., q_len, d]``, d even (e.g. ``[batch, heads, q_len, head_dim]``).
        k: keys ``[..., k_len, d]``, with q's leading dimensions and dtype.
        inv_freq: the \(d/2\) frequencies \(\theta_f\) (e.g. ``RotaryEmbedding(d).inv_freq``).
        offsets: the offset of each pair, broadcastable to ``[..., q_len, k_len]`` (e.g. the
            ``[q_len, k_len]`` matrix of `rerope_offsets`).
        layout: ``"half"`` or ``"interleaved"`` (see `posenc.rope`).

    Examples:
        >>> from posenc.rope import apply_rope, rope_inverse_frequencies
        >>> q, k = (torch.randn(2, 5, 8, dtype=torch.float64),
        ...         torch.randn(2, 5, 8, dtype=torch.float64))
        >>> plain = rope_logits(q, k, rope_inverse_frequencies(8),
        ...                     relative_offsets(torch.arange(5), torch.arange(5)))
        >>> torch.allclose(plain, apply_rope(q) @ apply_rope(k).transpose(-2, -1))
        True
    """
    q = check_tensor("q", q, min_ndim=2, floating=True)
    k = check_tensor("k", k, min_ndim=2, floating=True)
    if q.is_complex() or k.dtype != q.dtype:
        raise TypeError(f"q and k must be real tensors of one dtype, got {q.dtype} and {k.dtype}")
    d = q.shape[-1]
    if d == 0 or d % 2 or k.shape[-1] != d or k.shape[:-2] != q.shape[:-2]:
        raise ValueError(f"q and k must have the same leading dimensions and an even last dimension, got shapes "
                         f"{tuple(q.shape)} and {tuple(k.shape)}")
    theta = check_real_tensor("inv_freq", inv_freq, ndim=1, finite=True)
    if theta.shape[0] != d // 2:
        raise ValueError(f"inv_freq must hold d / 2 = {d // 2} frequencies, got shape {tuple(theta.shape)}")
    layout = check_choice("layout", layout, ("half", "interleaved"))
    shape = (*q.shape[:-1], k.shape[-2])
    r = _check_offsets(offsets, shape)
    check_elements("the logits (... x q_len x k_len)", *shape)
    dtype = q.dtype if q.dtype in (torch.float32, torch.float64) else torch.float32
    half = d // 2
    qf, kf, r64 = q.to(dtype), k.to(dtype), r.to(device=q.device, dtype=torch.float64)
    logits = torch.zeros(shape, dtype=dtype, device=q.device)
    for f in range(half):
        pair = [f, f + half] if layout == "half" else [2 * f, 2 * f + 1]
        q12, k12 = qf[..., pair], kf[..., pair]  # [..., len, 2]: (x1, x2) of pair f
        k21 = torch.stack((k12[..., 1], -k12[..., 0]), dim=-1)  # (k2, -k1)
        angle = r64 * float(theta[f])  # [..., q_len, k_len], float64
        logits.addcmul_(q12 @ k12.transpose(-2, -1), angle.cos().to(dtype))  # (q1 k1 + q2 k2) cos
        logits.addcmul_(q12 @ k21.transpose(-2, -1), angle.sin().to(dtype))  # (q1 k2 - q2 k1) sin
    return logits.to(q.dtype)
