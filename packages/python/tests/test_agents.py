"""`WorkmemFilter` in a real OpenAI Agents SDK run (`Agent`, `Runner`; a Chat Completions model, then a Responses one),
against the scripted model on loopback that `workmem proxy`'s tests use (tests/proxy/upstream.py):
40 steps of a file tool over outputs of about 1,600 tokens, at an 8,000-token window the model
enforces as a provider does. Without workmem the run ends in `context_length_exceeded`; with it
every request is under the window, every output reaches the model whole first, calls and results
stay paired, a scripted `read_history` gives the original bytes, a memory update survives the
compactions, and a run continued from the result logs only what is new."""

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import Any, Optional

import openai
import pytest
from agents import Agent, OpenAIChatCompletionsModel, OpenAIResponsesModel, RunConfig, Runner, function_tool, set_tracing_disabled
from bounded_run import STEPS, WINDOW, check, logged_since, script

from workmem import Engine, Session
from workmem.agents import WorkmemFilter, WorkmemSession, _messages

import upstream  # noqa: E402  (tests/proxy, on the path bounded_run puts it)

TASK = "Read file_1.txt to file_12.txt, again and again, and say when you are done."
set_tracing_disabled(True)


def run(log: Path, memory: Optional[WorkmemFilter], api: str = "chat", inputs: Any = (TASK,)) -> Any:
    """The agent run on each input in turn (as one conversation where `memory` is a session)."""
    loop = script(log)
    server = upstream.start(loop)

    @function_tool
    def read_file(path: str) -> str:
        """Read a file of the project."""
        return loop.text(int(path.split("_")[1].split(".")[0]))

    client = openai.AsyncOpenAI(base_url=f"http://127.0.0.1:{server.server_address[1]}/v1", api_key="test", max_retries=0)
    agent = Agent(name="reader", instructions="You read the project's files one by one.",
                  model=(OpenAIChatCompletionsModel if api == "chat" else OpenAIResponsesModel)(model="gpt-4o", openai_client=client),
                  tools=[read_file, *(memory.tools if memory else [])])
    config = RunConfig(call_model_input_filter=memory) if memory else RunConfig()
    session = memory if isinstance(memory, WorkmemSession) else None

    async def turns() -> Any:
        return [await Runner.run(agent, text, run_config=config, max_turns=200, session=session) for text in inputs]

    try:
        results = asyncio.run(turns())
        return loop, results[-1]
    finally:
        server.shutdown()


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_without_workmem_the_run_outgrows_the_window(tmp_path: Path, api: str) -> None:
    with pytest.raises(openai.BadRequestError) as refused:
        run(tmp_path / "upstream.jsonl", None, api)
    assert refused.value.code == "context_length_exceeded"


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_with_workmem_the_run_finishes_bounded_and_keeps_what_it_offloads(engine: Engine, tmp_path: Path, api: str) -> None:
    session = Session.create(tmp_path / "sessions", engine, cwd=tmp_path)
    loop, result = run(tmp_path / "upstream.jsonl", WorkmemFilter(session, engine, window=WINDOW), api)
    assert result.final_output == f"{upstream.ANSWER} {STEPS} steps"
    check(loop, tmp_path / "upstream.jsonl", session, tmp_path)
    # The run continued (a new filter on the same session, as after a restart): only the final
    # answer and the new message are new to the log.
    records = len(session.records())
    again = WorkmemFilter(Session.open(session.path), engine, window=WINDOW)
    items = result.to_input_list() + [{"role": "user", "content": "And now?"}]
    again.bound.log([(f"agents:{at}", m, group) for at, m, group in _messages(items)])
    assert logged_since(again.session, records) == [("assistant", f"{upstream.ANSWER} {STEPS} steps"), ("user", "And now?")]


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_as_the_sdks_session_the_conversation_is_kept_bounded_and_undone_on_request(engine: Engine, tmp_path: Path, api: str) -> None:
    session = Session.create(tmp_path / "sessions", engine, cwd=tmp_path)
    memory = WorkmemSession(session, engine, window=WINDOW)
    loop, result = run(tmp_path / "upstream.jsonl", memory, api)
    assert result.final_output == f"{upstream.ANSWER} {STEPS} steps"
    check(loop, tmp_path / "upstream.jsonl", session, tmp_path)
    # The next turn, in a new process: the SDK gets the bounded conversation from the session,
    # and only the new message and its answer are new to the log.
    records = len(session.records())
    resumed = WorkmemSession(Session.open(session.path), engine, window=WINDOW)
    history = asyncio.run(resumed.get_items())
    assert 0 < len(history) < len(result.to_input_list()), "the history comes back compacted"
    loop, result = run(tmp_path / "again.jsonl", resumed, api, inputs=("And now?",))
    assert logged_since(resumed.session, records) == [("user", "And now?"), ("assistant", f"{upstream.ANSWER} {STEPS} steps")]
    # pop_item takes the answer, then the question, out of the conversation; the log keeps both.
    answer = asyncio.run(resumed.pop_item())
    question = asyncio.run(resumed.pop_item())
    assert question["content"] == "And now?" and answer is not None
    after = asyncio.run(resumed.get_items())
    assert after == history, "the conversation is what it was before the turn"
    assert [m.content for _, m in resumed.session.originals((records + 1, records + 1))] == ["And now?"]
    # clear_session empties the conversation; the memory stays.
    asyncio.run(resumed.clear_session())
    assert asyncio.run(resumed.get_items()) == [] and "every file has numbered lines" in resumed.session.overview()
    assert resumed.session.view(engine).entries == []
    # The CLI reads the withdrawals as the package does.
    done = subprocess.run([os.environ["WORKMEM_BIN"], "--json", "history", "--session", str(session.path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and json.loads(done.stdout) == [], done.stdout + done.stderr
