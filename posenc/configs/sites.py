"""Every place a layer rotates: the rotary sites of a model's layers, read from its config.

`posenc.read_config` reads one rotation per kind of layer, the one on the attention's queries and
keys. Some layers rotate at more than one place, each with its own width, layout or positions:

* multi-head latent attention (DeepSeek-V2/V3, GLM-4.7-Flash): only the last ``qk_rope_head_dim``
  features of each ``qk_nope_head_dim + qk_rope_head_dim`` query and key head turn;
* the sparse-attention indexer (DeepSeek-V3.2, GLM-5): a second set of queries and keys, the first
  ``qk_rope_head_dim`` features of each ``index_head_dim`` head, turned by the same angles as the
  attention but in a layout of its own (half in DeepSeek-V3.2, interleaved in GLM-5);
* Qwen4-Exp's QSA indexer: the first rotated-width features of its query heads and of its pooled
  keys (each the mean of a block of tokens, turned by the position of the block's first token);
* DeepSeek-V4: a plain rotation (``rope_theta``) in its sliding-window-only layers and another
  (``compress_rope_theta``, with the config's YaRN) in its compressed layers, on the last features
  of each head; the compressor's keys turn by the position of their window's first token, the
  indexer's queries and keys as well, and the attention output turns back by the query's angle.

`rotary_sites` lists the sites of every kind of layer as `RotarySite` records. Which model types
have which sites is data (a table in this module, each rule citing transformers' code); the tests run each site
of the pinned transformers and compare what it does with posenc's rotation. DeepSeek-V4's rope
parameters are keyed by rope kind (``main``, ``compress``), not by layer type, so its reading is
built here (`read_deepseek_v4`) rather than from the model-type table.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from posenc._checks import check_int, is_integer
from posenc.configs import _table as table
from posenc.configs._layer import _rotary_width, _scaling
from posenc.configs._params import _as_mapping, _text_part
from posenc.configs._reader import ConfigRope, LayerRope, read_config
from posenc.configs._two_way import not_causal
from posenc.rope_scaling import MAX_ROPE_DIM, _real, rope_attention_scaling

__all__ = ["RotarySite", "read_deepseek_v4", "rotary_sites"]


@dataclasses.dataclass(frozen=True)
class RotarySite:
    """One place a layer rotates features by their positions.

    Attributes:
        name: ``"attention"`` (the queries and keys of the attention), ``"indexer"`` (a sparse-attention
            indexer's queries and keys), ``"compressor"`` (compressed keys), ``"output"`` (DeepSeek-V4's
            attention output, turned back).
        rotates: what it turns, in words.
        head_dim: the width of each vector this site turns part of.
        width: how many of those features turn.
        features: ``"first"`` or ``"last"``: where the turned features sit in the vector.
        layout: ``"half"`` or ``"interleaved"``, as `posenc.rope.apply_rope` takes it (on the turned
            features only).
        base: the base of the frequency ladder, as `posenc.rope.apply_rope` takes it.
        scaling: the scaling rule, as `posenc.rope.apply_rope` takes it (None: none).
        attention_factor: the factor on cos and sin, as `posenc.rope.apply_rope` takes it.
        positions: ``"token"`` (each token's own position) or ``"window start"`` (a compressed entry
            turns by the position of the first token of the window it summarises).
        inverse: True where the site turns by minus the angle (undoes a rotation).
    """

    name: str
    rotates: str
    head_dim: int
    width: int
    features: str
    layout: str
    base: float
    scaling: dict[str, Any] | None
    attention_factor: float
    positions: str = "token"
    inverse: bool = False


@dataclasses.dataclass(frozen=True)
class _Rule:
    """A site of a model type whose layers rotate as `read_config` reads them (same angles)."""

    name: str
    rotates: str
    head: tuple[str, ...]  # config keys whose sum is the head width
    features: str
    layout: str | None = None  # None: the layout read_config reads
    width: str = "qk_rope_head_dim"  # the rotated width, in the note's words
    positions: str = "token"  # as RotarySite.positions


# Multi-head latent attention: q = cat(q_pass, q_rot) and the key's rope part sits after its
# nope part (modeling_deepseek_v3.py:423, 442, 461; modeling_deepseek_v32.py:399, 416, 430).
# Where a reader finds each site, in a note: the web page's inspector, posenc-inspect's site lines, the API
# (rope_sites.js says it word for word)
_WHERE = "listed site by site by the inspector and by posenc.configs.sites.rotary_sites"
_MLA = _Rule("attention", "the attention's queries and keys", ("qk_nope_head_dim", "qk_rope_head_dim"), "last")
_INDEXER = "the indexer's queries and keys"
_PART = "head_dim * partial_rotary_factor"
_RULES: dict[str, tuple[_Rule, ...]] = {
    "deepseek_v2": (_MLA,),
    "deepseek_v3": (_MLA,),
    "glm4_moe_lite": (_MLA,),
    # the indexers turn part of an index_head_dim head with the attention's cos and sin, in a layout
    # of their own: [rope | pass], half (modeling_deepseek_v32.py:214-220, modeling_axk2.py:250-256);
    # [rope | pass], interleaved (modeling_glm_moe_dsa.py:215-221, modeling_mistral_large4.py:250-252);
    # [pass | rope], half (modeling_hy_v4.py:224-232)
    "deepseek_v32": (_MLA, _Rule("indexer", _INDEXER, ("index_head_dim",), "first", "half")),
    "axk2": (_MLA, _Rule("indexer", _INDEXER, ("index_head_dim",), "first", "half")),
    "glm_moe_dsa": (_MLA, _Rule("indexer", _INDEXER, ("index_head_dim",), "first", "interleaved")),
    "mistral_large4_text": (_MLA, _Rule("indexer", _INDEXER, ("index_head_dim",), "first", "interleaved")),
    "hy_v4": (_MLA, _Rule("indexer", _INDEXER, ("index_head_dim",), "last", "half")),
    # Qwen4-Exp's QSA indexer turns the first rotated-width features of its query heads at their tokens
    # (modeling_qwen4_exp.py:711) and of its pooled keys, each the mean of indexer_compress_ratio tokens,
    # at the block's first token (:736-747), with the attention's cos and sin, half (:653-664)
    "qwen4_exp_text": (_Rule("attention", "the attention's queries and keys", ("head_dim",), "first", width=_PART),
                       _Rule("indexer", "the indexer's queries", ("indexer_head_dim",), "first", "half", _PART),
                       _Rule("indexer keys", "the indexer's pooled keys (the mean of each block of "
                             "indexer_compress_ratio tokens)", ("indexer_head_dim",), "first", "half", _PART,
                             "window start")),
}
# The config classes' defaults for the keys above (the tests compare them with the live classes).
_DEFAULTS: dict[str, dict[str, int]] = {
    "deepseek_v2": {"qk_nope_head_dim": 128, "qk_rope_head_dim": 64},
    "deepseek_v3": {"qk_nope_head_dim": 128, "qk_rope_head_dim": 64},
    "glm4_moe_lite": {"qk_nope_head_dim": 192, "qk_rope_head_dim": 64},
    "deepseek_v32": {"qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "index_head_dim": 128},
    "axk2": {"qk_nope_head_dim": 64, "qk_rope_head_dim": 32, "index_head_dim": 128},
    "glm_moe_dsa": {"qk_nope_head_dim": 192, "qk_rope_head_dim": 64, "index_head_dim": 128},
    "mistral_large4_text": {"qk_nope_head_dim": 64, "qk_rope_head_dim": 64, "index_head_dim": 128},
    "hy_v4": {"qk_nope_head_dim": 192, "qk_rope_head_dim": 64, "index_head_dim": 128},
    "qwen4_exp_text": {"head_dim": 256},  # and no indexer_head_dim: its model needs one (the indexer's sizes)
}


def _key(config: Mapping[str, Any], model_type: str, key: str) -> int:
    value = config.get(key)
    if value is None:
        value = _DEFAULTS.get(model_type, {}).get(key)
    if value is None:
        raise ValueError(f"config needs {key!r} for model type {model_type!r} (a head width of a rotary site)")
    return check_int(f"config[{key!r}]", value, minimum=0, maximum=MAX_ROPE_DIM)


def _site(layer: LayerRope, name: str, rotates: str, head_dim: int, features: str, layout: str | None = None,
          positions: str = "token", inverse: bool = False) -> RotarySite:
    assert layer.rotary_dim is not None and layer.layout is not None and layer.base is not None  # a rotating layer
    if head_dim < layer.rotary_dim:
        raise ValueError(f"the {name} head width ({head_dim}) must be at least the rotated width "
                         f"({layer.rotary_dim}) for layers of type {layer.layer_type!r}")
    return RotarySite(name, rotates, head_dim, layer.rotary_dim, features, layout or layer.layout, layer.base,
                      layer.scaling, layer.attention_factor, positions, inverse)


def rotary_sites(config: Mapping[str, Any], *, layout: str | None = None) -> dict[str, tuple[RotarySite, ...]]:
    """Every place each kind of layer rotates, read from a model's config.

    Keys are `posenc.read_config`'s layer kinds; a kind that does not rotate has no sites. Most model
    types have one site, the attention's queries and keys as `read_config` reads them (the first
    ``rotary_dim`` features of each head); see the module's docstring for the others.

    Args:
        config: a model's ``config.json`` as a dict, or a ``transformers`` config object.
        layout: as for `read_config`, only where the model type does not say.

    Examples:
        >>> sites = rotary_sites({"model_type": "deepseek_v32", "num_hidden_layers": 2})
        >>> for s in sites["indexed_attention"]:
        ...     print(s.name, s.head_dim, s.width, s.features, s.layout)
        attention 192 64 last interleaved
        indexer 128 64 first half
    """
    config = _as_mapping(config)
    model_type, text = _text_part(config)
    if model_type == "deepseek_v4":
        return _v4_sites(text)
    reading = read_config(config, layout=layout)
    rules = _RULES.get(model_type or "")
    sites: dict[str, tuple[RotarySite, ...]] = {}
    for name, layer in reading.layers.items():
        if not layer.rotates:
            sites[name] = ()
        elif rules is None:
            assert layer.dim is not None
            sites[name] = (_site(layer, "attention", "the attention's queries and keys", layer.dim, "first"),)
        else:
            assert model_type is not None
            sites[name] = tuple(_site(layer, rule.name, rule.rotates, sum(_key(text, model_type, k) for k in rule.head),
                                      rule.features, rule.layout, rule.positions) for rule in rules)
    return sites


def site_notes(model_type: str | None, found: Mapping[str, Any], layout: str) -> list[str]:
    """The note `read_config` adds for a layer that rotates at more than one site (`_RULES`), or, for a
    model type without a rule, where the model-type table names a second site in another layout."""
    rules = _RULES.get(model_type or "", ())
    if len(rules) > 1:
        listed = "; ".join(f"{rule.name}: the {rule.features} {rule.width} features of each "
                           f"{' + '.join(rule.head)} head, {rule.layout or layout}" for rule in rules)
        return [(f"more than one rotary site per layer ({listed}), all with the angles read here, {_WHERE}")]
    return [f"transformers' code for this model type also rotates q and k in {site}, in the {site_layout} layout: a "
            f"second rotary site in the layer (the layout read here, {layout}, is the attention's)"
            for site, site_layout in (found.get("rotary_sites") or {}).items() if site_layout != layout]


def site_data() -> dict[str, Any]:
    """The data of this module as plain JSON, for the inspector's JavaScript port (hooks/rope_data.py)."""
    return {"rules": {model_type: [dataclasses.asdict(rule) for rule in rules] for model_type, rules in _RULES.items()},
            "defaults": _DEFAULTS, "v4_defaults": _V4_DEFAULTS, "v4_by_ratio": {str(k): v for k, v in _V4_BY_RATIO.items()}}


# ---------------------------------------------------------------- DeepSeek-V4
_V4_TYPES = ("sliding_attention", "compressed_sparse_attention", "heavily_compressed_attention")
_V4_BY_RATIO = {0: "sliding_attention", 4: "compressed_sparse_attention", 128: "heavily_compressed_attention"}
_V4_DEFAULTS = {"num_hidden_layers": 43, "head_dim": 512, "rope_theta": 10000.0, "compress_rope_theta": 160000.0,
                "sliding_window": 128, "max_position_embeddings": 1048576, "index_head_dim": 128,
                "partial_rotary_factor": 64 / 512,
                "compress_rates": {"compressed_sparse_attention": 4, "heavily_compressed_attention": 128}}


def _v4(config: Mapping[str, Any], key: str) -> Any:
    value = config.get(key)
    return _V4_DEFAULTS[key] if value is None else value


def _v4_head_dim(config: Mapping[str, Any]) -> int:
    return check_int("config['head_dim']", _v4(config, "head_dim"), minimum=2, maximum=MAX_ROPE_DIM)


def _v4_layer_types(config: Mapping[str, Any]) -> list[str]:
    """DeepseekV4Config.__post_init__ (configuration_deepseek_v4.py:267-275): ``layer_types``, else the
    older per-layer ``compress_ratios`` (0, 4, 128), else two heavily compressed layers and then
    compressed-sparse and heavily compressed layers in turn."""
    layers = check_int("config['num_hidden_layers']", _v4(config, "num_hidden_layers"), minimum=1, maximum=2**20)
    types, ratios = config.get("layer_types"), config.get("compress_ratios")
    source = "layer_types" if types is not None or ratios is None else "compress_ratios"
    if types is None and ratios is not None:
        # integers only (not 4.0 or true): the port reads the same values the same way
        if not isinstance(ratios, (list, tuple)) or any(not is_integer(r) or r not in _V4_BY_RATIO for r in ratios):
            raise ValueError(f"config['compress_ratios'] must be a list of 0, 4 or 128 per layer (what "
                             f"DeepseekV4Config maps to layer types), got {ratios!r:.80}")
        types = [_V4_BY_RATIO[r] for r in ratios]
    if types is None:
        types = ["heavily_compressed_attention"] * min(layers, 2) + [
            "compressed_sparse_attention" if i % 2 else "heavily_compressed_attention" for i in range(layers - 2)]
    if not isinstance(types, (list, tuple)) or any(t not in _V4_TYPES for t in types):
        raise ValueError(f"config['layer_types'] must be a list of {', '.join(map(repr, _V4_TYPES))}, got "
                         f"{types!r:.80}")
    types = list(types)[:layers]
    if len(types) != layers:
        raise ValueError(f"config[{source!r}] must have one entry per layer ({layers}), got {len(types)}: "
                         f"{config.get(source)!r:.80}")
    return types


def _v4_parameters(config: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The ``main`` and ``compress`` rope parameters as DeepseekV4Config builds them
    (configuration_deepseek_v4.py:293-320): nested ones as given; otherwise the flat rope parameters
    (YaRN) go to ``compress`` only, with ``compress_rope_theta``, and a YaRN ``compress`` gets
    ``attention_factor`` 1.0 unless given."""
    given = config.get("rope_parameters") or config.get("rope_scaling") or {}
    if not isinstance(given, Mapping):
        raise TypeError(f"config['rope_parameters'] must be a dict, got {type(given).__name__}")
    if isinstance(given.get("main"), Mapping) and isinstance(given.get("compress"), Mapping):
        return {label: {"rope_type": given[label].get("rope_type", given[label].get("type", "default")),
                        **{k: v for k, v in given[label].items() if k != "type"}} for label in ("main", "compress")}
    partial = config.get("partial_rotary_factor")
    if partial is None and config.get("qk_rope_head_dim") is not None:
        rope_dim = check_int("config['qk_rope_head_dim']", config["qk_rope_head_dim"], minimum=0, maximum=MAX_ROPE_DIM)
        partial = rope_dim / _v4_head_dim(config)
    partial = _V4_DEFAULTS["partial_rotary_factor"] if partial is None else partial
    flat = {k: v for k, v in given.items() if k not in ("main", "compress", "type")}
    if "type" in given:
        flat.setdefault("rope_type", given["type"])
    main = {"rope_type": "default", "rope_theta": _v4(config, "rope_theta"), "partial_rotary_factor": partial}
    compress = {**flat, "rope_theta": _v4(config, "compress_rope_theta"), "partial_rotary_factor": partial}
    compress.setdefault("rope_type", "default")
    if compress["rope_type"] == "yarn":
        compress.setdefault("attention_factor", 1.0)
    return {"main": main, "compress": compress}


def _v4_layer(config: Mapping[str, Any], layer_type: str, params: Mapping[str, Any], window: int | None,
              layers: tuple[int, ...]) -> LayerRope:
    found = table.entry("deepseek_v4") or {}
    label = "main" if layer_type == "sliding_attention" else "compress"
    head_dim = _v4_head_dim(config)
    width = _rotary_width(config, {}, {"partial_rotary_factor": params.get("partial_rotary_factor", 1.0)}, head_dim)
    scaling = _scaling(config, found, dict(params), width)
    given = config.get("rope_parameters")
    name = (f"config['rope_parameters'][{label!r}]['rope_theta']" if isinstance(given, Mapping) and label in given
            else "config['rope_theta']" if label == "main" else "config['compress_rope_theta']")
    base = _real(name, params.get("rope_theta"), positive=True)
    note = (f"DeepSeek-V4 turns the last {width} of the {head_dim} features of each head (the values too, "
            f"then turns the attention output back by the query's angle); rope parameters {label!r}")
    if label == "compress":
        note += ("; the layer also attends to compressed entries of the whole past, whose keys turn by the "
                 f"position of their window's first token (a site of its own, {_WHERE})")
    return LayerRope(layer_type, True, width, width, "interleaved", base, scaling, rope_attention_scaling(scaling),
                     None, 1.0, window, layers, note)


def read_deepseek_v4(config: Mapping[str, Any], *, layout: str | None = None) -> ConfigRope:
    """DeepSeek-V4's positions per kind of layer, as transformers' DeepseekV4 code runs them.

    Sliding-window-only layers turn by the ``main`` rope parameters (``rope_theta``, no scaling);
    compressed layers (``compressed_sparse_attention``, ``heavily_compressed_attention``) by the
    ``compress`` ones (``compress_rope_theta`` and the config's YaRN, with attention factor 1):
    modeling_deepseek_v4.py:786-788, 1366-1367. Every layer attends within ``sliding_window``
    tokens (one sliding-window mask for all layers: :1352-1363). ``dim`` is the turned part of the
    head (the last ``head_dim * partial_rotary_factor`` features), as for DeepSeek's other models.

    Args:
        config: a DeepSeek-V4 ``config.json`` as a dict, or its ``transformers`` config object.
        layout: None or ``"interleaved"`` (the only layout of this model type).

    Examples:
        >>> kinds = ["sliding_attention", "compressed_sparse_attention",
        ...          "heavily_compressed_attention", "sliding_attention"]
        >>> yarn = {"type": "yarn", "factor": 16,
        ...         "original_max_position_embeddings": 65536}
        >>> rope = read_deepseek_v4({"model_type": "deepseek_v4", "layer_types": kinds,
        ...                          "num_hidden_layers": 4, "rope_scaling": yarn})
        >>> for kind, layer in rope.layers.items():
        ...     rule = layer.scaling and layer.scaling["type"]
        ...     print(kind, layer.base, rule, layer.layers)
        sliding_attention 10000.0 None (0, 3)
        compressed_sparse_attention 160000.0 yarn (1,)
        heavily_compressed_attention 160000.0 yarn (2,)
    """
    config = _as_mapping(config)
    _, config = _text_part(config)
    if not_causal(config, "deepseek_v4"):  # its one sliding mask then opens both ways (masking_utils.py:1180-1189)
        raise ValueError("config['is_causal'] is false, and posenc does not know which mask DeepSeek-V4's compressed "
                         "layers then get (transformers opens its sliding masks both ways)")
    if layout is not None and layout != "interleaved":
        raise ValueError(f"layout must be 'interleaved' for model type 'deepseek_v4' (how transformers' code for it "
                         f"pairs q/k features: modeling_deepseek_v4.py:346-370), got layout={layout!r}")
    types = _v4_layer_types(config)
    params = _v4_parameters(config)
    window = config.get("sliding_window", _V4_DEFAULTS["sliding_window"])
    window = None if window is None else check_int("config['sliding_window']", window, minimum=1, maximum=2**53)
    kinds: dict[str, list[int]] = {}
    for index, kind in enumerate(types):
        kinds.setdefault(kind, []).append(index)
    layers = {kind: _v4_layer(config, kind, params["main" if kind == "sliding_attention" else "compress"], window,
                              tuple(indices)) for kind, indices in kinds.items()}
    # as read_config: the trained context of the layers' scaling (checked there)
    originals = [layer.scaling["original_max_position_embeddings"] for layer in layers.values() if layer.scaling
                 and "original_max_position_embeddings" in layer.scaling and layer.scaling["type"] != "dynamic"]
    longest = check_int("config['max_position_embeddings']", _v4(config, "max_position_embeddings"), minimum=1,
                        maximum=2**53)
    notes = ((f"config['sliding_window'] ({window}) limits the uncompressed keys of every layer: transformers' code "
              f"for this model type builds one sliding-window mask for the whole model"),
             f"more than one rotary site per layer, {_WHERE}")
    return ConfigRope("deepseek_v4", layers, tuple(types), longest,
                      originals[0] if originals else None, notes, True)


def _v4_sites(config: Mapping[str, Any]) -> dict[str, tuple[RotarySite, ...]]:
    """The sites of each kind of DeepSeek-V4 layer (modeling_deepseek_v4.py): the attention's queries and
    shared keys/values (:830, :833), its output turned back (:879), the compressor's keys at their
    window's first position (:431-433, :688-691) and the indexer's keys and queries (:563-576)."""
    reading = read_deepseek_v4(config)
    head = _v4_head_dim(config)
    index_head = check_int("config['index_head_dim']", _v4(config, "index_head_dim"), minimum=2, maximum=MAX_ROPE_DIM)
    sites: dict[str, tuple[RotarySite, ...]] = {}
    for kind, layer in reading.layers.items():
        found = [_site(layer, "attention", "the attention's queries and its keys, which are also its values", head,
                       "last"),
                 _site(layer, "output", "the attention output, turned back by the query's angle", head, "last",
                       inverse=True)]
        if kind != "sliding_attention":
            found.append(_site(layer, "compressor", "the compressed keys (and values)", head, "last",
                               positions="window start"))
        if kind == "compressed_sparse_attention":
            found.append(_site(layer, "indexer", "the indexer's queries", index_head, "last"))
            found.append(_site(layer, "indexer keys", "the indexer's compressed keys", index_head, "last",
                               positions="window start"))
        sites[kind] = tuple(found)
    return sites
