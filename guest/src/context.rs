//! Context assembly (spec 001 "message structure", US-2, US-3, US-8; spec 003 §2.3, §4):
//! what one request to the model holds, in an order that keeps its prefix stable.

use crate::{ChatMessage, ContextRequest, ContextStats, Frame, FrameRequest, HistoryMode};
use std::fmt::Write;

/// Spec 003 §4's guide, with the real paths and the history line true to what the request
/// holds, in the fewest words that keep what the model acts on. It is in every request: its
/// 402 tokens (the spec's text: a table of percentages, "Always Preserve", the same rule said
/// three times) were 3% of the 40 trajectories' cost at a cached price of 0.1, and five times
/// as much where a cached token costs half an uncached one (issue 48). It names no tool but
/// `read_history`, which every placeholder names too: how to write the memory, and when to
/// call `compact_history` (spec 003 T038), are in those tools' own descriptions, which a
/// request carries exactly when it offers them; a host that compacts by itself offers no
/// `compact_history`, and one without file tools gives no `detail_path`. The percentages
/// are the host's to act on (`--auto-compact`), not the model's.
fn instructions(overview_path: &str, detail_path: &str, history_injected: bool) -> String {
    let history = if history_injected {
        "Earlier messages may be included, but do not rely on them: they can be dropped at any time."
    } else {
        "History messages are NOT injected into your prompt: the memory is what you keep."
    };
    let details = if detail_path.is_empty() { String::new() } else { format!(" Put details under {detail_path}.") };
    format!(
        "## Working Memory - IMPORTANT

You keep a memory that persists across this session, sent with every request once it holds something: \
{overview_path}. Keep it current as you work: the task's status, decisions and why, what you learned, what \
is left.{details} {history}

When the context fills, old messages and tool outputs are compacted (context_meta says so when it happens). \
Nothing is lost: each message keeps its number, and read_history {{\"seq\": \"N\"}} (or a range \"N-M\") \
reads it back as it was. After a compaction, bring the memory up to date with what matters from it.
"
    )
}

pub fn assemble(r: ContextRequest) -> Vec<ChatMessage> {
    let ContextRequest { system_prompt, agents_md, overview, history, active_turn, history_mode, last_n, overview_path, detail_path } = r;
    let tool_results = history.iter().map(|m| u8::from(m.role == "tool")).collect();
    let f = frame(FrameRequest { system_prompt, agents_md, overview, tool_results, active_turn, history_mode, last_n, overview_path, detail_path });
    let mut out = f.leading;
    out.extend(history.into_iter().skip(f.start as usize));
    out
}

pub fn frame(r: FrameRequest) -> Frame {
    let len = r.tool_results.len();
    let active = (r.active_turn as usize).min(len);
    // Decided by the mode and the overview alone, never by the history's length, so that the
    // instructions (part of the prefix) do not change from one turn to the next.
    let maintained = overview_maintained(&r.overview);
    let whole_history = match r.history_mode {
        HistoryMode::All | HistoryMode::LastN => true,
        HistoryMode::ActiveTurn => false,
        HistoryMode::Auto => !maintained,
    };
    let mut start = match r.history_mode {
        HistoryMode::LastN => len.saturating_sub(r.last_n as usize).min(active),
        _ if whole_history => 0,
        _ => active,
    };
    // A tool result needs the assistant message that called it in the same request. (`start`
    // may be the history's length: an active turn with nothing in it yet.)
    while start > 0 && r.tool_results.get(start).is_some_and(|&t| t != 0) {
        start -= 1;
    }
    let system = |content: String| ChatMessage { role: "system".into(), content, tool_call_id: String::new(), tool_calls: Vec::new() };
    let mut leading = Vec::with_capacity(3);
    let mut prompt = r.system_prompt;
    if !prompt.is_empty() {
        prompt.push_str("\n\n");
    }
    prompt.push_str(&instructions(&r.overview_path, &r.detail_path, whole_history));
    leading.push(system(prompt));
    if !r.agents_md.trim().is_empty() {
        leading.push(system(format!("# AGENTS.md\n\n{}", r.agents_md)));
    }
    // A memory that is still the template tells the model nothing it can act on: its bytes
    // were on every request until the first update (issue 48).
    if maintained {
        leading.push(system(format!("<working_memory path=\"{}\">\n{}\n</working_memory>", r.overview_path, r.overview.trim_end())));
    }
    Frame { leading, start: u32::try_from(start).unwrap_or(u32::MAX) }
}

/// The block of spec 001 US-3: its figures as one line of compact JSON, then a line each for
/// what the model has to act on: the compaction notice, and the reminder once it is due. The
/// block is new on every request, so none of it is ever cached. The spec's pretty-printed JSON
/// and its standing "Remember to update" line were half of it: 3% of the 40 trajectories' cost
/// with caching, 6% of a long session of tiny steps (issue 24). Where there is nothing to act
/// on, the figures are the two that say how full the context is: the others (the window, the
/// history's length, the memory's size, where the fallback compacts) change nothing the
/// model does then, and were about 35 uncached tokens on every request (issue 48).
pub fn meta(s: ContextStats) -> String {
    let percent = if s.tokens_max == 0 { 0 } else { u64::from(s.tokens_used) * 100 / u64::from(s.tokens_max) };
    // A reminder insists only once the memory has gone `remind_after_rounds` without an update
    // (0: never by rounds): each insistence costs a memory update, and an update rewrites
    // the request's prefix, so one on every request past the strong threshold costs more than
    // it keeps. Past that threshold, it asks to archive as well.
    let due = s.remind_after_rounds == 0 || s.rounds_since_update >= s.remind_after_rounds;
    let reminder = if s.strong_reminder_tokens > 0 && s.tokens_used >= s.strong_reminder_tokens && due {
        Some(format!(
            "Context is {percent}% full. Archive finished work now, and compress the memory to the current task \
             and key decisions."
        ))
    } else if s.remind_after_rounds > 0 && due {
        Some(format!(
            "You have not updated working-memory/overview.md for {} rounds. Update it now with your progress, \
             decisions and open issues.",
            s.rounds_since_update
        ))
    } else {
        None
    };
    let notice = Some(s.compaction_notice.trim_end()).filter(|n| !n.is_empty());
    let mut out = String::from("<context_meta>\n");
    let _ = write!(out, "{{\"tokens_used\":{},", s.tokens_used);
    if notice.is_some() || reminder.is_some() {
        let _ = write!(
            out,
            "\"tokens_max\":{},\"tokens_percent\":{percent},\"messages_in_history\":{},\"working_memory_size\":{}",
            s.tokens_max, s.messages_in_history, s.working_memory_size
        );
        if s.compact_at > 0 {
            let _ = write!(out, ",\"auto_compact_at\":{}", s.compact_at);
        }
    } else {
        let _ = write!(out, "\"tokens_percent\":{percent}");
    }
    out.push_str("}\n");
    for line in notice.into_iter().map(str::to_string).chain(reminder) {
        out.push_str(&line);
        out.push('\n');
    }
    out.push_str("</context_meta>");
    out
}

/// Placeholders the engine's own `render` writes where a section is empty.
const PLACEHOLDERS: [&str; 2] = ["_Nothing recorded yet._", "_None yet._"];

pub fn overview_maintained(overview: &str) -> bool {
    let mut in_comment = false;
    for line in overview.lines() {
        let mut rest = line;
        let mut text = String::new();
        // Keep only what lies outside <!-- ... -->, which may span lines.
        loop {
            if in_comment {
                match rest.find("-->") {
                    Some(i) => {
                        rest = &rest[i + 3..];
                        in_comment = false;
                    }
                    None => break,
                }
            } else {
                match rest.find("<!--") {
                    Some(i) => {
                        text.push_str(&rest[..i]);
                        rest = &rest[i + 4..];
                        in_comment = true;
                    }
                    None => {
                        text.push_str(rest);
                        break;
                    }
                }
            }
        }
        let text = text.trim();
        if !text.is_empty() && !text.starts_with('#') && !PLACEHOLDERS.contains(&text) {
            return true;
        }
    }
    false
}
