"""`read_config` against transformers' own config classes where they rewrite what a config gives.

Three ways a config class changes a config.json before its model sees it, each once read silently
wrong by posenc, each checked here live against the pinned transformers (its config class, rotary
module and rotation function: ``tests/rope_live.py``), and each either followed exactly or refused
with a ValueError that names the key:

1. a ``layer_types`` list the config gives, rewritten (Gemma 4: the last layer is full attention,
   whatever the list says);
2. one flat ``rope_parameters`` / ``rope_scaling`` given to a class with one RoPE per layer type
   (Gemma 3, Gemma 3n, OLMo 3, T5Gemma 2, Step 3.5: a flat ``rope_scaling`` goes to the
   full-attention layers, a flat ``rope_parameters`` is dropped; Gemma 4, Laguna: refused);
3. a null entry of a per-layer-type ``rope_parameters`` (Gemma 3 fills it in; Laguna keeps it and
   fails; Step 3.5 rebuilds every entry from its top-level keys).

Below them, a sample of the sweep (``python -m tests.rope_sweep``, every model type) on the model
types these rules concern: no silent difference, no crash.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("transformers", reason="transformers is a test dependency (requirements.lock)")

from posenc.configs import _table as _rope_table  # noqa: E402
from posenc.configs import read_config  # noqa: E402
from tests import rope_live, rope_sweep  # noqa: E402

SMALL = {"hidden_size": 64, "num_attention_heads": 4, "head_dim": 16, "num_key_value_heads": 2}
TABLE = _rope_table.model_types()


def _with(field: str) -> list[str]:
    """The model types the derived table records ``field`` for."""
    return sorted(m for m, entry in TABLE.items() if field in entry)


def _live(config: dict[str, Any]) -> tuple[Any, Any]:
    """posenc's reading of ``config``, checked against transformers' (it raises where they differ),
    and transformers' config object."""
    return rope_live.check_config(json.loads(json.dumps(config))), rope_live.transformers_config(config)


# ---------------------------------------------------------------- 1. a given layer_types, rewritten
def test_the_classes_that_force_a_given_lists_last_layer_are_derived() -> None:
    forced = {m for m in _with("given_layer_types") if TABLE[m]["given_layer_types"].get("last")}
    assert {"gemma4_text", "diffusion_gemma_text"} <= forced


@pytest.mark.parametrize("model_type", _with("given_layer_types"))
def test_a_given_layer_types_list_is_read_as_the_class_keeps_it(model_type: str) -> None:
    given = ["full_attention", "sliding_attention"] * 2 + ["sliding_attention"]
    rope, text = _live({"model_type": model_type, **SMALL, "num_hidden_layers": len(given), "layer_types": given})
    assert list(text.layer_types) != given  # the class did rewrite it (Gemma 4: the last layer full)
    assert [name.removesuffix(":nope") for name in rope.pattern] == list(text.layer_types)
    assert rope.layers["full_attention"].layers[-1] == len(given) - 1


def test_layer_kinds_named_from_given_nope_flags() -> None:
    # Llama 4's class names each layer from no_rope_layers when the config gives no layer_types:
    # a layer that rotates is chunked attention, a NoPE layer full attention
    flags = [1, 0, 0, 1, 1, 0]
    rope, text = _live({"model_type": "llama4_text", **SMALL, "num_hidden_layers": 6, "no_rope_layers": flags})
    assert list(text.layer_types) == ["chunked_attention" if f else "full_attention" for f in flags]
    assert rope.pattern == tuple(text.layer_types)
    assert rope.layers["chunked_attention"].rotates and not rope.layers["full_attention"].rotates
    with pytest.raises(ValueError, match=r"config\['no_rope_layers'\] must be a list of 6 flags"):
        read_config({"model_type": "llama4_text", **SMALL, "num_hidden_layers": 6, "no_rope_layers": [1, 0]})


# ---------------------------------------------------------------- 2. one flat set, per-layer-type class
@pytest.mark.parametrize("model_type", _with("flat_landing"))
@pytest.mark.parametrize("source", ["rope_parameters", "rope_scaling"])
@pytest.mark.parametrize("theta", [None, 50000.0])
def test_a_flat_set_for_a_per_layer_type_class(model_type: str, source: str, theta: float | None) -> None:
    flat = {"rope_type": "linear", "factor": 4.0, **({"rope_theta": theta} if theta else {})}
    config = {"model_type": model_type, **SMALL, "num_hidden_layers": 6, "rope_theta": 30000.0, source: flat}
    landing = TABLE[model_type]["flat_landing"].get(source)
    if landing is None:  # the class keeps it flat and its model then fails, or spreads it otherwise
        with pytest.raises(ValueError, match=rf"config\['{source}'\] must map each layer type"):
            read_config(config)
        return
    if model_type == "deepseek_v4":  # keyed by rope kind (main, compress), not by layer type
        pytest.skip("DeepSeek-V4's flat set lands on its 'compress' rope kind, which read_config reads per kind of "
                    "layer (sites.read_deepseek_v4; checked against DeepseekV4Config in tests/test_rope_sites.py)")
    if TABLE[model_type].get("layout") is None:
        pytest.skip(f"transformers' code for {model_type!r} gives no layout posenc derives: read_config asks for it")
    rope, _ = _live(config)
    scaled = {name for name, layer in rope.layers.items() if layer.scaling}
    assert scaled == set(landing["layer_types"]) & set(rope.layers)
    if not landing["layer_types"]:  # dropped by the class: said so, not silently
        assert any(f"config[{source!r}] is one flat set" in note for note in rope.notes)


def test_gemma3_as_published_and_with_a_flat_rope_parameters() -> None:
    # the published form: a flat linear x8 rope_scaling, which the class puts on full attention only
    published = {"model_type": "gemma3_text", **SMALL, "num_hidden_layers": 6, "rope_theta": 1e6,
                 "rope_local_base_freq": 1e4, "rope_scaling": {"rope_type": "linear", "factor": 8.0}}
    rope, _ = _live(published)
    assert rope.layers["full_attention"].scaling == {"type": "linear", "factor": 8.0}
    assert rope.layers["sliding_attention"].scaling is None and rope.layers["sliding_attention"].base == 1e4
    # the same set as rope_parameters: the class drops it (both layer types keep their defaults)
    rope, _ = _live({**{k: v for k, v in published.items() if k != "rope_scaling"},
                     "rope_parameters": {"rope_type": "linear", "factor": 8.0}})
    assert not any(layer.scaling for layer in rope.layers.values())


@pytest.mark.parametrize("model_type", ["gemma4_text", "laguna", "neomme"])
def test_a_flat_set_the_class_does_not_spread_is_refused(model_type: str) -> None:
    for source in ("rope_parameters", "rope_scaling"):
        with pytest.raises(ValueError, match=rf"config\['{source}'\] must map each layer type to its parameters"):
            read_config({"model_type": model_type, **SMALL, "num_hidden_layers": 6,
                         source: {"rope_type": "linear", "factor": 2.0}})


def test_a_key_that_rebuilds_the_entries_is_refused() -> None:
    # Step 3.5's class builds its entries from a per-layer partial_rotary_factors posenc does not read
    config = {"model_type": "step3p5", **SMALL, "num_hidden_layers": 4, "partial_rotary_factors": [0.5] * 4}
    assert rope_live.transformers_config(config).rope_parameters["full_attention"]["partial_rotary_factor"] == 0.5
    with pytest.raises(ValueError, match="'partial_rotary_factors'"):
        read_config(config)


def test_a_rotated_fraction_in_an_entry() -> None:
    # Gemma 3's own default rule reads only an entry's base: its rotary module rotates the whole head
    entries = {t: {"rope_type": "default", "rope_theta": 1e4, "partial_rotary_factor": 0.5}
               for t in ("full_attention", "sliding_attention")}
    config = {"model_type": "gemma3_text", **SMALL, "num_hidden_layers": 6, "rope_parameters": entries}
    reference = rope_live.Reference(rope_live.transformers_config(config))
    assert reference.inv_freq("sliding_attention").numel() == SMALL["head_dim"] // 2  # the whole head
    with pytest.raises(ValueError, match=r"\['partial_rotary_factor'\] is 0.5, which transformers' code"):
        read_config(config)
    # Step 3.5's class copies a top-level partial_rotary_factor into its entries, and its module uses it
    rope, _ = _live({"model_type": "step3p5", **SMALL, "num_hidden_layers": 4, "partial_rotary_factor": 0.5,
                     "rope_parameters": {"full_attention": {"rope_type": "default", "rope_theta": 1e4}}})
    assert rope.layers["full_attention"].rotary_dim == SMALL["head_dim"] // 2


# ---------------------------------------------------------------- 3. a null entry
@pytest.mark.parametrize("model_type", _with("null_filled"))
def test_a_null_entry_the_class_fills_in(model_type: str) -> None:
    names = [t for t in TABLE[model_type]["default_rope_parameters"] if t in TABLE[model_type]["null_filled"]]
    bases = {key: 5000 for key in TABLE[model_type].get("base_keys", {}).values()}
    for layer_type in names:
        for top in ({}, {"rope_theta": 30000.0, **bases}):
            params = {t: None if t == layer_type else {"rope_type": "default", "rope_theta": 20000.0}
                      for t in TABLE[model_type]["default_rope_parameters"]}
            rope, text = _live({"model_type": model_type, **SMALL, "num_hidden_layers": 6, **top,
                                "rope_parameters": params})
            assert text.rope_parameters[layer_type] is not None  # filled in by the class
            assert all(layer.rotates for layer in rope.layers.values() if layer.layers)


@pytest.mark.parametrize("model_type", ["laguna", "neomme", "modernbert", "step3p5"])
def test_a_null_entry_the_class_does_not_fill_is_refused(model_type: str) -> None:
    assert model_type not in _with("null_filled")
    kinds = list(TABLE[model_type]["default_rope_parameters"])
    for layer_type in kinds:
        params = {t: None if t == layer_type else {"rope_type": "default", "rope_theta": 2e4} for t in kinds}
        with pytest.raises(ValueError, match=rf"config\['rope_parameters'\]\['{layer_type}'\] is None"):
            read_config({"model_type": model_type, **SMALL, "num_hidden_layers": 6, "rope_parameters": params,
                         "layer_types": [kinds[i % len(kinds)] for i in range(6)]})  # every kind used


# ---------------------------------------------------------------- the sweep, on these model types
SAMPLE = sorted(set(_with("given_layer_types") + _with("flat_landing") + _with("null_filled")
                    + _with("nested_theta_required")) | {"modernbert", "neomme", "gemma3n_text"})


@pytest.mark.parametrize("model_type", SAMPLE)
def test_the_sweep_finds_no_silent_difference(model_type: str) -> None:
    results = rope_sweep.sweep([model_type])[model_type]
    bugs = {case: detail[:300] for case, (outcome, detail) in results.items() if outcome in rope_sweep.BUGS}
    assert not bugs, bugs
    if TABLE[model_type].get("layout") is not None:  # else read_config asks for the layout: nothing to compare
        assert any(outcome == "ok" for outcome, _ in results.values()), results
