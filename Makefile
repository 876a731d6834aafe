# The two commands a newcomer needs are in README.md: `cargo run -- demo` and `make test`.
# `make test` runs every suite: Rust, then the same component from JS, Python and Go, each
# over the shared corpus in tests/. Project-local tools land in node_modules, the Python
# environment and target/tools; Node, Python, Go and Chromium come from the machine.

COMPONENT := target/component/workmem.wasm
GO_CORE   := target/component/workmem-go-core.wasm
AGENT     := target/component/workmem-agent.wasm
GRAVITY   := target/tools/bin/gravity

.PHONY: test test-rust test-js test-python test-go test-readme fuzz component go-bindings bench bench-runtimes bench-compaction bench-instructions

test: test-rust test-js test-python test-go test-readme fuzz

# Builds every target (the benchmark included, so it cannot rot), runs the property tests,
# the corpus through the component, the component and CLI tests, and the Rust example.
test-rust:
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings
	cargo build --workspace --all-targets
	cargo test --workspace
	cargo run -q -p workmem-example > /dev/null

# Every fuzz target for a short while (FUZZ_SECONDS each, default 15; tests/fuzz/run.sh),
# seeded from the corpus: zero crashes. `make fuzz FUZZ_SECONDS=600` for a long run.
FUZZ_SECONDS ?= 15
fuzz:
	FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run.sh

# The component file every other runtime loads (and the engine-go world's core module, which
# Gravity reads).
component:
	mkdir -p target/component
	cargo run -q -- component --out $(COMPONENT)
	cargo run -q -- component --go --out $(GO_CORE)
	cargo run -q -- component --agent --out $(AGENT)

# `npm install` from the lock file rather than `npm ci`: some of jco's optional per-platform
# packages are not on the registry this machine reaches, so the lock file cannot list them
# and `npm ci` refuses it. --no-save leaves the lock file as committed.
examples/js/node_modules/.installed: examples/js/package-lock.json
	cd examples/js && npm install --no-save --no-audit --no-fund
	touch $@

test-js: component examples/js/node_modules/.installed
	cd examples/js && npm run build && npm run typecheck && npm test && node example.js > /dev/null

test-python: component
	cp $(COMPONENT) examples/python/workmem/workmem.wasm
	python3 -m pip install -q --disable-pip-version-check -e 'examples/python[test]'
	cd examples/python && python3 -m pytest -q && python3 example.py > /dev/null

# Gravity reads source spans through genco, which only does so on a nightly compiler; built
# on stable without them it emits Go whose comments swallow code. RUSTC_BOOTSTRAP and the
# cfg give it the spans on the machine's stable toolchain.
$(GRAVITY):
	RUSTC_BOOTSTRAP=1 RUSTFLAGS="--cfg proc_macro_span" \
	  cargo install arcjet-gravity --version 0.0.2 --locked --quiet --root target/tools

go-bindings: component $(GRAVITY)
	mkdir -p examples/go/engine
	$(GRAVITY) --world engine-go --output examples/go/engine/engine.go $(GO_CORE)

test-go: go-bindings
	cd examples/go && go vet ./... && go test ./... && go run ./cmd/example > /dev/null

# The README's "Use it from" snippets, run as written (after the runtimes above are built).
test-readme:
	python3 tests/readme_snippets.py

# The engine through the component against native (release build; not part of `test`).
bench:
	cargo bench -p workmem --bench engine

# The component against native as instruction counts (callgrind), which hold still where
# timings wander.
bench-instructions:
	cargo bench -q -p workmem --bench engine --no-run
	python3 host/cli/benches/instructions.py

# The same 4 KB update in every runtime, one table.
bench-runtimes: component go-bindings examples/js/node_modules/.installed
	cp $(COMPONENT) examples/python/workmem/workmem.wasm
	cd examples/js && npm run build
	python3 examples/bench_runtimes.py

# Issue 8's benchmark: the 40 trajectories replayed under five context policies (one table,
# the chart of tokens per request), then the compaction timings.
bench-compaction:
	cargo run --release -q -- replay tests/data/trajectories --window 16000 --png host/cli/benches/tokens-per-turn.png
	cargo bench -q -p workmem --bench compaction
