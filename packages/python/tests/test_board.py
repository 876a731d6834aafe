"""The board through wasmtime-py: tests/data/board/ (spec 002's example as data) gives the same
events, state, views and refusals as every other runtime; refusals are BoardErrors."""

import json
from pathlib import Path

import pytest

from workmem import Board, BoardError, Engine, WorkmemError

DATA = Path(__file__).resolve().parents[3] / "tests" / "data" / "board"


def _read(name: str) -> str:
    return (DATA / name).read_text()


def _create(engine: Engine) -> Board:
    created = json.loads(_read("board.json"))
    return engine.new_board(created["id"], created["name"], created["goal"], created["constraints"],
                            created["memory_core_refs"], at=created["now"])


def test_the_board_conformance_case(engine: Engine) -> None:
    board = _create(engine)
    events = ""
    for n, line in enumerate(_read("ops.jsonl").strip().split("\n"), 1):
        step = json.loads(line)
        before = board.save()
        if "refused" not in step:
            events += board.apply(step["actor"], step["op"], at=step["at"]).event + "\n"
            continue
        with pytest.raises(BoardError) as info:
            board.apply(step["actor"], step["op"], at=step["at"])
        assert str(info.value) == step["refused"], f"ops.jsonl line {n}"
        assert info.value.rule == step["rule"], f"ops.jsonl line {n}"
        assert board.save() == before, "a refused op changed the board"
    assert events == _read("events.jsonl")
    assert board.save() == _read("state.json")
    for key, expected in json.loads(_read("views.json")).items():
        name, _, arg = key.partition(":")
        got = board.brief(arg) if name == "brief" else board.view(name, arg or None)
        assert got == expected, key

    fresh = _create(engine)
    lines = events.strip().split("\n")
    with pytest.raises(WorkmemError, match="next event is revision 1"):
        fresh.replay(lines[1])
    for line in lines:
        fresh.replay(line)
    assert fresh.save() == board.save()
    assert engine.load_board(board.save()).revision == board.revision


def test_a_refusal_names_its_rule(engine: Engine) -> None:
    board = engine.new_board("b", "n", "g")
    board.apply("orchestrator", {"op": "add_task", "title": "a", "description": "", "depends_on": [], "needs_review": False})
    with pytest.raises(BoardError) as info:
        board.apply("orchestrator", {"op": "add_dependency", "task": "T-1", "on": "T-1"})
    assert (info.value.rule, str(info.value)) == ("cycle", "that dependency would close a cycle: T-1 -> T-1")
    with pytest.raises(BoardError) as empty:
        engine.new_board("b", "n", " ")
    assert empty.value.rule == "empty"
    with pytest.raises(ValueError):
        board.view("everything")


def test_the_one_rule_of_ids(engine: Engine) -> None:
    ids = json.loads((DATA.parent / "ids.json").read_text())
    for id in ids["refused"]:
        with pytest.raises(BoardError) as refused:
            engine.new_board(id, "n", "g")
        assert refused.value.rule == "invalid-id", id
    for id in ids["accepted"]:
        engine.new_board(id, "n", "g")


def test_view_names_are_the_wit_variant() -> None:
    """The views `Board.view` takes are the cases of `variant view` in wit/board.wit, the one
    list every runtime answers to."""
    import re

    from workmem import _BOARD_VIEWS

    wit = (Path(__file__).resolve().parents[3] / "wit" / "board.wit").read_text()
    body = wit[wit.index("variant view {"):].split("{", 1)[1].split("}", 1)[0]
    code = "".join(line.split("///")[0] for line in body.splitlines())
    cases = [re.sub(r"\(.*\)", "", c).strip() for c in code.split(",") if c.strip()]
    assert sorted(_BOARD_VIEWS) == sorted(cases)
