"""Positions at inference time: KV cache, left padding, packing, sliding windows and sinks."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc import KVCache, TinyTransformer, packed_attention_mask, packed_positions, positions_from_mask
from posenc.methods import METHODS
from posenc.model import POSITION_METHODS
from posenc.rope import RotaryEmbedding, rope_inverse_frequencies

VOCAB, DIM, HEADS = 23, 16, 2
ATOL = 2e-5


def make(method: str, seed: int = 0, layers: int = 2, max_len: int = 64) -> TinyTransformer:
    torch.manual_seed(seed)
    # xPos: max_len=64 puts its fixed centre at 32, so the tests see a centre other than 0
    model = TinyTransformer(VOCAB, DIM, HEADS, layers, position=method,
                            max_len=max_len if method in ("learned", "xpos") else None)
    with torch.no_grad():
        if model.relative_bias is not None:  # make T5's bias large enough to matter
            model.relative_bias.weight.normal_()
        for cope in model.cope:  # CoPE's embeddings start at zero: its term would be 0
            cope.pos_emb.normal_()
    return model.eval()


def tokens(batch: int, seq: int, seed: int = 1) -> torch.Tensor:
    return torch.randint(0, VOCAB, (batch, seq), generator=torch.Generator().manual_seed(seed))


def window_mask(seq: int, window: int, sinks: int) -> torch.Tensor:
    """Query i sees key j if j <= i and (i - j < window or j < sinks), written as loops."""
    mask = torch.zeros(seq, seq, dtype=torch.bool)
    for i in range(seq):
        for j in range(i + 1):
            mask[i, j] = i - j < window or j < sinks
    return mask


# ---------------------------------------------------------------- the helpers


def test_positions_from_mask_matches_a_loop() -> None:
    g = torch.Generator().manual_seed(0)
    mask = torch.rand(6, 9, generator=g) > 0.3
    expected = torch.zeros(6, 9, dtype=torch.long)
    for b in range(6):
        count = 0
        for s in range(9):
            if mask[b, s]:
                expected[b, s] = count
                count += 1
    assert torch.equal(positions_from_mask(mask), expected)


@settings(max_examples=30, deadline=None)
@given(lengths=st.lists(st.integers(1, 6), min_size=1, max_size=5))
def test_packing_restarts_positions_and_blocks_other_documents(lengths: list[int]) -> None:
    positions, mask = packed_positions(lengths), packed_attention_mask(lengths)
    owner = [d for d, n in enumerate(lengths) for _ in range(n)]
    assert positions.tolist() == [p for n in lengths for p in range(n)]
    for i in range(len(owner)):
        for j in range(len(owner)):
            assert bool(mask[i, j]) == (owner[i] == owner[j] and j <= i)


# ---------------------------------------------------------------- the cache


@pytest.mark.parametrize("method", POSITION_METHODS)
@pytest.mark.parametrize("seed", [0, 1])
def test_token_by_token_decoding_equals_the_full_forward(method: str, seed: int) -> None:
    model, ids = make(method, seed), tokens(3, 11, seed)
    with torch.no_grad():
        full = model(ids)
        cache = KVCache()
        steps = [model(ids[:, i:i + 1], cache=cache) for i in range(ids.shape[1])]
    torch.testing.assert_close(torch.cat(steps, dim=1), full, rtol=0, atol=ATOL)
    assert len(cache) == cache.seen == 11 and cache.positions[:, -1].tolist() == [10, 10, 10]


@settings(max_examples=12, deadline=None)
@given(method=st.sampled_from(POSITION_METHODS), heads=st.sampled_from([1, 2, 4]), layers=st.integers(1, 2),
       batch=st.integers(1, 3), seq=st.integers(1, 9), chunk=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_random_small_models_decode_in_chunks_like_the_full_forward(
        method: str, heads: int, layers: int, batch: int, seq: int, chunk: int, seed: int) -> None:
    torch.manual_seed(seed)
    model = TinyTransformer(VOCAB, 8, heads, layers, position=method, max_len=16 if method == "learned" else None).eval()
    with torch.no_grad():
        for cope in model.cope:
            cope.pos_emb.normal_()
    ids = tokens(batch, seq, seed)
    offsets = torch.randint(0, 6, (batch,), generator=torch.Generator().manual_seed(seed))
    positions = offsets[:, None] + torch.arange(seq)
    with torch.no_grad():
        full = model(ids, positions=positions)
        cache = KVCache()
        parts = [model(ids[:, :chunk], positions=positions[:, :chunk], cache=cache)]
        parts += [model(ids[:, i:i + chunk], cache=cache) for i in range(chunk, seq, chunk)]
    torch.testing.assert_close(torch.cat(parts, dim=1), full, rtol=0, atol=ATOL)


@pytest.mark.parametrize("method", POSITION_METHODS)
def test_chunked_prefill_then_decoding_equals_the_full_forward(method: str) -> None:
    model, ids = make(method, 2), tokens(2, 12, 3)
    with torch.no_grad():
        full = model(ids)
        cache = KVCache()
        parts = [model(ids[:, :5], cache=cache), model(ids[:, 5:8], cache=cache),
                 model(ids[:, 8:9], cache=cache), model(ids[:, 9:], cache=cache)]
    torch.testing.assert_close(torch.cat(parts, dim=1), full, rtol=0, atol=ATOL)


@pytest.mark.parametrize("method", POSITION_METHODS)
def test_per_row_offsets_with_the_cache(method: str) -> None:
    model, ids = make(method, 4), tokens(3, 7, 5)
    offsets = torch.tensor([0, 5, 30])
    positions = offsets[:, None] + torch.arange(7)
    with torch.no_grad():
        full = model(ids, positions=positions)
        cache = KVCache()
        first = model(ids[:, :3], positions=positions[:, :3], cache=cache)
        rest = [model(ids[:, i:i + 1], cache=cache) for i in range(3, 7)]  # positions continue per row
        each_row = torch.cat([model(ids[b:b + 1], positions=positions[b:b + 1]) for b in range(3)])
    torch.testing.assert_close(torch.cat([first, *rest], dim=1), full, rtol=0, atol=ATOL)
    torch.testing.assert_close(each_row, full, rtol=0, atol=ATOL)
    assert cache.positions[:, -1].tolist() == (offsets + 6).tolist()


@pytest.mark.parametrize("method", POSITION_METHODS)
def test_left_padded_batch_equals_each_row_alone(method: str) -> None:
    model = make(method, 6)
    rows = [tokens(1, n, 10 + n)[0] for n in (7, 4, 1)]
    width = max(len(r) for r in rows)
    ids = torch.zeros(len(rows), width, dtype=torch.long)
    mask = torch.zeros(len(rows), width, dtype=torch.bool)
    for b, row in enumerate(rows):
        ids[b, width - len(row):] = row
        mask[b, width - len(row):] = True
    with torch.no_grad():
        batched = model(ids, positions=positions_from_mask(mask), attention_mask=mask)
        assert torch.isfinite(batched).all()  # the padding queries see nothing: zeros, not NaN
        for b, row in enumerate(rows):
            alone = model(row[None])
            torch.testing.assert_close(batched[b, width - len(row):], alone[0], rtol=0, atol=ATOL)
        # and generation continues each row as if it were alone
        generated = model.generate(ids, 5, attention_mask=mask)
        for b, row in enumerate(rows):
            assert torch.equal(generated[b, width:], model.generate(row[None], 5)[0, len(row):])


@pytest.mark.parametrize("method", POSITION_METHODS)
def test_packed_row_equals_its_documents_run_separately(method: str) -> None:
    model, lengths = make(method, 7), [5, 3, 6]
    ids = tokens(1, sum(lengths), 8)
    with torch.no_grad():
        packed = model(ids, positions=packed_positions(lengths)[None],
                       attention_mask=packed_attention_mask(lengths)[None])
        start = 0
        for n in lengths:
            alone = model(ids[:, start:start + n])
            torch.testing.assert_close(packed[:, start:start + n], alone, rtol=0, atol=ATOL)
            start += n


@pytest.mark.parametrize("method", POSITION_METHODS)
def test_generation_with_the_cache_equals_recomputing_the_prefix(method: str) -> None:
    model, prompt = make(method, 9), tokens(2, 4, 9)
    with torch.no_grad():
        expected = prompt
        for _ in range(10):
            next_token = model(expected)[:, -1].argmax(-1, keepdim=True)
            expected = torch.cat([expected, next_token], dim=1)
        assert torch.equal(model.generate(prompt, 10), expected)


def test_a_per_layer_plan_decodes_like_its_full_forward() -> None:
    torch.manual_seed(21)
    model = TinyTransformer(VOCAB, DIM, HEADS, 3, position="rope", layer_positions=["rope", "none", "rope"],
                            layer_rope_bases=[100.0, 10000.0, 10000.0]).eval()
    ids = tokens(2, 10, 22)
    with torch.no_grad():
        full = model(ids)
        cache = KVCache()
        stepped = torch.cat([model(ids[:, i:i + 1], cache=cache) for i in range(10)], dim=1)
    torch.testing.assert_close(stepped, full, rtol=0, atol=ATOL)


# ---------------------------------------------------------------- windows and sinks


@pytest.mark.parametrize("method", POSITION_METHODS)
@pytest.mark.parametrize(("window", "sinks"), [(3, 0), (4, 2), (1, 1)])
def test_windowed_cache_equals_a_full_forward_with_the_window_mask(method: str, window: int, sinks: int) -> None:
    model, ids = make(method, 11), tokens(2, 13, 12)
    mask = window_mask(13, window, sinks)
    with torch.no_grad():
        reference = model(ids, attention_mask=mask.expand(2, 13, 13))
        one_call = model(ids, cache=KVCache(window=window, sinks=sinks))
        cache = KVCache(window=window, sinks=sinks)
        if sinks and METHODS[method].place == "content":  # FoX, PaTH: the tokens between sink and query are gone
            with pytest.raises(ValueError, match=r"needs every token between a cached key.*sinks="):
                [model(ids[:, i:i + 1], cache=cache) for i in range(13)]
            torch.testing.assert_close(one_call, reference, rtol=0, atol=ATOL)
            return
        stepped = torch.cat([model(ids[:, i:i + 1], cache=cache) for i in range(13)], dim=1)
    torch.testing.assert_close(one_call, reference, rtol=0, atol=ATOL)
    torch.testing.assert_close(stepped, reference, rtol=0, atol=ATOL)
    # the cache keeps the sinks and what the next token can see, nothing else
    assert cache.order.tolist() == [j for j in range(13) if j < sinks or 13 - j < window]
    assert cache.keys[0].shape[-2] == len(cache)


@pytest.mark.parametrize("method", ["rope", "alibi", "t5", "xpos", "kerple", "fire", "cope"])
def test_in_cache_positions_renumber_the_kept_tokens(method: str) -> None:
    # One layer: its keys depend on the token only, so decoding with positions re-assigned
    # in the cache must equal a fresh forward over the kept tokens at positions 0 .. n-1.
    # (CoPE has no position ids: its gates count only the keys the cache kept.)
    model, ids = make(method, 13, layers=1), tokens(2, 12, 14)
    window, sinks = 3, 2
    cache = KVCache(window=window, sinks=sinks, key_positions="in-cache")
    with torch.no_grad():
        for i in range(12):
            logits = model(ids[:, i:i + 1], cache=cache)
            kept = [j for j in range(i + 1) if j < sinks or i - j < window]
            fresh = model(ids[:, kept])[:, -1:]
            torch.testing.assert_close(logits, fresh, rtol=0, atol=ATOL)
    assert cache.positions[0].tolist() == list(range(len(cache)))


def test_without_sinks_in_cache_positions_change_nothing_for_rope() -> None:
    # Renumbering shifts every kept key and the query by the same amount: RoPE sees only offsets.
    model, ids = make("rope", 15), tokens(2, 14, 16)
    original, in_cache = KVCache(window=4), KVCache(window=4, key_positions="in-cache")
    with torch.no_grad():
        a = torch.cat([model(ids[:, i:i + 1], cache=original) for i in range(14)], dim=1)
        b = torch.cat([model(ids[:, i:i + 1], cache=in_cache) for i in range(14)], dim=1)
    torch.testing.assert_close(a, b, rtol=0, atol=1e-4)
    # after a step the cache keeps the window - 1 keys the next token will see with it
    assert original.positions[0].tolist() == [11, 12, 13] and in_cache.positions[0].tolist() == [0, 1, 2]


def test_generate_with_a_window_equals_recomputing_with_the_window_mask() -> None:
    model, prompt = make("alibi", 17), tokens(1, 5, 17)
    window, sinks = 4, 1
    with torch.no_grad():
        expected = prompt
        for _ in range(8):
            n = expected.shape[1]
            logits = model(expected, attention_mask=window_mask(n, window, sinks)[None])
            expected = torch.cat([expected, logits[:, -1].argmax(-1, keepdim=True)], dim=1)
        assert torch.equal(model.generate(prompt, 8, window=window, sinks=sinks), expected)


# ---------------------------------------------------------------- dynamic NTK under a cache


def rotate_pairs(x: torch.Tensor, position: int, theta: torch.Tensor) -> torch.Tensor:
    """RoPE, half layout, one vector, float64 (RoFormer eq. 34 with GPT-NeoX's pairing)."""
    half = x.shape[-1] // 2
    angle = position * theta.double()
    x1, x2 = x[:half].double(), x[half:].double()
    return torch.cat([x1 * angle.cos() - x2 * angle.sin(), x2 * angle.cos() + x1 * angle.sin()])


def test_dynamic_ntk_keeps_early_keys_rotated_by_the_old_base() -> None:
    model = make("rope", 19, layers=1)
    head = DIM // HEADS
    scaling = {"type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 4}
    model.rotary = RotaryEmbedding(head, scaling=scaling)
    ids = tokens(1, 16, 20)
    cache = KVCache()
    with torch.no_grad():
        for i in range(16):
            model(ids[:, i:i + 1], cache=cache)
        block = model.blocks[0]
        _, raw_keys, _ = block.attention.split_heads(block.attention_norm(model.embedding(ids)))
    m = 9  # cached when the sequence had m + 1 = 10 tokens
    then = rope_inverse_frequencies(head, scaling=scaling, seq_len=m + 1)
    now = rope_inverse_frequencies(head, scaling=scaling, seq_len=16)
    cached = cache.keys[0][0, 0, m].double()
    torch.testing.assert_close(cached, rotate_pairs(raw_keys[0, 0, m], m, then), rtol=0, atol=1e-5)
    assert (cached - rotate_pairs(raw_keys[0, 0, m], m, now)).abs().max() > 1e-3


# ---------------------------------------------------------------- bad input


def test_bad_input_is_a_clear_error() -> None:
    model, other = make("rope"), make("rope")
    cache = KVCache()
    with torch.no_grad():
        model(tokens(2, 3), cache=cache)
        with pytest.raises(ValueError, match="cache was filled by another model"):
            other(tokens(2, 1), cache=cache)
        with pytest.raises(ValueError, match="positions go backwards: row 0 starts at 1"):
            model(tokens(2, 1), positions=torch.tensor([[1], [5]]), cache=cache)
        with pytest.raises(ValueError, match=r"attention_mask must have shape \[batch, k_len\] = \[2, 4\]"):
            model(tokens(2, 1), attention_mask=torch.ones(2, 1, dtype=torch.bool), cache=cache)
        with pytest.raises(ValueError, match="cache holds a batch of 2 rows"):
            model(tokens(3, 1), cache=cache)
    cases = [
        (lambda: model(tokens(1, 3), attention_mask=torch.ones(1, 3)), TypeError, "attention_mask must be a boolean"),
        (lambda: model(tokens(1, 3), attention_mask=torch.ones(1, 4, dtype=torch.bool)), ValueError,
         "attention_mask must have shape"),
        (lambda: model(tokens(1, 3), positions=torch.zeros(1, 3)), TypeError, "positions must be an integer tensor"),
        (lambda: model(tokens(1, 3), positions=torch.zeros(1, 2, dtype=torch.long)), ValueError,
         r"positions must have shape \[batch, seq\]"),
        (lambda: model(tokens(1, 3), positions=torch.tensor([[0, -1, 2]])), ValueError, "positions must be between 0"),
        (lambda: model(tokens(1, 3), cache="cache"), TypeError, "cache must be a posenc.KVCache"),  # type: ignore[arg-type]
        (lambda: model(tokens(1, 3), positions=torch.zeros(1, 3, dtype=torch.long),
                       cache=KVCache(window=2, key_positions="in-cache")), ValueError, "positions cannot be given"),
        (lambda: make("learned", max_len=8)(tokens(1, 3), positions=torch.tensor([[0, 1, 8]])), ValueError,
         "positions must be < max_len=8"),
        (lambda: model(torch.tensor([[0, VOCAB]])), ValueError, r"tokens must be ids in \[0, 23\)"),
        (lambda: KVCache(window=0), ValueError, "window must be an integer >= 1, got 0"),
        (lambda: KVCache(sinks=2), ValueError, "sinks=2 needs a window"),
        (lambda: KVCache(window=2, key_positions="shifted"), ValueError, "key_positions must be one of"),
        (lambda: positions_from_mask(torch.ones(2, 3, dtype=torch.long)), TypeError, "attention_mask must be a boolean"),
        (lambda: packed_positions([3, 0]), ValueError, "document_lengths must be >= 1 each, got 0"),
        (lambda: packed_positions([]), ValueError, "at least one length"),
        (lambda: packed_attention_mask([2.0]), TypeError, "document_lengths must hold integers"),  # type: ignore[list-item]
        (lambda: packed_attention_mask([10**6]), ValueError, "at most 16384 tokens"),
        (lambda: model.generate(tokens(1, 3), -1), ValueError, "max_new_tokens must be an integer >= 0"),
        (lambda: model.generate(tokens(1, 3), 2, attention_mask=torch.ones(1, 2, dtype=torch.bool)), ValueError,
         "attention_mask must have the shape of tokens"),
    ]
    for call, error, match in cases:
        with pytest.raises(error, match=match):
            call()


def test_xpos_far_from_its_centre_is_a_clear_error() -> None:
    # float32 holds zeta_0^(+-|p - c| / 512) only while |p - c| < ~35,000 (XPos's documented limit)
    model = make("xpos")
    with torch.no_grad():
        assert math.isfinite(float(model(tokens(1, 2), positions=torch.tensor([[30000, 30001]])).sum()))
        with pytest.raises(ValueError, match="xPos scale factors outside the torch.float32 range"):
            model(tokens(1, 2), positions=torch.tensor([[10**5, 10**5 + 1]]))


def test_a_huge_continuation_is_refused_not_allocated() -> None:
    model = make("sinusoidal")
    with pytest.raises(ValueError, match="positions must be between 0 and"):
        model(tokens(1, 1), positions=torch.tensor([[2**40]]))
    with torch.no_grad():
        assert math.isfinite(float(model(tokens(1, 1), positions=torch.tensor([[10**5]])).sum()))


# The windows experiment is tested with the other studies, in tests/test_study.py.


# ---------------------------------------------------------------- KVCache's own operations


def test_update_then_commit_by_hand_keeps_what_a_window_allows() -> None:
    # The two operations a model uses, called directly: update each layer, then commit the step.
    from posenc.inference import plan_step

    class Owner:
        pass

    owner, cache = Owner(), KVCache(window=2)
    for step_len in (3, 1):
        step = plan_step(cache, owner=owner, num_layers=2, batch=1, q_len=step_len, positions=None,
                         attention_mask=None, device=torch.device("cpu"))
        for layer in range(2):
            k, v = torch.full((1, 2, step_len, 4), float(layer)), torch.randn(1, 2, step_len, 4)
            k_all, v_all = cache.update(layer, k, v)
            assert k_all.shape[-2] == step.key_positions.shape[1] and torch.equal(k_all[..., -step_len:, :], k)
        cache.commit(step, owner=owner)
        assert len(cache) == 1 and cache.seen == (3 if step_len == 3 else 4)  # the window keeps what comes next
    assert cache.positions.tolist() == [[3]] and cache.next_positions().tolist() == [4]
    assert [float(k.unique()) for k in cache.keys] == [0.0, 1.0]


def test_cache_operations_refuse_bad_input() -> None:
    from posenc.inference import plan_step

    class Owner:
        pass

    cache, owner = KVCache(), Owner()
    step = plan_step(cache, owner=owner, num_layers=1, batch=1, q_len=2, positions=None, attention_mask=None,
                     device=torch.device("cpu"))
    with pytest.raises(ValueError, match="step plans 2 entries but the cache's layers hold"):
        cache.update(0, torch.zeros(1, 2, 1, 4), torch.zeros(1, 2, 1, 4))
        cache.commit(step, owner=owner)
    with pytest.raises(ValueError, match="layer must be an integer <= 1"):
        cache.update(2, torch.zeros(1, 2, 1, 4), torch.zeros(1, 2, 1, 4))
    with pytest.raises(ValueError, match="v must have the batch, heads and entries of k"):
        cache.update(0, torch.zeros(1, 2, 1, 4), torch.zeros(1, 2, 3, 4))
    with pytest.raises(ValueError, match="k must have the batch, heads and head_dim of layer 0"):
        cache.update(0, torch.zeros(1, 3, 1, 4), torch.zeros(1, 3, 1, 4))
    with pytest.raises(TypeError, match="step must be the StepPlan"):
        cache.commit("step", owner=owner)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="owner must be the model"):
        KVCache().commit(step, owner=3)
