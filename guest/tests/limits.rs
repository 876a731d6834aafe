//! What issue 9's adversarial run found in the engine: states that would hand out an ID
//! twice are refused at load, an update can never wrap an ID counter, and the work an input
//! causes grows with its size, not with its square.

use std::time::{Duration, Instant};
use workmem_guest::{self as engine, Memory, Wants};

fn saved(learnings: &[&str], next_learning: u64, updates: u64) -> String {
    let learnings: Vec<_> =
        learnings.iter().map(|id| serde_json::json!({"id": id, "text": "t", "reason": "r", "added_at": "", "archived_at": "", "archive_reason": ""})).collect();
    serde_json::json!({
        "format": engine::FORMAT,
        "updates": updates,
        "progress": {"completed": [], "in_progress": [], "remaining": []},
        "learnings": learnings,
        "verbatim": [],
        "next_learning": next_learning,
        "next_verbatim": 1,
    })
    .to_string()
}

#[test]
fn a_state_that_would_reuse_an_id_is_refused_at_load() {
    assert!(Memory::load(&saved(&["KL-1", "KL-2"], 3, 1)).is_ok());
    let refused = [
        (saved(&["KL-1", "KL-2"], 1, 1), "`next_learning` is 1, but KL-1 is already in use"),
        (saved(&["KL-1", "KL-2"], 2, 1), "`next_learning` is 2, but KL-2 is already in use"),
        (saved(&["KL-1", "KL-1"], 3, 1), "KL-1 appears twice"),
        (saved(&["KL-x"], 3, 1), "\"KL-x\" is not a KL-<number> ID"),
        (saved(&["VC-1"], 3, 1), "\"VC-1\" is not a KL-<number> ID"),
        (saved(&[], 0, 0), "`next_learning` is 0"),
        (saved(&[], 1, u64::from(u32::MAX)), "no further update could be numbered"),
    ];
    for (text, why) in refused {
        let err = Memory::load(&text).expect_err(why);
        assert!(err.contains(why), "{err:?} should say {why:?}");
    }
}

#[test]
fn ids_never_wrap() {
    let mut m = Memory::load(&saved(&["KL-4294967293"], u64::from(u32::MAX) - 1, 1)).unwrap();
    let one = "KEY_LEARNINGS:\n  ADD:\n    - because a: b\n";
    let applied = m.apply(one, "now", Wants::default()).unwrap();
    assert_eq!(applied.added, ["KL-4294967294"]);
    let err = m.apply(one, "now", Wants::default()).unwrap_err();
    assert!(err.iter().any(|d| d.message.contains("would pass KL-4294967294")), "{err:?}");
    // Refused means unchanged.
    assert_eq!(m.state().learnings.len(), 2);
}

/// Runs `f` on inputs of `n` and `8 * n` items: see `workmem_growth::time`.
fn grows_linearly(what: &str, n: usize, f: impl Fn(usize)) {
    workmem_growth::time(what, n, |n| n, f);
}

#[test]
fn archive_checks_are_linear_in_the_input() {
    grows_linearly("archive", 10_000, |n| {
        let ids: Vec<String> = (1..=n).map(|i| format!("KL-{i}")).collect();
        let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
        let mut m = Memory::load(&saved(&refs, n as u64 + 1, 1)).unwrap();
        let mut text = String::from("KEY_LEARNINGS:\n  ARCHIVE:\n");
        for i in (1..=n).rev() {
            text.push_str(&format!("    - KL-{i} because gone\n"));
        }
        let applied = m.apply(&text, "now", Wants::default()).map_err(|d| d[0].message.clone()).unwrap();
        assert_eq!(applied.archived.len(), n);
    });
}

#[test]
fn progress_diffs_are_linear_in_the_input() {
    // 6,000 items of about 9 bytes: near what a memory may show (64 KiB).
    grows_linearly("progress diff", 750, |n| {
        let mut m = Memory::new();
        let mut text = String::from("CURRENT_PROGRESS:\n  In Progress:\n");
        for i in 0..n {
            text.push_str(&format!("    - step {i}\n"));
        }
        m.apply(&text, "now", Wants::default()).unwrap();
        let changed = text.replace("step 1", "stage 1");
        m.apply(&changed, "now", Wants::default()).unwrap();
    });
}

#[test]
fn ten_megabytes_of_repeated_headers_give_a_bounded_answer() {
    let text = "KEY_LEARNINGS: x\n".repeat(10 << 20 >> 4);
    let start = Instant::now();
    let outcome = engine::parse(&text);
    assert!(!outcome.ok);
    assert_eq!(outcome.diagnostics.len(), 101);
    assert!(outcome.diagnostics[100].message.contains("more problem(s) from here on are not listed"));
    assert!(start.elapsed() < Duration::from_secs(20), "{:?}", start.elapsed());
}

#[test]
fn a_re_prompt_repeats_at_most_64_kib_of_a_junk_answer() {
    let mut memory = Memory::new();
    let mut run = engine::UpdateRun::new(&memory, "a task", 3);
    let junk = "é".repeat(25 << 20 >> 1); // 25 MB of two-byte characters
    assert!(matches!(run.answer(&mut memory, &junk, "now", Wants::default()), engine::Step::Retry(_)));
    let echoed = &run.request()[2];
    assert_eq!(echoed.role, "assistant");
    assert!(echoed.content.len() < (64 << 10) + 100, "{} bytes sent back", echoed.content.len());
    assert!(echoed.content.ends_with("bytes of this answer are left out]"), "{}", &echoed.content[echoed.content.len() - 80..]);
    let short = "not an update";
    let mut run = engine::UpdateRun::new(&memory, "a task", 3);
    run.answer(&mut memory, short, "now", Wants::default());
    assert_eq!(run.request()[2].content, short, "a short answer is repeated whole");
}

/// A state of `n` learnings of `bytes` bytes each (text and reason), archived or not.
fn state_of(n: usize, bytes: usize, archived: bool) -> Memory {
    let at = if archived { "2026-01-01T00:00:00Z" } else { "" };
    let learnings: Vec<_> = (1..=n)
        .map(|i| serde_json::json!({"id": format!("KL-{i}"), "text": "x".repeat(bytes - 1), "reason": "r", "added_at": "", "archived_at": at, "archive_reason": if archived { "r" } else { "" }}))
        .collect();
    let state = serde_json::json!({
        "format": engine::FORMAT, "updates": 1,
        "progress": {"completed": [], "in_progress": ["working"], "remaining": []},
        "learnings": learnings, "verbatim": [], "next_learning": n + 1, "next_verbatim": 1,
    });
    Memory::load(&state.to_string()).unwrap()
}

fn learnings(texts: &[String]) -> String {
    let mut dsl = String::from("KEY_LEARNINGS:\n  ADD:\n");
    for t in texts {
        dsl.push_str(&format!("    - because it matters: {t}\n"));
    }
    dsl
}

/// A line or snippet past its bound is an error where it stands, in `parse`, `validate`,
/// `apply` and `merge` alike, and changes nothing (one 8.6 MB learning made the next
/// request 1.4 million tokens).
#[test]
fn a_line_past_its_bound_is_refused_where_it_stands() {
    let long = "y".repeat(2049);
    let inputs = [
        (learnings(std::slice::from_ref(&long)), (3, 7), "a key learning is 2049 bytes"),
        (format!("CURRENT_PROGRESS:\n  In Progress:\n    - start\n      {}\n", "z".repeat(2048)), (4, 7), "a progress item is 2054 bytes"),
        (format!("VERBATIM_CONTEXT:\n  ADD:\n    - because exact: the log =>\n{}\n", "      line\n".repeat(4000)), (3, 5), "a verbatim snippet is"),
        ("KEY_LEARNINGS:\n  ARCHIVE:\n    - KL-1 because ".to_string() + &long + "\n", (3, 7), "a reason is"),
    ];
    for (dsl, (line, column), says) in inputs {
        for outcome in [engine::parse(&dsl), engine::validate(&dsl, &engine::empty_state())] {
            assert!(!outcome.ok, "{says}");
            let d = outcome.diagnostics.iter().find(|d| d.severity == "error").unwrap();
            assert!(d.message.contains(says), "{d:?} should say {says:?}");
            assert_eq!((d.line, d.column), (line, column), "{says}");
        }
        let mut m = state_of(1, 10, false);
        let before = m.save();
        assert!(m.apply(&dsl, "now", Wants::default()).is_err(), "{says}");
        assert_eq!(m.save(), before, "a refused update changes nothing");
    }
    let by_hand = engine::Update {
        progress: engine::Progress::default(),
        learnings: engine::LearningOps { add: vec![engine::LearningAdd { reason: "r".into(), text: long }], archive: vec![] },
        verbatim: engine::VerbatimOps { add: vec![], archive: vec![] },
    };
    let err = engine::merge(engine::empty_state(), vec![by_hand], "now").unwrap_err();
    assert!(err.contains("a key learning is 2049 bytes"), "{err}");
}

/// What the memory shows (progress and entries not archived) stays within 64 KiB: the update
/// that would pass it is refused by `validate` and `apply` alike, and one that archives as
/// much as it adds is taken.
#[test]
fn the_memory_shows_at_most_64_kib() {
    let mut m = Memory::new();
    let batch = |k: usize| (0..8).map(|i| format!("{k}-{i} {}", "w".repeat(1990))).collect::<Vec<_>>();
    let mut k = 0;
    let refused = loop {
        let dsl = learnings(&batch(k));
        let valid = engine::validate(&dsl, m.state()).ok;
        match m.apply(&dsl, "now", Wants::default()) {
            Ok(_) => assert!(valid, "validate refused what apply took"),
            Err(d) => {
                assert!(!valid, "validate took what apply refused");
                break d;
            }
        }
        k += 1;
        assert!(k < 10, "8 updates of 16 KB were all taken");
    };
    assert_eq!(k, 4, "four batches of 16 KB fit, the fifth would pass 64 KiB");
    assert!(refused[0].message.contains("more than the 65536 it may"), "{refused:?}");
    let shown = m.render().len();
    let mut swap = String::from("KEY_LEARNINGS:\n  ARCHIVE:\n");
    for i in 1..=8 {
        swap.push_str(&format!("    - KL-{i} because done\n"));
    }
    swap.push_str(&learnings(&batch(9))["KEY_LEARNINGS:\n".len()..]);
    m.apply(&swap, "now", Wants::default()).expect("archiving as much as is added is taken");
    assert!(m.render().len() <= shown + 100, "{} > {shown}", m.render().len());
}

/// A memory already past the bound (written before it existed) still loads, refuses what
/// would grow it, and takes the updates that bring it back under.
#[test]
fn a_memory_past_the_bound_can_be_brought_back() {
    let mut m = state_of(100, 1024, false);
    let one = learnings(&["one more".to_string()]);
    assert!(m.apply(&one, "now", Wants::default()).is_err(), "it shows 100 KiB: nothing more is added");
    let mut archive = String::from("KEY_LEARNINGS:\n  ARCHIVE:\n");
    for i in 1..=50 {
        archive.push_str(&format!("    - KL-{i} because old\n"));
    }
    m.apply(&archive, "now", Wants::default()).expect("an update that shrinks it is taken");
    m.apply(&one, "now", Wants::default()).expect("back under the bound, it grows again");
}

/// Archived entries past 1 MiB are dropped from the state, oldest first, and the diff says
/// which; IDs are never handed out again (27 updates of 10,000 learnings once made a state no
/// update could load).
#[test]
fn archived_entries_past_a_mebibyte_are_dropped_oldest_first() {
    let mut m = state_of(1100, 1024, true);
    let applied = m.apply(&learnings(&["fresh".to_string()]), "now", Wants::default()).unwrap();
    assert_eq!(applied.added, ["KL-1101"]);
    let kept: Vec<_> = m.state().learnings.iter().map(|l| l.id.clone()).collect();
    let dropped = 1100 + 1 - kept.len();
    assert!((70..=80).contains(&dropped), "{dropped} dropped");
    assert_eq!(kept[0], format!("KL-{}", dropped + 1), "the oldest went first");
    assert!(applied.diff.contains("Dropped\n  - KL-1  (archived"), "{}", &applied.diff[..200.min(applied.diff.len())]);
    let archived: usize = m.state().learnings.iter().filter(|l| !l.archived_at.is_empty()).map(|l| l.text.len() + l.reason.len()).sum();
    assert!(archived <= 1 << 20, "{archived}");
    assert_eq!(m.state().next_learning, 1102);
}
