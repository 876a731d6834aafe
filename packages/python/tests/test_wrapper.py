"""The wrapper's promises: a memory kept in the engine, dataclasses whose shapes match the
component's WIT types, refusals as WorkmemError, and the memory update driven from asyncio."""

import asyncio
import dataclasses
import json
import os
import subprocess
import sys
import threading
import typing
import urllib.request
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
import wasmtime
from wasmtime.component import RecordType

import workmem
from workmem import Applied, Diagnostic, Engine, LearningAdd, LearningOps, ParseOutcome, ParseResult, Snapshot, Update, WorkmemError


def test_apply_raises_with_positioned_diagnostics_and_changes_nothing(engine):
    memory = engine.new_memory()
    before = memory.save()
    with pytest.raises(WorkmemError) as info:
        memory.apply("KEY_LEARNINGS:\n  ADD:\n    - no reason\n")
    assert [(d.severity, d.line, d.column) for d in info.value.diagnostics] == [("error", 3, 7)]
    assert "first at 3:7" in str(info.value)
    assert memory.save() == before


def test_merge_err_becomes_workmem_error(engine):
    update = Update(learnings=LearningOps(add=[LearningAdd(reason=" ", text="x")]))
    with pytest.raises(WorkmemError, match="non-empty reason"):
        engine.new_memory().merge([Update(), update])


def test_round_trip_ids_and_what_comes_back(engine):
    memory = engine.new_memory()
    applied = memory.apply("KEY_LEARNINGS:\n  ADD:\n    - because a: b\n", state=True)
    assert applied.overview is None and applied.state == memory.save()
    assert json.loads(applied.log_entry)["seq"] == 1
    restored = engine.load_memory(memory.save())
    assert restored.apply("KEY_LEARNINGS:\n  ARCHIVE:\n    - KL-1 because done\n").archived == ["KL-1"]
    assert restored.apply("KEY_LEARNINGS:\n  ADD:\n    - because c: d\n").added == ["KL-2"], "IDs are never reused"
    assert restored.snapshot().learnings[0].archived.reason == "done"
    prompt = restored.update_prompt("next")
    assert "- KL-2: d" in prompt and "- KL-1: b" not in prompt, "archived entries are not offered"
    with pytest.raises(WorkmemError, match="not a serialized workmem memory"):
        engine.load_memory('{"format": "other/1", "updates": 0}')


# About 10 ms to parse; twenty times it, four times a deadline of 0.05 s.
LONG = "KEY_LEARNINGS:\n  ADD:\n" + "    - because it is long: a learning that takes a while to read\n" * 20_000


def test_a_call_past_its_cpu_deadline_stops_and_the_engine_recovers():
    e = Engine(call_deadline=0.05)
    with pytest.raises(WorkmemError, match=r"ran past its CPU deadline of 0.05 s \(Engine\(call_deadline=\.\.\.\) raises it\)"):
        e.parse(LONG * 20)  # about 200 ms of parsing: four times the deadline
    assert e.parse("CURRENT_PROGRESS:\n  In Progress:\n    - again\n").ok
    assert Engine().parse(LONG).ok, "under the default deadline the same input parses"


def test_an_engine_passed_in_keeps_the_call_deadline():
    config = wasmtime.Config()
    config.epoch_interruption = True
    shared = wasmtime.Engine(config)
    component = wasmtime.component.Component.from_file(shared, str(workmem._default_component()))
    first, second = Engine(component, shared, call_deadline=0.05), Engine(component, shared, call_deadline=0.05)
    for e in (first, second):
        with pytest.raises(WorkmemError, match="CPU deadline"):
            e.parse(LONG * 20)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_forked_child_keeps_the_call_deadline():
    e = Engine(call_deadline=0.05)
    child = os.fork()
    if child == 0:
        code = 2
        try:
            e.parse(LONG * 20)  # about 200 ms: past the deadline only if something ticks
            code = 1
        except WorkmemError:
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "the child's call was not stopped at its deadline"


def test_engines_die_while_their_epoch_ticks():
    # A ticker that went through the Python engine object (as this package's first one did)
    # crashed here within a few engines: its weak reference answered while __del__ freed the
    # pointer. A subprocess, so a crash is a
    # failure and not the end of the test run; it also exits with the ticker running.
    script = """
import time
import wasmtime
from workmem import _epoch
_epoch.TICK = 0.0
for _ in range(100):
    config = wasmtime.Config()
    config.epoch_interruption = True
    _epoch.tick(wasmtime.Engine(config))
deadline = time.monotonic() + 10
while _epoch._clones and time.monotonic() < deadline:
    time.sleep(0.01)
assert not _epoch._clones, "a clone outlived its engine"
"""
    package_root = Path(workmem.__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, "-X", "faulthandler", "-c", script], cwd=package_root, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_a_trap_is_an_error_and_the_engine_recovers():
    e = Engine(max_memory_bytes=2 << 20)
    memory = e.new_memory()
    # More text than the guest can allocate under a 2 MiB limit traps inside the sandbox.
    with pytest.raises(WorkmemError, match=r"more than its 2097152 bytes of memory \(Engine\(max_memory_bytes=\.\.\.\) raises it\)"):
        e.parse("KEY_LEARNINGS:\n  ADD:\n" + "    - because x: y\n" * 200_000)
    assert e.parse("CURRENT_PROGRESS:\n  In Progress:\n    - again\n").ok
    with pytest.raises(WorkmemError, match="memory is gone"):
        memory.render()


def _wit_fields(ty) -> list:
    return [name for name, _ in ty.fields]


def test_the_dataclasses_match_the_component_types():
    """The wrapper's dataclasses are written by hand; this holds them to the WIT."""
    engine = wasmtime.Engine()
    component = wasmtime.component.Component.from_file(engine, str(workmem._default_component()))
    interface = component.type.exports(engine)[workmem.PACKAGE]
    funcs = {name: item.ty for name, item in interface.ty.exports(engine).items()}
    checked = []

    def check(cls, wit):
        if not dataclasses.is_dataclass(cls) or not isinstance(wit, RecordType):
            return
        wit_names = _wit_fields(wit)
        assert [f.name.replace("_", "-") for f in dataclasses.fields(cls)] == wit_names, cls.__name__
        hints = typing.get_type_hints(cls, vars(workmem))
        for (name, ty), f in zip(wit.fields, dataclasses.fields(cls)):
            inner = hints[f.name]
            while typing.get_args(inner):
                inner = next(a for a in typing.get_args(inner) if a is not type(None))
            element = getattr(ty, "element", None) or getattr(ty, "payload", None) or ty
            check(inner, element)
        checked.append(cls.__name__)

    check(ParseOutcome, funcs["parse"].result)
    assert ParseResult is ParseOutcome, "the old name stays for one release"
    check(Applied, funcs["[method]memory.apply"].result.ok)
    check(Snapshot, funcs["[method]memory.snapshot"].result)
    check(Update, funcs["[method]memory.merge"].params[1][1].element)
    history = {name: item.ty for name, item in component.type.exports(engine)[workmem.HISTORY].ty.exports(engine).items()}
    check(workmem.Compaction, history["fallback"].result.payload)
    check(workmem.Entry, history["apply-replacements"].result.element)
    assert {"ParseOutcome", "Update", "Diagnostic", "Applied", "Snapshot", "Learning", "Progress", "Compaction", "Entry", "ChatMessage",
            "Replacement", "ToolCall"} <= set(checked), checked


def test_remembered_types_convert_as_wasmtime_py_does(engine):
    """The wrapper reads each function's type once (workmem._typecache); a function that
    reads it on every call, in a second instance, gives the same values."""
    setup = "CURRENT_PROGRESS:\n  In Progress:\n    - one\nKEY_LEARNINGS:\n  ADD:\n    - because x: y\n"
    update = "KEY_LEARNINGS:\n  ADD:\n    - because z: w\n  ARCHIVE:\n    - KL-1 because done\n    - KL-9 because unknown\n"
    apply = engine._funcs["[method]memory.apply"]
    assert apply.type(engine._store) is apply.type(engine._store)
    fresh = wasmtime.Store(engine._engine)
    fresh.set_epoch_deadline(1 << 40)
    instance = wasmtime.component.Linker(engine._engine).instantiate(fresh, engine._component)
    index = instance.get_export_index(fresh, workmem.PACKAGE)

    def plain(name):
        return instance.get_func(fresh, instance.get_export_index(fresh, name, index))

    def raw_apply(memory, text, wants):
        out = plain("[method]memory.apply")(fresh, memory, text, "2026-11-22T12:00:00Z", wants)
        plain("[method]memory.apply").post_return(fresh)
        return out

    memory = plain("[constructor]memory")(fresh)
    wants = wasmtime.component.Record()
    wants.overview, wants.state = True, True
    raw_apply(memory, setup, wants)
    expected = raw_apply(memory, update, wants)
    ours = engine.new_memory()
    ours.apply(setup, "2026-11-22T12:00:00Z")
    got = ours._call("[method]memory.apply", update, "2026-11-22T12:00:00Z", workmem._wants(True, True))
    assert vars(got) == vars(expected)
    assert vars(got)["warnings"] and vars(got)["archived"] == ["KL-1"]


class _Model(BaseHTTPRequestHandler):
    """A loopback server speaking OpenAI's Chat Completions (non-streamed)."""

    answers: list = []
    requests: list = []

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        type(self).requests.append(body)
        content = type(self).answers.pop(0)
        out = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args):
        pass


def test_an_asyncio_host_drives_the_memory_update_over_http(engine):
    _Model.answers = ["KEY_LEARNINGS:\n  ADD:\n    - no reason\n", "KEY_LEARNINGS:\n  ADD:\n    - because found: the fix\n"]
    _Model.requests = []
    server = HTTPServer(("127.0.0.1", 0), _Model)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}/v1/chat/completions"

    async def ask(messages):
        body = json.dumps({"model": "m", "messages": [dataclasses.asdict(m) for m in messages]}).encode()

        def post():
            request = urllib.request.Request(url, body, {"content-type": "application/json"})
            with urllib.request.urlopen(request, timeout=10) as response:
                return json.load(response)["choices"][0]["message"]["content"]

        return await asyncio.to_thread(post)

    try:
        memory = engine.new_memory()
        updated = asyncio.run(memory.update_async("Fix the flaky test", ask))
    finally:
        server.shutdown()
    assert (updated.attempts, updated.added) == (2, ["KL-1"])
    assert updated.state == memory.save()
    assert "Fix the flaky test" in _Model.requests[0]["messages"][1]["content"]
    assert "line 3, column 7" in _Model.requests[1]["messages"][-1]["content"]


def test_a_stubborn_model_gives_up_applying_nothing(engine):
    memory = engine.new_memory()
    before = memory.save()
    calls = []
    with pytest.raises(WorkmemError, match="after 2 attempts") as info:
        memory.update("t", lambda messages: calls.append(messages) or "nonsense", max_reprompts=1)
    assert len(calls) == 2 and info.value.diagnostics
    assert memory.save() == before
    assert isinstance(info.value.diagnostics[0], Diagnostic)


# Compaction (issue 8): the same tool loop as the JS test, by archive and by an asyncio summary.

def _tool_loop(rounds: int) -> list:
    from workmem import ChatMessage, Entry, ToolCall
    view = [Entry(1, ChatMessage("user", "Fix the flaky test"))]
    for r in range(rounds):
        call = f"call-{r}"
        view.append(Entry(2 + 2 * r, ChatMessage("assistant", f"step {r}", tool_calls=[ToolCall(call, "bash", "{}")]), 10))
        view.append(Entry(3 + 2 * r, ChatMessage("tool", f"output {r}\n" + "x" * 2000, tool_call_id=call), 500))
    return view


def test_compact_offloads_old_tool_outputs_and_reads_back_from_the_log():
    engine = Engine()
    view = _tool_loop(6)
    done = engine.compact(view, target="tools", keep_recent=2)
    assert [r.replaces for r in done.replacements] == [[3], [5], [7], [9]]
    for r in done.replacements:
        assert r.message.content.startswith("[offloaded output of bash: ")
        assert r.message.tool_call_id == next(e for e in view if e.seq == r.replaces[0]).message.tool_call_id
    assert "output 0\n" in done.archive and done.tokens_after < done.tokens_before
    assert engine.apply_replacements(view, done.replacements) == done.view


def test_compact_summarizes_with_asyncio_and_refuses_with_a_kind():
    from workmem import CompactionRefused
    engine = Engine()
    view = _tool_loop(5)
    asked = []

    async def ask(messages):
        asked.append(messages)
        return "Goal: fix the flaky test (#1); steps 0-3 found nothing (#2-#9)."

    done = asyncio.run(engine.compact_async(view, ask, strategy="summarize", keep_recent=1))
    assert "### #3 tool bash" in asked[0][1].content
    assert any(e.message.content.endswith("steps 0-3 found nothing (#2-#9).") for e in done.view)
    with pytest.raises(CompactionRefused) as refused:
        engine.compact(view, lambda messages: " ", strategy="summarize", keep_recent=1)
    assert refused.value.kind == "empty-summary"
    with pytest.raises(CompactionRefused) as refused:
        engine.compact(view, keep_recent=50)
    assert refused.value.kind == "nothing"
    assert engine.fallback(view, used=100, threshold=1000, goal=500) is None
    assert "automatically" in engine.fallback(view, used=3000, threshold=2000, goal=1000, keep_recent=1).notice


def test_remind_carries_a_compactions_notice_to_the_next_request_alone(engine):
    from workmem import CompactionMark, Reminders, Standing

    made = CompactionMark(7, "Compacted #2-#3.")
    assert engine.remind(Standing(7, 2, made)) == Reminders(5, "Compacted #2-#3.")
    assert engine.remind(Standing(8, 2, made)) == Reminders(6, None)
    assert engine.remind(Standing()) == Reminders(0, None)
