"""What happens around each model call of an agent a framework runs, for the framework adapters
(`workmem.langchain`, `workmem.agents`): the messages the agent gained logged to a workmem
session, the session's view compacted by the engine's safety net where the request would cross
its threshold, and the request built in the engine's order with the working memory and
`context_meta`; and workmem's own tools, `read_history` and `update_memory`. The engine makes
every decision (what to compact, the request's order, the block); this module only reads and
writes the session and counts. An adapter converts its framework's messages to `ChatMessage`s,
each with the key it knows it by, and back."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

from . import ChatMessage, ContextRequest, ContextStats, Engine, Entry, WorkmemError
from .session import Session

__all__ = ["Bound", "Request", "READ_HISTORY", "UPDATE_MEMORY"]

#: Compactions before one request at most; then a request still over the window is an error.
MAX_COMPACTIONS = 3
#: What a request's framing adds to its messages' tokens (the reply's priming), and a tool call's,
#: as the Rust host counts them.
_REPLY, _CALL = 3, 8
#: The most one `read_history` answer carries, as the CLI's tool caps it.
_READ_MAX = 64 << 10
#: The archive file the safety net's compactions append to.
_ARCHIVE = "working-memory/detail/history.md"

READ_HISTORY = ("Read back messages of this session by sequence number, as they were before any compaction "
                "(compacted messages say their numbers).")
UPDATE_MEMORY = ("Update the structured memory with the DSL (CURRENT_PROGRESS / KEY_LEARNINGS / VERBATIM_CONTEXT); "
                 "it re-renders working-memory/overview.md.")


def _o200k() -> Callable[[str], int]:
    import tiktoken

    encoding = tiktoken.get_encoding("o200k_base")
    return lambda text: len(encoding.encode(text, disallowed_special=()))


@dataclass
class Request:
    """A bounded request: the system prompt with workmem's guide (`system`), then `messages`
    (the memory, the history as the view shows it, `context_meta` last), each history message
    with the sequence number of the view entry it is (None for the others), and its tokens."""

    system: str
    messages: List[Tuple[Optional[int], ChatMessage]]
    tokens: int


class Bound:
    """Bounds every model call to `window` tokens through a workmem session: the safety net
    compacts at `compact_at` of the window down to `compact_goal`, keeping the last
    `keep_recent` groups; the first user message (the task) is never compacted. Counts are
    o200k_base's (tiktoken), as the Rust host counts GPT-4o's, unless `count` is given."""

    def __init__(self, session: Session, engine: Optional[Engine] = None, *, window: int = 128_000,
                 compact_at: float = 0.75, compact_goal: float = 0.5, keep_recent: int = 5,
                 remind_after_rounds: int = 10, count: Optional[Callable[[str], int]] = None):
        self.session = session
        self.engine = engine or Engine()
        self.window = window
        self.threshold = int(window * compact_at)
        self.goal = int(window * compact_goal)
        self.keep_recent = keep_recent
        self.remind_after_rounds = remind_after_rounds
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
        """The keys of the messages the session holds (read from its log once, so that a
        session resumes after a restart)."""
        if self._logged is None:
            self._logged = {o["key"] for r in self.session.records() for o in r.get("opaque", [])
                            if isinstance(o, dict) and isinstance(o.get("key"), str)}
        return self._logged

    def log(self, messages: Sequence[Tuple[str, ChatMessage, Sequence[Any]]]) -> None:
        """Logs the messages whose key the session does not hold yet, in order; each with the
        parts of it in its framework's shape that the session keeps and never reads."""
        logged = self.logged()
        new = [(k, m, extra) for k, m, extra in messages if k not in logged]
        if new:
            self.session.append([m for _, m, _ in new], opaque=[[{"key": k}, *extra] for k, _, extra in new])
            logged.update(k for k, _, _ in new)

    def request(self, system: str, tools_tokens: int) -> Request:
        """The bounded request for the session as it stands (see the module). Raises
        `WorkmemError` for one that no compaction brings under the window, instead of it."""
        meta = self.session.meta()
        for attempt in range(MAX_COMPACTIONS + 1):
            view = self.session.view(self.engine)
            for e in view.entries:
                e.tokens = self.tokens(e.message)
            overview = self.session.overview()
            # With the whole history sent, what goes before it depends on nothing of the history:
            # the engine's part is asked for alone (a thousand messages across the sandbox's
            # boundary were most of a call's time).
            leading = self.engine.assemble(ContextRequest(system_prompt=system, overview=overview, history_mode="all", detail_path=""))
            used = sum(self.tokens(m) for m in leading) + sum(e.tokens for e in view.entries) + _REPLY + tools_tokens
            if used < self.threshold or attempt == MAX_COMPACTIONS or not self._compact(view.entries, used):
                break
            meta = self.session.meta()
        last = view.last_compaction
        notice = last["notice"] if last is not None and last.get("round") == meta.get("rounds", 0) else None
        block = self.engine.context_meta(ContextStats(
            tokens_used=used, tokens_max=self.window, messages_in_history=len(view.entries),
            working_memory_size=len(overview),
            rounds_since_update=int(meta.get("rounds", 0)) - int(meta.get("memory_updated_round", 0)),
            remind_after_rounds=self.remind_after_rounds or None, strong_reminder_tokens=self.window // 2,
            compact_at=self.threshold, compaction_notice=notice))
        total = used + self.tokens(ChatMessage("system", block))
        if total > self.window:
            raise WorkmemError(f"the request is {total} tokens, over the window of {self.window}, with all that may be "
                               "compacted compacted: its system prompt, memory and newest messages alone fill it")
        self.session.count_round()
        messages: List[Tuple[Optional[int], ChatMessage]] = [(None, m) for m in leading[1:]]
        messages += [(e.seq, e.message) for e in view.entries]
        messages.append((None, ChatMessage("system", block)))
        return Request(leading[0].content, messages, total)

    def _compact(self, view: List[Entry], used: int) -> bool:
        """One compaction by the safety net, logged; False when it had nothing to compact."""
        first = next((e.seq for e in view if e.message.role == "user"), None)
        planned = self.engine.fallback(view, used=used, threshold=self.threshold, goal=min(self.goal, self.threshold),
                                       keep_recent=self.keep_recent, archive_to=_ARCHIVE,
                                       archive_lines=self.session.archive_lines(_ARCHIVE),
                                       never_compact=(), keep=[first] if first is not None else [])
        if planned is None or not planned.replacements:
            return False
        self.session.log_compaction(planned, archive_to=_ARCHIVE)
        return True

    # --- workmem's own tools ---------------------------------------------------------------

    def read_history(self, seq: str) -> str:
        """`read_history`'s answer: the messages logged with sequence number `seq` ("17") or in
        a range ("12-20", at most 200), as they were logged, in the CLI's form."""
        first, _, last = seq.strip().partition("-")
        try:
            span = (int(first), int(last or first))
        except ValueError:
            return f"error: seq must be a number or a range like 12-20, not {seq!r}"
        if span[1] < span[0] or span[1] - span[0] >= 200:
            return "error: a range reads at most 200 messages at once"
        found = self.session.originals(span)
        if not found:
            return f"error: no message with seq {seq} in this session"
        text = "".join(f"### #{n} {m.role}\n" + "".join(f"\u2192 {c.name}({c.arguments})\n" for c in m.tool_calls) + m.content + "\n\n"
                       for n, m in found)
        if len(text.encode()) <= _READ_MAX:
            return text
        half = (_READ_MAX - 256) // 2
        return f"{text[:half]}\n[\u2026 {len(text) - 2 * half} characters left out here \u2026]\n{text[-half:]}"

    def update_memory(self, dsl: str) -> str:
        """`update_memory`'s answer: what the update did, or why it was refused (line and
        column of each error), the memory then unchanged."""
        try:
            applied = self.session.apply(self.engine, dsl)
        except WorkmemError as e:
            lines = [f"- line {d.line}, column {d.column}: {d.message}" for d in e.diagnostics if d.severity == "error"]
            return "The update was refused and the memory is unchanged:\n" + "\n".join(lines or [str(e)]) + \
                "\nCall update_memory again with the corrected DSL."
        added = ", ".join(applied.added) or "none"
        archived = ", ".join(applied.archived) or "none"
        return f"applied update {applied.seq}: added {added}; archived {archived}; overview.md re-rendered"
