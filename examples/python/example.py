"""An agent's memory-update step with workmem: build the prompt, ask the model, apply its
answer, and re-prompt with the diagnostics when it is malformed. The "model" replays the
sample responses in examples/responses/, one per call."""

from itertools import cycle
from pathlib import Path

from workmem import Engine, WorkmemError

answers = cycle(sorted((Path(__file__).resolve().parent.parent / "responses").glob("*.dsl")))


def model(prompt: str) -> str:
    answer = next(answers)
    print(f"model <- {len(prompt)} characters of prompt; model -> {answer.name}")
    return answer.read_text()


engine = Engine()
state = engine.empty_state()
for task in ["Fix Quantity.to() for composite units", "Keep going: fix it and test it"]:
    prompt = engine.update_prompt(state, task)
    for attempt in range(3):
        try:
            result = engine.apply(state, model(prompt))
        except WorkmemError as e:
            errors = "\n".join(f"line {d.line}, column {d.column}: {d.message}" for d in e.diagnostics)
            print(f"rejected, asking again:\n{errors}\n")
            prompt = f"{engine.update_prompt(state, task)}\n\nYour previous answer had these errors; answer again:\n{errors}\n"
            continue
        state = result.state
        print(result.diff)
        break
print(engine.render(state))
