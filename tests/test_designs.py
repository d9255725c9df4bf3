"""TinyTransformer as today's designs: per-layer spans, sinks, q/k norm, temperature, scaling, offsets.

Each setting is checked against an independent reference (a loop-built mask, a hand-written
attention, the plain model it must reduce to), and cached decoding against the full forward pass
for every design and for drawn plans.
"""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc import KVCache, LayerPlan, TinyTransformer
from posenc.designs import DESIGNS, design_plans
from posenc.extension import relative_offsets
from posenc.layer_hooks import l2_norm
from posenc.temperature import QueryTemperature

VOCAB, DIM, HEADS = 23, 16, 2
ATOL = 2e-5
SPANS = {"rnope-swa": {"window": 3}, "irope": {"chunk": 4}, "rope-sinks": {"window": 3}}


def make(plans: tuple[LayerPlan, ...] | list[LayerPlan], seed: int = 0, dim: int = DIM,
         heads: int = HEADS) -> TinyTransformer:
    torch.manual_seed(seed)
    model = TinyTransformer(VOCAB, dim, heads, len(plans), position="rope", layer_plans=plans)
    with torch.no_grad():  # sinks start at 0: give them values that matter
        for block in model.blocks:
            if block.attention.sinks is not None:
                block.attention.sinks.normal_()
    return model.eval()


def design(name: str, layers: int = 4, seed: int = 0) -> TinyTransformer:
    return make(design_plans(name, layers, **SPANS[name]), seed)


def tokens(batch: int, seq: int, seed: int = 1) -> torch.Tensor:
    return torch.randint(0, VOCAB, (batch, seq), generator=torch.Generator().manual_seed(seed))


def loop_mask(seq: int, *, window: int | None = None, chunk: int | None = None) -> torch.Tensor:
    """Query i sees key j <= i within its window (i - j < w) or its chunk (i // c == j // c), as loops."""
    mask = torch.zeros(seq, seq, dtype=torch.bool)
    for i in range(seq):
        for j in range(i + 1):
            mask[i, j] = (i - j < window) if window is not None else (i // chunk == j // chunk)  # type: ignore[operator]
    return mask


# ---------------------------------------------------------------- each setting against a reference


@pytest.mark.parametrize("span", [{"window": 3}, {"chunk": 4}, {"window": 1}, {"chunk": 1}])
def test_a_span_in_every_layer_is_the_model_given_that_mask(span: dict[str, int]) -> None:
    spanned, plain, ids = make([LayerPlan("rope", **span)] * 2), make([LayerPlan("rope")] * 2), tokens(2, 11)
    with torch.no_grad():
        want = plain(ids, attention_mask=loop_mask(11, **span).expand(2, 11, 11))
        torch.testing.assert_close(spanned(ids), want, rtol=0, atol=1e-6)


def test_spans_are_measured_in_positions() -> None:
    # Llama 4 counts chunks from each row's first real token (transformers' chunked_overlay with
    # left padding): the positions of a left-padded row do the same.
    model, ids = make([LayerPlan("rope", chunk=3)] * 2), tokens(1, 7)
    padded = torch.cat([torch.zeros(1, 2, dtype=torch.long), ids], dim=1)
    mask = torch.tensor([[False, False] + [True] * 7])
    with torch.no_grad():
        alone = model(ids)
        with_padding = model(padded, positions=(mask.cumsum(1) - 1).clamp(min=0), attention_mask=mask)
    torch.testing.assert_close(with_padding[:, 2:], alone, rtol=0, atol=1e-5)


def test_qk_norm_and_temperature_act_as_written() -> None:
    # One layer: the model's attention output equals a hand-written attention on the same weights.
    temperature = QueryTemperature(beta=0.7, length=3, offset=1)
    model = make([LayerPlan("rope", qk_norm=True, temperature=temperature)])
    model = model.double()
    ids = tokens(1, 9)
    with torch.no_grad():
        h = model.blocks[0].attention_norm(model.embedding(ids))
        q, k, v = model.blocks[0].attention.split_heads(h)
        positions = torch.arange(9)
        rope = model.layer_rotary(0)
        assert rope is not None
        q, k = rope.rotate_queries(q, positions), rope.rotate_keys(k, positions)
        q = q / torch.sqrt(q.pow(2).mean(-1, keepdim=True) + 1e-6)
        k = k / torch.sqrt(k.pow(2).mean(-1, keepdim=True) + 1e-6)
        factors = torch.tensor([1 + 0.7 * math.log(1 + (p + 1) // 3) for p in range(9)], dtype=torch.float64)
        q = q * factors[:, None]
        logits = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).masked_fill(~loop_mask(9, window=9), -math.inf)
        attended = torch.softmax(logits, -1) @ v
        want = model.blocks[0].attention.out(attended.transpose(1, 2).reshape(1, 9, DIM))
        x = model.embedding(ids)
        got_x = x + want
        got_x = got_x + model.blocks[0].mlp(model.blocks[0].mlp_norm(got_x))
        want_logits = model.head(model.final_norm(got_x))
        torch.testing.assert_close(model(ids), want_logits, rtol=1e-10, atol=1e-10)


def test_l2_norm_matches_its_formula_in_float64_and_float32_for_half() -> None:
    x = torch.randn(3, 5, 8, dtype=torch.float64)
    want = x / torch.sqrt((x * x).sum(-1, keepdim=True) / 8 + 1e-6)
    torch.testing.assert_close(l2_norm(x), want, rtol=1e-14, atol=1e-14)
    half = x.half()
    torch.testing.assert_close(l2_norm(half).double(), l2_norm(half.float()).half().double(), rtol=0, atol=0)


def test_a_temperature_of_one_or_below_its_step_changes_nothing() -> None:
    ids = tokens(2, 10)
    with torch.no_grad():
        plain = make([LayerPlan("rope"), LayerPlan("none")])(ids)
        flat = make([LayerPlan("rope"), LayerPlan("none", temperature=QueryTemperature(0.0, 2))])(ids)
        late = make([LayerPlan("rope"), LayerPlan("none", temperature=QueryTemperature(5.0, 8, offset=1))])(ids)
    torch.testing.assert_close(flat, plain, rtol=0, atol=0)
    torch.testing.assert_close(late[:, :7], plain[:, :7], rtol=0, atol=0)  # factor 1 below position 7
    assert not torch.allclose(late[:, 7:], plain[:, 7:], atol=1e-3)


def test_sinks_are_a_parameter_of_the_layers_that_have_them() -> None:
    model = design("rope-sinks")
    names = [name for name, _ in model.named_parameters() if name.endswith("sinks")]
    assert names == [f"blocks.{i}.attention.sinks" for i in range(4)]
    assert not [n for n, _ in design("irope").named_parameters() if n.endswith("sinks")]
    torch.manual_seed(0)  # the sinks draw nothing: every other parameter is the plain model's
    plain = TinyTransformer(VOCAB, DIM, HEADS, 4, position="rope")
    torch.manual_seed(0)
    sinked = TinyTransformer(VOCAB, DIM, HEADS, 4, position="rope", layer_plans=[LayerPlan("rope", sinks=True)] * 4)
    shared = plain.state_dict()
    assert all(torch.equal(value, shared[name]) for name, value in sinked.state_dict().items() if name in shared)


def test_per_layer_scaling_builds_its_own_rotation() -> None:
    scaling = {"type": "linear", "factor": 8.0}
    model = make([LayerPlan("rope")] * 5 + [LayerPlan("rope", rope_base=1e6, rope_scaling=scaling)])
    rope = model.layer_rotary(5)
    assert rope is not None and rope.base == 1e6 and rope.scaling == scaling
    assert model.layer_rotary(0) is model.rotary
    torch.testing.assert_close(rope.inv_freq, (1e6 ** -(torch.arange(0, 8, 2, dtype=torch.float64) / 8)) / 8)


def test_rope_logits_from_the_plain_offsets_are_the_rope_model() -> None:
    ids = tokens(2, 9)
    plain = make([LayerPlan("rope"), LayerPlan("none")])
    offsets = make([LayerPlan("rope", pair_offsets=relative_offsets), LayerPlan("none")])
    with torch.no_grad():
        want = plain(ids)
        torch.testing.assert_close(offsets(ids), want, rtol=0, atol=1e-5)
        cache = KVCache()
        stepped = torch.cat([offsets(ids[:, i:i + 1], cache=cache) for i in range(9)], dim=1)
        torch.testing.assert_close(stepped, want, rtol=0, atol=1e-5)
        cache = KVCache(key_positions="in-cache")
        torch.testing.assert_close(torch.cat([offsets(ids[:, i:i + 1], cache=cache) for i in range(9)], dim=1),
                                   want, rtol=0, atol=1e-5)


# ---------------------------------------------------------------- the designs, with a cache


def test_the_designs_are_their_papers_patterns() -> None:
    irope = design_plans("irope", 8, chunk=16)
    assert [p.position for p in irope] == ["rope", "rope", "rope", "none"] * 2
    assert all(p.qk_norm and p.chunk == 16 for p in irope if p.position == "rope")
    assert irope[3].temperature == QueryTemperature(0.1, 16, 1) and irope[3].span is None
    swa = design_plans("rnope-swa", 4, window=8)
    assert [(p.position, p.window) for p in swa] == [("rope", 8)] * 3 + [("none", None)]
    sinks = design_plans("rope-sinks", 4, window=8)
    assert [p.window for p in sinks] == [8, None, 8, None] and all(p.sinks for p in sinks)
    assert set(DESIGNS) == {"rnope-swa", "irope", "rope-sinks"}


@pytest.mark.parametrize("name", sorted(DESIGNS))
def test_each_design_decodes_like_its_full_forward(name: str) -> None:
    model, ids = design(name), tokens(3, 13, 2)
    with torch.no_grad():
        full = model(ids)
        cache = KVCache()
        steps = torch.cat([model(ids[:, i:i + 1], cache=cache) for i in range(13)], dim=1)
        chunked = KVCache()
        parts = torch.cat([model(ids[:, :5], cache=chunked), model(ids[:, 5:6], cache=chunked),
                           model(ids[:, 6:], cache=chunked)], dim=1)
    torch.testing.assert_close(steps, full, rtol=0, atol=ATOL)
    torch.testing.assert_close(parts, full, rtol=0, atol=ATOL)
    # local layers keep only what their next query sees, global ones everything
    for layer, plan in enumerate(model.layer_plans):
        held = cache.keys[layer].shape[-2]
        if plan.window is not None:
            assert held == plan.window - 1
        elif plan.chunk is not None:
            assert held == 13 % plan.chunk
        else:
            assert held == 13 == len(cache)


@pytest.mark.parametrize("name", sorted(DESIGNS))
def test_each_design_generates_like_recomputing(name: str) -> None:
    model, prompt = design(name, seed=3), tokens(2, 4, 3)
    with torch.no_grad():
        expected = prompt
        for _ in range(9):
            expected = torch.cat([expected, model(expected)[:, -1].argmax(-1, keepdim=True)], dim=1)
        assert torch.equal(model.generate(prompt, 9), expected)


@pytest.mark.parametrize("name", sorted(DESIGNS))
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_each_design_survives_a_cast_to_half_precision(name: str, dtype: torch.dtype) -> None:
    model, ids = design(name), tokens(2, 12, 4)
    with torch.no_grad():
        want = model(ids)
        got = model.to(dtype)(ids)
    assert got.dtype == dtype
    torch.testing.assert_close(got.float(), want, rtol=0, atol=0.1 if dtype == torch.bfloat16 else 0.02)


def _plans(draw: st.DrawFn, layers: int) -> list[LayerPlan]:
    plans = []
    for _ in range(layers):
        span = draw(st.sampled_from([{}, {"window": draw(st.integers(1, 5))}, {"chunk": draw(st.integers(1, 5))}]))
        temperature = draw(st.sampled_from([None, QueryTemperature(0.5, 3, offset=1)]))
        plans.append(LayerPlan(draw(st.sampled_from(["rope", "none"])), draw(st.sampled_from([None, 100.0])),
                               temperature=temperature, sinks=draw(st.booleans()), qk_norm=draw(st.booleans()),
                               **span))
    return plans


@settings(max_examples=15, deadline=None)
@given(data=st.data(), layers=st.integers(1, 3), batch=st.integers(1, 3), seq=st.integers(1, 10),
       chunk=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_drawn_plans_decode_in_chunks_like_the_full_forward(data: st.DataObject, layers: int, batch: int, seq: int,
                                                            chunk: int, seed: int) -> None:
    model = make(data.draw(st.builds(lambda: None).flatmap(lambda _: st.composite(_plans)(layers))), seed, dim=8)
    ids = tokens(batch, seq, seed)
    offsets = torch.randint(0, 6, (batch,), generator=torch.Generator().manual_seed(seed))
    positions = offsets[:, None] + torch.arange(seq)
    with torch.no_grad():
        full = model(ids, positions=positions)
        cache = KVCache()
        parts = [model(ids[:, :chunk], positions=positions[:, :chunk], cache=cache)]
        parts += [model(ids[:, i:i + chunk], cache=cache) for i in range(chunk, seq, chunk)]
    torch.testing.assert_close(torch.cat(parts, dim=1), full, rtol=0, atol=ATOL)


def test_a_cache_wide_window_and_layer_spans_together() -> None:
    model, ids = design("rnope-swa"), tokens(2, 12, 5)
    mask = loop_mask(12, window=5)
    with torch.no_grad():
        want = model(ids, attention_mask=mask.expand(2, 12, 12))
        cache = KVCache(window=5)
        got = torch.cat([model(ids[:, i:i + 1], cache=cache) for i in range(12)], dim=1)
    torch.testing.assert_close(got, want, rtol=0, atol=ATOL)


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(("build", "error", "match"), [
    (lambda: LayerPlan("rope", window=2, chunk=2), ValueError, "give one of window and chunk"),
    (lambda: LayerPlan("rope", window=0), ValueError, "window must be an integer >= 1"),
    (lambda: LayerPlan("rope", chunk=2.0), TypeError, "chunk must be an integer"),
    (lambda: LayerPlan("rope", sinks=1), TypeError, "sinks must be a bool"),
    (lambda: LayerPlan("rope", qk_norm="yes"), TypeError, "qk_norm must be a bool"),
    (lambda: LayerPlan("rope", temperature=0.1), TypeError, "temperature must be callable"),
    (lambda: LayerPlan("rope", rope_scaling={"type": "zigzag"}), ValueError, "scaling"),
    (lambda: LayerPlan("rope", rope_scaling=2.0), TypeError, "rope_scaling must be a scaling dict"),
    (lambda: LayerPlan("none", pair_offsets=relative_offsets), ValueError, "pair_offsets needs a layer with RoPE"),
    (lambda: design_plans("irope", 3, chunk=4), ValueError, "num_layers must be >= 4"),
    (lambda: design_plans("irope", 4), ValueError, "needs chunk="),
    (lambda: design_plans("irope", 4, chunk=4, window=2), ValueError, "got window= as well"),
    (lambda: design_plans("swa", 4, window=2), ValueError, "design must be one of"),
    (lambda: TinyTransformer(VOCAB, DIM, HEADS, 1, position="alibi", layer_plans=[LayerPlan("alibi", rope_base=5.0)]),
     ValueError, "need position='rope'"),
])
def test_bad_plans_are_named(build: object, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        build()  # type: ignore[operator]


def test_spans_suit_any_method_but_refuse_what_a_cache_cannot_keep() -> None:
    torch.manual_seed(0)
    alibi = TinyTransformer(VOCAB, DIM, HEADS, 2, position="alibi", layer_plans=[LayerPlan("alibi", window=3)] * 2)
    ids = tokens(1, 8)
    with torch.no_grad():
        cache = KVCache()
        torch.testing.assert_close(torch.cat([alibi(ids[:, i:i + 1], cache=cache) for i in range(8)], 1), alibi(ids),
                                   rtol=0, atol=ATOL)
        with pytest.raises(ValueError, match="key_positions='original'"):
            alibi(ids, cache=KVCache(key_positions="in-cache"))
        cache = KVCache()
        alibi(ids, cache=cache)
        with pytest.raises(ValueError, match="positions go backwards"):
            alibi(ids[:, :2], positions=torch.tensor([[9, 3]]), cache=cache)


@pytest.mark.parametrize("method", ["rerope", "self-extend", "dual-chunk", "string"])
def test_a_plan_of_pair_offsets_is_the_remapped_model_of_the_training_free_study(method: str) -> None:
    # What experiments/_remapped.py does by walking a model's modules, done by its plans: the same
    # weights loaded into a model whose RoPE layers take the method's offsets and query scale.
    from dataclasses import replace

    from posenc.experiments._remapped import REMAPS, remapped

    trained = make([LayerPlan("rope"), LayerPlan("none"), LayerPlan("rope")], seed=6)
    length, train_length = 24, 8
    remap = REMAPS[method]
    offsets, scale = remap.offsets(length, train_length), remap.query_scale(length, train_length)
    plans = [plan if not plan.uses_position else replace(plan, pair_offsets=offsets, temperature=scale)
             for plan in trained.layer_plans]
    planned = make(plans)
    planned.load_state_dict(trained.state_dict())
    ids = tokens(2, length, 7)
    with torch.no_grad():
        want = remapped(trained, method, length, train_length)(ids)
        torch.testing.assert_close(planned(ids), want, rtol=0, atol=1e-4)
        cache = KVCache()  # and decoding with a cache, which the wrapper cannot do
        stepped = torch.cat([planned(ids[:, i:i + 4], cache=cache) for i in range(0, length, 4)], dim=1)
    torch.testing.assert_close(stepped, want, rtol=0, atol=1e-4)
