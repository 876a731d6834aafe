"""workmem for Python: the working-memory engine component on wasmtime-py.

A `Memory` lives inside the engine; an apply carries the DSL in and the outcome out.

>>> from workmem import Engine
>>> memory = Engine().new_memory()
>>> memory.apply("KEY_LEARNINGS:\\n  ADD:\\n    - because it matters: a fact\\n").added
['KL-1']
"""

from __future__ import annotations

import dataclasses
import json
import os
import math
import sys
import typing
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Awaitable, Callable, List, Optional, Union

import wasmtime
from wasmtime.component import Component, Func, Linker, Record, ResourceAny, Variant

from . import _compiled, _epoch
from ._typecache import remember_type

__all__ = [
    "Applied", "ArchiveOp", "Archival", "Board", "BoardApplied", "BoardError", "Bounds", "CallRequest", "ChatMessage", "CompactionMark", "DocumentError", "DocumentSection", "Compaction", "CompactionRefused", "ContextRequest", "ContextStats",
    "Diagnostic", "Engine", "Entry",
    "Learning", "LearningAdd", "LearningOps", "Memory", "Message", "ParseOutcome", "ParseResult", "Prepared", "Progress", "Reminders", "Replacement", "Snapshot", "Standing",
    "Session", "SessionError", "ToolCall", "View", "Update", "Updated", "VerbatimAdd", "VerbatimEntry", "VerbatimOps", "WorkmemError",
    "now",
]

PACKAGE = "workmem:memory/memory@0.2.0"
HISTORY = "workmem:memory/history@0.2.0"
CONTEXT = "workmem:memory/context@0.2.0"
CALL = "workmem:memory/call@0.2.0"
BOARD = "workmem:memory/board@0.2.0"
DOCUMENT = "workmem:memory/document@0.2.0"


@dataclass(frozen=True)
class Diagnostic:
    severity: str  # "error" or "warning"
    line: int
    column: int
    message: str


@dataclass
class Progress:
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
    """A section left out is "no change": `progress` is None."""

    progress: Optional[Progress] = None
    learnings: LearningOps = field(default_factory=LearningOps)
    verbatim: VerbatimOps = field(default_factory=VerbatimOps)


@dataclass
class ParseOutcome:
    """What parsing an update gave (the WIT's `parse-outcome`): the update, or None with the
    diagnostics that refused it."""

    update: Optional[Update]
    diagnostics: List[Diagnostic]

    @property
    def ok(self) -> bool:
        return self.update is not None


ParseResult = ParseOutcome
"""Deprecated: the name `ParseOutcome` had before 0.3 (the WIT's, Go's and JavaScript's name)."""


@dataclass
class Archival:
    at: str
    reason: str


@dataclass
class Learning:
    id: str
    text: str
    reason: str
    added_at: str
    archived: Optional[Archival] = None


@dataclass
class VerbatimEntry:
    id: str
    label: str
    snippet: str
    reason: str
    added_at: str
    archived: Optional[Archival] = None


@dataclass
class Snapshot:
    progress: Optional[Progress]
    learnings: List[Learning]
    verbatim: List[VerbatimEntry]
    next_learning: int
    next_verbatim: int
    updates: int


@dataclass
class Applied:
    """What an applied update changed; `overview` and `state` only when asked for."""

    seq: int
    diff: str
    added: List[str]
    archived: List[str]
    ignored: List[str]
    warnings: List[Diagnostic]
    log_entry: str
    overview: Optional[str]
    state: Optional[str]


@dataclass
class Updated(Applied):
    """A memory update applied after `attempts` model calls."""

    attempts: int = 0


@dataclass(frozen=True)
class Message:
    role: str
    content: str


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: str


@dataclass
class ChatMessage:
    """A chat message as providers take it; `tool_call_id` on a tool result."""

    role: str
    content: str
    tool_call_id: Optional[str] = None
    tool_calls: List[ToolCall] = field(default_factory=list)


@dataclass
class Entry:
    """One entry of a history view: a message of your log (`seq`) or a replacement."""

    seq: int
    message: ChatMessage
    tokens: int = 0


@dataclass
class Replacement:
    replaces: List[int]
    message: ChatMessage


@dataclass
class Compaction:
    """Replacements to append to your log, text to append to the archive file, the view after."""

    replacements: List[Replacement]
    archive: str
    view: List[Entry]
    messages: int
    tokens_before: int
    tokens_after: int
    notice: str


@dataclass
class ContextRequest:
    """What one request to the model is assembled from (spec 001). `history` is the whole
    session, oldest first; `active_turn` is where its last user message is. `history_mode`:
    "auto" (the whole history until overview.md is maintained, then the active turn), "all",
    "active-turn", or "last-n" (the last `last_n` messages, and at least the active turn)."""

    system_prompt: str
    overview: str
    history: List[ChatMessage] = field(default_factory=list)
    active_turn: int = 0
    history_mode: str = "auto"
    last_n: int = 0
    agents_md: Optional[str] = None
    overview_path: str = "working-memory/overview.md"
    detail_path: str = "working-memory/detail/"


@dataclass
class ContextStats:
    """The figures of a context_meta block (spec 001 US-3)."""

    tokens_used: int
    tokens_max: int
    messages_in_history: int = 0
    working_memory_size: int = 0
    rounds_since_update: int = 0
    remind_after_rounds: Optional[int] = None
    strong_reminder_tokens: Optional[int] = None
    compact_at: Optional[int] = None
    compaction_notice: Optional[str] = None


@dataclass
class Bounds:
    """The bounds of every model call, in tokens (see `Engine.prepare_call`)."""

    window: int
    threshold: int
    goal: int
    keep_recent: int = 5
    remind_after_rounds: Optional[int] = None
    max_compactions: int = 3
    archive_to: str = "working-memory/detail/history.md"


@dataclass
class CompactionMark:
    """A compaction as `Standing` needs it: the round it was made in (its log record's
    `round`) and what it tells the model."""

    round: int
    notice: str


@dataclass
class Standing:
    """Where a session stands before a model call: meta.json's `rounds` and
    `memory_updated_round`, and the log's last compaction (see `Engine.remind`)."""

    rounds: int = 0
    memory_updated_round: int = 0
    last_compaction: Optional[CompactionMark] = None


@dataclass
class Reminders:
    """What `context_meta` says of where a session stands: the model calls since the memory
    last changed, and the notice of a compaction no model call came after yet."""

    rounds_since_update: int
    compaction_notice: Optional[str] = None


@dataclass
class CallRequest:
    """One model call's state as the host knows it: the view's tokens and entries, what the
    request adds beyond its messages (`overhead`), and what the call's steps so far counted
    and compacted (see `Engine.prepare_call`)."""

    bounds: Bounds
    system_prompt: str
    overview: str
    view_tokens: int
    view_entries: int
    task: Optional[int] = None
    overhead: int = 0
    counted: List[int] = field(default_factory=list)
    compactions: int = 0
    exhausted: bool = False
    standing: Standing = field(default_factory=Standing)


@dataclass
class Prepared:
    """A request ready to send: `leading`, then the view, then `meta` as a system message."""

    leading: List[ChatMessage]
    meta: str
    tokens: int


_HISTORY_MODES = ("auto", "all", "active-turn", "last-n")


class WorkmemError(Exception):
    """The engine refused an update; `diagnostics` says where (1-based line and column)."""

    def __init__(self, message: str, diagnostics: Optional[List[Diagnostic]] = None):
        super().__init__(message)
        self.diagnostics = diagnostics or []


class CompactionRefused(WorkmemError):
    """Nothing was compacted: `kind` is "nothing", "empty-summary" or "invariant". Append nothing."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


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


_FIELDS: typing.Dict[type, List[typing.Tuple[str, str]]] = {}
_CONVERTERS: typing.Dict[Any, Callable[[Any], Any]] = {}


def _fields(ty: type) -> List[typing.Tuple[str, str]]:
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
        cls = typing.cast(Callable[..., Any], ty)
        fields = [(name, wit_name, _converter(hints[name])) for name, wit_name in _fields(typing.cast(type, ty))]
        convert = lambda v: cls(**{n: c(getattr(v, w)) for n, w, c in fields if hasattr(v, w)})
    else:
        convert = lambda v: v
    _CONVERTERS[ty] = convert
    return convert


_T = typing.TypeVar("_T")


def _from_wit(value: Any, ty: typing.Type[_T]) -> _T:
    return typing.cast(_T, _converter(ty)(value))


def _default_component() -> Path:
    env = os.environ.get("WORKMEM_COMPONENT")
    return Path(env) if env else Path(__file__).with_name("workmem.wasm")


def _invalid(diagnostics: List[Diagnostic]) -> WorkmemError:
    errors = [d for d in diagnostics if d.severity == "error"]
    where = f"; first at {errors[0].line}:{errors[0].column}: {errors[0].message}" if errors else ""
    return WorkmemError(f"the update has {len(errors)} error(s){where}", diagnostics)


# A workflow as a generator: it yields what to ask the model, receives the answer, and yields
# its result (of type `done`) at the end. One driver for sync clients, one for asyncio.

def _drive(steps: typing.Generator[Any, Optional[str], None], done: typing.Type[_T], ask: Callable[[Any], str]) -> _T:
    answer = None
    while True:
        asked = steps.send(answer)
        if isinstance(asked, done):
            return asked
        answer = ask(asked)


async def _drive_async(steps: typing.Generator[Any, Optional[str], None], done: typing.Type[_T], ask: Callable[[Any], Awaitable[str]]) -> _T:
    answer = None
    while True:
        asked = steps.send(answer)
        if isinstance(asked, done):
            return asked
        answer = await ask(asked)


def _no_model(_: Any) -> str:
    raise CompactionRefused("nothing", 'strategy "summarize" needs `ask`, a model client')


def _wants(overview: bool, state: bool) -> Record:
    record = Record()
    setattr(record, "overview", overview)
    setattr(record, "state", state)
    return record


class Engine:
    """One instance of the engine component. Not thread-safe: give each thread its own.

    Compiling the component is the slow part (hundreds of milliseconds); pass the same
    `wasmtime.Engine` and `Component` to share it. Each instance's linear memory is capped at
    `max_memory_bytes`, and each call at `call_deadline` seconds (the wasmtime host's 256 MiB and
    10 s by default; the deadline needs an engine made with epoch interruption, as the default
    one is, and this package advances the epoch of every engine it is given). The compiled
    component is kept for the next process (`compile_cache`: True for the Rust host's cache
    directory, `$WORKMEM_CACHE_DIR` else `~/.cache/workmem`; a directory; or False), so a
    process after the first loads it in milliseconds rather than compiling it again. A trap (an engine bug or a limit) is raised as WorkmemError, and the instance, with
    every memory in it, is replaced by a fresh one.
    """

    def __init__(self, component: Union[str, Path, Component, None] = None, engine: Optional[wasmtime.Engine] = None,
                 max_memory_bytes: int = 256 << 20, call_deadline: float = 10.0,
                 compile_cache: Union[str, Path, bool] = True):
        self._max_memory_bytes = max_memory_bytes
        self._call_deadline = call_deadline
        self._ticks = max(1, math.ceil(call_deadline / _epoch.TICK))
        if engine is None:
            config = wasmtime.Config()
            config.epoch_interruption = True
            engine = wasmtime.Engine(config)
        _epoch.tick(engine)
        self._engine = engine
        #: Whether the component was loaded compiled from the cache (see `compile_cache`).
        self.from_cache = False
        if isinstance(component, Component):
            self._component = component
        else:
            directory = _compiled.cache_dir() if compile_cache is True else (Path(compile_cache) if compile_cache else None)
            self._component, self.from_cache = _compiled.load(self._engine, Path(component or _default_component()), directory)
        self._instantiate()

    def _instantiate(self) -> None:
        # The engine world imports nothing: an empty linker is the whole sandbox.
        self._store = wasmtime.Store(self._engine)
        self._store.set_limits(memory_size=self._max_memory_bytes)
        # The deadline is for calls (set before each); making the instance is the host's own work.
        self._store.set_epoch_deadline(1 << 40)
        instance = Linker(self._engine).instantiate(self._store, self._component)
        self._funcs: typing.Dict[str, Func] = {}
        for exported, names in ((PACKAGE, ("parse", "overview-template", "[constructor]memory", "[static]memory.load",
                                           "[method]memory.save", "[method]memory.validate", "[method]memory.apply",
                                           "[method]memory.merge", "[method]memory.render", "[method]memory.snapshot",
                                           "[method]memory.update-prompt", "[constructor]update-run",
                                           "[method]update-run.request", "[method]update-run.answer")),
                                (HISTORY, ("compact", "fallback", "apply-replacements")),
                                (CONTEXT, ("assemble", "context-meta", "overview-maintained")),
                                (CALL, ("prepare", "remind", "own-tools", "update-answer", "read-range", "read-answer")),
                                (BOARD, ("[static]board.create", "[static]board.load", "[method]board.save",
                                         "[method]board.revision", "[method]board.apply-json", "[method]board.replay",
                                         "[method]board.view", "[method]board.brief")),
                                (DOCUMENT, ("validate", "sections", "get-section", "replace-section", "template"))):
            interface = instance.get_export_index(self._store, exported)
            # Two interfaces export a `describe`: each is kept as `<interface>.describe`.
            for name in names + ("describe",) * (exported in (BOARD, DOCUMENT)):
                index = instance.get_export_index(self._store, name, interface)
                assert index is not None, f"the component does not export {name}"
                func = instance.get_func(self._store, index)
                assert func is not None, f"the component's {name} is not a function"
                remember_type(func, self._store)
                self._funcs[f"{exported.split('/')[1].split('@')[0]}.describe" if name == "describe" else name] = func
        self.generation = getattr(self, "generation", 0) + 1

    def _call(self, name: str, *args: Any) -> Any:
        func = self._funcs[name]
        self._store.set_epoch_deadline(self._ticks)
        try:
            result = func(self._store, *args)
            func.post_return(self._store)
        except (wasmtime.Trap, wasmtime.WasmtimeError) as e:
            # A trapped instance cannot be entered again; the next call gets a fresh one.
            self._instantiate()
            if isinstance(e, wasmtime.Trap) and e.trap_code == wasmtime.TrapCode.INTERRUPT or "interrupt" in str(e):
                raise WorkmemError(f"the engine call ran past its CPU deadline of {self._call_deadline} s "
                                   f"(Engine(call_deadline=...) raises it); its memories are gone") from e
            raise WorkmemError(f"the engine stopped: a bug in workmem, or more than its {self._max_memory_bytes} bytes of "
                               f"memory (Engine(max_memory_bytes=...) raises it); its memories are gone") from e
        return result

    def parse(self, text: str) -> ParseOutcome:
        """Reads a DSL update. Bad input is reported in `diagnostics`, never raised."""
        return _from_wit(self._call("parse", text), ParseOutcome)

    def overview_template(self) -> str:
        return str(self._call("overview-template"))

    def new_memory(self) -> "Memory":
        """The memory of a new session."""
        return Memory(self, self._call("[constructor]memory"))

    def load_memory(self, state: str) -> "Memory":
        """A memory from its serialized form: `save()`, or a session's state.json from any runtime."""
        loaded = self._call("[static]memory.load", state)
        if isinstance(loaded, str):
            raise WorkmemError(loaded)
        return Memory(self, loaded)


    # --- compaction (spec 003) ---------------------------------------------------------

    def compact(self, view: List[Entry], ask: Optional[Callable[[List[ChatMessage]], str]] = None, **options: Any) -> Compaction:
        """Spec 003's compact_history over a history view (oldest first). Options: target
        ("conversation", "tools", "all"), strategy ("archive", "summarize"), keep_recent,
        archive_to, archive_lines, never_compact, min_free, keep. With "summarize", `ask` gets
        the engine's request and returns the model's summary. Raises CompactionRefused when
        nothing is worth compacting, the summary is empty, or an invariant would break."""
        return _drive(self._compact_steps(view, options), Compaction, ask or _no_model)

    async def compact_async(self, view: List[Entry], ask: Callable[[List[ChatMessage]], Awaitable[str]], **options: Any) -> Compaction:
        """`compact` with an asyncio model client."""
        return await _drive_async(self._compact_steps(view, options), Compaction, ask)

    def _compact_steps(self, view: List[Entry], options: typing.Dict[str, Any]) -> typing.Generator[Any, Optional[str], None]:
        request = Record()
        for name, default in (("target", "all"), ("strategy", "archive"), ("keep_recent", 5),
                              ("archive_to", "working-memory/detail/history.md"), ("archive_lines", 0),
                              ("never_compact", []), ("min_free", 0), ("keep", [])):
            setattr(request, name.replace("_", "-"), list(options.pop(name, default)) if isinstance(default, list) else options.pop(name, default))
        if options:
            raise TypeError(f"unknown compact options: {sorted(options)}")
        setattr(request, "summary", None)
        entries = _to_wit(view)
        while True:
            # wasmtime-py gives a variant whose cases differ in type as the bare payload
            # (`plan`: a list to ask, a record when done), and one whose cases do not as a
            # Variant with a tag (`compact-error`).
            plan = self._call("compact", entries, request)
            if isinstance(plan, list):
                setattr(request, "summary", (yield _from_wit(plan, List[ChatMessage])))
                continue
            if not hasattr(plan, "tag"):
                yield _from_wit(plan, Compaction)
                return
            if plan.tag == "nothing":
                why = str(plan.payload)
            elif plan.tag == "empty-summary":
                why = "the summary came back empty; nothing was compacted"
            else:
                why = f"compaction refused, it would break an invariant: {plan.payload}"
            raise CompactionRefused(plan.tag, why)

    def fallback(self, view: List[Entry], used: int, threshold: int, goal: int, keep_recent: int = 5,
                 archive_to: str = "working-memory/detail/history.md", archive_lines: int = 0,
                 never_compact: typing.Sequence[str] = (), keep: typing.Sequence[int] = ()) -> Optional[Compaction]:
        """The fallback (spec 003 §3): None while `used` is under `threshold`; otherwise an
        archive compaction down towards `goal`."""
        request = Record()
        for name, value in (("used", used), ("threshold", threshold), ("goal", goal), ("keep-recent", keep_recent),
                            ("archive-to", archive_to), ("archive-lines", archive_lines),
                            ("never-compact", list(never_compact)), ("keep", list(keep))):
            setattr(request, name, value)
        done = self._call("fallback", _to_wit(view), request)
        return None if done is None else _from_wit(done, Compaction)

    def apply_replacements(self, view: List[Entry], replacements: List[Replacement]) -> List[Entry]:
        """The view after `replacements`: how a log of messages and compactions reads back."""
        return _from_wit(self._call("apply-replacements", _to_wit(view), _to_wit(replacements)), List[Entry])

    # --- around each model call of an agent a framework runs ------------------------------

    def prepare_call(self, request: CallRequest) -> Union[List[ChatMessage], typing.Dict[str, Any], Prepared]:
        """The next step of a model call: messages to count (append their tokens to
        `request.counted` and call again), the arguments of a `fallback` to run over the view
        (log what it returns, then call again with `compactions` one more, or `exhausted`
        where it returns None; set its `archive_lines`), or the request to send. Raises
        WorkmemError for a request over the window with all the fallback may compact
        compacted."""
        step = self._call("prepare", _to_wit(request))
        if isinstance(step, str):
            raise WorkmemError(step)
        if step.tag == "count":
            return _from_wit(step.payload, List[ChatMessage])
        if step.tag == "compact":
            return {name.replace("-", "_"): value for name, value in vars(step.payload).items()}
        return _from_wit(step.payload, Prepared)

    def remind(self, standing: Standing) -> Reminders:
        """`ContextStats`' `rounds_since_update` and `compaction_notice` from where a session
        stands (`prepare_call` takes them from it): a compaction's notice goes on the first
        request after it, and no later one."""
        return _from_wit(self._call("remind", _to_wit(standing)), Reminders)

    def own_tools(self) -> List[typing.Dict[str, Any]]:
        """workmem's own tools where the fallback compacts (`read_history`, `update_memory`),
        each as `{"name", "description", "parameters"}` with its arguments' JSON schema."""
        return [{"name": t.name, "description": t.description, "parameters": json.loads(t.parameters)}
                for t in self._call("own-tools")]

    def update_answer(self, applied: Optional["Applied"] = None, errors: typing.Sequence[Diagnostic] = ()) -> str:
        """`update_memory`'s answer: what `applied` did, with its warnings; or, with `applied`
        None, each of `errors` with its line and column, and that the memory is unchanged."""
        summary = None
        if applied is not None:
            summary = Record()
            for name, value in (("seq", applied.seq), ("added", list(applied.added)), ("archived", list(applied.archived)),
                                ("ignored", list(applied.ignored)), ("warnings", _to_wit(list(applied.warnings)))):
                setattr(summary, name, value)
        return str(self._call("update-answer", summary, _to_wit(list(errors))))

    def read_range(self, seq: str) -> typing.Tuple[int, int]:
        """`read_history`'s argument ("17", "12-20") as a first and last sequence number;
        raises WorkmemError saying what is wrong with it."""
        found = self._call("read-range", seq)
        if isinstance(found, str):
            raise WorkmemError(found)
        return (int(found[0]), int(found[1]))

    def read_answer(self, seq: str, found: List[Entry], start: int = 0) -> str:
        """`read_history`'s answer: the messages logged in `seq`'s range, from byte `start`,
        within 64 KiB (what it leaves out, it says how to read); raises WorkmemError when
        nothing was found or `start` is past the end."""
        # Both of the result's cases are strings: wasmtime-py gives it with its tag.
        answer = self._call("read-answer", seq, _to_wit(found), start)
        if answer.tag == "err":
            raise WorkmemError(answer.payload)
        return str(answer.payload)

    # --- the request to the model (spec 001) ---------------------------------------------

    def assemble(self, request: ContextRequest) -> List[ChatMessage]:
        """The request in spec 001's order: the system prompt with the working-memory
        instructions, AGENTS.md, the working memory, then the history the mode selects. The
        prefix is byte-identical while the inputs before the history do not change. Count its
        tokens, then append `context_meta`'s block last, as a system message."""
        if request.history_mode not in _HISTORY_MODES:
            raise ValueError(f"history_mode is one of {_HISTORY_MODES}, not {request.history_mode!r}")
        mode = request.history_mode
        wit = Record()
        for name, value in (("system-prompt", request.system_prompt), ("agents-md", request.agents_md),
                            ("overview", request.overview), ("history", _to_wit(request.history)),
                            ("active-turn", request.active_turn),
                            ("history-mode", Variant(mode, request.last_n if mode == "last-n" else None)),
                            ("overview-path", request.overview_path), ("detail-path", request.detail_path)):
            setattr(wit, name, value)
        return _from_wit(self._call("assemble", wit), List[ChatMessage])

    def context_meta(self, stats: ContextStats) -> str:
        """The context_meta block of spec 001 US-3, reminder line included."""
        return str(self._call("context-meta", _to_wit(stats)))

    def overview_maintained(self, overview: str) -> bool:
        """Whether overview.md holds content beyond the template; until then "auto" keeps the
        whole history in the request."""
        return bool(self._call("overview-maintained", overview))


    # --- the shared board (spec 002) --------------------------------------------------------

    def new_board(self, id: str, name: str, goal: str, constraints: typing.Sequence[str] = (),
                  memory_core_refs: typing.Sequence[str] = (), at: Optional[str] = None) -> "Board":
        """A new, active board at revision 0; raises BoardError for an empty or oversized field."""
        made = self._call("[static]board.create", id, name, goal, list(constraints), list(memory_core_refs), at or now())
        if hasattr(made, "tag"):
            raise BoardError(self, made)
        return Board(self, made)

    # --- the context document (spec 004) -----------------------------------------------------

    def validate_document(self, text: Union[str, bytes], max_bytes: int) -> None:
        """Raises DocumentError unless `text` (str, or UTF-8 bytes) is a context document of
        at most `max_bytes`: non-empty, valid UTF-8, no control characters but tab and
        newline, no Unicode noncharacters."""
        data = text.encode() if isinstance(text, str) else bytes(text)
        error = self._call("validate", data, max_bytes)
        if error is not None:
            raise DocumentError(self, error)

    def document_sections(self, text: str) -> List["DocumentSection"]:
        """The sections in order; text before the first heading has an empty name."""
        return _from_wit(self._call("sections", text), List[DocumentSection])

    def document_section(self, text: str, name: str) -> Optional[str]:
        """The body of section `name` (any case), or None."""
        body = self._call("get-section", text, name)
        return None if body is None else str(body)

    def replace_document_section(self, text: str, name: str, body: str) -> str:
        """The document with section `name`'s body replaced, every other byte as it was."""
        return str(self._call("replace-section", text, name, body))

    def document_template(self) -> str:
        """A new document with spec 004's eight sections."""
        return str(self._call("template"))

    def load_board(self, state: str) -> "Board":
        """A board from its serialized form (`save()`, from any runtime)."""
        loaded = self._call("[static]board.load", state)
        if isinstance(loaded, str):
            raise WorkmemError(loaded)
        return Board(self, loaded)


class BoardError(WorkmemError):
    """An op the board refused, in the engine's words; nothing was applied. `rule` names it
    ("unknown-task", "illegal-transition", "cycle", "empty", "too-large", "claimed",
    "invalid-op", ...)."""

    def __init__(self, engine: Engine, error: Any):
        super().__init__(str(engine._call("board.describe", error)))
        self.rule: str = error.tag


@dataclass
class DocumentSection:
    """One section of a context document: its heading's name, its body, its heading's line."""
    name: str
    body: str
    line: int


class DocumentError(WorkmemError):
    """A text refused as a context document, in the engine's words (with line:column where the
    rule has one). `rule`: "empty", "too-large", "invalid-utf8", "control-character" or
    "noncharacter"."""

    def __init__(self, engine: Engine, error: Any):
        super().__init__(str(engine._call("document.describe", error)))
        self.rule: str = getattr(error, "tag", "empty")


@dataclass
class BoardApplied:
    """What an applied op made: the board's new revision and the event its log keeps (JSON)."""
    revision: int
    event: str


_BOARD_VIEWS = ("tasks", "ready", "blocked", "in-progress", "needs-review", "failed", "stranded", "decisions",
                "discoveries", "artifacts", "nudges", "contributions", "candidates", "stale", "context-for-task")


class _Resident:
    """A resource living in an `Engine`'s instance: gone with the instance if it traps."""

    _what = "resource"

    def __init__(self, engine: Engine, handle: ResourceAny):
        self._engine = engine
        self._handle = handle
        self._generation = engine.generation

    def _call(self, name: str, *args: Any) -> Any:
        if self._generation != self._engine.generation:
            raise WorkmemError(f"this {self._what}'s engine instance trapped, so the {self._what} is gone; load it again")
        return self._engine._call(name, self._handle, *args)


class Board(_Resident):
    """Spec 002's shared task board, kept inside an `Engine`'s instance. It changes only through
    `apply`, which checks an op against the rules and applies all of it or nothing; keep each
    returned `event` in an append-only log, and `replay` rebuilds the board from it."""

    _what = "board"

    def save(self) -> str:
        """The serialized board: the same bytes from every runtime."""
        return str(self._call("[method]board.save"))

    @property
    def revision(self) -> int:
        """How many ops were applied since creation: what a writer compares and swaps on."""
        return int(self._call("[method]board.revision"))

    def apply(self, actor: str, op: typing.Union[typing.Mapping[str, Any], str], at: Optional[str] = None) -> BoardApplied:
        """Applies `op` (as the event log records it, e.g. {"op": "add_task", "title": ...,
        "description": "", "depends_on": [], "needs_review": False}) by `actor`; raises
        BoardError, changing nothing, when it breaks a rule."""
        text = op if isinstance(op, str) else json.dumps(op, separators=(",", ":"))
        out = self._call("[method]board.apply-json", actor, at or now(), text)
        if hasattr(out, "tag"):
            raise BoardError(self._engine, out)
        return BoardApplied(revision=int(getattr(out, "revision")), event=str(getattr(out, "event")))

    def replay(self, event: str) -> int:
        """Applies the board's next event from its log; returns the new revision."""
        out = self._call("[method]board.replay", event)
        # wasmtime-py tells ok from err only by a wrapper here (both can be integers), and gives
        # replay-error's cases, which differ in type, as their bare payloads.
        if not hasattr(out, "tag"):
            return int(out)
        if out.tag == "ok":
            return int(out.payload)
        why = out.payload
        if isinstance(why, int):
            raise WorkmemError(f"the board's next event is revision {why}")
        if isinstance(why, str):
            raise WorkmemError(f"not a board event: {why}")
        raise BoardError(self._engine, why)

    def view(self, name: str, arg: Optional[str] = None) -> Any:
        """A view, parsed from the engine's JSON: one of "tasks", "ready", "blocked",
        "in-progress", "needs-review", "failed", "stranded", "decisions", "discoveries",
        "artifacts", "nudges", "contributions", "candidates", "stale" (arg: a time) or
        "context-for-task" (arg: a task ID)."""
        tag = name.replace("_", "-")
        if tag not in _BOARD_VIEWS:
            raise ValueError(f"a board view is one of {_BOARD_VIEWS}, not {name!r}")
        out = self._call("[method]board.view", Variant(tag, arg if tag in ("stale", "context-for-task") else None))
        if hasattr(out, "tag"):
            raise BoardError(self._engine, out)
        return json.loads(out)

    def brief(self, task: str) -> str:
        """A task's context as a worker's LLM reads it (markdown)."""
        out = self._call("[method]board.brief", task)
        if hasattr(out, "tag"):
            raise BoardError(self._engine, out)
        return str(out)


class Memory(_Resident):
    """A working memory kept inside an `Engine`'s instance."""

    _what = "memory"

    def save(self) -> str:
        """state.json: the engine's serialized form, the same bytes from every runtime."""
        return str(self._call("[method]memory.save"))

    def validate(self, text: str) -> ParseOutcome:
        """`parse`, plus warnings for ARCHIVEs of IDs this memory does not have."""
        return _from_wit(self._call("[method]memory.validate", text), ParseOutcome)

    def apply(self, text: str, at: Optional[str] = None, overview: bool = False, state: bool = False) -> Applied:
        """Parses, validates and merges `text`; raises WorkmemError, changing nothing, when it has errors."""
        raw = self._call("[method]memory.apply", text, at or now(), _wants(overview, state))
        if isinstance(raw, list):  # the result's `err`: the diagnostics
            raise _invalid(_from_wit(raw, List[Diagnostic]))
        return _from_wit(raw, Applied)

    def merge(self, updates: List[Update], at: Optional[str] = None, overview: bool = False, state: bool = False) -> Applied:
        """Merges update objects, in order, all or none; raises WorkmemError if one is invalid."""
        raw = self._call("[method]memory.merge", _to_wit(updates), at or now(), _wants(overview, state))
        if isinstance(raw, str):
            raise WorkmemError(raw)
        return _from_wit(raw, Applied)

    def render(self) -> str:
        return str(self._call("[method]memory.render"))

    def snapshot(self) -> Snapshot:
        return _from_wit(self._call("[method]memory.snapshot"), Snapshot)

    def update_prompt(self, task: str) -> str:
        return str(self._call("[method]memory.update-prompt", task))

    def update(self, task: str, ask: Callable[[List[Message]], str], max_reprompts: int = 2) -> Updated:
        """Spec 000's memory update with a synchronous model client (see `update_async`)."""
        return _drive(self._steps(task, max_reprompts), Updated, ask)

    async def update_async(self, task: str, ask: Callable[[List[Message]], Awaitable[str]], max_reprompts: int = 2) -> Updated:
        """Spec 000's memory update driven from asyncio: `ask` gets the conversation and returns
        the model's text. A malformed answer is sent back with its diagnostics, at most
        `max_reprompts` times; a valid one is applied (with the new overview and state in the
        result). Raises WorkmemError, changing nothing, when every answer was malformed."""
        return await _drive_async(self._steps(task, max_reprompts), Updated, ask)

    def _steps(self, task: str, max_reprompts: int) -> typing.Generator[Any, Optional[str], None]:
        """The engine's update run as a generator: yields the conversation to send, receives
        the answer, and yields the result at the end."""
        run = self._call("[constructor]update-run", task, max_reprompts)
        try:
            for attempts in range(1, max_reprompts + 2):
                request = self._engine._call("[method]update-run.request", run)
                answer = yield _from_wit(request, List[Message])
                step = self._engine._call("[method]update-run.answer", run, self._handle, answer, now(), _wants(True, True))
                if step.tag == "applied":
                    applied = _from_wit(step.payload, Applied)
                    yield Updated(**{f.name: getattr(applied, f.name) for f in dataclasses.fields(Applied)}, attempts=attempts)
                    return
                if step.tag == "gave-up":
                    raise WorkmemError(f"the model's answer was still invalid after {attempts} attempts; nothing was applied",
                                       _from_wit(step.payload, List[Diagnostic]))
        finally:
            run.drop(self._engine._store)


if typing.TYPE_CHECKING:
    from .session import Session, SessionError, View


def __getattr__(name: str) -> Any:
    # The session module (files, locks, the log) loads on first use: a process that only applies
    # updates starts 7 ms sooner, of about 80 ms from the interpreter's start to its first apply.
    if name in ("Session", "SessionError", "View"):
        from . import session

        return getattr(session, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
