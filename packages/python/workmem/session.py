"""Session directories, the same files the CLI writes (docs/cli.md, "Sessions on disk"), read and
committed as the CLI does ("One commit path"): under the session's lock (the CLI's, `flock` on
`.lock`), through a handle on the session directory with no symlink followed, each whole-file
write a temp file renamed into place, and a commit written whole to `commit.pending.json`
first, so a crash at any moment leaves a session that loads (the next lock holder, in any
runtime, finishes it)."""

from __future__ import annotations

import errno
import fcntl
import itertools
import json
import os
import stat
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Iterator, Optional, Union

if TYPE_CHECKING:
    from . import Applied, Engine, Memory

FORMAT = "workmem-session/1"
META, STATE, LOG, LOCK, PENDING = "meta.json", "state.json", "updates.jsonl", ".lock", "commit.pending.json"
MEMORY_DIR, OVERVIEW = "working-memory", "overview.md"

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
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                pending = self._read(self._fd, PENDING)
            except FileNotFoundError:
                pass
            else:
                self._finish(self._json(pending, PENDING))
            yield
        finally:
            os.close(fd)

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
