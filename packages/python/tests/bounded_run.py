"""What every framework adapter's test checks of a finished 40-step run against the proxy's
scripted model (tests/proxy/upstream.py): one place, so the adapters are held to the same."""

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from workmem import Session

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests" / "proxy"))
import upstream  # noqa: E402

STEPS, WINDOW, FILE_SIZE = 40, 8000, 3000


def script(log: Path) -> Any:
    """The loop: a file tool over outputs of about 1,600 tokens, an update of the memory at step
    5, reads back from step 20, at a window the model enforces as a provider does."""
    return upstream.Script(steps=STEPS, files=12, file_size=FILE_SIZE, tool="read_file", arguments=lambda p: {"path": p},
                           update_at=5, read_back_at=STEPS // 2, log=log, window=WINDOW)


def check(script: Any, log: Path, session: Session, tmp_path: Path) -> None:
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    assert not [r for r in entries if "over_window" in r], "no request crossed the window"
    main = [r for r in entries if r.get("main")]
    # A request a step (the memory update and the read back are steps too), and the last answer.
    assert len(main) == STEPS + 1 and all(not r["unpaired"] for r in main), [r["unpaired"] for r in main if r["unpaired"]]
    # Responses: the reasoning of the last turn came back with its calls, as the provider requires.
    assert all(not r["unreasoned"] for r in main), [r["unreasoned"] for r in main if r["unreasoned"]]
    assert set(main[-1]["tools"]) >= {"read_file", "read_history", "update_memory"}
    # Every output reached the model whole before anything replaced it.
    outputs = {r["last_call"] for r in main if (r["last_call"] or "").startswith("s-")}
    assert len(outputs) >= STEPS * 3 // 4 and outputs <= set(script.originals), sorted(outputs - set(script.originals))
    # A compaction happened, and read_history gave back an output's original bytes.
    assert [r for r in session.records() if r["kind"] == "compaction"]
    assert [True] in [r["read_back"] for r in main], "the scripted read_history did not get an original back"
    # The memory update the model made survived every compaction.
    assert "every file has numbered lines" in session.overview()
    # The session is one the CLI shows.
    page = tmp_path / "page.html"
    done = subprocess.run([os.environ["WORKMEM_BIN"], "view", "--session", str(session.path), "--out", str(page)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "<html" in page.read_text().lower(), done.stderr


def logged_since(session: Session, records: int) -> Any:
    """The log's messages after its first `records` records, as (role, content)."""
    return [(r["role"], r["content"]) for r in session.records()[records:]]


def serve() -> None:
    """For the adapters of the other runtimes (packages/js/test-frameworks): serves the
    scripted model, prints `{"port", "files"}` (the file tool's answers) as a line, then, for
    each `check SESSION_DIR TMP_DIR` line read, runs `check` on that session and prints `ok` or
    why not (a `reset` line empties the request log first). Ends with its input."""
    import traceback

    log = Path(sys.argv[2])
    loop = script(log)
    server = upstream.start(loop)
    print(json.dumps({"port": server.server_address[1], "files": {k: loop.text(k) for k in range(1, 13)}}), flush=True)
    for line in sys.stdin:
        if line.strip() == "reset":
            log.write_text("")
            print("ok", flush=True)
            continue
        _, session_dir, tmp = line.split()
        try:
            with Session.open(session_dir) as session:
                check(loop, log, session, Path(tmp))
            print("ok", flush=True)
        except AssertionError:
            print(json.dumps(traceback.format_exc()), flush=True)


if __name__ == "__main__" and sys.argv[1:2] == ["serve"]:
    serve()
