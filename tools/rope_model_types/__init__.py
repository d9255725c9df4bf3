"""The generator of ``posenc/configs/model_types.json``: what each model type's RoPE reading needs,
derived from the pinned transformers' own code (``derive.py``, with its probes in ``modeling.py``
(the layout, the rotation calls), ``classes.py`` (where keys land, layer patterns), ``probes.py``,
``dependence.py``, ``partial.py`` (a rotated fraction), ``rotation.py`` and ``windows.py``).

``python -m tools.rope_model_types`` rewrites the table (review the diff); ``--check`` only compares.
It needs torch and transformers (the test dependencies), not the reader's runtime. The tests run the
comparison (``tests/test_rope_model_types.py``, in a process of its own under ``make test``) and
check every entry against the documented schema (``tests/test_config_schema.py``).
"""
