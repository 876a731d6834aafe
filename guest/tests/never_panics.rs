//! No input makes the engine panic (a panic in the component is a trap), and every
//! diagnostic points inside the text. PROPTEST_CASES raises the case count for longer runs.

use proptest::prelude::*;
use workmem_guest as engine;

/// Fragments real responses are made of, so random inputs reach deep into the grammar.
const PIECES: &[&str] = &[
    "CURRENT_PROGRESS:",
    "KEY_LEARNINGS:",
    "VERBATIM_CONTEXT:",
    "## Current Progress",
    "**In Progress:**",
    "Completed:",
    "In Progress:",
    "Remaining:",
    "ADD:",
    "ARCHIVE:",
    "ADD: (none)",
    "(none)",
    "- ",
    "* ",
    "1. ",
    "because ",
    "because",
    ": ",
    ":",
    " => ",
    "=>",
    "KL-",
    "VC-",
    "[KL-1]",
    "KL-4294967296",
    "VC-0",
    "```",
    "~~~",
    "```python",
    "\t",
    "  ",
    "    ",
    "\n",
    "\r\n",
    "\r",
    "é",
    "修复",
    "🚀",
    "\u{200b}",
    "text",
    "#",
    "-",
];

fn dsl_like() -> impl Strategy<Value = String> {
    prop::collection::vec(prop_oneof![prop::sample::select(PIECES).prop_map(str::to_string), "[ -~]{0,12}"], 0..80).prop_map(|parts| parts.concat())
}

fn check(text: &str) {
    let lines = text.split('\n').flat_map(|l| l.split('\r')).count().max(1) as u32;
    let outcome = engine::parse(text);
    for d in &outcome.diagnostics {
        assert!(d.line >= 1 && d.line <= lines, "line {} of {lines} in {text:?}", d.line);
        assert!(d.column >= 1, "column 0 in {text:?}");
    }
    assert_eq!(outcome.ok, !outcome.diagnostics.iter().any(|d| d.severity == engine::ERROR));
    let state = engine::empty_state();
    let applied = engine::apply(state.clone(), text, "now");
    if !applied.ok {
        assert_eq!(applied.merged.state, state, "a rejected update must hand the state back unchanged");
    } else {
        let m = applied.merged;
        // What parse accepts, merge accepts; and the result renders.
        let _ = engine::render(&m.state);
        let _ = engine::update_prompt(&m.state, text);
    }
}

proptest! {
    #[test]
    fn arbitrary_unicode_never_panics(text in "\\PC*") {
        check(&text);
    }

    #[test]
    fn dsl_shaped_input_never_panics(text in dsl_like()) {
        check(&text);
    }
}
