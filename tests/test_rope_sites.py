"""Every rotary site of a layer (posenc.configs.sites), checked against the pinned transformers.

Each live test builds a tiny model of the model type, runs one forward pass in float64 while
recording every call of the modeling file's rotation functions (which class called, what went in
and what came out), and compares each call with posenc's rotation of the same input at the site's
positions, base, scaling and width: in each of the two layouts. The scores between every query
and key (or the output itself where the function keeps the feature order) must match in exactly
one layout, the site's. Where the turned features sit in the head (first or last) is checked by
finding the recorded input inside the projection's output.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import sys
from collections.abc import Iterator
from typing import Any

import pytest
import torch

from posenc.configs import sites as S
from posenc.rope import apply_rope

transformers = pytest.importorskip("transformers")
SEQ = 8
LAYOUTS = ("half", "interleaved")
ATOL = 1e-5  # transformers computes the angles in float32 (its rotary forward), whatever the model dtype


@contextlib.contextmanager
def recorded(module: Any, names: tuple[str, ...]) -> Iterator[list[dict[str, Any]]]:
    """Patch the modeling module's rotation functions to record each call: the calling class, the
    arguments by name, and the result."""
    calls: list[dict[str, Any]] = []
    originals = {name: getattr(module, name) for name in names}

    def wrap(name: str, fn: Any) -> Any:
        signature = inspect.signature(fn)

        def inner(*args: Any, **kwargs: Any) -> Any:
            caller = sys._getframe(1).f_locals.get("self")
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            result = fn(*args, **kwargs)
            calls.append({"fn": name, "caller": type(caller).__name__, "self": caller,
                          "args": {k: v.detach().clone() if torch.is_tensor(v) else v
                                   for k, v in bound.arguments.items()},
                          "result": result})
            return result
        return inner

    try:
        for name, fn in originals.items():
            setattr(module, name, wrap(name, fn))
        yield calls
    finally:
        for name, fn in originals.items():
            setattr(module, name, fn)


def turned(x: torch.Tensor, site: S.RotarySite, positions: torch.Tensor, layout: str) -> torch.Tensor:
    """posenc's rotation of the site's features of x ``[..., seq, head]`` in ``layout``."""
    if site.features == "first":
        part, rest = x[..., :site.width], x[..., site.width:]
    else:
        rest, part = x[..., :-site.width], x[..., -site.width:]
    part = apply_rope(part, positions, base=site.base, layout=layout, scaling=site.scaling)
    return torch.cat([part, rest] if site.features == "first" else [rest, part], dim=-1)


def matching_layouts(q_in: torch.Tensor, k_in: torch.Tensor, q_out: torch.Tensor, k_out: torch.Tensor,
                     site: S.RotarySite, positions: torch.Tensor) -> list[str]:
    """The layouts in which posenc's rotated q and k give transformers' scores (``[..., seq, width]``)."""
    scores = q_out @ k_out.transpose(-1, -2)
    return [layout for layout in LAYOUTS
            if torch.allclose(turned(q_in, site, positions, layout) @ turned(k_in, site, positions, layout).transpose(
                -1, -2), scores, atol=ATOL, rtol=0)]


def tiny(config_class: type, **settings: Any) -> Any:
    config = config_class(vocab_size=64, hidden_size=64, num_hidden_layers=1, num_attention_heads=2,
                          num_key_value_heads=2, pad_token_id=None, bos_token_id=None, eos_token_id=None, **settings)
    config._attn_implementation = "eager"
    return config


def run(model_class: type, config: Any, module: Any, names: tuple[str, ...],
        projections: tuple[str, ...] = ()) -> tuple[list[dict[str, Any]], dict[str, torch.Tensor]]:
    """One float64 forward pass of a tiny model: the recorded rotations and the last output of each
    named linear projection (by attribute name, in any submodule)."""
    torch.manual_seed(0)
    return forward(model_class(config).double().eval(), module, names, projections)


def forward(model: Any, module: Any, names: tuple[str, ...],
            projections: tuple[str, ...] = ()) -> tuple[list[dict[str, Any]], dict[str, torch.Tensor]]:
    outputs: dict[str, torch.Tensor] = {}
    for name, sub in model.named_modules():
        key = name.rsplit(".", 1)[-1]
        if key in projections:
            sub.register_forward_hook(lambda m, i, o, key=key: outputs.__setitem__(key, o.detach()))
    with recorded(module, names) as calls, torch.no_grad():
        model(input_ids=torch.arange(SEQ).unsqueeze(0) % 64)
    return calls, outputs


# ---------------------------------------------------------------- MLA and the indexer
_MLA = {"q_lora_rank": 16, "kv_lora_rank": 16, "qk_nope_head_dim": 8, "qk_rope_head_dim": 8, "v_head_dim": 8,
        "intermediate_size": 32, "moe_intermediate_size": 16, "n_routed_experts": 4, "num_experts_per_tok": 2,
        "first_k_dense_replace": 1, "n_group": 1, "topk_group": 1}
_INDEXER = {"index_n_heads": 2, "index_head_dim": 16, "index_topk": 4}
# model type: config class, model class, modeling file, settings, the site each calling class is, and
# where each site's queries come from (projection attribute, each head's width in its output)
_MLA_Q = ("q_b_proj", 16)
_INDEX_Q = ("wq_b", 16)
CASES = {
    "deepseek_v32": ("DeepseekV32Config", "DeepseekV32Model", "deepseek_v32", {**_MLA, **_INDEXER},
                     {"DeepseekV32Attention": "attention", "DeepseekV32Indexer": "indexer"},
                     {"attention": _MLA_Q, "indexer": _INDEX_Q}),
    "glm_moe_dsa": ("GlmMoeDsaConfig", "GlmMoeDsaModel", "glm_moe_dsa", {**_MLA, **_INDEXER},
                    {"GlmMoeDsaAttention": "attention", "GlmMoeDsaIndexer": "indexer"},
                    {"attention": _MLA_Q, "indexer": _INDEX_Q}),
    "deepseek_v3": ("DeepseekV3Config", "DeepseekV3Model", "deepseek_v3", _MLA, {"DeepseekV3Attention": "attention"},
                    {"attention": _MLA_Q}),
    "axk2": ("AXK2Config", "AXK2Model", "axk2", {**_MLA, **_INDEXER},
             {"AXK2Attention": "attention", "AXK2Indexer": "indexer"},
             {"attention": ("q_gate_proj", 16 + 8), "indexer": _INDEX_Q}),  # queries, then the gates
    "hy_v4": ("HYV4Config", "HYV4Model", "hy_v4", {**_MLA, **_INDEXER},
              {"HYV4Attention": "attention", "HYV4Indexer": "indexer"}, {"attention": _MLA_Q, "indexer": _INDEX_Q}),
    "mistral_large4_text": ("MistralLarge4TextConfig", "MistralLarge4TextModel", "mistral_large4", {**_MLA, **_INDEXER},
                            {"MistralLarge4TextAttention": "attention", "MistralLarge4TextIndexer": "indexer"},
                            {"attention": ("q_proj", 16), "indexer": _INDEX_Q}),
}


@pytest.mark.parametrize("scaling", [None, {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4,
                                            "mscale_all_dim": 1.0}], ids=["plain", "yarn"])
@pytest.mark.parametrize("model_type", sorted(CASES))
def test_sites_turn_as_transformers(model_type: str, scaling: dict[str, Any] | None) -> None:
    config_name, model_name, file, settings, by_class, queries = CASES[model_type]
    module = __import__(f"transformers.models.{file}.modeling_{file}", fromlist=["x"])
    names = tuple(n for n in dir(module) if n.startswith("apply_rotary_pos_emb"))
    extra = {"rope_parameters": {"rope_theta": 500.0, **scaling} if scaling else {"rope_theta": 500.0},
             "max_position_embeddings": 16}
    config = tiny(getattr(transformers, config_name), **settings, **extra)
    sites = S.rotary_sites(config.to_dict())
    (layer_sites,) = sites.values()
    by_name = {site.name: site for site in layer_sites}
    assert set(by_name) == set(by_class.values())
    calls, projected = run(getattr(transformers, model_name), config, module, names,
                           tuple(name for name, _ in queries.values()))
    assert {call["caller"] for call in calls} == set(by_class), "a rotation called from a class the sites miss"
    positions = torch.arange(SEQ)
    for call in calls:
        site = by_name[by_class[call["caller"]]]
        args = call["args"]
        q_in, k_in = args["q"], args["k"]
        q_out, k_out = call["result"]
        if args.get("unsqueeze_dim", 1) == 2:  # [batch, seq, heads, width] -> [batch, heads, seq, width]
            q_in, k_in, q_out, k_out = (t.transpose(1, 2) for t in (q_in, k_in, q_out, k_out))
        assert q_in.shape[-1] == site.width
        part = dataclasses.replace(site, head_dim=site.width, features="first")  # the function gets the part only
        assert matching_layouts(q_in, k_in, q_out, k_out, part, positions) == [site.layout], (model_type, site.name)
        # where the turned features sit: the recorded queries inside the projection's output
        projection, stride = queries[site.name]
        heads = projected[projection].view(1, SEQ, -1, stride)[..., :site.head_dim].transpose(1, 2)
        first, last = heads[..., :site.width], heads[..., -site.width:]
        where = [name for name, part_ in (("first", first), ("last", last)) if torch.equal(part_, q_in)]
        assert where == [site.features], (model_type, site.name, where)


# ---------------------------------------------------------------- the data against the live classes
@pytest.mark.parametrize("model_type", sorted(S._DEFAULTS))
def test_defaults_are_the_config_classes(model_type: str) -> None:
    config = transformers.AutoConfig.for_model(model_type)
    assert {key: getattr(config, key) for key in S._DEFAULTS[model_type]} == S._DEFAULTS[model_type]


def test_v4_defaults_are_the_config_class() -> None:
    config = transformers.DeepseekV4Config()
    assert {key: getattr(config, key) for key in S._V4_DEFAULTS} == S._V4_DEFAULTS


def test_one_site_where_no_rule() -> None:
    # phi: its rotary module reads the rotated fraction (Llama's default rule rotates the whole head)
    sites = S.rotary_sites({"model_type": "phi", "hidden_size": 64, "num_attention_heads": 4,
                            "num_hidden_layers": 2, "partial_rotary_factor": 0.5})
    ((site,),) = sites.values()
    assert (site.name, site.head_dim, site.width, site.features, site.layout) == ("attention", 16, 8, "first", "half")


# ---------------------------------------------------------------- DeepSeek-V4
V4_TYPES = ["sliding_attention", "compressed_sparse_attention", "heavily_compressed_attention"]
V4_RATES = {"compressed_sparse_attention": 2, "heavily_compressed_attention": 4}


V4_TINY = {"model_type": "deepseek_v4", "vocab_size": 64, "hidden_size": 64, "num_hidden_layers": 3,
           "num_attention_heads": 2, "head_dim": 32, "partial_rotary_factor": 0.25, "q_lora_rank": 16, "o_groups": 2,
           "o_lora_rank": 8, "index_n_heads": 2, "index_head_dim": 16, "index_topk": 2, "compress_rates": V4_RATES,
           "sliding_window": 3, "n_routed_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 16,
           "hc_mult": 2, "mlp_layer_types": ["moe"] * 3, "layer_types": V4_TYPES, "max_position_embeddings": 64,
           "rope_theta": 500.0, "compress_rope_theta": 7000.0}


def v4_config(raw: dict[str, Any]) -> Any:
    """The live config class built from the raw dict a config.json would hold."""
    config = transformers.DeepseekV4Config(**{k: v for k, v in raw.items() if k != "model_type"})
    config._attn_implementation = "eager"
    config._experts_implementation = "eager"  # the grouped kernel takes no float64
    return config


# which V4 class calls the rotation, and in what order, names the site
_V4_CALLS = {"DeepseekV4Attention": ("attention", "attention", "output"), "DeepseekV4CSACompressor": ("compressor",),
             "DeepseekV4HCACompressor": ("compressor",), "DeepseekV4Indexer": ("indexer keys", "indexer")}


@pytest.mark.parametrize("scaling", [None, {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 16}],
                         ids=["plain", "yarn"])
def test_v4_sites_turn_as_transformers(scaling: dict[str, Any] | None) -> None:
    from transformers.models.deepseek_v4 import modeling_deepseek_v4 as module
    raw = {**V4_TINY, **({"rope_scaling": scaling} if scaling else {})}
    config = v4_config(raw)
    sites = S.rotary_sites(raw)  # what a config.json gives (flat YaRN), not the class's completed dict
    assert list(sites) == V4_TYPES
    torch.manual_seed(0)
    model = transformers.DeepseekV4Model(config).double().eval()
    kind_of = {id(sub): kind for layer, kind in zip(model.layers, config.layer_types) for sub in layer.modules()}
    calls, _ = forward(model, module, ("apply_rotary_pos_emb",))
    count: dict[int, int] = {}
    seen = set()
    for call in calls:
        owner, kind = call["self"], kind_of[id(call["self"])]
        count[id(owner)] = count.get(id(owner), -1) + 1
        name = _V4_CALLS[call["caller"]][count[id(owner)]]
        site = {s.name: s for s in sites[kind]}[name]
        x_in, x_out = call["args"]["x"], call["result"]
        if site.positions == "window start":  # entry i summarises tokens i*m .. i*m + m - 1
            positions = torch.arange(x_in.shape[-2]) * V4_RATES[kind]
            assert x_in.shape[-2] == SEQ // V4_RATES[kind]
        else:
            positions = torch.arange(SEQ)
        assert x_in.shape[-1] == site.head_dim, (kind, name)
        if site.inverse:  # turning the output forward again gives back the input
            matches = [layout for layout in LAYOUTS
                       if torch.allclose(turned(x_out, site, positions, layout), x_in, atol=ATOL, rtol=0)]
        else:
            matches = [layout for layout in LAYOUTS
                       if torch.allclose(turned(x_in, site, positions, layout), x_out, atol=ATOL, rtol=0)]
        assert matches == [site.layout], (kind, name, matches)
        seen.add((kind, name))
    assert seen == {(kind, site.name) for kind, kind_sites in sites.items() for site in kind_sites}


V4_CONFIGS = {
    "defaults": {},
    "older keys": {"compress_ratios": [0, 4, 128, 4, 0], "num_hidden_layers": 5, "qk_rope_head_dim": 128,
                   "compress_rate_csa": 8, "rope_scaling": {"type": "yarn", "factor": 16,
                                                            "original_max_position_embeddings": 65536,
                                                            "beta_fast": 32, "beta_slow": 1}},
    "flat parameters": {"num_hidden_layers": 6, "rope_parameters": {"rope_type": "yarn", "factor": 8.0,
                                                                   "original_max_position_embeddings": 4096,
                                                                   "attention_factor": 1.2}},
    "nested": {"num_hidden_layers": 3, "layer_types": ["sliding_attention"] * 3, "rope_parameters": {
        "main": {"rope_type": "default", "rope_theta": 300.0},
        "compress": {"rope_type": "linear", "factor": 2.0, "rope_theta": 900.0, "partial_rotary_factor": 0.5}}},
}


@pytest.mark.parametrize("name", sorted(V4_CONFIGS))
def test_v4_reading_matches_the_config_class(name: str) -> None:
    raw = {"model_type": "deepseek_v4", **V4_CONFIGS[name]}
    live = transformers.DeepseekV4Config(**{k: v for k, v in raw.items() if k != "model_type"})
    reading = S.read_deepseek_v4(raw)
    assert list(reading.pattern) == live.layer_types
    for kind, layer in reading.layers.items():
        params = live.rope_parameters["main" if kind == "sliding_attention" else "compress"]
        assert layer.base == params["rope_theta"]
        assert layer.rotary_dim == int(live.head_dim * params.get("partial_rotary_factor", 1.0))
        assert (layer.scaling or {}).get("type", "default") == params["rope_type"]
        assert (layer.scaling or {}).get("factor") == params.get("factor")
        assert layer.attention_factor == pytest.approx(params.get("attention_factor", 1.0), abs=0)
        assert layer.window == live.sliding_window


@pytest.mark.parametrize("bad, message", [
    ({"compress_ratios": [0, 3]}, "compress_ratios"),
    ({"layer_types": ["full_attention"], "num_hidden_layers": 1}, "layer_types"),
    ({"layer_types": ["sliding_attention"], "num_hidden_layers": 2}, "one entry per layer"),
    ({"sliding_window": 0}, "sliding_window"),
    ({"rope_theta": -1.0, "compress_ratios": [0], "num_hidden_layers": 1}, r"config\[.rope_theta.\]"),
    ({"compress_rope_theta": 0}, "compress_rope_theta"),
    ({"compress_ratios": [0]}, "compress_ratios"),
])
def test_v4_bad_input_is_named(bad: dict[str, Any], message: str) -> None:
    with pytest.raises((ValueError, TypeError), match=message):
        S.read_deepseek_v4({"model_type": "deepseek_v4", **bad})


def test_v4_every_layer_attends_within_the_window() -> None:
    """Every V4 layer type gets the same sliding-window mask (a query sees itself and the W - 1 keys
    before it), as the reading's window says."""
    config = v4_config(V4_TINY)
    torch.manual_seed(0)
    model = transformers.DeepseekV4Model(config).double().eval()
    masks: dict[int, torch.Tensor] = {}
    for index, layer in enumerate(model.layers):
        layer.self_attn.register_forward_pre_hook(
            lambda m, a, kw, i=index: masks.__setitem__(i, kw["attention_mask"]), with_kwargs=True)
    with torch.no_grad():
        model(input_ids=torch.arange(SEQ).unsqueeze(0))
    reading = S.read_deepseek_v4(V4_TINY)
    q, k = torch.arange(SEQ)[:, None], torch.arange(SEQ)[None, :]
    for index, kind in enumerate(reading.pattern):
        window = reading.layers[kind].window
        assert window is not None and window == V4_TINY["sliding_window"]
        seen = masks[index][0, 0, :, :SEQ] == 0 if masks[index].dtype != torch.bool else masks[index][0, 0, :, :SEQ]
        assert torch.equal(seen, (k <= q) & (k > q - window)), kind


def test_site_notes_name_every_site_of_a_rule() -> None:
    (note,) = S.site_notes("glm_moe_dsa", {}, "interleaved")
    assert "attention: the last qk_rope_head_dim features" in note and "indexer: the first" in note
    assert S.site_notes("deepseek_v3", {}, "interleaved") == []  # one site: nothing to add
    # a model type without a rule: the table's second site in another layout
    (note,) = S.site_notes("other", {"rotary_sites": {"A": "interleaved", "B": "half"}}, "interleaved")
    assert "B, in the half layout" in note


def test_site_data_is_json_and_the_rules() -> None:
    import json
    data = json.loads(json.dumps(S.site_data()))
    assert set(data["rules"]) == set(S._RULES) and data["defaults"] == S._DEFAULTS
    assert data["rules"]["deepseek_v32"][1] == {"name": "indexer", "rotates": S._INDEXER, "head": ["index_head_dim"],
                                                 "features": "first", "layout": "half",
                                                 "width": "qk_rope_head_dim", "positions": "token"}


@pytest.mark.parametrize("name", sorted(V4_CONFIGS))
def test_read_config_reads_deepseek_v4_per_kind_of_layer(name: str) -> None:
    """read_config hands DeepSeek-V4 to read_deepseek_v4 (its rope parameters are keyed by rope kind),
    so the reader, from_config and the inspector read it as the test above checks against the class."""
    from posenc.configs import from_config, read_config

    config = {"model_type": "deepseek_v4", **V4_CONFIGS[name]}
    rope = read_config(config)
    assert rope == S.read_deepseek_v4(config) and rope.model_type == "deepseek_v4" and rope.sinks
    for kind, layer in rope.layers.items():
        assert from_config(config, kind) == layer.rotary_kwargs() and layer.layout == "interleaved"
    with pytest.raises(ValueError, match="layout must be 'interleaved'"):
        read_config(config, layout="half")


@pytest.mark.parametrize("model_type", sorted(m for m, rules in S._RULES.items() if len(rules) > 1))
def test_read_config_names_every_site_of_a_layer(model_type: str) -> None:
    from posenc.configs import read_config

    rope = read_config({"model_type": model_type, "num_hidden_layers": 4})  # Qwen4-Exp's fourth layer attends
    (note,) = [note for note in rope.notes if "rotary site" in note]
    layout = next(layer.layout for layer in rope.layers.values() if layer.rotates)
    for rule in S._RULES[model_type]:
        assert f"{rule.name}: the {rule.features} {rule.width} features of each {' + '.join(rule.head)} head, " \
               f"{rule.layout or layout}" in note


def test_the_inspector_shows_a_line_per_site() -> None:
    from posenc.inspect import describe

    text = describe({"model_type": "deepseek_v4", "num_hidden_layers": 3, "compress_ratios": [0, 4, 128]})
    sites = [line.strip() for line in text.splitlines() if line.startswith("  site ")]
    assert len(sites) == 2 + 5 + 3  # window-only, compressed sparse, heavily compressed
    assert "site output: turns the last 64 of 512 features in interleaved pairs, turned back (minus the angle)" in sites
    assert ("site indexer keys: turns the last 64 of 128 features in interleaved pairs, at the position of its "
            "window's first token") in sites
    lines = describe({"model_type": "deepseek_v32", "num_hidden_layers": 2}).splitlines()
    assert "  site indexer: turns the first 64 of 128 features in half pairs" in lines
    assert not any(line.startswith("  site ") for line in describe({"model_type": "deepseek_v3", "num_hidden_layers": 2,
                                                                     "qk_rope_head_dim": 16}).splitlines())
