"""Every config class whose own code touches its rope parameters is accounted for.

A config class may rename, fill or normalise rope keys in its own code (an override of
``convert_rope_params_to_dict``, ``standardize_rope_params`` or ``validate_rope``, a ``_normalize_*``
helper, a ``__post_init__`` that touches ``rope_parameters``): read_config must read what the class
keeps, or refuse. This test finds every such class of the pinned transformers (a method of the class's
own body whose source names ``rope_parameters``, ``rope_scaling``, ``rope_type``, ``rope_theta`` or
``mrope``, or whose name holds "rope") and fails on one not listed in `ACCOUNTED`, each with how posenc
reads it and where; a listed class that no longer has such code fails too. Where the reading rests on a
key of the derived table, the test checks the class's table entry has it.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

import transformers
import transformers.models

from posenc.configs import _table
from posenc.configs._class_rope import ROPE_RENAMES
from posenc.configs._plan import LAYER_THETAS, SCALED_LAYERS

PATTERN = re.compile(r"rope_parameters|rope_scaling|rope_type|rope_theta|mrope")

DEFAULTS = ("read", ("fills rope_parameters when the config gives none: the table's default_rope_parameters, "
            "default_theta or absent_defaults (derived by building the class; checked at every model type's defaults "
            "by tests/test_transformers_parity.py::test_every_model_type_at_its_defaults)"))
NESTED = ("read", ("fills one rope_parameters entry per layer type: the table's default_rope_parameters by layer "
          "type (with nested_bases, null_filled where the class fills a None), _params._complete_entries"))
FLAT = ("read", ("spreads a flat rope_scaling and top-level bases onto its per-layer-type entries: the table's "
        "flat_landing and base_keys, _params._from_flat"))
KEYS = ("read", ("takes rotary_emb_base and rotary_pct for rope_theta and partial_rotary_factor: the table's "
        "key_aliases, _params._complete"))
TYPES = ("read", ("renames rope types (su and yarn to longrope; mrope to default): the table's type_aliases, "
         "_params._complete"))
FOLD = ("read", ("folds a flat checkpoint's text keys (rope_scaling, rope_theta among them) into its text_config: "
        "read_config reads a wrapper given without a text_config dict from its top level (_params._text_part)"))
WIDTH = ("read", ("a legacy rotary_dim gives partial_rotary_factor = rotary_dim / head_dim where the config gives "
         "none: the table's rotated_width_key, _layer._rotary_width (a fraction given wins, as in the class)"))
TYPES_CHECKED = ("read", TYPES[1] + "; its validate_rope refuses other rope types, as posenc does "
                 "(posenc.configs._class_rope.CLASS_ROPE_TYPES)")
CHECKS = ("not relevant", "validation only: raises or warns on values it does not accept, changes nothing")
THETAS = ("read", "a base per layer, layer_rope_theta (0: NoPE): posenc.configs._plan.LAYER_THETAS")

ACCOUNTED: dict[str, tuple[str, str]] = {
    # flat defaults
    **dict.fromkeys(["ApertusConfig", "BailingHybridConfig", "CwmConfig", "GptOssConfig", "HiggsAudioV2Config",
                     "Ministral3Config", "MistralLarge4TextConfig", "MoonshineStreamingConfig",
                     "Nemotron3_5TranscribeAsrAudioConfig", "Nemotron3_5TranscribeWordTimestampConfig",
                     "OpenAIPrivacyFilterConfig"], DEFAULTS),
    "Cosmos3EdgeTextConfig": ("read", DEFAULTS[1] + "; its validate_architecture refusals (a rope type other than "
                              "default; sections not three summing to head_dim / 2) are refused alike: "
                              "posenc.configs._class_rope.CLASS_ROPE_TYPES"),
    "Mistral4Config": ("read", DEFAULTS[1] + "; its partial_rotary_factor qk_rope_head_dim / head_dim is the "
                       "rotated width _layer._head_dim reads from qk_rope_head_dim"),
    # per-layer-type classes
    **dict.fromkeys(["BeamConfig", "DiffusionGemmaTextConfig", "EmbeddingGemma2TextConfig", "Gemma4TextConfig",
                     "Gemma4UnifiedTextConfig", "LagunaConfig", "Lfm3Config", "MellumConfig", "MiMoV2FlashConfig",
                     "UltrabertConfig"], NESTED),
    "ZayaConfig": ("read", NESTED[1] + "; the rope_type it drops beside a nested dict is not a layer type's entry"),
    "NeoMMEConfig": ("read", NESTED[1] + "; _validate_rotary_dims only refuses values"),
    **dict.fromkeys(["Gemma3TextConfig", "Gemma3nTextConfig", "ModernBertConfig", "ModernBertDecoderConfig",
                     "Olmo3Config", "T5Gemma2TextConfig", "T5Gemma2DecoderConfig"], FLAT),
    "Dots3NoteTextConfig": ("read", ("per-layer-type entries with swa_rope_theta as the sliding base (the table's "
                            "base_keys and default_rope_parameters) and its legacy layer names "
                            "(_plan.LEGACY_LAYER_TYPES)")),
    # renames
    "GPTNeoXConfig": KEYS, "GPTNeoXJapaneseConfig": KEYS,
    "MiniMaxM2Config": WIDTH,
    "Phi3Config": TYPES_CHECKED, "Phi4MultimodalConfig": TYPES_CHECKED,
    "Qwen2VLTextConfig": TYPES, "Qwen2_5_VLTextConfig": TYPES,
    "HunYuanVLTextConfig": ("read", ("renames xdrope_section and rope type xdrope, sections to ints: "
                            "posenc.configs._class_rope.ROPE_RENAMES (tests/test_rope_class_renames.py)")),
    **dict.fromkeys(["FuyuConfig", "HunYuanVLConfig", "PaddleOCRVLConfig", "Qwen2VLConfig", "Qwen2_5_VLConfig"],
                    FOLD),
    # keys per layer
    **dict.fromkeys(["GraniteSWAConfig", "GraniteMoeSWAConfig", "MuseGlimmerTextConfig", "MuseSparkTextConfig"],
                    THETAS),
    "Molmo2TextConfig": ("read", ("rope_scaling_layers: a list leaving a layer out under a scaling rule is refused "
                         "(posenc.configs._plan.SCALED_LAYERS)")),
    "Step3p7TextConfig": ("refused", ("per-layer rope_theta and partial_rotary_factors lists, from which it builds "
                          "one entry per layer type: refused by the table's defaults_depend_on unless the config "
                          "gives rope_parameters by layer type, which are read")),
    "DeepseekV4Config": ("read", ("rope parameters keyed by rope kind (main, compress): "
                         "posenc.configs.sites.read_deepseek_v4")),
    "CohereCompassTextConfig": ("refused", ("its attention rotates with the rope_parameters a config gives and the "
                                "class fills none: refused (the table's rope_parameters_given_only, "
                                "_refusals.refuse)")),
    # validation only
    "PhimoeConfig": ("refused", ("with a scaled rule its rotary module multiplies cos and sin by short_mscale or "
                                 "long_mscale by the input's length, which its validate_rope requires: refused "
                                 "(posenc.configs._class_rope.CLASS_ROPE_TYPES; one attention factor per layer "
                                 "cannot say it)")),
    "HunYuanMoEV1Config": ("not relevant", ("its _rope_parameters_validation is called nowhere in the pinned "
                                            "transformers (a leftover)")),
    "Qwen4ExpTextConfig": ("refused", ("validation only, and a rotated width wider than its indexer's head "
                                       "(indexer_head_dim) once the indexer's keys are given: refused alike "
                                       "(posenc.configs._class_rope.INDEXER_FITS; tests/test_rope_indexer_fit.py)")),
    # not the language model's rotation
    "MusicFlamingoConfig": ("not relevant", ("its own rope_parameters drive the audio encoder's rotary time "
                            "embedding (modeling_musicflamingo.py:50-98, 244), not the language model read_config "
                            "reads (text_config: qwen2)")),
    **dict.fromkeys(["EdgeTamVideoConfig", "Sam2VideoConfig", "Sam3TrackerVideoConfig"],
                    ("not relevant", ("a deprecated property (memory_attention_rope_theta) reading rope_parameters "
                     "of a video memory attention; posenc.configs.vision reads these"))),
}

TABLE_KEYS = {DEFAULTS: ("default_rope_parameters", "default_theta", "absent_defaults"),
              NESTED: ("default_rope_parameters",),
              FLAT: ("flat_landing",), KEYS: ("key_aliases",), TYPES: ("type_aliases",),
              TYPES_CHECKED: ("type_aliases",),
              WIDTH: ("rotated_width_key",)}


def rope_code_classes() -> dict[str, tuple[type, list[str]]]:
    """Class name -> (class, its own methods that touch rope parameters), for every config class."""
    found: dict[str, tuple[type, list[str]]] = {}
    for package in pkgutil.iter_modules(transformers.models.__path__):
        spec = importlib.util.find_spec(f"transformers.models.{package.name}")
        for module_info in pkgutil.iter_modules(spec.submodule_search_locations or []):
            if not module_info.name.startswith("configuration_"):
                continue
            module = importlib.import_module(f"transformers.models.{package.name}.{module_info.name}")
            for name, cls in vars(module).items():
                if not (inspect.isclass(cls) and issubclass(cls, transformers.PreTrainedConfig)
                        and cls.__module__ == module.__name__):
                    continue
                methods = [attr for attr, value in vars(cls).items() if _touches_rope(attr, value)]
                if methods:
                    found[name] = (cls, methods)
    return found


def _touches_rope(attr: str, value: object) -> bool:
    function = value.__func__ if isinstance(value, (staticmethod, classmethod)) else (
        value.fget if isinstance(value, property) else value)
    if not inspect.isfunction(function):
        return False
    try:
        source = inspect.getsource(function)
    except OSError:  # written by the dataclass machinery (__init__, __eq__ from the fields), no code of the class's
        return False
    return "rope" in attr or bool(PATTERN.search(source))


FOUND = rope_code_classes()


def test_every_class_whose_code_touches_rope_is_accounted_for() -> None:
    missing = sorted(set(FOUND) - set(ACCOUNTED))
    stale = sorted(set(ACCOUNTED) - set(FOUND))
    assert not missing, f"config classes with their own rope code, not accounted for: {missing}"
    assert not stale, f"accounted for, but no longer with rope code of their own: {stale}"
    # "gap": read where the class refuses some configs (said in the reason and the session's report)
    assert all(how in ("read", "refused", "not relevant", "gap") and reason for how, reason in ACCOUNTED.values())


def test_the_readings_that_rest_on_the_table_find_their_keys() -> None:
    for name, account in ACCOUNTED.items():
        keys = TABLE_KEYS.get(account)
        if keys is None:
            continue
        model_type = FOUND[name][0].model_type
        entry = _table.entry(model_type) or {}
        assert any(key in entry for key in keys), (name, model_type, keys)


def test_the_registers_name_classes_found_here() -> None:
    model_types = {cls.model_type: name for name, (cls, _) in FOUND.items()}
    for register in (ROPE_RENAMES, LAYER_THETAS, SCALED_LAYERS):
        for model_type in register:
            assert model_type in model_types and ACCOUNTED[model_types[model_type]][0] == "read"


def test_minimax_m2s_rotary_dim_reads_as_its_rotary_module() -> None:
    from transformers.models.minimax_m2 import modeling_minimax_m2

    from posenc.configs import read_config

    shape = {"hidden_size": 256, "num_attention_heads": 4, "head_dim": 128, "num_hidden_layers": 2}
    for extra, expected in (({"rotary_dim": 64}, 64), ({"rotary_dim": 64, "partial_rotary_factor": 0.25}, 32),
                            ({}, 128)):
        built = transformers.MiniMaxM2Config.from_dict({**shape, **extra})
        rotated = 2 * modeling_minimax_m2.MiniMaxM2RotaryEmbedding(built).inv_freq.numel()
        (layer,) = read_config({**shape, **extra, "model_type": "minimax_m2"}).layers.values()
        assert layer.rotary_dim == rotated == expected
