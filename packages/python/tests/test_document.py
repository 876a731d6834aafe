"""Spec 004's document through wasmtime-py: tests/data/document/ says what every runtime must say."""

import json
from pathlib import Path

import pytest

from workmem import DocumentError, Engine

DATA = Path(__file__).resolve().parents[3] / "tests" / "data" / "document"


def test_the_document_conformance_case(engine: Engine) -> None:
    cases = json.loads((DATA / "cases.json").read_text())
    expected = json.loads((DATA / "expected.json").read_text())
    for n, case in enumerate(cases["validate"]):
        data = case["text"].encode("utf-8", "surrogatepass") if "text" in case else bytes.fromhex(case["hex"])
        want = expected["validate"][n]
        if want is None:
            engine.validate_document(data, cases["limit"])
            continue
        with pytest.raises(DocumentError) as info:
            engine.validate_document(data, cases["limit"])
        assert [info.value.rule, str(info.value)] == want, f"case {n}"
    for n, doc in enumerate(cases["documents"]):
        assert [[s.name, s.line] for s in engine.document_sections(doc)] == expected["sections"][n]
    for n, r in enumerate(cases["replace"]):
        assert engine.replace_document_section(cases["documents"][r["document"]], r["name"], r["body"]) == expected["replace"][n]
    assert engine.document_section(cases["documents"][0], "facts") == "- CEO = Bob\n"
    assert engine.document_section(cases["documents"][0], "Timeline") is None
    with pytest.raises(DocumentError) as info:
        engine.validate_document("bell \u0007", 64)
    assert info.value.rule == "control-character"
