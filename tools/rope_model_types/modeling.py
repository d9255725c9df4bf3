"""Probes of the table generator (``derive.py``) on a model type's modeling file: the layout, found by
running its rotary module and rotation function on a probe q/k against posenc's rotation in both
layouts, and the rotation calls read from its source (which functions the text attention calls, and
the ``if`` tests around them).
"""

from __future__ import annotations

import ast
import contextlib
import inspect
import os
from typing import Any

import torch

_ROTARY_CALLS = ("apply_rotary_pos_emb", "apply_rotary_emb", "apply_rotary_pos_emb_interleave",
                 "apply_rope", "apply_rotary")


# ---------------------------------------------------------------- the layout, by probing
def own_name(text: Any) -> str:
    """The model's own name in its class names (``Granite4Vision`` for ``Granite4VisionTextConfig``):
    a word such as Vision in it names the model, not another tower."""
    return type(text).__name__.removesuffix("Config").removesuffix("Text")


def _other_tower(name: str, own: str = "") -> bool:
    """Whether a class name names another tower (vision, audio, ...) than the text model's, the
    model's own name left out (GLM-Image's ``GlmImageTextRotaryEmbedding`` is its text model's)."""
    # the part after the name both share (PocketTTS's audio tokenizer decoder config, PocketTTSAudioTokenizer...)
    rest = name[len(os.path.commonprefix([name, own])):] if own else name
    return any(word in rest for word in _OTHER_MODALITIES)


def _rotary_candidates(module: Any, text: Any) -> list[Any]:
    """The rotary modules of ``module`` that build from the text config, text ones first."""
    found = []
    for name, cls in vars(module).items():
        if not (inspect.isclass(cls) and name.endswith("RotaryEmbedding")):
            continue
        if _other_tower(name, own_name(text)):
            continue
        try:
            rotary = cls(config=text)
        except Exception:
            continue
        if isinstance(getattr(rotary, "inv_freq", None), torch.Tensor) or hasattr(rotary, "layer_types"):
            found.append(rotary)
    return found


def _tables(rotary: Any, length: int, layer_type: str | None, fitted: bool = False) -> Any:
    x = torch.zeros(1, length, 8, dtype=torch.float64)
    positions = torch.arange(length)[None, :]
    args: list[Any] = [x, positions]
    if layer_type is not None and "layer_type" in inspect.signature(rotary.forward).parameters:
        args.append(layer_type)
    for call in (lambda: rotary(*args), lambda: rotary(x, positions.expand(3, 1, length), *args[2:])):
        try:  # the second form: M-RoPE, one row of positions per axis
            return call()
        except Exception:
            continue
    inv_freq = getattr(rotary, "inv_freq", None)
    if hasattr(rotary, "mrope_section") and isinstance(inv_freq, torch.Tensor) and not fitted:
        # M-RoPE whose sections do not fit the frequencies at the class defaults (GLM-4V's fallback
        # [8, 12, 12] on 64 of them; HunYuan-VL has no fallback): splits that fit, for text tokens
        # (the same position on every axis) any split turns alike; only the layout is probed
        n = inv_freq.shape[-1]
        rotary.mrope_section = [n - 2 * (n // 3), n // 3, n // 3]
        return _tables(rotary, length, layer_type, fitted=True)
    return None


def _inv_freq(rotary: Any, layer_type: str | None) -> torch.Tensor | None:
    name = "inv_freq" if layer_type is None or hasattr(rotary, "inv_freq") else f"{layer_type}_inv_freq"
    value = getattr(rotary, name, None)
    return value if isinstance(value, torch.Tensor) else None


def _apply(function: Any, q: torch.Tensor, k: torch.Tensor, tables: Any) -> tuple[torch.Tensor, torch.Tensor] | None:
    """Call a rotation function of any of the signatures transformers uses; the rotated q and k
    (None for a signature it does not know and for a failure alike)."""
    try:
        return _call_rotation(function, q, k, tables)
    except Exception:
        if isinstance(tables, torch.Tensor) and q.shape[1] != q.shape[2]:  # [batch, seq, heads, dim] (Llama 4)
            pair = _apply(function, q.transpose(1, 2), k.transpose(1, 2), tables)
            return None if pair is None else (pair[0].transpose(1, 2), pair[1].transpose(1, 2))
        return None


def _call_rotation(function: Any, q: torch.Tensor, k: torch.Tensor, tables: Any,
                   gpt_j: bool = True) -> tuple[torch.Tensor, torch.Tensor] | None:
    """The rotated q and k from ``function`` in the signatures transformers uses (``gpt_j``: also
    GPT-J's and CodeGen's ``(tensor, sin, cos)``), None for another; its errors let through."""
    names = list(inspect.signature(function).parameters)
    if isinstance(tables, torch.Tensor):  # complex freqs_cis (Llama 4, DeepSeek-V2)
        out = function(q, k, tables.to(torch.complex128) if tables.is_complex() else tables)
    elif names[:4] in (["q", "k", "cos", "sin"], ["xq", "xk", "cos", "sin"]):
        out = function(q, k, *tables)
    elif names[:3] in (["x", "cos", "sin"], ["hidden_states", "cos", "sin"]):
        out = function(q, *tables), function(k, *tables)
    elif gpt_j and names[:3] == ["tensor", "sin", "cos"]:  # GPT-J, CodeGen: [batch, seq, heads, dim]
        cos, sin = tables
        out = tuple(function(t.transpose(1, 2), sin, cos).transpose(1, 2) for t in (q, k))
    else:
        return None
    return (out[0], out[1]) if isinstance(out, tuple) and len(out) >= 2 else None


def _posenc_rotation(x: torch.Tensor, inv_freq: torch.Tensor, layout: str, scale: float,
                     sign: float = 1.0) -> torch.Tensor:
    """RoPE written out (float64) over the first ``width`` features, pairs as ``layout`` says
    (``sign`` -1: each pair turned the other way, by -m theta)."""
    width = 2 * inv_freq.shape[-1]
    x = x.clone()
    angles = sign * torch.arange(x.shape[-2], dtype=torch.float64)[:, None] * inv_freq.to(torch.float64)
    cos, sin = angles.cos() * scale, angles.sin() * scale
    part = x[..., :width]
    if layout == "half":
        a, b = part[..., : width // 2], part[..., width // 2:]
        x[..., :width] = torch.cat([a * cos - b * sin, b * cos + a * sin], dim=-1)
    else:
        a, b = part[..., 0::2], part[..., 1::2]
        x[..., :width] = torch.stack([a * cos - b * sin, b * cos + a * sin], dim=-1).flatten(-2)
    return x


def _layout_of(function: Any, rotary: Any, text: Any, layer_type: str | None, sign: float = 1.0) -> str | None:
    """The layout whose attention scores (q_m . k_n for every m, n) the model's rotation reproduces
    (``sign`` -1: turned the other way). The rungs are taken in posenc's order, largest first:
    Ernie 4.5 VL stores its frequencies permuted and its sections put them back in that order for
    text tokens (modeling_ernie4_5_vl_moe.py:94-100, 119-126); the scores decide."""
    inv_freq = _inv_freq(rotary, layer_type)
    if inv_freq is None:
        return None
    inv_freq = inv_freq.sort(descending=True).values
    rotary = rotary.double()
    length = 7
    tables = _tables(rotary, length, layer_type)
    if tables is None:
        return None
    width = 2 * inv_freq.shape[-1]
    scale = float(getattr(rotary, "attention_scaling", 1.0) if layer_type is None
                  else getattr(rotary, f"{layer_type}_attention_scaling", getattr(rotary, "attention_scaling", 1.0)))
    generator = torch.Generator().manual_seed(0)
    for extra in (0, 2 * width, width):  # full width first, then with features that pass unrotated
        q, k = (torch.randn(1, 2, length, width + extra, dtype=torch.float64, generator=generator) for _ in "qk")
        out = _apply(function, q, k, tables)
        if out is None or out[0].shape != q.shape:
            continue
        scores = out[0].double() @ out[1].double().transpose(-1, -2)
        for layout in ("half", "interleaved"):
            ours = (_posenc_rotation(q, inv_freq.double(), layout, scale, sign)
                    @ _posenc_rotation(k, inv_freq.double(), layout, scale, sign).transpose(-1, -2))
            if torch.allclose(scores, ours, atol=1e-6):
                return layout
        return None
    return None


class _LegacyRotary(torch.nn.Module):
    """GPT-J's and CodeGen's tables (``create_sinusoidal_positions``: sin then cos, base 10000), as a
    rotary module that returns (cos, sin)."""

    def __init__(self, module: Any, rotary_dim: int) -> None:
        super().__init__()
        self.make = module.create_sinusoidal_positions
        self.inv_freq = 1.0 / 10000 ** (torch.arange(0, rotary_dim, 2, dtype=torch.float64) / rotary_dim)
        self.rotary_dim = rotary_dim

    def forward(self, x: torch.Tensor, position_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        table = self.make(int(position_ids.max()) + 1, self.rotary_dim).to(torch.float64)[position_ids]
        sin, cos = torch.split(table, self.rotary_dim // 2, dim=-1)
        return cos, sin


def _legacy_rotary(module: Any, text: Any) -> list[Any]:
    if not hasattr(module, "create_sinusoidal_positions") or not isinstance(getattr(text, "rotary_dim", None), int):
        return []
    return [_LegacyRotary(module, text.rotary_dim)]


def _rotation_functions(module: Any) -> dict[str, Any]:
    return {name: getattr(module, name) for name in _ROTARY_CALLS if callable(getattr(module, name, None))}


# ---------------------------------------------------------------- the source: conditions and calls
def _calls_rotation(nodes: list[ast.stmt]) -> bool:
    names = {getattr(c.func, "id", getattr(c.func, "attr", "")) for stmt in nodes for c in ast.walk(stmt)
             if isinstance(c, ast.Call)}
    return bool(names & set(_ROTARY_CALLS))


def _branches(source: str) -> list[str]:
    """Every ``if`` test with a rotation call in its body (layout flags such as ``rope_interleave``)."""
    return sorted({ast.unparse(node.test) for node in ast.walk(ast.parse(source))
                   if isinstance(node, ast.If) and _calls_rotation(node.body)})


def _conditions(source: str) -> list[str]:
    """The ``if`` tests under which a rotation call runs and without which none does (an ``else``
    that rotates too, as GPT-J's partial/full branches, is not such a condition)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.If) and _calls_rotation(node.body) and not _calls_rotation(node.orelse):
            found.append(ast.unparse(node.test))
    return sorted(set(found))


_OTHER_MODALITIES = ("Vision", "Audio", "Image", "Video", "Patch", "Speech", "Conformer", "Indexer")


def _called_in_attention(source: str, own: str = "", config_name: str = "") -> set[str]:
    """The rotation functions the text attention classes call (``class ...Attention``; ``own``: the
    model's own name, `own_name`); only those whose ``config`` is annotated with ``config_name``
    where some are (Dots3-Note's audio encoder: not its text attention's interleaved rotation)."""
    classes = [node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.ClassDef)
               and node.name.endswith("Attention") and not _other_tower(node.name, own)]
    annotated = [node for node in classes if config_name and _config_annotation(node) == config_name]
    called = set()
    for node in annotated or classes:
        for call in ast.walk(node):
            if isinstance(call, ast.Call):
                name = getattr(call.func, "id", getattr(call.func, "attr", ""))
                if name in _ROTARY_CALLS:
                    called.add(name)
    return called


def _config_annotation(node: ast.ClassDef) -> str | None:
    """The annotation of the ``config`` argument of a class's ``__init__``, as written."""
    for item in node.body:
        if isinstance(item, ast.FunctionDef) and item.name == "__init__":
            for arg in item.args.args:
                if arg.arg == "config" and arg.annotation is not None:
                    return ast.unparse(arg.annotation)
    return None


def mrope_sections(rotary: Any, layer_type: str | None) -> dict[str, Any] | None:
    """What a rotary module that splits its frequencies by M-RoPE sections (``mrope_section``) demands
    of them: ``default``, the sections it uses when the config gives none (None: it fails without
    them, HunYuan-VL), and ``sum``, whether it fails unless they add up to its number of rungs
    (GLM-4V's and Qwen2-VL's ``split``; Qwen3-VL's strided slices take any). Found by running it
    with sections that fit and with one rung too many; None where it takes any sections and has a
    default (nothing to check) or is no such module. ``paired`` (written only when true): it fails
    unless the first two sections are equal (tried with the same sum, unequal)."""
    section = getattr(rotary, "mrope_section", "absent")
    inv_freq = _inv_freq(rotary, layer_type)
    if isinstance(section, (str, dict)) or inv_freq is None:
        return None
    n = inv_freq.shape[-1]

    def runs(sections: list[int]) -> bool:
        rotary.mrope_section = sections
        return _tables(rotary, 7, layer_type, fitted=True) is not None

    try:  # the remainder on the first axis, else on the last (Ernie 4.5 VL interleaves two equal ones)
        fit = next((f for f in ([n - 2 * (n // 3), n // 3, n // 3], [n // 3, n // 3, n - 2 * (n // 3)]) if runs(f)), None)
        fits, over = fit is not None, fit is not None and runs([fit[0] + 1, *fit[1:]])
        # Ernie 4.5 VL stacks its first two sections (torch.stack, modeling_ernie4_5_vl_moe.py:123-126)
        paired = fit is not None and fit[0] == fit[1] > 0 and not runs([fit[0] + 1, fit[1] - 1, *fit[2:]])
    finally:
        rotary.mrope_section = section
    if not fits or (over and section is not None):
        return None
    return {"default": None if section is None else [int(s) for s in section], "sum": not over,
            **({"paired": True} if paired else {})}


def _annotated_for(module: Any, text: Any) -> str | None:
    """The rotary module class of ``module`` whose ``config`` argument is annotated with the text
    config's class (the one its model builds), if any."""
    for name, cls in vars(module).items():
        if inspect.isclass(cls) and name.endswith("RotaryEmbedding"):
            with contextlib.suppress(TypeError, ValueError, KeyError):
                annotation = inspect.signature(cls.__init__).parameters["config"].annotation
                if getattr(annotation, "__name__", annotation) == type(text).__name__:
                    return name
    return None
