"""The shared corpora (tests/corpus, tests/scenarios), run through the component on wasmtime-py."""

import dataclasses
import json

import pytest

from conftest import TESTS
from workmem import WorkmemError

CASES = sorted((TESTS / "corpus").glob("*.dsl"))
SCENARIOS = sorted(p for p in (TESTS / "scenarios").iterdir() if p.is_dir())


def test_the_corpus_has_at_least_40_cases():
    assert len(CASES) >= 40


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.stem)
def test_parse(engine, case):
    expected = json.loads(case.with_suffix(".json").read_text())
    # Bytes, decoded: CRLF and lone CR reach the engine exactly as written in the file.
    result = engine.parse(case.read_bytes().decode("utf-8"))
    assert {"ok": result.ok, **dataclasses.asdict(result)} == expected


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda p: p.name)
def test_scenario(engine, scenario):
    memory = engine.new_memory()
    for i, step in enumerate(sorted(scenario.glob("*.dsl"))):
        at = f"2026-01-01T00:00:{i + 1:02d}Z"
        try:
            r = memory.apply(step.read_bytes().decode("utf-8"), at)
            result = {"ok": True, "added": r.added, "archived": r.archived, "ignored": r.ignored,
                      "diff": r.diff, "diagnostics": [dataclasses.asdict(d) for d in r.warnings]}
        except WorkmemError as e:
            result = {"ok": False, "added": [], "archived": [], "ignored": [], "diff": None,
                      "diagnostics": [dataclasses.asdict(d) for d in e.diagnostics]}
        expected = json.loads((scenario / f"{step.stem}.expected.json").read_text())
        assert result == expected, step.stem
        assert memory.render() == (scenario / f"{step.stem}.overview.md").read_text(), step.stem
    # The serialized memory is the same bytes the Rust host wrote, and loads back.
    saved = (scenario / "final.state.json").read_text()
    assert memory.save() == saved
    assert engine.load_memory(saved).save() == saved
