"""The measures behind `posenc.experiments.claims`: references into the committed results files,
and expressions that combine them seed by seed (the vocabulary is documented there).

Inside: the references (`measure`, the `Measure` it returns, `ClaimError`) live in
``_references.py``; this module gives them and the expressions over them (`evaluate`): measures and
numbers with + - * /, parentheses, min, max and mean, or ``posenc: EXPR``.
"""

from __future__ import annotations

import ast
import math
import re
from pathlib import Path

from posenc.experiments._references import (
    AT,
    ClaimError,
    Measure,
    every_method,
    measure,
)

__all__ = ["ClaimError", "Measure", "evaluate", "measure"]

_TOKEN = re.compile(r"\s*(?:(?P<func>min|max|mean)(?=\s*\()|"
                    r"(?P<ref>(?:large\.)?[a-z]+(?:\.(?:[\w-]+|\*))*(?:" + AT + r"|:[\w.\[\]\"-]+))|(?P<again>" + AT + r")|"
                    r"(?P<number>\d+(?:\.\d+)?(?:e-?\d+)?)|(?P<op>[-+*/(),]))")


def _tokens(text: str) -> list[tuple[str, str]]:
    tokens, position = [], 0
    text = text.strip()
    while position < len(text):
        match = _TOKEN.match(text, position)
        if not match or not match.group(match.lastgroup or ""):
            raise ClaimError(f"cannot read {text!r} at {text[position:]!r}")
        kind = match.lastgroup or ""
        tokens.append((kind, match[kind]))
        position = match.end()
    return tokens


def evaluate(text: str) -> Measure:
    """A measure expression (``lm.fire@8L / @L``, ``min(recall.t5@8L, recall.kerple@8L)``);
    ``posenc: EXPR`` is Python over posenc."""
    if text.strip().startswith("posenc:"):
        return Measure.constant(text.strip(), _posenc_expression(text.strip()[len("posenc:"):]))
    tokens, last = _tokens(text), [""]

    def term(i: int) -> tuple[Measure, int]:
        kind, word = tokens[i] if i < len(tokens) else ("end", "")
        if kind == "ref":
            last[0] = word
            return measure(word), i + 1
        if kind == "again":
            if not last[0] or ":" in last[0]:
                raise ClaimError(f"{text!r}: {word} repeats no reference before it")
            last[0] = re.sub(AT + "$", word, last[0])
            return measure(last[0]), i + 1
        if kind == "number":
            return Measure.constant(word, float(word)), i + 1
        if kind == "func":  # min(A, B, ...) / max(A, B, ...): over every seed of every argument
            arguments, j = [], i + 1
            while j < len(tokens) and tokens[j][1] in ("(", ","):
                if j + 1 < len(tokens) and tokens[j + 1][0] == "ref" and "*" in tokens[j + 1][1]:
                    arguments += every_method(tokens[j + 1][1])  # lm.*@8L: every method scored there
                    j += 2
                    continue
                argument, j = sum_(j + 1)
                arguments.append(argument)
            if j >= len(tokens) or tokens[j][1] != ")" or not arguments:
                raise ClaimError(f"{text!r}: {word}( is not closed")
            if word == "mean":  # mean(A): the mean alone, so that mean(A) / mean(B) is a ratio of means
                if len(arguments) != 1:
                    raise ClaimError(f"{text!r}: mean( takes one measure")
                return Measure.constant(f"mean({arguments[0].name})", arguments[0].mean), j + 1
            pick = min if word == "min" else max
            number = pick(pick(a.values() if a.low is not None else (a.mean,)) for a in arguments)
            return Measure.constant(f"{word}(...)", number), j + 1
        if word == "(":
            inner, j = sum_(i + 1)
            if j >= len(tokens) or tokens[j][1] != ")":
                raise ClaimError(f"{text!r}: a bracket is not closed")
            return inner, j + 1
        if word == "-":
            inner, j = term(i + 1)
            return Measure.constant("-1", -1.0).combine(inner, "*"), j
        raise ClaimError(f"{text!r}: expected a reference or a number, got {word or 'the end'!r}")

    def product(i: int) -> tuple[Measure, int]:
        left, i = term(i)
        while i < len(tokens) and tokens[i][1] in "*/":
            right, j = term(i + 1)
            left, i = left.combine(right, tokens[i][1]), j
        return left, i

    def sum_(i: int) -> tuple[Measure, int]:
        left, i = product(i)
        while i < len(tokens) and tokens[i][1] in "+-":
            right, j = product(i + 1)
            left, i = left.combine(right, tokens[i][1]), j
        return left, i

    result, end = sum_(0)
    if end != len(tokens):
        raise ClaimError(f"{text!r}: unexpected {tokens[end][1]!r}")
    return Measure(text.strip(), result.mean, result.low, result.high, result.seeds)


_SAFE_NODES = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Call, ast.Subscript, ast.Constant, ast.Name, ast.Load,
               ast.keyword, ast.Dict, ast.List, ast.Tuple, ast.Slice, ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow,
               ast.FloorDiv, ast.USub, ast.Attribute, ast.Compare, ast.Eq, ast.Lt, ast.Gt,
               ast.LtE, ast.GtE, ast.GeneratorExp, ast.comprehension, ast.Store)


def _posenc_expression(source: str) -> float:
    """A Python expression over the names of ``posenc.__all__``, posenc's public modules
    (``xpos.xpos_zeta(64)``) and ``math``: calls, indexing, arithmetic, comparisons, generator
    expressions, ``.item()``; no private names, no builtins beyond ``abs min max sum len``."""
    import importlib

    import posenc

    tree = ast.parse(source.strip(), mode="eval")
    for node in ast.walk(tree):
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
        if not isinstance(node, _SAFE_NODES) or name.startswith("_"):
            raise ClaimError(f"posenc: {source.strip()!r}: {type(node).__name__} is not allowed here")
    builtins = {"math": math, "abs": abs, "min": min, "max": max, "sum": sum, "len": len}
    bound = {node.id for comp in ast.walk(tree) if isinstance(comp, ast.comprehension)
             for node in ast.walk(comp.target) if isinstance(node, ast.Name)}  # loop variables
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)} - bound - set(builtins)
    modules = {path.stem for path in Path(posenc.__file__).parent.glob("*.py") if not path.stem.startswith("_")}
    unknown = names - set(posenc.__all__) - modules
    if unknown:
        raise ClaimError(f"posenc: {source.strip()!r}: {sorted(unknown)} not in posenc.__all__ or its modules")
    namespace = {name: getattr(posenc, name) if name in posenc.__all__ else importlib.import_module(f"posenc.{name}")
                 for name in names} | builtins
    result = eval(compile(tree, "<value>", "eval"), {"__builtins__": {}}, namespace)  # checked above
    number = float(result.item() if hasattr(result, "item") else result)
    return number
