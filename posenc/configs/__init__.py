"""Read a model's RoPE settings from its ``config.json``, as Hugging Face ``transformers`` reads them.

The config reader, on its own: it imports no torch (nor numpy), so ``posenc-inspect``, the site's
build and a light install read configs in a fraction of the time torch takes to load.
`read_config` says what each kind of layer does with positions (`ConfigRope`, one `LayerRope`
per layer type); `from_config` gives one layer type's settings as the keyword arguments of
`posenc.rope.RotaryEmbedding`; `query_temperature` evaluates a layer's query temperature.

Inside: ``_reader.py`` (the public functions and records), ``_params.py`` (the rope parameters
of each layer type, as the config classes complete them), ``_layer.py`` (one kind of layer:
widths, scaling, temperature, layout), ``_windows.py`` (attention spans), ``_divergences.py``
(where transformers departs from a published model), ``_table.py`` and ``model_types.json`` (what
differs between model types, derived from transformers' code).

Examples:
    >>> from posenc.configs import read_config
    >>> read_config({"model_type": "mistral", "hidden_size": 4096, "num_attention_heads": 32,
    ...              "sliding_window": 4096}).layers["full_attention"].window
    4096
"""

from posenc.configs._reader import ROPE_TYPES, ConfigRope, LayerRope, from_config, query_temperature, read_config

__all__ = ["ROPE_TYPES", "ConfigRope", "LayerRope", "from_config", "query_temperature", "read_config"]
