"""The agent world with imports written in Python: memory-update runs inside the component;
the model is a script, the store a real directory."""

import json

import pytest

from workmem import WorkmemError
from workmem.agent import Agent, Completion, DirectoryStore, LlmError, StoreError

VALID = "CURRENT_PROGRESS:\n  In Progress:\n    - Fixing the parser\nKEY_LEARNINGS:\n  ADD:\n    - because it matters: the bug is in parse.rs\n"
INVALID = "KEY_LEARNINGS:\n  ADD:\n    - no reason given\n"


def scripted(answers):
    calls = []

    def llm(messages):
        calls.append(messages)
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    return llm, calls


def test_memory_update_runs_inside_the_component_with_python_imports(tmp_path):
    llm, calls = scripted([INVALID, Completion(VALID, 100, 20)])
    agent = Agent(llm, DirectoryStore(tmp_path), clock=lambda: "2026-11-22T07:00:00Z")
    report = agent.memory_update("Fix the parser")
    assert report.attempts == 2 and report.added == ["KL-1"]
    assert (report.prompt_tokens, report.completion_tokens) == (100, 20)
    assert "## Latest task\n\nFix the parser" in calls[0][1].content
    assert "line 3, column 7: a Key Learnings ADD bullet must start with" in calls[1][3].content
    state = json.loads((tmp_path / "state.json").read_text())
    assert state["learnings"][0]["added_at"] == "2026-11-22T07:00:00Z"
    assert "- **KL-1**: the bug is in parse.rs" in (tmp_path / "working-memory" / "overview.md").read_text()
    again = Agent(lambda _: "KEY_LEARNINGS:\n  ADD:\n    - because b: second fact\n", DirectoryStore(tmp_path))
    assert again.memory_update("next").added == ["KL-2"], "IDs go on across instances"


def test_a_failing_model_or_malformed_answers_write_nothing(tmp_path):
    with pytest.raises(WorkmemError, match="HTTP 503"):
        Agent(scripted([LlmError("http-status", 503)])[0], DirectoryStore(tmp_path)).memory_update("t")
    with pytest.raises(WorkmemError, match="still invalid after 2 attempts"):
        Agent(scripted([INVALID, INVALID])[0], DirectoryStore(tmp_path)).memory_update("t", 1)
    assert list(tmp_path.iterdir()) == []


def test_the_directory_store_refuses_paths_that_leave_it(tmp_path):
    store = DirectoryStore(tmp_path)
    (tmp_path / "working-memory").mkdir()
    (tmp_path / "working-memory" / "out").symlink_to(tmp_path.parent)
    for path in ["../x", "/etc/passwd", "a/../../x", "working-memory/out/x", "a\\b"]:
        with pytest.raises(StoreError):
            store.write(path, "x")
    with pytest.raises(StoreError):
        store.read("missing.txt")
