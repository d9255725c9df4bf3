"""Read a model's RoPE settings from its ``config.json``, as Hugging Face ``transformers`` reads them.

The config reader, on its own: it imports no torch (nor numpy), so ``posenc-inspect``, the site's
build and a light install read configs in a fraction of the time torch takes to load.
`read_config` says what each kind of layer does with positions (`ConfigRope`, one `LayerRope`
per layer type); `from_config` gives one layer type's settings as the keyword arguments of
`posenc.rope.RotaryEmbedding`; `query_temperature` evaluates a layer's query temperature; `reach`
gives how far a layer's queries see before and after them from its window. Two tables the reader
reads are public too: `DIVERGENCES`, the register of places where transformers departs from a
published model (one `Divergence` each, with its evidence), and `TWO_SIDED`, the model types whose windows reach both
ways, with the line of the modeling file that builds each mask.

Inside: ``_reader.py`` (the public functions and records), ``_params.py`` (the rope parameters
of each layer type, as the config classes complete them), ``_layer.py`` (one kind of layer:
widths, scaling, temperature, layout), ``_windows.py`` (attention spans) with ``_two_way.py`` (which
layers see the tokens after the query: `TWO_SIDED`), ``_divergences.py`` (where transformers departs
from a published model: `DIVERGENCES`), ``_table.py`` and ``model_types.json`` (what differs between
model types, derived from transformers' code).

Examples:
    >>> from posenc.configs import reach, read_config
    >>> config = {"model_type": "mistral", "hidden_size": 4096,
    ...           "num_attention_heads": 32, "sliding_window": 4096}
    >>> read_config(config).layers["full_attention"].window
    4096
    >>> reach(config["sliding_window"], "before")  # tokens before and after
    (4095, 0)
"""

from posenc.configs._divergences import DIVERGENCES, Divergence
from posenc.configs._reader import ROPE_TYPES, ConfigRope, LayerRope, from_config, query_temperature, read_config
from posenc.configs._two_way import TWO_SIDED
from posenc.configs._windows import reach

__all__ = ["DIVERGENCES", "ROPE_TYPES", "TWO_SIDED", "ConfigRope", "Divergence", "LayerRope", "from_config",
           "query_temperature", "reach", "read_config"]
