"""`workmem mcp` through the official MCP client (the `mcp` package from PyPI), over stdio as a
host application runs it: lists the tools (the agent loop's registry, with JSON schemas) and
calls every one of them against a real session, board and document store. Part of `make test`
(`make test-mcp`); WORKMEM names the binary."""

import asyncio
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

WORKMEM = str(Path(os.environ.get("WORKMEM", Path(__file__).resolve().parents[2] / "target" / "debug" / "workmem")).resolve())
EXPECTED = {
    "read_file", "write_file", "list_files", "update_memory", "compact_history", "read_history",
    "board_context", "board_status", "board_decide", "board_discover", "board_artifact", "board_nudge",
    "context_get", "context_put",
}


def workmem(env: dict[str, str], *args: str) -> dict:
    out = subprocess.run([WORKMEM, *args, "--json"], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def text(result) -> str:
    return "".join(c.text for c in result.content if c.type == "text")


async def without_a_vault(env: dict[str, str]) -> None:
    """No --vault, no document tools: a model cannot name a vault it was not given."""
    params = StdioServerParameters(command=WORKMEM, args=["mcp", "--session", "mcp-test"], env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = {t.name for t in (await session.list_tools()).tools}
        assert not tools & {"context_get", "context_put"}, f"document tools offered without --vault: {sorted(tools)}"
        result = await session.call_tool("context_get", {"memory": "payroll"})
        assert result.is_error, text(result)


async def from_anywhere(env: dict[str, str], home: str) -> None:
    """The README's configuration as a host application runs it, from a directory without the
    session (here `/`): the session is made on first use, and found by its ID from any other
    directory after. A session with no message history is offered no history tools; the
    update tool's description carries the DSL; the memory is a resource, the update prompt a
    prompt."""
    update = "KEY_LEARNINGS:\n  ADD:\n    - because the host starts it anywhere: the session is made on first use\n"
    params = StdioServerParameters(command=WORKMEM, args=["mcp", "--session", "my-session"], env=env, cwd="/")
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert not set(tools) & {"compact_history", "read_history"}, f"history tools offered without a history: {sorted(tools)}"
        described = tools["update_memory"].description
        for part in ("CURRENT_PROGRESS:", "In Progress:", "because <reason>", "## Format (a complete example)", "VC-2 because",
                     "Pass the DSL block alone as `dsl`"):
            assert part in described, f"update_memory's description lacks {part!r}: {described}"
        result = await session.call_tool("update_memory", {"dsl": update})
        assert not result.is_error, text(result)
        resources = (await session.list_resources()).resources
        assert [str(r.uri) for r in resources] == ["workmem://memory/overview.md"], resources
        prompts = (await session.list_prompts()).prompts
        assert [p.name for p in prompts] == ["update_memory"] and prompts[0].arguments[0].name == "task", prompts
    params = StdioServerParameters(command=WORKMEM, args=["mcp", "--session", "my-session"], env=env, cwd=home)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        memory = (await session.read_resource("workmem://memory/overview.md")).contents[0].text
        assert "KL-1" in memory and "made on first use" in memory, memory
        prompt = (await session.get_prompt("update_memory", {"task": "Ship the MCP fix"})).messages[0].content.text
        assert "## Latest task\n\nShip the MCP fix" in prompt and "KL-1" in prompt, prompt


async def check(env: dict[str, str]) -> None:
    params = StdioServerParameters(command=WORKMEM, args=["mcp", "--session", "mcp-test", "--board", "auth",
                                                          "--board-task", "T-1", "--agent-name", "dev", "--vault", "acme"], env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        info = await session.initialize()
        assert info.server_info.name == "workmem", info.server_info
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert set(tools) == EXPECTED, f"tools offered: {sorted(tools)}"
        for t in tools.values():
            assert t.description and t.input_schema["type"] == "object", t

        async def call(name: str, arguments: dict, ok: bool = True) -> str:
            result = await session.call_tool(name, arguments)
            assert result.is_error == (not ok), f"{name}({arguments}): {text(result)}"
            return text(result)

        called = set()

        async def expect(name: str, arguments: dict, says: str, ok: bool = True) -> None:
            answer = await call(name, arguments, ok)
            assert says in answer, f"{name}: {answer!r} should say {says!r}"
            called.add(name)

        await expect("write_file", {"path": "working-memory/detail/notes.md", "content": "MCP notes\n"}, "wrote 10 bytes")
        await expect("read_file", {"path": "working-memory/detail/notes.md"}, "MCP notes")
        await expect("list_files", {"path": "working-memory/detail"}, "notes.md")
        await call("read_file", {"path": "../meta.json"}, ok=False)
        await expect("update_memory", {"dsl": "KEY_LEARNINGS:\n  ADD:\n    - because MCP said so: tools come from one registry\n"}, "KL-1")
        await call("update_memory", {"dsl": "NOT_A_SECTION:\n"}, ok=False)
        await expect("read_history", {"seq": "1"}, "turn 1")
        await expect("compact_history", {"target": "conversation", "strategy": "archive", "keep_recent": 1}, "compacted")
        await expect("board_context", {}, "Design token schema")
        await expect("board_status", {"status": "in_progress"}, "recorded")
        await expect("board_decide", {"question": "Where do tokens live?", "choice": "A tokens table", "rationale": "Separate from users"}, "recorded")
        await expect("board_discover", {"type": "insight", "content": "The users table is shared"}, "recorded")
        await expect("board_artifact", {"type": "file", "path": "schema.sql", "checksum": "sha256:00"}, "recorded")
        await expect("board_nudge", {"message": "Schema drafted", "to": "orchestrator"}, "recorded")
        await expect("context_put", {"memory": "assistant", "text": "# Facts\n- CEO = Bob\n", "expect": 0}, "stored version 1")
        await call("context_put", {"memory": "assistant", "text": "# Facts\n- lost\n", "expect": 0}, ok=False)
        await call("context_put", {"memory": "assistant", "text": "bell \u0007"}, ok=False)
        await expect("context_get", {"memory": "assistant", "section": "Facts"}, "CEO = Bob")
        # The vault is the one --vault names, whatever the model passes.
        await expect("context_put", {"vault": "payroll", "memory": "assistant", "text": "# Facts\n- CEO = Bob\n- CFO = Ann\n"}, "stored version 2")
        for t in ("context_get", "context_put"):
            assert "vault" not in tools[t].input_schema["properties"], tools[t].input_schema
        assert called == EXPECTED, f"not called: {sorted(EXPECTED - called)}"

    board = workmem(env, "board", "show", "auth", "contributions")
    assert "dev" in json.dumps(board), board
    doc = workmem(env, "doc", "get", "acme", "assistant")
    assert doc["actor_id"] == "dev" and doc["version"] == 2, doc
    payroll = subprocess.run([WORKMEM, "doc", "versions", "payroll", "assistant", "--json"], env=env, capture_output=True, text=True)
    assert payroll.returncode != 0 or not json.loads(payroll.stdout).get("versions"), payroll.stdout


def main() -> int:
    with tempfile.TemporaryDirectory() as home:
        env = {k: v for k, v in os.environ.items() if not k.startswith("WORKMEM_")}
        env.update(HOME=home, WORKMEM_SESSIONS_DIR=f"{home}/sessions", WORKMEM_DB=f"{home}/workmem.sqlite3")
        session = workmem(env, "session", "new", "--id", "mcp-test")
        # A conversation as the agent loop logs it, for read_history and compact_history.
        with open(Path(session["dir"]) / "messages.jsonl", "a") as log:
            for seq in range(1, 13):
                role = "user" if seq % 2 else "assistant"
                log.write(json.dumps({"seq": seq, "at": "2026-11-23T10:00:00Z", "kind": "message", "role": role,
                                      "content": f"turn {(seq + 1) // 2}: " + "words " * 40}) + "\n")
        workmem(env, "board", "create", "auth", "--name", "Auth", "--goal", "Build auth")
        workmem(env, "board", "task", "add", "auth", "Design token schema")
        workmem(env, "board", "assign", "auth", "T-1", "dev")
        asyncio.run(without_a_vault(env))
        asyncio.run(check(env))
        asyncio.run(from_anywhere(env, home))
    print(f"mcp: {len(EXPECTED)} tools listed and called, the memory read as a resource and the update prompt got, "
          "through the official MCP client started from another directory")
    return 0


if __name__ == "__main__":
    sys.exit(main())
