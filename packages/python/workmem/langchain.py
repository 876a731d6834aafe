"""workmem inside LangChain v1 agents: `WorkmemMiddleware`, an `AgentMiddleware` for
`create_agent`. Before each model call it logs what the agent's state gained to a workmem
session (the CLI's format, under its lock), lets the engine's safety net compact the session's
view when the request would cross its threshold (nothing the model has not seen is offloaded),
and sends the bounded view with the working memory and `context_meta` in the engine's order;
it adds workmem's own tools, `read_history` (the originals of whatever was compacted) and
`update_memory` (the memory DSL). The agent's state keeps every message as it was: only the
request is bounded.

    agent = create_agent(model, tools, middleware=[WorkmemMiddleware(Session.create(root, Engine()), window=128_000)])

Counts are o200k_base's (tiktoken), as the Rust host counts GPT-4o's, unless `count` is given."""

from __future__ import annotations

import json
from typing import Any, Awaitable, Callable, Dict, List, Optional, Sequence, Set

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from . import ChatMessage, ContextRequest, ContextStats, Engine, Entry, ToolCall, WorkmemError
from .session import Session

__all__ = ["WorkmemMiddleware"]

#: Compactions before one request at most; then a request still over the window is an error.
MAX_COMPACTIONS = 3
#: What a request's framing adds to its messages' tokens (the reply's priming), and a tool call's.
_REPLY, _CALL = 3, 8
#: The most one `read_history` answer carries, as the CLI's tool caps it.
_READ_MAX = 64 << 10


def _o200k() -> Callable[[str], int]:
    import tiktoken

    encoding = tiktoken.get_encoding("o200k_base")
    return lambda text: len(encoding.encode(text, disallowed_special=()))


class WorkmemMiddleware(AgentMiddleware):
    """Bounds every model call of a `create_agent` agent to `window` tokens through a workmem
    session: the safety net compacts at `compact_at` of the window down to `compact_goal`,
    keeping the last `keep_recent` groups; the first message the agent was given is never
    compacted. Raises `WorkmemError` for a request that no compaction brings under the
    window (its system prompt and task alone fill it), rather than sending it."""

    def __init__(self, session: Session, engine: Optional[Engine] = None, *, window: int = 128_000,
                 compact_at: float = 0.75, compact_goal: float = 0.5, keep_recent: int = 5,
                 remind_after_rounds: int = 10, count: Optional[Callable[[str], int]] = None):
        super().__init__()
        self.session = session
        self.engine = engine or Engine()
        self.window = window
        self.threshold = int(window * compact_at)
        self.goal = int(window * compact_goal)
        self.keep_recent = keep_recent
        self.remind_after_rounds = remind_after_rounds
        self._count = count
        self._logged: Optional[Set[str]] = None
        self.tools: List[BaseTool] = [
            StructuredTool.from_function(self._read_history, name="read_history", description=(
                "Read back messages of this session by sequence number, as they were before any compaction "
                "(compacted messages say their numbers).")),
            StructuredTool.from_function(self._update_memory, name="update_memory", description=(
                "Update the structured memory with the DSL (CURRENT_PROGRESS / KEY_LEARNINGS / VERBATIM_CONTEXT); "
                "it re-renders working-memory/overview.md.")),
        ]

    # --- the extension point ---------------------------------------------------------------

    def wrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]) -> ModelResponse:
        return handler(self._bounded(request))

    async def awrap_model_call(self, request: ModelRequest,
                               handler: Callable[[ModelRequest], Awaitable[ModelResponse]]) -> ModelResponse:
        return await handler(self._bounded(request))

    # --- one call --------------------------------------------------------------------------

    def count(self, text: str) -> int:
        if self._count is None:
            self._count = _o200k()
        return self._count(text)

    def _tokens(self, m: ChatMessage) -> int:
        return (3 + self.count(m.role) + self.count(m.content)
                + sum(_CALL + self.count(c.name) + self.count(c.arguments) for c in m.tool_calls))

    def _bounded(self, request: ModelRequest) -> ModelRequest:
        self._log_new(request.messages)
        system = _text(request.system_message.content) if request.system_message is not None else ""
        tools = [convert_to_openai_tool(t) for t in request.tools]
        tools_tokens = 12 + self.count(json.dumps(tools)) if tools else 0
        meta = self.session.meta()
        for attempt in range(MAX_COMPACTIONS + 1):
            view = self.session.view(self.engine)
            for e in view.entries:
                e.tokens = self._tokens(e.message)
            overview = self.session.overview()
            assembled = self.engine.assemble(ContextRequest(
                system_prompt=system, overview=overview, history=[e.message for e in view.entries],
                history_mode="all", detail_path=""))
            leading = assembled[:len(assembled) - len(view.entries)]
            used = sum(self._tokens(m) for m in leading) + sum(e.tokens for e in view.entries) + _REPLY + tools_tokens
            if used < self.threshold or attempt == MAX_COMPACTIONS or not self._compact(view.entries, used):
                break
            meta = self.session.meta()
        last = view.last_compaction
        notice = last["notice"] if last is not None and last.get("round") == meta.get("rounds", 0) else None
        rounds = int(meta.get("rounds", 0)) - int(meta.get("memory_updated_round", 0))
        block = self.engine.context_meta(ContextStats(
            tokens_used=used, tokens_max=self.window, messages_in_history=len(view.entries),
            working_memory_size=len(overview), rounds_since_update=rounds,
            remind_after_rounds=self.remind_after_rounds or None, strong_reminder_tokens=self.window // 2,
            compact_at=self.threshold, compaction_notice=notice))
        total = used + self._tokens(ChatMessage("system", block))
        if total > self.window:
            raise WorkmemError(f"the request is {total} tokens, over the window of {self.window}, with all that may be "
                               "compacted compacted: its system prompt, memory and newest messages alone fill it")
        self.session.count_round()
        messages: List[AnyMessage] = [_to_langchain(m) for m in assembled[1:]] + [SystemMessage(block)]
        return request.override(messages=messages, system_message=SystemMessage(assembled[0].content))

    def _compact(self, view: List[Entry], used: int) -> bool:
        """One compaction by the safety net, logged; False when it had nothing to compact."""
        archive_to = "working-memory/detail/history.md"
        first = next((e.seq for e in view if e.message.role == "user"), None)
        planned = self.engine.fallback(view, used=used, threshold=self.threshold, goal=min(self.goal, self.threshold),
                                       keep_recent=self.keep_recent, archive_to=archive_to,
                                       archive_lines=self.session.archive_lines(archive_to),
                                       never_compact=(), keep=[first] if first is not None else [])
        if planned is None or not planned.replacements:
            return False
        self.session.log_compaction(planned, archive_to=archive_to)
        return True

    def _log_new(self, messages: Sequence[AnyMessage]) -> None:
        """Logs the agent's messages the session does not hold yet, by their LangChain IDs
        (the state gives every message one); on the first call, the IDs the log holds are
        read back, so a session resumes after a restart."""
        if self._logged is None:
            self._logged = {o["langchain_id"] for r in self.session.records() for o in r.get("opaque", [])
                            if isinstance(o, dict) and "langchain_id" in o}
        new = [m for m in messages if m.id is None or m.id not in self._logged]
        if not new:
            return
        self.session.append([_to_chat(m) for m in new], opaque=[[{"langchain_id": m.id}] if m.id else [] for m in new])
        self._logged.update(m.id for m in new if m.id)

    # --- workmem's own tools ---------------------------------------------------------------

    def _read_history(self, seq: str) -> str:
        """seq: a message's sequence number, e.g. "17", or a range, e.g. "12-20"."""
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

    def _update_memory(self, dsl: str) -> str:
        """dsl: the update, in the memory DSL."""
        try:
            applied = self.session.apply(self.engine, dsl)
        except WorkmemError as e:
            lines = [f"- line {d.line}, column {d.column}: {d.message}" for d in e.diagnostics if d.severity == "error"]
            return "The update was refused and the memory is unchanged:\n" + "\n".join(lines or [str(e)]) + \
                "\nCall update_memory again with the corrected DSL."
        added = ", ".join(applied.added) or "none"
        archived = ", ".join(applied.archived) or "none"
        return f"applied update {applied.seq}: added {added}; archived {archived}; overview.md re-rendered"


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content or [])


def _to_chat(m: BaseMessage) -> ChatMessage:
    if isinstance(m, AIMessage):
        calls = [ToolCall(c["id"] or "", c["name"], json.dumps(c["args"])) for c in m.tool_calls]
        return ChatMessage("assistant", _text(m.content), tool_calls=calls)
    if isinstance(m, ToolMessage):
        return ChatMessage("tool", _text(m.content), tool_call_id=m.tool_call_id)
    if isinstance(m, SystemMessage):
        return ChatMessage("system", _text(m.content))
    return ChatMessage("user", _text(m.content))


def _to_langchain(m: ChatMessage) -> AnyMessage:
    if m.role == "assistant":
        calls: List[Dict[str, Any]] = []
        for c in m.tool_calls:
            try:
                args = json.loads(c.arguments) if c.arguments.strip() else {}
            except ValueError:
                args = {}
            calls.append({"id": c.id, "name": c.name, "args": args if isinstance(args, dict) else {}})
        return AIMessage(m.content, tool_calls=calls)
    if m.role == "tool":
        return ToolMessage(m.content, tool_call_id=m.tool_call_id or "")
    if m.role == "system":
        return SystemMessage(m.content)
    return HumanMessage(m.content)
