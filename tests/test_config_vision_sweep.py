"""A sweep of the model-type table (posenc/configs/model_types.json) against transformers' code.

1. No model type is said to use no RoPE while its code rotates: for every entry that says "no RoPE"
   (``rope: false`` with neither ``rotation_calls`` nor ``rotating_parts``), the modeling files of its
   package call no function named for a rotation (``rotate*``, ``*rotary*``, ``*rope*``) outside the
   rotation helpers themselves, but for two names checked by hand.
2. Every model type whose code rotates (``rotation_calls`` or ``rotating_parts``) is read by
   ``read_vision_config``, or listed with its reason in ``posenc.configs._vision_refused.REFUSED``, or
   named below as not an image or video model (audio, text, proteins); a regenerated table cannot
   add or drop one silently. Each reason is checked against the code: which classes are built from
   the type's config (an ``__init__`` parameter annotated with its config class, or its
   ``config_class``), what those build in turn (bases and what ``__init__`` names), and whether any
   of them calls a rotation; and ``read_vision_config`` refuses each with its reason.
3. No image or video model (by transformers' ``input_modalities``) is left to ``read_config`` as if it
   were a language model.
4. Read since this sweep: Sapiens 2 (DINOv3's scheme) and EfficientLoFTR (a 2-D RoPE over the whole
   hidden vector), live against their own rotary modules, and CHMv2 through its DINOv3 backbone.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import json
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from posenc.configs._vision_refused import NOT_READ, REFUSED
from posenc.configs.vision import VISION_MODEL_TYPES, read_vision_config
from tests.vision_live import ROTATED, TABLE, close

pytestmark = pytest.mark.slow

TABLE_PATH = Path(__file__).resolve().parents[1] / "posenc" / "configs" / "model_types.json"
ROTATION = re.compile(r"rotate_half|rotate_every_two|rotate_pairwise|rotate_queries_or_keys|_?apply_rotary\w*|apply_rope\w*")
NAMED_LIKE_ROTATION = re.compile(r"rotary|rotate|rope", re.IGNORECASE)
#: Calls named like a rotation that rotate nothing (read at the source).
NOT_ROTATIONS = {
    # minicpmv4_7/modeling_minicpmv4_7.py:948-1180: the language model's M-RoPE ids (its text model, qwen3_5_text,
    # is an entry of its own, read by read_config)
    "get_rope_index",
    # pp_doclayout_v2/modeling_pp_doclayout_v2.py:75-124: inverse frequencies of a sinusoidal embedding of box
    # relations (sin and cos features concatenated, no rotation of q or k)
    "compute_default_rope_parameters",
}
#: Model types whose code rotates that are not image or video models, with what they are.
ELSEWHERE = {
    **dict.fromkeys(["clvp_decoder", "clvp_encoder"], "speech synthesis (CLVP)"),
    "esmfold2": "proteins",
    "blt": "text (BLT: its four parts rotate, each read with its own config)",
    **dict.fromkeys(["cohere_compass_text", "glm5_next_text", "inkling2_text"], "the text model of a multimodal model"),
    **dict.fromkeys(["gemma3n_audio", "gemma4_audio", "gemma4_unified_audio", "lasr_ctc", "moonshine_streaming_encoder",
                     "muse_spark_audio", "nemotron3_5_transcribe_audio", "nemotron3_diarization",
                     "phi4_multimodal_audio", "qwen2_5_omni_audio_encoder", "qwen3_omni_moe_audio_encoder",
                     "wav2vec2-bert", "wav2vec2-conformer", "seamless_m4t", "nemo_speechlm"], "audio or speech"),
    **dict.fromkeys(["qwen2_5_omni_bigvgan", "qwen2_5_omni_token2wav"], "speech output (a vocoder and its DiT)"),
    "moshi_depth": "speech (Moshi's depth decoder)",
    "pi0": "robot actions: its parts that rotate are Gemma language models",
}


@functools.lru_cache(maxsize=1)
def _table() -> dict[str, dict]:
    return json.loads(TABLE_PATH.read_text())["model_types"]


def _package(model_type: str) -> tuple[type, Path]:
    from transformers import CONFIG_MAPPING

    config_class = CONFIG_MAPPING[model_type]
    spec = importlib.util.find_spec(config_class.__module__.rsplit(".", 1)[0])
    assert spec is not None and spec.submodule_search_locations
    return config_class, Path(next(iter(spec.submodule_search_locations)))


_NOT_MODELING = ("configuration_", "processing_", "image_processing", "video_processing", "tokenization",
                 "feature_extraction", "convert_", "modular_", "__init__")


@functools.cache
def _classes(folder: Path) -> dict[str, ast.ClassDef]:
    """The classes of a model package's modeling code (modeling_*.py and helpers such as idefics/vision.py)."""
    out: dict[str, ast.ClassDef] = {}
    for path in sorted(p for p in folder.glob("*.py") if not p.name.startswith(_NOT_MODELING)):
        out.update({node.name: node for node in ast.parse(path.read_text()).body if isinstance(node, ast.ClassDef)})
    return out


def _name(node: ast.AST) -> str | None:
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None


def _rotations(node: ast.AST) -> set[str]:
    return {n for call in ast.walk(node) if isinstance(call, ast.Call) and (n := _name(call.func)) and ROTATION.fullmatch(n)}


def _built_from(config_name: str, node: ast.ClassDef) -> bool:
    for item in node.body:
        if isinstance(item, ast.FunctionDef) and item.name == "__init__" and any(
                isinstance(arg.annotation, ast.Name) and arg.annotation.id == config_name for arg in item.args.args):
            return True
        if isinstance(item, ast.AnnAssign) and _name(item.target) == "config" and _name(item.annotation) == config_name:
            return True
        if isinstance(item, ast.Assign) and any(_name(t) == "config_class" for t in item.targets) \
                and _name(item.value) == config_name:
            return True
    return False


def rotating_classes(model_type: str) -> tuple[set[str], dict[str, set[str]]]:
    """The classes built from ``model_type``'s config and what they build, and of those, the ones that
    call a rotation (with the calls)."""
    config_class, folder = _package(model_type)
    classes = _classes(folder)
    todo = [name for name, node in classes.items() if _built_from(config_class.__name__, node)]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        node = classes[name]
        inits = [f for f in node.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"]
        for part in [*node.bases, *inits]:  # what a module is made of: its bases and what its __init__ builds
            todo += [n for sub in ast.walk(part) if (n := _name(sub)) in classes and n not in seen]
    return seen, {name: calls for name in seen if (calls := _rotations(classes[name]))}


def test_no_model_type_said_to_use_no_rope_calls_a_rotation():
    found = {}
    for model_type, entry in _table().items():
        if entry.get("rope") is not False or entry.get("rotation_calls") or entry.get("rotating_parts"):
            continue
        _, folder = _package(model_type)
        calls = set()
        for node in _classes(folder).values():
            for item in ast.walk(node):
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and NAMED_LIKE_ROTATION.search(item.name):
                    continue  # a rotation helper's own body: it counts only where it is called
                if isinstance(item, ast.Call) and (n := _name(item.func)) and NAMED_LIKE_ROTATION.search(n):
                    calls.add(n)
        if calls - NOT_ROTATIONS:
            found[model_type] = sorted(calls - NOT_ROTATIONS)
    assert not found, found
    assert sum(1 for e in _table().values() if e.get("rope") is False) > 300  # the sweep saw the table


def test_every_rotating_type_is_read_refused_with_a_reason_or_not_an_image_model():
    rotating = {t for t, e in _table().items() if e.get("rotation_calls") or e.get("rotating_parts")}
    left = rotating - set(VISION_MODEL_TYPES)
    assert left == set(REFUSED) | set(ELSEWHERE), (sorted(left - set(REFUSED) - set(ELSEWHERE)),
                                                  sorted((set(REFUSED) | set(ELSEWHERE)) - left))
    assert not set(REFUSED) & set(ELSEWHERE)
    assert len(REFUSED) >= 30 and {"video_llama_3_vision", "sapiens2", "chmv2"} <= set(VISION_MODEL_TYPES)


def test_no_image_model_is_read_as_a_language_model():
    """An image or video model whose entry does not say "no RoPE" (EfficientLoFTR's did not: read_config asked
    for its 1-D layout) is read by read_vision_config: none is left whose model classes take images or video
    and no text (transformers' ``input_modalities``)."""
    import importlib
    import inspect

    from transformers import PreTrainedModel

    left = []
    for model_type, entry in _table().items():
        if model_type in VISION_MODEL_TYPES or entry.get("rope") is False or "text_model_type" in entry:
            continue
        config_class, folder = _package(model_type)
        package = config_class.__module__.rsplit(".", 1)[0]
        for path in folder.glob("modeling_*.py"):
            module = importlib.import_module(f"{package}.{path.stem}")
            for _, cls in inspect.getmembers(module, inspect.isclass):
                if issubclass(cls, PreTrainedModel) and getattr(cls, "config_class", None) is config_class:
                    kinds = {cls.input_modalities} if isinstance(cls.input_modalities, str) else set(cls.input_modalities)
                    if kinds & {"image", "video"} and "text" not in kinds:
                        left.append(model_type)
    assert not left, sorted(set(left))
    assert "efficientloftr" in VISION_MODEL_TYPES


@pytest.mark.parametrize("model_type", sorted(REFUSED))
def test_each_refusal_is_true_of_transformers_code(model_type: str):
    kind, rotating_class, reason = REFUSED[model_type]
    built, rotating = rotating_classes(model_type)
    _, folder = _package(model_type)
    assert _rotations(_classes(folder)[rotating_class]), f"{rotating_class} does not rotate"
    if kind == "part":  # nothing built from this config rotates; the named class of its file does
        assert not rotating, rotating
        assert rotating_class not in built
    else:
        assert kind == "not_read" and model_type in NOT_READ and rotating_class in rotating, (built, rotating)
    with pytest.raises(ValueError) as refused:
        read_vision_config({"model_type": model_type})
    assert reason in str(refused.value)
    for named in re.findall(r"read as (\w+)", reason):  # the model that rotates instead is one posenc reads
        assert named in VISION_MODEL_TYPES and _package(named)[1] == folder


def test_the_elsewhere_types_are_not_image_or_video_models():
    """What transformers declares of their models (``input_modalities``): no image or video, but for four
    checked otherwise."""
    import importlib
    import inspect

    from transformers import PreTrainedModel

    declared = {}
    for model_type in ELSEWHERE:
        config_class, folder = _package(model_type)
        kinds: set[str] = set()
        for path in folder.glob("modeling_*.py"):
            module = importlib.import_module(f"{config_class.__module__.rsplit('.', 1)[0]}.{path.stem}")
            for _, cls in inspect.getmembers(module, inspect.isclass):
                if issubclass(cls, PreTrainedModel) and getattr(cls, "config_class", None) is config_class:
                    modalities = cls.input_modalities
                    kinds |= {modalities} if isinstance(modalities, str) else set(modalities)
        declared[model_type] = kinds
    odd = {t for t, kinds in declared.items() if kinds & {"image", "video"}}
    assert odd == {"blt", "cohere_compass_text", "gemma4_audio", "pi0"}, odd
    assert _table()["cohere_compass"]["text_model_type"] == "cohere_compass_text"  # the text model of the parent
    assert set(_table()["pi0"]["rotating_parts"].values()) == {"gemma"}  # Gemma language models
    from transformers.models.gemma4.modeling_gemma4 import (
        Gemma4AudioModel,  # takes audio features only
    )

    assert Gemma4AudioModel.main_input_name == "input_features"
    # BLT's PreTrainedModel declares ("image", "text") (modeling_blt.py:405), but its models read byte ids
    from transformers.models.blt.modeling_blt import BltForCausalLM, BltModel

    assert BltForCausalLM.main_input_name == "input_ids"
    assert not {"pixel_values", "pixel_values_videos"} & set(inspect.signature(BltModel.forward).parameters)


def test_chmv2_is_read_through_its_dinov3_backbone():
    """CHMv2 (a depth head) rotates only in its DINOv3 backbone (the table's rotating_parts): read through
    backbone_config, with the parent's own defaults for a missing one (configuration_chmv2.py:69-87)."""
    from transformers import CHMv2Config

    from posenc.configs import read_config

    assert _table()["chmv2"]["rotating_parts"] == {"backbone_config": "dinov3_vit"}
    built = CHMv2Config()
    reading = read_vision_config({"model_type": "chmv2"})
    assert reading == read_vision_config(built.backbone_config.to_dict()) == read_vision_config(built.to_dict())
    assert (reading.head_dim, reading.grid, reading.unrotated) == (
        64, (26, 26), "the first 5 tokens (class token and 4 register tokens)")
    given = CHMv2Config(backbone_config={"model_type": "dinov3_vit", "hidden_size": 64, "num_attention_heads": 4})
    assert read_vision_config(given.to_dict()) == read_vision_config(given.backbone_config.to_dict())
    assert read_vision_config(given.to_dict()).grid == (14, 14)  # a given backbone keeps its own class defaults
    with pytest.raises(ValueError, match="read_vision_config reads it"):
        read_config({"model_type": "chmv2"})


def test_sapiens2_live():
    """Sapiens 2's backbone rotates as DINOv3 does: its own rotary module on a 3 x 5 grid (not the configured
    4 x 4), its apply_rotary_pos_emb on queries with the class and register tokens first."""
    from transformers import Sapiens2Config
    from transformers.models.sapiens2 import modeling_sapiens2 as m

    config = Sapiens2Config(hidden_size=32, num_attention_heads=2, image_size=32, patch_size=8, num_register_tokens=2,
                            pos_embed_shift=0.1, pos_embed_jitter=1.5, rope_theta=50.0)
    reading = read_vision_config(config)
    assert (reading.model_type, reading.axes, reading.sections, reading.base) == ("sapiens2", ("row", "column"),
                                                                                   (4, 4), 50.0)
    assert reading.augmentation == {"shift": 0.1, "jitter": 1.5, "rescale": 2.0} and reading.grid == (4, 4)
    cos, sin = m.Sapiens2RopePositionEmbedding(config).eval()(torch.zeros(1, 3, 24, 40))
    close(np.cos(reading.angles((3, 5))), cos, **TABLE)
    close(np.sin(reading.angles((3, 5))), sin, **TABLE)
    torch.manual_seed(5)
    q = torch.randn(1, 2, 3 + 15, 16)
    theirs, _ = m.apply_rotary_pos_emb(q, q, cos, sin)
    close(reading.rotate(q[:, :, 3:].double().numpy(), (3, 5)), theirs[:, :, 3:], **ROTATED)
    torch.testing.assert_close(theirs[:, :, :3], q[:, :, :3])
    assert "first 3 tokens" in reading.unrotated
    assert all("sapiens2/modeling_sapiens2.py" in note for note in reading.notes)
    assert read_vision_config({"model_type": "sapiens2"}) == read_vision_config(Sapiens2Config().to_dict())


@pytest.mark.parametrize("kwargs", [{}, {"hidden_size": 64, "num_attention_heads": 8, "out_features": [16, 32, 64, 64],
                                     "rope_parameters": {"rope_type": "default", "rope_theta": 100.0}},
                                    {"hidden_size": 64, "num_attention_heads": 4, "partial_rotary_factor": 2.0,
                                     "out_features": [16, 32, 64, 64]}])
def test_efficientloftr_live(kwargs):
    """EfficientLoFTR's self-attention (a 2-D RoPE its table entry did not show: it asked for a 1-D layout):
    its rotary module on a 3 x 5 aggregated grid, its apply_rotary_pos_emb on whole hidden vectors."""
    from transformers import EfficientLoFTRConfig
    from transformers.models.efficientloftr import modeling_efficientloftr as m

    config = EfficientLoFTRConfig(**kwargs)
    reading = read_vision_config(config)
    hidden = config.hidden_size
    assert (reading.head_dim, reading.rotary_dim, reading.sections) == (hidden, hidden, (hidden // 4,) * 2)
    assert (reading.layout, reading.axis_pairs, reading.coordinates) == ("interleaved", "alternating", "index_from_one")
    cos, sin = m.EfficientLoFTRRotaryEmbedding(config)(torch.zeros(1, 3, 14, 22))  # (14 - 4) // 4 + 1 = 3 rows, 5 cols
    cos, sin = cos.reshape(1, 15, hidden), sin.reshape(1, 15, hidden)  # row by row (modeling_efficientloftr.py:758)
    close(np.cos(reading.angles((3, 5))), cos[0], **TABLE)
    close(np.sin(reading.angles((3, 5))), sin[0], **TABLE)
    torch.manual_seed(6)
    q = torch.randn(1, 15, 1, hidden)  # [batch, tokens, 1, hidden], as its attention holds them before the heads
    theirs, _ = m.apply_rotary_pos_emb(q, q, cos, sin, unsqueeze_dim=2)
    close(reading.rotate(q[0, :, 0].double().numpy(), (3, 5)), theirs[0, :, 0], **ROTATED)


def test_efficientloftr_refuses_what_its_module_cannot_run():
    from transformers import EfficientLoFTRConfig
    from transformers.models.efficientloftr import modeling_efficientloftr as m

    bad = {"hidden_size": 64, "num_attention_heads": 4, "out_features": [16, 32, 64, 64]}  # 16 x 4 / 2 = 32 rungs, not 16
    with pytest.raises(ValueError, match="partial_rotary_factor=4.0 gives 32 rungs, not hidden_size / 4"):
        read_vision_config({"model_type": "efficientloftr", **bad})
    with pytest.raises(RuntimeError):
        m.EfficientLoFTRRotaryEmbedding(EfficientLoFTRConfig(**bad))(torch.zeros(1, 3, 14, 22))
    with pytest.raises(ValueError, match="rope_type"):
        read_vision_config({"model_type": "efficientloftr", "rope_parameters": {"rope_type": "linear", "factor": 2.0}})
