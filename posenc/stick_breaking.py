r"""Stick-breaking attention: each key, from the nearest back, takes a share of what is left.

Tan et al., "Scaling Stick-Breaking Attention: An Efficient Implementation and In-depth Study"
(ICLR 2025, https://arxiv.org/abs/2410.17980; first version "Stick-breaking Attention"): for query i and an earlier key j,
\(\beta_{i,j} = \sigma(z_{i,j})\) with \(z_{i,j} = q_i^\top k_j / \sqrt{d}\), and

\[ A_{i,j} = \beta_{i,j} \prod_{j < k < i} (1 - \beta_{i,k}), \]

so the key nearest the query takes its share first and each earlier key a share of what remains:
a recency bias computed from content, with no position encoding. The weights sum to at most 1
(the rest of the stick is not assigned). In log space,
\(\log A_{i,j} = \log\sigma(z_{i,j}) + \sum_{j<k<i} \log\sigma(-z_{i,k})\), which stays finite
where the product of many factors would underflow (the authors' reference:
``stickbreaking_attention/sb_ref.py``, ``logsigmoid`` of the logits and of their negation, summed
over the later keys).

Which keys count is the mask's: here the keys a query may see, in the order they were fed; the
model's causal mask includes the query's own token (the authors' kernel calls this
``attend_current=True``; its default leaves the token out). Cache: nothing beyond the keys and
values; a query's weights depend only on its own logits. Cost: a sigmoid and a running sum per
logit in place of the softmax's exponential and normaliser.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from posenc._checks import check_tensor

__all__ = ["StickBreaking", "stick_breaking_weights"]


def stick_breaking_weights(logits: Tensor) -> Tensor:
    r"""The weights \(A_{i,j} = \sigma(z_{i,j}) \prod_{k > j} (1 - \sigma(z_{i,k}))\) over the keys ``[..., k_len]``.

    The product runs over the later keys of the same row (the last axis, in order); a key with
    logit ``-inf`` (hidden) gets weight 0 and breaks nothing. Computed in log space, in at least
    float32.

    Args:
        logits: ``[..., q_len, k_len]`` (or any ``[..., k_len]``), ``-inf`` for hidden keys.

    Examples:
        >>> # halves, from the nearest back
        >>> stick_breaking_weights(torch.tensor([0.0, 0.0, 0.0]))
        tensor([0.1250, 0.2500, 0.5000])
    """
    return _weights(check_tensor("logits", logits, min_ndim=1, floating=True))


def _weights(logits: Tensor) -> Tensor:
    """`stick_breaking_weights` on the model's own logits (checked where the model takes its input)."""
    dtype = logits.dtype if logits.dtype in (torch.float32, torch.float64) else torch.float32
    z = logits.to(dtype)
    log_take = nn.functional.logsigmoid(z)  # log beta: -inf for a hidden key
    log_leave = nn.functional.logsigmoid(-z)  # log (1 - beta): 0 for a hidden key
    # sum over the keys after j: a reverse cumulative sum, shifted by one (exclusive)
    after = log_leave.flip(-1).cumsum(-1).flip(-1)
    later = torch.cat((after[..., 1:], torch.zeros_like(after[..., :1])), dim=-1)
    return torch.exp(log_take + later).to(logits.dtype)


class StickBreaking(nn.Module):
    """Stick-breaking in place of the softmax, behind the model's ``weighting`` hook (no parameters).

    Examples:
        >>> StickBreaking().weights(torch.tensor([[0.0, float("-inf")]]))
        tensor([[0.5000, 0.0000]])
    """

    def weights(self, logits: Tensor) -> Tensor:
        """`stick_breaking_weights` of the masked logits ``[..., q_len, k_len]``."""
        return stick_breaking_weights(logits)

    def _weights(self, logits: Tensor) -> Tensor:
        """`weights` on the model's own logits."""
        return _weights(logits)
