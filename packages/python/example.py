"""An agent's memory-update step with workmem, driven from asyncio: the engine says what to
ask, this script asks the model, and the engine applies the answer or asks again with the
diagnostics. The "model" replays examples/responses/ (a malformed answer, then good ones);
swap `ask` for your async client's call."""

import asyncio
from pathlib import Path

from workmem import Engine

responses = Path(__file__).resolve().parent.parent.parent / "examples" / "responses"
answers = [(responses / name).read_text() for name in ("02-malformed.dsl", "01-start.dsl", "03-progress.dsl")]


async def ask(messages):
    await asyncio.sleep(0)  # where a real client awaits the network
    print(f"model <- {len(messages)} messages")
    return answers.pop(0)


async def main():
    memory = Engine().new_memory()
    for task in ["Fix Quantity.to() for composite units", "Keep going: fix it and test it"]:
        updated = await memory.update_async(task, ask)
        print(f"applied after {updated.attempts} call(s):\n{updated.diff}")
    print(memory.render())


asyncio.run(main())
