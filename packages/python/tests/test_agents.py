"""`WorkmemFilter` in a real OpenAI Agents SDK run (`Agent`, `Runner`; a Chat Completions model, then a Responses one),
against the scripted model on loopback that `workmem proxy`'s tests use (tests/proxy/upstream.py):
40 steps of a file tool over outputs of about 1,600 tokens, at an 8,000-token window the model
enforces as a provider does. Without workmem the run ends in `context_length_exceeded`; with it
every request is under the window, every output reaches the model whole first, calls and results
stay paired, a scripted `read_history` gives the original bytes, a memory update survives the
compactions, and a run continued from the result logs only what is new."""

import asyncio
from pathlib import Path
from typing import Any, Optional

import openai
import pytest
from agents import Agent, OpenAIChatCompletionsModel, OpenAIResponsesModel, RunConfig, Runner, function_tool, set_tracing_disabled
from bounded_run import STEPS, WINDOW, check, logged_since, script

from workmem import Engine, Session
from workmem.agents import WorkmemFilter, _messages

import upstream  # noqa: E402  (tests/proxy, on the path bounded_run puts it)

TASK = "Read file_1.txt to file_12.txt, again and again, and say when you are done."
set_tracing_disabled(True)


def run(log: Path, memory: Optional[WorkmemFilter], api: str = "chat") -> Any:
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
    try:
        return loop, asyncio.run(Runner.run(agent, TASK, run_config=config, max_turns=200))
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
