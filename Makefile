# qoslab — `make help` lists the targets.
#
# `make run` and `make test` do all the set-up themselves on a fresh
# machine: they create .venv, install the pinned Python dependencies and
# build the native extension in release mode (once; later runs reuse it).

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(VENV)/bin/pip
STAMP  := $(VENV)/.qoslab-installed
EXT    := $(VENV)/.qoslab-ext
# Python code that ruff lints and formats (mypy's files are in pyproject.toml).
PY_LINT := python tests benches crosscheck
# One target dir for maturin and cargo test: the workspace compiles once.
export CARGO_TARGET_DIR ?= $(CURDIR)/target
RUST_SRC := $(shell find crates -name '*.rs' -o -name Cargo.toml 2>/dev/null) Cargo.toml Cargo.lock pyproject.toml

.DEFAULT_GOAL := help
.PHONY: help run test test-rust test-python reproduce bench crosscheck check lint lint-rust lint-python fmt clippy clean

help: ## List the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  make %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

$(STAMP): requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --disable-pip-version-check -r requirements.txt
	touch $@

$(EXT): $(STAMP) $(RUST_SRC)
	VIRTUAL_ENV=$(CURDIR)/$(VENV) $(VENV)/bin/maturin develop --release --quiet
	$(PY) -c "import qoslab._core"
	touch $@

run: $(EXT) ## Run every reproduction's quick variant and print the claims
	$(PY) -m qoslab reproduce all --quick --out results

test: $(EXT) test-rust test-python ## Run all the tests (Rust and Python)

test-rust: $(STAMP) ## Rust unit, property and cross-module tests (release)
	cargo test --release --workspace --exclude qoslab-py -q

test-python: $(EXT) ## Python tests (pytest)
	$(PY) -m pytest tests

reproduce: $(EXT) ## Full reproductions (all papers, all seeds): slow
	$(PY) -m qoslab reproduce all --out results --overwrite

bench: $(EXT) ## Whole-run benchmark vs the bare-loop reference and ns-2.35, and the PCN performance cases
	$(PY) benches/run_bench.py

CROSSCHECK_SEEDS ?= 3
crosscheck: $(EXT) ## RED vs ns-2.35 on the seed-001 dumbbell (installs ns2 with apt if absent; not part of make test)
	@command -v ns >/dev/null || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y ns2; }
	$(PY) crosscheck/run.py --seeds $(CROSSCHECK_SEEDS)

fmt: $(STAMP) ## Format Rust and Python code, apply ruff's safe fixes
	cargo fmt --all
	$(VENV)/bin/ruff format $(PY_LINT)
	$(VENV)/bin/ruff check --fix $(PY_LINT)

clippy: ## Lint Rust code, warnings are errors
	cargo clippy --workspace --all-targets -q -- -D warnings

lint: lint-rust lint-python ## Every check but the tests: formats, clippy, ruff, mypy, stubtest

lint-rust: ## cargo fmt --check, clippy -D warnings
	cargo fmt --all -- --check
	$(MAKE) clippy

lint-python: $(EXT) ## ruff (lint, format check), mypy --strict, _core.pyi against the built module
	$(VENV)/bin/ruff check $(PY_LINT)
	$(VENV)/bin/ruff format --check $(PY_LINT)
	$(VENV)/bin/mypy
	$(PY) -m mypy.stubtest qoslab._core

check: ## What CI runs: lint (fmt, clippy, ruff, mypy, stubtest), then all the tests
	$(MAKE) lint
	$(MAKE) test

clean: ## Remove build outputs, the venv and results
	rm -rf target $(VENV) results
