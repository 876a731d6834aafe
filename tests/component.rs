//! The engine component as wasmtime sees it: its imports, its errors, its traps, and the
//! compile cache. An `Err` from the guest and a trap are asserted separately.

use crate::common;

use workmem_commit::apply;
use workmem_runtime::{COMPONENT, Error, LearningAdd, LearningOps, Options, Runtime, Update, UpdateStep, VerbatimOps, Wants};
use workmem_store::Sessions;

use std::path::Path;

/// Each component within its budget (tests/data/size-budget.json), so that none grows back
/// silently: a change that needs more raises the budget, and says why.
#[test]
fn each_component_is_within_its_size_budget() {
    let budget: serde_json::Value = serde_json::from_str(&common::read(&common::root().join("tests/data/size-budget.json"))).unwrap();
    let built = [
        ("engine", COMPONENT.bytes().len()),
        ("agent", workmem_runtime::AGENT_COMPONENT.bytes().len()),
        ("go-core", workmem_runtime::GO_CORE_MODULE.bytes().len()),
    ];
    let over: Vec<String> = built
        .iter()
        .filter(|(name, bytes)| *bytes as u64 > budget[name].as_u64().expect("a budget for each component"))
        .map(|(name, bytes)| format!("{name}: {bytes} bytes, over its budget of {}", budget[name]))
        .collect();
    assert!(over.is_empty(), "{over:?}: make it smaller, or raise its budget in tests/data/size-budget.json and say why");
}

/// The `workmem` binary carries its components compiled (the runtime's build script compiles
/// them), so no crate of it may turn on the runtime's `compiler` feature, which would link
/// Cranelift back in: about 7 MB of the binary (docs/performance.md, "The binary's size").
#[test]
fn the_workmem_binary_links_no_compiler() {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = std::process::Command::new(cargo)
        .current_dir(common::root())
        .args(["tree", "--quiet", "--offline", "--package", "workmem", "--edges", "normal", "--prefix", "none", "--format", "{p} {f}"])
        .output()
        .unwrap();
    assert!(out.status.success(), "cargo tree: {}", String::from_utf8_lossy(&out.stderr));
    let tree = String::from_utf8(out.stdout).unwrap();
    let features = |name: &str| -> Vec<&str> {
        tree.lines().filter(|l| l.starts_with(&format!("{name} v"))).flat_map(|l| l.rsplit(' ').next().unwrap().split(',')).collect()
    };
    assert!(!features("wasmtime").is_empty() && !features("workmem-runtime").is_empty(), "the binary's tree names wasmtime and the runtime:\n{tree}");
    assert!(!features("wasmtime").contains(&"cranelift"), "wasmtime with its compiler in the binary: {:?}", features("wasmtime"));
    assert!(!features("workmem-runtime").contains(&"compiler"), "the runtime's compiler in the binary: {:?}", features("workmem-runtime"));
}

/// The compile cache (`Runtime::from_bytes`) loads what it wrote, and compiles over an artifact
/// another user could have written (it is native code), then loads the one it wrote in its place.
#[test]
fn the_compile_cache_loads_only_an_artifact_no_one_else_may_write() {
    use std::os::unix::fs::PermissionsExt;
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("trusted-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let options = Options { cache_dir: Some(dir.clone()), ..Options::default() };
    let load = || Runtime::from_bytes(COMPONENT.bytes(), &options).unwrap();
    assert!(!load().from_cache(), "nothing cached yet: compiled");
    assert!(load().from_cache(), "an artifact of this user's is loaded");
    let artifacts: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.path()).collect();
    for artifact in &artifacts {
        std::fs::set_permissions(artifact, std::fs::Permissions::from_mode(0o666)).unwrap();
    }
    assert!(!load().from_cache(), "an artifact others may write is not loaded");
    assert!(artifacts.iter().any(|a| std::fs::metadata(a).unwrap().permissions().mode() & 0o022 == 0), "and is compiled over");
    assert!(load().from_cache(), "the artifact written in its place is loaded");
    // Damage where wasmtime reads counts and offsets (its header, near the start) and in
    // the code: each is caught by the artifact's digest and compiled over.
    let artifact = std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.path()).find(|p| p.extension().is_some_and(|e| e == "cwasm")).unwrap();
    let good = std::fs::read(&artifact).unwrap();
    for at in [64, good.len() / 2, good.len() - 1] {
        let mut damaged = good.clone();
        damaged[at] ^= 0x5a;
        std::fs::write(&artifact, &damaged).unwrap();
        assert!(!load().from_cache(), "an artifact damaged at byte {at} is compiled over");
        assert_eq!(std::fs::read(&artifact).unwrap(), good, "and replaced by what it was");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn component_imports_nothing() {
    let engine = wasmtime::Engine::default();
    let component = wasmtime::component::Component::new(&engine, COMPONENT.bytes()).unwrap();
    let ty = component.component_type();
    let mut exports: Vec<_> = ty.exports(&engine).map(|(name, _)| name.to_string()).collect();
    exports.sort();
    assert_eq!(
        exports,
        [
            "workmem:memory/board@0.2.0",
            "workmem:memory/call@0.2.0",
            "workmem:memory/context@0.2.0",
            "workmem:memory/document@0.2.0",
            "workmem:memory/history@0.2.0",
            "workmem:memory/memory@0.2.0"
        ]
    );
    // What a host sees: nothing to provide (no function, no instance, no WASI). An empty
    // linker instantiates it.
    let imports: Vec<_> = ty.imports(&engine).map(|(name, _)| name.to_string()).collect();
    assert!(imports.is_empty(), "the engine component imports {imports:?}");
    let mut store = wasmtime::Store::new(&engine, ());
    wasmtime::component::Linker::new(&engine).instantiate(&mut store, &component).expect("instantiates with an empty linker");
}

fn learning(reason: &str, text: &str) -> Update {
    Update {
        progress: None,
        learnings: LearningOps { add: vec![LearningAdd { reason: reason.into(), text: text.into() }], archive: vec![] },
        verbatim: VerbatimOps { add: vec![], archive: vec![] },
    }
}

const NOTHING: Wants = Wants { overview: false, state: false };

#[test]
fn merge_returns_err_for_an_invalid_update_and_the_memory_lives_on() {
    let runtime = common::runtime();
    let mut memory = runtime.new_memory().unwrap();
    match memory.merge(&[learning("", "text")], "t", NOTHING) {
        Ok(Err(msg)) => assert!(msg.contains("non-empty reason"), "{msg}"),
        other => panic!("expected the guest's err, got {other:?}"),
    }
    match memory.merge(&[learning("why", "fact"), learning("why", "two\nlines")], "t", NOTHING) {
        Ok(Err(msg)) => assert!(msg.contains("one non-empty line"), "{msg}"),
        other => panic!("expected the guest's err, got {other:?}"),
    }
    // An `err` is a value, not a trap: the same memory keeps working. Updates apply in order.
    let ok = memory.merge(&[learning("why", "fact"), learning("because", "another")], "t", NOTHING).unwrap().unwrap();
    assert_eq!(ok.added, ["KL-1", "KL-2"]);
    assert_eq!((ok.seq, ok.overview, ok.state), (1, None, None), "only what was asked for comes back");
}

#[test]
fn a_memory_round_trips_through_its_serialized_form_byte_for_byte() {
    let runtime = common::runtime();
    let mut memory = runtime.new_memory().unwrap();
    let text = "KEY_LEARNINGS:\n  ADD:\n    - because a: b\n";
    let applied = memory.apply(text, "2026-01-01T00:00:00Z", Wants { overview: true, state: true }).unwrap().unwrap();
    let state = applied.state.unwrap();
    assert_eq!(memory.save().unwrap(), state);
    assert_eq!(applied.overview.unwrap(), memory.render().unwrap());
    let log: serde_json::Value = serde_json::from_str(&applied.log_entry).unwrap();
    assert_eq!((log["seq"].as_u64(), log["input"].as_str()), (Some(1), Some(text)));
    let mut again = runtime.load_memory(&state).unwrap().unwrap();
    assert_eq!(again.save().unwrap(), state);
    assert_eq!(again.snapshot().unwrap().updates, 1);
    match runtime.load_memory("{\"format\": \"something-else/9\"}").unwrap() {
        Err(why) => assert!(why.contains("format") || why.contains("missing field"), "{why}"),
        Ok(_) => panic!("a foreign document loaded as a memory"),
    }
}

fn small_memory_runtime() -> Runtime {
    Runtime::new(&Options { max_memory_bytes: 2 << 20, ..common::options() }).unwrap()
}

/// A DSL text larger than the instance's memory limit: the guest's allocation fails,
/// which aborts inside the sandbox, which is a trap.
fn oversized_update() -> String {
    let mut text = String::from("KEY_LEARNINGS:\n  ADD:\n");
    while text.len() < (3 << 20) {
        text.push_str("    - because it is big: a learning that takes up space in the guest\n");
    }
    text
}

#[test]
fn a_trap_is_an_error_and_the_next_call_gets_a_fresh_instance() {
    let runtime = small_memory_runtime();
    let mut engine = runtime.instance().unwrap();
    match engine.parse(&oversized_update()) {
        Err(e @ Error::MemoryLimit { limit: 2097152, .. }) => {
            assert!(e.to_string().contains("needed more than its 2097152 bytes of memory") && e.to_string().contains("$WORKMEM_MAX_MEMORY_BYTES"), "{e}")
        }
        other => panic!("expected a trap, got {:?}", other.map(|o| o.diagnostics.len())),
    }
    let outcome = engine.parse("CURRENT_PROGRESS:\n  In Progress:\n    - after the trap\n").unwrap();
    assert!(outcome.update.is_some());
    // A memory whose instance trapped is gone, and says so.
    let mut memory = runtime.new_memory().unwrap();
    assert!(matches!(memory.apply(&oversized_update(), "t", NOTHING), Err(Error::MemoryLimit { .. })));
    assert!(matches!(memory.render(), Err(Error::Lost)));
}

/// What a call allocates is there for the next: a long-lived memory stays within a small
/// budget through calls of every size, though together they allocate many times it. The
/// guest's allocator keeps freed blocks by size (guest/src/heap.rs), so this is what would
/// fail if a size's blocks were not reused, or large ones not given back.
#[test]
fn a_memory_reuses_what_its_calls_freed() {
    let runtime = small_memory_runtime();
    let mut memory = runtime.new_memory().unwrap();
    let mut allocated = 0;
    for i in 0..800 {
        let mut text = String::from("KEY_LEARNINGS:\n  ADD:\n");
        for k in 0..(i * 7) % 150 {
            let line = format!("    - because call {i} needs it: learning {k} {}\n", "x".repeat((i * 13 + k * 31) % 400));
            text.push_str(&line);
        }
        allocated += text.len();
        let outcome = memory.validate(&text).unwrap();
        assert!(outcome.diagnostics.iter().all(|d| d.severity != workmem_runtime::Severity::Error), "call {i}");
    }
    // The texts alone, copied in once each, are four times the budget.
    assert!(allocated > 4 * (2 << 20), "{allocated}");
}

/// A call made inside `cancellable` stops soon after its flag is set (a server sets it when
/// its client goes away), as `Error::Cancelled`; outside it, and on a new call, nothing is
/// stopped.
#[test]
fn an_unwanted_call_stops() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let runtime = common::runtime();
    let mut engine = runtime.instance().unwrap();
    let slow = "KEY_LEARNINGS: x\n".repeat(4 << 20 >> 4);
    let started = std::time::Instant::now();
    engine.parse(&slow).unwrap();
    let whole = started.elapsed();
    let unwanted = Arc::new(AtomicBool::new(false));
    let setter = {
        let unwanted = unwanted.clone();
        std::thread::spawn(move || {
            std::thread::sleep(whole / 10);
            unwanted.store(true, Ordering::Relaxed);
        })
    };
    let started = std::time::Instant::now();
    let stopped = workmem_runtime::cancellable(&unwanted, || engine.parse(&slow));
    setter.join().unwrap();
    assert!(matches!(stopped, Err(Error::Cancelled)), "{:?}", stopped.map(|o| o.diagnostics.len()));
    assert!(started.elapsed() < whole / 2 + std::time::Duration::from_millis(50), "stopped after {:?} of a {whole:?} call", started.elapsed());
    let mut engine = runtime.instance().unwrap();
    assert!(engine.parse("CURRENT_PROGRESS:\n  In Progress:\n    - next\n").unwrap().update.is_some(), "the flag ends with its scope");
}

/// A call that runs past its CPU deadline stops with `Error::Deadline` (checked on the epoch's
/// ticks, which run only while guest code does), and the next call runs on a fresh instance.
#[test]
fn a_call_past_its_deadline_stops() {
    let slow = "KEY_LEARNINGS: x\n".repeat(4 << 20 >> 4);
    let mut engine = common::runtime().instance().unwrap();
    let started = std::time::Instant::now();
    engine.parse(&slow).unwrap();
    let whole = started.elapsed();
    let runtime = Runtime::new(&Options { call_deadline: whole / 4, ..common::options() }).unwrap();
    let mut engine = runtime.instance().unwrap();
    let stopped = engine.parse(&slow);
    assert!(matches!(stopped, Err(Error::Deadline { .. })), "{:?} for a call of {whole:?}", stopped.map(|o| o.diagnostics.len()));
    assert!(engine.parse("CURRENT_PROGRESS:\n  In Progress:\n    - next\n").unwrap().update.is_some(), "the next call runs");
}

#[test]
fn a_trap_during_apply_leaves_the_session_files_untouched() {
    let runtime = small_memory_runtime();
    let tmp = tempdir("trap");
    let session = Sessions::new(&tmp, &tmp).create(Some("s1"), "# template\n").unwrap();
    apply(&runtime, &session, "KEY_LEARNINGS:\n  ADD:\n    - because first: a fact\n").unwrap();
    let before = snapshot(session.dir());

    let err = apply(&runtime, &session, &oversized_update()).unwrap_err();
    assert!(matches!(err, workmem_commit::Error::Engine(Error::MemoryLimit { .. })), "expected a trap, got {err:?}");
    assert_eq!(snapshot(session.dir()), before, "a trapped update changed the session");

    // The session and the runtime both carry on.
    let applied = apply(&runtime, &session, "KEY_LEARNINGS:\n  ADD:\n    - because second: another fact\n").unwrap();
    assert_eq!((applied.seq, applied.added.as_slice()), (2, ["KL-2".to_string()].as_slice()));
}

#[test]
fn invalid_dsl_is_reported_and_leaves_the_session_files_untouched() {
    let runtime = common::runtime();
    let tmp = tempdir("invalid");
    let session = Sessions::new(&tmp, &tmp).create(Some("s1"), "# template\n").unwrap();
    let before = snapshot(session.dir());
    match apply(&runtime, &session, "KEY_LEARNINGS:\n  ADD:\n    - no reason here\n") {
        Err(workmem_commit::Error::InvalidDsl(ds)) => assert_eq!((ds[0].line, ds[0].column), (3, 7)),
        other => panic!("expected diagnostics, got {other:?}"),
    }
    assert_eq!(snapshot(session.dir()), before);
}

#[test]
fn update_runs_re_prompt_then_apply_as_steps_a_host_drives() {
    let runtime = common::runtime();
    let mut memory = runtime.new_memory().unwrap();
    let run = memory.update_run("Fix the flaky test", 1).unwrap();
    let first = memory.request(&run).unwrap();
    assert_eq!(first.iter().map(|m| m.role.as_str()).collect::<Vec<_>>(), ["system", "user"]);
    assert!(first[1].content.contains("Fix the flaky test"));
    match memory.answer(&run, "KEY_LEARNINGS:\n  ADD:\n    - no reason\n", "t", NOTHING).unwrap() {
        UpdateStep::Retry(ds) => assert_eq!((ds[0].line, ds[0].column), (3, 7)),
        other => panic!("expected a retry, got {other:?}"),
    }
    let second = memory.request(&run).unwrap();
    assert_eq!(second.len(), 4, "the bad answer and the correction were added");
    assert!(second[3].content.contains("line 3, column 7"));
    match memory.answer(&run, "KEY_LEARNINGS:\n  ADD:\n    - because found: the fix\n", "t", NOTHING).unwrap() {
        UpdateStep::Applied(a) => assert_eq!(a.added, ["KL-1"]),
        other => panic!("expected the update applied, got {other:?}"),
    }
    assert!(memory.render().unwrap().contains("KL-1"));
    // A stubborn model: one re-prompt allowed, two bad answers, nothing applied.
    let run = memory.update_run("again", 1).unwrap();
    assert!(matches!(memory.answer(&run, "nonsense", "t", NOTHING).unwrap(), UpdateStep::Retry(_)));
    assert!(matches!(memory.answer(&run, "nonsense", "t", NOTHING).unwrap(), UpdateStep::GaveUp(ds) if !ds.is_empty()));
    assert_eq!(memory.snapshot().unwrap().updates, 1);
}

fn tempdir(name: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("component-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Every file under `dir` with its bytes, to compare before and after.
fn snapshot(dir: &std::path::Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((p.clone(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn the_agent_component_imports_exactly_the_granted_capabilities() {
    let engine = wasmtime::Engine::default();
    let component = wasmtime::component::Component::new(&engine, workmem_runtime::AGENT_COMPONENT.bytes()).unwrap();
    let mut instances: Vec<_> = component.component_type().imports(&engine).map(|(name, _)| name.to_string()).collect();
    instances.sort();
    assert_eq!(instances, ["workmem:memory/clock@0.2.0", "workmem:memory/llm@0.2.0", "workmem:memory/session-store@0.2.0"]);
}

/// Spec 002's board through the component: the same rules and the same serialized form as
/// the engine natively, refusals as typed errors, views, and a board that loads back.
#[test]
fn the_board_runs_in_the_component_as_natively() {
    use workmem_guest::board as native;
    use workmem_runtime::board::*;
    const NOW: &str = "2026-11-23T10:00:00Z";
    let runtime = common::runtime();
    let mut board = runtime.create_board("auth", "Implement auth", "Add JWT auth", &["No breaking changes".into()], &[], NOW).unwrap().unwrap();
    let mut mirror = native::Board::new("auth", "Implement auth", "Add JWT auth", vec!["No breaking changes".into()], vec![], NOW).unwrap();
    let new_task = |title: &str, deps: &[&str]| NewTask {
        title: title.into(),
        description: String::new(),
        depends_on: deps.iter().map(|d| d.to_string()).collect(),
        needs_review: false,
    };
    let ops = [
        (
            "lead",
            Op::AddTask(new_task("schema", &[])),
            native::Op::AddTask { title: "schema".into(), description: String::new(), depends_on: vec![], needs_review: false },
        ),
        (
            "lead",
            Op::AddTask(new_task("service", &["T-1"])),
            native::Op::AddTask { title: "service".into(), description: String::new(), depends_on: vec!["T-1".into()], needs_review: false },
        ),
        (
            "dev",
            Op::SetStatus(StatusChange { task: "T-1".into(), status: TaskStatus::InProgress }),
            native::Op::SetStatus { task: "T-1".into(), status: native::TaskStatus::InProgress },
        ),
        (
            "dev",
            Op::SetStatus(StatusChange { task: "T-1".into(), status: TaskStatus::Failed }),
            native::Op::SetStatus { task: "T-1".into(), status: native::TaskStatus::Failed },
        ),
        (
            "human",
            Op::Nudge(NewNudge { target: NudgeTarget::Agent("dev".into()), message: "retry with HS256".into(), priority: Priority::High }),
            native::Op::Nudge { target: native::NudgeTarget::Agent("dev".into()), message: "retry with HS256".into(), priority: native::Priority::High },
        ),
    ];
    let mut log = Vec::new();
    for (revision, (actor, op, native_op)) in (1..).zip(&ops) {
        let applied = board.apply(actor, NOW, op).unwrap().unwrap();
        let event = mirror.apply(actor, NOW, native_op).unwrap();
        assert_eq!((applied.revision, applied.event.as_str()), (revision, event.to_json().as_str()), "the component logs what the engine logs");
        log.push(applied.event);
    }
    assert_eq!(board.save().unwrap(), serde_json::to_string(&mirror).unwrap(), "the component serializes the board as the engine does natively");

    let cycle = board.apply("lead", NOW, &Op::AddDependency(Dependency { task: "T-1".into(), on: "T-2".into() })).unwrap();
    assert_eq!(cycle, Err(BoardError::Cycle(vec!["T-1".into(), "T-2".into(), "T-1".into()])));
    let illegal = board.apply("dev", NOW, &Op::SetStatus(StatusChange { task: "T-1".into(), status: TaskStatus::Completed })).unwrap();
    assert_eq!(illegal, Err(BoardError::IllegalTransition(Transition { task: "T-1".into(), from: TaskStatus::Failed, to: TaskStatus::Completed })));
    assert_eq!(board.apply("dev", NOW, &Op::Approve("D-1".into())).unwrap(), Err(BoardError::UnknownDecision("D-1".into())));
    assert_eq!(board.apply("", NOW, &Op::Archive).unwrap(), Err(BoardError::Empty("actor".into())));
    assert_eq!(board.revision().unwrap(), 5, "refused ops applied nothing");

    let ids = |ts: Vec<Task>| ts.into_iter().map(|t| t.id).collect::<Vec<_>>();
    assert_eq!(ids(board.failed().unwrap()), vec!["T-1"]);
    assert_eq!(ids(board.blocked().unwrap()), vec!["T-2"]);
    assert!(board.ready().unwrap().is_empty());
    let stranded = board.stranded().unwrap();
    assert_eq!((stranded[0].task.id.as_str(), stranded[0].causes.clone()), ("T-2", vec!["T-1".to_string()]));

    let saved = board.save().unwrap();
    let mut loaded = runtime.load_board(&saved).unwrap().unwrap();
    assert_eq!((loaded.save().unwrap(), loaded.revision().unwrap(), loaded.status().unwrap()), (saved, 5, BoardStatus::Active));
    // The event log rebuilds it, and views come as the engine's JSON.
    let mut rebuilt = runtime.create_board("auth", "Implement auth", "Add JWT auth", &["No breaking changes".into()], &[], NOW).unwrap().unwrap();
    assert_eq!(rebuilt.replay(&log[1]).unwrap(), Err(ReplayError::OutOfOrder(1)));
    for event in &log {
        rebuilt.replay(event).unwrap().unwrap();
    }
    assert_eq!(rebuilt.save().unwrap(), board.save().unwrap());
    let context = board.view(&View::ContextForTask("T-2".into())).unwrap().unwrap();
    assert_eq!(context, serde_json::to_string(&mirror.context_for_task("T-2").unwrap()).unwrap());
    assert_eq!(board.view(&View::ContextForTask("T-9".into())).unwrap(), Err(BoardError::UnknownTask("T-9".into())));
    let refused = runtime.load_board("{\"format\": \"workmem-memory/1\"}").unwrap().err();
    assert!(refused.is_some_and(|why| why.starts_with("not a serialized board")));
    assert_eq!(runtime.create_board("b", "n", "", &[], &[], NOW).unwrap().err(), Some(BoardError::Empty("goal".into())));
}

/// The board conformance case (tests/data/board/): the ops every runtime applies, through
/// the component, with the events, state and views they must all produce, and the refusals
/// word for word.
#[test]
fn the_board_conformance_case() {
    use serde_json::Value;
    use workmem_runtime::board::View;
    let dir = common::root().join("tests/data/board");
    let runtime = common::runtime();
    let created: Value = serde_json::from_str(&common::read(&dir.join("board.json"))).unwrap();
    let strings = |v: &Value| v.as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_string()).collect::<Vec<_>>();
    let mut board = runtime
        .create_board(
            created["id"].as_str().unwrap(),
            created["name"].as_str().unwrap(),
            created["goal"].as_str().unwrap(),
            &strings(&created["constraints"]),
            &strings(&created["memory_core_refs"]),
            created["now"].as_str().unwrap(),
        )
        .unwrap()
        .unwrap();
    let (mut events, mut failures) = (String::new(), Vec::new());
    for (n, line) in common::read(&dir.join("ops.jsonl")).lines().enumerate() {
        let line: Value = serde_json::from_str(line).unwrap();
        let op = serde_json::to_string(&line["op"]).unwrap();
        let before = board.save().unwrap();
        match (board.apply_json(line["actor"].as_str().unwrap(), line["at"].as_str().unwrap(), &op).unwrap(), line["refused"].as_str()) {
            (Ok(applied), None) => events.push_str(&format!("{}\n", applied.event)),
            (Err(e), Some(expected)) => {
                assert_eq!(board.describe(&e).unwrap(), expected, "ops.jsonl line {}", n + 1);
                assert_eq!(Some(board.rule(&e).unwrap().as_str()), line["rule"].as_str(), "ops.jsonl line {}", n + 1);
                assert_eq!(board.save().unwrap(), before, "a refused op changed the board");
            }
            (outcome, expected) => panic!("ops.jsonl line {}: {outcome:?}, expected refusal {expected:?}", n + 1),
        }
    }
    common::golden(&dir.join("events.jsonl"), &events, &mut failures);
    common::golden(&dir.join("state.json"), &board.save().unwrap(), &mut failures);
    let mut views = serde_json::Map::new();
    for (name, arg) in [
        ("ready", ""),
        ("blocked", ""),
        ("in_progress", ""),
        ("stale", "2026-11-23T12:00:00Z"),
        ("context_for_task", "T-2"),
        ("contributions", ""),
        ("candidates", ""),
    ] {
        let view = View::named(name, Some(arg.into())).unwrap();
        let key = if arg.is_empty() { name.to_string() } else { format!("{name}:{arg}") };
        views.insert(key, serde_json::from_str(&board.view(&view).unwrap().unwrap()).unwrap());
    }
    views.insert("brief:T-2".into(), board.brief("T-2").unwrap().unwrap().into());
    common::golden(&dir.join("views.json"), &serde_json::to_string_pretty(&views).unwrap(), &mut failures);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Spec 004's document rules and sections through the component, as the engine has them
/// natively: each refusal's sentence, and a section replaced.
#[test]
fn the_document_rules_run_in_the_component_as_natively() {
    use workmem_guest::document as native;
    let mut engine = common::runtime().instance().unwrap();
    for bytes in [&b"# Facts\n- ok\n"[..], b" \n", b"a\xff", "bell \u{7}".as_bytes(), "x\u{FFFF}".as_bytes(), &[b'a'; 100]] {
        let expected = native::validate(bytes, 64).map(drop).map_err(|e| e.to_string());
        let got = engine.validate_document(bytes, 64).unwrap().map_err(|e| engine.describe_document_error(&e).unwrap());
        assert_eq!(got, expected, "{bytes:?}");
    }
    let text = engine.document_template().unwrap();
    assert_eq!(text, native::template());
    let replaced = engine.replace_document_section(&text, "progress", "- shipped").unwrap();
    assert_eq!(engine.document_section(&replaced, "Progress").unwrap().as_deref(), Some("- shipped\n\n"));
    assert_eq!(engine.document_sections(&replaced).unwrap().len(), 8);
}

/// The document conformance case (tests/data/document/): what every runtime must say of
/// each text, and the sections and replacements it must produce.
#[test]
fn the_document_conformance_case() {
    use serde_json::{Value, json};
    let dir = common::root().join("tests/data/document");
    let cases: Value = serde_json::from_str(&common::read(&dir.join("cases.json"))).unwrap();
    let mut engine = common::runtime().instance().unwrap();
    let limit = cases["limit"].as_u64().unwrap();
    let validate: Vec<Value> = cases["validate"]
        .as_array()
        .unwrap()
        .iter()
        .map(|case| {
            let bytes = match case["text"].as_str() {
                Some(text) => text.as_bytes().to_vec(),
                None => (0..case["hex"].as_str().unwrap().len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&case["hex"].as_str().unwrap()[i..i + 2], 16).unwrap())
                    .collect(),
            };
            match engine.validate_document(&bytes, limit).unwrap() {
                Ok(()) => Value::Null,
                Err(e) => json!([engine.document_error_rule(&e).unwrap(), engine.describe_document_error(&e).unwrap()]),
            }
        })
        .collect();
    let documents: Vec<&str> = cases["documents"].as_array().unwrap().iter().map(|d| d.as_str().unwrap()).collect();
    let sections: Vec<Value> = documents.iter().map(|d| engine.document_sections(d).unwrap().into_iter().map(|s| json!([s.name, s.line])).collect()).collect();
    let replace: Vec<Value> = cases["replace"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let text = documents[r["document"].as_u64().unwrap() as usize];
            engine.replace_document_section(text, r["name"].as_str().unwrap(), r["body"].as_str().unwrap()).unwrap().into()
        })
        .collect();
    let expected = json!({"validate": validate, "sections": sections, "replace": replace});
    let mut failures = Vec::new();
    common::golden(&dir.join("expected.json"), &serde_json::to_string_pretty(&expected).unwrap(), &mut failures);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
