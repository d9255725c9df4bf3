"""Mistral 4's rotated part, read as transformers runs it.

Mistral 4's attention heads are ``qk_nope_head_dim + qk_rope_head_dim`` wide and turn their last
``qk_rope_head_dim`` features (modeling_mistral4.py:379, 450-469) with the cos and sin of its rotary
module, which builds them from the config's ``head_dim``: ``head_dim`` features with rope type
"default" (its own default rule, modeling_mistral4.py:88-104), ``int(head_dim *
partial_rotary_factor)`` with the others (modeling_rope_utils.py:181). The config class sets
``head_dim`` to the sum and, where the rope parameters leave the fraction out, the fraction to
``qk_rope_head_dim`` over that sum (configuration_mistral4.py:112-133); it keeps a ``head_dim`` the
config gives (configuration_utils.py:500-504). The model runs exactly where the two counts agree
(tests/test_rope_rotated_part.py runs it): posenc reads the part the attention turns there, and
refuses the rest, saying why.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from posenc._checks import check_int
from posenc.configs import _table as table
from posenc.configs._schema import ModelTypeEntry
from posenc.rope_scaling import MAX_ROPE_DIM, _real

# model type -> (the key of the part that does not turn, the key of the part that turns)
ROTATED_PART: dict[str, tuple[str, str]] = {"mistral4": ("qk_nope_head_dim", "qk_rope_head_dim")}


def rotated_part(config: Mapping[str, Any], found: ModelTypeEntry, params: Mapping[str, Any],
                 model_type: str | None) -> int | None:
    """The width the attention turns, for a model type of `ROTATED_PART` (None for the others);
    a config whose rotary module builds cos and sin of another width is refused (the model fails)."""
    keys = ROTATED_PART.get(table.text_model_type(model_type)) if model_type is not None else None
    if keys is None:
        return None
    nope, rope = (check_int(f"config[{key!r}]", table.field(found, config, key), minimum=0, maximum=MAX_ROPE_DIM)
                  for key in keys)
    if rope < 2 or rope % 2:
        raise ValueError(f"config['{keys[1]}'] must be a positive even integer (the features its attention "
                         f"turns, in pairs), got {rope}")
    given = table.get(found, config, "head_dim")
    head_dim = nope + rope if given is None else check_int("config['head_dim']", given, minimum=2,
                                                           maximum=MAX_ROPE_DIM)
    fraction = _given_fraction(config)
    if params.get("rope_type") == "default":
        built, how = head_dim, f"head_dim = {head_dim}, as its default rule takes it"
    else:
        value = rope / (nope + rope) if fraction is None else _real("partial_rotary_factor", fraction,
                                                                     minimum=0.0, maximum=1.0)
        built = int(head_dim * value)
        how = (f"int(head_dim * partial_rotary_factor) = int({head_dim} * {value!r})"
               + ("" if fraction is not None else ", the class's fraction"))
    if built != rope:
        relation = "narrower than" if built < rope else "other than"
        raise ValueError(f"transformers' rotary module for model type {model_type!r} builds cos and sin for {built} "
                         f"features ({how}), {relation} the config['{keys[1]}'] = {rope} features its attention "
                         f"turns, and the model fails on it; give head_dim and partial_rotary_factor whose product "
                         f"is {rope}, or leave them out")
    return rope


def _given_fraction(config: Mapping[str, Any]) -> Any:
    """The partial_rotary_factor the config's rope parameters give (None: they give none)."""
    for source in ("rope_parameters", "rope_scaling"):
        value = config.get(source)
        if isinstance(value, Mapping) and value.get("partial_rotary_factor") is not None:
            return value["partial_rotary_factor"]
    return None
