# Every target installs what it needs first, so a fresh clone needs only Python 3.11+, make and npm.
SHELL := /bin/bash
export NO_MKDOCS_2_WARNING := 1
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PY_STAMP := $(VENV)/.installed
JS_STAMP := node_modules/.installed

.PHONY: install serve build test test-fast typecheck bench experiments experiments-lm experiments-retrieval \
	experiments-extension experiments-windows experiments-vit experiments-vit-images experiments-training-free experiments-base \
	experiments-depth experiments-hybrid-lm experiments-hybrid-retrieval experiments-inside experiments-large experiments-large-later experiments-large-inside \
	check-site clean

install: $(PY_STAMP) $(JS_STAMP)

# tools/engines-nodeps.txt: two engines the tests check posenc against, installed without the
# dependencies they declare but their RoPE code does not import (the file says which and why).
$(PY_STAMP): requirements.lock pyproject.toml tools/engines-nodeps.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.lock
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps -r tools/engines-nodeps.txt
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
# the notebooks, the type check, then a strict site build. Two paths run elsewhere: tests/site in
# `make check-site` (it needs the built site and Chromium), and the model-type re-derivation
# (tests/test_rope_model_types.py) in a pytest process of its own: sharing one with the rest of
# the suite it once crashed (SystemError: AST constructor recursion depth mismatch).
PYTEST := $(VENV)/bin/pytest -q
REDERIVATION := tests/test_rope_model_types.py
test: install
	$(PYTEST) --ignore=tests/site --ignore=$(REDERIVATION)
	$(PYTEST) $(REDERIVATION)
	$(VENV)/bin/mypy
	$(VENV)/bin/mkdocs build --strict --site-dir site
	POSENC_SITE_DIR=site $(PYTEST) tests/test_search.py tests/test_model_api_page.py

# The quick loop (about two minutes): unit and property tests, docs and docstring examples; no
# site builds, studies, figure renders, notebooks or re-derivation (the `slow` ones: conftest.py).
test-fast: install
	$(PYTEST) --ignore=tests/site --ignore=$(REDERIVATION) -m "not slow"

bench: install
	@set -e; for script in benchmarks/bench_*.py; do echo "== $$script"; $(PY) $$script; done

# Each study rewrites its committed results file; `make experiments` runs them all (CPU, 2 processes).
# The extension and windows studies reuse the models the lm and retrieval studies trained (kept in
# .cache/experiments); run alone, they train the ones they need first.
experiments: experiments-lm experiments-retrieval experiments-extension experiments-windows experiments-vit \
	experiments-vit-images \
	experiments-training-free experiments-base experiments-hybrid-lm experiments-hybrid-retrieval experiments-depth \
	experiments-inside

experiments-lm: install
	$(PY) -m posenc.experiments length-extrapolation --config full

experiments-retrieval: install
	$(PY) -m posenc.experiments retrieval --config full

experiments-extension: install
	$(PY) -m posenc.experiments extension --config full

experiments-windows: install
	$(PY) -m posenc.experiments windows --config full

experiments-vit: install
	$(PY) -m posenc.experiments vit-resolution --config full

# Images: axial RoPE, RoPE-Mixed, DINOv3's coordinates, and at test time rescaled ids, NTK, RIFLEx.
experiments-vit-images: install
	$(PY) -m posenc.experiments vit-images --config full

# Training-free extension (ReRoPE, Self-Extend, Dual Chunk Attention, STRING) on the RoPE models of
# lm and retrieval; the base against the context (trains RoPE models with other bases); MQAR by
# the depth of the facts for every retrieval model (run experiments-retrieval and
# experiments-hybrid-retrieval first to reuse them). Each prints the CPU time it took.
experiments-training-free: install
	$(PY) -m posenc.experiments training-free --config full

experiments-base: install
	$(PY) -m posenc.experiments rope-base --config full

experiments-depth: install
	$(PY) -m posenc.experiments depth --config full

# Today's hybrid designs (RNoPE-SWA, iRoPE, RoPE with sinks) next to RoPE, NoPE and ALiBi, all four
# layers deep: one target per task, each training 18 models.
experiments-hybrid-lm: install
	$(PY) -m posenc.experiments hybrid-lm --config full

experiments-hybrid-retrieval: install
	$(PY) -m posenc.experiments hybrid-retrieval --config full

# Position inside attention (FoX, FoX with RoPE, stick-breaking, PaTH, PoPE) in the hybrid study's
# protocol, four layers deep, beside its committed rows; the MQAR models also by depth. 30 models.
experiments-inside: install
	$(PY) -m posenc.experiments inside-lm --config full
	$(PY) -m posenc.experiments inside-retrieval --config full

# The larger configuration, for a machine with a GPU: results go to posenc/experiments/results/large/.
experiments-large: install
	set -e; for study in length-extrapolation retrieval extension windows; do \
	  $(PY) -m posenc.experiments $$study --config large --device cuda --workers 8; done

# The later studies' larger run (GPU; 3000 MQAR steps, the methods those studies need, one seed).
experiments-large-later: install
	set -e; for study in training-free hybrid-lm hybrid-retrieval rope-base depth; do \
	  $(PY) -m posenc.experiments $$study --config large --device cuda --workers 8; done

# Position inside attention in the larger configuration (GPU; one seed). PaTH is left out: its direct
# form sweeps the keys one at a time and did not fit the GPU time of its round.
experiments-large-inside: install
	set -e; for study in inside-lm inside-retrieval; do \
	  $(PY) -m posenc.experiments $$study --config large --device cuda --workers 4 \
	    --methods fox fox_rope stick_breaking pope; done

# The reading checks are first shown to fail on planted defects (tests/site/test_reader_checks.py),
# then run on every page of the built site.
check-site: build
	bash tools/install_chromium.sh
	$(VENV)/bin/pytest -q -p no:cacheprovider tests/site
	$(PY) -m tests.site.check_site --site-dir site --screenshots site-screenshots
	$(PY) -m tests.site.check_explorer --site-dir site --screenshots site-screenshots

clean:
	rm -rf site site-screenshots .cache .pytest_cache .mypy_cache .hypothesis
