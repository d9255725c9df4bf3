r"""The tables `posenc.configs.vision.read_vision_config` reads from, for the browser's port of it.

Internal: hooks/rope_data.py ships `vision_data` into the site (docs/javascripts/explorer/rope_vision.js
reads it), and tests/test_explorer_vision_port.py checks the port against the Python on it.
"""

from __future__ import annotations

import json

from posenc.configs._vision_models import (
    _DEFAULTS,
    _FIXED_CHILDREN,
    _PARENTS,
    VISION_MODEL_TYPES,
    _family,
)
from posenc.configs._vision_refused import REFUSED, refusal
from posenc.configs._vision_towers import (ALIASES, BY_INPUT, DINO_LINES, IDS_ROW_MAJOR, INPUT_KINDS, OVERRIDES,
                                           SUB_DEFAULTS, TOWERS)


def vision_data() -> str:
    """The class defaults, the parents and the keys down to their encoder, the fixed sub-config
    classes, each type's family (which reader reads it), the towers whose ids are row-major, where a
    tower departs from Qwen2.5-VL's reading, key aliases, and the merge size of each kind of input where
    the reading needs one, and why the rotating types not read are refused, as JSON text (which keeps ``100.0`` a
    float where the defaults hold one)."""
    families = {t: _family(t) for t in _DEFAULTS}
    return json.dumps({"model_types": list(VISION_MODEL_TYPES), "defaults": _DEFAULTS, "families": families,
                       "parents": {t: [list(keys), child] for t, (keys, child) in _PARENTS.items()},
                       "fixed_children": sorted(_FIXED_CHILDREN), "ids_row_major": IDS_ROW_MAJOR,
                       "overrides": OVERRIDES, "aliases": ALIASES, "towers": sorted(TOWERS),
                       "by_input": BY_INPUT, "input_kinds": list(INPUT_KINDS), "dino_lines": DINO_LINES,
                       "refused": {t: refusal(t) for t in REFUSED}, "sub_defaults": SUB_DEFAULTS},
                      separators=(",", ":"))
