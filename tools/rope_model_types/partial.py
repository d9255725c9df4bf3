"""Probes of the table generator (``derive.py``): what a model type's code does with a rotated fraction
(``partial_rotary_factor`` below 1) and with the rope utils' scaled rules, found by running its rotary
module and the rotation its attention calls.

* ``partial_ignored`` (`flat_partial`): the rotary module's own default rule rotates the whole head
  whatever the fraction says (Llama's, modeling_llama.py:100-105).
* ``scaled_rules_refused`` (`_refuses_scaled`): the rotary module accepts no scaled rule at all.
* ``partial_scaled`` (`scaled_partial`), on those types: what happens with a scaled rule of the rope
  utils, which read the fraction (``dim = int(head_dim * partial_rotary_factor)``,
  modeling_rope_utils.py:181, 325, 416, 549, 639) and so build frequencies for a narrower width:
  ``"fails"``, the attention's rotation takes q and k of a fixed width (the whole head; Mistral 4's
  rotated part, the width of its class's own fraction) and fails on the cos and sin of another
  (Llama's ``q * cos``, modeling_llama.py:147-148: "must match the size");
  ``"reads"``, it turns the first ``head_dim * fraction`` features and passes the rest.
  The cheapest faithful probe: the rotary module built with each rule at the class's own fraction
  and half of it, and the rotation function the attention calls run on q and k of the first one's
  width (not where the attention names the fraction and cuts q itself, as Phi's does). Whole
  one-layer models agree on every type that builds (tests/test_rope_params_partial_ignored.py runs
  several families).
* ``nested_partial_scaled`` (`nested_scaled`, called by ``probes.nested_partial``): the same per layer
  type of a per-layer-type class (Gemma 3's), for an entry with a scaled rule and a fraction.
"""

from __future__ import annotations

import copy
from typing import Any

import torch

from posenc.configs._layer import SCALED_RULES

S = 123457.0  # a base no class uses
# The rope utils' scaled rules that read the fraction (ROPE_INIT_FUNCTIONS, modeling_rope_utils.py:669-676),
# with settings each accepts; "proportional" keeps the whole width (zero frequencies past the fraction).
_RULES: dict[str, dict[str, Any]] = {
    "linear": {"factor": 2.0},
    "dynamic": {"factor": 2.0},
    "yarn": {"factor": 2.0, "original_max_position_embeddings": 64},
    "longrope": {"factor": 2.0, "original_max_position_embeddings": 64},  # the factor lists: per width
    "llama3": {"factor": 8.0, "original_max_position_embeddings": 64, "low_freq_factor": 1.0,
               "high_freq_factor": 4.0},
}
_LENGTH = 7
assert set(_RULES) == set(SCALED_RULES), "a scaled rule posenc reads without probe settings here"


def _helpers() -> Any:
    # imported late: derive imports this module
    from tools.rope_model_types import derive
    return derive


def _rotary(config_name: str, text: Any, params: dict[str, Any]) -> Any:
    """The model's rotary module built from a config with ``params`` as its flat rope parameters, the
    fraction given there and at the top level (in the set only where the class refuses it there);
    with head_dim given where the class leaves it None (the yarn, dynamic and longrope rules read
    ``getattr(config, "head_dim", ...)``, modeling_rope_utils.py:415, and fail on None)."""
    h = _helpers()
    fraction = params["partial_rotary_factor"]
    tries = [params]
    if params["rope_type"] != "default":  # PhiMoE's class validator (not one the probes turn off) asks for mscales
        tries.append({**params, "short_mscale": 1.0, "long_mscale": 1.0})
    for given in tries:
        built = (h._built(config_name, text, rope_parameters=copy.deepcopy(given), partial_rotary_factor=fraction)
                 or h._built(config_name, text, rope_parameters=copy.deepcopy(given)))
        if built is not None:
            break
    else:
        return None
    rotaries = h._rotary_candidates(h._module(built.model_type), built)
    if not rotaries and getattr(built, "head_dim", 0) is None and getattr(built, "num_attention_heads", 0):
        built.head_dim = built.hidden_size // built.num_attention_heads
        rotaries = h._rotary_candidates(h._module(built.model_type), built)
    return rotaries[0].double() if rotaries else None


def flat_partial(config_name: str, text: Any, functions: dict[str, Any]) -> dict[str, Any]:
    """``partial_ignored``: the model's rotary module rotates the whole head whatever
    ``partial_rotary_factor`` a flat set of rope type "default" gives (its own default rule reads
    only the base: Llama's, modeling_llama.py:100-105; the scaled rules of the rope utils read the
    fraction), found by building the class with the fraction 1 and 0.5 and counting the
    frequencies; where so, ``partial_scaled`` (`scaled_partial`) with the attention's ``functions``;
    and ``scaled_rules_refused`` (`_refuses_scaled`) on any flat type."""
    h = _helpers()
    widths = []
    for fraction in (1.0, 0.5):
        rotary = _rotary(config_name, text, {"rope_type": "default", "rope_theta": S,
                                             "partial_rotary_factor": fraction})
        inv_freq = h._inv_freq(rotary, None) if rotary is not None else None
        widths.append(None if inv_freq is None else inv_freq.numel())
    refused = {"scaled_rules_refused": True} if widths[0] and _refuses_scaled(config_name, text, widths[0]) else {}
    if not widths[0] or widths[0] != widths[1]:
        return refused
    return {"partial_ignored": True, **scaled_partial(config_name, text, functions), **refused}


def _refuses_scaled(config_name: str, text: Any, whole_n: int) -> bool:
    """``scaled_rules_refused``: the rotary module, built with rope type "default", raises for every
    scaled rule (RecurrentGemma's "does not support RoPE types other than `default`",
    modeling_recurrent_gemma.py:71-74; Ernie 4.5 VL's text module, modeling_ernie4_5_vl_moe.py:65-66)."""
    for rule, settings in _RULES.items():
        params = {"rope_type": rule, "rope_theta": S, "partial_rotary_factor": 1.0, **settings}
        if rule == "longrope":
            params.update(short_factor=[1.0] * whole_n, long_factor=[2.0] * whole_n)
        if _rotary(config_name, text, params) is not None:
            return False
    return True


def _outcome(function: Any, control: Any, narrow: Any, width: int, narrow_freq: torch.Tensor) -> str | None:
    """What ``function`` does with q and k of ``width`` features and the narrower tables: "fails"
    (a size mismatch, where the ``control`` tables of that width run), "reads" (it turns the first
    features by the narrower frequencies in either layout and passes the rest), or None (neither,
    or the control does not run: a signature or an axis order the probe does not fit)."""
    from tools.rope_model_types.modeling import _posenc_rotation
    generator = torch.Generator().manual_seed(0)
    q, k = (torch.randn(1, 2, _LENGTH, width, dtype=torch.float64, generator=generator) for _ in "qk")
    for transposed in (False, True):  # [batch, heads, seq, dim], else [batch, seq, heads, dim] (Llama 4)
        try:
            ran = _call(function, q, k, control, transposed)
        except (RuntimeError, TypeError, ValueError, IndexError):
            continue  # the other axis order
        if ran is None or ran[0].shape != q.shape:
            return None
        try:
            out = _call(function, q, k, narrow, transposed)
        except RuntimeError as error:
            return "fails" if "must match the size" in str(error) else None
        if out is None or out[0].shape != q.shape:
            return None
        freq = narrow_freq.double().sort(descending=True).values
        scale = _scale(narrow)
        found = [layout for layout in ("half", "interleaved")
                 if torch.allclose(out[0].double(), _posenc_rotation(q, freq, layout, scale), atol=1e-6)]
        return "reads" if found else None
    return None


def _call(function: Any, q: torch.Tensor, k: torch.Tensor, tables: Any, transposed: bool) -> Any:
    """The rotated q and k from ``function`` (``modeling._call_rotation``: None for a signature it
    does not know), its errors let through (``modeling._apply`` answers None for a failure and for
    a signature it does not know alike), with the heads and positions swapped if ``transposed``."""
    from tools.rope_model_types.modeling import _call_rotation
    if transposed:
        q, k = q.transpose(1, 2), k.transpose(1, 2)
    out = _call_rotation(function, q, k, tables, gpt_j=False)
    if out is None:
        return None
    return (out[0].transpose(1, 2), out[1].transpose(1, 2)) if transposed else out


def _scale(tables: Any) -> float:
    """The attention factor folded into cos and sin (cos^2 + sin^2 at any position; 1 for a complex table)."""
    if isinstance(tables, torch.Tensor):
        return 1.0
    cos, sin = tables
    return float((cos.double() ** 2 + sin.double() ** 2).flatten()[0].sqrt())


def _attention_reads_fraction(text: Any) -> bool:
    """Whether the text attention classes' code names the rotated fraction (Phi's attention cuts q and k
    to ``rotary_ndims = int(head_dim * partial_rotary_factor)`` before its rotation, modeling_phi.py:168,
    200-205): a rotation function given the whole head is then not what the attention runs."""
    import ast
    import inspect

    from tools.rope_model_types.modeling import _other_tower, own_name
    source = inspect.getsource(_helpers()._module(text.model_type))
    return any(isinstance(node, ast.ClassDef) and node.name.endswith("Attention")
               and not _other_tower(node.name, own_name(text))
               and "partial_rotary_factor" in (ast.get_source_segment(source, node) or "")
               for node in ast.walk(ast.parse(source)))


def _own_fraction(config_name: str, text: Any) -> float:
    """The fraction the class fills into a scaled set that gives none (Mistral 4: qk_rope_head_dim /
    head_dim, configuration_mistral4.py:131-132; the table's ``absent_defaults``), else 1."""
    given = {"rope_type": "linear", "rope_theta": S, **_RULES["linear"]}
    got = _helpers()._landing(config_name, text, rope_parameters=given)
    value = (got or {}).get("partial_rotary_factor")
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 1.0


def scaled_partial(config_name: str, text: Any, functions: dict[str, Any]) -> dict[str, Any]:
    """``partial_scaled``: "fails" or "reads" (see the module), written where every scaled rule the
    probe can build gives the same answer for every rotation function the attention calls, and the
    attention passes it q and k of a fixed width (it names no fraction). Each rule is built with the
    class's own fraction (1, or Mistral 4's 0.5: the control, whose width q and k get, and the rotation
    runs) and half of it. At transformers 5.23.0 every marked type fails (checked against whole
    one-layer models, tests/test_rope_params_partial_ignored.py); "reads" is what GPT-NeoX's rotation
    gives (it slices q by cos's width), on no partial_ignored type."""
    h = _helpers()
    if _attention_reads_fraction(text):
        return {}  # it slices q and k itself (Phi's rotary_ndims): the rotation function alone does not tell
    whole = _rotary(config_name, text, {"rope_type": "default", "rope_theta": S, "partial_rotary_factor": 1.0})
    whole_n = h._inv_freq(whole, None).numel() if whole is not None else 0
    verdict = _verdict(lambda params: _rotary(config_name, text, params), None, _own_fraction(config_name, text),
                       whole_n, functions)
    return {"partial_scaled": verdict} if verdict else {}


def nested_scaled(config_name: str, text: Any, defaults: dict[str, Any], ignored: list[str],
                  functions: dict[str, Any]) -> dict[str, Any]:
    """``nested_partial_scaled``: for each layer type whose rotary module ignores the fraction of an
    entry of rope type "default" (``nested_partial_ignored``: Gemma 3's), the same answer as
    `scaled_partial` for an entry with a scaled rule and a fraction, the other entries left bare."""
    h = _helpers()
    if not ignored or _attention_reads_fraction(text):
        return {}
    bare = {t: None if d is None else {"rope_type": "default", "rope_theta": S} for t, d in defaults.items()}

    def rotary(entries: dict[str, Any]) -> Any:
        built = h._built(config_name, text, rope_parameters=copy.deepcopy(entries))
        rotaries = h._rotary_candidates(h._module(built.model_type), built) if built is not None else []
        return rotaries[0].double() if rotaries else None

    found = {}
    whole = rotary(bare)
    for layer_type in ignored:
        freq = h._inv_freq(whole, layer_type) if whole is not None else None
        verdict = _verdict(lambda params, t=layer_type: rotary({**bare, t: params}), layer_type, 1.0,
                           0 if freq is None else freq.numel(), functions)
        if verdict:
            found[layer_type] = verdict
    return {"nested_partial_scaled": found} if found else {}


def _verdict(rotary_for: Any, layer_type: str | None, own: float, whole_n: int,
             functions: dict[str, Any]) -> str | None:
    """The answer of every scaled rule built by ``rotary_for(params)`` at the fraction ``own`` (the
    control) and half of it, run through every function: one answer, or None (they disagree, a rule
    ignores the fraction too, or none builds)."""
    from tools.rope_model_types.modeling import _tables
    h = _helpers()
    answers = set()
    for rule, settings in _RULES.items():
        built = {}
        for fraction in (own, own / 2):
            params = {"rope_type": rule, "rope_theta": S, "partial_rotary_factor": fraction, **settings}
            if rule == "longrope":  # one factor per frequency: the width this fraction asks for
                n = int(whole_n * fraction)
                params.update(short_factor=[1.0] * n, long_factor=[2.0] * n)
            rotary = rotary_for(params)
            inv_freq = h._inv_freq(rotary, layer_type) if rotary is not None else None
            tables = _tables(rotary, _LENGTH, layer_type) if inv_freq is not None else None
            if tables is None:
                break
            built[fraction] = (inv_freq, tables)
        if len(built) != 2:
            continue  # the class or its rotary module does not build the rule on these values
        (own_freq, control), (narrow_freq, narrow) = built[own], built[own / 2]
        if narrow_freq.numel() == own_freq.numel():
            answers.add(None)  # this rule ignores the fraction as well: not a narrower width
            continue
        answers |= {_outcome(f, control, narrow, 2 * own_freq.numel(), narrow_freq) for f in functions.values()}
    return answers.pop() if len(answers) == 1 and None not in answers else None
