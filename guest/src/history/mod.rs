//! Compaction of the session history (spec 003 §2, §3): which entries of the view the model
//! sees are replaced by what. The host hands in the view (each entry with its sequence number
//! and token count) and gets back the replacements to append to its log, the text to write to
//! the archive file, and the view after. Every plan is checked against the invariants before
//! it is returned, and refused if one fails.

use crate::ChatMessage;
use std::collections::{HashMap, HashSet};
use std::fmt::Write;

mod fallback;
mod replace;
mod select;

pub use fallback::{Fallback, fallback};
use replace::*;
use select::*;

/// One entry of the view: an original message (its sequence number in the log) or what
/// replaced some (the smallest sequence number it replaces), with its tokens as the host
/// counts them. A view is ordered by `seq`, each at most once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub seq: u64,
    pub message: ChatMessage,
    pub tokens: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// User and assistant messages that call no tool.
    Conversation,
    /// Tool outputs, each replaced by a placeholder that keeps its call's pairing.
    Tools,
    /// Everything old, tool calls with their results.
    All,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// The model writes the replacement (two steps: the engine asks, the host answers).
    Summarize,
    /// The originals go to the archive file; the replacement says where. No model call.
    Archive,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub target: Target,
    pub strategy: Strategy,
    /// Groups at the end kept whole: a group is a message, or an assistant message with the
    /// tool results answering it.
    pub keep_recent: u32,
    /// Where the archive text goes (the host writes it).
    pub archive_to: String,
    /// Lines already in `archive_to`, so that placeholders cite the right lines.
    pub archive_lines: u32,
    /// Tools whose outputs are never compacted.
    pub never_compact: Vec<String>,
    /// A plan that frees fewer tokens is refused: compacting rewrites the request from the
    /// first replaced entry on, which the provider's prompt cache then misses.
    pub min_free: u32,
    /// The model's answer to `Plan::Ask`, for the second step of `summarize`.
    pub summary: Option<String>,
    /// Entries never compacted besides the current task (by `seq`): a task the host knows
    /// is not the last user message, for one.
    pub keep: Vec<u64>,
}

/// One replacement, as the log records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replacement {
    pub replaces: Vec<u64>,
    pub message: ChatMessage,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compaction {
    pub replacements: Vec<Replacement>,
    /// Text to append to `archive_to`; empty when nothing is archived.
    pub archive: String,
    pub view: Vec<Entry>,
    /// Original entries replaced (not counting earlier replacements replaced again).
    pub messages: u32,
    pub tokens_before: u32,
    /// New entries' tokens are estimated (4 bytes a token) until the host counts them.
    pub tokens_after: u32,
    /// What was compacted and how to read it back: the tool's answer, and the line the next
    /// request carries.
    pub notice: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// `summarize`: ask the model this, then call again with its answer in `summary`.
    Ask(Vec<ChatMessage>),
    Done(Compaction),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// Nothing to compact, or too little (the message says which and why).
    Nothing(String),
    /// The model's summary was empty.
    EmptySummary,
    /// The plan would break an invariant; nothing may be appended.
    Invariant(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Nothing(why) => f.write_str(why),
            Error::EmptySummary => f.write_str("the summary came back empty; nothing was compacted"),
            Error::Invariant(why) => write!(f, "compaction refused, it would break an invariant: {why}"),
        }
    }
}

/// The most messages one `read_history` reads (the host's limit on a range): a handle to
/// more is split into ranges of this many.
pub const READ_HISTORY_MAX: u64 = 200;

/// Spec 003 §2 `compact_history`, planned over `view`.
pub fn plan(view: &[Entry], r: &Request) -> Result<Plan, Error> {
    let names = tool_names(view);
    let picked = pick(view, r, &names);
    if picked.is_empty() {
        return Err(Error::Nothing(format!(
            "nothing to compact: no {} outside the last {} groups and the current task",
            match r.target {
                Target::Tools => "tool output",
                Target::Conversation => "conversation",
                Target::All => "history",
            },
            r.keep_recent
        )));
    }
    if r.strategy == Strategy::Summarize && r.summary.is_none() {
        return Ok(Plan::Ask(summary_request(view, &picked, &names, r.target)));
    }
    let summary = match &r.summary {
        Some(s) if r.strategy == Strategy::Summarize => {
            if s.trim().is_empty() {
                return Err(Error::EmptySummary);
            }
            Some(s.trim().to_string())
        }
        _ => None,
    };
    let compaction = build(view, r, &picked, &names, summary.as_deref());
    let freed = compaction.tokens_before.saturating_sub(compaction.tokens_after);
    if freed == 0 {
        return Err(Error::Nothing("compacting would free no tokens: what it could replace is as short as its placeholder".into()));
    }
    if freed < r.min_free {
        return Err(Error::Nothing(format!(
            "compacting would free about {freed} tokens, less than the minimum of {} per compaction (min_free): \
             each compaction breaks the provider's prompt cache, so it waits until it is worth it",
            r.min_free
        )));
    }
    check(view, &compaction.view, r.keep_recent, &r.keep).map_err(Error::Invariant)?;
    Ok(Plan::Done(compaction))
}

/// The view after `replacements` (the rule every reader of the log applies): each
/// replacement takes the place of the first entry it replaces, with that entry's `seq`. In one
/// pass over the view where no entry is named by two replacements (what compactions make): a
/// pass per replacement made a compaction of a long history cost the square of its length.
pub fn apply(view: &[Entry], replacements: &[Replacement]) -> Vec<Entry> {
    let mut named: HashMap<u64, usize> = HashMap::new();
    let mut overlap = false;
    for (i, r) in replacements.iter().enumerate() {
        for &seq in &r.replaces {
            overlap |= named.insert(seq, i).is_some_and(|j| j != i);
        }
    }
    if overlap {
        return apply_in_turn(view, replacements);
    }
    let mut placed = vec![false; replacements.len()];
    let mut out = Vec::with_capacity(view.len());
    for e in view {
        match named.get(&e.seq) {
            None => out.push(e.clone()),
            Some(&i) if !placed[i] => {
                placed[i] = true;
                let r = &replacements[i];
                let tokens = replacement_tokens((r.replaces.len() == 1).then_some(e), &r.message.content);
                out.push(Entry { seq: e.seq, message: r.message.clone(), tokens });
            }
            Some(_) => {}
        }
    }
    out
}

/// [`apply`] one replacement at a time, as the rule reads: where one may replace another's.
fn apply_in_turn(view: &[Entry], replacements: &[Replacement]) -> Vec<Entry> {
    let mut out: Vec<Entry> = view.to_vec();
    for r in replacements {
        let gone: HashSet<u64> = r.replaces.iter().copied().collect();
        let Some(at) = out.iter().position(|e| gone.contains(&e.seq)) else { continue };
        let seq = out[at].seq;
        let tokens = replacement_tokens((r.replaces.len() == 1).then(|| &out[at]), &r.message.content);
        out.retain(|e| !gone.contains(&e.seq));
        out.insert(at.min(out.len()), Entry { seq, message: r.message.clone(), tokens });
    }
    out
}

/// The invariants of issue 8 over a view and the view a compaction made of it: every tool
/// call and its result together or gone together (parallel calls included), in order; the
/// last `keep_recent` groups unchanged; the current task and the `keep` entries unchanged.
/// The error says which.
pub fn check(before: &[Entry], after: &[Entry], keep_recent: u32, keep: &[u64]) -> Result<(), String> {
    let pairs = |view: &[Entry]| {
        let mut calls = HashMap::new();
        let mut results = HashMap::new();
        for (i, e) in view.iter().enumerate() {
            for c in &e.message.tool_calls {
                calls.insert(c.id.clone(), i);
            }
            if e.message.role == "tool" {
                results.insert(e.message.tool_call_id.clone(), i);
            }
        }
        (calls, results)
    };
    let (calls_before, results_before) = pairs(before);
    let (calls_after, results_after) = pairs(after);
    for (id, _) in calls_before.iter().filter(|(id, _)| results_before.contains_key(*id)) {
        match (calls_after.get(id), results_after.get(id)) {
            (Some(c), Some(r)) if c < r => {}
            (None, None) => {}
            (Some(_), Some(_)) => return Err(format!("the result of tool call {id:?} would come before the call")),
            (Some(_), None) => return Err(format!("tool call {id:?} would lose its result")),
            (None, Some(_)) => return Err(format!("the result of tool call {id:?} would lose its call")),
        }
    }
    let all = groups(before);
    let kept_from = all.get(all.len().saturating_sub(keep_recent as usize)).map_or(before.len(), |g| g.start);
    let kept = &before[kept_from..];
    if after.len() < kept.len() || after[after.len() - kept.len()..] != *kept {
        return Err(format!("the last {keep_recent} groups (from #{}) would not be kept whole", kept.first().map_or(0, |e| e.seq)));
    }
    if let Some(&t) = pinned(before, keep).iter().find(|&&t| !after.contains(&before[t])) {
        return Err(format!("the current task (#{}) would be dropped", before[t].seq));
    }
    // Rising strictly, so each sequence number once.
    if !after.windows(2).all(|w| w[0].seq < w[1].seq) {
        return Err("the view would not be ordered by sequence number".into());
    }
    Ok(())
}
