"""`WorkmemMiddleware` in a real LangChain v1 agent (`create_agent`, `ChatOpenAI`), against the
scripted model on loopback that `workmem proxy`'s tests use (tests/proxy/upstream.py): 40 steps
of a file tool over outputs of about 1,600 tokens, at an 8,000-token window the model enforces as
a provider does. Without workmem the loop ends in `context_length_exceeded`; with it every
request is under the window, every output reaches the model whole first, calls and results stay
paired, a scripted `read_history` gives the original bytes, a memory update survives the
compactions, the session opens in `workmem view`, and a new middleware on the same session
(a restart) logs only what is new."""

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, List

import openai
import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

from workmem import Engine, Session
from workmem.langchain import WorkmemMiddleware

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests" / "proxy"))
import upstream  # noqa: E402

STEPS, WINDOW, FILE_SIZE = 40, 8000, 3000


def scripted(log: Path) -> Any:
    script = upstream.Script(steps=STEPS, files=12, file_size=FILE_SIZE, tool="read_file", arguments=lambda p: {"path": p},
                             update_at=5, read_back_at=STEPS // 2, log=log, window=WINDOW)
    return script, upstream.start(script)


def agent(script: Any, server: Any, middleware: List[Any]) -> Any:
    @tool
    def read_file(path: str) -> str:
        """Read a file of the project."""
        return script.text(int(path.split("_")[1].split(".")[0]))

    model = ChatOpenAI(model="gpt-4o", base_url=f"http://127.0.0.1:{server.server_address[1]}/v1", api_key="test", max_retries=0)
    return create_agent(model, tools=[read_file], system_prompt="You read the project's files one by one.", middleware=middleware)


TASK = {"messages": [HumanMessage("Read file_1.txt to file_12.txt, again and again, and say when you are done.")]}


def test_without_workmem_the_loop_outgrows_the_window(tmp_path: Path) -> None:
    script, server = scripted(tmp_path / "upstream.jsonl")
    try:
        with pytest.raises(openai.BadRequestError) as refused:
            agent(script, server, []).invoke(TASK, {"recursion_limit": 500})
        assert refused.value.code == "context_length_exceeded"
    finally:
        server.shutdown()


def test_with_workmem_the_loop_finishes_bounded_and_keeps_what_it_offloads(engine: Engine, tmp_path: Path) -> None:
    script, server = scripted(tmp_path / "upstream.jsonl")
    session = Session.create(tmp_path / "sessions", engine, cwd=tmp_path)
    try:
        result = agent(script, server, [WorkmemMiddleware(session, engine, window=WINDOW)]).invoke(TASK, {"recursion_limit": 500})
    finally:
        server.shutdown()
    assert result["messages"][-1].content == f"{upstream.ANSWER} {STEPS} steps"
    log = [json.loads(line) for line in (tmp_path / "upstream.jsonl").read_text().splitlines()]
    assert not [r for r in log if "over_window" in r], "no request crossed the window"
    main = [r for r in log if r.get("main")]
    # A request a step (the memory update and the read back are steps too), and the last answer.
    assert len(main) == STEPS + 1 and all(not r["unpaired"] for r in main), [r["unpaired"] for r in main if r["unpaired"]]
    assert set(main[-1]["tools"]) >= {"read_file", "read_history", "update_memory"}
    # Every output reached the model whole before anything replaced it.
    outputs = {r["last_call"] for r in main if (r["last_call"] or "").startswith("s-")}
    assert len(outputs) >= STEPS * 3 // 4 and outputs <= set(script.originals), sorted(outputs - set(script.originals))
    # A compaction happened, and read_history gave back an output's original bytes.
    assert [r for r in session.records() if r["kind"] == "compaction"]
    assert [True] in [r["read_back"] for r in main], "the scripted read_history did not get an original back"
    # The memory update the model made survived every compaction.
    assert "every file has numbered lines" in session.overview()
    # The session is one the CLI shows.
    page = tmp_path / "page.html"
    done = subprocess.run([os.environ["WORKMEM_BIN"], "view", "--session", str(session.path), "--out", str(page)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "<html" in page.read_text().lower(), done.stderr
    # A restart: a new middleware on the same session logs only what the state gained since
    # the last call: the final answer (no call came after it) and the next message.
    records = len(session.records())
    again = WorkmemMiddleware(Session.open(session.path), engine, window=WINDOW)
    again._log_new(result["messages"] + [HumanMessage("And now?", id="after-restart")])
    logged = again.session.records()[records:]
    assert [(r["role"], r["content"]) for r in logged] == [("assistant", f"{upstream.ANSWER} {STEPS} steps"), ("user", "And now?")]


def test_a_request_no_compaction_brings_under_the_window_is_not_sent(engine: Engine, tmp_path: Path) -> None:
    from langchain.agents.middleware import ModelRequest
    from langchain_core.messages import SystemMessage

    from workmem import WorkmemError

    session = Session.create(tmp_path / "sessions", engine, cwd=tmp_path)
    middleware = WorkmemMiddleware(session, engine, window=2000)
    request = ModelRequest(model=ChatOpenAI(model="gpt-4o", api_key="test"), messages=[HumanMessage("Go.", id="task")],
                           system_message=SystemMessage("the quick brown fox jumps over the lazy dog " * 400), tools=[])
    with pytest.raises(WorkmemError, match="over the window of 2000"):
        middleware.wrap_model_call(request, lambda r: pytest.fail("sent"))
    assert [r["content"] for r in session.records()] == ["Go."], "the task is logged; nothing else changed"
