"""How a zoo file (``posenc/zoo/*.json``) becomes a row of the models page's
table: one function per cell, each reading what `posenc.configs.read_config`
returns for the file's config.

Private: the public face is `posenc.tables` (``zoo_table``,
``zoo_provenance_counts``); the page shows `zoo_departures_table`, the list
under the table, from here. Split from it because this part reads the zoo's
configs with the torch-free config reader, while the rest of that module
reads the studies' results and builds their models.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from posenc.configs import ConfigRope, LayerRope, read_config
from posenc.configs._divergences import departed_keys
from posenc.configs.sites import RotarySite, rotary_sites

# --8<-- [start:rows]
COLUMNS = ["model", "layers", "layout", "base", "rotated", "scaling",
           "context", "outside RoPE"]
# after a model's name: transformers departs from the published model on a
# key of this config (the keys: `zoo_departures_table`)
DEPARTS = "†"


def zoo_entries() -> list[dict[str, Any]]:
    """Every zoo file, parsed, in the order of the file names."""
    folder = Path(__file__).resolve().parent / "zoo"
    return [json.loads(path.read_text())
            for path in sorted(folder.glob("*.json"))]


def zoo_config(entry: dict[str, Any]) -> dict[str, Any]:
    """A zoo file's config, as the table reads it."""
    config = {k: v for k, v in entry.items() if not k.startswith("_")}
    # a model type transformers lacks, run with the code its card names
    if "_read_as" in entry:
        config["model_type"] = entry["_read_as"]
    return config


def _name(entry: dict[str, Any], mark: str = "") -> str:
    """The model cell: family and name, linked to the file's source."""
    return f"[{entry['_family']}: {entry['_name']}{mark}]({entry['_source']})"


def zoo_row(entry: dict[str, Any]) -> list[str]:
    """The cells of one zoo file under `COLUMNS`."""
    config = zoo_config(entry)
    try:
        rope = read_config(config)
    except ValueError:
        # the layout of a model type transformers lacks: posenc does
        # not guess it
        return [_name(entry), "-", "not in transformers", "-", "-", "-",
                "-", "-"]
    name = _name(entry, f" {DEPARTS}" if departed_keys(rope.notes) else "")
    sites = rotary_sites(config)
    return [
        name, _layers_cell(rope),
        _per_kind(rope, lambda layer: layer.layout),
        _per_kind(rope, lambda layer: _short_number(layer.base)),
        _per_kind(rope, lambda layer:
                  f"{layer.rotary_dim}/{_head_width(layer, sites)}"),
        _per_kind(rope, _scaling_cell), _context_cell(rope),
        _outside_cell(rope)]


def _short_number(value: float) -> str:
    """A base in decimal units: 10000 -> '10k', 1000000 -> '1M'."""
    for unit, suffix in ((1e6, "M"), (1e3, "k")):
        if value >= unit and value % unit == 0:
            return f"{value / unit:g}{suffix}"
    return f"{value:g}"


def _short_length(value: int) -> str:
    """A length in binary units, as model cards say them: 131072 -> '128k',
    10485760 -> '10M'; written out where it is not a whole number of them
    (1000000 -> '1,000,000')."""
    for unit, suffix in ((2**20, "M"), (2**10, "k")):
        if value >= unit and value % unit == 0:
            return f"{value // unit}{suffix}"
    return f"{value:,}"


def _per_kind(rope: ConfigRope, cell: Callable[[Any], Any]) -> str:
    """One value if every rotating kind of layer agrees, else
    'value (kind)' for each. ``cell`` sees rotating layers only, whose
    dim, base and layout read_config always sets (hence ``Any``)."""
    rotating = {name: layer for name, layer in rope.layers.items()
                if layer.rotates}
    values = {name: cell(layer) for name, layer in rotating.items()}
    if len(set(values.values())) == 1:
        return next(iter(values.values()))
    return ", ".join(f"{value} ({name.split('_')[0]})"
                     for name, value in values.items())


def _layers_cell(rope: ConfigRope) -> str:
    parts = []
    longest = _longest(rope)
    for name, layer in rope.layers.items():
        kind = name.removesuffix(":nope").replace("_attention", "")
        # Mistral: one window for every layer; a window no shorter than
        # the context (Phi-3.5's 262,144 for 131,072) never cuts
        cuts = layer.window and (longest is None or layer.window < longest)
        kind = "sliding" if kind == "full" and cuts else kind
        what = ("" if layer.rotates
                else " attention" if kind == "linear" else " NoPE")
        what += _span(layer) if kind in ("sliding", "chunked") else ""
        # a file without num_hidden_layers (Qwen3-VL's) gives no count
        parts.append(f"{len(layer.layers)} {kind}{what}" if layer.layers
                     else f"{kind}{what} (no layer count in the file)")
    return ", ".join(parts)


def _span(layer: LayerRope) -> str:
    """A window's width, as the Layers cell gives it: ' (4k)', ' (64 each
    side)' for an encoder's window on both sides of the query."""
    if not layer.window:
        return ""
    sides = {"both": " each side", "centred": " centred"}.get(
        layer.window_sides, "")
    return f" ({_short_length(layer.window)}{sides})"


def _head_width(layer: Any,
                sites: dict[str, tuple[RotarySite, ...]]) -> int:
    """A rotating layer's query-key head width: the attention site's, where
    the rotary part is a slice of a wider head."""
    widths = [site.head_dim for site in sites.get(layer.layer_type, ())
              if site.name == "attention"]
    return max([layer.dim, *widths])


def _scaling_cell(layer: LayerRope) -> str:
    scaling = layer.scaling
    if scaling is None:
        return "-"
    factor = scaling.get("factor")
    if factor is None and scaling["type"] == "longrope":
        factor = (scaling["max_position_embeddings"]
                  / scaling["original_max_position_embeddings"])
    return scaling["type"] + (f" ×{factor:g}" if factor else "")


def _longest(rope: ConfigRope) -> int | None:
    """The longest context the config declares or its rule reaches."""
    original, longest = (rope.original_max_position_embeddings,
                         rope.max_position_embeddings)
    factors = [layer.scaling.get("factor", 1.0)
               for layer in rope.layers.values() if layer.scaling]
    # the length the rule stretches to, when the config declares less
    if original and factors:
        longest = max(longest or 0, int(original * max(factors)))
    return longest


def _context_cell(rope: ConfigRope) -> str:
    """The trained context and the longest one the config reaches."""
    original, longest = rope.original_max_position_embeddings, _longest(rope)
    context = "-" if longest is None else _short_length(longest)
    if original and longest and original != longest:
        context = f"{_short_length(original)} → {context}"
    return context


def _outside_cell(rope: ConfigRope) -> str:
    found = []
    for layer in rope.layers.values():
        t = layer.temperature
        if t and t["rule"] == "llama_4_scaling_beta":
            found.append(f"q × (1 + {t['beta']:g} ln(1 + "
                         f"⌊p/{_short_length(t['length'])}⌋))")
        elif t:
            found.append(f"NoPE q × (1 + {t['attn_scale']:g} ln(1 + "
                         f"⌊(p+1)/{_short_length(t['floor_scale'])}⌋))")
        if layer.softmax_scale != 1.0:
            found.append(f"softmax scale ×{layer.softmax_scale:.2f}")
    if rope.sinks:
        found.append("sink logit per head")
    return "; ".join(dict.fromkeys(found)) or "-"


def zoo_departures_table() -> tuple[list[str], list[list[str]]]:
    """The rows of `posenc.tables.zoo_table` marked † (transformers departs
    from the published model), one row per key of the config on which it
    does, as `posenc.configs.read_config`'s notes name them.

    Examples:
        >>> header, rows = zoo_departures_table()
        >>> header
        ['model', 'key']
        >>> next(row[1] for row in rows if "14b-instruct-1m" in row[0])
        'dual_chunk_attention_config'
    """
    rows = []
    for entry in zoo_entries():
        if not entry.get("_table_row"):
            continue
        config = zoo_config(entry)
        try:
            keys = departed_keys(read_config(config).notes)
        except ValueError:  # not in transformers: the table reads nothing
            continue
        rows += [[_name(entry), key] for key in keys]
    return ["model", "key"], rows
# --8<-- [end:rows]
