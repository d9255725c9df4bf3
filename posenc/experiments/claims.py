"""Numbers and comparisons that the chapters' prose states, computed from the committed results.

The site's hook ``hooks/values.py`` renders ``[[value EXPR | FORMAT]]`` with `value` and runs the
hidden checks ``<!-- check: CLAIM; CLAIM -->`` with `checks`; the tests call both directly.

**Measures.** ``lm.rope@8L`` is RoPE's perplexity at 8 times the training length: one value per
seed, their mean, lowest and highest. What each study's references name:

- ``lm.METHOD@kL``: perplexity on text (``length_extrapolation.json``), k = 1 (``@L``), 2, 4, 8;
  ``lm.METHOD@pA-B``: the mean loss (nats per character) over positions A to B of the 8L windows;
  ``lm.METHOD@train`` and ``@score``: CPU seconds of training and of scoring.
- ``recall.METHOD@kL``: MQAR accuracy (``retrieval.json``); ``recall.METHOD.learned@kL`` and
  ``.not-learned``: only the seeds that did (not) learn the task, accuracy at L at least 0.9.
- ``ext.lm.RULE@kL``: a scaling rule on the RoPE language models without training (k = 2, 4, 8;
  ``@L``: the model itself); ``ext.lm.RULE.tuned@kL``: after the short fine-tune (``@L`` too);
  ``ext.recall...``: the same on the retrieval models (``context_extension.json``).
- ``windows.METHOD.SET@8L``: perplexity at 8L with SET ``full``, ``window`` or ``sinks``
  (``inference_windows.json``, which keeps means and ranges, no per-seed values);
  ``windows.detail.SET@8L``: the RoPE model of seed 0, SET ``full``, ``window``,
  ``window-in-cache``, ``sinks`` or ``sinks-in-cache``; ``@blockN``: its mean loss in block N.
- ``vit.METHOD@GxG``: test accuracy of the tiny ViT on a G x G grid (``vit_resolution.json``).
- ``vimg.METHOD@GxG``: the same for the images-and-video study (``vit_images.json``), one value
  per seed, trained on the 4 x 4 grid and tested on G = 4, 6 or 8 (the file's ``grids``); METHOD
  ``learned``, ``rope`` (patch indices), ``rope-rescaled``, ``rope-ntk`` and ``rope-riflex`` (the
  ``rope`` models changed at test time), ``rope-mixed``, ``rope-normalized`` and ``rope-dinov3``.
- ``free.lm.METHOD@kL`` and ``free.recall.METHOD@kL``: a training-free method (``rerope``,
  ``leaky-rerope``, ``self-extend``, ``dual-chunk``, ``string``; ``rope``: none) on the RoPE
  models (``training_free.json``).
- ``base.lm.BASE@kL``, ``base.recall.BASE@kL``: the RoPE models trained with base BASE (digits:
  ``base.recall.1000000@L``); ``base.recall.BASE@distN``: MQAR accuracy at L in distance bucket
  N (``base_context.json``).
- ``depth.METHOD.PLACE@kL``: MQAR accuracy with the pairs at PLACE (``start``, ``middle``,
  ``end``); ``depth.remap.METHOD.PLACE@kL``: the RoPE model with a training-free method;
  ``depth.hybrid.METHOD.PLACE@kL``: a four-layer model of the hybrid study (``depth.json``).
- ``hlm.METHOD@kL`` and ``hrecall.METHOD@kL`` (also ``.learned``): the four-layer hybrid study's
  perplexity and MQAR accuracy (``hybrid_lm.json``, ``hybrid_retrieval.json``).
- ``ilm.METHOD@kL`` and ``irecall.METHOD@kL`` (also ``.learned``): the same for the methods of
  "Position inside attention" (``fox``, ``fox_rope``, ``stick_breaking``, ``path``, ``pope``;
  ``inside_lm.json``, ``inside_retrieval.json``), trained in the hybrid study's configuration;
  ``idepth.METHOD.PLACE@kL``: their MQAR models with the pairs at PLACE, as ``depth.``.
- ``large.`` before any of them: the larger configuration (``results/large/``, one seed).

``@kL`` alone repeats the reference before it at another length: ``lm.fire@8L / @L`` is FIRE's
ratio of perplexity at 8L to L, seed by seed. ``STUDY:PATH`` is one number of a results file
(``lm:config.steps``, ``windows:dynamic_ntk.base_when_cached.64``), and ``posenc: EXPR`` a
Python expression over the names of ``posenc.__all__`` (``posenc: alibi_slopes(4)[-1] * 511``).
Measures and numbers combine with ``+ - * /`` and brackets, seed by seed (a measure with no
per-seed values combines its mean only); ``min(...)`` and ``max(...)`` take the lowest and highest
seed of every measure named (``min(recall.t5.learned@8L, recall.kerple.learned@8L)``;
``max(large.recall.*@L)``: every method), and ``mean(A)`` the mean alone (``mean(A) / mean(B)``
is a ratio of means).

**Formats**: an optional statistic (``mean``, the default, ``min``, ``max``, or ``range``, which
writes "low to high") and a Python format spec (``.2f``, ``.0%``, ``,d``) or ``sig:N`` (N
significant digits, thousands separated: ``sig:3`` writes 112768 as "113,000").

**Claims** use the chapters' seed-spread rule: two measures differ when their ranges over the
seeds do not overlap.

- ``lower(A, B, ...)``, ``higher(A, B, ...)``: each range lies below (above) the next, apart;
- ``lowest(A, B, ...)``, ``highest(A, B, ...)``: the first lies apart below (above) every other;
- ``tied(A, B, ...)``: every two ranges overlap;
- ``mean_lower``, ``mean_higher``, ``mean_lowest``, ``mean_highest``, ``mean_within(A, lo, hi)``:
  the same on the means only, for sentences that say "on average" or "the mean";
- ``within(A, lo, hi)``: every seed in ``[lo, hi]``;
- ``below(A, ..., BOUND)``, ``above(A, ..., BOUND)``, ``at_most(A, ..., BOUND)``,
  ``at_least(A, ..., BOUND)``: every seed of every measure before the last lies below (above, at
  most, at least) the last, a bound: a number typed (a paper's figure, a config value), a number of
  a results file (``base:lower_bound.base``) or a computed one (``posenc: EXPR``), so that "bases
  200, 500 and 2,000 lie below the bound" is ``below(200, 500, 2000, base:lower_bound.base)`` and
  fails where one does not;
- ``near(A, x, tolerance)``: every seed within ``tolerance`` of ``x`` (a result said to match a
  paper's or a config's number);
- ``count_at_least(A, x, n)``: exactly ``n`` seeds at least ``x``;
- ``same(A, B)``: equal seed by seed.

Examples:
    >>> value("lm.rope@8L", ".2f")
    '23.08'
    >>> value("lm.kerple@8L / @L", "range .2f")
    '0.97 to 0.97'
    >>> check("lower(lm.kerple@8L, lm.rope@8L)")
    >>> try:
    ...     check("tied(lm.cope@L, lm.rope@L)")
    ... except ClaimError as error:
    ...     print(error)
    tied(lm.cope@L, lm.rope@L): lm.cope@L and lm.rope@L are apart: 4.568 to 4.653 and 4.694 to 4.812
"""

from __future__ import annotations

import itertools
import math
import re
from typing import Any

from posenc.experiments._measures import ClaimError, Measure, evaluate, measure

__all__ = ["ClaimError", "Measure", "check", "checks", "measure", "value"]

# ---------------------------------------------------------------------------------------------
# values and claims


def value(expression: str, fmt: str) -> str:
    """``expression`` (a measure expression, see the module) as text: ``fmt`` is an optional
    statistic (``mean``, ``min``, ``max``, ``range``) and a format spec (``.2f``, ``.0%``,
    ``,d``, ``sig:3``)."""
    words = fmt.split()
    statistic = words.pop(0) if words and words[0] in ("mean", "min", "max", "range") else "mean"
    if len(words) != 1:
        raise ClaimError(f"format {fmt!r}: write [mean|min|max|range] SPEC, e.g. '.2f' or 'range .2f'")
    result = evaluate(expression)
    if statistic == "mean":
        return _format(result.mean, words[0])
    low, high = result.spread()
    if statistic == "range":
        return f"{_format(low, words[0])} to {_format(high, words[0])}"
    return _format(low if statistic == "min" else high, words[0])


def _format(number: float, spec: str) -> str:
    if spec.startswith("sig:"):
        digits = int(spec[4:])
        rounded = round(number, digits - 1 - math.floor(math.log10(abs(number)))) if number else 0.0
        return f"{rounded:,.{max(0, digits - 1 - math.floor(math.log10(abs(number))) if number else 0)}f}"
    if spec.endswith("d"):
        return format(round(number), spec)
    try:
        return format(number, spec)
    except ValueError:
        raise ClaimError(f"format spec {spec!r} is not a Python format spec") from None


def _ranges(measures: list[Measure]) -> str:
    return " and ".join(f"{m.name} {_span(m)}" for m in measures)


def _span(m: Measure) -> str:
    low, high = m.spread()
    return f"{low:.4g} to {high:.4g}" if low != high else f"{low:.4g}"


def _apart_below(a: Measure, b: Measure) -> bool:
    return a.spread()[1] < b.spread()[0]


def _overlap(a: Measure, b: Measure) -> bool:
    return not (_apart_below(a, b) or _apart_below(b, a))


def _claim_lower(ms: list[Measure]) -> str | None:
    bad = [(a, b) for a, b in itertools.pairwise(ms) if not _apart_below(a, b)]
    return f"{_ranges(list(bad[0]))} are not apart in that order" if bad else None


def _claim_lowest(ms: list[Measure], highest: bool = False) -> str | None:
    bad = [b for b in ms[1:] if not (_apart_below(b, ms[0]) if highest else _apart_below(ms[0], b))]
    return f"{_ranges([ms[0], bad[0]])}: the first is not apart {'above' if highest else 'below'}" if bad else None


def _claim_tied(ms: list[Measure]) -> str | None:
    bad = [(a, b) for i, a in enumerate(ms) for b in ms[i + 1:] if not _overlap(a, b)]
    return f"{bad[0][0].name} and {bad[0][1].name} are apart: {_span(bad[0][0])} and {_span(bad[0][1])}" if bad else None


def _claim_mean_lower(ms: list[Measure]) -> str | None:
    bad = [(a, b) for a, b in itertools.pairwise(ms) if not a.mean < b.mean]
    return f"means {bad[0][0].mean:.4g} ({bad[0][0].name}) and {bad[0][1].mean:.4g} ({bad[0][1].name})" if bad else None


def _claim_mean_lowest(ms: list[Measure], highest: bool = False) -> str | None:
    bad = [b for b in ms[1:] if not (b.mean < ms[0].mean if highest else ms[0].mean < b.mean)]
    return f"mean {ms[0].mean:.4g} ({ms[0].name}) against {bad[0].mean:.4g} ({bad[0].name})" if bad else None


def _claim_count(ms: list[Measure]) -> str | None:
    values, threshold, count = ms[0].values(), ms[1].mean, round(ms[2].mean)
    found = sum(v >= threshold for v in values)
    return None if ms[0].seeds is not None and found == count else \
        f"{found} of {ms[0].name} = {', '.join(f'{v:.4g}' for v in values)} are at least {threshold:g}, not {count}"


def _bounds(ms: list[Measure], test: Any, words: str) -> str | None:
    values = ms[0].values()
    return None if all(test(v) for v in values) else f"{ms[0].name} = {_listed(ms[0])}: {words}"


def _listed(m: Measure) -> str:
    """The seeds of ``m``, or its one number (a constant's range is that number twice)."""
    values = m.values()
    return f"{values[0]:.6g}" if len(set(values)) == 1 else ", ".join(f"{v:.6g}" for v in values)


_BOUND_TESTS: dict[str, tuple[Any, str]] = {
    "below": (lambda v, bound: v < bound, "below"), "above": (lambda v, bound: v > bound, "above"),
    "at_most": (lambda v, bound: v <= bound, "at most"), "at_least": (lambda v, bound: v >= bound, "at least"),
}


def _against_bound(kind: str) -> Any:
    """The claim that every measure but the last lies ``kind`` the last (the bound)."""
    test, words = _BOUND_TESTS[kind]

    def claim(ms: list[Measure]) -> str | None:
        bound = ms[-1].mean
        bad = [m for m in ms[:-1] if not all(test(v, bound) for v in m.values())]
        if not bad:
            return None
        named = "" if ms[-1].name == f"{bound:g}" else f" ({ms[-1].name})"
        return f"{bad[0].name} = {_listed(bad[0])}: not all {words} {bound:g}{named}"
    return claim


def _claim_same(ms: list[Measure]) -> str | None:
    a, b = ms[0].values(), ms[1].values()
    return None if len(a) == len(b) and all(math.isclose(x, y, rel_tol=1e-9) for x, y in zip(a, b)) \
        else f"{ms[0].name} = {a} and {ms[1].name} = {b} differ"


CLAIMS: dict[str, tuple[int, Any]] = {  # name: (least number of arguments, test returning None or why not)
    "lower": (2, _claim_lower),
    "higher": (2, lambda ms: _claim_lower(ms[::-1])),
    "lowest": (2, _claim_lowest),
    "highest": (2, lambda ms: _claim_lowest(ms, highest=True)),
    "tied": (2, _claim_tied),
    "mean_lower": (2, _claim_mean_lower),
    "mean_higher": (2, lambda ms: _claim_mean_lower(ms[::-1])),
    "mean_lowest": (2, _claim_mean_lowest),
    "mean_highest": (2, lambda ms: _claim_mean_lowest(ms, highest=True)),
    "count_at_least": (3, _claim_count),
    "within": (3, lambda ms: _bounds(ms, lambda v: ms[1].mean <= v <= ms[2].mean, f"not within [{ms[1].mean:g}, {ms[2].mean:g}]")),
    "mean_within": (3, lambda ms: None if ms[1].mean <= ms[0].mean <= ms[2].mean
                    else f"mean {ms[0].mean:.4g} of {ms[0].name} not within [{ms[1].mean:g}, {ms[2].mean:g}]"),
    "below": (2, _against_bound("below")),
    "above": (2, _against_bound("above")),
    "at_most": (2, _against_bound("at_most")),
    "at_least": (2, _against_bound("at_least")),
    "near": (3, lambda ms: _bounds(ms, lambda v: abs(v - ms[1].mean) <= ms[2].mean * (1 + 1e-9),  # 0.52 is 0.02 from 0.5
                                   f"not within {ms[2].mean:g} of {ms[1].mean:g} ({ms[1].name})")),
    "same": (2, _claim_same),
}


def _split_arguments(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for char in text:
        depth += {"(": 1, ")": -1, "[": 1, "]": -1}.get(char, 0)  # posenc: f(a, b)[0, 1] is one argument
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return [part.strip() for part in [*parts, current] if part.strip()]


def check(claim: str) -> None:
    """Raise `ClaimError` unless the committed results support ``claim`` (``lower(A, B)``, see
    the module for the vocabulary)."""
    match = re.fullmatch(r"\s*(\w+)\s*\((.*)\)\s*", claim, re.DOTALL)
    if not match or match[1] not in CLAIMS:
        raise ClaimError(f"cannot read the claim {claim.strip()!r}; the claims are {sorted(CLAIMS)}")
    least, test = CLAIMS[match[1]]
    arguments = [evaluate(argument) for argument in _split_arguments(match[2])]
    if len(arguments) < least or (match[1] in ("within", "mean_within", "near", "same", "count_at_least") and len(arguments) != least):
        raise ClaimError(f"{claim.strip()}: {match[1]} takes {least} arguments")
    why = test(arguments)
    if why:
        raise ClaimError(f"{claim.strip()}: {why}")


def checks(text: str) -> int:
    """Check every claim of ``text`` (claims separated by ``;``); returns how many were checked."""
    claims = [claim for claim in text.split(";") if claim.strip()]
    for claim in claims:
        check(claim)
    return len(claims)
