# Every target installs what it needs first, so a fresh clone needs only Python 3.11+, make and npm.
SHELL := /bin/bash
export NO_MKDOCS_2_WARNING := 1
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PY_STAMP := $(VENV)/.installed
JS_STAMP := node_modules/.installed

.PHONY: install serve build test test-fast typecheck bench experiments experiments-lm experiments-windows experiments-vit check-site clean

install: $(PY_STAMP) $(JS_STAMP)

$(PY_STAMP): requirements.lock pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.lock
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps -e .
	$(PY) -m ipykernel install --sys-prefix --name python3 > /dev/null
	touch $@

$(JS_STAMP): package.json package-lock.json
	npm ci --silent --no-audit --no-fund
	touch $@

serve: install
	$(VENV)/bin/mkdocs serve --dev-addr 127.0.0.1:8000 --livereload

build: install
	$(VENV)/bin/mkdocs build --strict --site-dir site

typecheck: install
	$(VENV)/bin/mypy

# The whole suite: unit and property tests, every docs example and docstring example (Sybil),
# the notebooks, the type check, then a strict site build.
test: install
	$(VENV)/bin/pytest -q
	$(VENV)/bin/mypy
	$(VENV)/bin/mkdocs build --strict --site-dir site

bench: install
	@set -e; for script in benchmarks/bench_*.py; do echo "== $$script"; $(PY) $$script; done

# Each experiment rewrites its committed results file; `make experiments` runs all three.
experiments: experiments-lm experiments-windows experiments-vit

experiments-lm: install
	$(PY) -m posenc.experiments length-extrapolation --config full --output posenc/experiments/results/length_extrapolation.json

experiments-windows: install
	$(PY) -m posenc.experiments windows --config full --output posenc/experiments/results/inference_windows.json

experiments-vit: install
	$(PY) -m posenc.experiments vit-resolution --config full --output posenc/experiments/results/vit_resolution.json

check-site: build
	bash tools/install_chromium.sh
	$(PY) -m tests.site.check_site --site-dir site --screenshots site-screenshots
	$(PY) -m tests.site.check_explorer --site-dir site --screenshots site-screenshots

clean:
	rm -rf site site-screenshots .cache .pytest_cache .mypy_cache .hypothesis
