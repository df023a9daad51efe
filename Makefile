# Two commands for a fresh machine (see README): `make demo` and `make test`.
# Everything they need is set up here: a repo-local .venv with the pinned wheels, the Rust
# workspace (release), the `rextio-torch` CLI and the `rextio_torch` package in .venv.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

PYTHON_BOOTSTRAP ?= python3.11
VENV := $(CURDIR)/.venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.requirements-installed

# torch-sys finds libtorch through the `python` first on PATH (LIBTORCH_USE_PYTORCH=1), so the
# venv's bin/ leads PATH for every cargo and maturin call. The version check is never bypassed.
export PATH := $(VENV)/bin:$(PATH)
export VIRTUAL_ENV := $(VENV)
export LIBTORCH_USE_PYTORCH := 1
export PYO3_PYTHON := $(PY)
unexport LIBTORCH_BYPASS_VERSION_CHECK

CARGO_TEST_FLAGS := --release --workspace --exclude rextio-torch-python
# The Python suites run again under each forced instruction-set combination (ISA_COMBOS):
# parity of every op, chain, fused form and kernel path, and the loop regressions.
ISA_PYTHON_TESTS := tests/python/test_parity.py tests/python/test_loop_regressions.py tests/python/test_control_flow.py \
	tests/python/test_gelu_tanh.py tests/python/test_log_softmax_amax.py tests/python/test_scalar_operands.py \
	tests/python/test_layers.py \
	tests/python/test_param_activations.py tests/python/test_joins.py tests/python/test_views.py tests/python/test_reductions2.py \
	tests/python/test_module_compositions.py tests/python/test_rank3.py

.PHONY: help venv build demo lint test test-rust test-python sweep bench bench-python bench-control-flow bench-side-by-side bench-models rextio-example cargo-fuzz fuzz clean

help:
	@echo "make demo   - set up everything, compile examples/phase_a.py, compare with eager"
	@echo "make test   - set up everything and run every test (Rust and Python) and the lint gate"
	@echo "make lint   - cargo fmt --check and clippy -D warnings over the workspace"
	@echo "make bench  - criterion benchmarks; make bench-python - side-by-side vs eager"
	@echo "make bench-control-flow - Phase B and the scoring pipeline vs eager"
	@echo "make bench-side-by-side - every suite vs eager, jit.script, torch.compile and ONNX Runtime (JSON in target/)"
	@echo "make bench-models - the models suite (transformer MLP, DLRM, text classifier, nn.Sequential, encoder stack)"
	@echo "make rextio-example - examples/rextio_project checked and built by Rextio with our plugin"
	@echo "make cargo-fuzz TARGET=name RUNS=n - libFuzzer (nightly, cargo-fuzz) on one fuzz/ target:"
	@echo "    source_bytes, mutated_programs, ir_text or pipeline (docs/reliability.md)"
	@echo "make sweep - every elementwise op over all 2^32 float32 inputs vs ATen, native and each ISA_COMBOS"
	@echo "make fuzz N=n SEED=s JOBS=j - n random programs compiled vs eager PyTorch (tests/fuzz/difffuzz.py)"

$(PY):
	$(PYTHON_BOOTSTRAP) -m venv $(VENV)

# Reinstalls only when requirements.txt changes.
$(STAMP): requirements.txt | $(PY)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	$(PY) -c "import torch; v = torch.__version__.split('+')[0]; assert v == '2.13.0', v"
	touch $@

venv: $(STAMP)

# The package is installed from the wheel maturin builds (what users get), quietly: its only
# dependency, torch, is already pinned in the venv.
build: venv
	cargo build --release -p rextio-cli
	maturin build --release --quiet --auditwheel skip -o target/wheels
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps --force-reinstall \
		target/wheels/rextio_torch-0.1.0-cp311-*.whl

demo: build
	PYTHONUNBUFFERED=1 $(PY) examples/demo.py

# The instruction-set combinations `make test` forces besides the CPU's own, each
# OURS:ATEN:ONEDNN = REXTIO_TORCH_ISA (which of our loops runs) : ATEN_CPU_CAPABILITY (ATen's
# kernels) : ONEDNN_MAX_CPU_ISA (oneDNN's, which run eager's GELU), so that this machine stands
# in for a smaller one: an AVX2 machine, one without AVX2 (ATen's default capability, oneDNN's
# SSE4.1 kernels, our portable loops), and a mixed pair (ours at AVX2, ATen and oneDNN at
# AVX-512). Under each, the runtime tests, the sampled exhaustive sweep and the Python parity
# suites run again; tests/isa_combos.sh skips, saying why, those the CPU lacks and its own
# levels (docs/reliability.md says what runs). Each costs about 3 minutes on 2 cores (runtime
# tests 1.5-2, the sweep seconds, the Python suites 1): an AVX-512 machine runs three, one more
# than the two REXTIO_TORCH_ISA-only reruns before; an AVX2-only machine runs one. The fourth
# field forces whose GEMM computes wide products (REXTIO_TORCH_PRODUCTS; the vendor picks it
# otherwise: libtorch's on Intel, the crate's elsewhere), so every machine tests both: the
# AVX2-only machine's one combination takes libtorch's.
ISA_COMBOS := avx2:avx2:AVX2:crate portable:default:SSE41:libtorch avx2:avx512:AVX512_CORE:crate
SWEEP_SAMPLE := --step 4099

test-rust: venv
	cargo test $(CARGO_TEST_FLAGS)
	cargo run --release --quiet -p rextio-runtime --example sweep -- $(SWEEP_SAMPLE)
	for combo in $$(tests/isa_combos.sh $(ISA_COMBOS)); do \
		echo "== runtime tests and the sampled sweep with $${combo//,/ }"; \
		env $${combo//,/ } cargo test --release -p rextio-runtime; \
		env $${combo//,/ } cargo run --release --quiet -p rextio-runtime --example sweep -- $(SWEEP_SAMPLE); \
	done
	cargo run --release --quiet -p rextio-runtime --example sweep_params -- $(SWEEP_SAMPLE)

# REXTIO_TORCH_TEST_REXTIO_BUILD=1: the real `rextio build` of the example project runs too
# (one cargo build of Rextio's generated crate, about 2 minutes warm, 7 cold).
test-python: build
	PYTHONUNBUFFERED=1 REXTIO_TORCH_TEST_REXTIO_BUILD=1 $(PY) -m pytest -q tests/python
	for combo in $$(tests/isa_combos.sh $(ISA_COMBOS)); do \
		echo "== parity tests with $${combo//,/ }"; \
		env $${combo//,/ } PYTHONUNBUFFERED=1 $(PY) -m pytest -q $(ISA_PYTHON_TESTS); \
	done

# Every exhaustive sweep (docs/reliability.md): each elementwise op over all 2^32 float32
# inputs against ATen, at the CPU's own levels and each forced combination (about 10 minutes
# each).
sweep: venv
	cargo run --release --quiet -p rextio-runtime --example sweep
	for combo in $$(tests/isa_combos.sh $(ISA_COMBOS)); do \
		echo "== sweep with $${combo//,/ }"; \
		env $${combo//,/ } cargo run --release --quiet -p rextio-runtime --example sweep; \
	done
	cargo run --release --quiet -p rextio-runtime --example sweep_params

# The lint gate (the first step of `make test`): clippy over every crate and target (warnings are errors, [workspace.lints] in
# Cargo.toml adds unsafe_op_in_unsafe_fn and undocumented_unsafe_blocks) and rustfmt.
lint: venv
	cargo fmt --all --check
	cargo clippy --release --workspace --all-targets -- -D warnings

test: lint test-rust test-python

bench: venv
	cargo bench -p rextio-benches

bench-python: build
	PYTHONUNBUFFERED=1 $(PY) benches/bench_phase_a.py

bench-control-flow: build
	PYTHONUNBUFFERED=1 $(PY) benches/bench_control_flow.py

# All suites (docs/benchmarks.md, "Side by side"), with ONNX Runtime as a peer (its pins,
# benches/requirements.txt, are installed here, not for `make test`); the chart needs
# `pip install matplotlib`:
# python benches/plot_side_by_side.py target/side_by_side.json target/side_by_side.png
bench-side-by-side: build
	$(PY) -m pip install --quiet --disable-pip-version-check -r benches/requirements.txt
	PYTHONUNBUFFERED=1 $(PY) benches/side_by_side.py --suite all --json target/side_by_side.json

# The models suite (benches/models.py; docs/benchmarks.md, "Models"), the same way.
bench-models: build
	$(PY) -m pip install --quiet --disable-pip-version-check -r benches/requirements.txt
	PYTHONUNBUFFERED=1 $(PY) benches/side_by_side.py --suite models --json target/side_by_side_models.json

# Rextio core (pinned in requirements.txt) with rextio-torch as its plugin (docs/rextio-plugin.md):
# `rextio check` and `rextio build` of examples/rextio_project (in target/rextio_project), then
# the built Phase A function against eager. The first build compiles tch's shim (minutes).
rextio-example: build
	PYTHONUNBUFFERED=1 $(PY) examples/rextio_example.py

# Coverage-guided fuzzing (docs/reliability.md, "Coverage-guided fuzzing"): one target of
# fuzz/fuzz_targets/ for RUNS executions (FUZZ_ARGS: more libFuzzer flags, e.g. -jobs=2;
# SANITIZER=none runs about 5 times faster than AddressSanitizer, the default; CARGO_FUZZ_FLAGS:
# more cargo-fuzz flags, e.g. --target-dir fuzz/target/none to keep both builds).
# Needs no torch. The committed seeds fuzz/corpus/TARGET are read; what the run adds goes to
# fuzz/target/corpus/TARGET (ignored), crashes to fuzz/artifacts/TARGET.
TARGET ?= source_bytes
RUNS ?= 100000
FUZZ_ARGS ?=
SANITIZER ?= address
CARGO_FUZZ_FLAGS ?=
cargo-fuzz:
	command -v cargo-fuzz >/dev/null || cargo install --locked cargo-fuzz
	mkdir -p fuzz/target/corpus/$(TARGET)
	cargo +nightly fuzz run --sanitizer $(SANITIZER) $(CARGO_FUZZ_FLAGS) $(TARGET) fuzz/target/corpus/$(TARGET) fuzz/corpus/$(TARGET) -- \
		-runs=$(RUNS) $(FUZZ_ARGS)

# Differential fuzzing against eager (docs/reliability.md, "Differential fuzzing against eager"):
# N random programs from SEED, compiled and run against the eager Python original, in JOBS
# worker processes; prints the summary and shrinks up to two mismatches of each kind into
# tests/fuzz/fixtures/ (replayed by tests/python/test_difffuzz.py). Exit 1 on any mismatch.
# The run imports a copy of the installed package (target/fuzz-pkg), so a `make build` during
# a long run does not mix two builds in its counts.
N ?= 1000
SEED ?= 1
JOBS ?= 1
fuzz: build
	rm -rf target/fuzz-pkg && mkdir -p target/fuzz-pkg
	cp -r "$$($(PY) -c 'import os, rextio_torch; print(os.path.dirname(rextio_torch.__file__))')" target/fuzz-pkg/
	PYTHONUNBUFFERED=1 PYTHONPATH=$(CURDIR)/target/fuzz-pkg nice -n 10 $(PY) tests/fuzz/difffuzz.py run -n $(N) --seed $(SEED) --jobs $(JOBS) --write-fixtures

clean:
	cargo clean
	rm -rf $(VENV) python/rextio_torch/_native*.so target/wheels
