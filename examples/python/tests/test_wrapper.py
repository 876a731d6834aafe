"""The wrapper's promises: dataclasses in and out, refusals as WorkmemError with diagnostics."""

import pytest

from workmem import Engine, LearningAdd, LearningOps, Update, WorkmemError


def test_apply_raises_with_positioned_diagnostics(engine):
    with pytest.raises(WorkmemError) as info:
        engine.apply(engine.empty_state(), "KEY_LEARNINGS:\n  ADD:\n    - no reason\n")
    assert [(d.severity, d.line, d.column) for d in info.value.diagnostics] == [("error", 3, 7)]
    assert "first at 3:7" in str(info.value)


def test_merge_err_becomes_workmem_error(engine):
    update = Update(learnings=LearningOps(add=[LearningAdd(reason=" ", text="x")]))
    with pytest.raises(WorkmemError, match="non-empty reason"):
        engine.merge(engine.empty_state(), [Update(), update])


def test_state_round_trip_and_ids(engine):
    state = engine.apply(engine.empty_state(), "KEY_LEARNINGS:\n  ADD:\n    - because a: b\n").state
    archived = engine.apply(state, "KEY_LEARNINGS:\n  ARCHIVE:\n    - KL-1 because done\n")
    assert archived.archived == ["KL-1"]
    again = engine.apply(archived.state, "KEY_LEARNINGS:\n  ADD:\n    - because c: d\n")
    assert again.added == ["KL-2"], "IDs are never reused"
    prompt = engine.update_prompt(again.state, "next")
    assert "- KL-2: d" in prompt and "- KL-1: b" not in prompt, "archived entries are not offered"


def test_a_trap_is_an_error_and_the_engine_recovers():
    import wasmtime
    config = wasmtime.Config()
    e = Engine(engine=wasmtime.Engine(config))
    # More text than the guest can allocate with a 1 MiB store limit traps inside the sandbox.
    e._store.set_limits(memory_size=1 << 20)
    with pytest.raises(WorkmemError, match="trapped"):
        e.parse("KEY_LEARNINGS:\n  ADD:\n" + "    - because x: y\n" * 200_000)
    assert e.parse("CURRENT_PROGRESS:\n  In Progress:\n    - again\n").ok
