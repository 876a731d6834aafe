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

An artifact is native code: the directory is made private (0700), and each file is written
whole under a temporary name and renamed, so a reader never sees half of one; a directory or
artifact another user could write, or a symlink, is never loaded.
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

# Bumped when what an artifact holds changes in a way the key does not see.
_FORMAT = "2"


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
    if directory is None:
        return Component(engine, data), False
    artifact = directory / f"engine-py-{_key(data)}.cwasm"
    if not _trusted(directory):
        return Component(engine, data), False
    if _trusted(artifact):
        try:
            return Component.deserialize_file(engine, str(artifact)), True
        except (wasmtime.WasmtimeError, OSError):
            pass  # another wasmtime or engine configuration: compiled afresh and replaced below
    component = Component(engine, data)
    try:
        _write(directory, artifact, bytes(component.serialize()))
    except (wasmtime.WasmtimeError, OSError):
        pass
    return component, False


def _trusted(path: Path) -> bool:
    """Whether `path` is ours and no one else may write it: an artifact is run as native code, so
    one another user could have placed (or a symlink to one) is never loaded. A directory not
    there yet is made private by the first write."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return path.suffix != ".cwasm"
    except OSError:
        return False
    kind_ok = stat.S_ISDIR(st.st_mode) if path.suffix != ".cwasm" else stat.S_ISREG(st.st_mode)
    return kind_ok and st.st_uid == os.getuid() and not st.st_mode & 0o022


def _write(directory: Path, artifact: Path, data: bytes) -> None:
    import tempfile  # only on a compile: 3 ms of every start otherwise

    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".cwasm")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, artifact)
    except BaseException:
        os.unlink(tmp)
        raise
