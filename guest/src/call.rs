//! What happens around each model call of an agent whose loop another program runs (issue 49:
//! a framework's, through a package's adapter): the request bounded by the fallback and
//! built in the engine's order, `context_meta` last, and `read_history`'s answers. Written once
//! here so that every runtime's adapter only moves bytes and counts tokens; see `wit/call.wit`.
//!
//! `prepare` keeps no state between steps: each step is decided again from what the host says
//! it counted and logged, so the same inputs always give the same step.

use crate::history::{Entry, Fallback};
use crate::{ChatMessage, ContextRequest, ContextStats, HistoryMode};

/// The bounds of every request, in tokens (`remind_after_rounds` 0: never).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bounds {
    pub window: u32,
    pub threshold: u32,
    pub goal: u32,
    pub keep_recent: u32,
    pub remind_after_rounds: u32,
    pub max_compactions: u32,
    pub archive_to: String,
}

/// One model call's state as the host knows it (see `call-request` in the WIT).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallRequest {
    pub bounds: Bounds,
    pub system_prompt: String,
    pub overview: String,
    pub view_tokens: u32,
    pub view_entries: u32,
    pub task: Option<u64>,
    pub overhead: u32,
    pub counted: Vec<u32>,
    pub compactions: u32,
    pub exhausted: bool,
    pub standing: Standing,
}

/// Where a session stands before a model call (see `standing` in the WIT).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Standing {
    pub rounds: u64,
    pub memory_updated_round: u64,
    /// The last compaction's round and notice.
    pub last_compaction: Option<(u64, String)>,
}

/// What `context_meta` says of where a session stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reminders {
    pub rounds_since_update: u32,
    /// Empty: none.
    pub compaction_notice: String,
}

/// The rounds since the memory changed, and the last compaction's notice while no model call
/// came after it: its round is still the session's (the counter goes up as a request is sent),
/// so the first request after a compaction carries the notice, and no later one.
pub fn remind(s: &Standing) -> Reminders {
    Reminders {
        rounds_since_update: u32::try_from(s.rounds.saturating_sub(s.memory_updated_round)).unwrap_or(u32::MAX),
        compaction_notice: s.last_compaction.as_ref().filter(|(round, _)| *round == s.rounds).map(|(_, notice)| notice.clone()).unwrap_or_default(),
    }
}

/// A request ready to send: `leading`, the view, then `meta` as a system message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepared {
    pub leading: Vec<ChatMessage>,
    pub meta: String,
    pub tokens: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Count(Vec<ChatMessage>),
    Compact(Fallback),
    Send(Prepared),
}

/// Where the memory is, as the guide names it. A framework's agent has no file tools, so the
/// guide names no folder for details.
const OVERVIEW_PATH: &str = "working-memory/overview.md";

/// What a host does before sending a request (see `call.decide` in the WIT).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecideRequest {
    /// The whole request's tokens, `context_meta` and the tool definitions included.
    pub tokens: u32,
    pub window: u32,
    /// Where the fallback compacts; 0: it is off.
    pub threshold: u32,
    pub goal: u32,
    pub keep_recent: u32,
    /// Automatic mode (spec 003 T034): old tool outputs archived from the compression guide's
    /// first threshold.
    pub auto_compact: bool,
    /// Compactions made before this request, and the most there may be.
    pub compactions: u32,
    pub max_compactions: u32,
    /// Automatic mode's compaction was refused since the last compaction (nothing worth it).
    pub auto_refused: bool,
    /// The fallback found nothing to compact.
    pub exhausted: bool,
    /// Entries never compacted besides the current task.
    pub keep: Vec<u64>,
}

/// Automatic mode's compaction: old tool outputs by archive, at least `min_free` tokens of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolsCompaction {
    pub keep_recent: u32,
    pub min_free: u32,
    pub keep: Vec<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Send,
    CompactTools(ToolsCompaction),
    /// The fallback's request; `archive_to`, `archive_lines` and `never_compact` are the host's.
    Fallback(Fallback),
    OverWindow(String),
}

/// Spec 003's compression guide begins at 20% of the window (tools, then conversation at 40%
/// and all at 60%). Automatic mode acts on its first step alone: the later ones archived the
/// agent's own reasoning early and rewrote the request from its start, and cost more for less
/// recall than tool outputs alone on the 40 trajectories (issue 24).
const GUIDE_FIRST_PERCENT: u64 = 20;

/// What to do before a request of `tokens`: in automatic mode, from the guide's first
/// threshold, compact old tool outputs in batches of at least a third of the window (so that
/// the request stays append-only, and cached, for a while between compactions); then the
/// fallback from its threshold; at most `max_compactions` times; then send, or refuse a
/// request still over the window.
pub fn decide(r: &DecideRequest) -> Decision {
    if r.compactions < r.max_compactions && !r.exhausted {
        let percent = u64::from(r.tokens) * 100 / u64::from(r.window.max(1));
        if r.auto_compact && !r.auto_refused && percent >= GUIDE_FIRST_PERCENT {
            return Decision::CompactTools(ToolsCompaction { keep_recent: r.keep_recent, min_free: r.window / 3, keep: r.keep.clone() });
        }
        if r.threshold > 0 && r.tokens >= r.threshold {
            return Decision::Fallback(Fallback {
                used: r.tokens,
                threshold: r.threshold,
                goal: r.goal.min(r.threshold),
                keep_recent: r.keep_recent,
                archive_to: String::new(),
                archive_lines: 0,
                never_compact: Vec::new(),
                keep: r.keep.clone(),
            });
        }
    }
    if r.tokens > r.window {
        return Decision::OverWindow(format!("the request is {} tokens, over the window of {}, with all that may be compacted compacted", r.tokens, r.window));
    }
    Decision::Send
}

/// The next step of a model call: count what the engine puts before the view, count the
/// `context_meta` block the request would carry, then, as [`decide`] says, compact (and count
/// the block again) or send.
pub fn prepare(r: CallRequest) -> Result<Step, String> {
    let b = &r.bounds;
    // The whole view goes into the request: the fallback bounds it, not the mode. What goes
    // before it depends on the system prompt and the memory alone, so it is byte-identical from
    // one call to the next while they do not change (the provider's prompt cache holds it).
    let leading = crate::context::assemble(ContextRequest {
        system_prompt: r.system_prompt.clone(),
        agents_md: String::new(),
        overview: r.overview.clone(),
        history: Vec::new(),
        active_turn: 0,
        history_mode: HistoryMode::All,
        last_n: 0,
        overview_path: OVERVIEW_PATH.to_string(),
        detail_path: String::new(),
    });
    if r.counted.len() < leading.len() {
        return Ok(Step::Count(leading[r.counted.len()..].to_vec()));
    }
    let leading_tokens = r.counted[..leading.len()].iter().fold(0u32, |a, &t| a.saturating_add(t));
    let used = leading_tokens.saturating_add(r.view_tokens).saturating_add(r.overhead);
    let reminders = remind(&r.standing);
    let meta = crate::context::meta(ContextStats {
        tokens_used: used,
        tokens_max: b.window,
        messages_in_history: r.view_entries,
        working_memory_size: u32::try_from(r.overview.len()).unwrap_or(u32::MAX),
        rounds_since_update: reminders.rounds_since_update,
        remind_after_rounds: b.remind_after_rounds,
        strong_reminder_tokens: b.window / 2,
        compact_at: b.threshold,
        compaction_notice: reminders.compaction_notice,
    });
    // One block a view: counted again after each compaction changed the view.
    let Some(&meta_tokens) = r.counted.get(leading.len() + r.compactions as usize) else {
        return Ok(Step::Count(vec![system(&meta)]));
    };
    let tokens = used.saturating_add(meta_tokens);
    let decided = decide(&DecideRequest {
        tokens,
        window: b.window,
        threshold: b.threshold,
        goal: b.goal,
        keep_recent: b.keep_recent,
        auto_compact: false,
        compactions: r.compactions,
        max_compactions: b.max_compactions,
        auto_refused: false,
        exhausted: r.exhausted,
        keep: r.task.into_iter().collect(),
    });
    match decided {
        // Automatic mode is off here (the host's own, `workmem agent --auto-compact`).
        Decision::Send | Decision::CompactTools(_) => Ok(Step::Send(Prepared { leading, meta, tokens })),
        Decision::Fallback(f) => Ok(Step::Compact(Fallback { archive_to: b.archive_to.clone(), ..f })),
        Decision::OverWindow(why) => Err(format!(
            "{why}: the system prompt and memory ({leading_tokens}), the tool definitions ({}) and the newest messages ({}) fill it",
            r.overhead, r.view_tokens
        )),
    }
}

fn system(content: &str) -> ChatMessage {
    ChatMessage { role: "system".to_string(), content: content.to_string(), tool_call_id: String::new(), tool_calls: Vec::new() }
}

/// A tool the model may call; `parameters` is its arguments' JSON schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolDefinition {
    pub name: String,
    pub description: String,
    pub parameters: String,
}

/// workmem's own tools where the fallback compacts (no `compact_history`: issue 48), as the
/// Rust host's agent offers them (`workmem_agent::tools::own`; a test there holds the two equal).
pub fn own_tools() -> Vec<ToolDefinition> {
    let tool = |name: &str, description: &str, parameters: &str| ToolDefinition {
        name: name.to_string(),
        description: description.to_string(),
        parameters: parameters.to_string(),
    };
    vec![
        tool(
            "read_history",
            "Read back messages of this session by sequence number, as they were before any compaction (compacted messages say their numbers).",
            r#"{"type":"object","properties":{"seq":{"type":"string","description":"a message's sequence number, e.g. \"17\", or a range, e.g. \"12-20\""},"from":{"type":"integer","minimum":0,"description":"the byte to read on from, as an answer over 64 KiB names it (default 0)"}},"required":["seq"]}"#,
        ),
        tool(
            "update_memory",
            "Update the structured memory with the DSL (CURRENT_PROGRESS / KEY_LEARNINGS / VERBATIM_CONTEXT); it re-renders working-memory/overview.md.",
            r#"{"type":"object","properties":{"dsl":{"type":"string"}},"required":["dsl"]}"#,
        ),
    ]
}

/// What an applied update did, as `update_memory`'s answer tells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpdateSummary {
    pub seq: u32,
    pub added: Vec<String>,
    pub archived: Vec<String>,
    pub ignored: Vec<String>,
    pub warnings: Vec<crate::Diagnostic>,
}

/// `update_memory`'s answer: what the update did, not the text the model just wrote (the
/// answer stays in the history, and in every request after it), and its warnings; or, for a
/// refused one, where and why, and that the memory is unchanged.
pub fn update_answer(applied: Option<&UpdateSummary>, errors: &[crate::Diagnostic]) -> String {
    let Some(a) = applied else {
        let mut text = String::from("The update was refused and the memory is unchanged:\n");
        for d in errors.iter().filter(|d| d.severity == crate::ERROR) {
            text.push_str(&format!("- line {}, column {}: {}\n", d.line, d.column, d.message));
        }
        text.push_str("Call update_memory again with the corrected DSL.");
        return text;
    };
    let list = |ids: &[String]| if ids.is_empty() { "none".to_string() } else { ids.join(", ") };
    let mut text = format!("applied update {}: added {}; archived {}; overview.md re-rendered", a.seq, list(&a.added), list(&a.archived));
    if !a.ignored.is_empty() {
        text.push_str(&format!("; ignored {}", a.ignored.join(", ")));
    }
    for d in &a.warnings {
        text.push_str(&format!("\n- warning, line {}, column {}: {}", d.line, d.column, d.message));
    }
    text
}

/// The most messages one read takes.
pub const MAX_READ: u64 = 200;

/// The most one answer carries: every answer goes into every request until it is compacted.
pub const MAX_ANSWER_BYTES: usize = 64 << 10;

/// `s` as a refusal quotes it: its first characters and how long it was, so a refusal never
/// carries back (into every later request) the whole of what it refused.
fn quoted(s: &str) -> String {
    const SHOWN: usize = 40;
    match s.char_indices().nth(SHOWN) {
        None => format!("{s:?}"),
        Some((at, _)) => format!("{:?}… ({} bytes)", &s[..at], s.len()),
    }
}

/// `read_history`'s argument as a first and last sequence number.
pub fn read_range(seq: &str) -> Result<(u64, u64), String> {
    let (from, to) = match seq.trim().split_once('-') {
        Some((a, b)) => (a.trim().parse::<u64>(), b.trim().parse::<u64>()),
        None => (seq.trim().parse::<u64>(), seq.trim().parse::<u64>()),
    };
    let (Ok(from), Ok(to)) = (from, to) else {
        return Err(format!("seq must be a number or a range like 12-20, not {}", quoted(seq)));
    };
    if to < from || to - from >= MAX_READ {
        return Err(format!("a range reads at most {MAX_READ} messages at once"));
    }
    Ok((from, to))
}

/// `read_history`'s answer: `found` as logged, from byte `from`, within [`MAX_ANSWER_BYTES`]; an
/// answer that leaves bytes out says where they start and how to read on, so that every byte
/// of the largest message can be read back.
pub fn read_answer(seq: &str, found: &[Entry], from: u32) -> Result<String, String> {
    if found.is_empty() {
        return Err(format!("no message with seq {} in this session", seq.trim()));
    }
    let mut text = String::new();
    for e in found {
        text.push_str(&format!("### #{} {}\n", e.seq, e.message.role));
        for c in &e.message.tool_calls {
            text.push_str(&format!("→ {}({})\n", c.name, c.arguments));
        }
        text.push_str(&e.message.content);
        text.push_str("\n\n");
    }
    let more = |at: usize| format!("read_history {{\"seq\": \"{}\", \"from\": {at}}} reads on from there", seq.trim());
    let from = from as usize;
    if from == 0 {
        if text.len() <= MAX_ANSWER_BYTES {
            return Ok(text);
        }
        let half = (MAX_ANSWER_BYTES - 256) / 2;
        let head = text.floor_char_boundary(half);
        let tail = text.ceil_char_boundary(text.len() - half);
        return Ok(format!("{}\n[… bytes {head}-{tail} of {} left out here: {} …]\n{}", &text[..head], text.len(), more(head), &text[tail..]));
    }
    if from >= text.len() {
        return Err(format!("from is {from}, but seq {} reads back as {} bytes", seq.trim(), text.len()));
    }
    let start = text.floor_char_boundary(from);
    let end = text.floor_char_boundary(start + MAX_ANSWER_BYTES - 256);
    if end >= text.len() {
        return Ok(format!("[bytes {start}-{} of {}:]\n{}", text.len(), text.len(), &text[start..]));
    }
    Ok(format!("[bytes {start}-{end} of {}:]\n{}\n[… {}]", text.len(), &text[start..end], more(end)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(view_tokens: u32) -> CallRequest {
        CallRequest {
            bounds: Bounds {
                window: 8_000,
                threshold: 6_000,
                goal: 4_000,
                keep_recent: 5,
                remind_after_rounds: 10,
                max_compactions: 3,
                archive_to: "working-memory/detail/history.md".into(),
            },
            system_prompt: "You are a coder.".into(),
            overview: crate::render::TEMPLATE.into(),
            view_tokens,
            view_entries: 4,
            task: Some(1),
            overhead: 100,
            counted: Vec::new(),
            compactions: 0,
            exhausted: false,
            standing: Standing::default(),
        }
    }

    /// Drives `prepare` as a host does, every message counted as 500 tokens and each
    /// compaction freeing `frees` tokens of the view.
    fn drive(mut r: CallRequest, frees: u32) -> (Result<Prepared, String>, Vec<&'static str>) {
        let mut steps = Vec::new();
        loop {
            match prepare(r.clone()) {
                Ok(Step::Count(ms)) => {
                    steps.push("count");
                    r.counted.extend(ms.iter().map(|_| 500));
                }
                Ok(Step::Compact(f)) => {
                    steps.push("compact");
                    assert_eq!(f.keep, vec![1], "the task is kept");
                    assert_eq!(f.used, 500 + r.view_tokens + 100 + 500, "the whole request, context_meta included");
                    if frees == 0 {
                        r.exhausted = true;
                    } else {
                        r.view_tokens -= frees.min(r.view_tokens);
                        r.compactions += 1;
                    }
                }
                Ok(Step::Send(p)) => return (Ok(p), steps),
                Err(e) => return (Err(e), steps),
            }
        }
    }

    #[test]
    fn a_request_under_the_threshold_is_counted_and_sent_whole() {
        let (p, steps) = drive(request(1_000), 0);
        let p = p.unwrap();
        assert_eq!(steps, ["count", "count"], "the leading messages, then the block");
        assert_eq!(p.leading.len(), 1, "the template memory is not sent");
        assert!(p.leading[0].content.starts_with("You are a coder."));
        assert!(!p.leading[0].content.contains("Put details under"), "no folder the agent cannot write");
        assert_eq!(p.tokens, 500 + 1_000 + 100 + 500);
        assert!(p.meta.starts_with("<context_meta>\n{\"tokens_used\":1600,"), "{}", p.meta);
    }

    #[test]
    fn a_request_past_the_threshold_compacts_until_it_is_under() {
        let (p, steps) = drive(request(7_000), 3_000);
        assert_eq!(steps, ["count", "count", "compact", "count"], "the block counted again for the new view");
        assert_eq!(p.unwrap().tokens, 500 + 4_000 + 100 + 500);
    }

    #[test]
    fn compactions_stop_at_the_most_and_an_oversized_request_is_refused() {
        let (p, steps) = drive(request(20_000), 1_000);
        assert_eq!(steps, ["count", "count", "compact", "count", "compact", "count", "compact", "count"]);
        let e = p.unwrap_err();
        assert!(e.contains("18100 tokens, over the window of 8000"), "{e}");
        let (p, steps) = drive(request(7_500), 0);
        assert_eq!(steps, ["count", "count", "compact"], "nothing to compact: no second try");
        assert!(p.is_err(), "8600 tokens do not fit 8000");
        let (p, _) = drive(request(6_500), 0);
        assert_eq!(p.unwrap().tokens, 7_600, "past the threshold, nothing to compact, under the window: sent");
    }

    fn decision(tokens: u32, auto_compact: bool) -> DecideRequest {
        DecideRequest {
            tokens,
            window: 10_000,
            threshold: 7_500,
            goal: 5_000,
            keep_recent: 5,
            auto_compact,
            compactions: 0,
            max_compactions: 3,
            auto_refused: false,
            exhausted: false,
            keep: vec![4],
        }
    }

    #[test]
    fn automatic_mode_archives_tools_from_a_fifth_of_the_window_then_the_safety_net_takes_over() {
        assert_eq!(decide(&decision(1_999, true)), Decision::Send);
        assert_eq!(decide(&decision(2_000, true)), Decision::CompactTools(ToolsCompaction { keep_recent: 5, min_free: 3_333, keep: vec![4] }));
        assert_eq!(decide(&decision(7_499, false)), Decision::Send, "without automatic mode, the fallback alone");
        let refused = DecideRequest { auto_refused: true, ..decision(8_000, true) };
        let Decision::Fallback(f) = decide(&refused) else { panic!("the fallback after a refusal") };
        assert_eq!((f.used, f.threshold, f.goal, f.keep), (8_000, 7_500, 5_000, vec![4]));
        assert_eq!(decide(&DecideRequest { auto_refused: true, ..decision(3_000, true) }), Decision::Send);
        assert_eq!(decide(&DecideRequest { threshold: 0, ..decision(9_000, false) }), Decision::Send, "the net off");
        let spent = DecideRequest { compactions: 3, ..decision(10_001, true) };
        assert!(matches!(decide(&spent), Decision::OverWindow(why) if why.contains("10001 tokens, over the window of 10000")));
        assert_eq!(decide(&DecideRequest { exhausted: true, ..decision(9_000, false) }), Decision::Send);
    }

    #[test]
    fn a_notice_and_a_maintained_memory_go_into_the_request() {
        let mut r = request(1_000);
        r.standing = Standing { rounds: 7, memory_updated_round: 2, last_compaction: Some((7, "Compacted #2-#3; read_history reads them back.".into())) };
        r.overview = "# Working memory\n\nFixing the parser.\n".into();
        let (p, _) = drive(r, 0);
        let p = p.unwrap();
        assert_eq!(p.leading.len(), 2, "the memory follows the system prompt");
        assert!(p.meta.contains("Compacted #2-#3"), "{}", p.meta);
        assert!(p.meta.contains("\"auto_compact_at\":6000"), "{}", p.meta);
    }

    #[test]
    fn a_compactions_notice_goes_on_the_next_request_alone() {
        let notice = || Some((7, "Compacted #2-#3.".to_string()));
        let made_now = remind(&Standing { rounds: 7, memory_updated_round: 2, last_compaction: notice() });
        assert_eq!(made_now, Reminders { rounds_since_update: 5, compaction_notice: "Compacted #2-#3.".into() });
        let a_call_later = remind(&Standing { rounds: 8, memory_updated_round: 2, last_compaction: notice() });
        assert_eq!(a_call_later, Reminders { rounds_since_update: 6, compaction_notice: String::new() });
        let updated_since = remind(&Standing { rounds: 8, memory_updated_round: 9, last_compaction: None });
        assert_eq!(updated_since.rounds_since_update, 0, "a counter behind the other never wraps");
    }

    fn entry(seq: u64, content: &str) -> Entry {
        Entry { seq, message: ChatMessage { role: "tool".into(), content: content.into(), tool_call_id: "c1".into(), tool_calls: Vec::new() }, tokens: 0 }
    }

    #[test]
    fn update_answers_say_what_an_update_did_or_where_it_was_refused() {
        let warning = crate::Diagnostic { severity: crate::WARNING.into(), line: 2, column: 5, message: "odd".into() };
        let applied = UpdateSummary { seq: 3, added: vec!["KL-1".into()], archived: vec![], ignored: vec!["KL-9".into()], warnings: vec![warning.clone()] };
        assert_eq!(
            update_answer(Some(&applied), &[]),
            "applied update 3: added KL-1; archived none; overview.md re-rendered; ignored KL-9\n- warning, line 2, column 5: odd"
        );
        let error = crate::Diagnostic { severity: crate::ERROR.into(), line: 3, column: 7, message: "no such ID".into() };
        assert_eq!(
            update_answer(None, &[error, warning]),
            "The update was refused and the memory is unchanged:\n- line 3, column 7: no such ID\nCall update_memory again with the corrected DSL."
        );
    }

    #[test]
    fn read_ranges_are_bounded_and_errors_say_why() {
        assert_eq!(read_range(" 17 "), Ok((17, 17)));
        assert_eq!(read_range("12-20"), Ok((12, 20)));
        assert!(read_range("x").unwrap_err().contains("a number or a range"));
        assert!(read_range("20-12").unwrap_err().contains("at most 200"));
        assert_eq!(read_range("1-200"), Ok((1, 200)));
        assert!(read_range("1-201").unwrap_err().contains("at most 200"));
        assert!(read_answer("9", &[], 0).unwrap_err().contains("no message with seq 9"));
        let refused = read_range(&"é".repeat(100_000)).unwrap_err();
        assert!(refused.len() < 200 && refused.ends_with("… (200000 bytes)"), "a refusal quotes a little of what it refused: {refused}");
    }

    #[test]
    fn a_large_answer_is_read_whole_in_parts() {
        let big = "é".repeat(100_000);
        let found = [entry(4, &big)];
        let first = read_answer("4", &found, 0).unwrap();
        assert!(first.len() <= MAX_ANSWER_BYTES, "{}", first.len());
        assert!(first.starts_with("### #4 tool\n"));
        let mut whole = String::new();
        let mut from = 0;
        loop {
            let part = read_answer("4", &found, from).unwrap();
            assert!(part.len() <= MAX_ANSWER_BYTES);
            if from == 0 {
                let (head, _) = part.split_once("\n[… bytes ").unwrap();
                whole.push_str(head);
                from = head.len() as u32;
                continue;
            }
            let body = part.split_once(":]\n").unwrap().1;
            match body.rsplit_once("\n[… read_history") {
                Some((text, rest)) => {
                    whole.push_str(text);
                    from = rest.split("\"from\": ").nth(1).unwrap().split('}').next().unwrap().parse().unwrap();
                }
                None => {
                    whole.push_str(body);
                    break;
                }
            }
        }
        assert_eq!(whole, format!("### #4 tool\n{big}\n\n"));
        assert!(read_answer("4", &found, 10_000_000).unwrap_err().contains("reads back as"));
    }
}
