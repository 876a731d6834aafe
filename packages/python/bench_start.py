"""Process start to first `apply`, cold (nothing cached: the component is compiled) and warm (the
compiled component loaded from the cache), in one run: `make bench-start`. Each sample is a new
interpreter that imports workmem, makes an Engine, and applies one update; the median of each
and their ratio are printed as one JSON line."""

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SAMPLES = 7
FIRST_APPLY = (
    "import sys, workmem\n"
    "e = workmem.Engine(compile_cache=sys.argv[1] if sys.argv[1] != '-' else False)\n"
    "e.new_memory().apply('KEY_LEARNINGS:\\n  ADD:\\n    - because it starts: the first apply\\n', workmem.now())\n"
)


def sample(cache: str) -> float:
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", FIRST_APPLY, cache], check=True)
    return time.perf_counter() - t


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        warm_dir = Path(tmp) / "warm"
        sample(str(warm_dir))  # fills the cache
        cold = [sample("-") for _ in range(SAMPLES)]
        warm = [sample(str(warm_dir)) for _ in range(SAMPLES)]
        bare = []
        for _ in range(SAMPLES):
            t = time.perf_counter()
            subprocess.run([sys.executable, "-c", "import workmem"], check=True)
            bare.append(time.perf_counter() - t)
    c, w, b = (statistics.median(x) * 1e3 for x in (cold, warm, bare))
    print(json.dumps({"runtime": "Python (wasmtime-py)", "cold_ms": round(c, 1), "warm_ms": round(w, 1),
                      "import_only_ms": round(b, 1), "cold_over_warm": round(c / w, 2), "target_ms": 100,
                      "met": w <= 100}))


if __name__ == "__main__":
    main()
