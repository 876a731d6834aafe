"""The agent world in Python: the memory-update step runs inside the component, and the
model, the session's files and the clock are Python callables this host supplies."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, List, Optional, Protocol

import wasmtime
from wasmtime.component import Component, Linker, Record, Variant

from . import WorkmemError, now

__all__ = ["Agent", "Completion", "DirectoryStore", "LlmError", "MemoryUpdateReport", "Message", "StoreError"]


@dataclass(frozen=True)
class Message:
    role: str
    content: str


@dataclass(frozen=True)
class Completion:
    """The model's answer with its usage (return a plain str when there is none)."""

    text: str
    prompt_tokens: int
    completion_tokens: int


@dataclass
class MemoryUpdateReport:
    attempts: int
    prompt_tokens: int
    completion_tokens: int
    diff: str
    added: List[str]
    archived: List[str]
    ignored: List[str]
    warnings: List[str]


class LlmError(Exception):
    """Raise from the model callable: kind is "timeout", "rate-limited", "http-status"
    (value: the status) or "other" (value: a sentence)."""

    def __init__(self, kind: str, value: object = None):
        super().__init__(kind if value is None else f"{kind}: {value}")
        self.variant = Variant(kind) if value is None else Variant(kind, value)


class StoreError(Exception):
    """Raise from a store: kind is "not-found", "refused" or "other" (with a sentence)."""

    def __init__(self, kind: str, message: Optional[str] = None):
        super().__init__(message or kind)
        self.variant = Variant(kind) if kind == "not-found" else Variant(kind, message or kind)


class Store(Protocol):
    def read(self, path: str) -> str: ...
    def write(self, path: str, content: str) -> None: ...
    def append(self, path: str, content: str) -> None: ...
    def list_files(self, path: str) -> List[str]: ...


class DirectoryStore:
    """The session directory: paths stay relative and inside it; symlinks are not followed."""

    def __init__(self, root: os.PathLike | str):
        self.root = Path(root)

    def _resolve(self, path: str) -> Path:
        parts = [p for p in path.split("/") if p not in ("", ".")]
        if not path or path.startswith("/") or "\\" in path or "\0" in path or ".." in parts:
            raise StoreError("refused", f"{path!r} is refused: paths must be relative to the session directory, without ..")
        full = self.root
        for part in parts:
            full = full / part
            if full.is_symlink():
                raise StoreError("refused", f"{path!r} goes through a symlink")
        return full

    def read(self, path: str) -> str:
        full = self._resolve(path)
        if not full.is_file():
            raise StoreError("not-found")
        return full.read_text()

    def write(self, path: str, content: str) -> None:
        full = self._resolve(path)
        full.parent.mkdir(parents=True, exist_ok=True)
        tmp = full.with_name(f".{full.name}.tmp-{os.getpid()}")
        tmp.write_text(content)
        os.replace(tmp, full)

    def append(self, path: str, content: str) -> None:
        full = self._resolve(path)
        full.parent.mkdir(parents=True, exist_ok=True)
        with open(full, "a") as f:
            f.write(content)

    def list_files(self, path: str) -> List[str]:
        base = self._resolve(path)
        return sorted(str(p.relative_to(self.root)) for p in base.rglob("*") if p.is_file() and not p.is_symlink())


def _default_component() -> Path:
    return Path(os.environ.get("WORKMEM_AGENT_COMPONENT", Path(__file__).with_name("workmem-agent.wasm")))


def _completion(answer: str | Completion) -> Record:
    record = Record()
    record.text = answer if isinstance(answer, str) else answer.text
    usage = None
    if isinstance(answer, Completion):
        usage = Record()
        setattr(usage, "prompt-tokens", answer.prompt_tokens)
        setattr(usage, "completion-tokens", answer.completion_tokens)
    record.usage = usage
    return record


def _result(f: Callable[[], object], error: type) -> object:
    """An import's `result`: the value for `ok`, the error's variant for `err`."""
    try:
        return f()
    except error as e:
        return e.variant  # type: ignore[attr-defined]


class Agent:
    """One instance of the agent component with these capabilities. Not thread-safe."""

    def __init__(self, llm: Callable[[List[Message]], "str | Completion"], store: Store, clock: Callable[[], str] = now,
                 component: Optional[os.PathLike | str] = None, engine: Optional[wasmtime.Engine] = None):
        engine = engine or wasmtime.Engine()
        linker = Linker(engine)
        with linker.root() as root:
            with root.add_instance("workmem:memory/llm@0.1.0") as i:
                i.add_func("complete", lambda _, messages: _result(
                    lambda: _completion(llm([Message(m.role, m.content) for m in messages])), LlmError))
            with root.add_instance("workmem:memory/store@0.1.0") as i:
                i.add_func("read", lambda _, path: _result(lambda: store.read(path), StoreError))
                i.add_func("write", lambda _, path, content: _result(lambda: store.write(path, content), StoreError))
                i.add_func("append", lambda _, path, content: _result(lambda: store.append(path, content), StoreError))
                i.add_func("list-files", lambda _, path: _result(lambda: store.list_files(path), StoreError))
            with root.add_instance("workmem:memory/clock@0.1.0") as i:
                i.add_func("now", lambda _: clock())
        self._store = wasmtime.Store(engine)
        instance = linker.instantiate(self._store, Component.from_file(engine, str(component or _default_component())))
        self._update = instance.get_func(self._store, instance.get_export_index(self._store, "memory-update"))

    def memory_update(self, task: str, max_reprompts: int = 2) -> MemoryUpdateReport:
        """Spec 000's memory-update step for `task`; raises WorkmemError when nothing was applied."""
        raw = self._update(self._store, task, max_reprompts)
        self._update.post_return(self._store)
        if isinstance(raw, str):  # the result's `err`
            raise WorkmemError(raw)
        return MemoryUpdateReport(raw.attempts, getattr(raw, "prompt-tokens"), getattr(raw, "completion-tokens"), raw.diff,
                                  list(raw.added), list(raw.archived), list(raw.ignored), list(raw.warnings))
