"""A session's message log written from Python in the CLI's format, under its lock: the CLI
reads what Python wrote (its history, its view after a compaction the engine planned, the
originals by number), and Python reads what the CLI wrote. `WORKMEM_BIN` is the CLI `make
test-python` builds."""

import json
import os
import subprocess
from pathlib import Path

import typing

import pytest

from workmem import ChatMessage, Engine, Entry, Session, SessionError, ToolCall


def cli(root: Path, *args: str) -> typing.Any:
    binary = os.environ.get("WORKMEM_BIN")
    assert binary, "WORKMEM_BIN names the workmem CLI (make test-python sets it)"
    done = subprocess.run([binary, "--sessions-dir", str(root), "--json", *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def steps(n: int) -> list:
    out = [ChatMessage("user", "Read src/f0.py to src/f9.py and count the odd values.")]
    for i in range(n):
        out.append(ChatMessage("assistant", "", tool_calls=[ToolCall(f"call_{i}", "read_file", json.dumps({"path": f"src/f{i}.py"}))]))
        out.append(ChatMessage("tool", "".join(f"src/f{i}.py:{k}: value_{i}_{k} = {k * 7 + i}\n" for k in range(60)), tool_call_id=f"call_{i}"))
    return out


def test_a_session_python_writes_is_one_the_cli_reads(engine: Engine, tmp_path: Path) -> None:
    with Session.create(tmp_path, engine, cwd="/projects/app") as s:
        assert s.path.parent.name == "--projects-app--"
        seqs = s.append(steps(10))
        assert seqs == list(range(1, 22))
        history = cli(tmp_path, "history", "--session", str(s.path))
        assert [e["seq"] for e in history] == seqs
        assert history[0]["message"]["content"] == "Read src/f0.py to src/f9.py and count the odd values."
        assert history[1]["message"]["tool_calls"][0]["id"] == "call_0" and history[2]["message"]["tool_call_id"] == "call_0"
        # The engine's fallback plans a compaction of the view; Python logs it; the CLI's view
        # is then the engine's view, and the originals read back whole.
        view = s.view(engine).entries
        for e in view:
            e.tokens = len(e.message.content) // 3 + 4
        used = sum(e.tokens for e in view)
        archive_to = "working-memory/detail/history.md"
        planned = engine.fallback(view, used=used, threshold=used // 2, goal=used // 3, keep_recent=2,
                                  archive_to=archive_to, archive_lines=s.archive_lines(archive_to))
        assert planned is not None and planned.replacements
        seq = s.log_compaction(planned, archive_to=archive_to)
        assert seq == 22
        after = s.view(engine)
        assert after.last_compaction is not None and after.last_compaction["notice"] == planned.notice
        assert [e.message.content for e in after.entries] == [e.message.content for e in planned.view]
        shown = cli(tmp_path, "history", "--session", str(s.path))
        assert [e["message"]["content"] for e in shown] == [e.message.content for e in planned.view]
        first = planned.replacements[0].replaces[0]
        original = cli(tmp_path, "history", "--session", str(s.path), "--seq", str(first))
        assert original[0]["message"]["content"] == steps(10)[first - 1].content
        assert s.originals((first, first))[0][1].content == steps(10)[first - 1].content
        assert (s.path / archive_to).read_text().strip(), "the archive text was written first"
        # `workmem context` builds the next request from this session.
        request = cli(tmp_path, "context", "--session", str(s.path), "--history", "all")
        assert request["messages"][-1]["content"].startswith("<context_meta>")


def test_python_reads_what_the_cli_wrote_and_appends_after_it(engine: Engine, tmp_path: Path) -> None:
    made = cli(tmp_path, "session", "new")
    path = Path(made["dir"])
    with Session.open(path) as s:
        assert s.records() == [] and s.view(engine).entries == []
        s.append([ChatMessage("user", "hello")])
        assert [e["message"]["content"] for e in cli(tmp_path, "history", "--session", str(path))] == ["hello"]


def test_a_bad_log_line_is_named_and_nothing_is_lost(engine: Engine, tmp_path: Path) -> None:
    with Session.create(tmp_path, engine) as s:
        s.append([ChatMessage("user", "first")])
        with open(s.path / "messages.jsonl", "a") as f:
            f.write("{not json}\n")
        before = (s.path / "messages.jsonl").read_bytes()
        with pytest.raises(SessionError, match=r"messages\.jsonl:2:2: "):
            s.view(engine)
        assert (s.path / "messages.jsonl").read_bytes() == before
        with pytest.raises(SessionError, match="exists already"):
            Session.create(tmp_path, engine, id=s.path.name)
        with pytest.raises(SessionError, match="not a session ID"):
            Session.create(tmp_path, engine, id="../escape")


def test_a_record_cut_short_by_a_crash_is_not_one(engine: Engine, tmp_path: Path) -> None:
    with Session.create(tmp_path, engine) as s:
        s.append([ChatMessage("user", "first")])
        with open(s.path / "messages.jsonl", "a") as f:
            f.write('{"seq":2,"at":"x","kind":"mess')
        assert [r["seq"] for r in s.records()] == [1]
        assert s.append([ChatMessage("assistant", "second")]) == [2]
        assert [e.message.content for e in s.view(engine).entries] == ["first", "second"]


def test_a_handle_reads_on_from_where_it_was_and_anew_when_the_log_was_replaced(engine: Engine, tmp_path: Path) -> None:
    with Session.create(tmp_path, engine) as s, Session.open(s.path) as other:
        s.append([ChatMessage("user", "first")])
        assert [e.message.content for e in s.view(engine).entries] == ["first"]
        other.append([ChatMessage("assistant", "second")])
        assert [e.message.content for e in s.view(engine).entries] == ["first", "second"], "another writer's record read on"
        log = s.path / "messages.jsonl"
        replaced = log.read_text().replace('"first"', '"FIRST"')
        (s.path / "messages.new").write_text(replaced)
        os.replace(s.path / "messages.new", log)
        assert [e.message.content for e in s.view(engine).entries] == ["FIRST", "second"], "a replaced log read anew"


def test_the_adapters_count_every_message_as_the_rust_host_does(engine: Engine, tmp_path: Path) -> None:
    """tests/data/tokens.json holds the Rust host's counts (a Rust test keeps them its own)."""
    from workmem.bound import Bound

    data = json.loads((Path(__file__).resolve().parents[3] / "tests" / "data" / "tokens.json").read_text())
    with Session.create(tmp_path, engine) as s:
        bound = Bound(s, engine)
        counted = {c["name"]: bound.tokens(ChatMessage(c["role"], c["content"], tool_calls=[ToolCall(f"c{i}", n, a) for i, (n, a) in enumerate(c["tool_calls"])]))
                   for c in data["cases"]}
    assert counted == {c["name"]: c["tokens"] for c in data["cases"]}


def test_read_history_checks_the_numbers_a_model_sends_and_caps_what_it_echoes(engine: Engine, tmp_path: Path) -> None:
    from workmem.bound import Bound

    with Session.create(tmp_path, engine, cwd="/projects/app") as s:
        s.append(steps(2))
        bound = Bound(s, engine)
        whole = bound.answer("read_history", {"seq": "1"})
        assert whole.startswith("### #1 user\n")
        assert bound.answer("read_history", {"seq": "1", "from": 5}) != whole, "a byte to read on from"
        # 2^32 + 5 once read message 1 from byte 5: a 32-bit wrap.
        for bad in (2**32 + 5, -1, 1.5, True, "5"):
            assert bound.answer("read_history", {"seq": "1", "from": bad}) == 'error: read_history needs a non-negative integer argument "from"', bad
        refused = bound.answer("read_history", {"seq": "x" * 200_000})
        assert refused.startswith("error: seq must be") and len(refused) < 200, len(refused)


def test_an_archive_grows_by_appending(engine: Engine, tmp_path: Path) -> None:
    archive_to = "working-memory/detail/history.md"

    def compact(s: Session) -> None:
        view = s.view(engine).entries
        for e in view:
            e.tokens = len(e.message.content) // 3 + 4
        used = sum(e.tokens for e in view)
        planned = engine.fallback(view, used=used, threshold=used // 2, goal=used // 3, keep_recent=2,
                                  archive_to=archive_to, archive_lines=s.archive_lines(archive_to))
        assert planned is not None and planned.archive
        s.log_compaction(planned, archive_to=archive_to)

    with Session.create(tmp_path, engine, cwd="/projects/app") as s:
        s.append(steps(10))
        compact(s)
        path = s.path / archive_to
        first, inode = path.read_bytes(), path.stat().st_ino
        s.append(steps(10)[1:])
        compact(s)
        assert path.stat().st_ino == inode and path.read_bytes().startswith(first), "appended to, not rewritten"
        # A tail a crash tore: counted as a line, and ended before the next text.
        with open(path, "ab") as f:
            f.write(b"torn")
        lines = s.archive_lines(archive_to)
        assert lines == path.read_bytes().count(b"\n") + 1
        s.append(steps(10)[1:])
        compact(s)
        text = path.read_text().split("\n")
        assert text[lines - 1] == "torn" and text[lines] != "", "the next compaction's text starts on a line of its own"
