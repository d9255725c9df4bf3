"""The engine comparisons can fail: each of nine broken copies of posenc's rules makes one fail.

Each case breaks one rule of posenc the way a port could (YaRN's ramp not rounded, its attention
factor dropped, Llama 3's smoothing reversed, LongRoPE short at every length, dynamic NTK from the
first token, ALiBi's extra slopes taken from the wrong places, Llama 4's temperature without its
offset, interleaved M-RoPE run as blocks, p-RoPE's turning width doubled), by a wrapper around the
real rule (no rule is copied here), and runs one engine test of this folder against it: the test
must pass on posenc as it is and fail with the rule broken. docs/engines.md ("How this is
checked") states this; the engines that are not installed skip their cases.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable
from typing import Any, NamedTuple

import pytest

import posenc.alibi
import posenc.rope_nd
import posenc.temperature
from posenc import _scaling_rules as rules


def _rule(kind: str, **fields: Any) -> Callable[[pytest.MonkeyPatch], None]:
    """Replace fields of one row of posenc's rule table (frequencies, attention factor)."""
    def apply(monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setitem(rules._RULES, kind, rules._RULES[kind]._replace(**fields))
    return apply


def _yarn_unrounded(s, dim, base, seq_len):
    return rules._yarn(dataclasses.replace(s, truncate=False), dim, base, seq_len)


def _llama3_reversed(s, dim, base, seq_len):
    # the rule is (1 - smooth) theta / s + smooth theta; reversed: smooth theta / s + (1 - smooth) theta
    theta = rules._default_frequencies(dim, base)
    return theta / s.scale + theta - rules._llama3(s, dim, base, seq_len)


def _longrope_always_short(s, dim, base, seq_len):
    return rules._longrope(s, dim, base, None)  # no length: the short factors


def _proportional_doubled(s, dim, base, seq_len):
    fraction = 1.0 if s.partial_rotary_factor is None else s.partial_rotary_factor
    wider = dataclasses.replace(s, partial_rotary_factor=min(1.0, 2 * fraction))
    return rules._proportional(wider, dim, base, seq_len)


def _alibi_wrong_extra_slopes(monkeypatch: pytest.MonkeyPatch) -> None:
    real = posenc.alibi._slopes

    def broken(num_heads: int):
        slopes = real(num_heads).clone()
        closest = 1 << (num_heads.bit_length() - 1)
        if closest < num_heads:  # the rest from the odd places of the 2 * closest sequence
            slopes[closest:] = posenc.alibi._power_of_two_slopes(2 * closest)[1::2][: num_heads - closest]
        return slopes
    monkeypatch.setattr(posenc.alibi, "_slopes", broken)


def _temperature_without_offset(monkeypatch: pytest.MonkeyPatch) -> None:
    real = posenc.temperature._temperature
    monkeypatch.setattr(posenc.temperature, "_temperature",
                        lambda positions, beta, length, offset: real(positions, beta, length, 0))


def _mrope_as_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    real = posenc.rope_nd.rope_axis_assignment
    monkeypatch.setattr(posenc.rope_nd, "rope_axis_assignment",
                        lambda sections, assignment="blocks": real(sections))


class Case(NamedTuple):
    break_rule: Callable[[pytest.MonkeyPatch], None]
    module: str          # a test module of tests/engines
    test: str            # its test function
    kwargs: dict[str, Any]


CASES = {
    "yarn-unrounded": Case(_rule("yarn", frequencies=_yarn_unrounded), "test_mlx", "test_yarn", {"extra": {}}),
    "yarn-no-attention-factor": Case(_rule("yarn", attention=lambda s: 1.0), "test_mlx", "test_yarn",
                                     {"extra": {}}),
    "llama3-smoothing-reversed": Case(_rule("llama3", frequencies=_llama3_reversed), "test_mlx", "test_llama3", {}),
    "longrope-always-short": Case(_rule("longrope", frequencies=_longrope_always_short), "test_mlx",
                                  "test_longrope_long_factors_always", {}),
    "dynamic-from-first-token": Case(_rule("dynamic", frequencies=rules._ntk), "test_mlx", "test_dynamic", {}),
    "alibi-extra-slopes": Case(_alibi_wrong_extra_slopes, "test_keras", "test_alibi_slopes", {"heads": 12}),
    "llama4-temperature-no-offset": Case(_temperature_without_offset, "test_mlx", "test_llama4_temperature",
                                         {"monkeypatch": None}),
    "imrope-as-blocks": Case(_mrope_as_blocks, "test_ggml", "test_imrope_fourth_section", {}),
    "p-rope-width-doubled": Case(_rule("proportional", frequencies=_proportional_doubled), "test_mlx",
                                 "test_proportional", {"fraction": 0.25, "factor": 1.0}),
}


def _run(case: Case) -> None:
    module = importlib.import_module(f"tests.engines.{case.module}")  # skips where its engine is missing
    test = getattr(module, case.test)
    with pytest.MonkeyPatch.context() as inner:
        test(**{k: inner if k == "monkeypatch" else v for k, v in case.kwargs.items()})


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_broken_rule_fails_its_engine_comparison(name: str) -> None:
    case = CASES[name]
    _run(case)  # posenc as it is: the comparison passes
    with pytest.MonkeyPatch.context() as monkeypatch:
        case.break_rule(monkeypatch)
        with pytest.raises(AssertionError):
            _run(case)
