#!/usr/bin/env python3
"""Instructions per apply of the 4 KB update, native against the component in wasmtime, counted
by callgrind (timings on this machine wander; instruction counts hold still). Each path runs
N times with and without the apply; the difference over N is one apply. Run it as
`make bench-instructions` (after `cargo bench --no-run`, which builds the bench binary)."""

import glob
import os
import re
import subprocess
import sys
import tempfile

N = 50


def bench_binary():
    found = [p for p in glob.glob("target/release/deps/engine-*") if os.access(p, os.X_OK) and not p.endswith(".d")]
    if not found:
        sys.exit("build the bench first: cargo bench -p workmem-bench --bench engine --no-run")
    return max(found, key=os.path.getmtime)


def count(binary, mode, n):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        run = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", binary, "--instructions", mode, str(n)],
                             capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit(run.stderr[-2000:])
        match = re.search(r"Collected : (\d+)", run.stderr)
        return int(match.group(1))


def main():
    binary = bench_binary()
    # The first run after a build compiles the component into the cache: not an apply's cost.
    count(binary, "wasm-setup", 1)
    per = {}
    for path in ("native", "wasm"):
        per[path] = (count(binary, path, N) - count(binary, f"{path}-setup", N)) / N
    print("| path | instructions per apply |")
    print("|---|---|")
    print(f"| native | {per['native']:,.0f} |")
    print(f"| component (wasmtime) | {per['wasm']:,.0f} |")
    print(f"| ratio component / native | {per['wasm'] / per['native']:.2f}x (target ≤ 1.5x) |")


if __name__ == "__main__":
    main()
