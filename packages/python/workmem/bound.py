"""What happens around each model call of an agent a framework runs, for the framework adapters
(`workmem.langchain`, `workmem.agents`): the messages the agent gained logged to a workmem
session, and the request the engine's `call` steps decide (`Engine.prepare_call`: the view
compacted by the fallback where it would cross its threshold, in the engine's order with the
working memory and `context_meta`); and the answers of workmem's own tools, `read_history` and
`update_memory`. The engine makes every decision; this module only reads and writes the
session and counts tokens. An adapter converts its framework's messages to `ChatMessage`s,
each with the key it knows it by, and back."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Set, Tuple

from . import Bounds, CallRequest, ChatMessage, CompactionMark, Engine, Entry, Prepared, Standing, WorkmemError
from .session import Session, View

__all__ = ["Bound", "Request"]

#: What a request's framing adds to its messages' tokens (the reply's priming), and a tool call's,
#: as the Rust host counts them.
_REPLY, _CALL = 3, 8
#: The archive file the fallback's compactions append to.
_ARCHIVE = "working-memory/detail/history.md"


#: The Rust host counts long text a piece of at most this many bytes at a time
#: (`workmem_llm::Tokenizer::count`): tiktoken's regex backtracks over a long run of whitespace.
_PIECE = 16 << 10


def _pieces(text: str) -> Iterator[str]:
    """`text` in the pieces the Rust host counts it in, so that every runtime's count is its
    own (tests/data/tokens.json holds them equal): a piece ends after the last newline in its
    second half that the pre-tokenizer ends a word at (one not followed by whitespace or `/`),
    else after its last newline there, else at a character's start."""
    data = text.encode()
    while len(data) > _PIECE:
        cut = _PIECE
        while data[cut] & 0xC0 == 0x80:
            cut -= 1
        half = _PIECE // 2
        while data[half] & 0xC0 == 0x80:
            half += 1
        afters = [half + i + 1 for i, b in enumerate(data[half:cut]) if b == 0x0A][::-1]
        ends = [a for a in afters if (c := data[a:a + 4].decode(errors="ignore")[:1]) and not c.isspace() and c != "/"]
        cut = (ends or afters or [cut])[0]
        yield data[:cut].decode()
        data = data[cut:]
    if data:
        yield data.decode()


def _o200k() -> Callable[[str], int]:
    import tiktoken

    encoding = tiktoken.get_encoding("o200k_base")
    # Special tokens' text counts as the token, as the Rust host counts it.
    return lambda text: sum(len(encoding.encode(piece, allowed_special="all")) for piece in _pieces(text))


@dataclass
class Request:
    """A bounded request: the system prompt with workmem's guide (`system`), then `messages`
    (the memory, the history as the view shows it, `context_meta` last), each history message
    with the sequence number of the view entry it is (None for the others), and its tokens."""

    system: str
    messages: List[Tuple[Optional[int], ChatMessage]]
    tokens: int


class Bound:
    """Bounds every model call to `window` tokens through a workmem session: the fallback
    compacts at `compact_at` of the window down to `compact_goal`, keeping the last
    `keep_recent` groups; the first user message (the task) is never compacted. Counts are
    o200k_base's (tiktoken), as the Rust host counts GPT-4o's, unless `count` is given."""

    def __init__(self, session: Session, engine: Optional[Engine] = None, *, window: int = 128_000,
                 compact_at: float = 0.75, compact_goal: float = 0.5, keep_recent: int = 5,
                 remind_after_rounds: int = 10, count: Optional[Callable[[str], int]] = None):
        self.session = session
        self.engine = engine or Engine()
        self.window = window
        self.bounds = Bounds(window, int(window * compact_at), int(window * compact_goal), keep_recent,
                             remind_after_rounds or None, archive_to=_ARCHIVE)
        self._count = count
        self._logged: Optional[Set[str]] = None
        self._counted: Dict[Tuple[str, str, Tuple[Tuple[str, str], ...]], int] = {}

    def count(self, text: str) -> int:
        if self._count is None:
            self._count = _o200k()
        return self._count(text)

    def tokens(self, m: ChatMessage) -> int:
        """A message's tokens in a request (each message counted once: the view is counted
        again on every call)."""
        key = (m.role, m.content, tuple((c.name, c.arguments) for c in m.tool_calls))
        known = self._counted.get(key)
        if known is None:
            known = self._counted[key] = (3 + self.count(m.role) + self.count(m.content)
                                          + sum(_CALL + self.count(c.name) + self.count(c.arguments) for c in m.tool_calls))
        return known

    def tools_tokens(self, definitions: str) -> int:
        """What offering tools adds, given their definitions as JSON text (none: 0)."""
        return 12 + self.count(definitions) if definitions else 0

    def logged(self) -> Set[str]:
        """The keys of the messages the session holds and has not withdrawn (read from its log
        once, so that a session resumes after a restart; `forget` reads it again)."""
        if self._logged is None:
            keys: Dict[int, str] = {}
            for r in self.session.records():
                if r["kind"] == "withdrawal":
                    for seq in r["withdraws"]:
                        keys.pop(seq, None)
                for o in r.get("opaque", []):
                    if isinstance(o, dict) and isinstance(o.get("key"), str):
                        keys[r["seq"]] = o["key"]
            self._logged = set(keys.values())
        return self._logged

    def forget(self) -> None:
        """Reads the logged keys anew on the next `log` (after a withdrawal)."""
        self._logged = None

    def log(self, messages: Sequence[Tuple[str, ChatMessage, Sequence[Any]]]) -> None:
        """Logs the messages whose key the session does not hold yet, in order; each with the
        parts of it in its framework's shape that the session keeps and never reads."""
        logged = self.logged()
        new = [(k, m, extra) for k, m, extra in messages if k not in logged]
        if new:
            self.session.append([m for _, m, _ in new], opaque=[[{"key": k}, *extra] for k, _, extra in new])
            logged.update(k for k, _, _ in new)

    def request(self, system: str, tools_tokens: int) -> Request:
        """The bounded request for the session as it stands: the engine's steps driven (see
        `Engine.prepare_call`). Raises `WorkmemError` for one that no compaction brings under
        the window, instead of it."""
        meta = self.session.meta()
        view = self.session.view(self.engine)
        call = CallRequest(self.bounds, system, self.session.overview(), 0, 0, overhead=tools_tokens + _REPLY,
                           standing=Standing(int(meta.get("rounds", 0)), int(meta.get("memory_updated_round", 0))))
        self._seen(call, view)
        while True:
            step = self.engine.prepare_call(call)
            if isinstance(step, Prepared):
                break
            if isinstance(step, list):
                call.counted += [self.tokens(m) for m in step]
                continue
            step["archive_lines"] = self.session.archive_lines(step["archive_to"])
            planned = self.engine.fallback(view.entries, **step)
            if planned is None or not planned.replacements:
                call.exhausted = True
                continue
            self.session.log_compaction(planned, archive_to=step["archive_to"])
            call.compactions += 1
            view = self.session.view(self.engine)
            self._seen(call, view)
        self.session.count_round()
        messages: List[Tuple[Optional[int], ChatMessage]] = [(None, m) for m in step.leading[1:]]
        messages += [(e.seq, e.message) for e in view.entries]
        messages.append((None, ChatMessage("system", step.meta)))
        return Request(step.leading[0].content, messages, step.tokens)

    def _seen(self, call: CallRequest, view: View) -> None:
        """The view as the engine's steps take it (anew only after a compaction changed it)."""
        for e in view.entries:
            e.tokens = self.tokens(e.message)
        call.view_tokens, call.view_entries = sum(e.tokens for e in view.entries), len(view.entries)
        call.task = next((e.seq for e in view.entries if e.message.role == "user"), None)
        last = view.last_compaction
        call.standing.last_compaction = None if last is None else CompactionMark(int(last.get("round", 0)), str(last["notice"]))

    # --- workmem's own tools ---------------------------------------------------------------

    def tools(self) -> List[Dict[str, Any]]:
        """workmem's own tools as the engine defines them: `{"name", "description",
        "parameters"}` each, `parameters` their arguments' JSON schema."""
        return self.engine.own_tools()

    def answer(self, name: str, arguments: Dict[str, Any]) -> str:
        """The answer to a call of one of `tools()` with its parsed arguments."""
        if name == "read_history":
            start = arguments.get("from", 0)
            # The engine takes a 32-bit byte: a model's larger (or negative, or fractional)
            # number is refused as the Rust host refuses it, never read modulo 2^32.
            if isinstance(start, bool) or not isinstance(start, int) or not 0 <= start <= 0xFFFFFFFF:
                return 'error: read_history needs a non-negative integer argument "from"'
            return self.read_history(str(arguments.get("seq", "")), start)
        if name == "update_memory":
            return self.update_memory(str(arguments.get("dsl", "")))
        return f"error: {name} is not one of workmem's tools"

    def read_history(self, seq: str, start: int = 0) -> str:
        """`read_history`'s answer: the messages logged with sequence number `seq` ("17") or in
        a range ("12-20"), as they were logged, from byte `start`, as the engine words it (an
        error as "error: ..." for the model to read). `start` is a 32-bit byte offset."""
        if not 0 <= start <= 0xFFFFFFFF:
            return 'error: read_history needs a non-negative integer argument "from"'
        try:
            span = self.engine.read_range(seq)
            found = [Entry(n, m, 0) for n, m in self.session.originals(span)]
            return self.engine.read_answer(seq, found, start)
        except WorkmemError as e:
            return f"error: {e}"

    def update_memory(self, dsl: str) -> str:
        """`update_memory`'s answer, as the engine words it: what the update did, or why it was
        refused (line and column of each error), the memory then unchanged."""
        try:
            return self.engine.update_answer(self.session.apply(self.engine, dsl))
        except WorkmemError as e:
            if not e.diagnostics:
                raise
            return self.engine.update_answer(None, e.diagnostics)
