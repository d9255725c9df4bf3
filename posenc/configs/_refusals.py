"""Why `posenc.configs.read_config` does not read a model type, and the switches that turn its
rotation off: each refusal says what transformers' code for the model type does (the table's keys,
`posenc.configs._schema`, are derived from that code by ``tools/rope_model_types``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from posenc.configs import _table as table
from posenc.configs._schema import ModelTypeEntry
from posenc.configs._vision_refused import refusal


def refuse(config: Mapping[str, Any], text: Mapping[str, Any], found: ModelTypeEntry, model_type: str | None) -> None:
    """Raise the ValueError (or TypeError) that says why this config is not read, if it is not."""
    if found.get("rope") is False and (elsewhere := found.get("rotates_elsewhere")):  # GLM-5-Next's text model
        off = found.get("rotation_off") or {}  # Moshi's depth decoder
        raise ValueError(_rotates_elsewhere(config, model_type, elsewhere, off))
    if found.get("rope") is False and found.get("rope_parameters_given_only"):  # Cohere Compass's text model
        raise ValueError(f"model type {model_type!r}: its attention rotates q and k with the rope_parameters a config "
                         f"gives, and its config class fills none (an empty rope_parameters at its defaults, where "
                         f"posenc's table is derived): posenc does not read it yet")
    if found.get("rope") is False and found.get("rotation_calls"):
        raise ValueError(f"model type {model_type!r}: posenc does not read its rotary position embedding from a config "
                         f"(transformers' modeling file for it calls {', '.join(found['rotation_calls'])}: this model "
                         f"type, or another model of the same file, rotates q and k; vision, audio and video encoders "
                         f"are not read yet){refusal(model_type)}")
    own = table.model_types().get(config.get("model_type") or "") or {}  # the config's own type, not its text model's
    if parts := own.get("rotating_parts") or found.get("rotating_parts"):  # pi0's Gemma, CHMv2's DINOv3 backbone
        raise ValueError(f"model type {config.get('model_type') or model_type!r}: its own code does not rotate, but its "
                         f"parts do ({'; '.join(f'{key}: {kind}' for key, kind in parts.items())}): read those "
                         f"sub-configs")
    if found.get("rope") is False:
        raise ValueError(f"model type {model_type!r} uses no rotary position embedding (transformers' code for it "
                         f"has no RoPE): from_config reads RoPE settings only")
    if backward := found.get("turns_backward"):  # NanoChat: rotate_half with both signs flipped
        raise ValueError(f"model type {model_type!r}: transformers' code for it turns each pair of the {backward!r} "
                         f"layout the other way, by -m theta at position m where RoPE turns by +m theta (found by "
                         f"running its rotary module and rotation function): posenc's rotation does not express that, "
                         f"in either layout")
    if heads := found.get("head_slice"):  # Qwen2.5-Omni's DiT: its first head only
        raise ValueError(_head_slice(model_type, heads["attention"], heads["sliced"], heads["through"]))
    if flag := found.get("rotates_values"):  # RoFormer's rotary_value
        on = text[flag["key"]] if flag["key"] in text else flag["default"]
        if not isinstance(on, bool):
            raise TypeError(f"config[{flag['key']!r}] must be true or false, got {type(on).__name__} {on!r:.40}")
        if on:
            raise ValueError(f"config[{flag['key']!r}] is true: transformers' code for model type {model_type!r} then "
                             f"rotates the values as well as q and k, by the same angles at each token's own position "
                             f"(apply_rotary_position_embeddings with value_layer), so the attention's output carries "
                             f"absolute positions; posenc's RoPE rotates q and k only and reads this model type with "
                             f"{flag['key']} false")
    if "no_alibi" in found.get("rope_condition", ()) and text.get("alibi") is True:
        raise ValueError(f"config['alibi'] is true: this {model_type} model uses ALiBi, not RoPE")


def _head_slice(model_type: str | None, attention: str, sliced: str, through: list[str]) -> str:
    count = re.fullmatch(r"\w+\[:, :(\d+)\](, \w+\[:, :\1\])*", sliced)
    which = ("" if count is None else f" (q and k are [batch, heads, positions, features] there: its first "
             f"{'head' if count.group(1) == '1' else count.group(1) + ' heads'})")
    before = f", after {' and '.join(through)} reorders their features" if through else ""
    return (f"model type {model_type!r}: its attention ({attention}) rotates only {sliced}{which}{before}; the other "
            f"heads take no rotation: posenc reads one rotation for all the heads of a layer, which cannot express "
            f"that")


def _rotates_elsewhere(config: Mapping[str, Any], model_type: str | None, classes: list[str],
                       off: Mapping[str, str]) -> str:
    """Why a model type whose model does not rotate is refused (``rotates_elsewhere``): a language
    model uses no RoPE; a multimodal parent's vision tower may still rotate, so it is not said to;
    a class it builds with its rotation switched off (``rotation_off``: Moshi's depth decoder) is named."""
    own = config.get("model_type")
    wrapper = (table.model_types().get(own) or {}).get("text_model_type") if isinstance(own, str) else None
    what = (f"model type {own!r}: its language model ({wrapper!r}) does not rotate q and k" if wrapper else
            f"model type {model_type!r} uses no rotary position embedding")
    built = f"no module of the model transformers builds from {'its text config' if wrapper else 'it'} rotates"
    if off:
        switched = ", ".join(f"{name} with self.{attr} None" for name, attr in off.items())
        return (f"{what}: {built}: it builds {switched}, which skips the rotation (the other models of its "
                f"modeling file build them with it on){refusal(model_type)}")
    return (f"{what}: {built}; the rotation in its modeling file is other classes' ({', '.join(classes)})"
            f"{refusal(model_type)}")


# Switches the table's generator does not find (it finds ESM's in the attention's code): Granite 4's model builds
# its rotary module only when position_embedding_type is "rope", default None, and its attention rotates only
# with position embeddings (modeling_granitemoehybrid.py:1056, 1109-1110; configuration_granitemoehybrid.py:94);
# its published configs set "nope" or "rope". tests/test_rope_legacy_names.py checks it live.
ROPE_SWITCHES: dict[str, dict[str, Any]] = {
    "granitemoehybrid": {"key": "position_embedding_type", "rotary": "rope", "absolute": None, "default": None}}


def class_switches(found: ModelTypeEntry, model_type: str | None) -> ModelTypeEntry:
    """The table entry with a `ROPE_SWITCHES` switch where the table has none."""
    switch = ROPE_SWITCHES.get(model_type or "")
    if switch is None or found.get("rope_switch"):
        return found
    return {**found, "rope_switch": switch}  # type: ignore[typeddict-item]


def switched_off(config: Mapping[str, Any], found: ModelTypeEntry) -> str | None:
    """Why the layers do not rotate where a config key switches the rotation (``rope_switch``:
    ESM's ``position_embedding_type``), or None where it is on (or the model type has no switch)."""
    switch = found.get("rope_switch")
    if not switch:
        return None
    key, rotary, absolute = switch["key"], switch["rotary"], switch["absolute"]
    value = config[key] if key in config else switch["default"]
    if value is not None and not isinstance(value, str):
        raise TypeError(f"config[{key!r}] must be a string such as {rotary!r}"
                        f"{f' or {absolute!r}' if absolute else ''}, got {type(value).__name__} {value!r:.40}")
    if value == rotary:
        return None
    if absolute is not None and value == absolute:
        return (f"config[{key!r}] is {value!r}: this model type's attention does not rotate q and k (NoPE); its code "
                f"adds learned absolute position embeddings to the token embeddings instead")
    return (f"config[{key!r}] is {value!r}: transformers' code for this model type rotates q and k only with {rotary!r}"
            f"{f' and adds learned absolute position embeddings only with {absolute!r}' if absolute else ''}: with "
            f"{value!r} its layers get no position information")


def theta_only(config: Mapping[str, Any], found: ModelTypeEntry, notes: list[str]) -> Mapping[str, Any]:
    """The config without the ``rope_parameters`` and ``rope_scaling`` a rotary module that reads only
    the top-level ``rope_theta`` ignores (``theta_only``: ESM's), each named in ``notes``."""
    if not found.get("theta_only"):
        return config
    ignored = [key for key in ("rope_parameters", "rope_scaling") if config.get(key) is not None]
    if ignored:
        notes.append(f"transformers' code for this model type reads only config['rope_theta'] (the default rule, no "
                     f"scaling): it ignores {', '.join(f'config[{key!r}]' for key in ignored)}")
    return {key: value for key, value in config.items() if key not in ignored}
