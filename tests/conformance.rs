//! The shared corpora, run through the engine component in wasmtime: every `.dsl` in
//! tests/corpus against its `.json`, and every session in tests/scenarios step by step,
//! ending with the serialized memory every runtime must write byte for byte.

use crate::common;

use serde_json::json;
use workmem_commit::json as wjson;
use workmem_runtime::Wants;

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
    let scenarios = common::root().join("tests/scenarios");
    let mut failures = Vec::new();
    let mut steps_run = 0;
    for dir in std::fs::read_dir(&scenarios).unwrap().flatten().map(|e| e.path()).filter(|p| p.is_dir()) {
        let mut memory = runtime.new_memory().unwrap();
        for (i, (name, path)) in common::files(&dir, "dsl").into_iter().enumerate() {
            let now = format!("2026-01-01T00:00:{:02}Z", i + 1);
            let before = memory.save().unwrap();
            let result = match memory.apply(&common::read(&path), &now, Wants { overview: false, state: false }).expect("apply never traps") {
                Ok(a) => json!({"ok": true, "added": a.added, "archived": a.archived, "ignored": a.ignored, "diff": a.diff,
                                "diagnostics": wjson::diagnostics(&a.warnings)}),
                Err(ds) => {
                    assert_eq!(memory.save().unwrap(), before, "{name}: a rejected update changed the memory");
                    json!({"ok": false, "added": [], "archived": [], "ignored": [], "diff": null, "diagnostics": wjson::diagnostics(&ds)})
                }
            };
            let expected = dir.join(format!("{name}.expected.json"));
            common::golden(&expected, &(serde_json::to_string_pretty(&result).unwrap() + "\n"), &mut failures);
            common::golden(&dir.join(format!("{name}.overview.md")), &memory.render().unwrap(), &mut failures);
            steps_run += 1;
        }
        // The serialized memory: every runtime writes these bytes, and loads them back.
        let saved = memory.save().unwrap();
        common::golden(&dir.join("final.state.json"), &saved, &mut failures);
        assert_eq!(runtime.load_memory(&saved).unwrap().unwrap().save().unwrap(), saved, "{}: load then save changed it", dir.display());
    }
    assert!(steps_run >= 6, "only {steps_run} scenario steps ran");
    assert!(failures.is_empty(), "{} scenario files differ:\n{}", failures.len(), failures.join("\n"));
}

/// The one rule of IDs (tests/data/ids.json), as the engine applies it to a board's ID and the
/// host stores to the IDs they take: the same list refused and accepted by both.
#[test]
fn the_one_rule_of_ids() {
    let ids: serde_json::Value = serde_json::from_str(&common::read(&common::root().join("tests/data/ids.json"))).unwrap();
    let runtime = common::runtime();
    for id in ids["refused"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()) {
        let refused = runtime.create_board(id, "n", "g", &[], &[], "2026-11-25T00:00:00Z").unwrap().err();
        assert!(matches!(&refused, Some(workmem_runtime::board::BoardError::InvalidId(_))), "the engine took {id:?}: {refused:?}");
        assert!(workmem_store::ids::check("vault", id).is_err(), "the host took {id:?}");
    }
    for id in ids["accepted"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()) {
        assert!(runtime.create_board(id, "n", "g", &[], &[], "2026-11-25T00:00:00Z").unwrap().is_ok(), "the engine refused {id:?}");
        assert!(workmem_store::ids::check("vault", id).is_ok(), "the host refused {id:?}");
    }
}

/// The counts docs/testing.md gives of the shared data are the data's: a case added without
/// the page saying so fails here, naming the line to change.
#[test]
fn the_counts_in_docs_testing_are_the_datas() {
    let root = common::root();
    let page = std::fs::read_to_string(root.join("docs/testing.md")).unwrap();
    let said = |before: &str, after: &str| -> usize {
        let at = page.find(before).unwrap_or_else(|| panic!("docs/testing.md no longer says {before:?}"));
        let rest = &page[at + before.len()..];
        let number: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
        assert!(rest[number.len()..].starts_with(after), "docs/testing.md: {before:?} is not followed by a number and {after:?}");
        number.parse().unwrap()
    };
    let dsl = std::fs::read_dir(root.join("tests/corpus")).unwrap().filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "dsl")).count();
    assert_eq!(said("- `tests/corpus/`: ", " `.dsl` inputs"), dsl, "docs/testing.md: the corpus's .dsl inputs");
    let tokens: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(root.join("tests/data/tokens.json")).unwrap()).unwrap();
    let cases = tokens["cases"].as_array().map_or(0, Vec::len);
    assert_eq!(said("the Rust host's counts of ", " messages"), cases, "docs/testing.md: tests/data/tokens.json's messages");
}

/// `common::each` runs every case and names each that failed, not only the first.
#[test]
fn a_suite_of_cases_reports_every_failure() {
    let ran = std::cell::Cell::new(0);
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        common::each(
            [1, 2, 3, 4],
            |n| format!("case {n}"),
            |n| {
                ran.set(ran.get() + 1);
                assert!(n % 2 == 1, "{n} is even");
            },
        )
    }));
    let message = outcome.unwrap_err().downcast::<String>().map(|m| *m).unwrap_or_default();
    assert_eq!(ran.get(), 4, "every case ran");
    assert!(message.contains("2 of 4 cases failed") && message.ends_with("case 2, case 4"), "{message}");
}
