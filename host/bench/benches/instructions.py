#!/usr/bin/env python3
"""Instructions per apply of the 4 KB update, native against the component in wasmtime, counted
by callgrind (timings on this machine wander; instruction counts hold still), and of a no-op
update, the fixed cost of an apply. Each path runs N times with and without the apply; the
difference over N is one apply. Run it as `make bench-instructions` (after `cargo bench
--no-run`, which builds the bench binary, and the guest's `apply` example built with the
`guest` profile).

Two native builds: the bench binary's (the release profile, in a process that also holds
wasmtime, as an embedder's would) and the `apply` example (the components' profile, fat LTO and
one codegen unit, in a process of its own). The component is held to both.

`--functions K` (`make bench-functions`) also prints the component's K costliest functions per
apply, each without what it calls. Callgrind knows the compiled guest only by address; wasmtime's
perf map (`WORKMEM_PERFMAP=1`) names the address ranges, with the guest's own names when the
bench was built with `WORKMEM_GUEST_NAMES=1`."""

import bisect
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

N = 50


def bench_binary():
    found = [p for p in glob.glob("target/release/deps/engine-*") if os.access(p, os.X_OK) and not p.endswith(".d")]
    if not found:
        sys.exit("build the bench first: cargo bench -p workmem-bench --bench engine --no-run")
    return max(found, key=os.path.getmtime)


DATA = "host/bench/benches/data"
# The `apply` example of the guest crate, built with the `guest` profile.
NATIVE_ALONE = "target/guest/examples/apply"


def command(binary, mode, n):
    """The bench binary's `--instructions` path; `alone`, `alone-noop` and `alone-setup` are
    the same three paths natively through the `apply` example."""
    if mode.startswith("alone"):
        text = {"alone": "update-4k.dsl", "alone-noop": "noop.dsl", "alone-setup": None}[mode]
        return [NATIVE_ALONE, f"{DATA}/setup.dsl", f"{DATA}/update-4k.dsl", f"{DATA}/{text}" if text else "-", str(n)]
    return [binary, "--instructions", mode, str(n)]


def callgrind(binary, mode, n, tmp, env=None):
    """Runs one path under callgrind; returns valgrind's report and the path of callgrind's
    output."""
    out = os.path.join(tmp, "callgrind.out")
    run = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *command(binary, mode, n)],
                         capture_output=True, text=True, env=env)
    if run.returncode != 0:
        sys.exit(run.stderr[-2000:])
    return run.stderr, out


def count(binary, mode, n):
    with tempfile.TemporaryDirectory() as tmp:
        report, _ = callgrind(binary, mode, n, tmp)
        return int(re.search(r"Collected : (\d+)", report).group(1))


def functions(binary, mode, n):
    """Self instructions per function of one run, the compiled guest's named from the perf map."""
    with tempfile.TemporaryDirectory() as tmp:
        report, out = callgrind(binary, mode, n, tmp, env=dict(os.environ, WORKMEM_PERFMAP="1"))
        perf_map = "/tmp/perf-{}.map".format(re.search(r"==(\d+)==", report).group(1))
        ranges = []
        with open(perf_map) as f:
            for line in f:
                start, size, name = line.rstrip("\n").split(" ", 2)
                ranges.append((int(start, 16), int(size, 16), name))
        os.remove(perf_map)
        ranges.sort()
        starts = [r[0] for r in ranges]
        annotated = subprocess.run(["callgrind_annotate", "--threshold=100", out], capture_output=True, text=True).stdout
    cost = {}
    for line in annotated.splitlines():
        found = re.match(r"\s*([\d,]+) \([^)]*\)\s+(.*)$", line)
        if not found or "PROGRAM TOTALS" in line:
            continue
        name = re.sub(r"\s*\[.*\]$", "", found.group(2))
        address = re.match(r"\?\?\?:0x([0-9a-f]+)", name)
        if address:
            at = int(address.group(1), 16)
            i = bisect.bisect_right(starts, at) - 1
            if i >= 0 and at < ranges[i][0] + ranges[i][1]:
                name = ranges[i][2]
        cost[name] = cost.get(name, 0) + int(found.group(1).replace(",", ""))
    return cost


def demangled(names):
    if not shutil.which("c++filt"):
        return names
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True).stdout.splitlines()
    return [re.sub(r"::h[0-9a-f]{16}$", "", name) for name in out]


def print_functions(binary, k):
    with_apply, setup = functions(binary, "wasm", N), functions(binary, "wasm-setup", N)
    per = {name: (with_apply.get(name, 0) - setup.get(name, 0)) / N for name in with_apply.keys() | setup.keys()}
    top = sorted(per.items(), key=lambda item: -item[1])[:k]
    print()
    print("| component, per apply | instructions (without callees) |")
    print("|---|---|")
    for name, (_, cost) in zip(demangled([name for name, _ in top]), top):
        print(f"| {name[:120]} | {cost:,.0f} |")


def main():
    binary = bench_binary()
    # The first run after a build compiles the component into the cache: not an apply's cost.
    count(binary, "wasm-setup", 1)
    per = {}
    for path in ("native", "alone", "wasm"):
        setup = count(binary, f"{path}-setup", N)
        for update in ("", "-noop"):
            per[path + update] = (count(binary, path + update, N) - setup) / N
    print("| path | instructions per apply | of them, an apply's fixed cost (a no-op update) |")
    print("|---|---|---|")
    print(f"| native (release, in the bench's process) | {per['native']:,.0f} | {per['native-noop']:,.0f} |")
    print(f"| native (the components' profile, alone) | {per['alone']:,.0f} | {per['alone-noop']:,.0f} |")
    print(f"| component (wasmtime) | {per['wasm']:,.0f} | {per['wasm-noop']:,.0f} |")
    for path, label in (("native", "release"), ("alone", "the components' profile")):
        print(f"| ratio component / native ({label}) | {per['wasm'] / per[path]:.2f}x (target ≤ 1.5x) | {per['wasm-noop'] / per[path + '-noop']:.2f}x |")
    if "--functions" in sys.argv:
        print_functions(binary, int(sys.argv[sys.argv.index("--functions") + 1]))


if __name__ == "__main__":
    main()
