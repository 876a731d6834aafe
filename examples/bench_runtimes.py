#!/usr/bin/env python3
"""One run, every runtime: the median latency of applying the same 4 KB update (the
astropy-13579 one in host/benches/data) through the same component in the wasmtime host,
Node (jco), Python (wasmtime-py) and Go (Gravity on wazero), plus cold load + first call.

Run it as `make bench-runtimes` (which builds what each runtime needs first). Each runtime's
bench program prints one JSON line; this script runs them one after another and prints a
Markdown table. The "state round trip" column is `merge(state, [])`: moving the memory state
into the component and back out with no work done, i.e. that runtime's own call overhead
for this state."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

RUNS = [
    (["cargo", "bench", "-q", "-p", "workmem", "--bench", "engine", "--", "--json"], ROOT),
    (["node", "bench.js"], ROOT / "examples" / "js"),
    ([sys.executable, "bench.py"], ROOT / "examples" / "python"),
    (["go", "run", "./cmd/bench"], ROOT / "examples" / "go"),
]

# Targets relative to the wasmtime host (issue #3). Python's is on the apply time less its
# own call overhead (the state round trip), which is reported separately.
TARGETS = {"Node (jco)": 2.0, "Go (Gravity, wazero)": 3.0, "Python (wasmtime-py)": 3.0}


def measure(cmd, cwd):
    out = subprocess.run(cmd, cwd=cwd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    rows = [measure(cmd, cwd) for cmd, cwd in RUNS]
    host = rows[0]
    print("| runtime | apply (median) | vs host | state round trip | trivial call | cold load + first call | target |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        ratio = r["apply_us"] / host["apply_us"]
        name = r["runtime"]
        if name in TARGETS:
            basis = r["apply_us"] - r["roundtrip_us"] if name.startswith("Python") else r["apply_us"]
            achieved = basis / host["apply_us"]
            label = "less round trip " if name.startswith("Python") else ""
            target = f"≤ {TARGETS[name]:.0f}x {label}({achieved:.1f}x: {'met' if achieved <= TARGETS[name] else 'missed'})"
        else:
            target = f"native {r['native_apply_us']:.1f} µs; cold without cache {r['cold_uncached_ms']:.0f} ms"
        print(f"| {name} | {r['apply_us']:.1f} µs | {ratio:.1f}x | {r['roundtrip_us']:.1f} µs | {r['call_us']:.1f} µs "
              f"| {r['cold_ms']:.1f} ms | {target} |")


if __name__ == "__main__":
    main()
