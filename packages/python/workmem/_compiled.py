"""The engine component compiled once per machine, as the Rust host does: compiling it is most of
a cold start (hundreds of milliseconds), and loading the compiled artifact takes a few.

An artifact is kept under the cache directory (`$WORKMEM_CACHE_DIR`, else
`$XDG_CACHE_HOME/workmem`, else `~/.cache/workmem`, as the Rust host has it; `Engine(...,
compile_cache=False)` turns it off) named by the SHA-256 of the component's bytes and the size
and time of change of wasmtime's library (wasmtime-py carries no version of its own at run time),
so another component or runtime never loads a stale one; wasmtime checks its own version and the
engine's configuration again as it loads, and an artifact it refuses is compiled afresh and
replaced. This package's version is not in the key: what it changes of an artifact is the
component (hashed) or the engine's configuration (checked by wasmtime), and reading it
(`importlib.metadata`) took 18 ms of a 100 ms start.

An artifact is native code, so the rule the Rust host and the Go package keep holds here: one is
loaded only from a directory and a file this user owns and no one else may write, opened beneath
a handle on the directory, never through a symlink; it is written beneath that handle through a
fresh name made with O_EXCL, synced and renamed, so a reader never sees half of one; and it ends
with the SHA-256 of what precedes it, so one damaged on disk is compiled over, not run.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import Optional, Tuple

import wasmtime
from wasmtime import _ffi as ffi
from wasmtime.component import Component

# Bumped when what an artifact holds changes in a way the key does not see (3: the digest at its end).
_FORMAT = "3"
_DIGEST = 32


def cache_dir() -> Optional[Path]:
    """Where artifacts are kept by default; None where there is no home to keep them in."""
    env = os.environ.get("WORKMEM_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or (os.path.join(os.environ["HOME"], ".cache") if "HOME" in os.environ else None)
    return Path(base) / "workmem" if base else None


def _key(component: bytes) -> str:
    h = hashlib.sha256()
    library = os.stat(ffi.filename)
    for part in (_FORMAT, str(library.st_size), str(library.st_mtime_ns)):
        h.update(part.encode())
        h.update(b"\0")
    h.update(component)
    return h.hexdigest()[:32]


def load(engine: wasmtime.Engine, path: Path, directory: Optional[Path]) -> Tuple[Component, bool]:
    """The component at `path` for `engine`, from the cache in `directory` where an artifact for
    exactly these bytes is kept; else compiled, and kept there for the next process (None: no
    cache). The bool says whether it came from the cache. A cache that cannot be read or written
    only costs the compile."""
    data = path.read_bytes()
    fd = _open_dir(directory) if directory is not None else None
    if fd is None:
        return Component(engine, data), False
    try:
        name = f"engine-py-{_key(data)}.cwasm"
        payload = _checked(_read(fd, name))
        if payload is not None:
            try:
                return Component.deserialize(engine, payload), True
            except (wasmtime.WasmtimeError, OSError):
                pass  # another wasmtime or engine configuration: compiled afresh and replaced below
        component = Component(engine, data)
        try:
            serialized = bytes(component.serialize())
            _write(fd, name, serialized + hashlib.sha256(serialized).digest())
        except (wasmtime.WasmtimeError, OSError):
            pass
        return component, False
    finally:
        os.close(fd)


def _ours(st: os.stat_result, kind: int) -> bool:
    """Whether a file of `kind` is ours and no one else may write it: an artifact is run as native
    code, so one another user could have placed is never loaded."""
    return stat.S_IFMT(st.st_mode) == kind and st.st_uid == os.geteuid() and not st.st_mode & 0o022


def _open_dir(directory: Path) -> Optional[int]:
    """A handle on `directory` (made private where it is not there yet) if it is ours, not a
    symlink, and no one else may write it; everything after is opened beneath it, so a parent
    swapped after this check changes nothing."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        try:
            fd = os.open(directory, flags)
        except FileNotFoundError:
            directory.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.mkdir(directory, 0o700)
            except FileExistsError:
                pass
            fd = os.open(directory, flags)
    except OSError:
        return None
    if not _ours(os.fstat(fd), stat.S_IFDIR):
        os.close(fd)
        return None
    return fd


def _read(fd: int, name: str) -> Optional[bytes]:
    """The whole of `name` beneath `fd` if it is a file only we may write (never a symlink or a FIFO)."""
    try:
        f = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=fd)
    except OSError:
        return None
    with os.fdopen(f, "rb") as file:
        return file.read() if _ours(os.fstat(f), stat.S_IFREG) else None


def _checked(stored: Optional[bytes]) -> Optional[bytes]:
    """An artifact without the SHA-256 it ends with, if that matches: one damaged on disk (bits
    flipped, a count changed) would crash the process that loads it, so it is compiled over."""
    if stored is None or len(stored) < _DIGEST:
        return None
    payload, digest = stored[:-_DIGEST], stored[-_DIGEST:]
    return payload if hashlib.sha256(payload).digest() == digest else None


def _write(fd: int, name: str, data: bytes) -> None:
    """Writes `name` beneath `fd` whole: through a fresh name made with O_EXCL (a name someone
    else made first, a symlink say, is never followed), synced, then renamed over `name`."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    for n in range(16):
        tmp = f".{name}.tmp-{os.getpid()}-{n}"
        try:
            f = os.open(tmp, flags, 0o600, dir_fd=fd)
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(name)
    try:
        with os.fdopen(f, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
    except BaseException:
        os.unlink(tmp, dir_fd=fd)
        raise
