"""workmem inside LangChain v1 agents: `WorkmemMiddleware`, an `AgentMiddleware` for
`create_agent`. Before each model call it logs what the agent's state gained to a workmem
session (the CLI's format, under its lock), lets the engine's fallback compact the session's
view when the request would cross its threshold (nothing the model has not seen is offloaded),
and sends the bounded view with the working memory and `context_meta` in the engine's order;
it adds workmem's own tools, `read_history` (the originals of whatever was compacted) and
`update_memory` (the memory DSL). The agent's state keeps every message as it was: only the
request is bounded.

    agent = create_agent(model, tools, middleware=[WorkmemMiddleware(Session.create(root, Engine()), window=128_000)])

Counts are o200k_base's (tiktoken), as the Rust host counts GPT-4o's, unless `count` is given."""

from __future__ import annotations

import json
from typing import Any, Awaitable, Callable, Dict, List, Optional

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from . import ChatMessage, Engine, ToolCall
from .bound import Bound
from .session import Session

__all__ = ["WorkmemMiddleware"]


class WorkmemMiddleware(AgentMiddleware):
    """Bounds every model call of a `create_agent` agent to `window` tokens through a workmem
    session (see `workmem.bound.Bound` for the settings). Raises `WorkmemError` for a request
    that no compaction brings under the window (its system prompt and task alone fill it),
    rather than sending it."""

    def __init__(self, session: Session, engine: Optional[Engine] = None, *, window: int = 128_000,
                 compact_at: float = 0.75, compact_goal: float = 0.5, keep_recent: int = 5,
                 remind_after_rounds: int = 10, count: Optional[Callable[[str], int]] = None):
        super().__init__()
        self.bound = Bound(session, engine, window=window, compact_at=compact_at, compact_goal=compact_goal,
                           keep_recent=keep_recent, remind_after_rounds=remind_after_rounds, count=count)
        self.session = session

        self.tools: List[BaseTool] = [self._tool(t) for t in self.bound.tools()]

    def _tool(self, definition: Dict[str, Any]) -> BaseTool:
        name = definition["name"]
        return StructuredTool(name=name, description=definition["description"], args_schema=definition["parameters"],
                              func=lambda **arguments: self.bound.answer(name, arguments))

    def wrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]) -> ModelResponse:
        return handler(self._bounded(request))

    async def awrap_model_call(self, request: ModelRequest,
                               handler: Callable[[ModelRequest], Awaitable[ModelResponse]]) -> ModelResponse:
        return await handler(self._bounded(request))

    def _bounded(self, request: ModelRequest) -> ModelRequest:
        # The state gives every message an ID: what the log knows it by, so that a new
        # middleware on the same session (a restart) logs only what is new.
        self.bound.log([(f"langchain:{m.id}", _to_chat(m), []) for m in request.messages if m.id is not None])
        system = _text(request.system_message.content) if request.system_message is not None else ""
        tools = [convert_to_openai_tool(t) for t in request.tools]
        bounded = self.bound.request(system, self.bound.tools_tokens(json.dumps(tools) if tools else ""))
        messages = [_to_langchain(m) for _, m in bounded.messages]
        return request.override(messages=messages, system_message=SystemMessage(bounded.system))


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
