"""`workmem proxy` in front of real, unmodified agents (`make test-proxy`): each client runs a
long tool loop over large files in a scratch work tree, driven by a scripted model on loopback
(upstream.py), through the proxy. For each client:

- it finishes and prints the scripted answer;
- every upstream request was under the fallback's threshold (the session log's count of each request
  sent), and its tool calls and results paired;
- the client never saw a workmem tool (its own record of the tool calls it ran);
- a scripted `read_history` call gave back a tool result's original bytes;
- the session opens in `workmem view`.

And once, a store broken mid-run: the client still finishes, its requests passed through.

Then each client again through a fleet (fleet.py: three replicas on one PostgreSQL database behind
HAProxy, round-robin), held to the same checks, its requests landing on every replica, with a
fault: the Agents SDK with the database restarted mid-stream, Codex with the replica answering it
killed mid-stream (Codex retries the stream, which lands on another replica).

WORKMEM, CLAUDE and CODEX name the binaries; CLIENTS (comma-separated: agents-sdk, claude, codex)
picks the clients; FLEET=0 leaves the fleet out."""

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).parent))
import fleet  # noqa: E402
import upstream  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
# Absolute: each client and the proxy run in a scratch directory of their own.
WORKMEM = str(Path(os.environ.get("WORKMEM", ROOT / "target" / "debug" / "workmem")).resolve())
CODEX = str(Path(os.environ.get("CODEX", ROOT / "target" / "proxy-clients" / "node_modules" / ".bin" / "codex")).resolve())
CLAUDE = str(Path(os.environ.get("CLAUDE", ROOT / "target" / "proxy-clients" / "node_modules" / ".bin" / "claude")).resolve())
STEPS = int(os.environ.get("PROXY_STEPS", "60"))
WINDOW = 64_000
FILE_SIZE = 12_000


class Proxy:
    """`workmem proxy` on a free port, its sessions under `sessions`."""

    def __init__(self, upstream_url: str, sessions: Path, cwd: Path):
        self.sessions = sessions
        self.env = {**os.environ, "WORKMEM_SESSIONS_DIR": str(sessions)}
        # Its log goes to a file: a pipe nobody reads until the end would fill and stall it.
        self.log = sessions.parent / "proxy.log"
        with self.log.open("w") as log:
            self.process = subprocess.Popen(
                [WORKMEM, "proxy", "--listen", "127.0.0.1:0", "--upstream", upstream_url, "--window", str(WINDOW), "--json"],
                cwd=cwd, env=self.env, stdout=subprocess.PIPE, stderr=log, text=True)
        line = self.process.stdout.readline() if self.process.stdout else ""
        if not line:
            raise SystemExit(f"workmem proxy did not start: {self.log.read_text()}")
        self.url = json.loads(line)["listening"]
        self.cwd = cwd

    def stop(self) -> str:
        """Stops the proxy; what it logged."""
        self.process.terminate()
        try:
            self.process.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.communicate()
        return self.log.read_text()

    def workmem(self, *args: str) -> Any:
        out = subprocess.run([WORKMEM, *args, "--json"], cwd=self.cwd, env=self.env, capture_output=True, text=True)
        if out.returncode != 0:
            raise AssertionError(f"workmem {' '.join(args)} failed: {out.stdout}{out.stderr}")
        return json.loads(out.stdout)

    def branches(self) -> list[str]:
        """The proxied sessions recorded as branches: a request the proxy could not follow."""
        return [m.parent.name for m in self.sessions.glob("*/*/meta.json") if (json.loads(m.read_text()).get("proxied") or {}).get("branch_of")]

    def session_logs(self) -> list[tuple[str, list[dict[str, Any]]]]:
        """Each proxied session's ID and its messages.jsonl records."""
        out = []
        for meta in self.sessions.glob("*/*/meta.json"):
            if json.loads(meta.read_text()).get("proxied"):
                records = [json.loads(line) for line in (meta.parent / "messages.jsonl").read_text().splitlines() if line.strip()]
                out.append((meta.parent.name, records))
        return out


MakeProxy = Callable[[str, Path, Path], Any]


def fleet_of(script: upstream.Script, fault: str, made: list[fleet.Fleet]) -> MakeProxy:
    """What makes a client's proxy a fleet, with `fault` ("restart": the database restarted while
    step 3 streams; "kill": the replica answering step STEPS // 3 killed mid-stream; "": none)."""
    def make(upstream_url: str, sessions: Path, cwd: Path) -> fleet.Fleet:
        f = fleet.Fleet(WORKMEM, upstream_url, ["--window", str(WINDOW)], sessions, cwd)
        port = int(upstream_url.rsplit(":", 1)[1])
        if fault == "restart":
            script.during = fleet.fault_at(3, f.restart_database)
        elif fault == "kill":
            script.during = fleet.fault_at(STEPS // 3, lambda: f.kill_answering(port))
        made.append(f)
        return f
    return make


def through_fleet(client: str, base: Path, url: str, script: upstream.Script) -> None:
    """`client` through three replicas on one database, with its fault, held to check_run's rules."""
    fault = {"agents-sdk": "restart", "codex": "kill"}.get(client, "")
    made: list[fleet.Fleet] = []
    run = {"agents-sdk": agents_sdk, "claude": claude, "codex": codex}[client]
    try:
        output, tools_run, proxy = run(base, url, make=fleet_of(script, fault, made))
        check_run(f"{client} (fleet)", script, proxy, output, tools_run)
        if fault == "kill" and not proxy.killed:
            raise SystemExit(f"{client} (fleet): no replica was killed")
        if fault == "restart" and not proxy.restarts:
            raise SystemExit(f"{client} (fleet): the database was never restarted")
        # Nothing failed on the store's side, the restart included: each replica found its
        # connections gone before using them.
        logs = proxy.logs()
        failed = [line for line in logs.splitlines() if "passed through as sent (failed)" in line or "went to the client, but" in line]
        if failed:
            raise SystemExit(f"{client} (fleet): the store failed requests: {failed[:5]}")
        served = proxy.served()
        if len(served) < fleet.REPLICAS:
            raise SystemExit(f"{client} (fleet): the balancer sent requests to {served} only, of {fleet.REPLICAS} replicas")
        print(f"{client} (fleet): requests by replica {served}, killed {proxy.killed}, database restarts {proxy.restarts}")
    finally:
        for f in made:
            f.close()


def work_tree(base: Path) -> Path:
    tree = base / "work"
    tree.mkdir()
    for k in range(1, 13):
        (tree / f"file_{k}.txt").write_text(upstream.file_text(k, FILE_SIZE))
    return tree


def check_run(name: str, script: upstream.Script, proxy: Proxy, output: str, tools_run: list[str]) -> None:
    failures = []
    expected = f"{upstream.ANSWER} {script.steps} steps"
    if expected not in output:
        failures.append(f"the client did not print {expected!r}: {output[-2000:]!r}")
    seen = sorted(set(tools_run) & set(["read_history", "update_memory", "compact_history"]))
    if seen:
        failures.append(f"the client saw workmem's tools {seen}")
    requests = [json.loads(line) for line in script.log.read_text().splitlines()] if script.log else []
    main = [r for r in requests if r["main"]]
    if len(main) < script.steps:
        failures.append(f"only {len(main)} loop requests reached the upstream, of {script.steps}+")
    for r in requests:
        if r["unpaired"]:
            failures.append(f"an upstream request broke tool-call pairing: {r['unpaired'][:3]}")
        if r.get("unreasoned"):
            failures.append(f"an upstream request lost the reasoning of its last turn's calls {r['unreasoned'][:3]}")
    reads = [ok for r in main for ok in r["read_back"]]
    if not reads or not all(reads):
        failures.append(f"read_history did not give back a file's original bytes: {reads}")
    compact_at = WINDOW * 3 // 4
    sessions = proxy.session_logs()
    compactions = sum(1 for _, records in sessions for r in records if r.get("kind") == "compaction")
    if compactions == 0:
        failures.append("no compaction happened: the loop never reached the fallback")
    # As the model counts them (its usage, which the proxy corrects its own count by); the
    # first request has no correction yet, so it is held to the window alone.
    for i, r in enumerate(main):
        limit = compact_at if i > 0 else WINDOW
        if r["tokens"] > limit:
            failures.append(f"request {i} of {r['tokens']} tokens went upstream, over the fallback's {limit}")
    if proxy.branches():
        failures.append(f"the client's history was not followed: sessions {proxy.branches()} were branched off")
    loop = max(sessions, key=lambda s: len(s[1]))[0] if sessions else None
    if loop:
        view = proxy.workmem("view", "--session", loop, "--out", str(proxy.sessions.parent / f"proxy-{name}.html"))
        if not view.get("ok", True):
            failures.append(f"workmem view failed: {view}")
    updated = [sid for sid, records in sessions if any(r.get("role") == "tool" and r["content"].startswith("applied update") for r in records)]
    if not updated:
        failures.append("the scripted update_memory call was not applied")
    after = next((i for i, r in enumerate(main) if (r.get("last_call") or "").endswith("-update")), None)
    if after is None:
        failures.append("no request came after the scripted update_memory call")
    else:
        missing = [i for i, r in enumerate(main[after:], after) if not r["memory"]]
        if missing:
            failures.append(f"loop requests {missing[:10]} went upstream without the memory the update saved ({len(missing)} of {len(main) - after})")
    largest = max((r["bytes"] for r in main), default=0)
    print(f"{name}: {len(main)} loop requests, {len(requests) - len(main)} others, {compactions} compactions, "
          f"largest request {largest} bytes, {len(sessions)} sessions, read back {reads}")
    if failures:
        raise SystemExit(f"{name}: " + "\n".join(failures[:20]))


def agents_sdk(base: Path, upstream_url: str, broken_store: bool = False, make: "MakeProxy | None" = None) -> Any:
    """The OpenAI Agents SDK on Chat Completions, streaming, with one function tool."""
    from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, set_tracing_disabled
    from openai import AsyncOpenAI

    tree = base / "work"
    proxy = (make or Proxy)(upstream_url, base / "sessions", tree)
    tools_run: list[str] = []

    @function_tool
    def read_file(path: str) -> str:
        """Read a file of the work tree."""
        tools_run.append("read_file")
        if broken_store and len(tools_run) == STEPS // 2:
            for log in (base / "sessions").glob("*/*/messages.jsonl"):
                with log.open("a") as f:
                    f.write("this line breaks the log\n")
        return (tree / path).read_text()

    set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=proxy.url + "/v1", api_key="sk-test", max_retries=0)
    agent = Agent(name="reader", instructions="Read the files you are asked to, one at a time.",
                  model=OpenAIChatCompletionsModel(model="gpt-4o", openai_client=client), tools=[read_file])

    async def go() -> str:
        result = Runner.run_streamed(agent, "Read the files of this work tree.", max_turns=STEPS + 20)
        async for _ in result.stream_events():
            pass
        for item in result.new_items:
            raw = getattr(item, "raw_item", None)
            name = getattr(raw, "name", None)
            if item.type == "tool_call_item" and name:
                tools_run.append(name)
        return str(result.final_output)

    try:
        output = asyncio.run(go())
    finally:
        err = proxy.stop()
    if broken_store:
        if "passed through as sent" not in err:
            raise SystemExit(f"agents-sdk, broken store: the proxy never passed a request through: {err[-2000:]}")
        if f"{upstream.ANSWER} {STEPS} steps" not in output:
            raise SystemExit(f"agents-sdk, broken store: the client did not finish: {output!r}")
        print("agents-sdk, broken store: finished, requests passed through")
        return
    return output, tools_run, proxy


def scratch_env(base: Path) -> dict[str, str]:
    """A TMPDIR inside the run's directory: Claude Code keeps its scratch and sockets under it
    (claude-<uid>, cc-socks) and Codex its sandbox's (codex-bwrap-*), and they leave them
    behind. `base` is a short path under the system's temporary directory, so their Unix
    sockets' paths stay well inside 108 bytes. (Codex's empty /tmp/codex-daemon-<uid> does
    not follow TMPDIR.)"""
    tmp = base / "tmp"
    tmp.mkdir(exist_ok=True)
    return {"TMPDIR": str(tmp)}


def claude(base: Path, upstream_url: str, make: "MakeProxy | None" = None) -> tuple[str, list[str], Any]:
    """Claude Code in print mode, its Bash tool allowed (it refuses to skip permissions as root)."""
    tree = base / "work"
    proxy = (make or Proxy)(upstream_url, base / "sessions", tree)
    home = base / "home"
    home.mkdir()
    env = {**os.environ, **scratch_env(base), "HOME": str(home), "ANTHROPIC_BASE_URL": proxy.url, "ANTHROPIC_API_KEY": "sk-ant-test",
           "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
    try:
        out = subprocess.run([CLAUDE, "-p", "Read the files of this work tree.", "--allowedTools", "Bash",
                              "--output-format", "stream-json", "--verbose", "--max-turns", str(STEPS + 20)],
                             cwd=tree, env=env, capture_output=True, text=True, timeout=600)
    finally:
        err = proxy.stop()
    tools_run, result = [], ""
    for line in out.stdout.splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if event.get("type") == "assistant":
            tools_run += [b["name"] for b in event["message"]["content"] if b.get("type") == "tool_use"]
        if event.get("type") == "result":
            result = str(event.get("result"))
    if out.returncode != 0 or not result:
        raise SystemExit(f"claude failed ({out.returncode}): {out.stdout[-3000:]}{out.stderr[-2000:]}\nproxy: {err[-3000:]}")
    return result, tools_run, proxy


def codex(base: Path, upstream_url: str, make: "MakeProxy | None" = None) -> tuple[str, list[str], Any]:
    """Codex CLI's `exec`, its model provider the proxy (Responses API, no WebSockets)."""
    tree = base / "work"
    proxy = (make or Proxy)(upstream_url, base / "sessions", tree)
    home = base / "home"
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "config.toml").write_text(
        'model = "gpt-5"\nmodel_provider = "workmem"\n\n[model_providers.workmem]\nname = "workmem proxy"\n'
        f'base_url = "{proxy.url}/v1"\nenv_key = "OPENAI_API_KEY"\nwire_api = "responses"\nsupports_websockets = false\n')
    env = {**os.environ, **scratch_env(base), "HOME": str(home), "OPENAI_API_KEY": "sk-test", "CODEX_HOME": str(home / ".codex")}
    try:
        out = subprocess.run([CODEX, "exec", "--skip-git-repo-check", "--json", "Read the files of this work tree."],
                             cwd=tree, env=env, capture_output=True, text=True, timeout=600)
    finally:
        err = proxy.stop()
    tools_run, result = [], ""
    for line in out.stdout.splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        item = event.get("item") or {}
        if event.get("type") == "item.completed" and item.get("type") == "agent_message":
            result = item.get("text", "")
        if event.get("type") == "item.started" and item.get("type") in ("command_execution", "mcp_tool_call", "function_call"):
            tools_run.append(item.get("tool") or item.get("name") or "exec_command")
    if out.returncode != 0 or not result:
        raise SystemExit(f"codex failed ({out.returncode}): {out.stdout[-3000:]}{out.stderr[-2000:]}\nproxy: {err[-3000:]}")
    return result, tools_run, proxy


def main() -> None:
    clients = os.environ.get("CLIENTS", "agents-sdk,claude,codex").split(",")
    for client in clients:
        base = Path(tempfile.mkdtemp(prefix=f"workmem-proxy-{client}-"))
        try:
            work_tree(base)
            script = upstream.Script(steps=STEPS, files=12, file_size=FILE_SIZE, tool="read_file",
                                     arguments=lambda p: {"path": p}, update_at=5, read_back_at=STEPS // 2, log=base / "upstream.jsonl")
            server = upstream.start(script)
            url = f"http://127.0.0.1:{server.server_address[1]}"
            if client == "agents-sdk":
                output, tools_run, proxy = agents_sdk(base, url)
                check_run("agents-sdk", script, proxy, output, tools_run)
                server.shutdown()
                broken = Path(tempfile.mkdtemp(prefix="workmem-proxy-broken-"))
                work_tree(broken)
                script = upstream.Script(steps=STEPS, files=12, file_size=FILE_SIZE, tool="read_file", arguments=lambda p: {"path": p})
                server = upstream.start(script)
                agents_sdk(broken, f"http://127.0.0.1:{server.server_address[1]}", broken_store=True)
                shutil.rmtree(broken, ignore_errors=True)
            elif client == "claude":
                script.tool, script.arguments = "Bash", lambda p: {"command": f"cat {p}", "description": f"Read {p}"}
                output, tools_run, proxy = claude(base, url)
                check_run("claude", script, proxy, output, tools_run)
            elif client == "codex":
                script.tool, script.arguments = "exec_command", lambda p: {"cmd": f"cat {p}"}
                output, tools_run, proxy = codex(base, url)
                check_run("codex", script, proxy, output, tools_run)
            else:
                raise SystemExit(f"unknown client {client}")
            server.shutdown()
        finally:
            if not os.environ.get("KEEP"):
                shutil.rmtree(base, ignore_errors=True)
        if os.environ.get("FLEET") == "0":
            continue
        base = Path(tempfile.mkdtemp(prefix=f"workmem-fleet-{client}-"))
        try:
            work_tree(base)
            script = upstream.Script(steps=STEPS, files=12, file_size=FILE_SIZE, tool=script.tool, arguments=script.arguments,
                                     update_at=5, read_back_at=STEPS // 2, log=base / "upstream.jsonl")
            server = upstream.start(script)
            through_fleet(client, base, f"http://127.0.0.1:{server.server_address[1]}", script)
            server.shutdown()
        finally:
            if not os.environ.get("KEEP"):
                shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
