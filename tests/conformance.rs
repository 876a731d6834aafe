//! The shared corpora, run through the engine component in wasmtime: every `.dsl` in
//! tests/corpus against its `.json`, and every session in tests/scenarios step by step.

mod common;

use serde_json::json;
#[path = "../host/cli/src/json.rs"]
mod wjson;

#[test]
fn parse_corpus_through_the_component() {
    let runtime = common::runtime();
    let mut engine = runtime.instance().unwrap();
    let cases = common::corpus();
    assert!(cases.len() >= 40, "the corpus has only {} cases", cases.len());
    let mut failures = Vec::new();
    for (_, path) in &cases {
        let outcome = engine.parse(&common::read(path)).expect("parse never traps");
        let actual = serde_json::to_string_pretty(&wjson::parse_outcome(&outcome)).unwrap() + "\n";
        common::golden(&path.with_extension("json"), &actual, &mut failures);
    }
    assert!(failures.is_empty(), "{} of {} cases differ:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

#[test]
fn merge_scenarios_through_the_component() {
    let runtime = common::runtime();
    let mut engine = runtime.instance().unwrap();
    let scenarios = common::root().join("tests/scenarios");
    let mut failures = Vec::new();
    let mut steps_run = 0;
    for dir in std::fs::read_dir(&scenarios).unwrap().flatten().map(|e| e.path()).filter(|p| p.is_dir()) {
        let mut state = engine.empty_state().unwrap();
        for (i, (name, path)) in common::files(&dir, "dsl").into_iter().enumerate() {
            let now = format!("2026-01-01T00:00:{:02}Z", i + 1);
            let before = state.clone();
            let outcome = engine.apply(&state, &common::read(&path), &now).expect("apply never traps");
            let m = &outcome.merged;
            let result = if outcome.ok {
                state = m.state.clone();
                json!({"ok": true, "added": m.added, "archived": m.archived, "ignored": m.ignored, "diff": m.diff,
                       "diagnostics": wjson::diagnostics(&outcome.diagnostics)})
            } else {
                assert_eq!(m.state, before, "{name}: a rejected update came back with a changed state");
                json!({"ok": false, "added": [], "archived": [], "ignored": [], "diff": null,
                       "diagnostics": wjson::diagnostics(&outcome.diagnostics)})
            };
            let expected = dir.join(format!("{name}.expected.json"));
            common::golden(&expected, &(serde_json::to_string_pretty(&result).unwrap() + "\n"), &mut failures);
            common::golden(&dir.join(format!("{name}.overview.md")), &engine.render(&state).unwrap(), &mut failures);
            steps_run += 1;
        }
    }
    assert!(steps_run >= 6, "only {steps_run} scenario steps ran");
    assert!(failures.is_empty(), "{} scenario files differ:\n{}", failures.len(), failures.join("\n"));
}
