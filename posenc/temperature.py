r"""Attention temperature: a factor on each query that grows with its position, in steps.

A softmax over \(n\) keys spreads its weight thinner as \(n\) grows: with the logits held fixed, the
largest weight falls roughly like \(1/n\). Scalable-Softmax (Nakanishi, 2025,
https://arxiv.org/abs/2501.19399) multiplies the logits by \(s \log n\) to keep the attention
peaked at any length. Llama 4 applies a stepped form of it to the queries of its layers without
positions (NoPE), and Ministral 3 / Mistral 3 to the queries of every layer:

\[
    \text{factor}(p) = 1 + \beta \log\left(1 + \left\lfloor \frac{p + \text{offset}}{\text{length}} \right\rfloor\right)
\]

with \(\beta\) = ``beta`` and \(p\) the query's 0-based position. The factor is exactly 1 for the
first ``length - offset`` positions, so a model scaled this way behaves as before within its
trained context, and grows by \(\beta \log 2\), \(\beta \log 3\), ... at each further multiple of
``length``.

Where transformers applies it (version 5.23.0):

* Llama 4, ``models/llama4/modeling_llama4.py:358-366`` (``Llama4TextAttention.forward``): only in
  the layers that skip RoPE (``attn_temperature_tuning and not use_rope``), after the (absent)
  rotation and q/k norm, to the queries only, before the cache; ``beta = attn_scale`` (0.1),
  ``length = floor_scale`` (8192), ``offset = 1``; the position is the query's index in the
  cache (``past_seen_tokens + arange``).
* Ministral 3, ``models/ministral3/modeling_ministral3.py:104-106`` (``get_llama_4_attn_scale``)
  and ``:145-149``: in every layer, after RoPE, to the queries only; ``beta =
  rope_parameters['llama_4_scaling_beta']``, ``length =
  rope_parameters['original_max_position_embeddings']``, ``offset = 0``; the position is the
  query's ``position_ids``.

`posenc.configs.query_temperature` (the factor a config declares) evaluates this same
function.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from posenc._checks import MAX_EXACT_POSITION, check_float, check_int, check_tensor, is_integer

__all__ = ["LLAMA4_NOPE", "QueryTemperature", "attention_temperature"]


def _check_positions(positions: object) -> Tensor:
    """Non-negative integer positions: an int n (0 .. n-1) or an integer tensor."""
    if is_integer(positions):
        n = check_int("positions", positions, minimum=0, maximum=1 << 24)
        return torch.arange(n)
    tensor = check_tensor("positions", positions)
    if tensor.is_floating_point() or tensor.is_complex() or tensor.dtype == torch.bool:
        raise TypeError(f"positions must be an integer tensor (0-based positions), got dtype {tensor.dtype}")
    if tensor.numel() and (int(tensor.min()) < 0 or int(tensor.max()) > MAX_EXACT_POSITION):
        raise ValueError(f"positions must be between 0 and {MAX_EXACT_POSITION}, got values from "
                         f"{int(tensor.min())} to {int(tensor.max())}")
    return tensor.long()


# --8<-- [start:temperature]
def _temperature(positions: Tensor, beta: float, length: int,
                 offset: int) -> Tensor:
    """1 + beta * log(1 + floor((p + offset) / length)), float64, for
    integer positions."""
    # an exact integer floor
    steps = torch.div(positions + offset, length, rounding_mode="floor")
    return 1.0 + beta * torch.log1p(steps.to(torch.float64))
# --8<-- [end:temperature]


def attention_temperature(positions: Tensor | int, *, beta: float, length: int, offset: int = 0) -> Tensor:
    r"""The query factor \(1 + \beta \log(1 + \lfloor (p + \text{offset}) / \text{length} \rfloor)\) at each
    position \(p\), \(\beta\) = ``beta``, float64.

    Args:
        positions: 0-based integer positions (any shape), or an int n for the positions 0 .. n-1.
        beta: how fast the factor grows (Llama 4: 0.1; Ministral 3: ``llama_4_scaling_beta``), >= 0.
        length: the step, in positions (Llama 4: 8192; Ministral 3: the original context), >= 1.
        offset: added to the position first (Llama 4: 1; Ministral 3: 0), >= 0.

    Returns:
        One factor per position, float64, the shape of ``positions``.

    Examples:
        >>> attention_temperature(torch.tensor([0, 8190, 8191, 16383, 10**6]),
        ...                       beta=0.1, length=8192, offset=1)
        tensor([1.0000, 1.0000, 1.0693, 1.1099, 1.4812], dtype=torch.float64)
    """
    pos = _check_positions(positions)
    beta = check_float("beta", beta, minimum=0.0, maximum=1e6)
    length = check_int("length", length, minimum=1, maximum=MAX_EXACT_POSITION)
    offset = check_int("offset", offset, minimum=0, maximum=MAX_EXACT_POSITION)
    return _temperature(pos, beta, length, offset)


@dataclass(frozen=True)
class QueryTemperature:
    """An attention temperature as a setting of a layer (`posenc.layer_plan.LayerPlan`).

    Called with positions (any shape, integer) it returns `attention_temperature` of them; the
    model multiplies each query by its factor after the rotation and the q/k norm.

    Attributes:
        beta, length, offset: as `attention_temperature` takes them.

    Examples:
        >>> LLAMA4_NOPE
        QueryTemperature(beta=0.1, length=8192, offset=1)
        >>> QueryTemperature(beta=0.5, length=4)(torch.arange(9)).round(decimals=4)
        tensor([1.0000, 1.0000, 1.0000, 1.0000, 1.3466, 1.3466, 1.3466, 1.3466, 1.5493],
               dtype=torch.float64)
    """

    beta: float
    length: int
    offset: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "beta", check_float("beta", self.beta, minimum=0.0, maximum=1e6))
        object.__setattr__(self, "length", check_int("length", self.length, minimum=1, maximum=MAX_EXACT_POSITION))
        object.__setattr__(self, "offset", check_int("offset", self.offset, minimum=0, maximum=MAX_EXACT_POSITION))

    def __call__(self, positions: Tensor) -> Tensor:
        """The factor of each position, float64 (see `attention_temperature`)."""
        return _temperature(_check_positions(positions), self.beta, self.length, self.offset)


#: Llama 4's NoPE layers: ``attn_scale`` 0.1, ``floor_scale`` 8192, and the +1 of its code.
LLAMA4_NOPE = QueryTemperature(beta=0.1, length=8192, offset=1)
