//! The engine component as wasmtime sees it: its imports, its errors, its traps, and the
//! compile cache. An `Err` from the guest and a trap are asserted separately.

mod common;

use workmem_runtime::Error;
use workmem_runtime::{COMPONENT, LearningAdd, LearningOps, Options, Progress, Runtime, Update, VerbatimOps};
use workmem_store::Sessions;

#[test]
fn component_imports_nothing() {
    // Read the binary itself. WIT makes world-level types imports, so the import section
    // names the world's types, each bound `(type (eq T))` to a type the component defines
    // itself: a name, not a requirement. Anything else (a function, an instance, WASI) fails.
    let mut type_names = Vec::new();
    let mut exports = Vec::new();
    for payload in wasmparser::Parser::new(0).parse_all(COMPONENT) {
        match payload.expect("the component is valid wasm") {
            wasmparser::Payload::ComponentImportSection(s) => {
                for import in s {
                    let import = import.unwrap();
                    match import.ty {
                        wasmparser::ComponentTypeRef::Type(wasmparser::TypeBounds::Eq(_)) => type_names.push(import.name.name.to_string()),
                        other => panic!("the engine component imports {:?} as {other:?}", import.name.name),
                    }
                }
            }
            wasmparser::Payload::ComponentExportSection(s) => exports.extend(s.into_iter().map(|e| e.unwrap().name.name.to_string())),
            _ => {}
        }
    }
    assert!(type_names.iter().all(|n| !n.contains(':')), "an interface slipped in: {type_names:?}");
    for name in ["parse", "validate", "merge", "apply", "render", "update-prompt", "overview-template", "empty-state"] {
        assert!(exports.iter().any(|e| e == name), "missing export {name}; exports are {exports:?}");
    }
    // What a host sees: nothing to provide. An empty linker instantiates it.
    let engine = wasmtime::Engine::default();
    let component = wasmtime::component::Component::new(&engine, COMPONENT).unwrap();
    let needed: Vec<_> = component
        .component_type()
        .imports(&engine)
        .filter(|(_, item)| !matches!(item.ty, wasmtime::component::types::ComponentItem::Type(_)))
        .map(|(name, _)| name.to_string())
        .collect();
    assert!(needed.is_empty(), "the host would have to provide {needed:?}");
    let mut store = wasmtime::Store::new(&engine, ());
    wasmtime::component::Linker::new(&engine).instantiate(&mut store, &component).expect("instantiates with an empty linker");
}

fn learning(reason: &str, text: &str) -> Update {
    Update {
        progress: Progress { completed: vec![], in_progress: vec![], remaining: vec![] },
        learnings: LearningOps { add: vec![LearningAdd { reason: reason.into(), text: text.into() }], archive: vec![] },
        verbatim: VerbatimOps { add: vec![], archive: vec![] },
    }
}

#[test]
fn merge_returns_err_for_an_invalid_update_and_the_instance_lives_on() {
    let runtime = common::runtime();
    let mut engine = runtime.instance().unwrap();
    let state = engine.empty_state().unwrap();
    match engine.merge(&state, &[learning("", "text")], "t") {
        Ok(Err(msg)) => assert!(msg.contains("non-empty reason"), "{msg}"),
        other => panic!("expected the guest's err, got {other:?}"),
    }
    match engine.merge(&state, &[learning("why", "fact"), learning("why", "two\nlines")], "t") {
        Ok(Err(msg)) => assert!(msg.contains("one non-empty line"), "{msg}"),
        other => panic!("expected the guest's err, got {other:?}"),
    }
    // An `err` is a value, not a trap: the same instance keeps working. Updates apply in order.
    let ok = engine.merge(&state, &[learning("why", "fact"), learning("because", "another")], "t").unwrap().unwrap();
    assert_eq!(ok.added, ["KL-1", "KL-2"]);
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
        Err(Error::Trap(source)) => assert!(!source.to_string().is_empty()),
        other => panic!("expected a trap, got {:?}", other.map(|o| o.diagnostics.len())),
    }
    let outcome = engine.parse("CURRENT_PROGRESS:\n  In Progress:\n    - after the trap\n").unwrap();
    assert!(outcome.ok);
}

#[test]
fn a_trap_during_apply_leaves_the_session_files_untouched() {
    let runtime = small_memory_runtime();
    let mut engine = runtime.instance().unwrap();
    let tmp = tempdir("trap");
    let sessions = Sessions::new(&tmp, &tmp);
    let session = sessions.create(&mut engine, Some("s1")).unwrap();
    session.apply(&mut engine, "KEY_LEARNINGS:\n  ADD:\n    - because first: a fact\n").unwrap();
    let before = snapshot(session.dir());

    let err = session.apply(&mut engine, &oversized_update()).unwrap_err();
    assert!(matches!(err, workmem_store::Error::Engine(Error::Trap(_))), "expected a trap, got {err:?}");
    assert_eq!(snapshot(session.dir()), before, "a trapped update changed the session");

    // The session and the engine both carry on.
    session.apply(&mut engine, "KEY_LEARNINGS:\n  ADD:\n    - because second: another fact\n").unwrap();
    assert_eq!(session.state().unwrap().learnings.len(), 2);
}

#[test]
fn invalid_dsl_is_reported_and_leaves_the_session_files_untouched() {
    let runtime = common::runtime();
    let mut engine = runtime.instance().unwrap();
    let tmp = tempdir("invalid");
    let session = Sessions::new(&tmp, &tmp).create(&mut engine, Some("s1")).unwrap();
    let before = snapshot(session.dir());
    match session.apply(&mut engine, "KEY_LEARNINGS:\n  ADD:\n    - no reason here\n") {
        Err(workmem_store::Error::InvalidDsl(ds)) => assert_eq!((ds[0].line, ds[0].column), (3, 7)),
        other => panic!("expected diagnostics, got {other:?}"),
    }
    assert_eq!(snapshot(session.dir()), before);
}

#[test]
fn a_call_past_its_cpu_deadline_ends_with_a_clear_error_and_the_engine_carries_on() {
    // Parsing a few megabytes takes far longer than a millisecond of guest time.
    let options = Options { call_deadline: std::time::Duration::from_millis(1), ..common::options() };
    let runtime = Runtime::new(&options).unwrap();
    let mut engine = runtime.instance().unwrap();
    let started = std::time::Instant::now();
    match engine.parse(&oversized_update().repeat(4)) {
        Err(e @ Error::Deadline { .. }) => assert!(e.to_string().contains("call_deadline"), "{e}"),
        other => panic!("expected the deadline, got {:?}", other.map(|o| o.diagnostics.len())),
    }
    assert!(started.elapsed() < std::time::Duration::from_secs(5), "the deadline stopped it late: {:?}", started.elapsed());
    assert!(engine.parse("CURRENT_PROGRESS:\n  In Progress:\n    - after the deadline\n").unwrap().ok);
}

#[test]
fn one_runtime_serves_many_threads() {
    let runtime = common::runtime();
    let handles: Vec<_> = (0..4)
        .map(|i| {
            let runtime = runtime.clone();
            std::thread::spawn(move || {
                let mut engine = runtime.instance().unwrap();
                let text = format!("KEY_LEARNINGS:\n  ADD:\n    - because thread {i}: a fact\n");
                let state = engine.empty_state().unwrap();
                engine.apply(&state, &text, "t").unwrap().merged.added
            })
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap(), ["KL-1"]);
    }
}

#[test]
fn the_compile_cache_is_used_and_a_corrupt_entry_is_replaced() {
    let dir = tempdir("cache");
    let options = Options { cache_dir: Some(dir.clone()), ..Options::default() };
    assert!(!Runtime::new(&options).unwrap().from_cache());
    assert!(Runtime::new(&options).unwrap().from_cache());

    let entries: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.path()).collect();
    assert_eq!(entries.len(), 1, "one artifact per component and engine: {entries:?}");
    std::fs::write(&entries[0], b"not a precompiled component").unwrap();
    let runtime = Runtime::new(&options).unwrap();
    assert!(!runtime.from_cache(), "a corrupt artifact must not be trusted");
    runtime.instance().unwrap().empty_state().unwrap();
    assert!(Runtime::new(&options).unwrap().from_cache(), "the corrupt artifact was replaced");
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
    let mut instances = Vec::new();
    for payload in wasmparser::Parser::new(0).parse_all(workmem_runtime::AGENT_COMPONENT) {
        if let wasmparser::Payload::ComponentImportSection(s) = payload.unwrap() {
            for import in s {
                let import = import.unwrap();
                match import.ty {
                    wasmparser::ComponentTypeRef::Type(wasmparser::TypeBounds::Eq(_)) => {}
                    wasmparser::ComponentTypeRef::Instance(_) => instances.push(import.name.name.to_string()),
                    other => panic!("the agent component imports {:?} as {other:?}", import.name.name),
                }
            }
        }
    }
    instances.sort();
    assert_eq!(instances, ["workmem:memory/clock@0.1.0", "workmem:memory/llm@0.1.0", "workmem:memory/store@0.1.0"]);
}
