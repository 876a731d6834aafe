"""For examples/bench_runtimes.py: cold load + first call, then the median apply latency of
the 4 KB update, through wasmtime-py. Prints one JSON line."""

import json
import time
from pathlib import Path

t0 = time.perf_counter()
from workmem import Engine  # noqa: E402

engine = Engine()
empty = engine.empty_state()
cold = time.perf_counter() - t0

data = Path(__file__).resolve().parents[2] / "host" / "benches" / "data"
setup = (data / "setup.dsl").read_text()
update = (data / "update-4k.dsl").read_text()
now = "2026-11-22T12:00:00Z"
state = engine.apply(empty, setup, now).state


def median(samples: int, batch: int, f) -> float:
    for _ in range(batch * 3):
        f()
    times = []
    for _ in range(samples):
        start = time.perf_counter()
        for _ in range(batch):
            f()
        times.append((time.perf_counter() - start) / batch)
    times.sort()
    return times[samples // 2]


apply = median(101, 10, lambda: engine.apply(state, update, now))
roundtrip = median(101, 10, lambda: engine.merge(state, [], now))
call = median(101, 100, engine.empty_state)
print(json.dumps({"runtime": "Python (wasmtime-py)", "apply_us": apply * 1e6, "roundtrip_us": roundtrip * 1e6,
                  "call_us": call * 1e6, "cold_ms": cold * 1e3}))
