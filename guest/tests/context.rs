//! Context assembly, `context_meta` and the "maintained overview" rule, natively. The same
//! functions run through the component in the host's tests.

use workmem_guest::*;

fn msg(role: &str, content: &str) -> ChatMessage {
    ChatMessage { role: role.into(), content: content.into(), tool_call_id: String::new(), tool_calls: Vec::new() }
}

fn request(overview: &str, mode: HistoryMode) -> ContextRequest {
    ContextRequest {
        system_prompt: "You are a coding agent.".into(),
        agents_md: "Run `make test` before you stop.".into(),
        overview: overview.into(),
        history: vec![msg("user", "first task"), msg("assistant", "done"), msg("user", "second task"), msg("assistant", "working")],
        active_turn: 2,
        history_mode: mode,
        last_n: 3,
        overview_path: "/s/working-memory/overview.md".into(),
        detail_path: "/s/working-memory/detail/".into(),
    }
}

#[test]
fn the_template_and_the_empty_render_are_not_maintained_memory() {
    assert!(!overview_maintained(&overview_template()));
    assert!(!overview_maintained(&render(&empty_state())));
    assert!(!overview_maintained(""));
    assert!(!overview_maintained("# Working Memory\n<!-- a\nmultiline comment -->\n\n## Current task\n<!-- x --> <!-- y -->\n"));
    let filled = overview_template().replace("## Current task\n", "## Current task\nFix the flaky test\n");
    assert!(overview_maintained(&filled));
    assert!(overview_maintained("# Working Memory\n<!-- note --> Fixing the parser\n"));
    assert!(overview_maintained("- a bullet with no heading at all\n"));
}

#[test]
fn the_request_has_the_order_of_spec_001() {
    let out = assemble_context(request("# Working Memory\nFixing it\n", HistoryMode::All));
    let roles: Vec<&str> = out.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(roles, ["system", "system", "system", "user", "assistant", "user", "assistant"]);
    assert!(out[0].content.starts_with("You are a coding agent.\n\n## Working Memory - IMPORTANT"));
    assert!(
        out[0].content.contains("sent with every request once it holds something: /s/working-memory/overview.md")
            && out[0].content.contains("Put details under /s/working-memory/detail/")
    );
    // Spec 003 T038: the prompt says how to read history back (when to call compact_history
    // is that tool's description, in a request exactly when it offers the tool).
    assert!(out[0].content.contains("read_history {\"seq\": \"N\"}"));
    assert!(!out[0].content.contains("compact_history") && !out[0].content.contains("write_file"), "it names no tool a request may not offer");
    assert_eq!(out[1].content, "# AGENTS.md\n\nRun `make test` before you stop.");
    assert_eq!(out[2].content, "<working_memory path=\"/s/working-memory/overview.md\">\n# Working Memory\nFixing it\n</working_memory>");
    let mut no_agents = request("x", HistoryMode::All);
    no_agents.agents_md = " \n".into();
    assert_eq!(assemble_context(no_agents).len(), 6, "no AGENTS.md message when there is none");
}

#[test]
fn a_template_memory_and_a_folder_the_model_cannot_write_are_not_sent() {
    // Issue 48: bytes on every request that the model could not act on.
    let template = assemble_context(request(&overview_template(), HistoryMode::All));
    assert_eq!(template.iter().filter(|m| m.role == "system").count(), 2, "no working_memory block while the memory is the template");
    assert!(!template.iter().any(|m| m.content.contains("<working_memory")));
    let mut no_files = request("# Working Memory\nFixing it\n", HistoryMode::All);
    no_files.detail_path = String::new();
    let guide = &assemble_context(no_files)[0].content;
    assert!(!guide.contains("Put details under") && guide.contains("Keep it current as you work"), "{guide}");
}

#[test]
fn history_modes_select_what_the_spec_says() {
    let history = |overview: &str, mode| -> Vec<String> {
        assemble_context(request(overview, mode)).into_iter().filter(|m| m.role != "system").map(|m| m.content).collect()
    };
    let template = overview_template();
    let maintained = "# Working Memory\nFixing it\n";
    assert_eq!(history(&template, HistoryMode::Auto), ["first task", "done", "second task", "working"]);
    assert_eq!(history(maintained, HistoryMode::Auto), ["second task", "working"]);
    assert_eq!(history(maintained, HistoryMode::All).len(), 4);
    assert_eq!(history(&template, HistoryMode::ActiveTurn), ["second task", "working"]);
    assert_eq!(history(maintained, HistoryMode::LastN), ["done", "second task", "working"]);
    let mut short = request(maintained, HistoryMode::LastN);
    short.last_n = 1;
    assert_eq!(assemble_context(short).len() - 3, 2, "last-n keeps at least the active turn");
    // The instructions say what the request really holds.
    assert!(assemble_context(request(&template, HistoryMode::Auto))[0].content.contains("Earlier messages may be included, but do not rely on them"));
    assert!(assemble_context(request(maintained, HistoryMode::Auto))[0].content.contains("History messages are NOT injected"));
}

#[test]
fn last_n_never_starts_at_an_orphaned_tool_result() {
    let mut r = request("# Working Memory\nFixing it\n", HistoryMode::LastN);
    let call = ToolCall { id: "call_1".into(), name: "read_file".into(), arguments: "{}".into() };
    r.history = vec![
        msg("user", "task"),
        ChatMessage { tool_calls: vec![call], ..msg("assistant", "") },
        ChatMessage { tool_call_id: "call_1".into(), ..msg("tool", "file text") },
        msg("user", "next task"),
    ];
    r.active_turn = 3;
    r.last_n = 2; // would start at the tool result
    let out = assemble_context(r);
    let history: Vec<&str> = out.iter().skip(3).map(|m| m.role.as_str()).collect();
    assert_eq!(history, ["assistant", "tool", "user"]);
}

#[test]
fn the_prefix_depends_only_on_what_precedes_the_history() {
    let a = assemble_context(request("# Working Memory\nFixing it\n", HistoryMode::All));
    let mut longer = request("# Working Memory\nFixing it\n", HistoryMode::All);
    longer.history.push(msg("user", "third task"));
    longer.active_turn = 4;
    let b = assemble_context(longer);
    assert_eq!(a[..3], b[..3]);
}

#[test]
fn context_meta_is_the_block_of_us_3() {
    let stats = ContextStats {
        tokens_used: 45000,
        tokens_max: 128000,
        messages_in_history: 42,
        working_memory_size: 2400,
        rounds_since_update: 0,
        remind_after_rounds: 5,
        strong_reminder_tokens: 64000,
        compact_at: 0,
        compaction_notice: String::new(),
    };
    // How full the context is, as one line of JSON, and nothing else while there is nothing to
    // act on (the other figures with something to act on: issue 48).
    let quiet = context_meta(stats.clone());
    assert_eq!(quiet, "<context_meta>\n{\"tokens_used\":45000,\"tokens_percent\":35}\n</context_meta>");
    let figures: serde_json::Value = serde_json::from_str(quiet.lines().nth(1).unwrap()).unwrap();
    assert_eq!(figures["tokens_percent"], 35);
    let due = context_meta(ContextStats { rounds_since_update: 5, ..stats.clone() });
    assert!(
        due.ends_with(
            "\"tokens_max\":128000,\"tokens_percent\":35,\"messages_in_history\":42,\"working_memory_size\":2400}\n\
             You have not updated working-memory/overview.md for 5 rounds. Update it now with your progress, decisions and open issues.\n</context_meta>"
        ),
        "{due}"
    );
    assert!(context_meta(ContextStats { tokens_used: 64000, rounds_since_update: 5, ..stats.clone() }).contains("}\nContext is 50% full. Archive"));
    assert_eq!(context_meta(ContextStats { tokens_used: 64000, ..stats.clone() }).lines().count(), 3, "it insists only when an update is due");
    assert!(context_meta(ContextStats { tokens_max: 0, ..stats.clone() }).contains("\"tokens_percent\":0}"));
    // Where the fallback is, and the notice right after a compaction (issue 8).
    let near = context_meta(ContextStats { compact_at: 96000, compaction_notice: "History was compacted: ...\n".into(), ..stats });
    assert!(near.ends_with("\"working_memory_size\":2400,\"auto_compact_at\":96000}\nHistory was compacted: ...\n</context_meta>"), "{near}");
}

#[test]
fn an_active_turn_at_the_end_of_a_history_ending_in_a_tool_result_assembles() {
    // Issue 9: `active-turn` equal to the history's length indexed past its end (a trap in
    // the component) when the mode started the request there.
    let mut r = request("# Working Memory\nFixing it\n", HistoryMode::ActiveTurn);
    let call = ToolCall { id: "c".into(), name: "read_file".into(), arguments: "{}".into() };
    r.history = vec![
        msg("user", "task"),
        ChatMessage { tool_calls: vec![call], ..msg("assistant", "") },
        ChatMessage { tool_call_id: "c".into(), ..msg("tool", "text") },
    ];
    for active_turn in [3, 4, u32::MAX] {
        r.active_turn = active_turn;
        let out = assemble_context(r.clone());
        assert_eq!(out.len(), 3, "the prefix only: the active turn holds nothing yet");
    }
}
