# One entry point. Every target sets up .venv by itself (pinned requirements,
# then the package), so that `make book` and `make test` work on a fresh clone.
PYTHON ?= python3
# `make test OPTIONAL=1` runs the package tests, and the notebooks that name an accelerator,
# in a second environment that also holds the optional accelerators
# (requirements-optional.txt: numba, dask); plain `make test` runs everything without them,
# the way the book is built.
OPTIONAL ?= 0
ifeq ($(OPTIONAL),1)
VENV := .venv-optional
EXTRA_REQUIREMENTS := requirements-optional.txt
else
VENV := .venv
EXTRA_REQUIREMENTS :=
endif
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

# Printing sets of strings or SymPy symbols is only reproducible with a fixed hash seed.
export PYTHONHASHSEED := 0

# A kernel that has not started within 120 s is started again (chapters/conftest.py).
NBVAL := --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg \
	--nbval-kernel-startup-timeout 120
NOTEBOOKS := $(sort $(wildcard chapters/*.ipynb))
# What the optional accelerators change: the package suite runs whole in both environments
# (its tests compare the compiled engine and the executors with numpy, value by value), and
# of the notebooks only those whose code names an accelerator (engine=, executor=, numba,
# dask) run again in .venv-optional; every other notebook runs once, without them, as the
# book is built.
ENGINE_NOTEBOOKS := $(shell grep -l -E 'engine=|executor=|numba|dask' $(NOTEBOOKS))
ifeq ($(OPTIONAL),1)
TEST_NOTEBOOKS := $(ENGINE_NOTEBOOKS)
else
TEST_NOTEBOOKS := $(NOTEBOOKS)
endif

.PHONY: help setup book test test-package test-notebooks test-numerics test-browser bench bench-training cdopt digits logz principles principles-nudged potts recipe momentum core-recipe shortrun mixing stacks real-implementations execute checks-index clean

help:
	@echo "make book     set up .venv and build the HTML book into _build/html"
	@echo "make test     set up .venv and run every test (package, doctests, notebooks)"
	@echo "make test OPTIONAL=1  the package tests again in .venv-optional, with numba and dask"
	@echo "               installed, and the notebooks that name them"
	@echo "make test-numerics  the notebook tests again under other numeric environments (another"
	@echo "               OpenBLAS kernel, NumPy with fewer SIMD features); NUMERIC_ENVS=generic,haswell"
	@echo "               picks some (tools/numeric_environments.py --list names them)"
	@echo "make test-browser  build the book and open every page in headless Chromium"
	@echo "make bench    run the benchmarks; writes benchmarks/results/results.json"
	@echo "make bench-training  only the training grid against scikit-learn (about 80 CPU s)"
	@echo "make cdopt    recompute the bounds grid and further runs of what_cd_optimises (about 5 s)"
	@echo "make digits   retrain the full-size digits chapter's models and AIS (about 20 min)"
	@echo "make logz     compare log Z estimators on the full-size digit models (10-20 min)"
	@echo "make principles  retrain the comparison of training principles (about half an hour)"
	@echo "make principles-nudged  retrain its digits runs in 5 replicas, each with one starting"
	@echo "               weight nudged by 1e-12 or -1e-12 (about 10 min), after make principles"
	@echo "make potts    retrain the longer Potts-dReLU runs of chapter other_unit_types (about 5 min)"
	@echo "make recipe   rerun the settings, batch and sweep runs of the measured recipe (about 1 min)"
	@echo "make momentum momentum against plain steps, each at its best rate (tools/experiments.py; about 17 min)"
	@echo "make core-recipe  the core recipe's CD-1/CD-10/PCD-1 rise and fall, estimators, chains, decay and sign dip"
	@echo "               (tools/experiments.py; about an hour of one core)"
	@echo "make shortrun retrain the runs of the short-run chapter (about 15 minutes)"
	@echo "make mixing   the exact-ascent control run and the constant-rate PCD runs of the"
	@echo "               tempering chapter (30 s)"
	@echo "make stacks   greedy training, a third layer and a DBM checked exactly, for stacks_of_rbms (about 75 min)"
	@echo "make real-implementations  check RBM libraries written by others (own venv, .venv-real;"
	@echo "               about 2 CPU min, plus 9 for pydbm's one-time build)"
	@echo "make execute  re-execute every notebook in place, deterministically (and the index of checks)"
	@echo "make clean    remove _build/"

setup: $(STAMP)

$(STAMP): requirements.txt pyproject.toml $(EXTRA_REQUIREMENTS)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt $(addprefix -r ,$(EXTRA_REQUIREMENTS))
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $(STAMP)

# The HTML is rebuilt whole: an incremental build keeps pages that no longer exist and
# stale copies of changed static files (about 15 s more).
# The book offers the package's wheel, built from the same tree, at _static/wheels/: the
# landing page's install line installs it (_ext/book_fixes.py). It is built from a copy of
# what it packages, so that no build/ or egg-info is left in the tree.
WHEELS := _build/html/_static/wheels
book: $(STAMP)
	rm -rf _build/html _build/wheel-source
	$(VENV)/bin/jupyter-book build . -W -n --keep-going
	mkdir -p _build/wheel-source
	cp -R pyproject.toml README.md rbm _build/wheel-source/
	$(PY) -m pip wheel --quiet --disable-pip-version-check --no-deps --wheel-dir $(WHEELS) _build/wheel-source
	rm -rf _build/wheel-source

test: test-package test-notebooks

# --durations lists the slowest tests; chapters/conftest.py fails a notebook whose kernel
# uses more CPU time than its budget and lists every notebook's time.
test-package: $(STAMP)
	$(PY) -m pytest -n 2 --durations=15

test-notebooks: $(STAMP)
	$(if $(TEST_NOTEBOOKS),$(PY) -m pytest $(NBVAL) -n 2 --dist loadfile -o addopts="--strict-markers -ra" $(TEST_NOTEBOOKS),@echo "no notebook names an optional accelerator")

# The committed outputs hold only the digits every processor reproduces: the notebooks
# run again under each numeric environment of tools/numeric_environments.py that differs
# from this machine's own (OpenBLAS's Sandybridge kernel with NumPy at its baseline; Haswell
# or SkylakeX where the processor has them), and must give the same outputs.
# Loops without AVX2 run slower, so each notebook's CPU budget (which `make test` enforces)
# is only a guard against a runaway kernel here.
NUMERIC_ENVS ?=
NUMERIC_BUDGET ?= 300
test-numerics: $(STAMP)
	$(PY) tools/numeric_environments.py $(if $(NUMERIC_ENVS),--only $(NUMERIC_ENVS)) -- \
		$(PY) -m pytest $(NBVAL) -n 2 --dist loadfile -o addopts="--strict-markers -ra" \
		--notebook-budget $(NUMERIC_BUDGET) $(NOTEBOOKS)

BROWSER_STAMP := $(VENV)/.installed-browser

$(BROWSER_STAMP): $(STAMP) tests/browser/requirements.txt
	$(PY) -m pip install --quiet --disable-pip-version-check -r tests/browser/requirements.txt
	touch $(BROWSER_STAMP)

# Needs Debian's chromium at /usr/bin/chromium (.ci/run installs it); never `playwright install`.
test-browser: book $(BROWSER_STAMP)
	$(PY) -m pytest -o addopts="--strict-markers -ra" tests/browser

BENCH_STAMP := $(VENV)/.installed-bench

$(BENCH_STAMP): $(STAMP) benchmarks/requirements.txt
	$(PY) -m pip install --quiet --disable-pip-version-check -r benchmarks/requirements.txt
	touch $(BENCH_STAMP)

# The benchmarks time the optional accelerators too, so they run in .venv-optional: the
# book's .venv stays without them.
ifeq ($(OPTIONAL),1)
bench: $(BENCH_STAMP)
	$(PY) -m benchmarks.run_all
else
bench:
	$(MAKE) bench OPTIONAL=1
endif

# Only the training grid (benchmarks/bench_training.py: CD-1 and PCD-1 against
# scikit-learn's BernoulliRBM.fit); replaces its entry in benchmarks/results/results.json.
bench-training: $(STAMP)
	$(PY) -m benchmarks.run_all --training

# The caches of the heavy chapters: each target runs one script of tools/, which writes
# chapters/data/<file>; re-execute the chapter after (`make execute`). Times are for one core.
#   cdopt       what_cd_optimises.py   what_cd_optimises.json      what_cd_optimises (about 5 s)
#   digits      train_digits.py        digits_full_size.*          digits_full_size (about 20 min)
#   logz        logz_estimators.py     logz_estimators.json        estimating_log_z, from the
#                                                                  models `make digits` wrote
#   principles  train_principles.py    principles_comparison.json, around_the_partition_function
#                                      principles_consistency.json, principles_bas_seeds.json
#                                      (about three quarters of an hour;
#               `tools/train_principles.py DIR digits/1-2 bars/1-2 ...` splits it over
#               processes, then `tools/train_principles.py DIR merge`)
#   principles-nudged  train_principles.py nudged  principles_nudged.json  around_the_partition_
#               function: the digits runs of principles_comparison.json with one starting
#               weight nudged by +-1e-12, in 5 replicas (about 10 min; rerun after `make
#               principles`; `... nudged-add` runs only the replicas missing from the file)
#   potts       train_potts.py         potts_drelu.json            other_unit_types (about 5 min)
#   recipe      train_recipe.py        practical_recipe.json       practical_recipe_measured (1 min)
#   momentum    run_momentum.py        momentum.json               the momentum recipe line of
#                                                                  quickstart, training (17 min)
#   core-recipe run_core_recipe.py     core_recipe.json            the estimator, rate, PCD, decay and
#                                                                  sign lines of quickstart,
#                                                                  training, is_my_training_working
#                                                                  (about an hour)
#   shortrun    train_short_run.py     short_run.json              short_run_chains (about 15 min)
#   mixing      mixing_control.py      mixing_control.json         mixing_and_tempering (30 s)
#   stacks      run_stacks.py          stacks*.json (18 parts)     stacks_of_rbms (about 75 min)
TOOL_cdopt := what_cd_optimises
TOOL_digits := train_digits
TOOL_logz := logz_estimators
TOOL_principles := train_principles
TOOL_potts := train_potts
TOOL_recipe := train_recipe
TOOL_momentum := run_momentum
TOOL_core-recipe := run_core_recipe
TOOL_shortrun := train_short_run
TOOL_mixing := mixing_control
TOOL_stacks := run_stacks
cdopt digits logz principles potts recipe momentum core-recipe shortrun mixing stacks: $(STAMP)
	$(PY) tools/$(TOOL_$@).py

principles-nudged: $(STAMP)
	$(PY) tools/train_principles.py chapters/data nudged

# rbm.testing on RBM libraries written by others (chapters/data/real_implementations.json,
# which chapters/checking_an_implementation reads; re-execute it after). Their dependencies
# (torch among them) live in their own environment, .venv-real, never in requirements.txt.
REAL_VENV := .venv-real
real-implementations: requirements.txt tools/requirements-real-implementations.txt tools/requirements-real-implementations-nodeps.txt
	test -x $(REAL_VENV)/bin/python || $(PYTHON) -m venv $(REAL_VENV)
	$(REAL_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r requirements.txt -r tools/requirements-real-implementations.txt
	$(REAL_VENV)/bin/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -r tools/requirements-real-implementations-nodeps.txt
	$(REAL_VENV)/bin/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	$(REAL_VENV)/bin/python tools/check_real_implementations.py

execute: $(STAMP)
	$(PY) tools/execute_notebooks.py $(NOTEBOOKS)
	$(PY) tools/index_of_checks.py

checks-index: $(STAMP)
	$(PY) tools/index_of_checks.py

clean:
	rm -rf _build
