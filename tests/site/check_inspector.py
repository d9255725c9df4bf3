"""The config inspector of the Explore page against posenc, in Chromium (run by check_explorer.py).

What "the same" means here:

* **Values**: every field of ``read_config`` (per layer type: rotates, dim, rotary_dim, layout,
  base, scaling, attention_factor, temperature, softmax_scale, window, layers, note; and the
  model's pattern, contexts, notes, sinks), ``from_config`` per layer type, and for each rotating
  layer ``rope_inverse_frequencies`` and ``rope_attention_scaling`` of its settings. Strings,
  bools, None and the order of every dict's keys are equal; numbers agree to 1e-9 relative.
* **Warnings**: the list of ``posenc.inspect.warnings_for`` strings, and of
  ``posenc.engines.engine_warnings`` (the engines known to compute the config otherwise), equal
  character for character: they are what the reader is told, written from the same data.
* **Errors**: for bad input, both refuse, with the same *kind* of error (``error_kind``): the
  Python exception's class (the JavaScript Error's ``name``) and what the message is about: the
  key path it names (``config['head_dim']``, ``scaling['factor']``), the unknown key, the setting
  it starts with (``rope_theta``, ``layout``), or "not JSON" for text that is not JSON. The
  wording is the Python's alone: the browser may say the same thing its own way (issue 31).

The inputs go to the page as JSON text, read there by the port of Python's JSON decoder, so that
``8.0`` reaches the JavaScript as a float and ``8`` as an int, as posenc sees them.

The widget itself (its menus, typed input, keyboard, links and screenshots) is checked by
``inspector_widget``, by these rules.
"""

from __future__ import annotations

import dataclasses
import json
import math
import random
import re
from pathlib import Path
from typing import Any

from posenc.configs import _table as _rope_table
from posenc.configs._params import _too_deep
from posenc.engines import engine_warnings
from posenc.inspect import warnings_for
from posenc.configs import from_config, read_config
from posenc.rope_scaling import rope_attention_scaling, rope_inverse_frequencies

__all__ = ["API_READING", "BAD_INPUTS", "ZOO", "api_cases", "check_api", "compare", "error_kind", "kinds", "mutations",
           "posenc_reading"]

ROOT = Path(__file__).resolve().parents[2]
ZOO = sorted((ROOT / "posenc" / "zoo").glob("*.json"))
TOLERANCE = 1e-9

# One bad input of each kind the issue names, with what posenc should name in its message (where
# the API and the widget differ, "API|widget": read_config refuses a list as the config, the widget
# and python -m posenc.inspect first refuse JSON that is not an object).
BAD_INPUTS: list[tuple[str, str, str]] = [
    ("not JSON: a missing comma", '{"model_type": "llama" "hidden_size": 4096}', "Expecting ',' delimiter"),
    ("not JSON: a trailing comma", '{"model_type": "llama",}', "Expecting property name"),
    ("not JSON: cut short", '{"model_type": "ll', "Unterminated string"),
    ("not JSON: empty", "", "Expecting value"),
    ("not an object", "[1, 2, 3]", "got list|got a list"),
    ("no attention settings", '{"model_type": "llama", "hidden_size": null}', "'hidden_size' and 'num_attention_heads'"),
    ("no model type", '{"hidden_size": 4096, "num_attention_heads": 32}', "layout is needed"),
    ("unknown key", '{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, '
     '"rope_scaling": {"rope_type": "linear", "factor": 2.0, "fator": 3}}', "unknown key 'fator'"),
    ("unknown rope type", '{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, '
     '"rope_scaling": {"rope_type": "super", "factor": 2.0}}', "rope_type must be one of"),
    ("negative base", '{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "rope_theta": -5.0}',
     "rope_theta must be > 0"),
    ("factor below 1", '{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, '
     '"rope_scaling": {"rope_type": "linear", "factor": 0.5}}', "scaling['factor'] must be >= 1.0"),
    ("infinite base", '{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "rope_theta": 1e400}',
     "rope_theta must be finite"),
    ("NaN base", '{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "rope_theta": NaN}',
     "rope_theta must be finite"),
    ("a float count", '{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "num_hidden_layers": 32.0}',
     "must be an integer, got float 32.0"),
    ("an absurd context", '{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, '
     '"max_position_embeddings": 1000000000000000000000000000000000000000}', "an integer of 130 bits"),
    # Phi: its rule reads the fraction (Llama's rotates the whole head and refuses any fraction but 1)
    ("an odd rotated width", '{"model_type": "phi", "hidden_size": 4096, "num_attention_heads": 32, '
     '"partial_rotary_factor": 0.34}', "rotated width must be a positive even integer, got 43"),
    ("a partial factor above 1", '{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, '
     '"partial_rotary_factor": 2.0}', "partial_rotary_factor must be <= 1.0"),
    ("a text factor", '{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, '
     '"rope_scaling": {"rope_type": "linear", "factor": "8"}}', "must be a real number, got str '8'"),
    ("two places disagree", '{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, '
     '"rope_scaling": {"rope_type": "linear", "factor": 2.0}, "rope_parameters": {"rope_type": "linear", "factor": 4.0}}',
     "config is inconsistent"),
    ("a huge head", '{"model_type": "llama", "head_dim": 100000, "hidden_size": 4096, "num_attention_heads": 32}',
     "config['head_dim'] must be an integer <= 65536"),
    ("nested too deeply", "[" * 3000 + "]" * 3000, "nested too deeply"),
    ("a null entry the model type does not fill in", '{"model_type": "step3p5", "hidden_size": 64, "num_attention_heads": 4, '
     '"rope_parameters": {"sliding_attention": {"rope_type": "default"}, "full_attention": null}}',
     "config['rope_parameters']['full_attention'] is None"),
    ("one set where each layer type needs its own", '{"model_type": "gemma4_text", "hidden_size": 64, '
     '"num_attention_heads": 4, "rope_scaling": {"rope_type": "linear", "factor": 2.0}}', "must map each layer type"),
    # Gemma3Config builds its text model from its defaults and drops a text key at its top level
    ("a key the wrapper's class drops", '{"model_type": "gemma3", "rope_local_base_freq": 5.0}',
     "config['rope_local_base_freq'] = 5.0 is not read"),
]


# What Python's json module and its callers say of text that is not JSON: one kind, "not JSON".
_NOT_JSON = re.compile(r"not JSON|nested too deeply|Expecting |Unterminated string|Invalid control character|"
                       r"Invalid \\escape|Invalid \\uXXXX|Extra data|Exceeds the limit|Unexpected UTF-8 BOM|"
                       r"Illegal trailing comma")  # the last: Python 3.14 (Pyodide 314)
_KEY_PATH = re.compile(r"\b\w+(?:\['[^']*'\])+")  # config['rope_parameters']['factor'], scaling['factor']
_SUBJECT = re.compile(r"(?:the )?([a-z_]+(?: [a-z_]+)*?) must\b")


def error_kind(error: str) -> str:
    """The kind of an error "Class: message": its class and what the message is about (see the
    module docstring), e.g. "TypeError: config['head_dim']", "ValueError: unknown key 'fator'"."""
    cls, _, message = error.partition(": ")
    if _NOT_JSON.match(message):
        return f"{cls}: not JSON"
    unknown = re.search(r"(?:unknown|missing the) key '[^']*'", message)
    if unknown:
        return f"{cls}: {unknown.group()}"
    path = _KEY_PATH.search(message)
    if path:
        return f"{cls}: {path.group()}"
    subject = _SUBJECT.match(message)
    if subject:
        return f"{cls}: {subject.group(1)}"
    return f"{cls}: " + " ".join(re.sub(r"(?<=\s)[-+(]?\d[\w.+-]*\)?", "", message.split(":")[0]).split()[:6])


def kinds(result: dict[str, Any]) -> dict[str, Any]:
    """A reading with each error (a refusal, or from_config's message for the whole config) as its kind."""
    if not result["ok"]:
        return {"ok": False, "error": error_kind(result["error"])}
    value = result["value"]
    if isinstance(value.get("from_config"), str):
        value = {**value, "from_config": error_kind(value["from_config"])}
    return {"ok": True, "value": value}


# ----------------------------------------------------------------------------------------------
# posenc's side


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _error(error: Exception) -> str:
    # json.JSONDecodeError is a ValueError; the port raises a ValueError with its message
    return f"{'ValueError' if isinstance(error, json.JSONDecodeError) else type(error).__name__}: {error}"


def posenc_reading(text: str, layout: str | None, length: int | None, widget: bool = False) -> dict[str, Any]:
    """What posenc makes of a config's text: read_config, warnings, from_config, frequencies. The
    widget (like ``python -m posenc.inspect``) first refuses JSON that is not an object."""
    try:
        try:
            config = json.loads(text)
        except RecursionError:  # the port's decoder says "nested too deeply"; the widget, as inspect, "not JSON (...)"
            return {"ok": False, "error": "ValueError: " + ("not JSON (nested too deeply)" if widget else "nested too deeply")}
        if widget and _too_deep(config):  # as python -m posenc.inspect
            raise ValueError("not JSON (nested too deeply)")
        if widget and not isinstance(config, dict):
            raise TypeError(f"the text must hold a JSON object (a config.json), got a {type(config).__name__}")
        rope = read_config(config, layout=layout)
        rotating = [layer.scaling for layer in rope.layers.values() if layer.rotates]
        out: dict[str, Any] = {"rope": _plain(rope), "warnings": warnings_for(rope, length, config),
                               "engines": engine_warnings(rope.model_type, rotating), "layers": {}}
        for name, layer in rope.layers.items():
            if not layer.rotates:
                continue
            kwargs = from_config(config, name, layout=layout)
            theta = rope_inverse_frequencies(kwargs["dim"], base=kwargs["base"], scaling=kwargs["scaling"],
                                             seq_len=length, rotary_dim=kwargs["rotary_dim"])
            out["layers"][name] = {"kwargs": _plain(kwargs), "theta": theta.tolist(),
                                   "attention_factor": rope_attention_scaling(kwargs["scaling"])}
        try:
            out["from_config"] = _plain(from_config(config, layout=layout))
        except (ValueError, TypeError) as error:
            out["from_config"] = _error(error)
        return {"ok": True, "value": out}
    except (ValueError, TypeError, OverflowError) as error:
        return {"ok": False, "error": _error(error)}


# ----------------------------------------------------------------------------------------------
# the page's side

API_READING = """([cases]) => cases.map(([text, layout, length]) => {
  const F = window.posencExplorer;
  try {
    const config = F.parseJSON(text);
    const rope = F.ropeReadConfig(config, {layout});
    const rotating = Object.values(rope.layers).filter((layer) => layer.rotates).map((layer) => layer.scaling);
    const out = {rope, warnings: F.ropeWarnings(rope, length, config),
                 engines: window.posencRopeEngines.engineWarnings(rope.model_type, rotating).map((w) => w.text), layers: {}};
    for (const [name, layer] of Object.entries(rope.layers)) {
      if (!layer.rotates) continue;
      const kwargs = F.ropeFromConfig(config, name, {layout});
      out.layers[name] = {kwargs, theta: F.ropeInverseFrequencies(kwargs.dim, kwargs.base, kwargs.scaling, length, kwargs.rotary_dim),
                          attention_factor: F.ropeAttentionScaling(kwargs.scaling)};
    }
    try { out.from_config = F.ropeFromConfig(config, null, {layout}); } catch (e) { out.from_config = `${e.name}: ${e.message}`; }
    return JSON.stringify({ok: true, value: out}, (k, v) => (typeof v === "bigint" ? Number(v) : v));
  } catch (error) {
    return JSON.stringify({ok: false, error: `${error.name}: ${error.message}`});
  }
})"""


def compare(ours: Any, theirs: Any, path: str = "") -> list[str]:
    """Differences between the JavaScript's value and posenc's (see the module docstring)."""
    if isinstance(theirs, bool) or theirs is None or isinstance(theirs, str):
        return [] if ours == theirs and type(ours) is type(theirs) else [f"{path}: JavaScript {ours!r:.120}, posenc {theirs!r:.120}"]
    if isinstance(theirs, (int, float)):
        if isinstance(ours, bool) or not isinstance(ours, (int, float)):
            return [f"{path}: JavaScript {ours!r:.80}, posenc {theirs!r}"]
        if ours == theirs or (math.isnan(theirs) and math.isnan(ours)):
            return []
        return [] if abs(ours - theirs) <= TOLERANCE * abs(theirs) else [f"{path}: JavaScript {ours!r}, posenc {theirs!r}"]
    if isinstance(theirs, list):
        if not isinstance(ours, list) or len(ours) != len(theirs):
            return [f"{path}: JavaScript {ours!r:.120}, posenc {theirs!r:.120}"]
        return [d for i, (a, b) in enumerate(zip(ours, theirs)) for d in compare(a, b, f"{path}[{i}]")]
    if isinstance(theirs, dict):
        if not isinstance(ours, dict) or list(ours) != list(theirs):
            return [f"{path}: keys {list(ours) if isinstance(ours, dict) else ours!r:.120}, posenc {list(theirs)!r:.120}"]
        return [d for key in theirs for d in compare(ours[key], theirs[key], f"{path}.{key}")]
    return [f"{path}: cannot compare {theirs!r:.60}"]


def mutations(count: int, seed: int = 24) -> list[str]:
    """Zoo configs with one or two values replaced, removed or added (seeded): wrong types, NaN,
    inf, huge and negative numbers, floats for ints, unknown keys."""
    rng = random.Random(seed)
    values = ["-1", "0", "0.5", "2.0", "1e400", "NaN", '"8"', "null", "true", "[]", "{}", "1" + "0" * 40, str(2**53 + 1),
              "4096.0", "3", "7", "1.0", "[1, 2]", '{"rope_type": "yarn"}', '"yarn"', '["full_attention", "sliding_attention"]',
              "1e-300", "65537"]
    keys = ["fator", "rope_type", "type", "factor", "partial_rotary_factor", "rope_theta", "head_dim", "layer_types",
            "no_rope_layers", "sliding_window", "original_max_position_embeddings"]
    configs = [json.loads(path.read_text()) for path in ZOO]

    def paths(obj: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
        found = []
        if isinstance(obj, dict):
            for key, value in obj.items():
                if not key.startswith("_"):
                    found += [prefix + (key,), *paths(value, prefix + (key,))]
        return found

    def mutate(config: dict[str, Any]) -> dict[str, Any]:
        config = json.loads(json.dumps(config))
        path = rng.choice(paths(config))
        parent = config
        for key in path[:-1]:
            parent = parent[key]
        roll = rng.random()
        if roll < 0.15:
            del parent[path[-1]]
        else:
            parent[rng.choice(keys) if roll < 0.3 else path[-1]] = "@@"
        return config

    texts = []
    for _ in range(count):
        config = mutate(rng.choice(configs))
        if rng.random() < 0.3:
            config = mutate(config)
        texts.append(json.dumps(config).replace('"@@"', rng.choice(values)))
    return texts


# ----------------------------------------------------------------------------------------------
# the checks


def _read_in_page(page: Any, cases: list[tuple[str, str | None, int | None]]) -> list[dict[str, Any]]:
    return [json.loads(text) for text in page.evaluate(API_READING, [cases])]


def _report(check: Any, where: str, ours: dict[str, Any], theirs: dict[str, Any]) -> bool:
    differences = compare(ours, theirs)
    if differences:
        check.fail(where, "; ".join(differences[:3]) + (f" (and {len(differences) - 3} more)" if len(differences) > 3 else ""))
    return not differences


def api_cases() -> tuple[list[tuple[str, str | None, int | None]], int, int]:
    """The (text, layout, length) cases of ``check_api``: every zoo config (three layouts, three
    lengths), a generic config of every model type of the table, every kind of bad input, and
    seeded mutations of the zoo; with the number of zoo cases and of model-type cases."""
    cases: list[tuple[str, str | None, int | None]] = []
    for path in ZOO:
        text = path.read_text()
        cases += [(text, layout, length) for layout in (None, "half", "interleaved") for length in (None, 1000, 300000)]
    zoo_cases = len(cases)
    for model_type in _rope_table.model_types():
        config = {"model_type": model_type, "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 6,
                  "max_position_embeddings": 1024}
        cases += [(json.dumps(config), None, None), (json.dumps(config), "half", 2048)]
    types_cases = len(cases) - zoo_cases
    cases += [(text, None, None) for _, text, _ in BAD_INPUTS]
    cases += [(text, layout, length) for text, layout, length in
              zip(mutations(600), [None, "half", None, "interleaved"] * 150, [None, None, 5000, 300000] * 150)]
    return cases, zoo_cases, types_cases


def check_api(page: Any, check: Any) -> None:
    """ropeReadConfig, ropeFromConfig, ropeWarnings, the engines' warnings and the frequencies
    against posenc on ``api_cases``."""
    cases, zoo_cases, types_cases = api_cases()
    results = _read_in_page(page, cases)
    refused = agreed = 0
    for index, ((text, layout, length), ours) in enumerate(zip(cases, results)):
        theirs = posenc_reading(text, layout, length)
        label = json.loads(text).get("_name", "") if ours["ok"] and text.startswith("{") else ""
        where = f"config #{index} {label} (layout={layout}, length={length})"
        if _report(check, where, kinds(ours), kinds(theirs)):
            agreed += 1
            refused += not theirs["ok"]
    check.count("configs read alike (values, warnings, or the same kind of error)", agreed)
    print(f"  configs: {zoo_cases} zoo readings, {types_cases} model types, {len(BAD_INPUTS)} bad inputs, 600 mutations; "
          f"{agreed} of {len(cases)} read alike, {refused} of them refused with the same kind of error")
    for (kind, text, named), ours in zip(BAD_INPUTS, results[zoo_cases + types_cases:]):
        theirs = posenc_reading(text, None, None)
        named = named.split("|")[0]  # each bad input is refused by posenc for the reason it stands for
        if ours["ok"] or theirs["ok"] or named not in theirs["error"]:
            check.fail(f"bad input: {kind}", f"posenc should refuse it naming {named!r}: {theirs!r:.200}; page: {ours!r:.200}")
