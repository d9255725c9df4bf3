"""``python -m posenc.inspect CONFIG.json [--layer-type T] [--length N] [--engines]``: what a config does with positions.

Reads a model's ``config.json`` with `posenc.configs.read_config` and says, per kind of layer,
whether it rotates, how (layout, rotated width, base, scaling rule, attention factor), what acts
outside the rotation (a query temperature, a softmax scale), how the slowest pair's wavelength
compares with the trained and the declared context, how many pairs complete a turn within them,
a line per rotary site for a layer that rotates at more than one (`posenc.configs.sites.rotary_sites`),
and the warnings a practitioner needs; with ``--engines``, the name each inference engine gives the
layout (`posenc.engines.layout_flags`) and a warning for each engine known to compute the config
otherwise (`posenc.engines.engine_warnings`). A vision or video encoder's config gets the reading of
`posenc.configs.vision.read_vision_config` in words (after the text reading, for a multimodal parent).
``-`` as the file reads standard input. Bad input (a
missing file, text that is not JSON, JSON that is not an object, an unknown key, an impossible
value) gets one line on stderr that names the problem, and exit status 2.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

from posenc._checks import check_int
from posenc._zoo_rows import _longest
from posenc._inspect_vision import describe_vision, is_encoder, reads_vision
from posenc.configs import ConfigRope, LayerRope, query_temperature, read_config
from posenc.configs import _table as _rope_table
from posenc.configs._params import _too_deep
from posenc.configs._windows import reach
from posenc.engines import ENGINES, engine_warnings, layout_flags
from posenc.rope_scaling import rope_inverse_frequencies

__all__ = ["describe", "main", "warnings_for"]

_MAX_LENGTH = 2**53


def _wavelengths(layer: LayerRope, length: int | None) -> list[float]:
    """Positions per full turn of each rotating pair (pairs that never turn are left out)."""
    theta = rope_inverse_frequencies(layer.dim or 2, base=layer.base or 10000.0, scaling=layer.scaling,
                                     seq_len=length, rotary_dim=layer.rotary_kwargs()["rotary_dim"])
    return [2 * math.pi / t for t in theta.tolist() if t > 0]


def _at_length(layer: LayerRope, rope: ConfigRope, length: int | None) -> str:
    """The length a length-dependent rule's frequencies are shown for (LongRoPE, dynamic NTK), else ""."""
    if not layer.scaling or layer.scaling["type"] not in ("dynamic", "longrope"):
        return ""
    if length:
        return f" at a length of {length:,}"
    short = rope.original_max_position_embeddings
    return f" for inputs up to {short:,} tokens" if short else " for short inputs"


def _fmt(value: float) -> str:
    return f"{value:,.0f}" if value < 1e7 else f"{value:.3g}"


def _temperature_words(layer: LayerRope, length: int | None) -> str | None:
    t = layer.temperature
    if t is None:
        return None
    where = f"; at position {length - 1:,}: x{query_temperature(t, length - 1):.4f}" if length else ""
    if t["rule"] == "llama_4_scaling_beta":
        return (f"queries scaled by 1 + {t['beta']:g} ln(1 + floor(p / {t['length']:,})) after the rotation "
                f"(Ministral's llama_4_scaling_beta){where}")
    return (f"queries scaled by {t['attn_scale']:g} ln(1 + floor((p + 1) / {t['floor_scale']:,})) + 1 "
            f"(Llama 4's temperature tuning of NoPE layers){where}")


def _head_width(layer: LayerRope, sites: Sequence[Any]) -> int | None:
    """The query-key head's width where the rotary part is a slice of a wider head (latent attention,
    DeepSeek-V4: the attention site's ``head_dim``), else the layer's own ``dim``."""
    attention = next((site for site in sites if site.name == "attention"), None)
    return attention.head_dim if attention and layer.dim is not None and attention.head_dim > layer.dim else layer.dim


def _layer_lines(name: str, layer: LayerRope, rope: ConfigRope, length: int | None,
                 sites: Sequence[Any] = ()) -> list[str]:
    count = f" ({len(layer.layers)} layers)" if layer.layers else ""
    sides = " on each side" if layer.window_sides == "both" else ""  # an encoder's two-sided window
    if layer.window is not None and layer.window_sides == "centred":  # T5Gemma2's encoder: uneven sides
        before, after = reach(layer.window, layer.window_sides)
        sides = f": {before:,} before the query and {after:,} after"
    # DeepSeek-V4's compressed layers: the window bounds the uncompressed keys only
    what = "uncompressed keys (compressed keys reach further)" if any(s.name == "compressor" for s in sites) else "tokens"
    window = f", attends within {layer.window:,} {what}{sides}" if layer.window is not None else ""
    if layer.window is None and layer.window_sides == "both":  # an encoder, or a mask opened both ways
        window = ", attends to every token, before and after"
    if not layer.rotates:
        what = "does not rotate (NoPE)" if layer.rotates is False else "is a layer type posenc does not know"
        lines = [f"{name}{count}: {what}{window}" + (f"; {layer.note}" if layer.note else "")]
        temperature = _temperature_words(layer, length)
        return lines + ([f"  {temperature}"] if temperature else [])
    scaling = "no scaling" if layer.scaling is None else "scaling " + ", ".join(
        f"{k} {v}" for k, v in layer.scaling.items() if not isinstance(v, list))
    lines = [(f"{name}{count}: rotates {layer.rotary_dim} of {_head_width(layer, sites)} features in {layer.layout} pairs, "
              f"base {layer.base:g}, {scaling}{window}"),
             f"  attention factor on cos and sin: {layer.attention_factor:.4f}"]
    if layer.softmax_scale != 1.0:
        lines.append(f"  softmax scale: x{layer.softmax_scale:.4f} on 1/sqrt(head_dim) (DeepSeek's YaRN mscale)")
    temperature = _temperature_words(layer, length)
    if temperature:
        lines.append(f"  {temperature}")
    waves = _wavelengths(layer, length)
    if waves:
        slowest = max(waves)
        # the length the scaling rule stretches to where the config declares less (the models table's
        # context column, posenc._zoo_rows._longest): Qwen2.5's YaRN file, 4 x 32,768
        longest = _longest(rope)
        stretched = longest if longest and longest > (rope.max_position_embeddings or 0) else None
        contexts = [(label, n) for label, n in (("trained", rope.original_max_position_embeddings),
                                                ("declared", rope.max_position_embeddings),
                                                ("rule's", stretched), ("--length", length))
                    if n]
        compare = ", ".join(f"{slowest / n:.3g}x the {label} {n:,}" for label, n in contexts)
        lines.append(f"  slowest pair{_at_length(layer, rope, length)}: one turn per {_fmt(slowest)} positions"
                     + (f" ({compare})" if compare else ""))
        for label, n in contexts:
            lines.append(f"  pairs completing a turn within the {label} context: "
                         f"{sum(w <= n for w in waves)} of {len(waves)}")
    return lines


def _sites(config: Mapping[str, Any]) -> dict[str, tuple[Any, ...]]:
    from posenc.configs.sites import rotary_sites  # not imported by posenc.configs itself
    return rotary_sites(config)


def _site_lines(sites: Sequence[Any]) -> list[str]:
    """A line per rotary site, for a layer that rotates at more than one (`posenc.configs.sites`)."""
    if len(sites) < 2:
        return []
    return [f"  site {site.name}: turns the {site.features} {site.width} of {site.head_dim} features in {site.layout} "
            f"pairs" + (", at the position of its window's first token" if site.positions == "window start" else "")
            + (", turned back (minus the angle)" if site.inverse else "") for site in sites]


def warnings_for(rope: ConfigRope, length: int | None = None, config: Mapping[str, Any] | None = None) -> list[str]:
    """The warnings a practitioner needs about this config (see the module docstring).

    Examples:
        >>> yarn = {"rope_type": "yarn", "factor": 4.0,
        ...         "original_max_position_embeddings": 32768}
        >>> rope = read_config({"model_type": "qwen3", "head_dim": 128,
        ...                     "hidden_size": 2048, "num_attention_heads": 16,
        ...                     "rope_theta": 1e6, "rope_scaling": yarn,
        ...                     "max_position_embeddings": 131072})
        >>> print(warnings_for(rope)[0][:69])
        static YaRN: the frequencies are stretched at every length, short inp
    """
    if not isinstance(rope, ConfigRope):
        raise TypeError(f"rope must be a ConfigRope (what read_config returns), got {type(rope).__name__}")
    if length is not None:
        length = check_int("length", length, minimum=1, maximum=_MAX_LENGTH)
    if config is not None and not isinstance(config, Mapping):
        raise TypeError(f"config must be a dict (the config.json read) or None, got {type(config).__name__}")
    found: list[str] = []
    rotating = [layer for layer in rope.layers.values() if layer.rotates]
    if any(layer.scaling and layer.scaling["type"] == "yarn" for layer in rotating):
        # a fact for every model; the advice is Qwen's own (QwenLM/Qwen3 docs/source/inference/
        # transformers.md:215-216), not that of authors whose code runs YaRN at every length
        # (DeepSeek-V3's inference/model.py:367, gpt-oss's gpt_oss/torch/model.py:91)
        advice = ("; Qwen's guide advises adding this rope_scaling only when long inputs need it"
                  if (rope.model_type or "").startswith("qwen") else "")
        found.append("static YaRN: the frequencies are stretched at every length, short inputs included "
                     f"(transformers computes them once, from the config){advice}")
    for layer in rotating:
        if layer.scaling and layer.scaling["type"] == "proportional":
            continue  # p-RoPE keeps its slow pairs still on purpose; the turning ones are fast by design
        # a sliding layer sees its window (0: Gemma 3 bidirectional with a window of 1, the query alone),
        # or the context where the window reaches further
        reach = length or rope.max_position_embeddings
        context = reach if layer.window is None else min(layer.window, reach) if reach else layer.window
        # a rule that depends on the length (LongRoPE's long factors, dynamic NTK) is judged at the
        # frequencies of the length judged, not at those of short inputs
        depends = (layer.scaling or {}).get("type") in ("dynamic", "longrope")
        waves = _wavelengths(layer, reach if depends and reach else length)
        if context and waves and max(waves) < context:
            found.append(f"{layer.layer_type}: the base {layer.base:g} is too small for {context:,} positions: "
                         f"even the slowest pair turns every {_fmt(max(waves))}, so every angle repeats "
                         f"within the context")
    if length and rope.max_position_embeddings and length > rope.max_position_embeddings:
        found.append(f"--length {length:,} is past the {rope.max_position_embeddings:,} positions the config "
                     f"declares")
    if any(layer.scaling and layer.scaling["type"] in ("dynamic", "longrope") for layer in rotating):
        found.append("the frequencies depend on the sequence length (dynamic NTK or LongRoPE): a KV cache "
                     "rotated at one length does not match queries rotated at another")
    spec = (_rope_table.entry(rope.model_type) or {}).get("layout") if rope.model_type else None
    if isinstance(spec, Mapping) and config is not None and config.get(spec["key"]) is None:
        chosen = spec["true"] if spec["default"] else spec["false"]
        found.append(f"the config has no {spec['key']!r}: transformers' default ({str(spec['default']).lower()}) "
                     f"pairs the features {chosen}; a checkpoint converted for the other layout rotates wrongly "
                     f"without any error")
    return found + list(rope.notes)


def _engine_lines(rope: ConfigRope) -> list[str]:
    """Each engine's name for the layout, then the engines known to compute this config otherwise
    (`posenc.engines.engine_warnings`: the data the chapter "Positions in the engines you run" shows)."""
    rotating = [layer for layer in rope.layers.values() if layer.rotates]
    layouts = dict.fromkeys(layer.layout for layer in rotating if layer.layout)
    lines = ["layout names in engines:"] if layouts else []
    for layout in layouts:
        lines.append(f"- {layout}: " + "; ".join(f"{ENGINES[key].name} {name}"
                                                  for key, name in layout_flags(layout).items() if name != "—"))
    differ = engine_warnings(rope.model_type, [layer.scaling for layer in rotating])
    return lines + (["engine warnings:"] + [f"- {warning}" for warning in differ] if differ else [])


def describe(config: Mapping[str, Any], layer_type: str | None = None, length: int | None = None,
             engines: bool = False) -> str:
    r"""What a config does with positions, in words, per kind of layer, then the warnings.

    Args:
        config: a model's ``config.json`` as a dict.
        layer_type: describe only the layers of this type (a key of `read_config`'s ``layers``).
        length: a sequence length to evaluate at (the frequencies of length-dependent rules, the
            query temperature, the pairs that turn within it).
        engines: also say what each engine of `posenc.engines` calls the layout, and warn where one is
            known to compute this config otherwise than transformers.

    Examples:
        >>> text = describe({"model_type": "llama", "hidden_size": 4096,
        ...                  "num_attention_heads": 32, "num_hidden_layers": 32,
        ...                  "rope_theta": 500000.0,
        ...                  "max_position_embeddings": 8192})
        >>> first, layer, *rest = text.splitlines()
        >>> print(first)
        model type llama: one kind of layer
        >>> print(layer.replace(", base", ",\n    base"))
        full_attention (32 layers): rotates 128 of 128 features in half pairs,
            base 500000, no scaling
        >>> print("\n".join(rest))
          attention factor on cos and sin: 1.0000
          slowest pair: one turn per 2,559,196 positions (312x the declared 8,192)
          pairs completing a turn within the declared context: 35 of 64
    """
    if length is not None:
        length = check_int("length", length, minimum=1, maximum=_MAX_LENGTH)
    if not isinstance(engines, bool):
        raise TypeError(f"engines must be True or False, got {type(engines).__name__} {engines!r:.40}")
    try:
        rope = read_config(config)
    except ValueError as refused:  # an encoder, or a parent whose language model is not read
        if layer_type is not None or not reads_vision(config):
            raise
        head = [] if is_encoder(config) else [f"language model not read: {refused}"]
        return "\n".join(head + describe_vision(config))
    layers = rope.layers
    if layer_type is not None:
        if not isinstance(layer_type, str) or layer_type not in layers:
            raise ValueError(f"layer_type must be one of {', '.join(map(repr, layers))}, got {layer_type!r}")
        layers = {layer_type: layers[layer_type]}
    kinds = "one kind of layer" if len(rope.layers) == 1 else f"{len(rope.layers)} kinds of layer"
    lines = [f"model type {rope.model_type}: {kinds}" + (", attention sinks" if rope.sinks else "")]
    sites = _sites(config)
    for name, layer in layers.items():
        lines += _layer_lines(name, layer, rope, length, sites.get(name, ())) + _site_lines(sites.get(name, ()))
    found = warnings_for(rope, length, config)
    if found:
        lines.append("warnings:")
        lines += [f"- {warning}" for warning in found]
    vision = describe_vision(config) if layer_type is None and reads_vision(config) else []
    return "\n".join(lines + (_engine_lines(rope) if engines else []) + vision)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit status 2 (argparse prints usage too)
        print(f"posenc.inspect: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: ``python -m posenc.inspect CONFIG.json [--layer-type T] [--length N] [--engines]``.

    Returns 0, or 2 after one line on stderr for bad input.

    Examples:
        >>> main(["/no/such/config.json"])
        2
    """
    if argv is not None and (isinstance(argv, (str, bytes)) or not isinstance(argv, Sequence)
                             or not all(isinstance(arg, str) for arg in argv)):
        raise TypeError(f"argv must be a list of strings (the command line's arguments) or None, got {argv!r:.60}")
    parser = _Parser(prog="python -m posenc.inspect", description=__doc__.splitlines()[0])
    parser.add_argument("config", help="a model's config.json, or - for standard input")
    parser.add_argument("--layer-type", help="describe only the layers of this type")
    parser.add_argument("--length", type=int, help="a sequence length to evaluate at")
    parser.add_argument("--engines", action="store_true", help="also name the layout as each engine does, and "
                                                               "warn where an engine computes the config otherwise")
    try:
        args = parser.parse_args(None if argv is None else list(argv))
    except SystemExit as stop:
        return int(stop.code or 0)
    try:
        config = _load(args.config)
        if not isinstance(config, dict):
            raise TypeError(f"{args.config} must hold a JSON object (a config.json), got a {type(config).__name__}")
        print(describe(config, args.layer_type, args.length, args.engines))
    except (OSError, json.JSONDecodeError, ValueError, TypeError) as error:
        message = f"{args.config}: not JSON ({error})" if isinstance(error, json.JSONDecodeError) else str(error)
        print(f"posenc.inspect: error: {message}", file=sys.stderr)
        return 2
    return 0


def _load(path: str) -> Any:
    """The JSON in ``path`` (``-``: standard input). Nesting past what a config needs (read_config's limit) is refused as not
    JSON, whether Python's decoder runs out of recursion first or not, with one message."""
    if path == "-":
        text = sys.stdin.read()
    else:
        with open(path, encoding="utf-8") as file:
            text = file.read()
    try:
        value = json.loads(text)
        deep = _too_deep(value)
    except RecursionError:
        deep = True
    if deep:
        raise ValueError(f"{path}: not JSON (nested too deeply)")
    return value

if __name__ == "__main__":
    sys.exit(main())
