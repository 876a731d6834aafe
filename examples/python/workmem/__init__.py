"""workmem for Python: the working-memory engine component on wasmtime-py.

>>> from workmem import Engine
>>> engine = Engine()
>>> state = engine.empty_state()
>>> result = engine.apply(state, "KEY_LEARNINGS:\\n  ADD:\\n    - because it matters: a fact\\n")
>>> result.added
['KL-1']
"""

from __future__ import annotations

import dataclasses
import os
import sys
import typing
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, List, Optional, Union

import wasmtime
from wasmtime.component import Component, Linker, Record

__all__ = [
    "ArchiveOp", "Diagnostic", "Engine", "Learning", "LearningAdd", "LearningOps",
    "MemoryState", "MergeResult", "ParseResult", "Progress", "Update", "VerbatimAdd",
    "VerbatimEntry", "VerbatimOps", "WorkmemError", "now",
]


@dataclass(frozen=True)
class Diagnostic:
    severity: str  # "error" or "warning"
    line: int
    column: int
    message: str


@dataclass
class Progress:
    """All three lists empty: "not rewritten" in an update, "nothing yet" in a state."""

    completed: List[str] = field(default_factory=list)
    in_progress: List[str] = field(default_factory=list)
    remaining: List[str] = field(default_factory=list)


@dataclass
class LearningAdd:
    reason: str
    text: str


@dataclass
class VerbatimAdd:
    reason: str
    label: str
    snippet: str


@dataclass
class ArchiveOp:
    id: str
    reason: str


@dataclass
class LearningOps:
    add: List[LearningAdd] = field(default_factory=list)
    archive: List[ArchiveOp] = field(default_factory=list)


@dataclass
class VerbatimOps:
    add: List[VerbatimAdd] = field(default_factory=list)
    archive: List[ArchiveOp] = field(default_factory=list)


@dataclass
class Update:
    progress: Progress = field(default_factory=Progress)
    learnings: LearningOps = field(default_factory=LearningOps)
    verbatim: VerbatimOps = field(default_factory=VerbatimOps)


@dataclass
class Learning:
    """A key learning; `archived_at` and `archive_reason` are empty while it is active."""

    id: str
    text: str
    reason: str
    added_at: str
    archived_at: str = ""
    archive_reason: str = ""


@dataclass
class VerbatimEntry:
    """A verbatim snippet; `archived_at` and `archive_reason` are empty while it is active."""

    id: str
    label: str
    snippet: str
    reason: str
    added_at: str
    archived_at: str = ""
    archive_reason: str = ""


@dataclass
class MemoryState:
    progress: Progress
    learnings: List[Learning]
    verbatim: List[VerbatimEntry]
    next_learning: int
    next_verbatim: int


@dataclass
class ParseResult:
    ok: bool
    update: Optional[Update]
    diagnostics: List[Diagnostic]


@dataclass
class MergeResult:
    state: MemoryState
    diff: str
    added: List[str]
    archived: List[str]
    ignored: List[str]
    warnings: List[Diagnostic] = field(default_factory=list)


class WorkmemError(Exception):
    """The engine refused an update; `diagnostics` says where (1-based line and column)."""

    def __init__(self, message: str, diagnostics: Optional[List[Diagnostic]] = None):
        super().__init__(message)
        self.diagnostics = diagnostics or []


def now() -> str:
    """The current time as the engine stores it: RFC 3339, UTC, whole seconds."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- dataclasses <-> component values -------------------------------------------------
# wasmtime-py gives records as objects whose attributes carry the WIT (kebab-case) names,
# enums as str and options as the value or None; one pair of functions maps them all. Each
# type's converter is built once from its type hints, not worked out again for every value.

def _to_wit(value: Any) -> Any:
    if dataclasses.is_dataclass(value):
        record = Record()
        for name, wit_name in _fields(type(value)):
            setattr(record, wit_name, _to_wit(getattr(value, name)))
        return record
    if isinstance(value, list):
        return [_to_wit(v) for v in value]
    return value


_FIELDS: dict = {}
_CONVERTERS: dict = {}


def _fields(ty: type) -> list:
    if ty not in _FIELDS:
        _FIELDS[ty] = [(f.name, f.name.replace("_", "-")) for f in dataclasses.fields(ty)]
    return _FIELDS[ty]


def _converter(ty: Any) -> Callable[[Any], Any]:
    if ty in _CONVERTERS:
        return _CONVERTERS[ty]
    origin = typing.get_origin(ty)
    if origin is Union:  # Optional[T]
        inner = _converter(next(a for a in typing.get_args(ty) if a is not type(None)))
        convert: Callable[[Any], Any] = lambda v: None if v is None else inner(v)
    elif origin in (list, List):
        item = _converter(typing.get_args(ty)[0])
        convert = lambda v: [item(x) for x in v]
    elif dataclasses.is_dataclass(ty):
        hints = typing.get_type_hints(ty, vars(sys.modules[__name__]))
        # Fields the WIT record lacks (MergeResult.warnings) keep their defaults.
        fields = [(name, wit_name, _converter(hints[name])) for name, wit_name in _fields(ty)]
        convert = lambda v: ty(**{n: c(getattr(v, w)) for n, w, c in fields if hasattr(v, w)})
    else:
        convert = lambda v: v
    _CONVERTERS[ty] = convert
    return convert


def _from_wit(value: Any, ty: Any) -> Any:
    return _converter(ty)(value)


def _default_component() -> Path:
    env = os.environ.get("WORKMEM_COMPONENT")
    return Path(env) if env else Path(__file__).with_name("workmem.wasm")


class Engine:
    """One engine instance. Not thread-safe: give each thread its own `Engine`.

    Component compilation is the slow part (tens of milliseconds); pass the same
    `wasmtime.Engine` and `Component` to share it between instances.
    """

    _EXPORTS = ("parse", "validate", "merge", "apply", "render", "update-prompt",
                "overview-template", "empty-state")

    def __init__(self, component: Union[str, Path, Component, None] = None,
                 engine: Optional[wasmtime.Engine] = None):
        self._engine = engine or wasmtime.Engine()
        if isinstance(component, Component):
            self._component = component
        else:
            self._component = Component.from_file(self._engine, str(component or _default_component()))
        self._instantiate()

    def _instantiate(self) -> None:
        # The engine world imports nothing: an empty linker is the whole sandbox.
        self._store = wasmtime.Store(self._engine)
        instance = Linker(self._engine).instantiate(self._store, self._component)
        self._funcs = {}
        for name in self._EXPORTS:
            index = instance.get_export_index(self._store, name)
            assert index is not None, f"the component does not export {name}"
            self._funcs[name] = instance.get_func(self._store, index)

    def _call(self, name: str, *args: Any) -> Any:
        func = self._funcs[name]
        try:
            result = func(self._store, *args)
            func.post_return(self._store)
        except (wasmtime.Trap, wasmtime.WasmtimeError) as e:
            # A trapped instance cannot be entered again; the next call gets a fresh one.
            self._instantiate()
            raise WorkmemError(f"the engine component trapped: {e}") from e
        return result

    def _outcome(self, raw: Any) -> ParseResult:
        update = _from_wit(raw.update, Update) if raw.ok else None
        return ParseResult(ok=raw.ok, update=update, diagnostics=_from_wit(raw.diagnostics, List[Diagnostic]))

    def parse(self, text: str) -> ParseResult:
        """Reads a DSL update. Bad input is reported in `diagnostics`, never raised."""
        return self._outcome(self._call("parse", text))

    def validate(self, text: str, state: Optional[MemoryState] = None) -> ParseResult:
        """`parse`, plus warnings for ARCHIVEs of IDs the state does not have."""
        return self._outcome(self._call("validate", text, _to_wit(state or self.empty_state())))

    def apply(self, state: MemoryState, text: str, at: Optional[str] = None) -> MergeResult:
        """Parses, validates and merges `text`; raises WorkmemError when it has errors."""
        raw = self._call("apply", _to_wit(state), text, at or now())
        diagnostics = _from_wit(raw.diagnostics, List[Diagnostic])
        if not raw.ok:
            errors = [d for d in diagnostics if d.severity == "error"]
            first = errors[0]
            raise WorkmemError(f"the update has {len(errors)} error(s); first at {first.line}:{first.column}: "
                               f"{first.message}", diagnostics)
        merged = _from_wit(raw.merged, MergeResult)
        merged.warnings = diagnostics
        return merged

    def merge(self, state: MemoryState, updates: List[Update], at: Optional[str] = None) -> MergeResult:
        """Merges update objects into `state`, in order; raises WorkmemError (and merges
        none) if one is invalid."""
        raw = self._call("merge", _to_wit(state), _to_wit(updates), at or now())
        if isinstance(raw, str):  # the result's `err`
            raise WorkmemError(raw)
        return _from_wit(raw, MergeResult)

    def render(self, state: MemoryState) -> str:
        return self._call("render", _to_wit(state))

    def update_prompt(self, state: MemoryState, task: str) -> str:
        return self._call("update-prompt", _to_wit(state), task)

    def overview_template(self) -> str:
        return self._call("overview-template")

    def empty_state(self) -> MemoryState:
        return _from_wit(self._call("empty-state"), MemoryState)
