"""The memory-update step inside the component, with this file supplying the model (a script
here: the first answer is malformed, the second right), the files and the clock."""

import tempfile
from pathlib import Path

from workmem.agent import Agent, DirectoryStore

responses = Path(__file__).resolve().parent.parent / "responses"
answers = [(responses / name).read_text() for name in ["02-malformed.dsl", "01-start.dsl"]]
session = Path(tempfile.mkdtemp(prefix="workmem-session-"))


def model(messages):
    print(f"model <- {len(messages)} messages")
    return answers.pop(0)


report = Agent(model, DirectoryStore(session)).memory_update("Fix Quantity.to() for composite units")
print(f"applied after {report.attempts} calls:\n{report.diff}")
print((session / "working-memory" / "overview.md").read_text())
