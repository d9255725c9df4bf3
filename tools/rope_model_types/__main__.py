"""``python -m tools.rope_model_types [--check]``: rewrite (or compare) the model-type table."""

import sys

from tools.rope_model_types.derive import main

sys.exit(main())
