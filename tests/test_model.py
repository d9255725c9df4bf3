"""PositionalEmbedding and TinyTransformer: shapes, parameter counts, causality, wiring, bad input."""

from __future__ import annotations

import copy
import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc import (
    CoPE,
    FireBias,
    KerpleBias,
    KVCache,
    LearnedPositionalEmbedding,
    PositionalEmbedding,
    RotaryEmbedding,
    SinusoidalPositionalEncoding,
    T5RelativeBias,
    TinyTransformer,
    XPos,
    alibi_bias,
)
from posenc.model import COPE_MAX_POSITION, POSITION_METHODS

VOCAB, DIM, HEADS, LAYERS, MAX_LEN = 50, 16, 2, 2, 12


def reference_sinusoidal(length: int, dim: int) -> torch.Tensor:
    """Vaswani et al. (2017), section 3.5, written as loops in float64."""
    table = torch.zeros(length, dim, dtype=torch.float64)
    for pos in range(length):
        for i in range(dim // 2):
            angle = pos / 10000 ** (2 * i / dim)
            table[pos, 2 * i] = math.sin(angle)
            table[pos, 2 * i + 1] = math.cos(angle)
    return table


def expected_parameters(method: str) -> int:
    """Count by hand: embeddings, per block 2 LayerNorms + qkv + out + MLP, final norm, head."""
    block = 2 * (2 * DIM) + 3 * DIM * DIM + DIM * DIM + (DIM * 4 * DIM + 4 * DIM) + (4 * DIM * DIM + DIM)
    total = VOCAB * DIM + LAYERS * block + 2 * DIM + DIM * VOCAB
    if method == "learned":
        total += MAX_LEN * DIM
    if method == "t5":
        total += 32 * HEADS  # one scalar per (bucket, head), shared by the layers
    if method == "kerple":
        total += 2 * HEADS  # r1 and r2 per head, shared by the layers
    if method == "fire":
        hidden = 32  # MLP 1 -> 32 -> heads, plus c and the threshold's multiplier, shared
        total += (hidden + hidden) + (hidden * HEADS + HEADS) + 2
    if method == "cope":
        total += LAYERS * (DIM // HEADS) * COPE_MAX_POSITION  # one embedding table per layer
    if method in ("fox", "fox_rope"):
        total += LAYERS * (DIM * HEADS + HEADS)  # one forget gate per head: w_f and b_f, per layer
    if method == "path":
        total += LAYERS * (DIM * DIM + DIM * HEADS + HEADS)  # w per head (no bias), beta per head, per layer
    if method == "pope":
        total += HEADS * (DIM // HEADS)  # a learned key phase per head and frequency, shared by the layers
    return total


def make(method: str) -> TinyTransformer:
    torch.manual_seed(0)
    return TinyTransformer(VOCAB, DIM, HEADS, LAYERS, position=method, max_len=MAX_LEN if method == "learned" else None)


# ---------------------------------------------------------------- PositionalEmbedding


def test_parameter_counts_of_the_two_embedding_kinds() -> None:
    learned = PositionalEmbedding(100, 8, kind="learned", max_len=20)
    sinusoidal = PositionalEmbedding(100, 8, kind="sinusoidal", max_len=20)
    assert sum(p.numel() for p in learned.parameters()) == 100 * 8 + 20 * 8
    assert sum(p.numel() for p in sinusoidal.parameters()) == 100 * 8
    assert sinusoidal.position.table.shape == (20, 8)  # the table: stored, never trained
    assert not sinusoidal.position.table.requires_grad


def test_sinusoidal_embedding_is_token_plus_the_paper_table() -> None:
    layer = PositionalEmbedding(VOCAB, DIM, kind="sinusoidal")
    tokens = torch.tensor([[3, 1, 4, 1, 5, 9, 2]])
    expected = layer.token.weight.detach().double()[tokens[0]] + reference_sinusoidal(7, DIM)
    torch.testing.assert_close(layer(tokens)[0].double(), expected, atol=1e-6, rtol=0)
    assert isinstance(layer.position, SinusoidalPositionalEncoding)


def test_learned_embedding_is_token_plus_table_rows_with_offset() -> None:
    layer = PositionalEmbedding(VOCAB, DIM, kind="learned", max_len=10)
    assert isinstance(layer.position, LearnedPositionalEmbedding)
    tokens = torch.tensor([[7, 7, 8]])
    out = layer(tokens, offset=4)
    table = layer.position.table.detach()
    token_rows = layer.token.weight.detach()
    for p in range(3):
        torch.testing.assert_close(out[0, p], token_rows[tokens[0, p]] + table[4 + p])


def test_same_token_at_two_positions_gets_two_vectors() -> None:
    for kind in ("sinusoidal", "learned"):
        out = PositionalEmbedding(VOCAB, DIM, kind=kind, max_len=4)(torch.tensor([[5, 5]]))
        assert not torch.allclose(out[0, 0], out[0, 1])


def test_learned_embedding_refuses_positions_past_max_len() -> None:
    layer = PositionalEmbedding(VOCAB, DIM, kind="learned", max_len=4)
    with pytest.raises(ValueError, match="max_len=4"):
        layer(torch.zeros(1, 5, dtype=torch.long))


def test_sinusoidal_embedding_goes_past_its_precomputed_rows() -> None:
    layer = PositionalEmbedding(VOCAB, DIM, kind="sinusoidal", max_len=4)
    tokens = torch.zeros(1, 9, dtype=torch.long)
    expected = layer.token.weight.detach().double()[0] + reference_sinusoidal(9, DIM)
    torch.testing.assert_close(layer(tokens)[0].double(), expected, atol=1e-6, rtol=0)


def test_dropout_acts_only_in_training_mode() -> None:
    layer = PositionalEmbedding(VOCAB, DIM, kind="sinusoidal", dropout=0.5)
    tokens = torch.tensor([[1, 2, 3, 4]])
    layer.eval()
    clean = layer(tokens)
    layer.train()
    torch.manual_seed(0)
    noisy = layer(tokens)
    zeroed = noisy == 0
    assert zeroed.any()
    torch.testing.assert_close(noisy[~zeroed], 2 * clean[~zeroed])  # inverted dropout scales by 1/(1-p)


# ---------------------------------------------------------------- TinyTransformer


@pytest.mark.parametrize("method", POSITION_METHODS)
def test_parameter_count_matches_a_hand_count(method: str) -> None:
    assert sum(p.numel() for p in make(method).parameters()) == expected_parameters(method)


@pytest.mark.parametrize("method", POSITION_METHODS)
def test_logits_shape_and_gradients_reach_every_parameter(method: str) -> None:
    model = make(method)
    tokens = torch.randint(0, VOCAB, (3, 9))
    logits = model(tokens)
    assert logits.shape == (3, 9, VOCAB)
    logits.logsumexp(-1).sum().backward()
    missing = [name for name, p in model.named_parameters() if p.grad is None or not torch.isfinite(p.grad).all()]
    assert not missing


@pytest.mark.parametrize("method", POSITION_METHODS)
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_causal_a_later_token_never_changes_earlier_logits(method: str, data: st.DataObject) -> None:
    model = make(method).eval()
    length = data.draw(st.integers(2, MAX_LEN))
    cut = data.draw(st.integers(1, length - 1))
    first = torch.tensor([data.draw(st.lists(st.integers(0, VOCAB - 1), min_size=length, max_size=length))])
    second = first.clone()
    second[0, cut:] = (second[0, cut:] + 1) % VOCAB
    with torch.no_grad():
        a, b = model(first), model(second)
    torch.testing.assert_close(a[:, :cut], b[:, :cut], atol=1e-5, rtol=1e-5)
    assert not torch.allclose(a[:, cut], b[:, cut])


@pytest.mark.parametrize("method", POSITION_METHODS)
def test_scrambled_sentence_gives_different_outputs(method: str) -> None:
    # The last token is the same in both orders, so the last position sees the same four tokens
    # (and its own token on the residual path): only order information can separate them.
    model = make(method).eval()
    sentence = torch.tensor([[10, 20, 30, 40]])
    scrambled = sentence[:, [2, 0, 1, 3]]
    with torch.no_grad():
        a, b = model(sentence), model(scrambled)
    assert not torch.allclose(a[0, 3], b[0, 3], atol=1e-4)


def test_one_layer_without_positions_cannot_separate_orders_ending_alike() -> None:
    # The control of the scrambled-sentence check: one causal layer, no position method, and
    # two orders with the same last token. The last query attends to the same set of keys and
    # values, so its logits agree up to rounding (with two layers the mask separates them).
    torch.manual_seed(0)
    model = TinyTransformer(VOCAB, DIM, HEADS, 1, position="none").eval()
    sentence = torch.tensor([[10, 20, 30, 40]])
    with torch.no_grad():
        a, b = model(sentence), model(sentence[:, [2, 0, 1, 3]])
    torch.testing.assert_close(a[0, 3], b[0, 3], atol=1e-5, rtol=1e-5)
    assert not torch.allclose(a[0, 1], b[0, 1], atol=1e-4)  # earlier positions see different prefixes


def test_first_position_sees_only_its_own_token_without_positions() -> None:
    # No position method and a causal mask: position 0 attends to itself only, so its logits
    # depend on its token alone, whatever follows.
    model = make("none").eval()
    with torch.no_grad():
        a = model(torch.tensor([[7, 1, 2]]))[0, 0]
        b = model(torch.tensor([[7, 9, 9, 9, 9]]))[0, 0]
    torch.testing.assert_close(a, b)


def test_each_method_uses_the_posenc_implementation() -> None:
    assert isinstance(make("sinusoidal").embedding.position, SinusoidalPositionalEncoding)  # type: ignore[union-attr]
    assert isinstance(make("learned").embedding.position, LearnedPositionalEmbedding)  # type: ignore[union-attr]
    rope = make("rope")
    assert isinstance(rope.rotary, RotaryEmbedding) and rope.rotary.dim == DIM // HEADS
    assert rope.attention_bias(5) is None
    alibi = make("alibi")
    torch.testing.assert_close(alibi.attention_bias(6), alibi_bias(HEADS, 6))
    t5 = make("t5")
    assert isinstance(t5.relative_bias, T5RelativeBias)
    torch.testing.assert_close(t5.attention_bias(6), t5.relative_bias(6, 6))
    for method in ("none", "sinusoidal", "learned"):
        model = make(method)
        assert model.rotary is None and model.attention_bias(4) is None
    kerple, fire = make("kerple"), make("fire")
    assert isinstance(kerple.learned_bias, KerpleBias) and isinstance(fire.learned_bias, FireBias)
    for model in (kerple, fire):
        assert model.learned_bias is not None
        torch.testing.assert_close(model.attention_bias(6), model.learned_bias(6, 6))
    xpos = make("xpos")
    assert isinstance(xpos.xpos, XPos) and xpos.xpos.dim == DIM // HEADS and xpos.attention_bias(4) is None
    cope = make("cope")
    assert len(cope.cope) == LAYERS and all(isinstance(c, CoPE) for c in cope.cope)


def test_attention_sees_the_bias_that_the_model_builds() -> None:
    # Copy every shared weight into a model with no position method: with the T5 bias at zero
    # (or any constant) the two must agree, and a non-constant bias must make them differ.
    torch.manual_seed(0)
    t5 = TinyTransformer(VOCAB, DIM, HEADS, LAYERS, position="t5")
    torch.manual_seed(0)
    none = TinyTransformer(VOCAB, DIM, HEADS, LAYERS, position="none")
    state = {k: v for k, v in t5.state_dict().items() if not k.startswith("relative_bias")}
    none.load_state_dict(state)
    tokens = torch.randint(0, VOCAB, (2, 8))
    with torch.no_grad():
        for p in t5.relative_bias.parameters():  # type: ignore[union-attr]
            p.zero_()
        torch.testing.assert_close(t5(tokens), none(tokens))
        for p in t5.relative_bias.parameters():  # type: ignore[union-attr]
            p.fill_(0.5)
        torch.testing.assert_close(t5(tokens), none(tokens))  # a constant bias cancels in softmax
        next(iter(t5.relative_bias.parameters())).normal_()  # type: ignore[union-attr]
        assert not torch.allclose(t5(tokens), none(tokens))


def test_learned_model_refuses_inputs_longer_than_max_len() -> None:
    model = make("learned")
    with pytest.raises(ValueError, match=f"max_len={MAX_LEN}"):
        model(torch.zeros(1, MAX_LEN + 1, dtype=torch.long))


@pytest.mark.parametrize("method", ["none", "sinusoidal", "rope", "alibi", "t5", "xpos", "kerple", "fire", "cope"])
def test_other_methods_run_past_the_training_length(method: str) -> None:
    assert make(method)(torch.zeros(1, 4 * MAX_LEN, dtype=torch.long)).shape == (1, 4 * MAX_LEN, VOCAB)


def test_same_seed_same_model() -> None:
    a, b = make("alibi"), make("alibi")
    assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("build", "error", "match"),
    [
        (lambda: PositionalEmbedding(10, 8, kind="rope"), ValueError, "kind must be one of 'sinusoidal', 'learned', got 'rope'"),
        (lambda: PositionalEmbedding(10, 8, kind="learned"), ValueError, "max_len must be given"),
        (lambda: PositionalEmbedding(10, 8, kind="learned", max_len=0), ValueError, "max_len must be an integer >= 1, got 0"),
        (lambda: PositionalEmbedding(0, 8, kind="sinusoidal"), ValueError, "vocab_size must be an integer >= 1, got 0"),
        (lambda: PositionalEmbedding(10, 7, kind="sinusoidal"), ValueError, "dim must be a positive even integer, got 7"),
        (lambda: PositionalEmbedding(10, 8, kind="sinusoidal", dropout=1.5), ValueError, "dropout must be <= 1.0, got 1.5"),
        (lambda: TinyTransformer(10, 8, 2, 1, position="nope"), ValueError, "position must be one of 'none'.*got 'nope'"),
        (lambda: TinyTransformer(10, 6, 2, 1, position="xpos"), ValueError, "position='xpos' needs an even head width.*got 3"),
        (lambda: TinyTransformer(10, 8, 2, 1, position="rope", max_len=0), ValueError, "max_len must be an integer >= 1, got 0"),
        (lambda: TinyTransformer(10, 8, 2, 1, position="cope", max_len=2.5), TypeError, "max_len must be an integer"),
        (lambda: TinyTransformer(10, 8, 2, 1, position="alibi", randomized_max_len=32), ValueError,
         "randomized_max_len needs position='sinusoidal', 'learned', 'rope' or 'pope'.*got position='alibi'"),
        (lambda: TinyTransformer(10, 8, 2, 1, position="learned", max_len=16, randomized_max_len=32), ValueError,
         "randomized_max_len=32 needs a learned table of at least as many rows, got max_len=16"),
        (lambda: TinyTransformer(10, 8, 2, 1, position="rope", randomized_max_len=0), ValueError,
         "randomized_max_len must be an integer >= 1, got 0"),
        (lambda: TinyTransformer(10, 8, 2, 1, position="rope", randomized_max_len=True), TypeError,
         "randomized_max_len must be an integer"),
        (lambda: TinyTransformer(10, 8, 2, 1, position="rope", randomized_max_len=4)(torch.zeros(1, 5, dtype=torch.long)),
         ValueError, "tokens has 5 positions but randomized_max_len=4"),
        (lambda: TinyTransformer(10, 8, 3, 1, position="none"), ValueError, "dim must be divisible by num_heads, got dim=8, num_heads=3"),
        (lambda: TinyTransformer(10, 6, 2, 1, position="rope"), ValueError, "position='rope' needs an even head width.*got 3"),
        (lambda: TinyTransformer(10, 8, 2, 0, position="none"), ValueError, "num_layers must be an integer >= 1, got 0"),
        (lambda: TinyTransformer(10, 8, 2, 1, position="learned"), ValueError, "max_len must be given"),
        (lambda: TinyTransformer(10, 8, 2, 1, position="none")(torch.zeros(1, 3)), TypeError, "tokens must be an integer tensor"),
        (lambda: TinyTransformer(10, 8, 2, 1, position="none")(torch.zeros(3, dtype=torch.long)), ValueError, "tokens must have 2 dimensions"),
        (lambda: PositionalEmbedding(10, 8, kind="sinusoidal")(torch.zeros(1, 3, dtype=torch.long), offset=-1), ValueError, "offset must be an integer >= 0, got -1"),
        (lambda: PositionalEmbedding(10, 8, kind="sinusoidal")(torch.tensor([[1, 10]])), ValueError, r"tokens must be ids in \[0, 10\).*1 to 10"),
        (lambda: PositionalEmbedding(10, 8, kind="learned", max_len=4)(torch.tensor([[-1, 2]])), ValueError, r"tokens must be ids in \[0, 10\)"),
        (lambda: PositionalEmbedding(10, 8, kind="learned", max_len=4)(torch.tensor([[1, 2]]), positions=torch.tensor([[0, 4]])), ValueError, "positions must be < max_len=4"),
        (lambda: PositionalEmbedding(10, 8, kind="sinusoidal")(torch.tensor([[1, 2]]), positions=torch.tensor([[0.0, 1.0]])), TypeError, "positions must be an integer tensor"),
        (lambda: PositionalEmbedding(10, 8, kind="sinusoidal")(torch.tensor([[1, 2]]), 1, positions=torch.tensor([[0, 1]])), ValueError, "either offset or positions"),
        (lambda: TinyTransformer(10, 8, 2, 1, position="none")(torch.tensor([[3, 12]])), ValueError, r"tokens must be ids in \[0, 10\)"),
        (lambda: TinyTransformer(10, 8, 2, 1, position="rope")(torch.tensor([[-3]])), ValueError, r"tokens must be ids in \[0, 10\)"),
        (lambda: TinyTransformer(10, 8, 2, 1, position="alibi").attention_bias(-1), ValueError, "seq_len must be an integer >= 0, got -1"),
        (lambda: TinyTransformer(10, 8, 2, 1, position="t5").attention_bias(2.5), TypeError, "seq_len must be an integer"),
        (lambda: TinyTransformer(10, 8, 2, 1, position="alibi").attention_bias(10**9), ValueError, "seq_len must be an integer <="),
    ],
)
def test_bad_input_is_a_clear_error(build, error, match) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(error, match=match):
        build()


def test_rope_hook_is_differentiable() -> None:
    # Independent reference: RoPE in the "half" layout written as explicit float64 rotations,
    # differentiated by autograd; the model's rotary hook must give the same values and gradients.
    model = make("rope")
    head = DIM // HEADS
    q = torch.randn(2, HEADS, 7, head, dtype=torch.float64, requires_grad=True)
    k = torch.randn(2, HEADS, 7, head, dtype=torch.float64, requires_grad=True)
    weight_q, weight_k = torch.randn_like(q), torch.randn_like(k)
    assert model.rotary is not None
    q_rot, k_rot = model.rotary(q, k)
    ((q_rot * weight_q).sum() + (k_rot * weight_k).sum()).backward()

    def reference(x: torch.Tensor) -> torch.Tensor:
        half = head // 2
        theta = 10000.0 ** (-torch.arange(half, dtype=torch.float64) * 2 / head)
        angle = torch.arange(7, dtype=torch.float64)[:, None] * theta
        x1, x2 = x[..., :half], x[..., half:]
        return torch.cat([x1 * angle.cos() - x2 * angle.sin(), x2 * angle.cos() + x1 * angle.sin()], -1)

    q2, k2 = q.detach().clone().requires_grad_(), k.detach().clone().requires_grad_()
    ((reference(q2) * weight_q).sum() + (reference(k2) * weight_k).sum()).backward()
    torch.testing.assert_close(q_rot, reference(q.detach()))
    torch.testing.assert_close(q.grad, q2.grad)
    torch.testing.assert_close(k.grad, k2.grad)


# ---------------------------------------------------------------- half precision


def reference_rotation(x: torch.Tensor, position: int) -> torch.Tensor:
    """RoPE of one head vector in the "half" layout (RoFormer, GPT-NeoX pairing), float64 loops."""
    d = x.shape[-1]
    out = torch.empty(d, dtype=torch.float64)
    for i in range(d // 2):
        angle = position * 10000.0 ** (-2 * i / d)
        a, b = float(x[i]), float(x[i + d // 2])
        out[i] = a * math.cos(angle) - b * math.sin(angle)
        out[i + d // 2] = b * math.cos(angle) + a * math.sin(angle)
    return out


def relative_error(actual: torch.Tensor, expected: torch.Tensor) -> float:
    expected = expected.detach()
    return float((actual.detach().double() - expected).norm() / expected.norm())


HALF_POSITIONS = (4096, 10**5)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_rope_positions_survive_a_cast_to_half_precision(dtype: torch.dtype) -> None:
    model = make("rope").to(dtype)
    assert model.rotary is not None
    head = DIM // HEADS
    x = torch.randn(1, 1, 1, head, generator=torch.Generator().manual_seed(0)).to(dtype)
    for position in HALF_POSITIONS:
        q_rot, _ = model.rotary(x, x, torch.tensor([position]))
        assert q_rot.dtype == dtype
        expected = reference_rotation(x[0, 0, 0].double(), position)
        assert relative_error(q_rot[0, 0, 0], expected) < 2e-2, (dtype, position)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("method", ["alibi", "t5"])
def test_logit_bias_survives_a_cast_to_half_precision(method: str, dtype: torch.dtype) -> None:
    model = make(method)
    reference = make(method).double()
    model = model.to(dtype)
    for position in HALF_POSITIONS:
        queries = torch.tensor([[position]])
        keys = torch.tensor([[0, 1, position // 2, position - 3, position]])
        bias, expected = model.position_bias(queries, keys), reference.position_bias(queries, keys)
        assert bias is not None and expected is not None
        if method == "alibi":  # independent: -slope_h * distance, slopes 2^(-8h/H)
            slopes = torch.tensor([2.0 ** (-8.0 * (h + 1) / HEADS) for h in range(HEADS)], dtype=torch.float64)
            expected = -slopes[:, None] * (position - keys[0]).double()
        assert relative_error(bias[0].squeeze(1) if method == "alibi" else bias, expected) < 2e-2


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("method", ["sinusoidal", "learned"])
def test_embedding_positions_survive_a_cast_to_half_precision(method: str, dtype: torch.dtype) -> None:
    torch.manual_seed(0)
    max_len = 10**5 + 1 if method == "learned" else None
    model = TinyTransformer(VOCAB, 8, 2, 1, position=method, max_len=max_len)
    assert isinstance(model.embedding, PositionalEmbedding)
    table = None if method == "sinusoidal" else model.embedding.position.table.detach().double().clone()
    model = model.to(dtype)
    for position in HALF_POSITIONS:
        rows = model.embedding.rows(torch.tensor([position]))[0]
        if table is None:
            expected = reference_sinusoidal_row(position, 8)
        else:
            expected = table[position]
        assert relative_error(rows, expected) < 2e-2, (method, dtype, position)
    ids = torch.zeros(1, 2, dtype=torch.long)
    logits = model(ids, positions=torch.tensor([[4096, 10**5]]))
    assert logits.dtype == dtype and bool(torch.isfinite(logits).all())


def reference_sinusoidal_row(position: int, dim: int) -> torch.Tensor:
    row = torch.zeros(dim, dtype=torch.float64)
    for i in range(dim // 2):
        angle = position / 10000 ** (2 * i / dim)
        row[2 * i], row[2 * i + 1] = math.sin(angle), math.cos(angle)
    return row


@pytest.mark.parametrize("method", POSITION_METHODS)
def test_forward_without_keywords_is_unchanged_by_explicit_default_positions(method: str) -> None:
    # Not bit for bit: the two calls reach the position tables through different code paths
    # (a slice of the table or a contiguous arange versus a gather or an expanded tensor).
    model, tokens = make(method), torch.randint(0, VOCAB, (2, 9))
    with torch.no_grad():
        torch.testing.assert_close(model(tokens), model(tokens, positions=torch.arange(9).expand(2, 9)),
                                   rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------- per-layer position plan


def test_layer_plan_of_rope_everywhere_is_the_default_model() -> None:
    torch.manual_seed(0)
    plan = TinyTransformer(VOCAB, DIM, HEADS, LAYERS, position="rope", layer_positions=["rope"] * LAYERS,
                           layer_rope_bases=[10000.0] * LAYERS)
    default = make("rope")
    default.load_state_dict(plan.state_dict())
    tokens = torch.randint(0, VOCAB, (2, 9))
    with torch.no_grad():  # bit for bit: two RotaryEmbedding(head_dim, base=10000.0) given the same calls
        assert torch.equal(plan(tokens), default(tokens))  # run identical ops on identical shapes


def test_layer_plan_none_and_bases_act_on_their_layer_only() -> None:
    tokens = torch.randint(0, VOCAB, (2, 9))
    torch.manual_seed(0)
    nope = TinyTransformer(VOCAB, DIM, HEADS, 1, position="rope", layer_positions=["none"])
    plain = TinyTransformer(VOCAB, DIM, HEADS, 1, position="none")
    plain.load_state_dict(nope.state_dict())
    small = TinyTransformer(VOCAB, DIM, HEADS, 1, position="rope", layer_rope_bases=[500.0])
    small.load_state_dict(nope.state_dict())
    swapped = TinyTransformer(VOCAB, DIM, HEADS, 1, position="rope")
    swapped.load_state_dict(nope.state_dict())
    swapped.rotary = RotaryEmbedding(DIM // HEADS, base=500.0)
    with torch.no_grad():  # bit for bit: identical ops on identical shapes in each pair
        assert torch.equal(nope(tokens), plain(tokens))  # no rotation at all in either model
        assert torch.equal(small(tokens), swapped(tokens))  # RotaryEmbedding(head_dim, base=500.0) each
        assert not torch.allclose(small(tokens), nope(tokens))
    assert nope.layer_rotary(0) is None and small.layer_rotary(0).base == 500.0  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"position": "alibi", "layer_positions": ["rope", "none"]}, ValueError, "need position='rope'"),
        ({"position": "rope", "layer_positions": ["rope"]}, ValueError, r"layer_positions must have one entry per layer \(2\), got 1"),
        ({"position": "rope", "layer_positions": "rope"}, TypeError, "layer_positions must be a sequence"),
        ({"position": "rope", "layer_positions": ["rope", "alibi"]}, ValueError, r"layer_positions\[1\] must be one of 'rope', 'none'"),
        ({"position": "rope", "layer_rope_bases": [10.0, -1.0]}, ValueError, r"layer_rope_bases\[1\] must be > 0"),
        ({"position": "rope", "layer_rope_bases": [10.0, "big"]}, TypeError, r"layer_rope_bases\[1\] must be a real number"),
    ],
)
def test_layer_plan_bad_input(kwargs, error, match) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(error, match=match):
        TinyTransformer(VOCAB, DIM, HEADS, LAYERS, **kwargs)


# ---------------------------------------------------------------- the methods beyond ALiBi


def test_xpos_without_decay_is_the_rope_model() -> None:
    # xPos with scale_base=inf is RoPE (Sun et al. 2022): same weights, same logits.
    rope, xpos = make("rope"), make("xpos")
    xpos.load_state_dict(rope.state_dict())
    xpos.xpos = XPos(DIM // HEADS, scale_base=math.inf)
    tokens = torch.randint(0, VOCAB, (2, 9))
    with torch.no_grad():
        torch.testing.assert_close(xpos(tokens), rope(tokens), rtol=1e-5, atol=1e-5)
        assert not torch.allclose(make("xpos")(tokens), rope(tokens), rtol=0, atol=1e-5)  # the decay matters


def test_xpos_centre_cancels_in_the_logits() -> None:
    # The model's fixed centre is a numerical choice only: q.k depends on m - n.
    torch.manual_seed(0)
    a = TinyTransformer(VOCAB, DIM, HEADS, LAYERS, position="xpos")
    b = TinyTransformer(VOCAB, DIM, HEADS, LAYERS, position="xpos", max_len=600)
    b.load_state_dict(a.state_dict())
    assert (a.xpos_centre, b.xpos_centre) == (0.0, 300.0)
    tokens = torch.randint(0, VOCAB, (2, 9))
    with torch.no_grad():
        torch.testing.assert_close(a(tokens), b(tokens), rtol=1e-4, atol=1e-4)


def test_cope_with_zero_embeddings_is_the_model_without_positions() -> None:
    # CoPE's embeddings start at zero (as in the authors' code): its term is then 0.
    cope, none = make("cope"), make("none")
    cope.load_state_dict({**none.state_dict(), **{k: v for k, v in cope.state_dict().items() if "cope" in k}})
    tokens = torch.randint(0, VOCAB, (2, 9))
    with torch.no_grad():
        torch.testing.assert_close(cope(tokens), none(tokens), rtol=0, atol=1e-6)
        for module in cope.cope:
            module.pos_emb.normal_()
        assert not torch.allclose(cope(tokens), none(tokens), atol=1e-3)


@pytest.mark.parametrize("method", ["xpos", "kerple", "fire", "cope"])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_new_methods_survive_a_cast_to_half_precision(method: str, dtype: torch.dtype) -> None:
    model = make(method).eval()
    for cope in model.cope:  # CoPE's embeddings start at zero: give them values to lose
        cope.pos_emb.data.normal_(generator=torch.Generator().manual_seed(3))
    reference = copy.deepcopy(model).double()
    model = model.to(dtype)
    tokens = torch.randint(0, VOCAB, (1, 9))
    positions = torch.tensor([[4096 + p for p in range(9)]])
    with torch.no_grad():
        logits, expected = model(tokens, positions=positions), reference(tokens, positions=positions)
    assert logits.dtype == dtype and bool(torch.isfinite(logits).all())
    assert relative_error(logits[0], expected[0]) < 5e-2


def test_randomized_positions_in_training_only() -> None:
    torch.manual_seed(0)
    model = TinyTransformer(VOCAB, DIM, HEADS, LAYERS, position="learned", max_len=64, randomized_max_len=64)
    tokens = torch.randint(0, VOCAB, (3, 9))
    torch.manual_seed(5)
    trained = model(tokens)  # training mode: random positions, drawn from the global generator
    torch.manual_seed(5)
    drawn = torch.stack([torch.randperm(64)[:9].sort().values for _ in range(3)])  # independent redraw
    assert all(bool((row.diff() > 0).all()) for row in drawn) and len({tuple(r.tolist()) for r in drawn}) == 3
    with torch.no_grad():
        torch.testing.assert_close(trained, model(tokens, positions=drawn), rtol=0, atol=1e-6)
        model.eval()
        torch.testing.assert_close(model(tokens), model(tokens, positions=torch.arange(9)[None]), rtol=0, atol=1e-6)
        model.train()  # explicit positions, and a cache, keep their own positions
        explicit, cached = model(tokens, positions=torch.arange(9)[None]), model(tokens, cache=KVCache())
        model.eval()
        torch.testing.assert_close(explicit, model(tokens), rtol=0, atol=1e-6)
        torch.testing.assert_close(cached, model(tokens), rtol=0, atol=1e-6)


# ---------------------------------------------------------------- the method table


def test_every_method_is_one_row_of_the_table_and_acts_where_it_says() -> None:
    from posenc.attention import PositionBias, Rotation  # noqa: F401 - the interfaces named below
    from posenc.methods import METHODS

    assert tuple(METHODS) == POSITION_METHODS
    for name, method in METHODS.items():
        model = make(name)
        module = None if method.attribute is None else getattr(model, method.attribute)
        if method.place == "bias":  # bias(q, k) of any positions, the model's bias for 0 .. n-1
            torch.testing.assert_close(module.bias(torch.arange(5)[None], torch.arange(5)[None])[0],
                                       model.attention_bias(5), rtol=0, atol=0)
        elif method.place == "rotation":
            q = torch.randn(1, HEADS, 4, DIM // HEADS)
            assert model._rotation(0) is module
            assert not torch.equal(module.rotate_queries(q, torch.arange(4)), q)
        elif method.place == "embedding":
            assert isinstance(module, PositionalEmbedding) and module.kind == name
        elif method.place in ("logits", "content"):  # CoPE; FoX's gates and PaTH's transforms
            assert len(module) == LAYERS
        elif method.place == "weights":  # stick-breaking: the weights of masked logits, no bias or rotation
            assert model.attention_bias(3) is None and module.weights(torch.zeros(1, 2)).shape == (1, 2)
        else:
            assert model.attention_bias(3) is None and model.layer_rotary(0) is None and not len(model.cope)


def test_the_model_dispatches_on_no_method_name() -> None:
    # No `position == "..."` (or `in (...)`, or METHODS["..."]) outside the table: a new method is
    # one row of it. The layer plan may name "none", the absence of a method.
    import ast
    import inspect

    import posenc._method_wiring
    import posenc.layer_plan
    import posenc.model

    for module, allowed in ((posenc.model, set()), (posenc._method_wiring, set()),
                            (posenc.layer_plan, {"none"})):
        names = set(POSITION_METHODS) - allowed
        for node in ast.walk(ast.parse(inspect.getsource(module))):
            strings = {n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
            if isinstance(node, ast.Compare):
                operands = [n.attr if isinstance(n, ast.Attribute) else getattr(n, "id", None)
                            for n in (node.left, *node.comparators)]
                assert not ("position" in operands and strings & names), ast.unparse(node)
            if isinstance(node, ast.Subscript) and getattr(node.value, "id", None) == "METHODS":
                assert not strings & names, ast.unparse(node)


def test_the_model_listings_fit_80_columns() -> None:
    # The API page shows the source of TinyTransformer and of each public method, and the chapter
    # includes regions of model.py: every line of the model's two modules fits 80 columns.
    import inspect

    import posenc._method_wiring
    import posenc.model

    for module in (posenc.model, posenc._method_wiring):
        long = [(number, len(line)) for number, line in enumerate(inspect.getsource(module).splitlines(), 1)
                if len(line) > 80]
        assert long == [], f"{module.__name__}: (line, length) over 80 columns: {long}"


def test_positional_embedding_is_importable_from_its_old_home() -> None:
    import posenc
    from posenc.embedding import PositionalEmbedding as moved
    from posenc.model import PositionalEmbedding as old

    assert old is moved is posenc.PositionalEmbedding


@pytest.mark.parametrize("kind", ["sinusoidal", "learned"])
def test_embedding_tables_answer_rows_and_their_limit(kind: str) -> None:
    layer = PositionalEmbedding(VOCAB, DIM, kind=kind, max_len=6)
    table = layer.position
    rows = layer.rows(torch.tensor([[0, 5], [3, 1]]))
    assert rows.shape == (2, 2, DIM)
    torch.testing.assert_close(rows[0, 1], table(torch.zeros(1, 6, DIM))[0, 5])  # the same row as forward's
    assert layer.position_limit == (6 if kind == "learned" else None)
    if kind == "sinusoidal":  # past its precomputed rows, computed
        torch.testing.assert_close(layer.rows(torch.tensor([9]))[0].double(), reference_sinusoidal(10, DIM)[9],
                                   rtol=0, atol=1e-6)
