"""Parity of the explorer's RoPE frequencies and attention scaling with posenc, for every scaling
type posenc accepts (enumerated from posenc), with the arguments sent as JSON text and bad input
refused alike (the same kind of error): see ``check_explorer``'s docstring (1).
"""

from __future__ import annotations

import importlib
import json
from typing import Any

from posenc import rope as posenc_rope
from tests.site.check_inspector import error_kind
from tests.site.explorer_parity import TOLERANCE, Checker, _compare_lists, _relative_error

__all__ = ["PENDING_SCALING_TYPES", "SCALING_VALUES", "check_rope", "posenc_scaling_types", "scaling_dicts"]

# Scaling types posenc accepts that the JavaScript does not have yet (reported, not failed).
PENDING_SCALING_TYPES: set[str] = set()
# Values tried for each key of posenc's scaling dicts; a key missing here fails the check. A callable
# is given the number of pairs (dim // 2): LongRoPE's lists hold one factor per pair.
SCALING_VALUES: dict[str, list[Any]] = {
    "factor": [1.0, 2.0, 8.0, 32.0],
    "original_max_position_embeddings": [2048, 4096],
    "beta_fast": [32.0, 16.0],
    "beta_slow": [1.0, 2.0],
    "attention_factor": [1.5],
    "truncate": [True, False],
    "low_freq_factor": [1.0, 2.0],
    "high_freq_factor": [4.0, 8.0],
    "mscale": [1.0, 0.707],
    "mscale_all_dim": [0.5, 1.0],
    "partial_rotary_factor": [0.5, 0.0, 0.3, 1.0],
    "max_position_embeddings": [8192, 131072],
    "short_factor": [lambda pairs: [1.0 + 0.05 * i for i in range(pairs)]],
    "long_factor": [lambda pairs: [1.0 + 0.5 * i for i in range(pairs)]],
}


def _scaling_module() -> Any:
    """Where posenc keeps its scaling rules: posenc.rope_scaling once split out of posenc.rope."""
    try:
        return importlib.import_module("posenc.rope_scaling")
    except ImportError:
        return posenc_rope


rope_inverse_frequencies = _scaling_module().rope_inverse_frequencies
rope_attention_scaling = _scaling_module().rope_attention_scaling


def posenc_scaling_types() -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """Every scaling type posenc accepts, with its required and optional keys."""
    module = _scaling_module()
    types = tuple(module.SCALING_TYPES)
    required: dict[str, tuple[str, ...]] = getattr(module, "_REQUIRED")
    optional: dict[str, tuple[str, ...]] = getattr(module, "_OPTIONAL", {})
    return {kind: (tuple(required.get(kind, ())), tuple(optional.get(kind, ()))) for kind in types}


def scaling_dicts(kind: str, required: tuple[str, ...], optional: tuple[str, ...], pairs: int) -> list[dict[str, Any]]:
    """A small grid of scaling dicts for one type: each required key over its values (others at
    their first value), each optional key added alone, then all optional keys together (a dict
    posenc refuses, such as LongRoPE without a factor, must be refused alike)."""
    missing = [key for key in (*required, *optional) if key not in SCALING_VALUES]
    if missing:
        raise KeyError(f"no test values for the keys {missing} of scaling type {kind!r}: add them to SCALING_VALUES")

    def values(key: str) -> list[Any]:
        return [v(pairs) if callable(v) else v for v in SCALING_VALUES[key]]

    first = {"type": kind, **{key: values(key)[0] for key in required}}
    dicts = [first]
    for key in required:
        dicts += [{**first, key: value} for value in values(key)[1:]]
    for key in optional:
        dicts += [{**first, key: value} for value in values(key)]
    if len(optional) > 1:
        dicts.append({**first, **{key: values(key)[0] for key in optional}})
        dicts.append({**first, **{key: values(key)[0] for key in optional if key != "attention_factor"}})
    return dicts


def _short(scaling: dict[str, Any] | None) -> str:
    """A scaling dict for messages, its per-pair lists abbreviated."""
    if scaling is None:
        return "None"
    return "{" + ", ".join(f"{k}: " + (f"[{len(v)} numbers]" if isinstance(v, list) else repr(v))
                           for k, v in scaling.items()) + "}"


def _posenc_or_error(function: Any, *args: Any, **kwargs: Any) -> tuple[bool, Any]:
    try:
        return True, function(*args, **kwargs)
    except (ValueError, TypeError) as error:
        return False, error


CALL_TYPED = """([name, texts]) => texts.map((text) => {
  const args = window.posencExplorer.parseJSON(text);
  try { return {ok: true, value: window.posencExplorer[name](...args)}; }
  catch (error) { return {ok: false, error: `${error.name}: ${error.message}`}; }
})"""


def _call_typed(page: Any, name: str, calls: list[list[Any]]) -> list[dict[str, Any]]:
    """Call with arguments sent as JSON text, read in the page by the port of Python's JSON decoder:
    4096.0 stays a float and 4096 an int, as posenc sees them."""
    return list(page.evaluate(CALL_TYPED, [name, [json.dumps(args) for args in calls]]))


def _same_outcome(check: Checker, where: str, result: dict[str, Any], function: Any, *args: Any, **kwargs: Any) -> Any:
    """posenc's value if both accept; a failure unless both refuse with the same kind of error (the
    class and what the message is about: ``check_inspector.error_kind``)."""
    ok, expected = _posenc_or_error(function, *args, **kwargs)
    if not ok:
        message = f"{type(expected).__name__}: {expected}"
        if result["ok"]:
            check.fail(where, f"JavaScript accepted what posenc refuses ({message})")
        elif error_kind(result["error"]) != error_kind(message):
            check.fail(where, f"JavaScript says {result['error']!r} ({error_kind(result['error'])}), posenc {message!r} "
                              f"({error_kind(message)})")
        else:
            check.count("bad inputs refused with posenc's kind of error")
        return None
    if not result["ok"]:
        check.fail(where, result["error"])
        return None
    return expected


def check_rope(page: Any, check: Checker) -> None:
    types = posenc_scaling_types()
    print(f"  posenc scaling types: {', '.join(types)}"
          + (f" (pending in the JavaScript: {', '.join(sorted(PENDING_SCALING_TYPES & set(types)))})"
             if PENDING_SCALING_TYPES & set(types) else ""))
    grid: list[tuple[int, float, dict[str, Any] | None, int | None, int | None]] = []
    scalings: list[dict[str, Any] | None] = [None]
    for dim in (2, 4, 8, 64, 128):
        for_dim: list[dict[str, Any] | None] = [None]
        for kind, (required, optional) in types.items():
            if kind in PENDING_SCALING_TYPES:
                continue
            try:
                for_dim += scaling_dicts(kind, required, optional, dim // 2)
            except KeyError as error:
                check.fail("ropeInverseFrequencies", str(error))
                return
        if dim == 8:
            scalings = for_dim
        grid += [(dim, b, s, n, None) for b in (10000.0, 500000.0) for s in for_dim for n in (None, 1024, 20000)]
        if dim >= 8:  # partial rotary: the lists of LongRoPE then have one entry per pair of the full width
            grid += [(dim, 10000.0, s, n, dim // 2) for s in for_dim for n in (None, 20000)]
    results = _call_typed(page, "ropeInverseFrequencies", [list(args) for args in grid])
    supported: set[str] = set()
    for (dim, base, scaling, seq_len, rotary_dim), result in zip(grid, results):
        where = f"ropeInverseFrequencies({dim}, {base}, {_short(scaling)}, {seq_len}, {rotary_dim})"
        expected = _same_outcome(check, where, result, rope_inverse_frequencies, dim, base=base, scaling=scaling,
                                 seq_len=seq_len, rotary_dim=rotary_dim)
        if expected is None:
            continue
        supported.add(scaling["type"] if scaling else "none")
        _compare_lists(check, where, result["value"], expected.tolist())
        check.count("ropeInverseFrequencies values", len(expected))
    for kind in types:
        if kind not in supported and kind not in PENDING_SCALING_TYPES:
            check.fail("ropeInverseFrequencies", f"scaling type {kind!r} of posenc is not supported by the JavaScript")
    results = _call_typed(page, "ropeAttentionScaling", [[s] for s in scalings])
    for scaling, result in zip(scalings, results):
        where = f"ropeAttentionScaling({_short(scaling)})"
        expected = _same_outcome(check, where, result, rope_attention_scaling, scaling)
        if expected is not None and not _relative_error(result["value"], expected) < TOLERANCE:
            check.fail(where, f"{result['value']} != posenc's {expected}")
        check.count("ropeAttentionScaling values")
    # bad input: the same class as posenc, about the same thing
    bad: list[list[Any]] = [
        [8, 10000.0, {"type": "nope", "factor": 2.0}, None, None], [7, 10000.0, None, None, None],
        [8, 10000.0, {"type": "linear", "factor": 2.0, "typo": 1}, None, None], [8, 10000.0, {"type": "linear"}, None, None],
        [8, 1.0, None, None, None], [8, -3.0, None, None, None], [8, "10000", None, None, None], [8.0, 10000.0, None, None, None],
        [2**17, 10000.0, None, None, None], [8, 10000.0, None, 0, None], [8, 10000.0, None, 2**60, None],
        [8, 10000.0, None, None, 10], [8, 10000.0, None, None, 3],
        [8, 10000.0, {"type": "proportional", "partial_rotary_factor": 0.5}, None, 4],
        [2, 10000.0, {"type": "ntk", "factor": 2.0}, None, None],
        [8, 10000.0, {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096.0}, None, None],
        [8, 10000.0, {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096, "beta_fast": 1.0,
                      "beta_slow": 2.0}, None, None],
        [8, 10000.0, {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096, "truncate": 1}, None, None],
        [8, 10000.0, {"type": "llama3", "factor": 8.0, "low_freq_factor": 4.0, "high_freq_factor": 1.0,
                      "original_max_position_embeddings": 8192}, None, None],
        [8, 10000.0, {"type": "longrope", "original_max_position_embeddings": 4096, "short_factor": [1.0] * 4,
                      "long_factor": [1.0] * 3, "factor": 2.0}, None, None],
        [8, 10000.0, {"type": "longrope", "original_max_position_embeddings": 4096, "short_factor": [1.0] * 4,
                      "long_factor": [1.0] * 4}, None, None],
        [8, 10000.0, {"type": "linear", "factor": float("nan")}, None, None],
        [8, 10000.0, {"factor": 2.0}, None, None], [8, 10000.0, [1, 2], None, None],
    ]
    for args, result in zip(bad, _call_typed(page, "ropeInverseFrequencies", bad)):
        _same_outcome(check, f"ropeInverseFrequencies{tuple(map(_short_arg, args))}", result, rope_inverse_frequencies,
                      args[0], base=args[1], scaling=args[2], seq_len=args[3], rotary_dim=args[4])


def _short_arg(value: Any) -> Any:
    return _short(value) if isinstance(value, dict) else value
