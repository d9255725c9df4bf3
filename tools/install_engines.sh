#!/usr/bin/env bash
# Install the engines that tests/engines checks posenc against, into the project's venv.
# requirements.lock pins most of them (make install installs those); this adds the two that must
# come without their dependencies (tools/engines-nodeps.txt says why). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
"$PY" -m pip install --quiet --disable-pip-version-check -r requirements.lock
"$PY" -m pip install --quiet --disable-pip-version-check --no-deps -r tools/engines-nodeps.txt
