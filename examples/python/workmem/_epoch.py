"""One daemon thread that advances the epoch of every engine this package made.

The call deadline is a number of epoch ticks, so something has to tick. The thread ticks its
own clone of each engine (an owned reference to the same wasmtime engine), never the Python
`wasmtime.Engine`: that object's weak references still answer while its `__del__` is freeing
the pointer (CPython clears them afterwards), and ticking through one then is a use after free
that killed the interpreter with SIGSEGV. Once an engine's Python object is gone its clone is
taken out, under the lock the thread ticks under, and deleted; the thread is stopped and joined
at exit, so it is never inside the C API while the interpreter shuts down, and a forked child
starts a thread of its own.
"""

from __future__ import annotations

import atexit
import itertools
import os
import threading
import weakref
from typing import Any, Dict, Optional

import wasmtime
from wasmtime import _ffi as ffi

# How often the thread ticks: how late past its deadline a call stops.
TICK = 0.005

_lock = threading.Lock()
_clones: Dict[int, Any] = {}
_keys = itertools.count()
_stop = threading.Event()
_thread: Optional[threading.Thread] = None


def tick(engine: wasmtime.Engine) -> None:
    """Advances `engine`'s epoch every TICK seconds for as long as the object lives."""
    clone = ffi.wasmtime_engine_clone(engine.ptr())
    key = next(_keys)
    with _lock:
        _clones[key] = clone
        if _thread is None:
            _start()
    weakref.finalize(engine, _forget, key)


def _start() -> None:
    global _thread
    _thread = threading.Thread(target=_run, name="workmem-epoch", daemon=True)
    _thread.start()


def _run() -> None:
    while not _stop.wait(TICK):
        with _lock:
            for clone in _clones.values():
                ffi.wasmtime_engine_increment_epoch(clone)


def _forget(key: int) -> None:
    with _lock:
        clone = _clones.pop(key, None)
    if clone is not None:
        ffi.wasm_engine_delete(clone)


@atexit.register
def _shutdown() -> None:
    _stop.set()
    if _thread is not None:
        _thread.join(timeout=1.0)


def _after_fork_in_child() -> None:
    # The child has none of the parent's threads: a lock the ticker held at the fork would
    # never be released, and the engines it inherited would never tick again.
    global _lock, _stop, _thread
    _lock, _stop, _thread = threading.Lock(), threading.Event(), None
    if _clones:
        _start()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
