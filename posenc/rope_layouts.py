"""The two layouts of RoPE's pairs, their many names, and converting a checkpoint between them.

* ``"half"`` pairs dimension i with dimension ``i + d/2`` (GPT-NeoX, Hugging Face's ``rotate_half``);
* ``"interleaved"`` pairs dimensions ``2i`` and ``2i + 1`` (the RoFormer paper, Meta's LLaMA code).

A checkpoint trained in one layout runs in the other once the rows of its q and k projections are
permuted within each head (`convert_rope_layout`); `posenc.rope` re-exports these names.
"""

from __future__ import annotations

import torch
from torch import Tensor

from posenc._checks import MAX_ELEMENTS, check_choice, check_int, check_tensor
from posenc._rotary import LAYOUTS
from posenc.rope_scaling import _check_dim, _check_rotary_dim

__all__ = ["LAYOUTS", "LAYOUT_ALIASES", "convert_rope_layout", "layout_permutation"]


# Every name under which the two layouts appear in papers, code and engines.
LAYOUT_ALIASES: dict[str, str] = {
    "half": "half",
    "rotate_half (Hugging Face transformers)": "half",
    "GPT-NeoX": "half",
    "is_neox_style=True (vLLM)": "half",
    "interleaved=False (flash-attn)": "half",
    "LLAMA_ROPE_TYPE_NEOX (llama.cpp)": "half",
    "traditional=False (MLX)": "half",
    "interleaved": "interleaved",
    "rotate_every_two (GPT-J, Mesh Transformer JAX)": "interleaved",
    "complex form (RoFormer's 2-D derivation)": "interleaved",
    "Meta's original LLaMA code (view_as_complex)": "interleaved",
    "is_neox_style=False (vLLM)": "interleaved",
    "interleaved=True (flash-attn)": "interleaved",
    "LLAMA_ROPE_TYPE_NORM (llama.cpp)": "interleaved",
    "traditional=True (MLX)": "interleaved",
}
# Each engine's own spelling, with where it was read, is posenc.engines.layout_flags.


def layout_permutation(dim: int, *, heads: int = 1, rotary_dim: int | None = None) -> Tensor:
    """Index ``perm`` with ``x_interleaved = x_half[..., perm]``: half-layout pair (i, i + d/2)
    moves to dimensions (2i, 2i + 1). ``perm.argsort()`` maps back.

    Args:
        dim: the head dimension.
        heads: for ``heads > 1`` the index covers ``heads * dim`` features, head after head (the rows
            of a q or k projection): each head is permuted within itself.
        rotary_dim: only the first ``rotary_dim`` features of each head are rotated (so permuted);
            the others keep their place. None: all of them.

    Examples:
        >>> layout_permutation(8)
        tensor([0, 4, 1, 5, 2, 6, 3, 7])
        >>> layout_permutation(4, heads=2)
        tensor([0, 2, 1, 3, 4, 6, 5, 7])
    """
    dim = _check_dim("dim", dim)
    heads = _check_heads(heads)
    width = dim if rotary_dim is None else _check_rotary_dim(rotary_dim, dim)
    if heads * dim > MAX_ELEMENTS:
        raise ValueError(f"heads * dim must be <= {MAX_ELEMENTS} (the length of the index), "
                         f"got heads={heads}, dim={dim}")
    half = width // 2
    one = torch.arange(dim)
    one[:width] = torch.stack((torch.arange(half), torch.arange(half, width)), dim=-1).flatten()
    return (one + dim * torch.arange(heads)[:, None]).flatten()


def _check_heads(heads: object) -> int:
    return check_int("heads", heads, minimum=1, maximum=2**20)


def convert_rope_layout(weight: Tensor, head_dim: int, *, source: str = "interleaved", target: str = "half",
                        rotary_dim: int | None = None) -> Tensor:
    """Reorder the rows of a q or k projection (or its bias) from one pair layout to the other.

    Under grouped-query attention W_q has ``num_attention_heads * head_dim`` rows and W_k
    ``num_key_value_heads * head_dim``: call this once for each; the number of heads is read from
    the row count. With the converted weights, RoPE in the ``target`` layout gives the same
    attention scores as RoPE in the ``source`` layout with the original weights.

    Args:
        weight: ``[heads * head_dim, in_features]`` or a bias ``[heads * head_dim]``.
        head_dim: the head dimension.
        source: the layout the checkpoint was trained with, ``"half"`` or ``"interleaved"``.
        target: the layout of the engine that will run it.
        rotary_dim: partial rotary width (see `layout_permutation`).

    Returns:
        A new tensor with permuted rows.

    Examples:
        >>> w = torch.arange(8.0)[:, None]               # 2 heads of 4 rows
        >>> convert_rope_layout(w, 4).flatten()
        tensor([0., 2., 1., 3., 4., 6., 5., 7.])
    """
    tensor = check_tensor("weight", weight, ndim=(1, 2))
    head_dim = _check_dim("head_dim", head_dim)
    source = check_choice("source", source, LAYOUTS)
    target = check_choice("target", target, LAYOUTS)
    rows = tensor.shape[0]
    if rows == 0 or rows % head_dim:
        raise ValueError(f"weight must have a positive multiple of head_dim ({head_dim}) rows, "
                         f"got shape {tuple(tensor.shape)}")
    width = head_dim if rotary_dim is None else _check_rotary_dim(rotary_dim, head_dim)
    return _convert(tensor, head_dim, source, target, width)


# --8<-- [start:convert]
def _convert(weight: Tensor, head_dim: int, source: str, target: str,
             rotary_dim: int) -> Tensor:
    """The rows of ``weight`` (whole heads of ``head_dim`` rows, head after
    head) in the target layout."""
    perm = layout_permutation(head_dim, heads=weight.shape[0] // head_dim,
                              rotary_dim=rotary_dim)
    if source == target:
        return weight.clone()
    # half -> interleaved: new row j is old row perm[j]; the other way, the
    # inverse permutation
    return (weight[perm.to(weight.device)] if source == "half"
            else weight[perm.argsort().to(weight.device)])
# --8<-- [end:convert]
