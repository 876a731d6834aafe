"""For examples/bench_runtimes.py: cold load + first call, then the median latency of applying
the 4 KB update to a memory kept in the engine, through wasmtime-py. Prints one JSON line."""

import json
import time
from pathlib import Path

t0 = time.perf_counter()
from workmem import Engine  # noqa: E402

engine = Engine()
engine.new_memory().render()
cold = time.perf_counter() - t0

data = Path(__file__).resolve().parents[2] / "host" / "bench" / "benches" / "data"
setup = (data / "setup.dsl").read_text()
update = (data / "update-4k.dsl").read_text()
noop = "KEY_LEARNINGS:\n  ARCHIVE:\n    - KL-999 because it does not exist\n"
at = "2026-11-22T12:00:00Z"
start = engine.new_memory()
start.apply(setup, at)
state = start.save()


def median_each(samples: int, f) -> float:
    """Median of `samples` timings of `f`, each on a fresh memory at the setup state (not timed)."""
    times = []
    for _ in range(samples):
        memory = engine.load_memory(state)
        t = time.perf_counter()
        f(memory)
        times.append(time.perf_counter() - t)
    times.sort()
    return times[samples // 2]


def median(samples: int, batch: int, f) -> float:
    times = []
    for _ in range(samples):
        t = time.perf_counter()
        for _ in range(batch):
            f()
        times.append((time.perf_counter() - t) / batch)
    times.sort()
    return times[samples // 2]


median_each(20, lambda m: m.apply(update, at))  # warm up
apply = median_each(101, lambda m: m.apply(update, at))
noop_apply = median_each(101, lambda m: m.apply(noop, at))
call = median(101, 100, engine.overview_template)
print(json.dumps({"runtime": "Python (wasmtime-py)", "apply_us": apply * 1e6, "noop_us": noop_apply * 1e6,
                  "call_us": call * 1e6, "cold_ms": cold * 1e3}))
