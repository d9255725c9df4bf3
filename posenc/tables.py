"""The result tables of the chapters, computed at build time.

A page shows one with the line ``[[table posenc.tables:NAME | caption]]``: the site's hook calls
``NAME()`` and renders the ``(header, rows)`` it returns as an HTML table, and the page keeps the
code (this module's source, included) and an executed example under it, so the table and the
code that makes it cannot drift apart. Every cell is a string, formatted here once.
"""

from __future__ import annotations

import torch

from posenc._checks import check_size_int
from posenc.experiments.length_extrapolation import CONFIGS, build_model, load_results
from posenc.model import TinyTransformer
from posenc.rope_scaling import rope_attention_scaling, rope_inverse_frequencies

__all__ = ["acts_on", "extrapolation_table", "scaling_table"]

Table = tuple[list[str], list[list[str]]]


# --8<-- [start:extrapolation]
def acts_on(model: TinyTransformer, length: int) -> tuple[str, int]:
    """Where a model's position method acts, found by probing it, and how many numbers it adds
    or rotates in one forward pass over ``length`` tokens (a rough measure of its cost)."""
    if not isinstance(model, TinyTransformer):
        raise TypeError(f"model must be a TinyTransformer, got {type(model).__name__}")
    length = check_size_int("length", length)
    layers, width, heads = model.num_layers, model.dim, model.num_heads
    with torch.no_grad():
        rows = model.embedding(torch.zeros(1, 2, dtype=torch.long))[0]
    if not torch.equal(rows[0], rows[1]):  # the same token differs by position
        return "embeddings", length * width  # one (n, d) addition
    if model.attention_bias(2) is not None:
        return "logits", layers * heads * length * length  # (h, n, n) per layer
    if model.rotary is not None:
        return "q and k", layers * 2 * length * width  # rotate q and k
    return "-", 0


def extrapolation_table() -> Table:
    """Perplexity of each method at 1, 2, 4 and 8 times the training length (committed results),
    with where the method acts and its extra parameters and operations.

    Examples:
        >>> header, rows = extrapolation_table()
        >>> header[:4]
        ['method', 'acts on', '+params', 'extra ops']
        >>> rows[-1][:3]
        ['t5', 'logits', '128']
    """
    results = load_results()
    full, lengths = CONFIGS["full"], results["eval_lengths"]
    methods = results["methods"]
    header = ["method", "acts on", "+params", "extra ops"] + [f"ppl@{n}" for n in lengths]
    rows = []
    for method, entry in methods.items():
        model = build_model(method, full, results["corpus"]["vocab_size"])
        where, ops = acts_on(model, max(lengths))
        extra = entry["parameters"] - methods["none"]["parameters"]
        cells = ["-" if p is None else f"{p:.2f}" for p in entry["perplexity"]]
        rows.append([method, where, str(extra), f"{ops:,}", *cells])
    return header, rows
# --8<-- [end:extrapolation]


# --8<-- [start:scaling]
def scaling_table() -> Table:
    """How much each scaling rule slows pairs 0, 32 and 63 of a 128-wide head, and its
    attention factor: base 10000, trained length 4096, factor 4, current length 16384
    (for dynamic NTK); Llama 3.1 with its own released settings.

    Examples:
        >>> header, rows = scaling_table()
        >>> header
        ['method', 'pair 0', 'pair 32', 'pair 63', 'attention factor']
        >>> rows[1]
        ['ntk', '1.000', '2.022', '4.000', '1.0000']
    """
    dim, base, trained, factor = 128, 10000.0, 4096, 4.0
    llama3 = {"type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
              "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}
    rules: list[tuple[str, float, dict[str, object]]] = [
        ("linear", base, {"type": "linear", "factor": factor}),
        ("ntk", base, {"type": "ntk", "factor": factor}),
        ("dynamic @16384", base, {"type": "dynamic", "factor": factor,
                                  "original_max_position_embeddings": trained}),
        ("yarn", base, {"type": "yarn", "factor": factor,
                        "original_max_position_embeddings": trained}),
        ("llama3", 500000.0, llama3),
    ]
    rows = []
    for name, b, scaling in rules:
        old = rope_inverse_frequencies(dim, base=b)
        new = rope_inverse_frequencies(dim, base=b, scaling=scaling, seq_len=16384)
        slowdown = (old / new).tolist()
        factor_cell = f"{rope_attention_scaling(scaling):.4f}"
        rows.append([name, *(f"{slowdown[i]:.3f}" for i in (0, 32, 63)), factor_cell])
    return ["method", "pair 0", "pair 32", "pair 63", "attention factor"], rows
# --8<-- [end:scaling]
