"""`read_config` and ``python -m posenc.inspect`` on random and broken configs: only the errors they promise.

A seeded fuzz (hypothesis, ``derandomize=True``, bounded example counts) throws JSON-like values,
configs built from the keys transformers' config classes read, and zoo configs with values replaced,
removed or added at read_config (and from_config, and inspect's warnings) and at inspect's
``main()``. Allowed outcomes: a result, or a ValueError / TypeError (the API); exit status 0, or 2
with exactly one line on stderr and no traceback (the command line). Below the fuzz, the cases it
and the reports found, each pinned by name.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from posenc.configs import _table as _rope_table
from posenc.configs._layer import ROPE_TYPES
from posenc.configs._params import MAX_NESTING
from posenc.inspect import main, warnings_for
from posenc.configs import from_config, read_config
from posenc.rope_scaling import MAX_ROPE_DIM

ZOO = sorted((Path(__file__).resolve().parents[1] / "posenc" / "zoo").glob("*.json"))
CONFIGS = [{k: v for k, v in json.loads(p.read_text()).items() if not k.startswith("_")} for p in ZOO]
MODEL_TYPES = sorted(_rope_table.model_types())
SMALL = {"hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 6, "max_position_embeddings": 1024}


def _table_keys() -> list[str]:
    """Every config key the model-type table names, and the keys of the zoo and of the rope types."""
    keys = {key for config in CONFIGS for key in config} | {k for v in ROPE_TYPES.values() for k in v}
    for found in _rope_table.model_types().values():
        keys |= set(found.get("attribute_map", {}).values()) | set(found.get("base_keys", {}).values())
        keys |= set(found.get("key_aliases", {})) | set(found.get("field_defaults", {}))
        for name in ("layer_pattern", "nope_pattern", "layout", "head_dim_from"):
            if isinstance(found.get(name), dict) and found[name].get("key"):
                keys.add(found[name]["key"])
        if found.get("rotated_width_key"):
            keys.add(found["rotated_width_key"])
    return sorted(keys | {"rope_type", "type", "rope_theta", "partial_rotary_factor", "layer_types", "no_rope_layers",
                          "rope_interleave", "per_layer_config", "text_config", "fator"})


KEYS = _table_keys()
WORDS = ["yarn", "linear", "dynamic", "llama3", "longrope", "default", "proportional", "su", "mrope", "ntk",
         "full_attention", "sliding_attention", "chunked_attention", "linear_attention", "mamba", "half",
         "interleaved", "", "llama", "beam", "05", *MODEL_TYPES[:: max(1, len(MODEL_TYPES) // 12)]]
NUMBERS = [-1, 0, 1, 2, 3, 4, 7, 8, 64, 100, 128, 4096, 65536, 65538, 2**31, 2**53, 2**53 + 1, 2**64, 10**40,
           10**320, -(10**320), 0.0, -0.0, 0.5, 1.0, 2.0, 8.0, 1e-300, 1e300, 4096.0, math.nan, math.inf, -math.inf]

scalars = st.one_of(st.none(), st.booleans(), st.sampled_from(NUMBERS), st.integers(-(2**70), 2**70),
                    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(WORDS), st.text(max_size=8))
json_values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=5), st.dictionaries(st.one_of(st.sampled_from(KEYS + WORDS), st.text(max_size=6)),
                                                 inner, max_size=5)), max_leaves=20)


def _featured() -> list[str]:
    """Model types whose table entry has something to get wrong: per-layer parameters, a layer pattern,
    a layout flag, a text model inside, renamed keys, a temperature (and the zoo's model types)."""
    names = {"default_rope_parameters", "layer_pattern", "nope_pattern", "text_model_type", "base_keys",
             "head_dim_from", "rotated_width_key", "query_temperature", "softmax_scale", "rope_condition",
             "flat_scaling_layer_types", "type_aliases", "key_aliases"}
    featured = {m for m, found in _rope_table.model_types().items() if names & set(found) or isinstance(
        found.get("layout"), dict)}
    return sorted(featured | {config["model_type"] for config in CONFIGS})


ROPE_MODEL_TYPES = [m for m in MODEL_TYPES if (_rope_table.entry(m) or {}).get("rope") is not False]
model_types = st.one_of(st.sampled_from(_featured()), st.sampled_from(ROPE_MODEL_TYPES), st.just("no_such_model"))
config_values = st.one_of(st.sampled_from(NUMBERS), json_values)


@st.composite
def built_configs(draw: st.DrawFn) -> dict[str, Any]:
    """A small config of a model type transformers knows (or not), with a few keys set to anything."""
    config: dict[str, Any] = {"model_type": draw(model_types), **SMALL}
    for key in draw(st.lists(st.sampled_from(KEYS), max_size=6)):
        config[key] = draw(config_values)
    if draw(st.booleans()):
        config["rope_parameters"] = draw(st.dictionaries(st.sampled_from(KEYS + WORDS), config_values, max_size=6))
    return config


@st.composite
def mutated_zoo(draw: st.DrawFn) -> dict[str, Any]:
    """A zoo config with one to three values replaced, removed or added, at any depth."""
    config = json.loads(json.dumps(draw(st.sampled_from(CONFIGS))))
    for _ in range(draw(st.integers(1, 3))):
        parent: Any = config
        while True:  # walk down to a dict, choosing where to stop
            children = [k for k, v in parent.items() if isinstance(v, dict)]
            if not children or draw(st.booleans()):
                break
            parent = parent[draw(st.sampled_from(sorted(children)))]
        roll = draw(st.integers(0, 2))
        if roll == 0 and parent:
            del parent[draw(st.sampled_from(sorted(parent)))]
        else:
            key = draw(st.sampled_from(sorted(parent) or KEYS)) if roll == 1 else draw(st.sampled_from(KEYS))
            parent[key] = draw(config_values)
    return config


SIZE_KEYS = ["head_dim", "hidden_size", "num_attention_heads", "qk_rope_head_dim", "n_embd", "n_head", "d_model",
             "rotary_dim", "num_hidden_layers", "max_position_embeddings", "original_max_position_embeddings",
             "sliding_window", "attention_chunk_size", "floor_scale"]
FRACTIONS = ["partial_rotary_factor", "rotary_pct"]


@st.composite
def odd_sizes(draw: st.DrawFn) -> dict[str, Any]:
    """A small config with one or two sizes huge, zero, negative or fractional, and perhaps a rotated fraction."""
    config: dict[str, Any] = {"model_type": draw(model_types), **SMALL}
    for key in draw(st.lists(st.sampled_from(SIZE_KEYS), min_size=1, max_size=2)):
        config[key] = draw(st.one_of(st.sampled_from([10**320, 2**64, 2**24 + 2, 65538, 0, -2, 3, 4096.0]),
                                     st.sampled_from(NUMBERS), st.integers(-(2**80), 2**80)))
    if draw(st.booleans()):
        config[draw(st.sampled_from(FRACTIONS))] = draw(st.sampled_from([0.25, 0.5, 1.0, 0.0, 2.0, math.nan]))
    return config


anything = st.one_of(json_values, built_configs(), odd_sizes(), mutated_zoo(), mutated_zoo())
FUZZ = settings(max_examples=250, deadline=None, database=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _read_everything(config: Any, layout: str | None) -> None:
    """What the API does with a config: read_config, from_config per layer type and as a whole, the warnings."""
    rope = read_config(config, layout=layout)
    for name, layer in rope.layers.items():
        if layer.rotates:
            assert from_config(config, name, layout=layout) == layer.rotary_kwargs()
    with contextlib.suppress(ValueError):  # more than one RoPE, or none: from_config says so
        from_config(config, layout=layout)
    warnings_for(rope, 300000, config)


@FUZZ
@given(config=anything, layout=st.sampled_from([None, None, "half", "interleaved"]))
def test_read_config_raises_only_value_and_type_errors(config: Any, layout: str | None) -> None:
    try:
        _read_everything(config, layout)
    except (ValueError, TypeError):
        pass


@pytest.mark.parametrize("layout", [None, "half", "interleaved"])
def test_every_model_type_at_a_small_size(layout: str | None) -> None:
    # every model type the table knows, with each layout: a result or a named error (this found Beam's
    # null rope parameters, a TypeError from deep inside)
    for model_type in MODEL_TYPES:
        try:
            _read_everything({"model_type": model_type, **SMALL}, layout)
        except (ValueError, TypeError) as error:
            assert "object is not" not in str(error) and "unhashable" not in str(error), (model_type, error)


def run_main(text: str, *args: str) -> tuple[int, str, str]:
    """``main([path, *args])`` on a file holding ``text``: the exit status, stdout and stderr."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "config.json"
        path.write_text(text, encoding="utf-8")
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main([str(path), *args])
    return code, out.getvalue(), err.getvalue()


def _check_main(text: str, *args: str) -> None:
    code, out, err = run_main(text, *args)
    assert code in (0, 2), (code, err)
    if code == 2:
        assert not out and err.count("\n") == 1 and err.startswith("posenc.inspect: error: "), err
    else:
        assert out and not err, err


def _broken(text: str, cut: int, junk: str) -> str:
    """JSON text cut short, or with junk inserted."""
    at = cut % (len(text) + 1)
    return text[:at] if not junk else text[:at] + junk + text[at:]


@FUZZ
@given(config=anything, length=st.sampled_from([(), ("--length", "300000"), ("--length", "1")]),
       damage=st.one_of(st.none(), st.tuples(st.integers(0, 10**6), st.sampled_from(["", "{", "]", ",", "\\", '"', "\x00"]))))
def test_inspect_exits_0_or_2_with_one_line(config: Any, length: tuple[str, ...], damage: tuple[int, str] | None) -> None:
    text = json.dumps(config)
    if damage is not None:
        text = _broken(text, *damage)
    _check_main(text, *length)


# ---------------------------------------------------------------- what the fuzz and the reports found
def test_a_layer_type_the_config_class_marks_none_does_not_rotate() -> None:
    # Beam's config class sets rope_parameters["full_attention"] = None, and BeamModel.forward passes
    # position_embeddings=None to those layers (no rotation): read as NoPE, not a TypeError.
    rope = read_config({"model_type": "beam", **SMALL})
    assert rope.layers["full_attention"].rotates is False and rope.layers["full_attention"].layers == (5,)
    assert "is None (NoPE)" in (rope.layers["full_attention"].note or "")
    assert rope.layers["sliding_attention"].rotates is True and rope.layers["sliding_attention"].base == 10000.0
    assert from_config({"model_type": "beam", **SMALL}) == rope.layers["sliding_attention"].rotary_kwargs()
    # a config that gives the null itself reads the same way
    given = {"sliding_attention": {"rope_type": "default", "rope_theta": 5e5}, "full_attention": None}
    rope = read_config({"model_type": "beam", **SMALL, "rope_parameters": given})
    assert rope.layers["full_attention"].rotates is False and rope.layers["sliding_attention"].base == 5e5


def test_beam_against_transformers() -> None:
    # Beam's attention calls rotate_half ("half", derived now that the table probes a layer type that
    # rotates), and posenc's reading equals its rotary module and rotation, live, with the NoPE layers
    # where its config puts them (the last layer forced to full attention: 8 layers).
    pytest.importorskip("transformers", reason="transformers is a test dependency (requirements.lock)")
    from tests import rope_live

    for layers in (6, 8):
        config = {"model_type": "beam", **SMALL, "num_key_value_heads": 4, "num_hidden_layers": layers}
        assert rope_live.transformers_config(config).rope_parameters["full_attention"] is None
        rope = rope_live.check_config(config)
        assert rope.layers["full_attention"].rotates is False and rope.layers["full_attention"].layers[-1] == layers - 1
        assert rope.layers["sliding_attention"].layout == "half"


def test_only_the_model_types_whose_code_skips_a_null_entry_read_it_as_nope() -> None:
    # posenc's rule (a None among the config class's default rope_parameters) against transformers'
    # modeling code: the model types whose forward gives a None entry's layers no position embeddings.
    transformers = pytest.importorskip("transformers", reason="transformers is a test dependency")
    models = Path(transformers.__file__).parent / "models"
    skipping = {path.parent.name for path in models.glob("*/modeling_*.py")
                if re.search(r"rope_parameters\[\s*layer_type\s*\] is None", path.read_text(encoding="utf-8"))}
    marked = {m for m, found in _rope_table.model_types().items()
              if any(v is None for v in (found.get("default_rope_parameters") or {}).values())}
    assert skipping == {"beam"} and marked == {"beam"}, (skipping, marked)


def test_a_null_layer_entry_where_transformers_reads_no_nope_is_an_error() -> None:
    # Laguna's config class keeps a null entry and its rotary module then has no tables for those
    # layers; Step 3.5's rebuilds every entry from its top-level keys once one is null. Neither reads
    # it as "no rotation", and posenc follows neither. (Gemma 3's class fills a null entry in, and
    # posenc follows it: tests/test_rope_sweep.py, live.)
    for model_type, layer_type in (("laguna", "sliding_attention"), ("step3p5", "full_attention")):
        params = {"full_attention": {"rope_type": "default", "rope_theta": 1e6},
                  "sliding_attention": {"rope_type": "default", "rope_theta": 1e4}, layer_type: None}
        with pytest.raises(ValueError, match=rf"config\['rope_parameters'\]\['{layer_type}'\] is None"):
            read_config({"model_type": model_type, **SMALL, "layer_types": ["full_attention", "sliding_attention"] * 3,
                         "rope_parameters": params})


@pytest.mark.parametrize(("extra", "named"), [
    ({"head_dim": 10**320, "partial_rotary_factor": 0.5}, "config['head_dim'] must be an integer <= 65536"),
    ({"head_dim": MAX_ROPE_DIM + 2}, "config['head_dim'] must be an integer <= 65536"),
    ({"hidden_size": 2**40, "num_attention_heads": 1}, "config['hidden_size'] must be an integer <= 16777216"),
    ({"hidden_size": 2**20, "num_attention_heads": 8}, "config['hidden_size'] / config['num_attention_heads']"),
    ({"num_attention_heads": 10**320}, "config['num_attention_heads'] must be an integer <= 16777216"),
])
def test_sizes_are_bounded_by_name(extra: dict[str, Any], named: str) -> None:
    config = {"model_type": "llama", **SMALL, **extra}
    with pytest.raises(ValueError) as caught:
        read_config(config)
    assert named in str(caught.value)
    code, _, err = run_main(json.dumps(config))
    assert code == 2 and named in err and err.count("\n") == 1


def test_deepseek_rope_head_dim_and_gemma4_overrides_are_bounded() -> None:
    with pytest.raises(ValueError, match=r"config\['qk_rope_head_dim'\] must be an integer <= 65536"):
        read_config({"model_type": "deepseek_v3", **SMALL, "qk_rope_head_dim": 2**17})
    with pytest.raises(ValueError, match=r"head_dim'\] must be an integer <= 65536"):
        read_config({"model_type": "gemma4_text", **SMALL, "layer_types": ["full_attention"] * 6,
                     "per_layer_config": {"00": {"head_dim": 2**17}}})


@pytest.mark.parametrize("depth", [MAX_NESTING + 1, 3000])
def test_json_nested_too_deeply_is_one_line(depth: int) -> None:
    # past Python's recursion limit (the decoder's RecursionError) or only past posenc's: one message
    for text in ("[" * depth + "]" * depth, '{"model_type": "llama", "rope_scaling": {"x": ' + "[" * depth + "]" * depth + "}}"):
        code, out, err = run_main(text)
        assert (code, out) == (2, "") and err.count("\n") == 1 and err.endswith(": not JSON (nested too deeply)\n"), err
    assert run_main("[" * (MAX_NESTING - 1) + "]" * (MAX_NESTING - 1))[2].endswith("got a list\n")


def test_read_config_refuses_a_config_nested_too_deeply() -> None:
    inner: Any = []
    for _ in range(5000):  # deeper than Python's recursion limit: refused before anything recurses
        inner = [inner]
    with pytest.raises(ValueError, match=f"config nests more than {MAX_NESTING} levels deep"):
        read_config({"model_type": "llama", **SMALL, "rope_scaling": {"rope_type": "linear", "factor": 2.0, "x": inner}})
    cycle: dict[str, Any] = {"model_type": "llama", **SMALL}
    cycle["text_config"] = cycle
    with pytest.raises(ValueError, match="nests more than"):
        read_config(cycle)
    assert read_config({"model_type": "llama", **SMALL, "notes": json.loads("[" * 90 + "]" * 90)}).layers


def test_gemma4_per_layer_overrides_of_the_wrong_kind_are_named() -> None:
    base = {"model_type": "gemma4_text", **SMALL, "num_hidden_layers": 2, "layer_types": ["full_attention",
                                                                                           "sliding_attention"]}
    for overrides, error, named in (({"0": 5}, TypeError, "config['per_layer_config']['0'] must be a dict"),
                                    ({"0": {"head_dim": [1]}}, TypeError, "['0']['head_dim'] must be an integer"),
                                    ({"1": {"head_dim": 2.0}}, TypeError, "['1']['head_dim'] must be an integer")):
        with pytest.raises(error) as caught:
            read_config({**base, "per_layer_config": overrides})
        assert named in str(caught.value)
    # keys are layer indices, as digits (a config object's dict has ints); other keys are not overrides
    assert read_config({**base, "per_layer_config": {"00": {"head_dim": 8}, "²": 5}}).layers["full_attention"].dim == 8
    assert read_config({**base, "per_layer_config": {0: {"head_dim": 8}}}).layers["full_attention"].dim == 8


def test_one_flat_set_of_parameters_for_a_model_that_reads_them_per_layer_type() -> None:
    # Gemma 4's config class keeps a flat rope_parameters as given; its rotary module then looks up
    # rope_parameters["sliding_attention"] and fails. posenc used to drop the flat set silently.
    for key in ("rope_parameters", "rope_scaling"):
        config = {"model_type": "gemma4_text", **SMALL, key: {"rope_type": "linear", "factor": 2.0}}
        with pytest.raises(ValueError, match=r"must map each layer type to its parameters for this model type "
                                             r"\('full_attention', 'sliding_attention'\)"):
            read_config(config)
    # where the config class puts a flat set on some layer types (Gemma 3: full attention), it is read
    gemma3 = read_config({"model_type": "gemma3_text", **SMALL, "rope_scaling": {"rope_type": "linear", "factor": 8.0}})
    assert gemma3.layers["full_attention"].scaling == {"type": "linear", "factor": 8.0}


@pytest.mark.parametrize(("scaling", "named"), [
    ({"rope_type": "dynamic", "factor": 1e300}, "scaling['factor'] must be <= 1000000.0"),
    ({"rope_type": "yarn", "factor": 2.0, "beta_fast": 1e308}, "scaling['beta_fast'] must be <= 1000000.0"),
    ({"rope_type": "yarn", "factor": 2.0, "beta_slow": 1e-300}, "scaling['beta_slow'] must be >= 1e-06"),
    ({"rope_type": "yarn", "factor": 4.0, "mscale": 1.0, "mscale_all_dim": 1e300}, "scaling['mscale_all_dim'] must be <="),
    ({"rope_type": "longrope", "factor": 2.0, "short_factor": [1e-320] * 8, "long_factor": [1.0] * 8},
     "scaling['short_factor'][0] must be >= 1e-06"),
    ({"rope_type": "longrope", "factor": 2.0, "short_factor": [1.0] * 8, "long_factor": [1e-9] * 8},
     "scaling['long_factor'][0] must be >= 1e-06"),
])
def test_scaling_settings_that_would_overflow_are_named(scaling: dict[str, Any], named: str) -> None:
    # DeepSeek-V3 (its softmax scale squares YaRN's mscale), head width 16, at a length past the trained one
    config = {"model_type": "deepseek_v3", **SMALL, "qk_rope_head_dim": 16, "rope_scaling": scaling}
    with pytest.raises(ValueError) as caught:
        read_config(config)
    assert named in str(caught.value)
    code, _, err = run_main(json.dumps(config), "--length", "9999999")
    assert code == 2 and named in err and err.count("\n") == 1


def test_temperature_settings_are_bounded_by_their_config_names() -> None:
    ministral = next(c for c in CONFIGS if c["model_type"] == "ministral3")
    config = {**ministral, "rope_parameters": {**ministral["rope_parameters"], "llama_4_scaling_beta": 1e7}}
    with pytest.raises(ValueError, match=r"rope_parameters\['llama_4_scaling_beta'\] must be <= 1000000.0"):
        read_config(config)


def test_the_readers_layout_names_are_the_rotations() -> None:
    """The reader names the two layouts without importing torch (posenc.configs._layer.LAYOUTS); they
    must be the names posenc.rope's rotation takes (posenc._rotary.LAYOUTS)."""
    from posenc import _rotary
    from posenc.configs import _layer

    assert _layer.LAYOUTS == _rotary.LAYOUTS
