"""FoX, FoX with RoPE, stick-breaking, PaTH and PoPE inside `TinyTransformer`: decoding with a
cache equals the full run, invariants at the model level (gates of 1 are NoPE, beta of 0 is
NoPE), caches that drop tokens between key and query are refused; and, where the authors'
reference code can be read here (a snapshot of its repository and einops), the outputs compared
with theirs (their code is loaded from the snapshot, never copied)."""

from __future__ import annotations

import importlib.util
import math
import os
import pathlib
import subprocess
import tempfile

import pytest
import torch

from posenc.inference import KVCache
from posenc.model import TinyTransformer

INSIDE = ("fox", "fox_rope", "stick_breaking", "path", "pope")


def _model(position: str, seed: int = 0, **kwargs: object) -> TinyTransformer:
    torch.manual_seed(seed)
    return TinyTransformer(23, dim=16, num_heads=2, num_layers=2, position=position, **kwargs).eval()


@pytest.mark.parametrize("position", INSIDE)
def test_decoding_with_a_cache_equals_the_full_run(position: str) -> None:
    model = _model(position)
    tokens = torch.randint(0, 23, (2, 10), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        full = model(tokens)
        cache = KVCache()
        parts = [model(tokens[:, a:b], cache=cache) for a, b in ((0, 4), (4, 7), (7, 8), (8, 9), (9, 10))]
    torch.testing.assert_close(torch.cat(parts, 1), full, rtol=0, atol=2e-6)


@pytest.mark.parametrize("position", ("fox", "path"))
def test_a_sliding_window_cache_stays_exact(position: str) -> None:
    model = _model(position)
    tokens = torch.randint(0, 23, (1, 9), generator=torch.Generator().manual_seed(2))
    window = 4
    with torch.no_grad():
        cache = KVCache(window=window)
        steps = [model(tokens[:, t:t + 1], cache=cache)[:, 0] for t in range(9)]
        # the same window in full: each query sees its last `window` tokens
        i, j = torch.arange(9)[:, None], torch.arange(9)[None]
        mask = ((j <= i) & (i - j < window))[None]
        full = model(tokens, attention_mask=mask)
    torch.testing.assert_close(torch.stack(steps, 1), full, rtol=0, atol=2e-6)


@pytest.mark.parametrize("position", ("fox", "path"))
def test_a_cache_with_sinks_is_refused(position: str) -> None:
    model = _model(position)
    cache = KVCache(window=2, sinks=1)
    with torch.no_grad():
        for t in range(3):
            model(torch.tensor([[t]]), cache=cache)
        with pytest.raises(ValueError, match="needs every token between a cached key and the query"):
            model(torch.tensor([[3]]), cache=cache)


def _copy_shared(source: TinyTransformer, target: TinyTransformer) -> None:
    state = {name: value for name, value in source.state_dict().items() if name in target.state_dict()}
    target.load_state_dict(state, strict=False)


def test_fox_with_gates_of_one_is_nope() -> None:
    fox, nope = _model("fox"), _model("none", seed=9)
    _copy_shared(fox, nope)
    with torch.no_grad():
        for gate in fox.content:
            gate.proj.weight.zero_()
            gate.proj.bias.fill_(200.0)  # sigmoid(200) = 1 in float64 and float32: log f = 0
    tokens = torch.randint(0, 23, (2, 8), generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        torch.testing.assert_close(fox(tokens), nope(tokens), rtol=0, atol=1e-6)


def test_path_with_beta_zero_is_nope() -> None:
    path, nope = _model("path"), _model("none", seed=9)
    _copy_shared(path, nope)
    with torch.no_grad():
        for module in path.content:
            module.beta_proj.weight.zero_()
            module.beta_proj.bias.fill_(-200.0)  # beta = 2 sigmoid(-200) = 0 to float precision
    tokens = torch.randint(0, 23, (2, 8), generator=torch.Generator().manual_seed(4))
    with torch.no_grad():
        torch.testing.assert_close(path(tokens), nope(tokens), rtol=0, atol=1e-6)


def test_stick_breaking_rows_sum_to_at_most_one_in_the_model() -> None:
    maps = _model("stick_breaking").attention_maps(torch.randint(0, 23, (1, 12)))
    for weights in maps:
        assert bool((weights >= 0).all()) and bool((weights.sum(-1) <= 1 + 1e-6).all())


def test_in_cache_key_positions_are_refused_for_fox() -> None:
    with pytest.raises(ValueError, match="key_positions"):
        _model("fox")(torch.tensor([[1, 2]]), cache=KVCache(key_positions="in-cache"))


def test_training_reaches_every_parameter() -> None:
    for position in INSIDE:
        model = _model(position).train()
        model(torch.randint(0, 23, (2, 6))).sum().backward()
        missing = [name for name, p in model.named_parameters() if p.grad is None]
        assert not missing, f"{position}: no gradient for {missing}"


# --- the authors' reference code, where it can be read here ----------------------------------

# Snapshots of the authors' repositories (owner+name/repo git directories); POSENC_MIRRORS says where.
MIRRORS = pathlib.Path(os.environ.get("POSENC_MIRRORS", "/work/.mirror"))


def _load(repo: str, file: str, name: str) -> object:
    """The authors' file, read from a git snapshot of their repository (github.com/<repo>) into a temporary module."""
    git_dir = MIRRORS / repo.replace("/", "+") / "repo"
    if not git_dir.is_dir():
        pytest.skip(f"no snapshot of github.com/{repo} on this machine ({git_dir}); compared where there is one")
    if name != "sb_ref" and importlib.util.find_spec("einops") is None:
        pytest.skip("the authors' reference imports einops, which is not installed here")
    text = subprocess.run(["git", "--git-dir", str(git_dir), "show", f"HEAD:{file}"], check=True,
                          capture_output=True, text=True).stdout
    path = pathlib.Path(tempfile.mkdtemp()) / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_stick_breaking_equals_the_authors_reference() -> None:
    ref = _load("shawntan/stickbreaking-attention", "stickbreaking_attention/sb_ref.py", "sb_ref")
    torch.manual_seed(5)
    q, k, v = (torch.randn(1, 2, 9, 4, dtype=torch.float64) for _ in range(3))
    n = 9
    # their mask hides the keys after the query (attend_current: the token itself is seen)
    out, rem = ref.stickbreaking(q, k, v, torch.ones(n, n).triu(1).bool(), torch.ones(n, n).tril(-1))
    from posenc.stick_breaking import stick_breaking_weights
    logits = (q @ k.transpose(-1, -2) / 2.0).masked_fill(torch.ones(n, n).triu(1).bool(), -math.inf)
    weights = stick_breaking_weights(logits)
    # their reference takes the logits to float32 (sb_ref.py: logits.float()): equal to its rounding
    torch.testing.assert_close(weights @ v, out, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(1 - weights.sum(-1), rem, rtol=1e-6, atol=1e-6)


def test_fox_equals_the_flash_linear_attention_reference() -> None:
    ref = _load("fla-org/flash-linear-attention", "fla/ops/forgetting_attn/naive.py", "fla_fox")
    from posenc.attention import scaled_dot_product_attention
    from posenc.forgetting import forgetting_bias
    torch.manual_seed(6)
    q, k, v = (torch.randn(1, 7, 2, 4, dtype=torch.float64) for _ in range(3))  # their layout [B, T, H, D]
    gates = torch.rand(1, 7, 2, dtype=torch.float64) * 0.9 + 0.05
    theirs = ref.naive_forgetting_attn(q, k, v, torch.log(gates))
    ours, _ = scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                           bias=forgetting_bias(gates.transpose(1, 2)))
    torch.testing.assert_close(ours.transpose(1, 2), theirs.to(torch.float64), rtol=1e-5, atol=1e-5)


def test_path_equals_the_flash_linear_attention_reference() -> None:
    ref = _load("fla-org/flash-linear-attention", "fla/ops/path_attn/naive.py", "fla_path")
    from posenc.path_attention import path_logits
    torch.manual_seed(7)
    b, t, h, d = 1, 10, 2, 4
    q, k, v = (torch.randn(b, t, h, d, dtype=torch.float64) for _ in range(3))
    w = torch.nn.functional.normalize(torch.randn(b, t, h, d, dtype=torch.float64), dim=-1)
    beta = 2 * torch.rand(b, t, h, dtype=torch.float64)
    theirs = ref.naive_path_attn(q, k, v, w, beta, torch.zeros(b, t, h), scale=d ** -0.5, chunk_size=4)
    logits = path_logits(q.transpose(1, 2), k.transpose(1, 2), w.transpose(1, 2), beta.transpose(1, 2))
    ours = torch.softmax(logits * d ** -0.5, dim=-1) @ v.transpose(1, 2)
    torch.testing.assert_close(ours.transpose(1, 2), theirs.to(torch.float64), rtol=1e-5, atol=1e-5)
