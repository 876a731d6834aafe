# The two commands a newcomer needs are in README.md: `cargo run -- demo` and `make test`.

.PHONY: test test-rust

test: test-rust

# Everything Rust: builds every target (the benchmark included, so it cannot rot) and runs
# the engine's property tests, the conformance corpus through the component, the component
# and CLI tests.
test-rust:
	cargo build --workspace --all-targets
	cargo test --workspace
