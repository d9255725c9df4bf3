"""Per-layer plans: the shorthands and the plans agree, bad plans are named, the model reads them."""

from __future__ import annotations

import pytest
import torch

from posenc import LayerPlan, TinyTransformer
from posenc.layer_plan import layer_plans, rotation_key

VOCAB, DIM, HEADS = 30, 16, 2


def test_shorthands_are_plans() -> None:
    plans = layer_plans("rope", 3, layer_positions=["rope", "none", "rope"], layer_rope_bases=[100, 1e4, 1e6])
    assert plans == (LayerPlan("rope", 100.0), LayerPlan("none", 1e4), LayerPlan("rope", 1e6))
    assert layer_plans("alibi", 2) == (LayerPlan("alibi"), LayerPlan("alibi"))  # default: the model's method
    assert [plan.rotation_key for plan in plans] == ["100_0", "10000_0", "1000000_0"]
    assert LayerPlan("rope").rotation_key is None and rotation_key(500) == "500_0"


def test_a_model_built_from_plans_is_the_model_built_from_shorthands() -> None:
    torch.manual_seed(0)
    short = TinyTransformer(VOCAB, DIM, HEADS, 3, position="rope", layer_positions=["rope", "none", "rope"],
                            layer_rope_bases=[100.0, 1e4, 1e4])
    torch.manual_seed(0)
    planned = TinyTransformer(VOCAB, DIM, HEADS, 3, position="rope", layer_plans=[
        LayerPlan("rope", 100.0), LayerPlan("none", 1e4), LayerPlan("rope", 1e4)])
    assert planned.layer_plans == short.layer_plans and list(planned.layer_rotaries) == ["100_0", "10000_0"]
    tokens = torch.randint(0, VOCAB, (2, 7))
    with torch.no_grad():
        assert torch.equal(planned(tokens), short(tokens))
    assert planned.layer_rotary(1) is None and planned.layer_rotary(2).base == 1e4  # type: ignore[union-attr]


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"layer_plans": [LayerPlan("rope")] * 3, "layer_positions": ["rope"] * 3}, ValueError, "not both"),
    ({"layer_plans": [LayerPlan("rope")] * 2}, ValueError, r"layer_plans must have one entry per layer \(3\)"),
    ({"layer_plans": [LayerPlan("rope"), "none", LayerPlan("rope")]}, TypeError,
     r"layer_plans\[1\] must be a posenc.layer_plan.LayerPlan"),
    ({"layer_plans": [LayerPlan("alibi")] * 3}, ValueError, r"layer_plans\[0\].position must be the model's position"),
])
def test_bad_plans_are_named(kwargs: dict[str, object], error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        TinyTransformer(VOCAB, DIM, HEADS, 3, position="rope", **kwargs)  # type: ignore[arg-type]


def test_plans_of_other_methods_must_be_their_own() -> None:
    with pytest.raises(ValueError, match="need position='rope'"):
        TinyTransformer(VOCAB, DIM, HEADS, 2, position="alibi", layer_plans=[LayerPlan("none")] * 2)
    assert TinyTransformer(VOCAB, DIM, HEADS, 2, position="alibi", layer_plans=[LayerPlan("alibi")] * 2)


@pytest.mark.parametrize(("build", "error", "match"), [
    (lambda: LayerPlan(""), TypeError, "position must be the name of a position method"),
    (lambda: LayerPlan("rope", rope_base=-1.0), ValueError, "rope_base must be > 0"),
    (lambda: LayerPlan("rope", rope_base="big"), TypeError, "rope_base must be a real number"),
])
def test_bad_layer_plan(build: object, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        build()  # type: ignore[operator]
