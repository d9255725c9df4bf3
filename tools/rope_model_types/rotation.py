"""Probe of the table generator (``derive.py``): whether a model type's code rotates q and k at all.

The table marks a model type ``{"rope": False}`` when posenc finds no rotary settings to read (no
``rope_parameters``, no rotary module it probes). That alone must not be read as "uses no RoPE":
DINOv3 rotates inside its attention with a ``DINOv3ViTRopePositionEmbedding``, V-JEPA 2 with its
own ``rotate_queries_or_keys``, SAM 2/3 with ``apply_rotary_pos_emb_2d``. What the code does
decides: a rotation function (``rotate_half``, ``apply_rotary_*``, ``apply_rope*``,
``rotate_queries_or_keys``, ...) called from code that is not itself a rotation helper (the
attention, an encoder layer) means the model rotates; the calls are recorded (``rotates``) and
`posenc.configs.read_config` refuses such a model type by name instead of denying its RoPE.
"""

from __future__ import annotations

import ast
import re

_ROTATION = re.compile(r"(rotate_half|rotate_every_two|rotate_queries_or_keys|apply_rotary\w*|apply_rope\w*)")


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _mentions(node: ast.AST, word: str) -> bool:
    return any(isinstance(n, (ast.Name, ast.Attribute)) and word in (_name(n) or "").lower() for n in ast.walk(node))


def turns(function: ast.AST) -> bool:
    """Whether a function's body rotates by what it computes, whatever its name: a sum (or difference)
    of two products, one with a cosine and one with a sine (``x * cos + rotate(x) * sin``, the form
    of every real-valued RoPE), or a product of complex numbers built with ``view_as_complex``
    (Llama 4's vision encoder, Meta's original code)."""
    for node in ast.walk(function):
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            left, right = node.left, node.right
            if all(isinstance(side, ast.BinOp) and isinstance(side.op, ast.Mult) for side in (left, right)) and (
                    (_mentions(left, "cos") and _mentions(right, "sin")) or (_mentions(left, "sin") and _mentions(right, "cos"))):
                return True
        if isinstance(node, ast.Call) and _name(node.func) == "view_as_complex":
            return True
    return False


def rotation_calls(source: str) -> list[str]:
    """The rotation functions called from code that is not itself a rotation helper, sorted: the
    functions named as rotations (`_ROTATION`) and those whose body rotates (`turns`: Wav2Vec2-Conformer's
    and SeamlessM4T's ``_apply_rotary_embedding`` methods, which the name pattern misses)."""
    tree = ast.parse(source)
    rotating = {node.name for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                and (_ROTATION.fullmatch(node.name) or turns(node))}
    found: set[str] = set()

    def visit(node: ast.AST, inside_helper: bool) -> None:
        for child in ast.iter_child_nodes(node):
            helper = inside_helper
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                helper = child.name in rotating
            if isinstance(child, ast.Call) and not inside_helper:
                name = _name(child.func)
                if name and (name in rotating or _ROTATION.fullmatch(name)):
                    found.add(name)
            visit(child, helper)

    visit(tree, False)
    return sorted(found)


def sub_config_types(config_class: type) -> dict[str, str]:
    """The model type of each sub-config a config class builds (``sub_configs_defaults``: a config
    class, or a ``SubConfigSpec`` naming the model type of its AutoConfig), by key."""
    out = {}
    for key, spec in (getattr(config_class, "sub_configs_defaults", None) or {}).items():
        child = spec.model_type if isinstance(spec, type) else (
            getattr(spec, "model_type", None) or getattr(getattr(spec, "config_class", None), "model_type", None))
        if isinstance(child, str) and child:
            out[key] = child
    return out


def rotating_parts(table: dict[str, dict], classes: dict[str, type], model_type: str,
                   depth: int = 3) -> dict[str, str]:
    """The sub-configs (``"vision_config.backbone_config"``) of ``model_type`` whose own code rotates
    (a table entry with rotary settings or ``rotation_calls``), followed ``depth`` levels down: a
    model whose own modeling file does not rotate but whose parts do (SAM 3's ViT, CHMv2's DINOv3
    backbone, pi0's Gemma) is not a model without RoPE."""
    found: dict[str, str] = {}

    def rotates(entry: dict) -> bool:
        return bool(entry) and (bool(entry.get("rotation_calls")) or (entry.get("rope", True) is not False
                                                                     and "text_model_type" not in entry))

    def walk(kind: str, path: tuple[str, ...], left: int) -> None:
        cls = classes.get(kind)
        for key, child in (sub_config_types(cls) if cls else {}).items():
            if rotates(table.get(child, {})):
                found[".".join((*path, key))] = child
            elif left > 0:
                walk(child, (*path, key), left - 1)

    walk(model_type, (), depth)
    return found


def calls_by_class(source: str) -> dict[str, list[str]]:
    """The rotation functions each class of the module calls in its methods (classes that call none
    left out): where two classes of one layer rotate differently (DeepSeek-V3.2's indexer and its
    latent attention), each is a rotary site of its own."""
    out: dict[str, list[str]] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef):
            calls = {name for call in ast.walk(node) if isinstance(call, ast.Call)
                     and (name := _name(call.func)) and _ROTATION.fullmatch(name)}
            if calls:
                out[node.name] = sorted(calls)
    return out


_OTHER_TOWERS = ("Vision", "Audio", "Image", "Video", "Patch", "Speech", "Conformer")


def rotary_sites(module: object, source: str, text: object, layer_type: str | None) -> dict[str, str]:
    """The layout of each text class that rotates q and k with a single function, where the text
    classes of the module rotate in more than one layout (DeepSeek-V3.2: the indexer in the half
    layout, the latent attention interleaved); empty otherwise. Each function's layout is probed
    as the table's layout is (``_layout_of``)."""
    from tools.rope_model_types import derive

    functions = derive._rotation_functions(module)
    by_class = {name: [c for c in calls if c in functions] for name, calls in calls_by_class(source).items()
                if not any(word in name for word in _OTHER_TOWERS)}
    rotaries = derive._rotary_candidates(module, text)
    if len([c for c in by_class.values() if c]) < 2 or not rotaries:
        return {}
    probed = {name: derive._layout_of(functions[name], rotaries[0], text, layer_type)
              for name in {c for calls in by_class.values() for c in calls}}
    sites = {name: layouts.pop() for name, calls in by_class.items()
             if len(layouts := {probed[c] for c in calls} - {None}) == 1}
    return dict(sorted(sites.items())) if len(set(sites.values())) > 1 else {}


def rotates_elsewhere(text: object, source: str, calls: list[str]) -> list[str]:
    """The classes of the file that rotate, where the model transformers builds from ``text``
    (``AutoModel.from_config``, on the meta device) uses none of them and every rotation call of the
    file is in one of them: GLM-5-Next's text model attends without RoPE (its config demands
    ``qk_rope_head_dim`` 0, configuration_glm5_next.py:223-225) and only its vision tower rotates.
    Empty where the model cannot be built, or one of its modules rotates."""
    by_class = calls_by_class(source)
    if not by_class or not set(calls) <= {c for names in by_class.values() for c in names}:
        return []
    used = classes_built(text)
    off = set(rotation_off(text, source))
    return [] if used is None or (used & set(by_class)) - off else sorted(by_class)


def rotation_off(text: object, source: str) -> dict[str, str]:
    """The rotating classes the model built from ``text`` holds only with their rotation switched
    off: the ``if`` around the class's rotation call tests ``self.<name> is not None`` and every
    instance has that attribute None (Moshi's depth decoder builds MoshiAttention with
    ``use_rope=False``, so its ``rotary_emb`` is None: modeling_moshi.py:448-450, 467-469, 597),
    by class, the attribute's name; empty where none is."""
    guards = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef):
            for test in (n.test for n in ast.walk(node) if isinstance(n, ast.If) and any(
                    isinstance(c, ast.Call) and _ROTATION.fullmatch(_name(c.func) or "") for b in n.body
                    for c in ast.walk(b))):
                if (isinstance(test, ast.Compare) and isinstance(test.ops[0], ast.IsNot)
                        and isinstance(test.left, ast.Attribute) and _name(test.left.value) == "self"
                        and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None):
                    guards[node.name] = test.left.attr
    found: dict[str, list[bool]] = {}
    for model in built_models(text) or []:
        for module in model.modules():
            name = type(module).__name__
            if name in guards:
                found.setdefault(name, []).append(getattr(module, guards[name], 0) is None)
    return {name: guards[name] for name, offs in sorted(found.items()) if all(offs)}


def classes_built(text: object) -> set[str] | None:
    """The names of the classes (with their bases) of every module of the model transformers builds
    from ``text`` (`built_models`); None where none builds."""
    models = built_models(text)
    if not models:
        return None
    return {cls.__name__ for model in models for module in model.modules() for cls in type(module).__mro__}


def built_models(text: object) -> list[object] | None:
    """The model transformers builds from ``text`` (``AutoModel.from_config`` on the meta device);
    where AutoModel has no class for it (Qwen2.5-Omni's audio encoder and vocoder), every model class
    of its modeling file whose ``config_class`` is the config's class, all of which must build."""
    import torch
    from transformers import AutoModel

    try:
        with torch.device("meta"):
            return [AutoModel.from_config(text)]
    except Exception:
        return _own_models(text) or None


def _own_models(text: object) -> list[object]:
    import inspect

    import torch
    from transformers import PreTrainedModel

    from tools.rope_model_types import derive

    try:
        module = derive._module(getattr(text, "model_type", ""))
    except Exception:
        return []
    owned = [cls for _, cls in inspect.getmembers(module, inspect.isclass)
             if issubclass(cls, PreTrainedModel) and getattr(cls, "config_class", None) is type(text)]
    models = []
    for cls in owned:
        try:
            with torch.device("meta"):
                models.append(cls(text))
        except Exception:
            return []  # one that does not build might rotate: nothing is said
    return models


def off_entry(text: object, source: str, elsewhere: list[str]) -> dict[str, dict[str, str]]:
    """``rotation_off`` for a model type that rotates elsewhere (`rotates_elsewhere`), where that is
    because it builds a rotating class with its rotation switched off (`rotation_off`)."""
    off = rotation_off(text, source) if elsewhere else {}
    return {"rotation_off": off} if off else {}
