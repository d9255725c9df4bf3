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


def rotation_calls(source: str) -> list[str]:
    """The rotation functions called from code that is not itself a rotation helper, sorted."""
    found: set[str] = set()

    def visit(node: ast.AST, inside_helper: bool) -> None:
        for child in ast.iter_child_nodes(node):
            helper = inside_helper
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                helper = bool(_ROTATION.fullmatch(child.name))
            if isinstance(child, ast.Call) and not inside_helper:
                name = _name(child.func)
                if name and _ROTATION.fullmatch(name):
                    found.add(name)
            visit(child, helper)

    visit(ast.parse(source), False)
    return sorted(found)


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
