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

fn chat_message() -> impl Strategy<Value = engine::ChatMessage> {
    let role = prop::sample::select(&["user", "assistant", "tool", "system", "", "bogus"][..]).prop_map(str::to_string);
    let call = ("[a-z0-9]{0,4}", "[a-z_]{0,8}", "\\PC{0,12}").prop_map(|(id, name, arguments)| engine::ToolCall { id, name, arguments });
    (role, "\\PC{0,24}", "[a-z0-9]{0,4}", prop::collection::vec(call, 0..3)).prop_map(|(role, content, tool_call_id, tool_calls)| engine::ChatMessage {
        role,
        content,
        tool_call_id,
        tool_calls,
    })
}

fn history_mode() -> impl Strategy<Value = engine::HistoryMode> {
    prop::sample::select(&[engine::HistoryMode::Auto, engine::HistoryMode::All, engine::HistoryMode::ActiveTurn, engine::HistoryMode::LastN][..])
}

proptest! {
    /// Every field of a context request in range and out of it (an active turn at or past the
    /// history's end, any last-n, results without calls, unknown roles): assembly never
    /// panics, never invents history, and context_meta renders whatever the figures.
    #[test]
    fn context_exports_never_panic(
        history in prop::collection::vec(chat_message(), 0..12),
        active in prop_oneof![0u32..14, any::<u32>()],
        mode in history_mode(),
        last_n in prop_oneof![0u32..14, any::<u32>()],
        texts in prop::collection::vec("\\PC{0,40}", 5),
        figures in prop::collection::vec(any::<u32>(), 8),
    ) {
        let n = history.len();
        let request = engine::ContextRequest {
            system_prompt: texts[0].clone(),
            agents_md: texts[1].clone(),
            overview: texts[2].clone(),
            history,
            active_turn: active,
            history_mode: mode,
            last_n,
            overview_path: texts[3].clone(),
            detail_path: texts[4].clone(),
        };
        let assembled = engine::assemble_context(request.clone());
        prop_assert!(assembled.len() <= n + 3, "{} messages from a history of {}", assembled.len(), n);
        let stats = engine::ContextStats {
            tokens_used: figures[0],
            tokens_max: figures[1],
            messages_in_history: figures[2],
            working_memory_size: figures[3],
            rounds_since_update: figures[4],
            remind_after_rounds: figures[5],
            strong_reminder_tokens: figures[6],
            compact_at: figures[7],
            compaction_notice: texts[4].clone(),
        };
        prop_assert!(engine::context_meta(stats).starts_with("<context_meta>"));
        let _ = engine::overview_maintained(&request.overview);
    }
}
