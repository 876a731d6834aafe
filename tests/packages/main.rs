//! A user's program with the Rust crates: open a session the CLI made, apply an update,
//! assemble the next request.

use workmem_runtime::{ChatMessage, ContextRequest, ContextStats, HistoryMode, Options, Runtime};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let runtime = Runtime::new(&Options::default())?;
    let session = workmem_store::Session::open(args[1].as_ref())?;
    let applied = workmem_commit::apply(&runtime, &session, &std::fs::read_to_string(&args[2])?)?;
    let mut engine = runtime.instance()?;
    let user = ChatMessage { role: "user".into(), content: "Go on.".into(), tool_call_id: None, tool_calls: Vec::new() };
    let mut messages = engine.assemble_context(&ContextRequest {
        system_prompt: "You are a careful engineer.".into(),
        agents_md: None,
        overview: session.overview()?,
        history: vec![user],
        active_turn: 0,
        history_mode: HistoryMode::Auto,
        overview_path: "working-memory/overview.md".into(),
        detail_path: "working-memory/detail/".into(),
    })?;
    let stats = ContextStats {
        tokens_used: 1000,
        tokens_max: 128_000,
        messages_in_history: 1,
        working_memory_size: 0,
        rounds_since_update: 0,
        remind_after_rounds: None,
        strong_reminder_tokens: None,
        compact_at: None,
        compaction_notice: None,
    };
    messages.push(ChatMessage { role: "system".into(), content: engine.context_meta(&stats)?, tool_call_id: None, tool_calls: Vec::new() });
    let added = applied.added.iter().map(|id| format!("{id:?}")).collect::<Vec<_>>().join(",");
    println!(
        "{{\"runtime\": \"rust\", \"seq\": {}, \"added\": [{added}], \"messages\": {}, \"overview\": {:?}}}",
        applied.seq,
        messages.len(),
        messages[1].content
    );
    Ok(())
}
