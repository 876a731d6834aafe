"""`WorkmemMiddleware` in a real LangChain v1 agent (`create_agent`, `ChatOpenAI`), against the
scripted model on loopback that `workmem proxy`'s tests use (tests/proxy/upstream.py): 40 steps
of a file tool over outputs of about 1,600 tokens, at an 8,000-token window the model enforces as
a provider does. Without workmem the loop ends in `context_length_exceeded`; with it every
request is under the window, every output reaches the model whole first, calls and results stay
paired, a scripted `read_history` gives the original bytes, a memory update survives the
compactions, the session opens in `workmem view`, and a new middleware on the same session
(a restart) logs only what is new."""

from pathlib import Path
from typing import Any, List

import openai
import pytest
from bounded_run import STEPS, WINDOW, check, logged_since, script
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

from workmem import Engine, Session
from workmem.langchain import WorkmemMiddleware, _to_chat

import upstream  # noqa: E402  (tests/proxy, on the path bounded_run puts it)


def scripted(log: Path) -> Any:
    loop = script(log)
    return loop, upstream.start(loop)


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
    check(script, tmp_path / "upstream.jsonl", session, tmp_path)
    # A restart: a new middleware on the same session logs only what the state gained since
    # the last call: the final answer (no call came after it) and the next message.
    records = len(session.records())
    again = WorkmemMiddleware(Session.open(session.path), engine, window=WINDOW)
    again.bound.log([(f"langchain:{m.id}", _to_chat(m), []) for m in result["messages"] + [HumanMessage("And now?", id="after-restart")]])
    assert logged_since(again.session, records) == [("assistant", f"{upstream.ANSWER} {STEPS} steps"), ("user", "And now?")]


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
