"""Session directories as the CLI writes them: the shared fixture (tests/data/session) committed
byte for byte, a crash's pending commit finished, stale and refused commits changing nothing."""

import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest

from workmem import ChatMessage, Session, SessionError, WorkmemError

from conftest import TESTS

FIXTURE = TESTS / "data" / "session"
AT = "2026-11-23T12:00:00Z"
FILES = ["state.json", "updates.jsonl", "working-memory/overview.md", "meta.json"]


def fixture_bytes(directory: Path, name: str) -> str:
    text = (directory / name).read_text()
    if name == "meta.json":  # the committer's clock aside
        return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith('"updated_at"'))
    return text


def copy(tmp_path: Path) -> Path:
    return Path(shutil.copytree(FIXTURE / "before", tmp_path / "s"))


def files(directory: Path) -> dict:
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def test_the_shared_fixture_commits_byte_for_byte(engine, tmp_path):
    directory = copy(tmp_path)
    with Session.open(directory) as session:
        applied = session.apply(engine, (FIXTURE / "update.dsl").read_text(), at=AT)
        assert applied.seq == 2
        assert session.overview() == applied.overview
    for name in FILES:
        assert fixture_bytes(directory, name) == fixture_bytes(FIXTURE / "after", name), name
    assert not (directory / "commit.pending.json").exists()


def test_a_pending_commit_from_any_runtime_is_finished_on_load(engine, tmp_path):
    directory = copy(tmp_path)
    shutil.copy(FIXTURE / "pending.json", directory / "commit.pending.json")
    with Session.open(directory) as session:
        memory = session.load_memory(engine)
    assert memory.snapshot().updates == 2
    for name in FILES:
        assert fixture_bytes(directory, name) == fixture_bytes(FIXTURE / "after", name), name


def test_commit_after_load_and_a_stale_commit_is_refused(engine, tmp_path):
    directory = copy(tmp_path)
    session = Session.open(directory)
    first, second = session.load_memory(engine), session.load_memory(engine)
    session.commit(first.apply((FIXTURE / "update.dsl").read_text(), at=AT, overview=True, state=True))
    before = files(directory)
    stale = second.apply("KEY_LEARNINGS:\n  ADD:\n    - because it races: a second writer\n", overview=True, state=True)
    with pytest.raises(SessionError, match="another writer committed"):
        session.commit(stale)
    assert files(directory) == before
    # apply commits: committing what it returned again says so, and changes nothing.
    done = session.apply(engine, "KEY_LEARNINGS:\n  ADD:\n    - because it is one step: apply commits\n", at=AT)
    before = files(directory)
    with pytest.raises(SessionError, match=r"update 3 is already committed: apply\(\) commits what it applies"):
        session.commit(done)
    assert files(directory) == before


def test_invalid_dsl_changes_nothing(engine, tmp_path):
    directory = copy(tmp_path)
    before = files(directory)
    with pytest.raises(WorkmemError, match="first at 3:7"):
        Session.open(directory).apply(engine, "KEY_LEARNINGS:\n  ADD:\n    - no reason\n")
    assert files(directory) == before


def test_not_a_session_and_symlinks_are_refused(engine, tmp_path):
    with pytest.raises(SessionError, match="not a session"):
        Session.open(tmp_path)
    directory = copy(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "overview.md").write_text("secret\n")
    shutil.rmtree(directory / "working-memory")
    (directory / "working-memory").symlink_to(outside)
    session = Session.open(directory)
    with pytest.raises(SessionError, match="symlink is never followed"):
        session.overview()
    before = files(directory)
    with pytest.raises(SessionError):
        session.apply(engine, (FIXTURE / "update.dsl").read_text())
    assert (outside / "overview.md").read_text() == "secret\n"
    assert files(directory) == before


def test_a_live_holder_file_holds_a_commit_and_a_gone_ones_is_broken(engine, tmp_path):
    """Node's writer holds a session through `.lock.holder` alone (host/store/src/holder.rs):
    Python waits for a live holder after its flock, and breaks a dead or long-empty one."""
    directory = copy(tmp_path)
    other = subprocess.Popen(["sleep", "30"])
    (directory / ".lock.holder").write_text(f"{other.pid} 0123\n")
    with Session.open(directory) as session:
        done = threading.Event()
        writer = threading.Thread(target=lambda: (session.append([ChatMessage("user", "waits")]), done.set()))
        writer.start()
        assert not done.wait(0.15), "the commit waits while the holder lives"
        other.kill()
        other.wait()
        writer.join(5)
        assert done.is_set()
        (directory / ".lock.holder").write_text("")
        os.utime(directory / ".lock.holder", (time.time() - 10, time.time() - 10))
        assert session.append([ChatMessage("user", "after a crash")]) == [2]
        # One written under the flock, which this writer now holds, is a crash's, whatever
        # process took its number since (this one's, here).
        (directory / ".lock.holder").write_text(f"{os.getpid()} 0123 flock\n")
        assert session.append([ChatMessage("user", "after a killed CLI")]) == [3]
        assert [r["seq"] for r in session.records()] == [1, 2, 3]
    assert not (directory / ".lock.holder").exists()


def test_a_holder_by_a_reused_number_is_broken_and_what_is_no_holder_is_refused_at_once(engine, tmp_path):
    """A holder naming a live process that started at another time (its number reused: a
    restarted container's PID 1) is a crash's; a symlink, FIFO or folder in the holder file's
    place is refused at once, saying so, where it once kept the writer waiting."""
    from workmem.session import _started

    directory = copy(tmp_path)
    holder = directory / ".lock.holder"
    with Session.open(directory) as session:
        start = _started(os.getpid())
        assert start is not None, "Linux tells when a process started"
        holder.write_text(f"{os.getpid()} 0123@{start + 1}\n")
        assert session.append([ChatMessage("user", "after a restart")]) == [1]
        for plant in (lambda: holder.symlink_to("/etc/hostname"), lambda: os.mkfifo(holder), lambda: holder.mkdir()):
            plant()
            began = time.monotonic()
            with pytest.raises(SessionError, match="no workmem writer made it; remove it"):
                session.append([ChatMessage("user", "refused")])
            assert time.monotonic() - began < 5
            holder.rmdir() if holder.is_dir() and not holder.is_symlink() else holder.unlink()
        assert [r["seq"] for r in session.records()] == [1]


def test_a_request_is_assembled_with_context_meta_last(engine):
    from workmem import ChatMessage, ContextRequest, ContextStats

    history = [ChatMessage("user", "a"), ChatMessage("assistant", "b"), ChatMessage("user", "c")]
    messages = engine.assemble(ContextRequest(system_prompt="You help.", overview="# Overview\nFixing units.py\n", history=history,
                                              active_turn=2, history_mode="last-n", last_n=1, agents_md="be brief"))
    assert [m.role for m in messages] == ["system", "system", "system", "user"]
    # A memory with nothing in it yet is not sent.
    empty = engine.assemble(ContextRequest(system_prompt="You help.", overview="# Overview\n", history=history, history_mode="all"))
    assert [m.role for m in empty] == ["system", "user", "assistant", "user"]
    assert messages[0].content.startswith("You help.\n\n## Working Memory")
    assert messages[-1].content == "c"
    quiet = engine.context_meta(ContextStats(tokens_used=100, tokens_max=1000, compact_at=750))
    assert quiet == '<context_meta>\n{"tokens_used":100,"tokens_percent":10}\n</context_meta>'
    noticed = engine.context_meta(ContextStats(tokens_used=100, tokens_max=1000, compact_at=750, compaction_notice="History was compacted."))
    assert '"auto_compact_at":750}\nHistory was compacted.' in noticed
    assert engine.overview_maintained("# Overview\n\nWe found the bug in units.py.\n")
    assert not engine.overview_maintained(engine.overview_template())
    with pytest.raises(ValueError, match="history_mode"):
        engine.assemble(ContextRequest(system_prompt="", overview="", history_mode="recent"))
