"""A scripted model on loopback for `workmem proxy`'s tests: it speaks OpenAI Chat Completions
(`/v1/chat/completions`), Anthropic Messages (`/v1/messages`, `count_tokens`) and the OpenAI
Responses API (`/v1/responses`), streamed as server-sent events or not, and drives a tool loop
over large files whatever the client is.

Each answer follows from the request alone (the ID of the last tool call answered), so the loop
goes on however the proxy compacted the history. The script, step k of `steps`:
- calls the client's file tool on file k (ID `s-k`);
- at `update_at`, calls workmem's `update_memory`; at `read_back_at`, once a compaction has left
  a `read_history {"seq": ...}` pointer in the request, calls `read_history` with it;
- after the last step, answers `FINISHED <steps> steps`.

Every request is checked as it arrives and written to `log` (JSON lines): tool calls and results
paired, the size sent, and whether a `read_history` answer held a tool result's original bytes. Requests
that are not the main loop (a client's title or quota requests) get a short answer."""

import hashlib
import itertools
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable

# What the scripted update_memory call saves, as the memory shows it once rendered.
MEMORY = "every file has numbered lines"
POINTER = re.compile(r'read_history \{"seq": "(\d+(?:-\d+)?)"\}')
ANSWER = "FINISHED"


def file_text(k: int, size: int) -> str:
    """File k's content: `size` bytes of hex digests, different in every file and on every line,
    so that it costs as many tokens as real code does, not as few as repeated text."""
    lines, n, total = [], 0, 0
    while total < size:
        line = f"{k}:{n} " + " ".join(hashlib.sha256(f"{k}/{n}/{i}".encode()).hexdigest()[:16] for i in range(5))
        lines.append(line)
        total += len(line) + 1
        n += 1
    return "\n".join(lines)[:size]


@dataclass
class Script:
    steps: int
    files: int
    file_size: int
    # The client's file tool: its name and its arguments for a path.
    tool: str
    arguments: Callable[[str], dict[str, Any]]
    update_at: int = 0
    read_back_at: int = 0
    # A context window, in this model's tokens (`tokens`): a request over it is answered 400
    # context_length_exceeded, as a provider answers it. 0: none.
    window: int = 0
    log: Path | None = None
    # Called with the step being answered, halfway through each streamed answer of the loop:
    # a fault injected while a stream is in flight (fleet.py).
    during: Callable[[int], None] | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    texts: dict[int, str] = field(default_factory=dict)
    # Each tool result as the model was first sent it whole (before any compaction replaced it).
    originals: dict[str, str] = field(default_factory=dict)

    def text(self, k: int) -> str:
        if k not in self.texts:
            self.texts[k] = file_text(k, self.file_size)
        return self.texts[k]

    def record(self, entry: dict[str, Any]) -> None:
        if self.log:
            with self.lock, self.log.open("a") as f:
                f.write(json.dumps(entry) + "\n")


@dataclass
class Turn:
    """A request as the script reads it, in either protocol."""

    texts: list[str]  # every text the request carries, tool results included
    last_call: str | None  # the ID of the last tool call answered (what comes after is not the model's)
    results: dict[str, str]  # tool call ID -> its answer's text
    unpaired: list[str]
    tools: list[str]
    # The calls of the last assistant turn whose reasoning (Anthropic thinking, Responses
    # reasoning items) did not come back with them, as the providers require.
    unreasoned: list[str] = field(default_factory=list)
    # The system prompt: where workmem puts the working memory.
    system: str = ""


def chat_turn(body: dict[str, Any]) -> Turn:
    texts, results, unpaired, open_calls = [], {}, [], []
    last_call = None
    for i, m in enumerate(body.get("messages", [])):
        content = m.get("content")
        text = content if isinstance(content, str) else "".join(p.get("text", "") for p in content or [])
        texts.append(text)
        if m["role"] == "tool":
            cid = m.get("tool_call_id")
            if cid in open_calls:
                open_calls.remove(cid)
            else:
                unpaired.append(f"message {i} answers {cid}, which is not open")
            results[cid] = text
            last_call = cid
            continue
        unpaired.extend(f"{c} unanswered at message {i}" for c in open_calls)
        open_calls = [c["id"] for c in m.get("tool_calls") or []]
        for c in m.get("tool_calls") or []:
            texts.append(c["function"]["arguments"])
    unpaired.extend(f"{c} unanswered at the end" for c in open_calls)
    tools = [t["function"]["name"] for t in body.get("tools") or []]
    system = "".join(c if isinstance(c, str) else "".join(p.get("text", "") for p in c or [])
                     for c in (m.get("content") for m in body.get("messages", []) if m["role"] in ("system", "developer")))
    return Turn(texts, last_call, results, unpaired, tools, system=system)


def messages_turn(body: dict[str, Any]) -> Turn:
    texts, results, unpaired, open_calls = [], {}, [], []
    last_call = None
    system = body.get("system")
    texts.append(system if isinstance(system, str) else "".join(b.get("text", "") for b in system or []))
    for i, m in enumerate(body.get("messages", [])):
        content = m["content"] if isinstance(m["content"], list) else [{"type": "text", "text": m["content"]}]
        answered = []
        for block in content:
            if block["type"] == "text":
                texts.append(block["text"])
            elif block["type"] == "tool_use":
                texts.append(json.dumps(block["input"]))
            elif block["type"] == "tool_result":
                inner = block.get("content")
                text = inner if isinstance(inner, str) else "".join(b.get("text", "") for b in inner or [])
                texts.append(text)
                results[block["tool_use_id"]] = text
                answered.append(block["tool_use_id"])
                last_call = block["tool_use_id"]
        if m["role"] == "user":
            unpaired.extend(f"{c} unanswered at message {i}" for c in open_calls if c not in answered)
            unpaired.extend(f"message {i} answers {c}, which is not open" for c in answered if c not in open_calls)
            open_calls = []
        else:
            unpaired.extend(f"{c} unanswered at message {i}" for c in open_calls)
            open_calls = [b["id"] for b in content if b["type"] == "tool_use"]
    unpaired.extend(f"{c} unanswered at the end" for c in open_calls)
    tools = [t["name"] for t in body.get("tools") or []]
    last = next((m for m in reversed(body.get("messages", [])) if m["role"] == "assistant" and isinstance(m["content"], list)), None)
    signed = {b.get("signature") for b in (last or {}).get("content", []) if b.get("type") == "thinking"}
    unreasoned = [b["id"] for b in (last or {}).get("content", []) if b.get("type") == "tool_use" and f"sig-{b['id']}" not in signed]
    return Turn(texts, last_call, results, unpaired, tools, unreasoned, system=texts[0])


def responses_turn(body: dict[str, Any]) -> Turn:
    texts, results, unpaired, open_calls = [], {}, [], []
    last_call = None
    texts.append(body.get("instructions") or "")
    items = body.get("input")
    for i, item in enumerate(items if isinstance(items, list) else [{"type": "message", "content": items}]):
        kind = item.get("type", "message")
        if kind == "message":
            content = item.get("content")
            texts.append(content if isinstance(content, str) else "".join(p.get("text", "") for p in content or []))
            if item.get("role") != "developer":
                unpaired.extend(f"{c} unanswered at input {i}" for c in open_calls)
                open_calls = []
        elif kind == "function_call":
            open_calls.append(item["call_id"])
            texts.append(item.get("arguments", ""))
        elif kind == "function_call_output":
            cid = item["call_id"]
            if cid in open_calls:
                open_calls.remove(cid)
            else:
                unpaired.append(f"input {i} answers {cid}, which is not open")
            output = item.get("output")
            text = output if isinstance(output, str) else "".join(p.get("text", "") for p in output or [])
            texts.append(text)
            results[cid] = text
            last_call = cid
    unpaired.extend(f"{c} unanswered at the end" for c in open_calls)
    tools = [t.get("name") for t in body.get("tools") or [] if t.get("name")]
    listed = items if isinstance(items, list) else []
    reasoned = {i.get("encrypted_content") for i in listed if i.get("type") == "reasoning"}
    calls = [i["call_id"] for i in listed if i.get("type") == "function_call"]
    unreasoned = [c for c in calls[-1:] if f"enc-{c}" not in reasoned]
    system = (body.get("instructions") or "") + "".join(
        p if isinstance(p, str) else "".join(x.get("text", "") for x in p or [])
        for p in (i.get("content") for i in listed if i.get("type", "message") == "message" and i.get("role") in ("system", "developer")))
    return Turn(texts, last_call, results, unpaired, tools, unreasoned, system=system)


def decide(script: Script, turn: Turn) -> tuple[str, str, dict[str, Any], str] | str:
    """The next tool call `(id, name, arguments, text before it)`, or the final answer. Every
    seventh step says something before its call, as models do."""
    step = 1
    if turn.last_call and turn.last_call.startswith(("s-", "wm-")):
        step = int(turn.last_call.split("-")[1]) + 1
    if step > script.steps:
        return f"{ANSWER} {script.steps} steps"
    if step == script.update_at and "update_memory" in turn.tools:
        dsl = (f"CURRENT_PROGRESS:\n  In Progress:\n    - Reading file {step} of {script.steps}\n"
               f"KEY_LEARNINGS:\n  ADD:\n    - because later steps rely on it: {MEMORY}\n")
        return (f"wm-{step}-update", "update_memory", {"dsl": dsl}, "")
    if step >= script.read_back_at > 0 and "read_history" in turn.tools and not any(k.startswith("wm-") and k.endswith("-read") for k in turn.results):
        # One offloaded output, not a range (a range's answer may be too large to stay in a
        # request), and one this model was once sent whole: only then do bytes stand apart from
        # the proxy's to check the answer against.
        with script.lock:
            seen = {cid for cid, text in script.originals.items() if len(text) >= 1000}
        pointer = next((m.group(1) for cid, t in turn.results.items() if cid in seen for m in POINTER.finditer(t) if "-" not in m.group(1)), None)
        if pointer:
            return (f"wm-{step}-read", "read_history", {"seq": pointer}, "Reading an earlier output back. ")
    k = (step - 1) % script.files + 1
    return (f"s-{step}", script.tool, script.arguments(f"file_{k}.txt"), f"Step {step}: the next file. " if step % 7 == 3 else "")


# The Messages answers given, for each its own ID.
ANSWERS = itertools.count(1)


def tokens(raw: bytes) -> int:
    """The prompt tokens this model reports for a request (and that the proxy corrects its own
    count by): a byte count's quarter, as a provider's tokenizer would give for English."""
    return len(raw) // 4


def check(script: Script, protocol: str, body: dict[str, Any], raw: bytes, turn: Turn, main: bool) -> None:
    # Checked where the answer is new: later, a compaction may rightly have replaced it.
    read_back = [turn.results[turn.last_call]] if turn.last_call and turn.last_call.endswith("-read") else []
    with script.lock:
        for cid, text in turn.results.items():
            # Only as sent whole: the fallback may offload a new output before the model
            # sees it (keeping its ends beside the pointer).
            if cid.startswith("s-") and not POINTER.search(text):
                script.originals.setdefault(cid, text)
        originals = [t for t in script.originals.values() if len(t) >= 1000]
    script.record({
        "protocol": protocol,
        "main": main,
        "bytes": len(raw),
        "tokens": tokens(raw),
        "messages": len(body.get("messages", [])),
        "unpaired": turn.unpaired,
        "unreasoned": turn.unreasoned,
        "tools": turn.tools,
        "last_call": turn.last_call,
        # Whether the request carries the working memory the scripted update saved: in the
        # system prompt, or in the history as the update_memory call that saved it (workmem
        # leaves the cached prefix as it was until a compaction replaces that call).
        "memory": MEMORY in turn.system or any(MEMORY in t for t in turn.texts),
        # True when workmem's read_history gave back a tool result's whole original bytes, as
        # the client sent them.
        "read_back": [any(o in text for o in originals) for text in read_back],
    })


def step_of(action: tuple[str, str, dict[str, Any], str] | str) -> int | None:
    """The loop step an answer is (its call's ID `s-<k>` or `wm-<k>-...`); None for the last."""
    return None if isinstance(action, str) else int(action[0].split("-")[1])


class Handler(BaseHTTPRequestHandler):
    script: Script
    step: int | None = None
    protocol_version = "HTTP/1.1"

    def log_message(self, *_: Any) -> None:
        pass

    def body(self) -> tuple[bytes, dict[str, Any]]:
        raw = self.rfile.read(int(self.headers.get("content-length", 0)))
        return raw, json.loads(raw or b"{}")

    def send_json(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_events(self, events: list[tuple[str | None, dict[str, Any] | str]]) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True
        for i, (name, data) in enumerate(events):
            if i == len(events) // 2 and self.script.during and self.step:
                # Mid-answer: what a test does to the proxy while a stream is half sent.
                self.script.during(self.step)
            text = data if isinstance(data, str) else json.dumps(data)
            head = f"event: {name}\n" if name else ""
            try:
                self.wfile.write(f"{head}data: {text}\n\n".encode())
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                return

    def do_GET(self) -> None:
        if self.path.startswith("/v1/models"):
            return self.send_json(200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]})
        self.send_json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        raw, body = self.body()
        if self.path.startswith("/v1/chat/completions"):
            return self.answer_chat(raw, body)
        if self.path.startswith("/v1/messages/count_tokens"):
            return self.send_json(200, {"input_tokens": tokens(raw)})
        if self.path.startswith("/v1/messages"):
            return self.answer_messages(raw, body)
        if self.path.startswith("/v1/responses"):
            return self.answer_responses(raw, body)
        self.send_json(404, {"error": {"message": f"no route {self.path}"}})

    def over_window(self, protocol: str, raw: bytes) -> bool:
        """Answers a request over the script's window as a provider does, and says so."""
        if not self.script.window or tokens(raw) <= self.script.window:
            return False
        self.script.record({"protocol": protocol, "over_window": tokens(raw)})
        self.send_json(400, {"error": {"message": f"This model's maximum context length is {self.script.window} tokens. "
                                                  f"However, your messages resulted in {tokens(raw)} tokens.",
                                       "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}})
        return True

    def answer_chat(self, raw: bytes, body: dict[str, Any]) -> None:
        if self.over_window("chat", raw):
            return
        turn = chat_turn(body)
        main = self.script.tool in turn.tools
        check(self.script, "chat", body, raw, turn, main)
        action = decide(self.script, turn) if main else "ok"
        self.step = step_of(action)
        usage = {"prompt_tokens": tokens(raw), "completion_tokens": 10, "total_tokens": tokens(raw) + 10}
        if isinstance(action, str):
            message: dict[str, Any] = {"role": "assistant", "content": action}
            finish = "stop"
        else:
            cid, name, args, said = action
            message = {"role": "assistant", "content": said or None,
                       "tool_calls": [{"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]}
            finish = "tool_calls"
        if not body.get("stream"):
            return self.send_json(200, {"id": "chatcmpl-s", "object": "chat.completion", "model": body.get("model", "scripted"),
                                        "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage})

        def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> tuple[None, dict[str, Any]]:
            return (None, {"id": "chatcmpl-s", "object": "chat.completion.chunk", "model": "scripted",
                           "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]})

        events = [chunk({"role": "assistant", "content": ""})]
        if message["content"]:
            events += [chunk({"content": message["content"][i:i + 5]}) for i in range(0, len(message["content"]), 5)]
        for i, call in enumerate(message.get("tool_calls") or []):
            events.append(chunk({"tool_calls": [{"index": i, "id": call["id"], "type": "function",
                                                 "function": {"name": call["function"]["name"], "arguments": ""}}]}))
            args = call["function"]["arguments"]
            events += [chunk({"tool_calls": [{"index": i, "function": {"arguments": args[j:j + 9]}}]}) for j in range(0, len(args), 9)]
        events.append(chunk({}, finish))
        if (body.get("stream_options") or {}).get("include_usage"):
            events.append((None, {"id": "chatcmpl-s", "object": "chat.completion.chunk", "choices": [], "usage": usage}))
        events.append((None, "[DONE]"))
        self.send_events(events)

    def answer_messages(self, raw: bytes, body: dict[str, Any]) -> None:
        turn = messages_turn(body)
        main = self.script.tool in turn.tools
        check(self.script, "messages", body, raw, turn, main)
        action = decide(self.script, turn) if main else "ok"
        self.step = step_of(action)
        if isinstance(action, str):
            blocks: list[dict[str, Any]] = [{"type": "text", "text": action}]
            stop = "end_turn"
        else:
            cid, name, args, said = action
            # Thinking first, signed, as a model with thinking on answers.
            blocks = [{"type": "thinking", "thinking": f"I should call {name}.", "signature": f"sig-{cid}"}]
            blocks += ([{"type": "text", "text": said}] if said else []) + [{"type": "tool_use", "id": cid, "name": name, "input": args}]
            stop = "tool_use"
        usage = {"input_tokens": tokens(raw), "output_tokens": 10}
        # Each answer has an ID of its own, as the API's do: Claude Code joins the assistant
        # messages that share one into one message, which no real conversation has.
        message = {"id": f"msg_{next(ANSWERS)}", "type": "message", "role": "assistant", "model": body.get("model", "scripted"),
                   "content": blocks, "stop_reason": stop, "stop_sequence": None, "usage": usage}
        if not body.get("stream"):
            return self.send_json(200, message)
        events: list[tuple[str | None, dict[str, Any] | str]] = [
            ("message_start", {"type": "message_start", "message": {**message, "content": [], "stop_reason": None,
                                                                    "usage": {"input_tokens": usage["input_tokens"], "output_tokens": 1}}})]
        for i, block in enumerate(blocks):
            if block["type"] == "thinking":
                events.append(("content_block_start", {"type": "content_block_start", "index": i, "content_block": {"type": "thinking", "thinking": ""}}))
                events.append(("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {"type": "thinking_delta", "thinking": block["thinking"]}}))
                events.append(("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {"type": "signature_delta", "signature": block["signature"]}}))
            elif block["type"] == "text":
                events.append(("content_block_start", {"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}}))
                events += [("content_block_delta", {"type": "content_block_delta", "index": i,
                                                    "delta": {"type": "text_delta", "text": block["text"][j:j + 5]}})
                           for j in range(0, len(block["text"]), 5)]
            else:
                events.append(("content_block_start", {"type": "content_block_start", "index": i,
                                                       "content_block": {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}}))
                args = json.dumps(block["input"])
                events += [("content_block_delta", {"type": "content_block_delta", "index": i,
                                                    "delta": {"type": "input_json_delta", "partial_json": args[j:j + 9]}})
                           for j in range(0, len(args), 9)]
            events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
        events.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                         "usage": {"output_tokens": 10}}))
        events.append(("message_stop", {"type": "message_stop"}))
        self.send_events(events)


    def answer_responses(self, raw: bytes, body: dict[str, Any]) -> None:
        if self.over_window("responses", raw):
            return
        turn = responses_turn(body)
        main = self.script.tool in turn.tools
        check(self.script, "responses", body, raw, turn, main)
        action = decide(self.script, turn) if main else "ok"
        self.step = step_of(action)
        def said(text: str) -> dict[str, Any]:
            return {"type": "message", "id": "msg_s", "status": "completed", "role": "assistant",
                    "content": [{"type": "output_text", "text": text, "annotations": []}]}

        if isinstance(action, str):
            items = [said(action)]
        else:
            cid, name, args, text = action
            reasoning = {"type": "reasoning", "id": f"rs_{cid}", "summary": [], "encrypted_content": f"enc-{cid}"}
            items = [reasoning] + ([said(text)] if text else []) + [
                {"type": "function_call", "id": f"fc_{cid}", "status": "completed", "call_id": cid, "name": name, "arguments": json.dumps(args)}]
        usage = {"input_tokens": tokens(raw), "output_tokens": 10, "total_tokens": tokens(raw) + 10,
                 "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}
        response = {"id": "resp_s", "object": "response", "created_at": 1764000000, "status": "completed", "model": body.get("model", "scripted"),
                    "output": items, "usage": usage}
        if not body.get("stream"):
            return self.send_json(200, response)
        opening = {**response, "status": "in_progress", "output": [], "usage": None}
        events: list[tuple[str | None, dict[str, Any] | str]] = [
            ("response.created", {"type": "response.created", "response": opening}),
            ("response.in_progress", {"type": "response.in_progress", "response": opening})]
        for i, item in enumerate(items):
            if item["type"] == "reasoning":
                events.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": i, "item": item}))
            elif item["type"] == "message":
                text = item["content"][0]["text"]
                events.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": i,
                                                              "item": {**item, "status": "in_progress", "content": []}}))
                events.append(("response.content_part.added", {"type": "response.content_part.added", "item_id": item["id"], "output_index": i,
                                                               "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}}))
                events += [("response.output_text.delta", {"type": "response.output_text.delta", "item_id": item["id"], "output_index": i,
                                                           "content_index": 0, "delta": text[j:j + 5]}) for j in range(0, len(text), 5)]
                events.append(("response.output_text.done", {"type": "response.output_text.done", "item_id": item["id"], "output_index": i,
                                                             "content_index": 0, "text": text}))
                events.append(("response.content_part.done", {"type": "response.content_part.done", "item_id": item["id"], "output_index": i,
                                                              "content_index": 0, "part": item["content"][0]}))
            else:
                events.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": i,
                                                              "item": {**item, "status": "in_progress", "arguments": ""}}))
                args = item["arguments"]
                events += [("response.function_call_arguments.delta", {"type": "response.function_call_arguments.delta", "item_id": item["id"],
                                                                       "output_index": i, "delta": args[j:j + 9]}) for j in range(0, len(args), 9)]
                events.append(("response.function_call_arguments.done", {"type": "response.function_call_arguments.done", "item_id": item["id"],
                                                                         "output_index": i, "arguments": args}))
            events.append(("response.output_item.done", {"type": "response.output_item.done", "output_index": i, "item": item}))
        events.append(("response.completed", {"type": "response.completed", "response": response}))
        for n, (_, data) in enumerate(events):
            if isinstance(data, dict):
                data["sequence_number"] = n
        self.send_events(events)


def start(script: Script) -> ThreadingHTTPServer:
    """Serves `script` on a free loopback port, on a thread of its own."""
    handler = type("ScriptedHandler", (Handler,), {"script": script})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server
