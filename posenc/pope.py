r"""PoPE: polar coordinate position embeddings, magnitudes from content and angles from position.

Gopalakrishnan, Csordás, Schmidhuber and Mozer, "Decoupling the 'What' and 'Where' With Polar
Coordinate Positional Embeddings" (2025, https://arxiv.org/abs/2509.10534). RoPE turns each pair
of a query's features by its position, but the pair already has an angle of its own, set by
content, so what and where mix in the angle. PoPE gives every one of the \(d\) features a
magnitude from content, \(\mu = \mathrm{softplus}(x_c)\), and an angle from position alone,
\(t\,\theta_c\), with \(d\) frequencies \(\theta_c = \mathrm{base}^{-(c-1)/d}\) (RoPE has
\(d/2\)); a key's angle also gets a learned phase \(\delta_c \in [-2\pi, 0]\) per head, starting
at 0. The score of query t and key s is

\[ a_{ts} = \mathrm{Re}\big[\tilde q_t^{\,H} \tilde k_s\big] / \sqrt{d}
        = \frac{1}{\sqrt{d}} \sum_{c=1}^{d} \mu_{q,c}\, \mu_{k,c} \cos\phi_c, \]

with \(\phi_c = (s - t)\theta_c + \delta_c\), so it depends on position only through \(s - t\). (The formula as two independent
public reimplementations state it; the paper's method section could not be read here, only its
abstract and introduction, arxiv.org/html/2509.10534v1.)

`PolarEmbedding` is a rotation in the model's sense: it maps a query or key of width \(d\) to
the real and imaginary parts of \(\tilde q\) or \(\tilde k\) (width \(2d\)), so that their dot
product is \(\mathrm{Re}[\tilde q^H \tilde k]\). The model's attention divides by
\(\sqrt{2d}\); the queries carry a factor \(\sqrt 2\) so that the logit is \(a_{ts}\) above.
One `PolarEmbedding` serves every layer of a `posenc.model.TinyTransformer` (as its RoPE does),
so the layers share the learned phases; the public reimplementations give each attention layer
its own. Cache: the keys as they leave `PolarEmbedding.rotate_keys` (twice as wide as RoPE's), as RoPE's
keys are cached already rotated. Cost: a softplus and a cosine and sine per feature, and a dot
product of width \(2d\) per logit.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from posenc._checks import (
    MAX_EXACT_POSITION,
    check_float,
    check_position_tensor,
    check_positions_match,
    check_size_int,
    check_tensor,
)

__all__ = ["PolarEmbedding", "pope_frequencies"]


def pope_frequencies(head_dim: int, base: float = 10000.0) -> Tensor:
    r"""PoPE's \(d\) frequencies \(\theta_c = \mathrm{base}^{-(c-1)/d}\), ``[head_dim]`` float64.

    Examples:
        >>> pope_frequencies(4, base=16.0)
        tensor([1.0000, 0.5000, 0.2500, 0.1250], dtype=torch.float64)
    """
    head_dim = check_size_int("head_dim", head_dim)
    base = check_float("base", base, minimum=1.0 + 1e-9, maximum=1e300)
    return base ** (-torch.arange(head_dim, dtype=torch.float64) / head_dim)


class PolarEmbedding(nn.Module):
    r"""PoPE for queries and keys ``[..., heads, seq, head_dim]``: each feature a magnitude and an angle.

    A `posenc.attention.Rotation`: ``rotate_queries`` and ``rotate_keys`` return width
    ``2 * head_dim`` (cosine parts, then sine parts).

    Args:
        head_dim: the width of a query and a key.
        num_heads: heads, each with its own learned key phases ``delta [heads, head_dim]``.
        base: the base of the frequencies (`pope_frequencies`).

    Examples:
        >>> pope = PolarEmbedding(4, num_heads=1)
        >>> q, k = torch.randn(1, 1, 3, 4), torch.randn(1, 1, 3, 4)
        >>> pos = torch.arange(3)
        >>> logits = (pope.rotate_queries(q, pos)
        ...           @ pope.rotate_keys(k, pos).transpose(-2, -1) / 8 ** 0.5)
        >>> shifted = (pope.rotate_queries(q, pos + 5)
        ...            @ pope.rotate_keys(k, pos + 5).transpose(-2, -1) / 8 ** 0.5)
        >>> # position enters only through s - t
        >>> torch.allclose(logits, shifted, atol=1e-5)
        True
    """

    def __init__(self, head_dim: int, num_heads: int = 1, base: float = 10000.0) -> None:
        super().__init__()
        self.head_dim = check_size_int("head_dim", head_dim)
        self.num_heads = check_size_int("num_heads", num_heads)
        self.base = check_float("base", base, minimum=1.0 + 1e-9, maximum=1e300)
        self.delta = nn.Parameter(torch.zeros(self.num_heads, self.head_dim))

    def rotate_queries(self, q: Tensor, positions: Tensor) -> Tensor:
        r"""\(\sqrt 2\,(\mu \cos t\theta,\ \mu \sin t\theta)\) for queries ``q [..., seq, head_dim]``."""
        q = self._check_input("q", q)
        angles = self._angles("q", q, positions)
        return self._turn_queries(q, torch.cos(angles), torch.sin(angles))

    def rotate_keys(self, k: Tensor, positions: Tensor) -> Tensor:
        r"""\((\mu \cos(s\theta + \delta),\ \mu \sin(s\theta + \delta))\) for keys ``k [..., seq, head_dim]``."""
        k = self._check_input("k", k)
        if k.ndim < 3 and self.num_heads > 1:
            raise ValueError(f"k must have a heads axis [..., heads, seq, head_dim] for {self.num_heads} heads, "
                             f"got shape {tuple(k.shape)}")
        return self._turn_keys(k, self._angles("k", k, positions))

    def _turn_queries(self, q: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
        """`rotate_queries` from the cos and sin of the queries' angles (``_table``)."""
        return math.sqrt(2.0) * self._polar(q, cos, sin)

    def _turn_keys(self, k: Tensor, angles: Tensor) -> Tensor:
        """`rotate_keys` from the keys' angles (``_table``), plus each head's learned phase."""
        phase = self.delta.clamp(-2 * math.pi, 0.0)  # [heads, head_dim], the paper's range
        phase = phase[:, None, :] if k.ndim >= 3 else phase  # [heads, 1 (seq), head_dim], or [1, head_dim]
        angles = angles + phase.to(torch.float64 if k.dtype == torch.float64 else torch.float32)
        return self._polar(k, torch.cos(angles), torch.sin(angles))

    def _check_input(self, name: str, x: object) -> Tensor:
        tensor = check_tensor(name, x, min_ndim=2, floating=True)
        if tensor.shape[-1] != self.head_dim:
            raise ValueError(f"{name} must have size {self.head_dim} in its last dimension (the module's head_dim), "
                             f"got shape {tuple(tensor.shape)}")
        if tensor.ndim >= 3 and tensor.shape[-3] not in (1, self.num_heads):
            raise ValueError(f"{name} must have {self.num_heads} heads (the module's num_heads) in dimension -3, "
                             f"got shape {tuple(tensor.shape)}")
        return tensor

    def _angles(self, name: str, x: Tensor, positions: object) -> Tensor:
        """``t * theta`` ``[..., seq, head_dim]`` in float64, cast to at least float32, broadcast over heads."""
        pos = check_positions_match("positions", check_position_tensor("positions", positions), name, x)
        return self._table(pos, x.ndim, x.device, x.dtype)

    def _table(self, positions: Tensor, ndim: int, device: torch.device, dtype: torch.dtype) -> Tensor:
        """The angles of ``positions`` for q or k of ``ndim`` dimensions (the model tabulates once per call)."""
        pos = positions.to(torch.float64)
        if pos.numel() and float(pos.abs().max()) > MAX_EXACT_POSITION:
            raise ValueError(f"positions must be at most {MAX_EXACT_POSITION} in size, got {float(pos.abs().max())}")
        frequencies = pope_frequencies(self.head_dim, self.base).to(pos.device)  # float64 each call: d numbers
        angles = pos[..., None] * frequencies  # [(batch,) seq, d]
        if pos.ndim == 2:  # [batch, seq, d] -> [batch, 1 (heads), seq, d]
            angles = angles[:, None] if ndim >= 4 else angles
        return angles.to(device=device, dtype=torch.float64 if dtype == torch.float64 else torch.float32)

    @staticmethod
    def _polar(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
        magnitude = nn.functional.softplus(x.to(cos.dtype))  # content sets only the magnitude
        out = torch.cat((magnitude * cos, magnitude * sin), dim=-1)
        return out.to(x.dtype if x.dtype in (torch.float32, torch.float64) else torch.float32)
