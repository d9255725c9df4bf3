"""HunYuan's fixed NTK alpha: rope type "dynamic" with an ``alpha``, read as the scaling posenc runs.

A helper of `posenc.configs._layer` (the scaling of one kind of layer) and of
`posenc.configs._params` (its note).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from posenc.configs import _table as table
from posenc.configs._schema import ModelTypeEntry
from posenc.rope_scaling import _LARGEST, _real, parse_scaling

# HunYuan's rotary module runs rope type "dynamic" with a truthy `alpha` as its own type "ntk_alpha"
# (modeling_hunyuan_v1_dense.py:296-303, 341-356; hunyuan_v1_moe :380-440; hunyuan_vl :92-156): the
# base rope_theta * alpha ** (d / (d - 2)) with d = config.head_dim (the whole head, whatever
# partial_rotary_factor says), attention factor 1, and no growth with the sequence
# (dynamic_rope_update regrows only types named "dynamic", modeling_rope_utils.py:121-128): posenc's
# "ntk" rule with factor alpha. The keys beside alpha that HunYuan's checkpoints carry are not read
# (HunYuan-VL's class tells the validation to ignore them, configuration_hunyuan_vl.py:146-153);
# "factor" must be there, as the config class's validation of "dynamic" requires the key
# (modeling_rope_utils.py:947-955), though its value is unused.
ALPHA_UNREAD = ("factor", "beta_fast", "beta_slow", "mscale", "mscale_all_dim")
ALPHA = "rope_parameters['alpha']"
ALPHA_NOTE = ("rope type 'dynamic' with 'alpha' (HunYuan): transformers' rotary module for this model type runs it "
              "as a fixed NTK base, rope_theta * alpha ** (d / (d - 2)) with d = head_dim, that does not grow with "
              "the sequence; read as posenc's 'ntk' scaling with factor alpha ('factor', 'beta_fast', 'beta_slow', "
              "'mscale' and 'mscale_all_dim' are not read)")


def _reads_alpha(found: ModelTypeEntry, params: Mapping[str, Any]) -> bool:
    """Whether ``params`` carry an ``alpha`` that the model type's rotary module reads (HunYuan)."""
    return bool(found.get("ntk_alpha")) and params.get("alpha") is not None


def _alpha_scaling(config: Mapping[str, Any], found: ModelTypeEntry, params: Mapping[str, Any]) -> dict[str, Any]:
    """HunYuan's ``alpha`` as the scaling posenc runs (its "ntk" rule), checked as transformers runs it."""
    name, alpha = ALPHA, params["alpha"]
    # falsy alphas (0) run as plain dynamic NTK in transformers, negative ones give complex frequencies;
    # posenc's NTK rule takes a factor >= 1 (the class's own check, never called, asks > 1)
    value = _real(name, alpha, minimum=1.0, maximum=_LARGEST)
    if "factor" not in params:
        raise ValueError(f"rope parameters of type 'dynamic' need 'factor' beside {name} = {alpha!r}: transformers' "
                         f"config class requires the key (its value is unused with alpha)")
    if table.field(found, config, "head_dim") is None:
        raise ValueError(f"config needs 'head_dim' with {name}: transformers' code for this model type computes the "
                         f"base from config.head_dim and fails without it")
    fraction = params.get("partial_rotary_factor")
    if fraction is not None and fraction != 1.0:
        raise ValueError(f"partial_rotary_factor is {fraction!r}, but with {name} transformers' code for this model "
                         f"type rotates the whole head (config.head_dim): leave it out")
    scaling = {"type": "ntk", "factor": value}
    parse_scaling(scaling)
    return scaling
