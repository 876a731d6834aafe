"""One daemon thread that advances the epoch of every engine an `Engine` runs on.

The call deadline is a number of epoch ticks, so something has to tick. The thread ticks its
own clone of each engine (an owned reference to the same wasmtime engine), never the Python
`wasmtime.Engine`: that object's weak references still answer while its `__del__` is freeing
the pointer (CPython clears them afterwards), and ticking through one then is a use after free
that killed the interpreter with SIGSEGV. Once an engine's Python object is gone, the thread
deletes its clone; it is stopped and joined at exit, so it is never inside the C API while the
interpreter shuts down, and a forked child starts a thread of its own.
"""

from __future__ import annotations

import atexit
import collections
import itertools
import os
import threading
import weakref
from typing import Any, Deque, Dict, Optional

import wasmtime
from wasmtime import _ffi as ffi

# How often the thread ticks: how late past its deadline a call stops.
TICK = 0.005

_lock = threading.Lock()
_clones: Dict[int, Any] = {}
_ticking: "weakref.WeakSet[wasmtime.Engine]" = weakref.WeakSet()
_keys = itertools.count()
_gone: Deque[int] = collections.deque()
_stop = threading.Event()
_thread: Optional[threading.Thread] = None


def tick(engine: wasmtime.Engine) -> None:
    """Advances `engine`'s epoch every TICK seconds for as long as the object lives; an engine
    already ticking is left as it is, so sharing one does not shorten its deadlines."""
    key = next(_keys)
    with _lock:
        if engine in _ticking:
            return
        _ticking.add(engine)
        _clones[key] = ffi.wasmtime_engine_clone(engine.ptr())
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
            while _gone:
                ffi.wasm_engine_delete(_clones.pop(_gone.popleft()))
            for clone in _clones.values():
                ffi.wasmtime_engine_increment_epoch(clone)


def _forget(key: int) -> None:
    # Only queued: this runs wherever the engine is collected, the garbage collector included,
    # which can be inside a block that holds the lock.
    _gone.append(key)


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
