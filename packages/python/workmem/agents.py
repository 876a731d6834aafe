"""workmem inside the OpenAI Agents SDK: `WorkmemFilter`, a `call_model_input_filter` that
bounds every model call of a run through a workmem session (`workmem.bound.Bound`: what the run
gained logged, the fallback's compactions, the memory and `context_meta` in the engine's
order), and `tools`, workmem's own as `function_tool`s; and `WorkmemSession`, the same filter
that is also the SDK's `Session` (the conversation kept across runs in the workmem session).

    memory = WorkmemFilter(Session.create(root, Engine()), window=128_000)
    agent = Agent(name="coder", instructions="...", tools=[read_file, *memory.tools])
    await Runner.run(agent, task, run_config=RunConfig(call_model_input_filter=memory), max_turns=100)

    memory = WorkmemSession(Session.create(root, Engine()), window=128_000)
    await Runner.run(agent, task, session=memory, run_config=RunConfig(call_model_input_filter=memory))

The run's items are the session's messages by their place in the run's input (which the SDK
only appends to), so a run continued from `result.to_input_list()`, or a new filter on the same
session after a restart, logs only what is new. An assistant's turn (its reasoning, its text,
its function calls) is one message; each item is kept as it came and sent back as it came while
no compaction replaced its message."""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from agents import FunctionTool
from agents.tool_context import ToolContext
from agents.run_config import CallModelData, ModelInputData

from . import ChatMessage, Engine, ToolCall
from .bound import Bound
from .session import Session

__all__ = ["WorkmemFilter", "WorkmemSession"]


class WorkmemFilter:
    """A `call_model_input_filter` (see the module); `tools` are `read_history` and
    `update_memory` for the agent's `tools`. Raises `WorkmemError` for a request that no
    compaction brings under the window, rather than sending it."""

    def __init__(self, session: Session, engine: Optional[Engine] = None, *, window: int = 128_000,
                 compact_at: float = 0.75, compact_goal: float = 0.5, keep_recent: int = 5,
                 remind_after_rounds: int = 10, count: Optional[Callable[[str], int]] = None):
        self.bound = Bound(session, engine, window=window, compact_at=compact_at, compact_goal=compact_goal,
                           keep_recent=keep_recent, remind_after_rounds=remind_after_rounds, count=count)
        self.session = session

        self.tools: List[FunctionTool] = [self._tool(t) for t in self.bound.tools()]

    def _tool(self, definition: Dict[str, Any]) -> FunctionTool:
        name = definition["name"]

        async def invoke(_: ToolContext[Any], arguments: str) -> str:
            try:
                parsed = json.loads(arguments or "{}")
            except ValueError as e:
                return f"error: the arguments are not JSON: {e}"
            return self.bound.answer(name, parsed if isinstance(parsed, dict) else {})

        # Not strict: `read_history`'s `from` is optional.
        return FunctionTool(name=name, description=definition["description"], params_json_schema=definition["parameters"],
                            on_invoke_tool=invoke, strict_json_schema=False)

    #: Where a run's own items start in its input, and the index in the conversation of the
    #: first of them (a `WorkmemSession` sets both when the SDK asks it for the history).
    _served, _base = 0, 0

    def __call__(self, data: CallModelData[Any]) -> ModelInputData:
        items = list(data.model_data.input)
        self.bound.log([(f"agents:{self._base + at}", message, group) for at, message, group in _messages(items[self._served:])])
        offered = [{"name": t.name, "description": t.description, "parameters": t.params_json_schema}
                   for t in data.agent.tools if isinstance(t, FunctionTool)]
        bounded = self.bound.request(data.model_data.instructions or "", self.bound.tools_tokens(json.dumps(offered) if offered else ""))
        originals = self._originals()
        out: List[Any] = []
        for seq, m in bounded.messages:
            kept = originals.get(seq) if seq is not None else None
            out.extend(kept[1] if kept is not None and kept[0] == m else _items(m))
        return ModelInputData(input=out, instructions=bounded.system)

    def _originals(self) -> Dict[int, Tuple[ChatMessage, List[Any]]]:
        """Each logged message of a run, by its sequence number: as the engine reads it, and
        the items it came as."""
        from .session import _chat_message

        out = {}
        for r in self.session.records():
            extra = [o for o in r.get("opaque", []) if not (isinstance(o, dict) and "key" in o)]
            if r["kind"] == "message" and extra:
                out[r["seq"]] = (_chat_message(r), extra)
        return out


class WorkmemSession(WorkmemFilter):
    """An Agents SDK `Session` over a workmem session, and the `call_model_input_filter` of the
    runs that use it (pass it as both). `get_items` gives the conversation as the session's
    view holds it: items no compaction replaced as they came, compacted ones as their
    placeholders; `add_items` logs the run's items (the filter logged most of them already,
    under the same keys: an item is known by its place in the conversation); `pop_item` and
    `clear_session` withdraw messages from the view (the log keeps them, `read_history` still
    reads them; the memory stays). One `WorkmemSession` per conversation."""

    session_settings = None

    def __init__(self, session: Session, engine: Optional[Engine] = None, **bounds: Any):
        super().__init__(session, engine, **bounds)
        self.session_id = str(session.meta()["id"])
        self._added = 0

    def _groups(self) -> List[Tuple[int, List[Any], Optional[Tuple[str, int]]]]:
        """The view as the SDK's items: each entry's seq, its items, and, for a message logged
        by its place, its key and where in the conversation it starts."""
        originals = self._originals()
        keys = {r["seq"]: o["key"] for r in self.session.records() if r["kind"] == "message"
                for o in r.get("opaque", []) if isinstance(o, dict) and isinstance(o.get("key"), str)}
        out: List[Tuple[int, List[Any], Optional[Tuple[str, int]]]] = []
        for e in self.session.view(self.bound.engine).entries:
            kept = originals.get(e.seq)
            key = keys.get(e.seq, "")
            at = (key, int(key.split(":")[1])) if key.startswith("agents:") and key.split(":")[1].isdigit() else None
            out.append((e.seq, kept[1] if kept is not None and kept[0] == e.message else _items(e.message), at))
        return out

    def _next(self) -> int:
        """The conversation's length: one past its last logged item that is not withdrawn (as
        logged: a compaction's placeholder stands for however many items it replaced)."""
        records = self.session.records()
        withdrawn = {seq for r in records if r["kind"] == "withdrawal" for seq in r["withdraws"]}
        end = 0
        for r in records:
            if r["kind"] != "message" or r["seq"] in withdrawn:
                continue
            opaque = r.get("opaque", [])
            key = next((o["key"] for o in opaque if isinstance(o, dict) and isinstance(o.get("key"), str)), "")
            if key.startswith("agents:") and key[7:].isdigit():
                end = max(end, int(key[7:]) + len([o for o in opaque if not (isinstance(o, dict) and "key" in o)]))
        return end

    async def get_items(self, limit: Optional[int] = None) -> List[Any]:
        items = [i for _, group, _ in self._groups() for i in group]
        served = items[-limit:] if limit else items
        # The next run's input starts with these; what follows is new.
        self._served, self._base, self._added = len(served), self._next(), 0
        return served

    async def add_items(self, items: List[Any]) -> None:
        at = self._base + self._added
        self.bound.log([(f"agents:{at + k}", message, group) for k, message, group in _messages(items)])
        self._added += len(items)

    async def pop_item(self) -> Optional[Any]:
        groups = self._groups()
        if not groups:
            return None
        seq, items, at = groups[-1]
        self.session.withdraw(self._replaced(seq), "pop_item")
        if len(items) > 1 and at is not None:
            # The rest of an assistant's turn stays, logged again under its key.
            rest = _messages(items[:-1])
            self.session.append([m for _, m, _ in rest], opaque=[[{"key": at[0]}, *g] for _, _, g in rest])
        self.bound.forget()
        self._added = max(0, self._added - 1)
        return items[-1]

    async def clear_session(self) -> None:
        withdrawn = {seq for r in self.session.records() if r["kind"] == "withdrawal" for seq in r["withdraws"]}
        live = [r["seq"] for r in self.session.records() if r["kind"] == "message" and r["seq"] not in withdrawn]
        if live:
            self.session.withdraw(live, "clear_session")
        self.bound.forget()
        self._served = self._base = self._added = 0

    def _replaced(self, seq: int) -> List[int]:
        """`seq` and, where a compaction's replacement stands in its place, all it replaced."""
        for r in reversed(self.session.records()):
            if r["kind"] == "compaction":
                for replacement in r["replacements"]:
                    if replacement["replaces"] and replacement["replaces"][0] == seq:
                        return list(replacement["replaces"])
        return [seq]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") if isinstance(p, dict) else "" for p in content or [])


def _messages(items: Sequence[Any]) -> List[Tuple[int, ChatMessage, List[Any]]]:
    """The run's items as messages, each with the place of its first item and its items: an
    assistant's turn (reasoning, text, function calls) one message, each output one."""
    out: List[Tuple[int, ChatMessage, List[Any]]] = []
    turn: Optional[Tuple[int, ChatMessage, List[Any]]] = None
    for at, item in enumerate(items):
        item = dict(item) if not isinstance(item, dict) else item
        kind = item.get("type", "message")
        role = item.get("role")
        if kind in ("reasoning", "function_call") or (kind == "message" and role == "assistant"):
            if turn is None:
                turn = (at, ChatMessage("assistant", ""), [])
            turn[2].append(item)
            if kind == "function_call":
                turn[1].tool_calls.append(ToolCall(item["call_id"], item["name"], item.get("arguments") or "{}"))
            elif kind == "message":
                turn[1].content += _text(item.get("content"))
            continue
        if turn is not None:
            out.append(turn)
            turn = None
        if kind == "function_call_output":
            out.append((at, ChatMessage("tool", _text(item.get("output")), tool_call_id=item["call_id"]), [item]))
        elif kind == "message":
            out.append((at, ChatMessage("system" if role in ("system", "developer") else "user", _text(item.get("content"))), [item]))
        else:
            # An item workmem does not know (a hosted tool's call, an image): kept as it came,
            # read as a note of its kind.
            out.append((at, ChatMessage("user", f"[{kind}]"), [item]))
    if turn is not None:
        out.append(turn)
    return out


def _items(m: ChatMessage) -> List[Dict[str, Any]]:
    """A message the engine wrote (a placeholder, the memory, `context_meta`) as input items."""
    if m.role == "assistant":
        items: List[Dict[str, Any]] = [{"role": "assistant", "content": m.content}] if m.content else []
        items += [{"type": "function_call", "call_id": c.id, "name": c.name, "arguments": c.arguments} for c in m.tool_calls]
        return items
    if m.role == "tool":
        return [{"type": "function_call_output", "call_id": m.tool_call_id or "", "output": m.content}]
    return [{"role": m.role, "content": m.content}]
