"""`make bench-adapters`: what the framework adapters add to each model call, at 100 and 1,000
messages in the session (issue 49): the median time of a Chat Completions call to the scripted
model on loopback (tests/proxy/upstream.py) with the request as the agent holds it, and of the
same call with `workmem.bound.Bound`'s steps before it (log what is new, view, count, build the
bounded request), with the ratio, and the adapter's steps alone, from one run. The window is wide enough that nothing is
compacted: this is the cost of every call, not of a compaction."""

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "tests" / "python"), str(ROOT / "tests" / "proxy")]
import tiktoken_offline  # noqa: E402
import upstream  # noqa: E402
import openai  # noqa: E402

from workmem import ChatMessage, Engine, Session, ToolCall  # noqa: E402
from workmem.bound import Bound  # noqa: E402

tiktoken_offline.install()
engine = Engine()
script = upstream.Script(steps=10_000, files=12, file_size=200, tool="read_file", arguments=lambda p: {"path": p})
server = upstream.start(script)
client = openai.OpenAI(base_url=f"http://127.0.0.1:{server.server_address[1]}/v1", api_key="test", max_retries=0)
TOOLS = [{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}]


def wire(m: ChatMessage) -> dict:
    out: dict = {"role": m.role, "content": m.content}
    if m.tool_calls:
        out["tool_calls"] = [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}} for c in m.tool_calls]
    if m.tool_call_id:
        out["tool_call_id"] = m.tool_call_id
    return out


for n in (100, 1000):
    root = Path(tempfile.mkdtemp())
    history = [ChatMessage("user", "Read the files.")]
    for i in range((n - 1) // 2):
        history.append(ChatMessage("assistant", "", tool_calls=[ToolCall(f"s-{i + 1}", "read_file", json.dumps({"path": f"file_{i % 12 + 1}.txt"}))]))
        history.append(ChatMessage("tool", script.text(i % 12 + 1), tool_call_id=f"s-{i + 1}"))
    bound = Bound(Session.create(root, engine, cwd=root), engine, window=10_000_000)
    bound.log([(str(k), m, []) for k, m in enumerate(history)])
    bound.request("You read files.", 0)
    plain, adapted, steps = [], [], []
    for k in range(21):
        history.append(ChatMessage("user", f"one more {k}"))
        t = time.perf_counter()
        client.chat.completions.create(model="gpt-4o", messages=[{"role": "system", "content": "You read files."}] + [wire(m) for m in history], tools=TOOLS)
        plain.append(time.perf_counter() - t)
        t = time.perf_counter()
        bound.log([(str(len(history) - 1), history[-1], [])])
        request = bound.request("You read files.", bound.tools_tokens(json.dumps(TOOLS)))
        steps.append(time.perf_counter() - t)
        client.chat.completions.create(model="gpt-4o", messages=[{"role": "system", "content": request.system}] + [wire(m) for _, m in request.messages], tools=TOOLS)
        adapted.append(time.perf_counter() - t)
    p, a = statistics.median(plain) * 1000, statistics.median(adapted) * 1000
    print(json.dumps({"messages": n, "call_ms": round(p, 2), "with_adapter_ms": round(a, 2), "ratio": round(a / p, 2),
                      "adapter_steps_ms": round(statistics.median(steps) * 1000, 2)}))
server.shutdown()
