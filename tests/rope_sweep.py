"""The sweep: `read_config` against transformers on configs of every model type, not only the zoo.

For every model type of ``posenc/configs/model_types.json`` that has RoPE settings of its own (wrappers
are read as their text model), a few config.json dicts are built the way people write them: the
model type and its head sizes and nothing else, then with a flat ``rope_scaling`` (linear, YaRN), a
flat ``rope_parameters`` (with and without a base), a ``layer_types`` list in another pattern than
the class's, a ``no_rope_layers`` list where the model reads one, 5 and 13 layers, and for the
classes with one RoPE per layer type an entry set to null (with the class's base keys and without),
entries without a base next to a top-level one, and a flat set next to the base keys. Each is read
by posenc and by transformers' config class, rotary module and rotation function
(``tests/rope_live.py``), layer type by layer type; where posenc asks for the layout, with each.

An outcome is one of: ``ok`` (they agree, layer pattern included), ``refused`` (posenc raises a
ValueError / TypeError naming the key), ``transformers fails`` (transformers' config class or
rotary code raises on the config; posenc's answer cannot be compared), ``MISMATCH`` (a silent
difference), ``crash`` (posenc raises anything else). Every ``MISMATCH`` and ``crash`` is a bug.

``python -m tests.rope_sweep [MODEL_TYPE ...]`` runs it and prints the counts and every bug (the
full sweep takes a few minutes); ``tests/test_rope_sweep.py`` runs a sample in the suite.
"""

from __future__ import annotations

import argparse
import collections
import json
import logging
import sys
import time
import warnings
from typing import Any

import torch

from posenc.configs import _table as _rope_table
from posenc.rope import RotaryEmbedding
from posenc.configs import ConfigRope, read_config
from tests import rope_live
from tools.rope_model_types import derive

# positions inside and past the contexts of today's models, small enough that transformers' float32
# angles stay within the comparison's tolerance
POSITIONS = torch.tensor([0, 1, 2, 7, 100, 1000, 4095, 4096, 5000, 40000, 70000])
SIZE_KEYS = ("hidden_size", "num_attention_heads", "d_model", "n_embd", "n_head", "num_heads", "n_heads")
BUGS = ("MISMATCH", "crash")


def model_types() -> list[str]:
    """The model types with RoPE settings of their own (not wrappers, not model types without RoPE)."""
    return [m for m, v in _rope_table.model_types().items()
            if v.get("rope", True) and not set(v) <= _rope_table._WRAPPER_KEYS]


def _class_defaults(model_type: str) -> Any:
    return derive._text_config(derive._model_types()[model_type])


def cases(model_type: str) -> dict[str, dict[str, Any]]:
    """The configs of one model type, by name."""
    text = _class_defaults(model_type)
    values = text.to_dict()
    base = {"model_type": model_type, **{k: values[k] for k in SIZE_KEYS if values.get(k) is not None}}
    out = {"defaults": {"num_hidden_layers": 6}, "layers-5": {"num_hidden_layers": 5},
           "layers-13": {"num_hidden_layers": 13},
           "scaling-linear": {"num_hidden_layers": 6, "rope_scaling": {"rope_type": "linear", "factor": 4.0}},
           "scaling-yarn": {"num_hidden_layers": 6, "rope_scaling": {"rope_type": "yarn", "factor": 4.0,
                                                                       "original_max_position_embeddings": 2048}},
           "parameters-flat": {"num_hidden_layers": 6, "rope_parameters": {"rope_type": "linear", "factor": 4.0}},
           "parameters-flat-theta": {"num_hidden_layers": 6,
                                     "rope_parameters": {"rope_type": "linear", "factor": 4.0, "rope_theta": 50000.0}}}
    kinds = list(dict.fromkeys(getattr(text, "layer_types", None) or []))
    if kinds == ["full_attention"]:
        kinds.append("sliding_attention")
    if kinds:  # another pattern than the class's, ending in another kind than its last layer
        out["layer-types"] = {"num_hidden_layers": 6, "layer_types": [kinds[(i + 1) % len(kinds)] for i in range(6)]}
    if "no_rope_layers" in _rope_table.model_types()[model_type].get("rope_condition", ()):  # Llama 4, SmolLM3
        out["no-rope-layers"] = {"num_hidden_layers": 6, "no_rope_layers": [1, 0, 0, 1, 1, 0]}
    params = getattr(text, "rope_parameters", None)
    if isinstance(params, dict) and params and all(isinstance(v, dict) or v is None for v in params.values()):
        names = list(params)
        out["null-entry"] = {"num_hidden_layers": 6, "rope_parameters": {
            names[0]: None, **{t: {"rope_type": "default", "rope_theta": 20000.0} for t in names[1:]}}}
        out["entries-without-base"] = {"num_hidden_layers": 6, "rope_theta": 50000.0,
                                       "rope_parameters": {t: {"rope_type": "default"} for t in names}}
        # the class's own base keys given too (Gemma 3's rope_local_base_freq): a class may fill a
        # null entry from them, or rebuild every entry once one is null (Step 3.5)
        bases = {key: 5000 for key in _rope_table.model_types()[model_type].get("base_keys", {}).values()}
        out["null-entry-with-bases"] = {"num_hidden_layers": 6, "rope_theta": 30000.0, **bases, "rope_parameters": {
            names[0]: None, **{t: {"rope_type": "default"} for t in names[1:]}}}
        out["flat-with-bases"] = {"num_hidden_layers": 6, "rope_theta": 30000.0, **bases,
                                  "rope_parameters": {"rope_type": "linear", "factor": 4.0}}
        out["scaling-with-bases"] = {"num_hidden_layers": 6, "rope_theta": 30000.0, **bases,
                                     "rope_scaling": {"rope_type": "linear", "factor": 4.0}}
    return {name: {**base, **extra} for name, extra in out.items()}


def check_pattern(rope: ConfigRope, text: Any) -> None:
    """posenc's layer pattern is transformers' ``layer_types`` (where posenc claims one)."""
    types = getattr(text, "layer_types", None)
    if rope.pattern and isinstance(types, list):
        assert [name.removesuffix(":nope") for name in rope.pattern] == list(types), (rope.pattern, types)


def outcome(config: dict[str, Any]) -> tuple[str, str]:
    """What reading ``config`` gives: (outcome, detail). Where posenc asks for the layout (a model
    type whose layout it does not derive), the rest of its reading is checked with each layout:
    ``ok`` if one of them agrees, ``MISMATCH`` if what does not depend on the layout differs."""
    first = _outcome(config, None)
    if first[0] != "refused" or not first[1].startswith("layout is needed"):
        return first
    tries = [_outcome(config, layout) for layout in ("half", "interleaved")]
    if any(o == "ok" for o, _ in tries):
        return "ok", "with a layout given"
    if all(o == "MISMATCH" and ("rotated" in d or "inverse frequencies" in d) for o, d in tries) and \
            _same_frequencies(config):
        return "refused", first[1]  # the same frequencies, paired otherwise: a layout posenc rightly does not claim
    return next(((o, d) for o, d in tries if o in BUGS), tries[0])


def _same_frequencies(config: dict[str, Any]) -> bool:
    """Whether every rotating kind of layer has transformers' frequencies, in some order (Ernie 4.5
    VL orders them for its 3-D positions: a pairing of features neither layout describes)."""
    rope = read_config(json.loads(json.dumps(config)), layout="half")
    ref = rope_live.Reference(rope_live.transformers_config(config))
    for name, layer in rope.layers.items():
        if layer.rotates:
            ours = RotaryEmbedding(**layer.rotary_kwargs()).inv_freq.double().sort().values
            theirs = ref.inv_freq(ref.layer_type(name)).double().sort().values
            if ours.shape != theirs.shape or not torch.allclose(ours, theirs, rtol=4e-6, atol=0):
                return False
    return True


def _outcome(config: dict[str, Any], layout: str | None) -> tuple[str, str]:
    try:
        text = rope_live.transformers_config(config)
    except Exception as error:  # noqa: BLE001 - transformers' config class refuses the config
        text, failed = None, f"{type(error).__name__}: {error}"
    try:
        rope = read_config(json.loads(json.dumps(config)), layout=layout)
    except (ValueError, TypeError) as error:
        return "refused", str(error)
    except Exception as error:  # noqa: BLE001 - anything else is a bug
        return "crash", f"{type(error).__name__}: {error}"
    if text is None:
        return "transformers fails", failed
    try:
        ref = rope_live.Reference(text)
        for name, layer in rope.layers.items():  # transformers' rotary code must run for every kind
            if layer.rotates and layer.dim is not None:
                ref.runs(name, layer.dim)
    except Exception as error:  # noqa: BLE001 - its rotary module cannot be built or run on it
        return "transformers fails", f"{type(error).__name__}: {error}"
    try:
        rope_live.check_config(json.loads(json.dumps(config)), POSITIONS, layout)
        check_pattern(rope, text)
    except AssertionError as error:
        return "MISMATCH", str(error)
    except Exception as error:  # noqa: BLE001
        return "crash", f"{type(error).__name__}: {error}"
    return "ok", ""


def sweep(types: list[str] | None = None) -> dict[str, dict[str, tuple[str, str]]]:
    """Every case of every model type (or of ``types``): {model_type: {case: (outcome, detail)}}."""
    logging.disable(logging.WARNING)
    warnings.filterwarnings("ignore")
    results: dict[str, dict[str, tuple[str, str]]] = {}
    for model_type in types or model_types():
        try:
            configs = cases(model_type)
        except Exception as error:  # noqa: BLE001 - transformers cannot build the class at its defaults
            results[model_type] = {"class": ("transformers fails", f"{type(error).__name__}: {error}")}
            continue
        results[model_type] = {name: outcome(config) for name, config in configs.items()}
    return results


def summary(results: dict[str, dict[str, tuple[str, str]]]) -> str:
    counts = collections.Counter(o for cases_ in results.values() for o, _ in cases_.values())
    refusals = collections.Counter(detail.split(":")[0][:70] for cases_ in results.values()
                                   for o, detail in cases_.values() if o == "refused")
    lines = [f"{len(results)} model types, {sum(counts.values())} configs: "
             + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))]
    lines += [f"  refused {n}x: {why}" for why, n in refusals.most_common(12)]
    lines += [f"  {o}: {m} / {c}: {d[:200]}" for m, cases_ in results.items() for c, (o, d) in cases_.items()
              if o in BUGS]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model_types", nargs="*", help="only these model types (default: every one)")
    parser.add_argument("--json", help="also write every outcome to this file")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    results = sweep(args.model_types or None)
    print(summary(results))
    print(f"({time.perf_counter() - start:.0f} s)")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(results, out, indent=1)
    return 1 if any(o in BUGS for cases_ in results.values() for o, _ in cases_.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
