"""The session lock across the four runtimes at once, as an attacker found it losing updates:
writers in Rust (the CLI), Python, Node and Go apply updates to one session together while the
suite plants holder files of crashed writers, stalls writers inside and outside the lock
(SIGSTOP, longer than a holder file may stay empty), and kills some with SIGKILL. Every update a
writer acknowledged must be in the memory exactly once, the update log numbered once each, and
the session must load. Bounded: each writer applies a few updates, and the suite gives up after
DEADLINE seconds.

Run by `make test-lock`: WORKMEM_BIN (the CLI), WORKMEM_PYTHON (the venv's Python, with the
package), WORKMEM_GO_WRITER (packages/go's test binary, whose TestLockWriter is a writer)."""

import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
UPDATES, ROUNDS, DEADLINE = 16, 3, 240
HOLDER = ".lock.holder"
# What a writer prints as it acknowledges an update (Go's test binary prints PASS besides).
TAG = re.compile(r"(cli|python|node|go)-\d+-\d+")


def dsl(tag: str) -> str:
    return f"KEY_LEARNINGS:\n  ADD:\n    - because it races: {tag}\n"


def writers(session: Path) -> list:
    """One command per runtime, each applying UPDATES updates and printing each one's tag once acknowledged."""
    node = (f"import {{ Session }} from {json.dumps((ROOT / 'packages/js/session.js').as_uri())};"
            f"const s = await Session.open(process.argv[1]);"
            f"for (let i = 0; i < {UPDATES}; i++) {{ const tag = `node-${{process.pid}}-${{i}}`;"
            f"await s.apply({json.dumps(dsl('TAG'))}.replace('TAG', tag)); console.log(tag); }}")
    python = (f"import os, sys, workmem\nfrom workmem.session import Session\n"
              f"e = workmem.Engine(); s = Session.open(sys.argv[1])\n"
              f"for i in range({UPDATES}):\n"
              f"    tag = f'python-{{os.getpid()}}-{{i}}'\n"
              f"    s.apply(e, {json.dumps(dsl('TAG'))}.replace('TAG', tag), workmem.now()); print(tag, flush=True)\n")
    # A CLI call the suite killed (137) acknowledged nothing; the loop goes on.
    cli = (f"for i in $(seq 0 {UPDATES - 1}); do tag=cli-$$-$i; "
           f"printf 'KEY_LEARNINGS:\\n  ADD:\\n    - because it races: %s\\n' \"$tag\" | \"$WORKMEM_BIN\" --json apply --session \"$1\" - > /dev/null; "
           f"rc=$?; [ $rc -eq 137 ] && continue; [ $rc -eq 0 ] || exit 1; echo \"$tag\"; done")
    env = dict(os.environ, WORKMEM_LOCK_SESSION=str(session), WORKMEM_LOCK_UPDATES=str(UPDATES))
    return [
        (["bash", "-c", cli, "cli", str(session)], env),
        ([os.environ["WORKMEM_PYTHON"], "-c", python, str(session)], env),
        (["node", "--input-type=module", "-e", node, str(session)], env),
        ([os.environ["WORKMEM_GO_WRITER"], "-test.run=^TestLockWriter$", "-test.v=false"], env),
    ]


def dead_pid() -> int:
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def plant(session: Path, stop: threading.Event, rng: random.Random) -> None:
    """Holder files of crashed writers (a dead process's, one under the flock), each only
    where none is, and whole: linked from a file written first, as a writer takes one."""
    spare = session.parent / f"{session.name}.planted"
    while not stop.wait(rng.uniform(0.001, 0.01)):
        spare.write_text(rng.choice([f"{dead_pid()} 00\n", f"{dead_pid()} 01 flock\n"]))
        try:
            os.link(spare, session / HOLDER)
        except FileExistsError:
            pass
        spare.unlink()


def watch(session: Path, stop: threading.Event, seen: dict) -> None:
    """Reads the holder file over and over: no writer may ever show one empty (one taken whole
    cannot be broken as a crash's that was only slow to write it)."""
    while not stop.is_set():
        try:
            text = (session / HOLDER).read_bytes()
        except OSError:
            continue
        seen["reads"] += 1
        if not text.strip():
            seen["empty"] += 1


def holder_pid(session: Path) -> int:
    try:
        return int((session / HOLDER).read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0


def ours(pid: int, procs: list) -> bool:
    """Whether `pid` is one of the writers or a CLI call of theirs."""
    try:
        ppid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return False
    return any(p.pid in (pid, ppid) and p.poll() is None for p in procs)


def disturb(session: Path, procs: list, stop: threading.Event, rng: random.Random, done: dict) -> None:
    """Stalls the writer inside the lock (the one its holder file names) for longer than a
    holder file may stay empty, or one outside it, and kills one inside the lock twice a round
    with SIGKILL."""
    while not stop.wait(rng.uniform(0.05, 0.2)):
        pid = holder_pid(session)
        if not ours(pid, procs):
            continue
        # Kill, stall, kill, then stalls: every round kills two inside the lock.
        if len(done["killed"]) < 2 and done["stalls"] >= len(done["killed"]):
            os.kill(pid, signal.SIGKILL)
            done["killed"].add(pid)
            continue
        if rng.random() < 0.5:
            live = [p.pid for p in procs if p.poll() is None]
            pid = rng.choice(live) if live else pid
        os.kill(pid, signal.SIGSTOP)
        done["stalls"] += 1
        time.sleep(2.5)
        os.kill(pid, signal.SIGCONT)


def round_(n: int, fixture: Path, scratch: Path) -> int:
    session = scratch / f"s{n}"
    shutil.copytree(fixture, session)
    rng = random.Random(n)
    # Three Node writers: they have no flock, so they break crash leftovers among themselves.
    procs = [subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for count, (cmd, env) in zip((2, 2, 3, 2), writers(session)) for _ in range(count)]
    stop = threading.Event()
    done: dict = {"killed": set(), "stalls": 0}
    killed = done["killed"]
    seen = {"reads": 0, "empty": 0}
    helpers = [threading.Thread(target=plant, args=(session, stop, rng)), threading.Thread(target=disturb, args=(session, procs, stop, rng, done)),
               threading.Thread(target=watch, args=(session, stop, seen))]
    for h in helpers:
        h.start()
    acked, failed = [], []
    end = time.monotonic() + DEADLINE
    try:
        for p in procs:
            out, err = p.communicate(timeout=max(1, end - time.monotonic()))
            acked += [line for line in out.split() if TAG.fullmatch(line)]
            if p.returncode != 0 and p.pid not in killed:
                failed.append(f"{p.args[0]} exited {p.returncode}: {err[-2000:]}")
    finally:
        stop.set()
        for h in helpers:
            h.join()
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert not failed, "\n".join(failed)
    assert not seen["empty"], f"round {n}: the holder file was seen empty {seen['empty']} times in {seen['reads']} reads"
    assert killed and done["stalls"], f"round {n}: the suite killed {len(killed)} writers and stalled {done['stalls']}: the writers ended first"
    # One writer more: it breaks what a crash left (a holder file, a planted one) and finishes
    # the commit a writer killed inside the lock left pending, as the next writer always does.
    final = subprocess.run([os.environ["WORKMEM_BIN"], "--json", "apply", "--session", str(session), "-"], input=dsl("final"),
                           capture_output=True, text=True, timeout=120)
    assert final.returncode == 0, final.stdout + final.stderr
    state = json.loads((session / "state.json").read_text())
    texts = [learning["text"] for learning in state["learnings"]]
    for tag in acked:
        count = sum(t.rsplit(": ", 1)[-1] == tag for t in texts)
        assert count == 1, f"round {n}: acknowledged update {tag} is in the memory {count} times"
    seqs = [json.loads(line)["seq"] for line in (session / "updates.jsonl").read_text().splitlines()]
    assert seqs == list(range(1, len(seqs) + 1)), f"round {n}: the update log is numbered {seqs}"
    assert state["updates"] == len(seqs), f"round {n}: state.json says {state['updates']} updates, the log {len(seqs)}"
    shown = subprocess.run([os.environ["WORKMEM_BIN"], "--json", "show", "--session", str(session)], capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    return len(acked), len(killed), done["stalls"]


def main() -> None:
    fixture = ROOT / "tests/data/session/before"
    with tempfile.TemporaryDirectory(prefix="workmem-lock-") as scratch:
        for n in range(ROUNDS):
            started = time.monotonic()
            acked, killed, stalls = round_(n, fixture, Path(scratch))
            print(f"lock: round {n}: {acked} acknowledged updates from 9 writers in 4 runtimes, each once, "
                  f"{killed} killed inside the lock, {stalls} stalled ({time.monotonic() - started:.1f} s)")


if __name__ == "__main__":
    sys.exit(main())
