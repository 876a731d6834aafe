#!/usr/bin/env python3
"""One run, every runtime: the median latency of applying the same 4 KB update (the
astropy-13579 one in host/bench/benches/data) to a memory kept inside the same engine, in the
wasmtime host, Node (jco), Python (wasmtime-py) and Go (Gravity on wazero), plus cold load +
first call.

Run it as `make bench-runtimes` (which builds what each runtime needs first). Each runtime's
bench program prints one JSON line; this script runs them one after another and prints a
Markdown table. The memory stays in the engine, so no state crosses the boundary; the "no-op
apply" column is the fixed cost of one apply (a short text in, a short outcome out), and its
share of an apply is what the boundary costs that runtime."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

RUNS = [
    (["cargo", "bench", "-q", "-p", "workmem", "--bench", "engine", "--", "--json"], ROOT),
    (["node", "bench.js"], ROOT / "packages" / "js"),
    ([sys.executable, "bench.py"], ROOT / "packages" / "python"),
    (["go", "run", "./cmd/bench"], ROOT / "packages" / "go"),
]

# Targets relative to the wasmtime host (issue #7).
TARGETS = {"Node (jco)": 1.5, "Go (Gravity, wazero)": 4.0, "Python (wasmtime-py)": 5.0}


def measure(cmd, cwd):
    out = subprocess.run(cmd, cwd=cwd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    rows = [measure(cmd, cwd) for cmd, cwd in RUNS]
    host = rows[0]
    print("| runtime | apply (median) | vs host | no-op apply | no-op / apply | trivial call | cold load + first call | target |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        ratio = r["apply_us"] / host["apply_us"]
        share = r["noop_us"] / r["apply_us"] * 100
        name = r["runtime"]
        if name in TARGETS:
            target = f"≤ {TARGETS[name]:g}x ({'met' if ratio <= TARGETS[name] else 'missed'})"
            if "early_us" in r:
                target += f"; median of the first 51 applies, before V8 tiers the engine up: {r['early_us']:.1f} µs"
        else:
            target = (f"native {r['native_apply_us']:.1f} µs; first call of a fresh instance {r['fresh_apply_us']:.1f} µs; "
                      f"compiling the component instead {r['compile_ms']:.0f} ms")
        print(f"| {name} | {r['apply_us']:.1f} µs | {ratio:.1f}x | {r['noop_us']:.1f} µs | {share:.0f}% | {r['call_us']:.1f} µs "
              f"| {r['cold_ms']:.1f} ms | {target} |")


if __name__ == "__main__":
    main()
