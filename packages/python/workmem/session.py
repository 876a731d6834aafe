"""Session directories, the same files the CLI writes (docs/cli.md, "Sessions on disk"), read and
committed as the CLI does ("One commit path"): under the session's lock (the CLI's, `flock` on
`.lock`), through a handle on the session directory with no symlink followed, each whole-file
write a temp file renamed into place, and a commit written whole to `commit.pending.json`
first, so a crash at any moment leaves a session that loads (the next lock holder, in any
runtime, finishes it). The lock is `flock` and, while it is held, `.lock.holder`: the half
that Node's writer, which has no file locks, takes too (`host/store/src/holder.rs` says how)."""

from __future__ import annotations

import errno
import fcntl
import itertools
import json
import os
import stat
import time
from contextlib import contextmanager, suppress
from pathlib import Path
import hashlib
import re
import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, Dict, Iterator, List, Optional, Sequence, Tuple, Union

if TYPE_CHECKING:
    from . import Applied, ChatMessage, Compaction, Engine, Entry, Memory

FORMAT = "workmem-session/1"
META, STATE, LOG, LOCK, PENDING = "meta.json", "state.json", "updates.jsonl", ".lock", "commit.pending.json"
MEMORY_DIR, OVERVIEW = "working-memory", "overview.md"
MESSAGES = "messages.jsonl"
HOLDER, BREAK = ".lock.holder", ".lock.holder.break"
# The lock's protocol and its timings are host/store/src/holder.rs's: how long a holder file
# may stay empty before it counts as a crash's, a break may take before its breaker counts as
# gone, a writer waits for the lock at most, and how often a waiting writer looks again.
_EMPTY_STALE, _BREAK_STALE, LOCK_WAIT, _POLL = 2.0, 2.0, 60.0, 0.005

_temps = itertools.count()


class SessionError(Exception):
    """A session directory that cannot be read or committed; the message says which file and why."""


class Session:
    """A session directory the CLI (or any runtime) made. `open` checks meta.json's format
    marker; `apply` loads the memory, applies an update and commits it under the session's
    lock, as `workmem apply` does."""

    def __init__(self, fd: int, path: Path):
        self._fd = fd
        self.path = path
        # The log as far as this handle has read it (the file's identity, the bytes of whole
        # records, the records, lines counted) and the view folded from them: the log is only
        # appended to, so each read takes what was appended since, where a read of the whole
        # log on every model call grew with the session.
        self._read_to: Tuple[Tuple[int, int], int, List[Dict[str, Any]], int] = ((0, 0), 0, [], 0)
        self._folded: Tuple[int, List["Entry"], Optional[Dict[str, Any]]] = (0, [], None)

    @classmethod
    def open(cls, path: Union[str, Path]) -> "Session":
        path = Path(path)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as e:
            raise SessionError(f"{path} is not a session directory: {e.strerror}") from e
        session = cls(fd, path)
        try:
            meta = session.meta()
        except FileNotFoundError:
            session.close()
            raise SessionError(f"{path} is not a session: it has no meta.json") from None
        except SessionError as e:
            session.close()
            raise SessionError(f"{path} is not a session: {e}") from e
        if meta.get("format") != FORMAT:
            session.close()
            raise SessionError(f"{path} is not a session: meta.json's format is {meta.get('format')!r}, not {FORMAT!r}")
        return session

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()

    @classmethod
    def create(cls, root: Union[str, Path], engine: "Engine", id: Optional[str] = None,
               cwd: Union[str, Path, None] = None) -> "Session":
        """A new session under the sessions root `root` (the CLI's `--sessions-dir`), filed
        under its working directory's folder as the CLI files it, so that `workmem session
        list`, `workmem view` and `workmem serve` find it; with a fresh ID (or `id`, refused
        when taken) and the engine's template for its memory. meta.json is written last: its
        format marker is what makes the directory a session."""
        cwd = Path(cwd) if cwd is not None else Path.cwd()
        folder = Path(root) / encode_cwd(str(cwd))
        folder.mkdir(parents=True, exist_ok=True)
        if id is not None and not _ID.fullmatch(id):
            raise SessionError(f"{id!r} is not a session ID: letters, digits, '-', '_' and '.', at most 128, not starting with '.'")
        for _ in range(64):
            name = id or _new_id()
            try:
                os.mkdir(folder / name)
                break
            except FileExistsError:
                if id is not None:
                    raise SessionError(f"a session {id!r} exists already in {folder}") from None
        else:
            raise SessionError(f"no fresh session ID was free in {folder}")
        # The directory just made, opened without following a link put in its place since.
        session = cls(os.open(folder / name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC), folder / name)
        try:
            os.mkdir(MEMORY_DIR, dir_fd=session._fd)
            with session._memory_dir() as d:
                for sub in ("detail", "archive"):
                    os.mkdir(sub, dir_fd=d)
                template = engine.overview_template()
                session._write(d, OVERVIEW, template.encode())
            for empty in (MESSAGES, LOG, LOCK):
                session._write(session._fd, empty, b"")
            from . import now

            at = now()
            meta = {"format": FORMAT, "id": name, "cwd": str(cwd), "created_at": at, "updated_at": at, "updates": 0,
                    "workmem_version": _version(), "rounds": 0, "memory_updated_round": 0, "token_correction": 0,
                    "uid": secrets.token_hex(16),
                    "memory_chain": {"shown": template, "to": hashlib.sha256(template.encode()).hexdigest()}}
            session._write(session._fd, META, _pretty(meta))
        except BaseException:
            session.close()
            raise
        return session

    # --- the message log (messages.jsonl), as the CLI keeps it -----------------------------

    def append(self, messages: Sequence["ChatMessage"], opaque: Sequence[Sequence[Any]] = ()) -> List[int]:
        """Appends `messages` to the log, numbered on from its last record, in one write under
        the session's lock, synced before it returns; gives their sequence numbers. `opaque`,
        one list a message where given, keeps parts of each in its framework's own shape (a
        reasoning item, an item ID) that the session never reads and gives back as they came."""
        with self._lock():
            fd = self._open(self._fd, MESSAGES, os.O_RDWR | os.O_CREAT | os.O_APPEND)
            try:
                last = _last_seq(fd, truncate=True)
                from . import now

                at, lines, seqs = now(), [], []
                for i, m in enumerate(messages):
                    last += 1
                    record: Dict[str, Any] = {"seq": last, "at": at, "kind": "message", **_message_json(m)}
                    if i < len(opaque) and opaque[i]:
                        record["opaque"] = list(opaque[i])
                    lines.append(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
                    seqs.append(last)
                os.write(fd, "".join(lines).encode())
                os.fsync(fd)
                return seqs
            finally:
                os.close(fd)

    def records(self) -> List[Dict[str, Any]]:
        """Every whole record of the log, oldest first (one a crash cut short is not one). A
        line that does not parse is an error naming messages.jsonl, its line and column. Only
        what was appended since this handle last read it is read (the list is the handle's:
        do not change it)."""
        try:
            fd = self._open(self._fd, MESSAGES, os.O_RDONLY)
        except FileNotFoundError:
            return []
        try:
            st = os.fstat(fd)
            identity, offset, records, lines = self._read_to
            if identity != (st.st_dev, st.st_ino) or st.st_size < offset:
                identity, offset, records, lines = (st.st_dev, st.st_ino), 0, [], 0
                self._folded = (0, [], None)
            data = os.pread(fd, st.st_size - offset, offset) if st.st_size > offset else b""
        finally:
            os.close(fd)
        whole = data[:data.rfind(b"\n") + 1]
        records = list(records)
        for n, line in enumerate(whole.decode().split("\n")[:-1], lines + 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError as e:
                raise SessionError(f"{self.path / MESSAGES}:{n}:{getattr(e, 'colno', 1)}: {getattr(e, 'msg', e)}") from e
            if not isinstance(record, dict) or not isinstance(record.get("seq"), int) or record.get("kind") not in ("message", "compaction", "withdrawal"):
                raise SessionError(f"{self.path / MESSAGES}:{n}:1: not a log record (seq, kind message, compaction or withdrawal)")
            records.append(record)
        self._read_to = (identity, offset + len(whole), records, lines + whole.count(b"\n"))
        return records

    def view(self, engine: "Engine") -> "View":
        """The history the model sees: the log's messages with each compaction's replacements
        in place of what they replace, by the engine's rule (`apply_replacements`, the one the
        CLI's view follows too), and the last compaction folded in. Folded on from where this
        handle last folded it."""
        from . import Entry, Replacement

        records = self.records()
        folded, entries, last = self._folded
        if folded > len(records):
            folded, entries, last = 0, [], None
        entries = list(entries)
        for record in records[folded:]:
            if record["kind"] == "message":
                entries.append(Entry(record["seq"], _chat_message(record)))
            elif record["kind"] == "withdrawal":
                withdrawn = set(record["withdraws"])
                entries = [e for e in entries if e.seq not in withdrawn]
            else:
                replacements = [Replacement(list(r["replaces"]), _chat_message(r["message"])) for r in record["replacements"]]
                entries = engine.apply_replacements(entries, replacements)
                last = record
        self._folded = (len(records), entries, last)
        return View([Entry(e.seq, e.message, e.tokens) for e in entries], last)

    def originals(self, seqs: Tuple[int, int]) -> List[Tuple[int, "ChatMessage"]]:
        """The messages logged with sequence numbers `seqs[0]` to `seqs[1]`, as they were
        logged, whatever compacted them since (what `read_history` reads back)."""
        first, last = seqs
        return [(r["seq"], _chat_message(r)) for r in self.records() if r["kind"] == "message" and first <= r["seq"] <= last]

    def log_compaction(self, compaction: "Compaction", target: str = "fallback", strategy: str = "archive",
                       archive_to: Optional[str] = None) -> int:
        """Appends a compaction the engine planned (`Engine.fallback` or `Engine.compact`) to the
        log, its archive text first to `archive_to` under working-memory/ (a crash between the
        two leaves text nothing points to yet, and the history as it was); gives its sequence
        number."""
        with self._lock():
            archive = None
            if compaction.archive:
                if archive_to is None or not archive_to.startswith(MEMORY_DIR + "/"):
                    raise SessionError(f"the archive goes under {MEMORY_DIR}/, not {archive_to!r}")
                archive = archive_to
                self._append_archive(archive_to[len(MEMORY_DIR) + 1:], compaction.archive)
            record = {"kind": "compaction", "target": target, "strategy": strategy,
                      "replacements": [{"replaces": list(r.replaces), "message": _message_json(r.message)} for r in compaction.replacements],
                      **({"archive": archive} if archive else {}),
                      "notice": compaction.notice, "tokens_before": compaction.tokens_before,
                      "tokens_after": compaction.tokens_after, "round": int(self.meta().get("rounds", 0))}
            fd = self._open(self._fd, MESSAGES, os.O_RDWR | os.O_CREAT | os.O_APPEND)
            try:
                seq = _last_seq(fd, truncate=True) + 1
                from . import now

                line = json.dumps({"seq": seq, "at": now(), **record}, ensure_ascii=False, separators=(",", ":")) + "\n"
                os.write(fd, line.encode())
                os.fsync(fd)
                return seq
            finally:
                os.close(fd)

    def withdraw(self, seqs: Sequence[int], reason: str) -> int:
        """Takes the messages logged as `seqs` out of the view (an application's undo: an Agents
        SDK session's `pop_item`, `clear_session`), by appending a record that says so: the log
        still holds them, and `read_history` still reads them. Gives the record's number."""
        with self._lock():
            fd = self._open(self._fd, MESSAGES, os.O_RDWR | os.O_CREAT | os.O_APPEND)
            try:
                seq = _last_seq(fd, truncate=True) + 1
                from . import now

                line = json.dumps({"seq": seq, "at": now(), "kind": "withdrawal", "withdraws": list(seqs), "reason": reason},
                                  ensure_ascii=False, separators=(",", ":")) + "\n"
                os.write(fd, line.encode())
                os.fsync(fd)
                return seq
            finally:
                os.close(fd)

    def count_round(self) -> None:
        """One more request to the model (meta.json's `rounds`): what the reminder counts the
        rounds since the memory's last update by, and a compaction's notice is told on."""
        with self._lock():
            meta = self.meta()
            meta["rounds"] = int(meta.get("rounds", 0)) + 1
            self._write(self._fd, META, _pretty(meta))

    def _append_archive(self, relative: str, text: str) -> None:
        """Appends `text` to the archive file beneath working-memory/, synced: an archive grows
        by appending, so a compaction costs what it archives, not all that was archived before
        it. A tail a crash left torn (no newline) is ended first, so the lines the engine cites
        are the lines the file holds."""
        with self._memory_dir() as d, self._beneath(d, relative) as (fd, name):
            f = self._open(fd, name, os.O_RDWR | os.O_APPEND | os.O_CREAT)
            try:
                size = os.fstat(f).st_size
                data = text.encode()
                if size and os.pread(f, 1, size - 1) != b"\n":
                    data = b"\n" + data
                view = memoryview(data)
                while view:
                    view = view[os.write(f, view):]
                os.fsync(f)
            finally:
                os.close(f)
            if size == 0:
                os.fsync(fd)  # a new file's name, durable before the log points to it

    def archive_lines(self, archive_to: str) -> int:
        """How many lines the archive file `archive_to` (under working-memory/) holds: what
        `Engine.fallback`'s `archive_lines` takes, so that its handles cite the right lines. A
        torn last line counts: the next append ends it first."""
        with self._memory_dir() as d:
            try:
                data = self._read_beneath(d, archive_to[len(MEMORY_DIR) + 1:])
            except FileNotFoundError:
                return 0
            return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)

    def _read_beneath(self, dir_fd: int, relative: str) -> bytes:
        with self._beneath(dir_fd, relative) as (fd, name):
            return self._read(fd, name)

    @contextmanager
    def _beneath(self, dir_fd: int, relative: str) -> Iterator[Tuple[int, str]]:
        """The folder `relative`'s file is in, opened beneath `dir_fd` one folder at a time (no
        symlink followed), and the file's name."""
        parts = relative.split("/")
        if any(p in ("", ".", "..") for p in parts):
            raise SessionError(f"{relative!r} is not a path beneath {MEMORY_DIR}/")
        fd, opened = dir_fd, []
        try:
            for sub in parts[:-1]:
                fd = os.open(sub, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
                opened.append(fd)
            yield fd, parts[-1]
        finally:
            for o in opened:
                os.close(o)

    # --- reading --------------------------------------------------------------------------

    def meta(self) -> Dict[str, Any]:
        """meta.json: format, id, cwd, times, the update count and the agent's round counters."""
        return self._json(self._read(self._fd, META), META)

    def overview(self) -> str:
        """working-memory/overview.md, what gets injected into the prompt."""
        with self._memory_dir() as d:
            return self._read(d, OVERVIEW).decode()

    def load_memory(self, engine: "Engine") -> "Memory":
        """The session's memory in `engine` (a new one before the first update). Finishes a
        commit a crash interrupted first; a state.json missing after committed updates is an
        error, never a silent fresh start."""
        with self._lock():
            return self._load(engine)

    def apply(self, engine: "Engine", text: str, at: Optional[str] = None) -> "Applied":
        """Loads the memory, applies `text` (raising WorkmemError, changing nothing, when it
        has errors) and commits it, all under the session's lock: what `workmem apply` does.
        There is nothing to `commit` after it."""
        with self._lock():
            applied = self._load(engine).apply(text, at=at, overview=True, state=True)
            self._commit(applied)
            return applied

    def commit(self, applied: "Applied") -> None:
        """Commits an update applied to a memory `load_memory` gave (asked with overview and
        state, as `Memory.update` does): the way to see an update before it lands. Refused,
        changing nothing, when another writer committed since (load the memory again and redo
        the update), or when it is already committed."""
        with self._lock():
            last = self._last_seq()
            if applied.seq != last + 1:
                if applied.seq == last and self._state() == applied.state:
                    raise SessionError(f"update {applied.seq} is already committed: apply() commits what it applies; "
                                       "commit() is for an update applied to a memory from load_memory()")
                raise SessionError(f"update {applied.seq} does not follow the session's last update, {last}: another "
                                   "writer committed since the memory was loaded; load it again")
            self._commit(applied)

    def _state(self) -> Optional[str]:
        try:
            return self._read(self._fd, STATE).decode()
        except FileNotFoundError:
            return None

    # --- the commit path ------------------------------------------------------------------

    def _load(self, engine: "Engine") -> "Memory":
        try:
            state = self._read(self._fd, STATE).decode()
        except FileNotFoundError:
            updates = self._last_seq()
            if updates:
                raise SessionError(f"{self.path}: state.json is missing although {updates} updates were committed") from None
            return engine.new_memory()
        return engine.load_memory(state)

    def _commit(self, applied: "Applied") -> None:
        if applied.state is None or applied.overview is None:
            raise SessionError("commit needs an update applied with overview=True and state=True")
        # What could refuse a step (a meta.json that does not parse, a symlinked or missing
        # working-memory/, a symlinked overview) refuses the commit before anything is written.
        self.meta()
        try:
            os.mkdir(MEMORY_DIR, dir_fd=self._fd)
        except FileExistsError:
            pass
        with self._memory_dir() as d:
            try:
                os.close(self._open(d, OVERVIEW, os.O_RDONLY))
            except FileNotFoundError:
                pass
        commit = {"seq": applied.seq, "log_entry": applied.log_entry, "state": applied.state, "overview": applied.overview}
        self._write(self._fd, PENDING, _pretty(commit))
        self._finish(commit)

    def _finish(self, commit: Dict[str, Any]) -> None:
        """The steps of a commit, each safe to repeat."""
        log = self._open(self._fd, LOG, os.O_RDWR | os.O_CREAT | os.O_APPEND)
        try:
            if _last_seq(log, truncate=True) < commit["seq"]:
                os.write(log, (commit["log_entry"] + "\n").encode())
                os.fsync(log)
        finally:
            os.close(log)
        self._write(self._fd, STATE, commit["state"].encode())
        with self._memory_dir() as d:
            self._write(d, OVERVIEW, commit["overview"].encode())
        meta = self.meta()
        if meta.get("updates") != commit["seq"]:
            from . import now

            meta.update(updated_at=now(), updates=commit["seq"], memory_updated_round=meta.get("rounds", 0))
            self._write(self._fd, META, _pretty(meta))
        os.unlink(PENDING, dir_fd=self._fd)
        os.fsync(self._fd)

    @contextmanager
    def _lock(self) -> Iterator[None]:
        fd = self._open(self._fd, LOCK, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        try:
            deadline = time.monotonic() + LOCK_WAIT
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise SessionError(f"session {self.path} is busy: waited {LOCK_WAIT:.0f} s for its lock, which another process holds "
                                           f"with flock on {LOCK} (a workmem writer in Rust, Python or Go)") from None
                    time.sleep(_POLL)
            self._claim(deadline)
            try:
                try:
                    pending = self._read(self._fd, PENDING)
                except FileNotFoundError:
                    pass
                else:
                    self._finish(self._json(pending, PENDING))
                yield
            finally:
                # Not synced: a holder file a crash brings back names a dead process, and is broken.
                with suppress(FileNotFoundError):
                    os.unlink(HOLDER, dir_fd=self._fd)
        finally:
            os.close(fd)

    def _claim(self, deadline: float) -> None:
        """Takes the holder file (this process holds the flock), waiting while a live process
        holds it, until `deadline`; one whose writer is provably gone is broken, one writer at a
        time (host/store/src/holder.rs says how). The holder is taken whole: its words go to a
        spare file first, made once, which each try links as the holder file (refused where it
        is taken), so no writer ever sees one empty or half written."""
        start = _started(os.getpid())
        claim = f"{os.getpid()} {secrets.token_hex(8)}{'' if start is None else f'@{start}'} flock\n".encode()
        spare = f".{HOLDER}.tmp-{os.getpid()}-{next(_temps)}"
        fd = os.open(spare, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=self._fd)
        try:
            os.write(fd, claim)
        finally:
            os.close(fd)
        try:
            while True:
                try:
                    os.link(spare, HOLDER, src_dir_fd=self._fd, dst_dir_fd=self._fd, follow_symlinks=False)
                    return
                except FileExistsError:
                    pass
                except OSError as e:
                    raise SessionError(f"{self.path / HOLDER}: {e.strerror}") from e
                seen = self._look(HOLDER)
                if seen is None:
                    continue
                if _gone(seen, flocked=True):
                    self._break(seen)
                    continue
                if time.monotonic() >= deadline:
                    raise SessionError(f"session {self.path} is busy: waited {LOCK_WAIT:.0f} s for its lock, which {_describe(seen)}")
                time.sleep(_POLL)
        finally:
            os.unlink(spare, dir_fd=self._fd)

    def _look(self, name: str) -> Optional["_Seen"]:
        """`name` (the holder file or its break link) as it is now; None where it is not there.
        Anything but a regular file is no holder any writer makes: refused at once."""
        try:
            fd = self._open(self._fd, name, os.O_RDONLY)
        except FileNotFoundError:
            return None
        except SessionError as e:
            raise SessionError(f"{e}: no workmem writer made it; remove it") from None
        try:
            st = os.fstat(fd)
            now = time.time()
            return _Seen(os.read(fd, 256), st.st_ino, now - st.st_mtime, now - st.st_ctime)
        finally:
            os.close(fd)

    def _break(self, seen: "_Seen") -> None:
        """Breaks the holder file `seen`, judged a crash's, unless another writer is breaking one:
        it is linked as the break link first, and removed only if that link is the very file judged."""
        try:
            os.link(HOLDER, BREAK, src_dir_fd=self._fd, dst_dir_fd=self._fd, follow_symlinks=False)
        except FileNotFoundError:
            return
        except FileExistsError:
            other = self._look(BREAK)
            if other is not None and other.changed > _BREAK_STALE:
                with suppress(FileNotFoundError):
                    os.unlink(BREAK, dir_fd=self._fd)
            time.sleep(_POLL)
            return
        try:
            linked, held = self._look(BREAK), self._look(HOLDER)
            if linked is not None and held is not None and (linked.inode, linked.text) == (held.inode, held.text) == (seen.inode, seen.text):
                with suppress(FileNotFoundError):
                    os.unlink(HOLDER, dir_fd=self._fd)
        finally:
            with suppress(FileNotFoundError):
                os.unlink(BREAK, dir_fd=self._fd)

    def _last_seq(self) -> int:
        try:
            fd = self._open(self._fd, LOG, os.O_RDONLY)
        except FileNotFoundError:
            return 0
        try:
            return _last_seq(fd, truncate=False)
        finally:
            os.close(fd)

    # --- files beneath the session directory, no symlink followed ---------------------------

    def _open(self, dir_fd: int, name: str, flags: int) -> int:
        # O_NONBLOCK so that a FIFO put in a file's place cannot hang the open; fstat refuses it.
        try:
            fd = os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, 0o644, dir_fd=dir_fd)
        except FileNotFoundError:
            raise
        except OSError as e:
            raise SessionError(f"{self.path / name}: {'is a symlink, which is never followed' if e.errno == errno.ELOOP else e.strerror}") from e
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise SessionError(f"{self.path / name}: is not a regular file")
        os.set_blocking(fd, True)
        return fd

    def _read(self, dir_fd: int, name: str) -> bytes:
        fd = self._open(dir_fd, name, os.O_RDONLY)
        try:
            with os.fdopen(os.dup(fd), "rb") as f:
                return f.read()
        finally:
            os.close(fd)

    def _write(self, dir_fd: int, name: str, data: bytes) -> None:
        """Replaces `name` atomically: a temp file named as the CLI names its own (so a lock
        holder in any runtime sweeps it after a crash), fsynced and renamed."""
        tmp = f".{name}.tmp-{os.getpid()}-{next(_temps)}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=dir_fd)
        try:
            try:
                os.write(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            os.fsync(dir_fd)
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=dir_fd)
            except FileNotFoundError:
                pass
            raise

    @contextmanager
    def _memory_dir(self) -> Iterator[int]:
        try:
            fd = os.open(MEMORY_DIR, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=self._fd)
        except OSError as e:
            raise SessionError(f"{self.path / MEMORY_DIR}: {'is not a folder (a symlink is never followed)' if e.errno in (errno.ENOTDIR, errno.ELOOP) else e.strerror}") from e
        try:
            yield fd
        finally:
            os.close(fd)

    def _json(self, data: bytes, name: str) -> Dict[str, Any]:
        try:
            value = json.loads(data)
        except ValueError as e:
            raise SessionError(f"{self.path / name} does not parse: {e}") from e
        if not isinstance(value, dict):
            raise SessionError(f"{self.path / name} is not a JSON object")
        return value


@dataclass
class View:
    """The history the model sees (see `Session.view`), and the last compaction folded in:
    its `notice` is what the next request tells the model."""

    entries: List["Entry"] = field(default_factory=list)
    last_compaction: Optional[Dict[str, Any]] = None


_ID = re.compile(r"(?!\.)[A-Za-z0-9._-]{1,128}")


def encode_cwd(cwd: str) -> str:
    """The folder the CLI files a working directory's sessions under: `/home/me/app` is
    `--home-me-app--`."""
    return "--" + re.sub(r"[/\\:]", "-", cwd.lstrip("/\\")) + "--"


def _new_id() -> str:
    """`20261122-052054-3f9a`, as the CLI draws them: sortable by creation time."""
    from . import now

    stamp = "".join(c for c in now() if c.isdigit())
    return f"{stamp[:8]}-{stamp[8:14]}-{secrets.token_hex(2)}"


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("workmem")
    except PackageNotFoundError:
        return "0.0.0"


def _message_json(m: "ChatMessage") -> Dict[str, Any]:
    """A message as the log keeps it (the CLI's `Message`): empty fields left out."""
    out: Dict[str, Any] = {"role": m.role, "content": m.content}
    if m.tool_calls:
        out["tool_calls"] = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in m.tool_calls]
    if m.tool_call_id:
        out["tool_call_id"] = m.tool_call_id
    return out


def _chat_message(record: Dict[str, Any]) -> "ChatMessage":
    from . import ChatMessage, ToolCall

    calls = [ToolCall(c["id"], c["name"], c["arguments"]) for c in record.get("tool_calls", [])]
    return ChatMessage(record["role"], record["content"], record.get("tool_call_id"), calls)


def _pretty(value: Dict[str, Any]) -> bytes:
    """JSON as the CLI writes its session files (serde_json's pretty form) and a newline."""
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode()


def _last_seq(fd: int, truncate: bool) -> int:
    """The `seq` of the last whole record of an append-only log (0 for none). A record a crash
    cut short (no newline yet) was never committed: with `truncate` it is dropped first."""
    size = os.fstat(fd).st_size
    # Backwards from the end, a chunk at a time, so a long log costs what its last line does.
    chunk = 8192
    while True:
        start = max(0, size - chunk)
        tail = os.pread(fd, size - start, start)
        end = tail.rfind(b"\n") + 1
        body = tail[:end].rstrip()
        cut = body.rfind(b"\n")
        if cut >= 0 or start == 0:
            break
        chunk *= 4
    if truncate and start + end < size:
        os.ftruncate(fd, start + end)
        os.fsync(fd)
    last = body[cut + 1:].strip()
    return int(json.loads(last)["seq"]) if last else 0


class _Seen(NamedTuple):
    """A holder file as one open of it saw it: its first bytes, its inode, and the seconds since
    it was written and since its inode last changed (made, written or linked)."""
    text: bytes
    inode: int
    modified: float
    changed: float


def _started(pid: int) -> Optional[int]:
    """When process `pid` started, in clock ticks after boot (/proc/<pid>/stat's 22nd field):
    with the pid it names one process, where a pid alone is reused. None where /proc does not tell."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return int(f.read().rsplit(b")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def _gone(seen: _Seen, flocked: bool) -> bool:
    """Whether a holder file's writer is provably gone (`flocked`: as seen by a writer holding the flock)."""
    words = seen.text.split()
    if not words:
        return seen.modified > _EMPTY_STALE
    if flocked and words[2:3] == [b"flock"]:
        return True
    try:
        pid = int(words[0])
    except ValueError:
        return True
    if pid <= 0:
        return True
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):
        return True
    except PermissionError:
        pass  # alive, another user's
    said = words[1].split(b"@", 1)[1] if len(words) > 1 and b"@" in words[1] else None
    now = _started(pid)
    return said is not None and now is not None and said != str(now).encode()


def _describe(seen: _Seen) -> str:
    """What holds the lock, for the error of a wait that ran out."""
    words = seen.text.split()
    pid = words[0].decode(errors="replace")[:20] if words else "none"
    return (f"process {pid}, alive, has held its holder file ({HOLDER}) for {seen.changed:.0f} s; "
            f"if no workmem writer runs as {pid}, remove {HOLDER}")
