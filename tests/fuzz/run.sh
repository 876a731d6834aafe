#!/usr/bin/env bash
# Runs every fuzz target for FUZZ_SECONDS (default 20) each, seeded from the repository's
# inputs, and prints how many executions each made. Any crash, panic, leak or input slower
# than 10 s fails the run; libFuzzer leaves the input in target/fuzz-artifacts/<target>/.
# cargo-fuzz needs nightly's sanitizer flags: RUSTC_BOOTSTRAP lets the stable toolchain
# pass them.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${FUZZ_SECONDS:-20}
# Project-local, like Gravity: target/tools.
export PATH="$PWD/target/tools/bin:$PATH"
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked --version 0.13.2 --quiet --root target/tools
export RUSTC_BOOTSTRAP=1 CARGO_TARGET_DIR=target/fuzz
# The session_log target keeps its session in the temp dir: one beneath target/, gone after.
export TMPDIR="$PWD/target/fuzz-tmp"
rm -rf "$TMPDIR" && mkdir -p "$TMPDIR"
trap 'rm -rf "$TMPDIR"' EXIT
declare -A seeds=([parse]=tests/corpus [apply]=tests/corpus [session_log]=tests/fuzz/seeds/session_log)
for target in parse apply merge context session_log; do
    corpus=target/fuzz-corpus/$target
    mkdir -p "$corpus" "target/fuzz-artifacts/$target"
    log=$(mktemp)
    if ! cargo fuzz run --fuzz-dir tests/fuzz "$target" "$corpus" ${seeds[$target]:-} -- \
        -max_total_time="$seconds" -timeout=10 -artifact_prefix="target/fuzz-artifacts/$target/" >"$log" 2>&1; then
        tail -40 "$log"
        echo "fuzz: $target failed; the input is in target/fuzz-artifacts/$target/" >&2
        exit 1
    fi
    echo "fuzz: $target: $(grep -o 'Done [0-9]* runs in [0-9]* second(s)' "$log"), no crash"
    rm -f "$log"
done
