r"""PaTH's logits with each block's product of transforms in the compact (UT) form.

Yang et al. (arXiv 2505.16381), the efficient algorithm: the product of a block's transforms
\(H_t = I - \beta_t w_t w_t^\top\), \(t = s, \dots, e-1\), is

\[ H_{e-1} \cdots H_s = I - W^\top T B W, \qquad T = (I + \mathrm{tril}_{-1}(B W W^\top))^{-1}, \]

with the block's unit vectors as the rows of \(W\) (\(C \times d\)), \(B = \mathrm{diag}(\beta)\) and
\(\mathrm{tril}_{-1}\) the part strictly below the diagonal, so \(T\) is lower triangular with
ones on its diagonal. Checked at the authors' code (flash-linear-attention, commit bc3b101):
``fla/ops/common/chunk_scaled_dot_kkt.py:77`` keeps \(\beta_i w_i^\top w_j\) for \(i > j\) only,
``fla/ops/utils/solve_tril.py:361-363`` inverts \(I + A\), ``fla/ops/path_attn/parallel.py:39-50``
chains the two; their reference ``fla/ops/path_attn/naive.py:63-76`` builds the same \(T\) by
forward substitution and from it the logits inside a block, the queries carried to the start of
their block, the keys carried to its end and the block's product, and ``naive.py:81-87`` sweeps
the earlier blocks, carrying each query block through one block product at a time.

Why it holds (two transforms: \(H_1 H_0 = I - \beta_0 w_0 w_0^\top - \beta_1 w_1 w_1^\top +
\beta_1 \beta_0 (w_1^\top w_0) w_1 w_0^\top\), and \(T_{10} = -\beta_1 w_1^\top w_0\)); for any run
of consecutive transforms inside a block the product uses the matching diagonal block of \(T\),
since the inverse of a block-triangular matrix has the inverses of its diagonal blocks there.
Hence, for query \(i\) and key \(j < i\) of one block,
\(q_i^\top H_i \cdots H_{j+1} k_j = q_i^\top k_j - \sum_{j < m \le t \le i} (q_i^\top w_t)\,
T_{tm}\, \beta_m (w_m^\top k_j)\): two masked \(C \times C\) products.

Here every block is done at once (batched over the batch, the heads and the blocks); the only
Python loop runs over the gaps between a query block and a key block (one pass per gap, every
pair of blocks that far apart at once), so a training step costs about ``L / block`` passes
where the direct form costs ``L``.
"""

from __future__ import annotations

import torch
from torch import Tensor

from posenc.forgetting import _causal


def compact_logits(q: Tensor, k: Tensor, w: Tensor, beta: Tensor, block: int) -> Tensor:
    """`posenc.path_attention.path_logits` by blocks of ``block`` keys, on checked inputs."""
    dtype = q.dtype if q.dtype in (torch.float32, torch.float64) else torch.float32
    q_len, k_len = q.shape[-2], k.shape[-2]
    if k_len == 0:
        return q.new_zeros((*q.shape[:-1], 0), dtype=dtype)
    block = min(block, k_len)  # a block longer than the keys would only add padding
    n = -(-k_len // block)
    pad = n * block - k_len
    # Queries are the last q_len keys: zero queries stand in front of them (their rows are cut).
    # Padding at the end holds beta = 0 (the identity), after every real token.
    q = torch.nn.functional.pad(q.to(dtype), (0, 0, k_len - q_len, pad))
    k, w = (torch.nn.functional.pad(x.to(dtype), (0, 0, 0, pad)) for x in (k, w))
    beta = torch.nn.functional.pad(beta.to(dtype), (0, pad))
    q, k, w = (x.unflatten(-2, (n, block)) for x in (q, k, w))  # [..., n, C, d]
    y, carry_k, local = _blocks(q, k, w, beta.unflatten(-1, (n, block)))
    q_start = q - (q @ w.transpose(-2, -1)).tril() @ y  # q_i^T H_i ... H_s: to its block's start
    out = local.new_full((*local.shape[:-3], n, n, block, block), float("-inf"))  # [..., a, b, i, j]
    out.diagonal(0, -4, -3).copy_(local.movedim(-3, -1))
    u = q_start
    for gap in range(1, n):  # query block a against key block a - gap, every a at once
        u = u[..., 1:, :, :]  # the query blocks a = gap .. n-1
        blocks = u @ carry_k[..., :n - gap, :, :].transpose(-2, -1)
        out.diagonal(-gap, -4, -3).copy_(blocks.movedim(-3, -1))
        if gap < n - 1:  # through block a - gap: u^T (I - W^T T B W)
            u = u - (u @ w[..., :n - gap, :, :].transpose(-2, -1)) @ y[..., :n - gap, :, :]
    logits = out.transpose(-3, -2).flatten(-4, -3).flatten(-2, -1)[..., :k_len, :k_len]
    return _causal(logits[..., k_len - q_len:, :])


def _blocks(q: Tensor, k: Tensor, w: Tensor, beta: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Per block: ``T B W``, the keys carried to the block's end, and the logits inside it."""
    wb = w * beta[..., None]  # rows beta_t w_t
    size = w.shape[-2]
    # T in float64 whatever the input: I + A is ill-conditioned when a block's vectors are near
    # parallel with beta near 2 (condition numbers in the thousands at 32 keys), and a float32 solve
    # then lost up to 1e-4 of a logit's size; T is only C x C per block.
    w64 = w.to(torch.float64)
    strict = ((w64 * beta[..., None].to(torch.float64)) @ w64.transpose(-2, -1)).tril(-1)  # i > j
    eye = torch.eye(size, dtype=torch.float64, device=w.device)
    t = torch.linalg.solve_triangular(eye + strict, eye.expand_as(strict), upper=False,
                                      unitriangular=True).to(w.dtype)
    y = t @ wb  # T B W: the block's product is I - W^T y
    tk = t @ (wb @ k.transpose(-2, -1)).tril(-1)  # [t, j]: sum over m > j of T_tm beta_m w_m . k_j
    carry_k = k - tk.transpose(-2, -1) @ w  # H_(e-1) ... H_(j+1) k_j
    local = q @ k.transpose(-2, -1) - (q @ w.transpose(-2, -1)).tril() @ tk  # t <= i: H_t acts on q_i
    return y, carry_k, local
