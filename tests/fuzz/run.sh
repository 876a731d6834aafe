#!/usr/bin/env bash
# Runs every fuzz target for FUZZ_SECONDS (default 20) each, seeded from the repository's
# inputs, and prints how many executions each made. Any crash, panic, leak or input slower
# than 10 s fails the run; libFuzzer leaves the input in target/fuzz-artifacts/<target>/.
# cargo-fuzz needs nightly's sanitizer flags: RUSTC_BOOTSTRAP lets the stable toolchain
# pass them. The targets are built in one cargo run, then fuzzed FUZZ_JOBS at a time
# (default: one per core), each a single-threaded libFuzzer with a core of its own.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${FUZZ_SECONDS:-20}
jobs=${FUZZ_JOBS:-$(nproc)}
# Project-local, like Gravity: target/tools. It only drives cargo and libFuzzer, so the quickest
# build of it serves (the dev profile without debug info: a third of a release build's time).
export PATH="$PWD/target/tools/bin:$PATH"
command -v cargo-fuzz >/dev/null ||
  CARGO_PROFILE_DEV_DEBUG=false cargo install cargo-fuzz --locked --version 0.13.2 --debug --quiet --root target/tools
export RUSTC_BOOTSTRAP=1 CARGO_TARGET_DIR=target/fuzz
# The session_log target keeps its session in the temp dir: one beneath target/, gone after.
export TMPDIR="$PWD/target/fuzz-tmp"
rm -rf "$TMPDIR" && mkdir -p "$TMPDIR"
logs=$(mktemp -d)
trap 'rm -rf "$TMPDIR" "$logs"' EXIT
declare -A seeds=([parse]=tests/corpus [apply]=tests/corpus [session_log]=tests/fuzz/seeds/session_log)
targets=(parse apply merge context session_log)
cargo fuzz build --fuzz-dir tests/fuzz

fuzz() {
    local target=$1 corpus=target/fuzz-corpus/$1
    mkdir -p "$corpus" "target/fuzz-artifacts/$target"
    cargo fuzz run --fuzz-dir tests/fuzz "$target" "$corpus" ${seeds[$target]:-} -- \
        -max_total_time="$seconds" -timeout=10 -artifact_prefix="target/fuzz-artifacts/$target/" >"$logs/$target" 2>&1
}

# Each target's result in the order they are listed, whichever finished first.
failed=0
for ((i = 0; i < ${#targets[@]}; i += jobs)); do
    batch=("${targets[@]:i:jobs}")
    pids=()
    for target in "${batch[@]}"; do
        fuzz "$target" &
        pids+=($!)
    done
    for j in "${!batch[@]}"; do
        target=${batch[$j]}
        if wait "${pids[$j]}"; then
            echo "fuzz: $target: $(grep -o 'Done [0-9]* runs in [0-9]* second(s)' "$logs/$target"), no crash"
        else
            tail -40 "$logs/$target"
            echo "fuzz: $target failed; the input is in target/fuzz-artifacts/$target/" >&2
            failed=1
        fi
    done
    [ "$failed" = 0 ] || exit 1
done
