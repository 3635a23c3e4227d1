# Quick start: `make demo` (main job on the embedded data) and `make test` (the whole suite).
PYTHON ?= python3.11
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(VENV)/bin/pip

.PHONY: demo test venv venv-test lint bench bench-khiops paper paper-build experiments-quick clean

$(VENV)/.created:
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "need $(PYTHON) on PATH (or run make PYTHON=python3)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --upgrade pip >/dev/null
	touch $@

$(VENV)/.installed: $(VENV)/.created pyproject.toml
	$(PIP) install -e . 
	touch $@

$(VENV)/.installed-test: $(VENV)/.created pyproject.toml
	$(PIP) install -e ".[test,experiments,dev]"
	touch $@ $(VENV)/.installed

venv: $(VENV)/.installed
venv-test: $(VENV)/.installed-test

# XLA_FUSION_EMITTERS: 0 (the default) has `make test` and `make demo` compile fused loops with XLA
# CPU's older elemental emitters ($(LEGACY_EMITTERS)); 1 keeps XLA's default, its newer fusion
# emitters. Both are mostly compilation of small programs, which the older emitters compile about
# 1.3-1.8x faster with the same results (2 cores: the 1551 tests in 494-518 s instead of 878 s, all
# passing both ways; the demo in 31-32 s instead of 42-44 s, the same table); compiled code runs as
# fast either way (benchmarks/bench_emitters.py, benchmarks/RESULTS.md). A jaxlib without the
# flag (XLA is moving its CPU backend to the fusion emitters) would abort on it, so a fresh process
# first checks that this one accepts it, and otherwise the default emitters are used. The
# experiments and the benchmarks keep XLA's default; `make test TEST_XLA_OPT=3
# XLA_FUSION_EMITTERS=1` runs the suite exactly as XLA compiles by default.
XLA_FUSION_EMITTERS ?= 0
LEGACY_EMITTERS := --xla_cpu_use_fusion_emitters=false
# a shell command that prints the emitter flag to use (nothing for XLA's default)
EMITTERS = if [ "$(XLA_FUSION_EMITTERS)" = "0" ]; then \
  if XLA_FLAGS="$(LEGACY_EMITTERS)" $(PY) -c "import jax; jax.devices()" >/dev/null 2>&1; \
  then echo "$(LEGACY_EMITTERS)"; \
  else echo "this jaxlib has no $(LEGACY_EMITTERS): XLA's default emitters" >&2; fi; fi

demo: $(VENV)/.installed
	@flags=$$(echo $$($(EMITTERS)) $${XLA_FLAGS:-}); \
	if [ -n "$$flags" ]; then export XLA_FLAGS="$$flags"; else unset XLA_FLAGS; fi; \
	echo "$${XLA_FLAGS:+XLA_FLAGS=\"$$XLA_FLAGS\" }$(PY) -m jaxnb compare"; \
	$(PY) -m jaxnb compare

# PYTEST_WORKERS: pytest-xdist processes, whole test files per process (0 = no xdist); two fill
# a 2-core machine (much of the suite is single-threaded compilation).
# TEST_XLA_OPT: the XLA CPU backend's LLVM optimization level for the tests. The suite's time is
# mostly compilation of programs that then run on tiny data, and level 0 compiles them about a
# third faster (1075 tests: 720 s instead of 1030-1090 s on 2 cores). Results agree with XLA's
# default level to rounding (on the demo's 30 fits in float64: within 1e-14 in probability, except
# WNB-grad fitted by L-BFGS, its solver before Newton's method: 1e-3, within its tolerance), and
# the suite passes at both levels. The experiments, the demo and the benchmarks keep XLA's
# default level; `make test TEST_XLA_OPT=3` runs the suite at that default (level 3). Level 0
# rounds like eager code and once hid a float32 loss (the Parzen contraction, 6e-3);
# tests/test_kernel.py checks that path at the default level in a fresh process.
PYTEST_WORKERS ?= 2
TEST_XLA_OPT   ?= 0
test: $(VENV)/.installed-test
	@flags=$$(echo --xla_force_host_platform_device_count=4 --xla_backend_optimization_level=$(TEST_XLA_OPT) $$($(EMITTERS)) $${XLA_FLAGS:-}); \
	echo "XLA_FLAGS=\"$$flags\" $(PY) -m pytest -q -n $(PYTEST_WORKERS) --dist loadfile tests"; \
	XLA_FLAGS="$$flags" $(PY) -m pytest -q -n $(PYTEST_WORKERS) --dist loadfile tests

lint: $(VENV)/.installed-test
	$(VENV)/bin/ruff check jaxnb tests experiments benchmarks
	$(VENV)/bin/ruff format --check jaxnb tests experiments benchmarks

bench: $(VENV)/.installed-test
	$(PIP) install -e ".[bench]"
	for b in benchmarks/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

# Khiops needs scikit-learn < 1.9, so it gets its own environment under benchmarks/khiops/.
bench-khiops:
	$(MAKE) -C benchmarks/khiops bench-khiops PYTHON=$(PYTHON)

# Experiments and paper. `make paper`: every experiment script in full mode (hours on 2 cores;
# writes experiments/results/, the committed results) and then the paper. `make paper-build`: the
# paper from the results already there, no experiment rerun. `make experiments-quick`: the CI smoke
# run, every script with --quick into $(QUICK_RESULTS) (git-ignored, never the committed results),
# then the paper built from those quick results into $(QUICK_RESULTS)/paper (fails if a
# results file or figure is missing).
QUICK_RESULTS ?= experiments/results/quick
PAPER_RESULTS ?= experiments/results
# paper/build.py needs only the standard library: the venv's Python when there is one
BUILD_PY      := $(if $(wildcard $(PY)),$(PY),$(PYTHON))

experiments-quick: $(VENV)/.installed-test
	$(PY) experiments/run_all.py --quick --results $(QUICK_RESULTS)
	$(PY) paper/build.py --results $(QUICK_RESULTS) --out $(QUICK_RESULTS)/paper --require-all

paper: $(VENV)/.installed-test
	$(PY) experiments/run_all.py --results $(PAPER_RESULTS)
	$(PY) paper/build.py --results $(PAPER_RESULTS)

paper-build:
	@command -v $(BUILD_PY) >/dev/null 2>&1 || { echo "need $(BUILD_PY) (or run make PYTHON=python3)"; exit 1; }
	$(BUILD_PY) paper/build.py --results $(PAPER_RESULTS)

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
