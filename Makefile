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
BENCH_SECONDS ?= 3
# Python code that ruff lints and formats (mypy's files are in pyproject.toml).
PY_LINT := python tests benches crosscheck docs/reproductions/skeleton
# One target dir for maturin and cargo test: the workspace compiles once.
export CARGO_TARGET_DIR ?= $(CURDIR)/target
RUST_SRC := $(shell find crates -name '*.rs' -o -name Cargo.toml 2>/dev/null) Cargo.toml Cargo.lock pyproject.toml

.DEFAULT_GOAL := help
.PHONY: help run test test-rust test-python test-package dist bins reproduce bench bench-router soak fuzz fuzz-quick fuzz-build fuzz-run crosscheck check lint lint-docs lint-rust lint-python fmt clippy clean

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

# The tests not marked realtime on every core (pytest-xdist), then the realtime
# ones (the testbed's, on real packets in real time) alone.
test-python: $(EXT) bins ## Python tests (pytest): the rest on every core, then the testbed's alone
	$(PY) -m pytest -n auto -m "not realtime" tests
	$(PY) -m pytest -m realtime tests

# `bins` selects what `cargo test --release --workspace --exclude qoslab-py`
# selects (every package but the extension, examples so dev-dependencies too),
# so both resolve the same features and share every compiled crate: after the
# test build this only links, and a cold `make test` compiles the workspace once.
bins: ## The testbed's binaries: qoslab-router and qoslab-traffic, and the edge_overhead example that `reproduce edge` times (release)
	cargo build --release -q --workspace --exclude qoslab-py --bins --examples

# The wheel carries the built-in scenarios and (Linux) the router and traffic
# binaries in qoslab/_data/: staged there for the build only (maturin packs
# every file of python/qoslab that git does not ignore), then removed. The
# sdist gets the scenarios, not the binaries.
DIST_DATA := python/qoslab/_data
DIST ?= dist
dist: $(STAMP) bins ## The sdist and the wheel (scenarios and binaries inside) in dist/: pip install dist/qoslab-*.whl
	rm -rf $(DIST_DATA) && mkdir -p $(DIST_DATA)/bin && cp -r scenarios $(DIST_DATA)/scenarios
	VIRTUAL_ENV=$(CURDIR)/$(VENV) $(VENV)/bin/maturin sdist --out $(DIST) || { rm -rf $(DIST_DATA); exit 1; }
	cp $(CARGO_TARGET_DIR)/release/qoslab-router $(CARGO_TARGET_DIR)/release/qoslab-traffic \
		$(CARGO_TARGET_DIR)/release/examples/edge_overhead $(DIST_DATA)/bin/
	VIRTUAL_ENV=$(CURDIR)/$(VENV) $(VENV)/bin/maturin build --release --quiet --out $(DIST) \
		|| { rm -rf $(DIST_DATA); exit 1; }
	rm -rf $(DIST_DATA)

test-package: $(EXT) ## Build the wheel, pip install it in a fresh venv, run a scenario and a quick reproduction there (part of .ci/run)
	QOSLAB_TEST_PACKAGE=1 $(PY) -m pytest -s tests/test_packaging.py

reproduce: $(EXT) ## Full reproductions (all papers, all seeds): slow
	$(PY) -m qoslab reproduce all --out results --overwrite

bench: $(EXT) ## Whole-run benchmark vs the bare-loop reference and ns-2.35, the PCN performance cases and the scale cases
	$(PY) benches/run_bench.py

bench-router: bins ## qoslab-router vs kernel forwarding between namespaces (root): pps 64 B/1500 B, QoS share
	$(CARGO_TARGET_DIR)/release/qoslab-router-bench --seconds $(BENCH_SECONDS)

SOAK_MINUTES ?= 10
soak: bins ## 10-minute overload soak of qoslab-router (root): RSS slope after the first minute < 1 MB/min
	$(CARGO_TARGET_DIR)/release/qoslab-router-bench soak $(SOAK_MINUTES)

# Fuzzing with Debian's afl++ (installed with apt if absent): the targets are
# built with rustc's SanitizerCoverage (LLVM's default block pruning: a guard
# call only where coverage is not implied by a neighbour) and AFL's runtime,
# in their own folder; inputs come through afl's shared memory (fuzz/src/lib.rs).
FUZZ_DIR    := crates/router/fuzz
FUZZ_TARGET := $(CURDIR)/target/fuzz
FUZZ_OUT    ?= $(CURDIR)/target/fuzz-out
FUZZ_EXECS  ?= 10000000
FUZZ_FLAGS  := -C passes=sancov-module -C llvm-args=-sanitizer-coverage-level=3 \
	-C llvm-args=-sanitizer-coverage-trace-pc-guard \
	-C codegen-units=1 -C link-arg=/usr/lib/afl/afl-compiler-rt.o
AFL_ENV := AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_UI=1 AFL_QUIET=1
fuzz-build:
	@command -v afl-fuzz >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq afl++ >/dev/null; }
	cd $(FUZZ_DIR) && CARGO_TARGET_DIR=$(FUZZ_TARGET) RUSTFLAGS="$(FUZZ_FLAGS)" cargo build --release -q

fuzz: fuzz-build ## Fuzz the packet parser, the config loader and the whole datapath (afl++): FUZZ_EXECS inputs each (default 10 M); crashes fail
	$(MAKE) fuzz-run FUZZ_LIMIT="-E $(FUZZ_EXECS)"

fuzz-quick: fuzz-build ## A short fuzz run (20 s per target, part of make check)
	$(MAKE) fuzz-run FUZZ_LIMIT="-V 20"

fuzz-run:
	@for t in parse config datapath; do \
	  rm -rf $(FUZZ_OUT)/$$t; mkdir -p $(FUZZ_OUT); \
	  $(AFL_ENV) afl-fuzz -i $(FUZZ_DIR)/corpus/$$t -o $(FUZZ_OUT)/$$t $(FUZZ_LIMIT) -- $(FUZZ_TARGET)/release/fuzz_$$t >/dev/null 2>&1 || true; \
	  s=$(FUZZ_OUT)/$$t/default/fuzzer_stats; \
	  test -f $$s || { echo "fuzz $$t: afl-fuzz did not run (see $(FUZZ_OUT)/$$t)"; exit 1; }; \
	  printf 'fuzz %-6s execs %s, corpus %s, crashes %s, hangs %s\n' $$t \
	    "$$(awk '/^execs_done/ {print $$3}' $$s)" "$$(awk '/^corpus_count/ {print $$3}' $$s)" \
	    "$$(awk '/^saved_crashes/ {print $$3}' $$s)" "$$(awk '/^saved_hangs/ {print $$3}' $$s)"; \
	  test "$$(awk '/^saved_crashes/ {print $$3}' $$s)" = 0 || { echo "fuzz $$t: crashes in $(FUZZ_OUT)/$$t/default/crashes"; exit 1; }; \
	done

CROSSCHECK_SEEDS ?= 5
crosscheck: $(EXT) ## RED, RED+ECN and [Tarasiuk05] Table 1 (reported) and its tie-free variant (judged) vs ns-2.35 (installs ns2 with apt if absent; about 80 min at 5 seeds; not part of make test)
	@command -v ns >/dev/null || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y ns2; }
	$(PY) crosscheck/run.py --seeds $(CROSSCHECK_SEEDS)
	$(PY) crosscheck/tcp_cac.py --seeds $(CROSSCHECK_SEEDS) --report-only  # Table 1's exact set-up: same-instant ties decide its 0 ms cells
	$(PY) crosscheck/tcp_cac.py --seeds $(CROSSCHECK_SEEDS) --tie-free --report-only  # distinct access delays, each simulator drawing its own start times
	$(PY) crosscheck/tcp_cac.py --seeds $(CROSSCHECK_SEEDS) --tie-free --common-starts  # judged: the same, ns-2 started at qoslab's start times (docs/validation.md)

fmt: $(STAMP) ## Format Rust and Python code, apply ruff's safe fixes
	cargo fmt --all
	$(VENV)/bin/ruff format $(PY_LINT)
	$(VENV)/bin/ruff check --fix $(PY_LINT)

clippy: ## Lint Rust code, warnings are errors
	cargo clippy --workspace --all-targets --all-features -q -- -D warnings

lint: lint-docs lint-rust lint-python ## Every check but the tests: docs links and citations, formats, clippy, ruff, mypy, stubtest

lint-docs: ## Dead links in the docs (and docs/ paths in code); papers cited by seed file instead of key (docs/papers.md)
	$(PYTHON) tests/check_docs.py

lint-rust: ## cargo fmt --check, clippy -D warnings
	cargo fmt --all -- --check
	$(MAKE) clippy

lint-python: $(EXT) ## ruff (lint, format check), mypy --strict, _core.pyi against the built module
	$(VENV)/bin/ruff check $(PY_LINT)
	$(VENV)/bin/ruff format --check $(PY_LINT)
	$(VENV)/bin/mypy
	$(PY) -m mypy.stubtest qoslab._core

check: ## What CI runs: lint (fmt, clippy, ruff, mypy, stubtest), all the tests, a short fuzz run
	$(MAKE) lint
	$(MAKE) test
	$(MAKE) fuzz-quick

clean: ## Remove build outputs, the venv and results
	rm -rf target $(VENV) results
