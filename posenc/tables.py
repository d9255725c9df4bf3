"""The result tables of the chapters, computed at build time.

A page shows one with the line ``[[table posenc.tables:NAME | caption]]``: the site's hook calls
``NAME()`` and renders the ``(header, rows)`` it returns as an HTML table, and the page keeps the
code (this module's source, included) and an executed example under it, so the table and the
code that makes it cannot drift apart. Every cell is a string, formatted here once.

Inside: the cells of `zoo_table` (one function per column, reading the zoo's configs with the
torch-free config reader) live in ``_zoo_rows.py``; the tables themselves are all here.
"""

from __future__ import annotations

from typing import Any

import torch

from posenc._checks import check_size_int
from posenc._zoo_rows import COLUMNS, zoo_entries, zoo_row
from posenc.experiments import (
    base_context,
    context_extension,
    depth,
    hybrid,
    inference_windows,
    retrieval,
    training_free,
)
from posenc.experiments._results import large_path
from posenc.experiments.length_extrapolation import (
    CONFIGS,
    RESULTS_PATH,
    build_model,
    load_results,
)
from posenc.model import TinyTransformer
from posenc.rope_scaling import rope_attention_scaling, rope_inverse_frequencies

__all__ = ["acts_on", "base_table", "depth_table", "extension_accuracy_table", "extension_perplexity_table",
           "extrapolation_table", "hybrid_table", "large_later_table", "large_table", "perplexity_table",
           "retrieval_table", "scaling_table", "training_free_accuracy_table", "training_free_perplexity_table",
           "windows_table", "zoo_provenance_counts", "zoo_table"]

Table = tuple[list[str], list[list[str]]]


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
    if model.rotary is not None or model.xpos is not None:
        return "q and k", layers * 2 * length * width  # rotate (xPos: and scale) q and k
    if len(model.cope):  # positions computed from the logits, added to them
        return "logits", layers * heads * length * length
    return "-", 0


def _spread(entry: dict[str, Any], metric: str, index: int, *, one_seed: bool = False) -> str:
    """``mean (min–max)`` over seeds of one entry of a results file (just the value for a run of
    one seed), or "-" where not scored."""
    mean = entry[metric][index]
    if mean is None:
        return "-"
    if one_seed:
        return f"{mean:.2f}"
    low, high = entry[f"{metric}_min"][index], entry[f"{metric}_max"][index]
    return f"{mean:.2f} ({low:.2f}–{high:.2f})"


def _scores(entry: dict[str, Any], metric: str) -> list[str]:
    """`_spread` at every length of one entry."""
    return [_spread(entry, metric, i) for i in range(len(entry[metric]))]


def _train_seconds(entry: dict[str, Any]) -> str:
    """The CPU seconds of training one model, mean over the entry's runs."""
    seconds = [run["train_cpu_seconds"] for run in entry["runs"]]
    return f"{sum(seconds) / len(seconds):.0f}"


def extrapolation_table() -> Table:
    """The comparison of every method: where it acts and what it adds (probed and counted), and
    its measured perplexity and retrieval accuracy at L and 8L and training time (committed results;
    mean over seeds, min–max in brackets).

    Examples:
        >>> header, rows = extrapolation_table()
        >>> header[:4]
        ['method', 'acts on', '+params', 'extra ops']
        >>> [row[:3] for row in rows if row[0] == 't5']
        [['t5', 'logits', '128']]
    """
    results, recall = load_results(), retrieval.load_results()
    full, lengths = CONFIGS["full"], results["eval_lengths"]
    methods = results["methods"]
    header = ["method", "acts on", "+params", "extra ops", f"ppl@{lengths[0]}", f"ppl@{lengths[-1]}",
              f"recall@{lengths[0]}", f"recall@{lengths[-1]}", "train s"]
    rows = []
    for method, entry in methods.items():
        model = build_model(method, full, results["corpus"]["vocab_size"])
        where, ops = acts_on(model, max(lengths))
        extra = entry["parameters"] - methods["none"]["parameters"]
        rows.append([method, where, str(extra), f"{ops:,}", _spread(entry, "perplexity", 0),
                     _spread(entry, "perplexity", -1), _spread(recall["methods"][method], "accuracy", 0),
                     _spread(recall["methods"][method], "accuracy", -1), _train_seconds(entry)])
    return header, rows


# --8<-- [start:scaling]
def scaling_table() -> Table:
    """How much each scaling rule slows pairs 0, 32 and 63 of a 128-wide head,
    and its attention factor: base 10000, trained length 4096, factor 4,
    current length 16384 (for dynamic NTK); Llama 3.1 with its own released
    settings.

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
        new = rope_inverse_frequencies(
            dim, base=b, scaling=scaling, seq_len=16384
        )
        slowdown = (old / new).tolist()
        factor_cell = f"{rope_attention_scaling(scaling):.4f}"
        cells = [f"{slowdown[i]:.3f}" for i in (0, 32, 63)]
        rows.append([name, *cells, factor_cell])
    return ["method", "pair 0", "pair 32", "pair 63", "attention factor"], rows
# --8<-- [end:scaling]


# --8<-- [start:study]
def perplexity_table() -> Table:
    """Perplexity of every method at each evaluation length: mean over
    seeds (min–max)."""
    results = load_results()
    header = ["method"] + [f"ppl@{n}" for n in results["eval_lengths"]]
    return header, [[method, *_scores(entry, "perplexity")]
                    for method, entry in results["methods"].items()]


def retrieval_table() -> Table:
    """MQAR accuracy of every method at each length: mean over seeds
    (min–max)."""
    results = retrieval.load_results()
    header = ["method"] + [f"recall@{n}" for n in results["eval_lengths"]]
    return header, [[method, *_scores(entry, "accuracy")]
                    for method, entry in results["methods"].items()]


def _extension_table(task: str) -> Table:
    results = context_extension.load_results()
    entry, lengths = results["tasks"][task], results["eval_lengths"]
    metric = entry["metric"]
    header = (["rule"] + [f"no training @{n}" for n in lengths]
              + [f"fine-tuned @{n}" for n in lengths])
    rows = []
    for rule, scores in entry["no_training"].items():
        tuned = entry["fine_tuned"].get(rule)
        rows.append([rule, *_scores(scores, metric),
                     *(["not fine-tuned"] * len(lengths) if tuned is None
                       else _scores(tuned, metric))])
    return header, rows


def extension_perplexity_table() -> Table:
    """The RoPE language models with each scaling rule: perplexity without
    training (s = l/L) and after the short fine-tune at 2L (s = 2), mean
    over seeds (min–max)."""
    return _extension_table("lm")


def extension_accuracy_table() -> Table:
    """The RoPE MQAR models with each scaling rule: accuracy without
    training and after the short fine-tune, mean over seeds (min–max)."""
    return _extension_table("retrieval")


def windows_table() -> Table:
    """Perplexity at 8L of every method with full attention, a window of L
    keys, and 4 sinks plus a window (keys at their original positions):
    mean over seeds (min–max)."""
    results = inference_windows.load_results()
    labels = list(next(iter(results["methods"].values())))
    return ["method", *labels], [
        [method] + [_spread(entry[label], "perplexity", 0)
                    for label in labels]
        for method, entry in results["methods"].items()]


def large_table() -> Table:
    """The larger configuration (GPU, one seed): perplexity at L and 8L;
    the windows study's perplexity at 8L (on its own 8 windows of text)
    with full attention and with a window of L keys; MQAR accuracy at L
    and 8L."""
    lm = load_results(large_path(RESULTS_PATH))
    recall = retrieval.load_results(large_path(retrieval.RESULTS_PATH))
    windows = inference_windows.load_results(
        large_path(inference_windows.RESULTS_PATH))
    lengths = lm["eval_lengths"]
    full_label, window_label = ("full attention",
                                f"window {lm['config']['train_length']}")
    header = ["method", f"ppl@{lengths[0]}", f"ppl@{lengths[-1]}",
              "8 texts: full", "8 texts: window",
              f"recall@{lengths[0]}", f"recall@{lengths[-1]}"]
    rows = []
    for method, entry in lm["methods"].items():
        window, scores = (windows["methods"].get(method),
                          recall["methods"][method])
        cells: list[tuple[dict[str, Any], str, int] | None] = [
            (entry, "perplexity", 0), (entry, "perplexity", -1)]
        cells += [(window[label], "perplexity", 0)
                  for label in (full_label, window_label)
                  ] if window else [None, None]
        cells += [(scores, "accuracy", 0), (scores, "accuracy", -1)]
        row = [method] + ["-" if c is None else _spread(*c, one_seed=True)
                          for c in cells]
        # the GPU run scored rope-randomized on 0 .. n-1, not on random
        # positions: the same thing at 8L (the only subset), not at L
        if method == "rope-randomized":
            row[1] = row[5] = "n/a"
        rows.append(row)
    return header, rows
# --8<-- [end:study]


# --8<-- [start:zoo]
def zoo_table() -> Table:
    """One checkpoint per family of the zoo (``posenc/zoo``), each cell
    computed by `posenc.configs.read_config` from the zoo's config:
    which layers rotate, the layout, the base, the rotated part of the
    query-key head (of the whole head where the rotary part is a slice of
    its own: latent attention's ``qk_rope_head_dim`` of
    ``qk_nope_head_dim + qk_rope_head_dim``, from
    `posenc.configs.sites.rotary_sites`), the scaling rule, the context
    (trained -> the longest the config declares or its rule reaches), and
    what acts outside the rotation. A model's name is marked † where
    transformers departs from the published model on a key of its config
    (``posenc._zoo_rows.zoo_departures_table`` names the keys).

    Examples:
        >>> header, rows = zoo_table()
        >>> header[:4]
        ['model', 'layers', 'layout', 'base']
        >>> next(row[1:4] for row in rows if "gemma-3-27b" in row[0])
        ['52 sliding (1k), 10 full', 'half', '10k (sliding), 1M (full)']
    """
    rows = [zoo_row(entry) for entry in zoo_entries()
            if entry.get("_table_row")]
    return list(COLUMNS), rows
# --8<-- [end:zoo]


def zoo_provenance_counts() -> dict[str, int]:
    """How many zoo files there are (``files``) and how many of them are a model's published
    ``config.json`` copied whole (``verbatim``), as each file's ``_provenance`` says; the prose of
    the models page quotes these counts.

    Examples:
        >>> counts = zoo_provenance_counts()
        >>> 0 < counts["verbatim"] < counts["files"]
        True
    """
    entries = zoo_entries()
    return {"files": len(entries), "verbatim": sum(entry["_provenance"]["verbatim"] is True for entry in entries)}


def _training_free_table(task: str) -> Table:
    results = training_free.load_results()
    entry, lengths = results["tasks"][task], results["eval_lengths"]
    metric = entry["metric"]
    short = "ppl" if metric == "perplexity" else "recall"
    rows = [[method, *_scores(scores, metric)] for method, scores in entry["methods"].items()]
    # the scaling rules without training on the same models (factor l/L; at L, the model itself)
    extension = context_extension.load_results()["tasks"][task]
    for rule in ("ntk", "yarn"):
        at_l = _spread(extension["at_train_length"], metric, 0)
        rows.append([f"{rule} (scaling rule)", at_l, *_scores(extension["no_training"][rule], metric)])
    return ["method"] + [f"{short}@{n}" for n in lengths], rows


def training_free_perplexity_table() -> Table:
    """The RoPE language models at L to 8L with each training-free method (``rope``: as trained),
    and two scaling rules without training beside them: perplexity, mean over seeds (min–max)."""
    return _training_free_table("lm")


def training_free_accuracy_table() -> Table:
    """The same for the RoPE MQAR models: accuracy, mean over seeds (min–max)."""
    return _training_free_table("retrieval")


def base_table() -> Table:
    """The RoPE models trained with each base: how far B(m) stays non-negative (capped at 8L), MQAR
    accuracy and perplexity at L and 8L, mean over seeds (min–max)."""
    results = base_context.load_results()
    lengths = results["eval_lengths"]
    header = ["base", "B ≥ 0 up to", f"recall@{lengths[0]}", f"recall@{lengths[-1]}", f"ppl@{lengths[0]}",
              f"ppl@{lengths[-1]}"]
    rows = [[f"{entry['base']:,.0f}", f"{entry['context_length']:d}", _spread(entry, "accuracy", 0),
             _spread(entry, "accuracy", -1), _spread(entry, "perplexity", 0), _spread(entry, "perplexity", -1)]
            for entry in results["bases"].values()]
    return header, rows


def depth_table() -> Table:
    """MQAR accuracy with the key-value pairs at the start, middle and end, at L and 8L, for every
    row of the depth study, and its perplexity on text at 8L (same models' language-modelling
    twins: the language-modelling, training-free and hybrid studies): mean over seeds (min–max)."""
    results = depth.load_results()
    lengths = results["eval_lengths"]
    text = {m: e for m, e in load_results()["methods"].items()}
    text |= {f"rope + {m}": e for m, e in training_free.load_results()["tasks"]["lm"]["methods"].items()}
    text |= {f"{m} (4 layers)": e for m, e in hybrid.load_results("lm")["methods"].items()}
    header = ["method"] + [f"{place} @{n}" for n in (lengths[0], lengths[-1]) for place in results["depths"]]
    header.append(f"ppl@{lengths[-1]}")
    rows = []
    for row, entry in results["rows"].items():
        cells = [_spread(entry["accuracy"][place], "accuracy", i) for i in (0, -1) for place in results["depths"]]
        rows.append([row, *cells, _spread(text[row], "perplexity", -1) if row in text else "-"])
    return header, rows


def hybrid_table() -> Table:
    """Today's hybrid designs and RoPE, NoPE and ALiBi, four layers each: perplexity and MQAR
    accuracy at L and 8L, mean over seeds (min–max), and the CPU seconds of one model's training."""
    text, recall = hybrid.load_results("lm"), hybrid.load_results("retrieval")
    lengths = text["eval_lengths"]
    header = ["method", f"ppl@{lengths[0]}", f"ppl@{lengths[-1]}", f"recall@{lengths[0]}", f"recall@{lengths[-1]}",
              "train s"]
    rows = []
    for method, entry in text["methods"].items():
        rows.append([method, _spread(entry, "perplexity", 0), _spread(entry, "perplexity", -1),
                     _spread(recall["methods"][method], "accuracy", 0),
                     _spread(recall["methods"][method], "accuracy", -1), _train_seconds(entry)])
    return header, rows


def large_later_table() -> Table:
    """The later studies' larger run (GPU, one seed, L = 256): perplexity at L and 8L of the
    training-free methods on the RoPE model and of the four-layer designs, and their MQAR accuracy
    at L (which shows whether the task was learned)."""
    free = training_free.load_results(large_path(training_free.RESULTS_PATH))["tasks"]
    designs = [hybrid.load_results(task, large_path(hybrid.RESULTS_PATHS[task])) for task in ("lm", "retrieval")]
    n = designs[0]["eval_lengths"]
    header = ["model", f"ppl@{n[0]}", f"ppl@{n[-1]}", f"recall@{n[0]}"]
    rows = []
    for method in free["lm"]["methods"]:
        label = "rope (3 layers)" if method == "rope" else f"rope + {method}"
        rows.append([label] + [_spread(free["lm"]["methods"][method], "perplexity", i, one_seed=True) for i in (0, -1)]
                    + [_spread(free["retrieval"]["methods"][method], "accuracy", 0, one_seed=True)])
    for method in designs[0]["methods"]:
        rows.append([f"{method} (4 layers)"]
                    + [_spread(designs[0]["methods"][method], "perplexity", i, one_seed=True) for i in (0, -1)]
                    + [_spread(designs[1]["methods"][method], "accuracy", 0, one_seed=True)])
    return header, rows
