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

/// Runs `f` on inputs of `n` and `4 * n` items and checks the larger takes well under the
/// 16 times a quadratic algorithm would (a linear one takes about 4 times).
fn grows_linearly(what: &str, n: usize, f: impl Fn(usize)) {
    let time = |n| {
        let start = Instant::now();
        f(n);
        start.elapsed()
    };
    time(n); // warm the allocator
    let (small, large) = (time(n).max(Duration::from_micros(50)), time(4 * n));
    let ratio = large.as_secs_f64() / small.as_secs_f64();
    eprintln!("{what}: {n} items {small:?}, {} items {large:?} ({ratio:.1}x)", 4 * n);
    assert!(ratio < 10.0, "{what} grows faster than linearly: {ratio:.1}x for 4x the input");
}

#[test]
fn archive_checks_are_linear_in_the_input() {
    grows_linearly("archive", 20_000, |n| {
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
    grows_linearly("progress diff", 20_000, |n| {
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
