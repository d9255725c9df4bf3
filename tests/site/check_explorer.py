"""Check the interactive explorer (docs/explore.md) in a real browser, against posenc.

Run on a built site (``make check-site`` builds it first)::

    python -m tests.site.check_explorer --site-dir site --screenshots site-screenshots

It builds nothing. It serves ``--site-dir`` on 127.0.0.1 (the server of ``check_site.py``), opens
the Explore page in Debian's ``/usr/bin/chromium`` through Playwright, and checks:

1. **Parity**: ``window.posencExplorer`` holds exactly the functions of ``FUNCTIONS``. Each is
   called over a grid of parameters (one ``page.evaluate`` per function) and compared with posenc
   in float64, in this process: relative error below 1e-9 (for the sinusoidal table, whose entries
   lie in [-1, 1], the error is taken relative to max(|value|, 1)); T5 buckets equal, except for
   an offset whose log-bucket position lies within float32 rounding of a bucket boundary, where
   the bucket depends on float32 rounding and on the float32 ``log`` used (posenc's float32 formula
   and exact arithmetic can disagree there, and so can PyTorch's float32 log and a correctly
   rounded one: see the T5 section of docs/relative.md): there either bucket next to the boundary
   is accepted, and such offsets are counted. ``ropeInverseFrequencies`` and
   ``ropeAttentionScaling`` are called for every scaling type posenc accepts, enumerated from posenc
   (``SCALING_TYPES`` and its table of required and optional keys), with and without a rotary
   width: a type the JavaScript lacks fails unless it is listed in ``PENDING_SCALING_TYPES``. Their
   arguments reach the page as JSON text read by the port of Python's JSON decoder (so that a float
   stays a float), and bad input must be refused by both with the same exception class and the same
   message. The config functions (``ropeReadConfig``, ``ropeFromConfig``, ``ropeWarnings``) are
   checked by ``check_inspector.py`` on the zoo, every model type and every kind of bad input.
2. **Keyboard**: every visible control of every widget is focused and moved with the keyboard
   (arrow keys for sliders and lists, Space for a checkbox, Enter for a button); the drawing, the
   live readout (``aria-live``) and, for sliders and lists, the announced value must change. Every
   scaling type's own controls are exercised. Each update's time (the widget's ``data-update-ms``,
   computing and drawing) is printed next to the 50 ms budget; a slow update is reported, not
   failed: timings depend on the machine's load, so the budget is judged by ``make bench``
   (``benchmarks/bench_site.py``), never by a test.
3. **Palettes and accessibility**: after Material's palette toggle the drawings must change
   (they follow the palette); axe-core (``node_modules/axe-core``) runs in both palettes and any
   violation of impact "serious" or "critical" fails.
4. **Progressive enhancement**: without JavaScript, and when printing (``beforeprint`` and print
   media), each placeholder shows its static figure and no widget.
5. Console errors, page errors, failed requests and requests to other hosts fail.
6. **The config inspector** (``check_inspector.py``): its numbers, warnings and messages against
   posenc for every zoo config and each kind of bad input, the last good result kept, its
   keyboard use and the links of its findings.
7. **Screenshots** of the page at 1280 and 390 px wide, light and dark, and of the inspector at
   1280 px (light) and 390 px (dark), under ``--screenshots``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import statistics
import sys
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

import torch

from posenc import rope as posenc_rope
from posenc.alibi import alibi_slopes
from posenc.sinusoidal import sinusoidal_encoding
from posenc.relative import t5_relative_position_bucket
from tests.site import check_inspector
from tests.site.check_site import AXE, AXE_RUN, BLOCKING_IMPACTS, _launch, base_path, serve

PAGE = "explore/"
FUNCTIONS = sorted(["alibiSlopes", "parseJSON", "ropeAttentionScaling", "ropeFromConfig", "ropeInverseFrequencies",
                    "ropeQueryTemperature", "ropeReadConfig", "ropeWarnings", "sinusoidalEncoding",
                    "t5RelativePositionBucket"])
WIDGETS = ["sinusoidal", "rope-scaling", "rope-rotation", "alibi", "t5-buckets", "rope-inspector"]
# Widgets with their own check (check_inspector.py) rather than the generic keyboard walk.
OWN_CHECK = {"rope-inspector"}
TOLERANCE = 1e-9
UPDATE_BUDGET_MS = 50.0
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

CALL_ALL = """([name, calls]) => calls.map((args) => {
  try { return {ok: true, value: window.posencExplorer[name](...args)}; }
  catch (error) { return {ok: false, error: `${error.name}: ${error.message}`}; }
})"""

WIDGET_STATE = """(name) => {
  const host = document.querySelector(`.posenc-explorer[data-widget="${name}"]`);
  const svgs = [...host.querySelectorAll("svg.posenc-explorer__plot")].map((s) => s.outerHTML).join("\\n");
  const readout = host.querySelector(".posenc-explorer__readout");
  return {drawing: svgs, readout: readout ? readout.textContent : "",
          live: readout ? readout.getAttribute("aria-live") : null,
          ms: Number(host.querySelector(".posenc-explorer__widget").dataset.updateMs)};
}"""

CONTROLS = """(name) => {
  const host = document.querySelector(`.posenc-explorer[data-widget="${name}"]`);
  return [...host.querySelectorAll("input, select, button")].filter((e) => e.offsetParent !== null).map((e) => ({
    id: e.id, tag: e.tagName.toLowerCase(), type: e.type || "",
    label: e.labels && e.labels.length ? e.labels[0].textContent : (e.getAttribute("aria-label") || e.textContent)}));
}"""

ANNOUNCED = """(selector) => {
  const e = document.querySelector(selector);
  if (e.tagName === "SELECT") return e.options[e.selectedIndex].textContent;
  if (e.type === "checkbox") return String(e.checked);
  if (e.tagName === "BUTTON") return e.textContent + " " + (e.getAttribute("aria-pressed") || "");
  return e.getAttribute("aria-valuetext") || e.value;
}"""


class Checker:
    def __init__(self) -> None:
        self.problems: list[str] = []
        self.counts: dict[str, int] = {}

    def fail(self, where: str, detail: str) -> None:
        self.problems.append(f"{where}: {detail}")

    def count(self, what: str, n: int = 1) -> None:
        self.counts[what] = self.counts.get(what, 0) + n


# ----------------------------------------------------------------------------------------------
# parity


def _call(page: Any, name: str, calls: list[list[Any]]) -> list[dict[str, Any]]:
    return list(page.evaluate(CALL_ALL, [name, calls]))


def _relative_error(ours: float, theirs: float, floor: float = 0.0) -> float:
    return abs(ours - theirs) / max(abs(theirs), floor) if theirs or floor else abs(ours)


def _compare_lists(check: Checker, where: str, js: list[Any], py: list[float], floor: float = 0.0) -> None:
    if len(js) != len(py):
        check.fail(where, f"{len(js)} values from JavaScript, {len(py)} from posenc")
        return
    worst = max((_relative_error(a, b, floor) for a, b in zip(js, py)), default=0.0)
    if not worst < TOLERANCE:
        check.fail(where, f"relative error {worst:.3g} >= {TOLERANCE}")


def check_sinusoidal(page: Any, check: Checker) -> None:
    grid = [(p, d, b) for p in (1, 7, 50) for d in (2, 4, 6, 16, 128) for b in (100.0, 10000.0, 12345.6)]
    results = _call(page, "sinusoidalEncoding", [list(args) for args in grid])
    for (positions, dim, base), result in zip(grid, results):
        where = f"sinusoidalEncoding({positions}, {dim}, {base})"
        if not result["ok"]:
            check.fail(where, result["error"])
            continue
        expected = sinusoidal_encoding(positions, dim, base=base, dtype=torch.float64)
        rows = result["value"]
        if [len(rows), *(len(r) for r in rows[:1])] != [positions, dim]:
            check.fail(where, f"shape {len(rows)} x {len(rows[0]) if rows else 0}, expected {positions} x {dim}")
            continue
        _compare_lists(check, where, [v for row in rows for v in row], expected.flatten().tolist(), floor=1.0)
        check.count("sinusoidalEncoding values", positions * dim)
    for bad in ([3, 5, 10000], [3, 0, 10000], [-1, 4, 10000], [3, 4, 1]):
        if _call(page, "sinusoidalEncoding", [bad])[0]["ok"]:
            check.fail(f"sinusoidalEncoding{tuple(bad)}", "accepted bad input")


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
    """posenc's value if both accept; a failure unless both refuse with the same class and message."""
    ok, expected = _posenc_or_error(function, *args, **kwargs)
    if not ok:
        message = f"{type(expected).__name__}: {expected}"
        if result["ok"]:
            check.fail(where, f"JavaScript accepted what posenc refuses ({message})")
        elif result["error"] != message:
            check.fail(where, f"JavaScript says {result['error']!r}, posenc {message!r}")
        else:
            check.count("bad inputs refused with posenc's message")
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
    # bad input: the same class and the same message as posenc
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


def check_alibi(page: Any, check: Checker) -> None:
    counts = list(range(1, 81)) + [96, 128, 255, 256, 257]
    for heads, result in zip(counts, _call(page, "alibiSlopes", [[n] for n in counts])):
        where = f"alibiSlopes({heads})"
        if not result["ok"]:
            check.fail(where, result["error"])
            continue
        _compare_lists(check, where, result["value"], alibi_slopes(heads, dtype=torch.float64).tolist())
        check.count("alibiSlopes values", heads)
    for bad in ([0], [2.5], ["8"]):
        if _call(page, "alibiSlopes", [bad])[0]["ok"]:
            check.fail(f"alibiSlopes({bad[0]!r})", "accepted bad input")


def t5_bucket_exact(offset: int, bidirectional: bool, num_buckets: int, max_distance: int) -> int:
    """T5's bucket in exact arithmetic: floor(L log(n/e) / log(M/e)) >= s  <=>  (n/e)^L >= (M/e)^s."""
    buckets = num_buckets // 2 if bidirectional else num_buckets
    first = buckets if bidirectional and offset > 0 else 0
    distance = abs(offset) if bidirectional else max(-offset, 0)
    exact = buckets // 2
    if distance < exact:
        return first + distance
    steps = buckets - exact
    s = 0
    while s + 1 < steps and Fraction(distance, exact) ** steps >= Fraction(max_distance, exact) ** (s + 1):
        s += 1
    return first + exact + s


def _near_boundary(offset: int, bidirectional: bool, num_buckets: int, max_distance: int) -> bool:
    """Whether the offset's log-bucket position (b - e) ln(n/e) / ln(M/e) lies within float32 rounding
    of an integer: there the bucket depends on how float32 rounds, and on the float32 log used
    (PyTorch's and a correctly rounded one differ by one unit in the last place for some inputs; see
    the T5 section of docs/relative.md). Float32 keeps about 7 digits: 1e-6 covers a few roundings."""
    buckets = num_buckets // 2 if bidirectional else num_buckets
    distance = abs(offset) if bidirectional else max(-offset, 0)
    exact = buckets // 2
    if distance < exact:
        return False
    position = (buckets - exact) * math.log(distance / exact) / math.log(max_distance / exact)
    return abs(position - round(position)) <= 1e-6 * max(1.0, abs(position))


T5_CONFIGS = [
    (True, 32, 128), (False, 32, 128), (True, 64, 256), (False, 16, 64), (True, 8, 20), (False, 9, 128),
    (False, 2, 5), (True, 18, 128), (False, 32, 939), (True, 34, 27), (False, 36, 392), (True, 4, 3),
]


def check_t5(page: Any, check: Checker) -> None:
    offsets = list(range(-1000, 1001))
    boundary = 0
    for bidirectional, num_buckets, max_distance in T5_CONFIGS:
        where = f"t5RelativePositionBucket(..., {bidirectional}, {num_buckets}, {max_distance})"
        calls = [[o, bidirectional, num_buckets, max_distance] for o in offsets]
        results = _call(page, "t5RelativePositionBucket", calls)
        expected = t5_relative_position_bucket(torch.tensor(offsets), bidirectional=bidirectional,
                                               num_buckets=num_buckets, max_distance=max_distance).tolist()
        for offset, result, ours in zip(offsets, results, expected):
            if not result["ok"]:
                check.fail(f"{where} at offset {offset}", result["error"])
                break
            js = result["value"]
            if js == ours:
                continue
            exact = t5_bucket_exact(offset, bidirectional, num_buckets, max_distance)
            if abs(js - ours) <= 1 and abs(js - exact) <= 1 and _near_boundary(offset, bidirectional, num_buckets, max_distance):
                boundary += 1  # on a float32 boundary: either bucket next to it is accepted
                continue
            check.fail(f"{where} at offset {offset}", f"JavaScript {js}, posenc {ours}, exact arithmetic {exact}")
            break
        check.count("t5RelativePositionBucket values", len(offsets))
    if boundary:
        print(f"  T5: {boundary} offsets on a float32 boundary where the JavaScript differs from posenc "
              "(accepted: one of the two buckets that meet there)")
    for bad in ([1, True, 5, 128], [1, True, 32, 8], [1.5, True, 32, 128], [1, 1, 32, 128]):
        if _call(page, "t5RelativePositionBucket", [bad])[0]["ok"]:
            check.fail(f"t5RelativePositionBucket{tuple(bad)}", "accepted bad input")


def check_parity(page: Any, check: Checker) -> None:
    names = sorted(page.evaluate("() => Object.keys(window.posencExplorer)"))
    if names != FUNCTIONS:
        check.fail("window.posencExplorer", f"exposes {names}, expected exactly {FUNCTIONS}")
    for step in (check_sinusoidal, check_rope, check_alibi, check_t5, check_inspector.check_api):
        step(page, check)


# ----------------------------------------------------------------------------------------------
# keyboard, timing


def _press(page: Any, control: dict[str, Any], selector: str, forward: bool) -> None:
    if control["tag"] == "select":
        page.press(selector, "ArrowDown" if forward else "ArrowUp")
    elif control["type"] == "checkbox":
        page.press(selector, " ")
    elif control["tag"] == "button":
        page.press(selector, "Enter")
    else:
        page.press(selector, "ArrowRight" if forward else "ArrowLeft")


def _at_end(page: Any, selector: str) -> bool:
    return bool(page.evaluate("""(s) => { const e = document.querySelector(s);
      if (e.tagName === "SELECT") return e.selectedIndex === e.options.length - 1;
      if (e.type === "range") return Number(e.value) + Number(e.step) > Number(e.max);
      return false; }""", selector))


def exercise(page: Any, widget: str, control: dict[str, Any], check: Checker, times: list[float], note: str = "") -> None:
    selector = f"#{control['id']}" if control["id"] else None
    where = f"{widget}{note}: {control['label'].strip()!r}"
    if selector is None:  # a button: give it an id to address it
        selector = page.evaluate("""([name, label]) => {
          const host = document.querySelector(`.posenc-explorer[data-widget="${name}"]`);
          const button = [...host.querySelectorAll("button")].find((b) =>
            (b.getAttribute("aria-label") || b.textContent) === label);
          button.id = "posenc-explorer-check-" + Math.random().toString(36).slice(2);
          return "#" + button.id; }""", [widget, control["label"]])
    before = page.evaluate(WIDGET_STATE, widget)
    announced = page.evaluate(ANNOUNCED, selector)
    page.focus(selector)
    focused = page.evaluate("(s) => document.activeElement === document.querySelector(s)", selector)
    if not focused:
        check.fail(where, "cannot be focused")
        return
    forward = not _at_end(page, selector)
    is_play = control["tag"] == "button" and control["label"].strip() == "Play"
    after = before
    for _ in range(12):  # a small step may not move a rounded boundary: press until the drawing moves
        _press(page, control, selector, forward)
        page.wait_for_timeout(1500 if is_play else 30)
        after = page.evaluate(WIDGET_STATE, widget)
        times.append(after["ms"])
        if after["drawing"] != before["drawing"]:
            break
    if is_play:
        _press(page, control, selector, forward)  # pause again
    if after["drawing"] == before["drawing"]:
        check.fail(where, "moving it with the keyboard did not change the drawing")
    if after["readout"] == before["readout"]:
        check.fail(where, "moving it did not change the announced readout (aria-live)")
    if after["live"] not in ("polite", "assertive"):
        check.fail(where, "the readout is not an aria-live region")
    if control["tag"] != "button" and page.evaluate(ANNOUNCED, selector) == announced:
        check.fail(where, "the control's announced value did not change")
    check.count("controls moved with the keyboard")


def check_keyboard(page: Any, check: Checker) -> dict[str, list[float]]:
    timings: dict[str, list[float]] = {}
    for widget in WIDGETS:
        times = timings.setdefault(widget, [page.evaluate(WIDGET_STATE, widget)["ms"]])
        if widget == "rope-scaling":
            type_select = page.evaluate(CONTROLS, widget)
            select = next(c for c in type_select if c["label"].strip() == "Scaling type")
            kinds = page.evaluate("(s) => [...document.querySelector(s).options].map((o) => o.value)", f"#{select['id']}")
            for kind in kinds:
                page.select_option(f"#{select['id']}", kind)
                for control in page.evaluate(CONTROLS, widget):
                    if control["label"].strip() != "Scaling type":
                        exercise(page, widget, control, check, times, note=f" ({kind})")
            page.select_option(f"#{select['id']}", kinds[0])
            exercise(page, widget, select, check, times)
            missing = set(posenc_scaling_types()) - set(kinds) - PENDING_SCALING_TYPES
            if missing:
                check.fail(widget, f"the scaling type list lacks {sorted(missing)}")
            continue
        if widget in OWN_CHECK:
            continue
        for control in page.evaluate(CONTROLS, widget):
            exercise(page, widget, control, check, times)
    for widget, times in timings.items():
        slow = [t for t in times[1:] if not t < UPDATE_BUDGET_MS]  # times[0]: the first drawing
        if slow:  # reported only: see the module docstring
            print(f"  note: {widget}: {len(slow)} updates took {max(slow):.1f} ms or more "
                  f"(budget {UPDATE_BUDGET_MS:.0f} ms; judged by make bench)")
    return timings


# ----------------------------------------------------------------------------------------------
# palettes, accessibility, screenshots


def drawings(page: Any) -> str:
    return str(page.evaluate("() => [...document.querySelectorAll('svg.posenc-explorer__plot')].map((s) => s.outerHTML).join('')"))


def run_axe(page: Any, variant: str, check: Checker) -> None:
    page.add_script_tag(path=str(AXE))
    for violation in page.evaluate(AXE_RUN):
        if violation["impact"] in BLOCKING_IMPACTS:
            nodes = "; ".join(n["target"] for n in violation["nodes"][:4])
            check.fail(f"axe [{variant}]", f"{violation['id']} ({violation['impact']}): {violation['help']} -- {nodes}")
    check.count("axe runs")


def toggle_palette(page: Any) -> str:
    before = page.evaluate("() => document.body.getAttribute('data-md-color-scheme')")
    page.locator('form[data-md-component="palette"] label:not([hidden])').click()
    page.wait_for_function("(b) => document.body.getAttribute('data-md-color-scheme') !== b", arg=before, timeout=5_000)
    page.wait_for_timeout(300)
    return str(page.evaluate("() => document.body.getAttribute('data-md-color-scheme')"))


def open_page(browser: Any, url: str, origin: str, check: Checker, width: int, scheme: str) -> tuple[Any, Any]:
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme,
                                  reduced_motion="reduce", service_workers="block")

    def route(request_route: Any) -> None:
        request_url = request_route.request.url
        if request_url.startswith(origin + "/") or request_url.startswith(("data:", "blob:")):
            request_route.continue_()
        else:
            check.fail("external request", f"{request_url} (blocked)")
            request_route.abort("blockedbyclient")

    context.route("**/*", route)
    page = context.new_page()
    def console(message: Any) -> None:
        if message.type == "error":
            check.fail("console error", message.text)

    def response(reply: Any) -> None:
        if reply.status >= 400:
            check.fail("HTTP error", f"{reply.status} {reply.url}")

    page.on("console", console)
    page.on("pageerror", lambda error: check.fail("page error", str(error)))
    page.on("requestfailed", lambda request: check.fail("failed request", f"{request.url}: {request.failure}"))
    page.on("response", response)
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(url, wait_until="networkidle", timeout=60_000)
    # the inspector's scripts and data (explorer.js, group "config") wait until it comes near
    early = [u for u in requested if u.endswith(("rope-data.js", "inspector.js", "rope_params.js"))]
    if early:
        check.fail("first view", f"the inspector's files load before it comes near: {early}")
    page.locator(".posenc-explorer[data-widget='rope-inspector']").scroll_into_view_if_needed()
    page.wait_for_function(f"() => document.querySelectorAll('.posenc-explorer[data-upgraded]').length === {len(WIDGETS)}",
                           timeout=15_000)
    page.evaluate("() => window.scrollTo(0, 0)")
    return context, page


FALLBACKS = """() => [...document.querySelectorAll('.posenc-explorer')].map((host) => {
  const figure = host.querySelector('figure.posenc-figure');
  const widget = host.querySelector('.posenc-explorer__widget');
  const shown = (e) => e !== null && getComputedStyle(e).display !== 'none' && e.getClientRects().length > 0;
  const text = [...host.children].find((e) => e.tagName === 'P');
  return {name: host.dataset.widget, figure: shown(figure) && figure.querySelectorAll('img').length === 2,
          text: shown(text || null) && text.textContent.includes('python -m posenc.inspect'), widget: shown(widget)};
})"""
# Widgets whose fallback is a paragraph (the command that does the same), not a static figure.
TEXT_FALLBACK = {"rope-inspector"}


def check_fallbacks(page: Any, check: Checker, when: str, want_widget: bool) -> None:
    """Each placeholder shows its static figure and not the widget (without scripts, in print)."""
    for host in page.evaluate(FALLBACKS):
        if host["name"] in TEXT_FALLBACK and not host["text"]:
            check.fail(f"{when}: {host['name']}", "the fallback text (the command line) is not shown")
        elif host["name"] not in TEXT_FALLBACK and not host["figure"]:
            check.fail(f"{when}: {host['name']}", "the static figure is not shown")
        if host["widget"] != want_widget:
            check.fail(f"{when}: {host['name']}", "the widget is shown" if host["widget"] else "the widget is missing")
    check.count(f"fallback checks ({when})")


def check_print(page: Any, check: Checker) -> None:
    """Printing puts the static figures back (beforeprint) and hides the widgets (print CSS)."""
    page.evaluate("() => window.dispatchEvent(new Event('beforeprint'))")
    page.emulate_media(media="print")
    check_fallbacks(page, check, "print", want_widget=False)
    page.emulate_media(media="screen")
    page.evaluate("() => window.dispatchEvent(new Event('afterprint'))")
    if page.evaluate("() => document.querySelectorAll('.posenc-explorer figure, .posenc-explorer > p').length"):
        check.fail("print", "the static figures stay in the page after printing")


def check_without_scripts(browser: Any, url: str, check: Checker) -> None:
    context = browser.new_context(java_script_enabled=False, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(url, wait_until="load", timeout=60_000)
    check_fallbacks(page, check, "without JavaScript", want_widget=False)
    context.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site-dir", type=Path, default=Path("site"))
    parser.add_argument("--screenshots", type=Path, default=None, help="folder for the PNGs (none if not given)")
    args = parser.parse_args(argv)
    site_dir: Path = args.site_dir.resolve()
    if not (site_dir / PAGE / "index.html").is_file():
        print(f"{site_dir / PAGE / 'index.html'} is missing: build the site first (make build)", file=sys.stderr)
        return 2
    if not AXE.is_file():
        print(f"{AXE} is missing: run `npm ci` (make install)", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    started = time.perf_counter()
    check = Checker()
    base = base_path(site_dir)
    with serve(site_dir, base) as origin, sync_playwright() as playwright:
        browser = _launch(playwright)
        url = f"{origin}{base}{PAGE}"
        try:
            print(f"checking {url} with Chromium {browser.version}", flush=True)
            context, page = open_page(browser, url, origin, check, 1280, "light")
            hosts = page.evaluate("() => [...document.querySelectorAll('.posenc-explorer')].map((e) => e.dataset.widget)")
            if sorted(hosts) != sorted(WIDGETS):
                check.fail("page", f"widgets {hosts}, expected {WIDGETS}")
            print("parity with posenc (float64):", flush=True)
            check_parity(page, check)
            print("keyboard:", flush=True)
            timings = check_keyboard(page, check)
            print("config inspector (the widget against posenc):", flush=True)
            timings["rope-inspector"] = check_inspector.check_widget(page, check, site_dir)
            for widget, times in timings.items():
                updates = times[1:] or [0.0]
                print(f"  {widget:<14} first drawing {times[0]:5.1f} ms; {len(times) - 1:3} keyboard updates: median "
                      f"{statistics.median(updates):5.1f} ms, max {max(updates):5.1f} ms (budget {UPDATE_BUDGET_MS:.0f} ms)")
                print("                 all: " + " ".join(f"{t:.1f}" for t in times))
            scheme = page.evaluate("() => document.body.getAttribute('data-md-color-scheme')")
            for step in range(2):
                variant = "dark" if scheme == "slate" else "light"
                run_axe(page, variant, check)
                if step == 0:
                    before = drawings(page)
                    scheme = toggle_palette(page)
                    if drawings(page) == before:
                        check.fail("palette", "the drawings did not change with the palette")
            check_print(page, check)
            context.close()
            check_without_scripts(browser, url, check)
            if args.screenshots is not None:
                args.screenshots.mkdir(parents=True, exist_ok=True)
                for width in (1280, 390):
                    for scheme_name, variant in (("light", "light"), ("dark", "dark")):
                        context, page = open_page(browser, url, origin, check, width, scheme_name)
                        shot = args.screenshots / f"explore-{width}px-{variant}.png"
                        page.screenshot(path=str(shot), full_page=True, animations="disabled")
                        context.close()
                check_inspector.screenshots(browser, url, origin, check, args.screenshots, open_page)
                print(f"screenshots: {args.screenshots}/explore-{{1280,390}}px-{{light,dark}}.png, "
                      "inspector-1280px-light.png, inspector-390px-dark.png")
        finally:
            browser.close()
    counts = ", ".join(f"{what}: {n}" for what, n in check.counts.items())
    print(f"checked {counts}")
    if check.problems:
        print(f"\n{len(check.problems)} problem(s):")
        for problem in check.problems[:60]:
            print(f"  {problem}")
    print(f"\nexplorer check {'FAILED' if check.problems else 'passed'}: {len(check.problems)} problem(s), "
          f"{time.perf_counter() - started:.0f} s")
    return 1 if check.problems else 0


if __name__ == "__main__":
    sys.exit(main())
