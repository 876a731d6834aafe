//! Context requests built from the input, every field in range and out of it (an active
//! turn past the history's end, last-n of zero or more than there is, results without
//! calls): assembly and context_meta never panic, and assembly never invents messages.
#![no_main]

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use workmem_guest::{self as engine, ChatMessage, ContextRequest, ContextStats, HistoryMode, ToolCall};

fn message(u: &mut Unstructured) -> Result<ChatMessage> {
    let role = *u.choose(&["user", "assistant", "tool", "system", ""])?;
    let calls =
        (0..u.int_in_range(0..=2)?).map(|_| Ok(ToolCall { id: u.arbitrary()?, name: u.arbitrary()?, arguments: u.arbitrary()? })).collect::<Result<_>>()?;
    Ok(ChatMessage { role: role.into(), content: u.arbitrary()?, tool_call_id: u.arbitrary()?, tool_calls: calls })
}

fn run(u: &mut Unstructured) -> Result<()> {
    let history: Vec<ChatMessage> = (0..u.int_in_range(0..=12)?).map(|_| message(u)).collect::<Result<_>>()?;
    let n = history.len();
    let request = ContextRequest {
        system_prompt: u.arbitrary()?,
        agents_md: u.arbitrary()?,
        overview: u.arbitrary()?,
        history,
        active_turn: if u.arbitrary()? { u.int_in_range(0..=n as u32 + 1)? } else { u.arbitrary()? },
        history_mode: *u.choose(&[HistoryMode::Auto, HistoryMode::All, HistoryMode::ActiveTurn, HistoryMode::LastN])?,
        last_n: u.arbitrary()?,
        overview_path: u.arbitrary()?,
        detail_path: u.arbitrary()?,
    };
    let assembled = engine::assemble_context(request.clone());
    assert!(assembled.len() <= n + 3, "{} messages from a history of {n}", assembled.len());
    let stats = ContextStats {
        tokens_used: u.arbitrary()?,
        tokens_max: u.arbitrary()?,
        messages_in_history: u.arbitrary()?,
        working_memory_size: u.arbitrary()?,
        rounds_since_update: u.arbitrary()?,
        remind_after_rounds: u.arbitrary()?,
        strong_reminder_tokens: u.arbitrary()?,
        compact_at: u.arbitrary()?,
        compaction_notice: u.arbitrary()?,
    };
    assert!(!engine::context_meta(stats).is_empty());
    let _ = engine::overview_maintained(&request.overview);
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let _ = run(&mut Unstructured::new(data));
});
