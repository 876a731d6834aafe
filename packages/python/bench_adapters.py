"""`make bench-adapters`: what the Agents SDK filter adds to each model call, at 100 and 1,000
messages in the session (issue 49): the median time of a Chat Completions call to the scripted
model on loopback (tests/proxy/upstream.py) with the run's items as the agent holds them, and
of the same call with `workmem.agents.WorkmemFilter` before it (the items grouped and logged
where new, the view, the counts, the engine's steps, the bounded input converted back), with the
ratio, and the filter alone, from one run. The window is wide enough that nothing is compacted:
this is the cost of every call, not of a compaction."""

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

from agents import Agent  # noqa: E402
from agents.run_config import CallModelData, ModelInputData  # noqa: E402

from workmem import Engine, Session  # noqa: E402
from workmem.agents import WorkmemFilter  # noqa: E402

tiktoken_offline.install()
engine = Engine()
script = upstream.Script(steps=10_000, files=12, file_size=200, tool="read_file", arguments=lambda p: {"path": p})
server = upstream.start(script)
client = openai.OpenAI(base_url=f"http://127.0.0.1:{server.server_address[1]}/v1", api_key="test", max_retries=0)
TOOLS = [{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}]


def wire(items: list) -> list:
    """Responses input items as a Chat Completions body's messages, on both sides alike."""
    out: list = []
    for item in items:
        kind = item.get("type", "message")
        if kind == "function_call":
            call = {"id": item["call_id"], "type": "function", "function": {"name": item["name"], "arguments": item["arguments"]}}
            if out and out[-1]["role"] == "assistant" and "tool_calls" in out[-1]:
                out[-1]["tool_calls"].append(call)
            else:
                out.append({"role": "assistant", "content": "", "tool_calls": [call]})
        elif kind == "function_call_output":
            out.append({"role": "tool", "tool_call_id": item["call_id"], "content": item["output"]})
        else:
            out.append({"role": item["role"], "content": item["content"]})
    return out


agent = Agent(name="reader", instructions="You read files.")
for n in (100, 1000):
    root = Path(tempfile.mkdtemp())
    items: list = [{"role": "user", "content": "Read the files."}]
    for i in range((n - 1) // 2):
        items.append({"type": "function_call", "call_id": f"s-{i + 1}", "name": "read_file", "arguments": json.dumps({"path": f"file_{i % 12 + 1}.txt"})})
        items.append({"type": "function_call_output", "call_id": f"s-{i + 1}", "output": script.text(i % 12 + 1)})
    memory = WorkmemFilter(Session.create(root, engine, cwd=root), engine, window=10_000_000)

    def filtered() -> ModelInputData:
        return memory(CallModelData(model_data=ModelInputData(input=list(items), instructions="You read files."), agent=agent, context=None))

    filtered()
    plain, adapted, steps = [], [], []
    for k in range(21):
        items.append({"role": "user", "content": f"one more {k}"})
        t = time.perf_counter()
        client.chat.completions.create(model="gpt-4o", messages=[{"role": "system", "content": "You read files."}] + wire(items), tools=TOOLS)
        plain.append(time.perf_counter() - t)
        t = time.perf_counter()
        bounded = filtered()
        steps.append(time.perf_counter() - t)
        client.chat.completions.create(model="gpt-4o", messages=[{"role": "system", "content": bounded.instructions}] + wire(bounded.input), tools=TOOLS)
        adapted.append(time.perf_counter() - t)
    p, a = statistics.median(plain) * 1000, statistics.median(adapted) * 1000
    print(json.dumps({"runtime": "python", "adapter": "agents", "messages": n, "call_ms": round(p, 2), "with_adapter_ms": round(a, 2),
                      "ratio": round(a / p, 2), "adapter_ms": round(statistics.median(steps) * 1000, 2)}))
server.shutdown()
