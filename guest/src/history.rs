//! Compaction of the session history (spec 003 §2, §3): which entries of the view the model
//! sees are replaced by what. The host hands in the view (each entry with its sequence number
//! and token count) and gets back the replacements to append to its log, the text to write to
//! the archive file, and the view after. Every plan is checked against the invariants before
//! it is returned, and refused if one fails.

use crate::ChatMessage;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt::Write;

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

/// A contiguous run of the view: one message, or an assistant message and its results.
#[derive(Debug, Clone, Copy)]
struct Group {
    start: usize,
    end: usize,
}

fn groups(view: &[Entry]) -> Vec<Group> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < view.len() {
        let m = &view[i].message;
        let mut end = i + 1;
        if m.role == "assistant" && !m.tool_calls.is_empty() {
            let ids: HashSet<&str> = m.tool_calls.iter().map(|c| c.id.as_str()).collect();
            while end < view.len() && view[end].message.role == "tool" && ids.contains(view[end].message.tool_call_id.as_str()) {
                end += 1;
            }
        }
        out.push(Group { start: i, end });
        i = end;
    }
    out
}

/// The indices never compacted: the current task (the last user message that is not one of
/// ours) and the entries the host pins.
fn pinned(view: &[Entry], keep: &[u64]) -> Vec<usize> {
    let task = view.iter().rposition(|e| e.message.role == "user" && !is_ours(&e.message));
    (0..view.len()).filter(|&i| Some(i) == task || keep.contains(&view[i].seq)).collect()
}

const OFFLOADED: &str = "[offloaded ";
const COMPACTED: &str = "[compacted ";

/// What reads as a replacement the engine wrote. Only a guess, since a tool output may begin
/// with the same words (issue 24's generated outputs do): it names the task and tells a run
/// of one apart, never what a tool output is. Whether an output gains by being offloaded
/// is its size against its placeholder's, whatever it says, so that an output that imitates a
/// placeholder cannot stay whole for good.
fn is_ours(m: &ChatMessage) -> bool {
    m.content.starts_with(OFFLOADED) || m.content.starts_with(COMPACTED)
}

/// Where the entries the model has not seen begin: after its last answer. Each request
/// carries the view, and the model answered the last one it got, so it has seen what came
/// before its last answer; what came after (the outputs it asked for, a user's message) it
/// has not. Such an entry is never replaced whole (issue 48: the safety net offloaded the
/// newest output before the model read it in 9 of 30 steps at an 8k window); one too large
/// for the room keeps its two ends ([`clip_unseen`]).
fn unseen_from(view: &[Entry]) -> usize {
    view.iter().rposition(|e| e.message.role == "assistant" && !is_ours(&e.message)).map_or(0, |i| i + 1)
}

/// The groups that may be compacted: all but the last `keep_recent`, the pinned ones and
/// those the model has not seen all of.
fn candidates(view: &[Entry], keep_recent: u32, keep: &[u64]) -> Vec<Group> {
    let all = groups(view);
    let kept_from = all.len().saturating_sub(keep_recent as usize);
    let pinned = pinned(view, keep);
    let unseen = unseen_from(view);
    all[..kept_from].iter().copied().filter(|g| g.end <= unseen && !pinned.iter().any(|p| (g.start..g.end).contains(p))).collect()
}

/// Whether replacing `m` by `placeholder` makes it smaller, by its own content: an assistant
/// message's tokens count its tool calls, which stay, so a message of calls with no text once
/// became a placeholder of 200 bytes where it had none.
fn shrinks(m: &ChatMessage, tokens: u32, placeholder: &str) -> bool {
    m.content.len() > placeholder.len() && tokens > estimate(placeholder)
}

fn tool_names(view: &[Entry]) -> HashMap<&str, &str> {
    view.iter().flat_map(|e| e.message.tool_calls.iter()).map(|c| (c.id.as_str(), c.name.as_str())).collect()
}

/// A replacement's tokens before the host counts them: two bytes a token and the message's
/// framing. Cautious, since what the engine writes (numbers, paths, punctuation) takes about
/// three bytes a token in o200k_base, so that a compaction it plans frees tokens as the
/// provider counts them: at four bytes a token, and at three, its property test found
/// compactions whose placeholders took more than they replaced.
fn estimate(text: &str) -> u32 {
    estimate_bytes(text.len())
}

fn estimate_bytes(len: usize) -> u32 {
    u32::try_from(len.div_ceil(2) + 4).unwrap_or(u32::MAX)
}

/// What a replacement counts as until the host counts it: `estimate`, except the ends of the
/// one message it replaces that it keeps in place (see `keep_ends`), which count at that
/// message's own rate, as the host counted it. Every reader of a compaction counts it so
/// (`build`, `keep_ends`, `apply`).
fn replacement_tokens(original: Option<&Entry>, content: &str) -> u32 {
    let Some((o, kept)) = original.and_then(|o| Some((o, kept_ends(&o.message.content, content)?))) else { return estimate(content) };
    let len = o.message.content.len().max(1) as u64;
    let ends = u32::try_from(u64::from(o.tokens) * kept as u64 / len).unwrap_or(u32::MAX);
    ends.saturating_add(estimate_bytes(content.len() - kept))
}

const LEFT_OUT: (&str, &str) = ("\n[… ", " bytes left out here …]\n");

/// How many bytes of `original` `content` keeps as its two ends, when it has `keep_ends`'s
/// form: a pointer, the head, a line saying how many bytes are left out, the tail.
/// The tail may hold the same words (a log of workmem's own), so each place they appear is
/// tried from the end.
fn kept_ends(original: &str, content: &str) -> Option<usize> {
    content.rmatch_indices(LEFT_OUT.1).find_map(|(at, _)| {
        let start = content[..at].rfind(LEFT_OUT.0)?;
        let left_out: usize = content[start + LEFT_OUT.0.len()..at].parse().ok()?;
        let tail = &content[at + LEFT_OUT.1.len()..];
        let head = original.get(..original.len().checked_sub(left_out)?.checked_sub(tail.len())?)?;
        (original.ends_with(tail) && content[..start].ends_with(head)).then(|| head.len() + tail.len())
    })
}

fn first_line(text: &str) -> String {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
    let mut short: String = line.chars().take(80).collect();
    if short.len() < line.len() {
        short.push('…');
    }
    short
}

/// `12-20`, or `12` for one: how notes and handles name the sequence numbers they cover.
fn span(seqs: &[u64]) -> String {
    match (seqs.first(), seqs.last()) {
        (Some(a), Some(b)) if a != b => format!("{a}-{b}"),
        (Some(a), _) => a.to_string(),
        _ => String::new(),
    }
}

/// How an entry reads in the archive file and in a summary request.
fn transcript(e: &Entry, names: &HashMap<&str, &str>, out: &mut String) {
    let m = &e.message;
    let who = match names.get(m.tool_call_id.as_str()) {
        Some(name) if m.role == "tool" => format!("tool {name}"),
        _ => m.role.clone(),
    };
    let _ = writeln!(out, "### #{} {who}\n", e.seq);
    if !m.content.is_empty() {
        out.push_str(m.content.trim_end());
        out.push_str("\n\n");
    }
    for c in &m.tool_calls {
        let _ = writeln!(out, "→ {}({})\n", c.name, c.arguments);
    }
}

/// The entries to replace, as runs of view indices each replaced by one message: adjacent
/// groups (conversation, all) or one tool output (tools).
fn pick(view: &[Entry], r: &Request, names: &HashMap<&str, &str>) -> Vec<Vec<usize>> {
    let old = candidates(view, r.keep_recent, &r.keep);
    let never: HashSet<&str> = r.never_compact.iter().map(String::as_str).collect();
    let mut picked: Vec<Vec<usize>> = Vec::new();
    match r.target {
        Target::Tools => {
            for g in &old {
                for i in g.start..g.end {
                    let m = &view[i].message;
                    let name = names.get(m.tool_call_id.as_str()).copied().unwrap_or("");
                    if m.role == "tool" && !never.contains(name) && shrinks(m, view[i].tokens, &placeholder_for(view, i, name)) {
                        picked.push(vec![i]);
                    }
                }
            }
        }
        Target::Conversation | Target::All => {
            let mut run: Vec<usize> = Vec::new();
            let mut last_end = usize::MAX;
            for g in &old {
                let m = &view[g.start].message;
                let fits = match r.target {
                    Target::Conversation => g.end == g.start + 1 && matches!(m.role.as_str(), "user" | "assistant"),
                    _ => !view[g.start..g.end]
                        .iter()
                        .any(|e| e.message.role == "tool" && never.contains(names.get(e.message.tool_call_id.as_str()).copied().unwrap_or(""))),
                };
                if !fits || g.start != last_end {
                    if run.len() > 1 || run.iter().any(|&i| !is_ours(&view[i].message)) {
                        picked.push(std::mem::take(&mut run));
                    }
                    run.clear();
                }
                if fits {
                    run.extend(g.start..g.end);
                    last_end = g.end;
                } else {
                    last_end = usize::MAX;
                }
            }
            if run.len() > 1 || run.iter().any(|&i| !is_ours(&view[i].message)) {
                picked.push(run);
            }
        }
    }
    picked.retain(|run| !run.is_empty());
    picked
}

/// Every entry in `range` whose content the safety net may offload in place, whatever its
/// group (calls keep their results, messages their tool calls): all but the pinned ones,
/// the notes that replaced runs (their handles name the whole run; one by `seq` would name
/// its first message only), and the never-compacted tools' outputs. A tool output is one
/// message whatever it says, so its handle by `seq` is exact.
fn offloadable(view: &[Entry], range: std::ops::Range<usize>, r: &Request, names: &HashMap<&str, &str>) -> Vec<Vec<usize>> {
    let pinned = pinned(view, &r.keep);
    range
        .filter(|&i| {
            let m = &view[i].message;
            let name = names.get(m.tool_call_id.as_str()).copied().unwrap_or("");
            let kept = pinned.contains(&i) || if m.role == "tool" { r.never_compact.iter().any(|n| n == name) } else { is_ours(m) };
            !kept && shrinks(m, view[i].tokens, &placeholder_for(view, i, name))
        })
        .map(|i| vec![i])
        .collect()
}

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

/// What takes the place of one message's content. It names `read_history` alone, the one
/// tool every host that compacts offers (the proxy offers no `read_file`; issue 48).
fn placeholder_for(view: &[Entry], i: usize, name: &str) -> String {
    let m = &view[i].message;
    let seq = view[i].seq;
    let what = if m.role == "tool" { format!("output of {name}") } else { format!("{} message", m.role) };
    format!(
        "{OFFLOADED}{what}: {} bytes, {} lines, first line: {:?}. Read it back with read_history {{\"seq\": \"{seq}\"}}]",
        m.content.len(),
        m.content.lines().count(),
        first_line(&m.content)
    )
}

/// The most messages one `read_history` reads (the host's limit on a range): a handle to
/// more is split into ranges of this many.
pub const READ_HISTORY_MAX: u64 = 200;

/// How a replacement says where its originals are: `read_history` of each range of at most
/// [`READ_HISTORY_MAX`] numbers from the first to the last it replaced (one that replaced an
/// earlier replacement covers that one's originals too).
fn handles(seqs: &[u64]) -> String {
    let (Some(&first), Some(&last)) = (seqs.first(), seqs.last()) else { return String::new() };
    let mut out = Vec::new();
    let mut from = first;
    while from <= last {
        let to = last.min(from.saturating_add(READ_HISTORY_MAX - 1));
        out.push(format!("read_history {{\"seq\": \"{}\"}}", span(&[from, to])));
        from = to.saturating_add(1);
        if to == u64::MAX {
            break;
        }
    }
    out.join(", ")
}

fn summary_request(view: &[Entry], picked: &[Vec<usize>], names: &HashMap<&str, &str>, target: Target) -> Vec<ChatMessage> {
    let mut transcript_text = String::new();
    for run in picked {
        for &i in run {
            let mut e = view[i].clone();
            // The request must fit the model's window whatever the outputs' size.
            if e.message.content.len() > 2000 {
                let cut = (0..=2000).rev().find(|&k| e.message.content.is_char_boundary(k)).unwrap_or(0);
                let rest = e.message.content.len() - cut;
                e.message.content.truncate(cut);
                let _ = write!(e.message.content, "\n[… {rest} more bytes]");
            }
            transcript(&e, names, &mut transcript_text);
        }
    }
    let ask = if target == Target::Tools {
        "Write one line for each tool output below, in the form `#<seq>: <what it showed that still matters>`."
    } else {
        "Summarize the history below for the agent that continues the task. Keep the goal, constraints, progress, \
         decisions, dead ends (what failed and why), files touched and next steps. End each line with the sequence \
         numbers it comes from, like (#12, #15)."
    };
    vec![
        ChatMessage { role: "system".into(), content: format!("{ask} Answer with that text only."), tool_call_id: String::new(), tool_calls: Vec::new() },
        ChatMessage { role: "user".into(), content: transcript_text, tool_call_id: String::new(), tool_calls: Vec::new() },
    ]
}

/// `#<seq>: text` lines of a tools summary.
fn gists(summary: &str) -> HashMap<u64, &str> {
    summary
        .lines()
        .filter_map(|l| {
            let (seq, text) = l.trim().trim_start_matches('-').trim().strip_prefix('#')?.split_once(':')?;
            Some((seq.trim().parse().ok()?, text.trim()))
        })
        .collect()
}

fn build(view: &[Entry], r: &Request, picked: &[Vec<usize>], names: &HashMap<&str, &str>, summary: Option<&str>) -> Compaction {
    let mut archive = String::new();
    let mut line = r.archive_lines + 1;
    let mut replacements = Vec::new();
    let mut replaced_at: HashMap<usize, (usize, ChatMessage)> = HashMap::new();
    let mut messages = 0u32;
    let gists = summary.map(gists).unwrap_or_default();
    for (n, run) in picked.iter().enumerate() {
        let entries: Vec<Entry> = run.iter().map(|&i| view[i].clone()).collect();
        let start_line = line;
        let archived_before = archive.len();
        if r.strategy == Strategy::Archive {
            for e in &entries {
                transcript(e, names, &mut archive);
            }
            line += u32::try_from(archive[archived_before..].lines().count()).unwrap_or(u32::MAX);
        }
        let message = if r.target == Target::Tools {
            let i = run[0];
            let name = names.get(view[i].message.tool_call_id.as_str()).copied().unwrap_or("a tool");
            let mut content = placeholder_for(view, i, name);
            if let Some(gist) = gists.get(&view[i].seq) {
                content.pop();
                let _ = write!(content, ". Gist: {gist}]");
            }
            ChatMessage { content, ..view[i].message.clone() }
        } else {
            let counts = ["user", "assistant", "tool"]
                .iter()
                .map(|role| (role, entries.iter().filter(|e| e.message.role == *role).count()))
                .filter(|(_, n)| *n > 0)
                .map(|(role, n)| format!("{n} {role}"))
                .collect::<Vec<_>>()
                .join(", ");
            let tokens: u32 = entries.iter().map(|e| e.tokens).sum();
            let seqs: Vec<u64> = entries.iter().map(|e| e.seq).collect();
            let handle = handles(&seqs);
            let content = match summary {
                // One summary for the whole compaction, in place of its last run.
                Some(s) if n + 1 == picked.len() => format!("{COMPACTED}history, summarized; the originals: {handle}]\n{s}"),
                Some(_) => format!("{COMPACTED}messages #{} ({counts}; {tokens} tokens): summarized further down. Read them back: {handle}]", span(&seqs)),
                None => format!(
                    "{COMPACTED}messages #{} ({counts}; {tokens} tokens) archived to {} (lines {start_line}-{}). Read them back: {handle}]",
                    span(&seqs),
                    r.archive_to,
                    line.saturating_sub(1)
                ),
            };
            ChatMessage { role: "assistant".into(), content, tool_call_id: String::new(), tool_calls: Vec::new() }
        };
        // A note no shorter than the run it names (one short message) saves nothing: the run
        // stays, and so does the archive as it was.
        let text = |e: &Entry| e.message.content.len() + e.message.tool_calls.iter().map(|c| c.name.len() + c.arguments.len()).sum::<usize>();
        if summary.is_none() && r.target != Target::Tools && message.content.len() >= entries.iter().map(text).sum() {
            archive.truncate(archived_before);
            line = start_line;
            continue;
        }
        messages += u32::try_from(entries.iter().filter(|e| !is_ours(&e.message)).count()).unwrap_or(u32::MAX);
        replaced_at.insert(run[0], (run.len(), message.clone()));
        replacements.push(Replacement { replaces: entries.iter().map(|e| e.seq).collect(), message });
    }
    if let (Some(s), true) = (summary, r.target != Target::Tools) {
        let _ = write!(archive, "## Summary of #{}\n\n{s}\n\n", picked.iter().flatten().map(|&i| view[i].seq.to_string()).collect::<Vec<_>>().join(", #"));
    }
    let mut after = Vec::with_capacity(view.len());
    let mut i = 0;
    while i < view.len() {
        match replaced_at.remove(&i) {
            Some((len, message)) => {
                let tokens = replacement_tokens((len == 1).then(|| &view[i]), &message.content);
                after.push(Entry { seq: view[i].seq, message, tokens });
                i += len;
            }
            None => {
                after.push(view[i].clone());
                i += 1;
            }
        }
    }
    let tokens_before = view.iter().map(|e| e.tokens).sum();
    let tokens_after = after.iter().map(|e| e.tokens).sum();
    let archived_to = (!archive.is_empty()).then_some(r.archive_to.as_str());
    let notice = notice(&replacements, messages, archived_to, tokens_before, tokens_after, false);
    Compaction { replacements, archive, view: after, messages, tokens_before, tokens_after, notice }
}

/// What was compacted and how to read it back.
fn notice(replacements: &[Replacement], messages: u32, archived_to: Option<&str>, before: u32, after: u32, automatic: bool) -> String {
    let ranges: Vec<String> = replacements.iter().map(|r| format!("#{}", span(&r.replaces))).collect();
    format!(
        "History was compacted{}: {messages} messages ({}) replaced{}, about {before} -> {after} history tokens. Any of them \
         can be read back with read_history {{\"seq\": \"N\"}}. Bring working-memory/overview.md up to date now if it does \
         not already hold what matters from them.",
        if automatic { " automatically, at the threshold" } else { "" },
        ranges.join(", "),
        archived_to.map(|p| format!(", archived to {p}")).unwrap_or_default()
    )
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
    let seqs: BTreeSet<u64> = after.iter().map(|e| e.seq).collect();
    if seqs.len() != after.len() || !after.windows(2).all(|w| w[0].seq < w[1].seq) {
        return Err("the view would not be ordered by sequence number".into());
    }
    Ok(())
}

/// What the safety net of spec 003 §3 works with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fallback {
    /// Tokens of the whole request, `view` included.
    pub used: u32,
    /// The request must come under this; compacting goes on to `goal`, lower, so that the
    /// next compaction is far off and the request stays append-only until then.
    pub threshold: u32,
    pub goal: u32,
    pub keep_recent: u32,
    pub archive_to: String,
    pub archive_lines: u32,
    pub never_compact: Vec<String>,
    pub keep: Vec<u64>,
}

/// Offloaded in place by the safety net, a message keeps as much of its beginning and end as
/// the goal leaves room for: what the next step most likely needs (the first lines of a log,
/// the error at its end) stays in the request, the rest a `read_history` away. Issue 24's
/// outputs larger than the compaction goal were offloaded whole, and the actions after them
/// lost what they needed. These are messages the model has seen: each keeps half its share at
/// `estimate`'s two bytes a token (giving them their whole share cost the 40 trajectories 2%
/// more for 0.6 points of recall).
fn keep_ends(step: &mut Compaction, before: &[Entry], outside: u32, goal: u32) {
    let now = outside + step.view.iter().map(|e| e.tokens).sum::<u32>();
    let Ok(count) = u32::try_from(step.replacements.len()) else { return };
    let share = u64::from(goal.saturating_sub(now) / count.max(1));
    for rep in &mut step.replacements {
        let Some(original) = before.iter().find(|e| Some(&e.seq) == rep.replaces.first()) else { continue };
        let half = usize::try_from(share).unwrap_or(usize::MAX).saturating_sub(rep.message.content.len() + 64) / 2;
        if half >= MIN_END
            && let Some(clipped) = with_ends(&rep.message.content, &original.message.content, half)
        {
            rep.message.content = clipped;
        }
    }
    recount(step, before);
}

/// The fewest bytes of each end a clipped message keeps.
const MIN_END: usize = 256;

/// `placeholder`, then `text`'s first and last `half` bytes (on character boundaries) with a
/// line saying how many bytes are left out between them: none when that is no shorter than
/// `text`.
fn with_ends(placeholder: &str, text: &str, half: usize) -> Option<String> {
    let (head, tail) = (text.floor_char_boundary(half), text.ceil_char_boundary(text.len().saturating_sub(half)));
    if tail <= head {
        return None;
    }
    let clipped = format!("{placeholder}\n{}{}{}{}{}", &text[..head], LEFT_OUT.0, tail - head, LEFT_OUT.1, &text[tail..]);
    (clipped.len() < text.len()).then_some(clipped)
}

/// The view's entries and tokens after `step`'s replacements were rewritten in place.
fn recount(step: &mut Compaction, before: &[Entry]) {
    for e in &mut step.view {
        if let Some(rep) = step.replacements.iter().find(|r| r.replaces.first() == Some(&e.seq)) {
            let original = before.iter().find(|o| o.seq == e.seq);
            e.tokens = replacement_tokens(original, &rep.message.content);
            e.message = rep.message.clone();
        }
    }
    step.tokens_after = step.view.iter().map(|e| e.tokens).sum();
}

/// The most tokens each of `sizes` may keep for all of them to fit in `room`: those under it
/// stay whole and share nothing of theirs; the rest split what is left alike.
fn level(sizes: &[u32], room: u32) -> u32 {
    let mut sorted = sizes.to_vec();
    sorted.sort_unstable();
    let mut left = room;
    for (k, &s) in sorted.iter().enumerate() {
        let n = u32::try_from(sorted.len() - k).unwrap_or(u32::MAX);
        if s.saturating_mul(n) > left {
            return left / n;
        }
        left -= s;
    }
    u32::MAX
}

/// The last step of the safety net, when what the model has seen is compacted and the request
/// is still over the threshold: the messages it has not seen (the outputs it asked for, a
/// user's message), which did not all fit whole under the threshold, share the room left under
/// the goal. Those that fit their share stay whole; the others keep their two ends, as much as
/// their share holds at their own bytes a token, with how many bytes are left out and the
/// `read_history` that reads them. Under the goal, not the threshold: the next request, which
/// adds to this one, then need not compact again at once (given the room under the threshold,
/// the net fired again on the next request and the 40 trajectories cost more for less recall:
/// issue 24). None that would not shrink.
fn clip_unseen(current: &[Entry], r: &Request, outside: u32, goal: u32) -> Option<Compaction> {
    let names = tool_names(current);
    let unseen = offloadable(current, unseen_from(current)..current.len(), r, &names);
    let sizes: Vec<u32> = unseen.iter().map(|run| current[run[0]].tokens).collect();
    let fixed = outside + current.iter().map(|e| e.tokens).sum::<u32>() - sizes.iter().sum::<u32>();
    let level = level(&sizes, goal.saturating_sub(fixed));
    let mut clipped: HashMap<usize, String> = HashMap::new();
    for run in &unseen {
        let e = &current[run[0]];
        if e.tokens <= level {
            continue;
        }
        let text = &e.message.content;
        let placeholder = placeholder_for(current, run[0], names.get(e.message.tool_call_id.as_str()).copied().unwrap_or("a tool"));
        // The placeholder and the line between the ends count as `estimate` does; the ends at
        // the message's own rate, as `replacement_tokens` counts them.
        let ends = level.saturating_sub(estimate_bytes(placeholder.len() + 64));
        let bytes = u64::from(ends) * text.len() as u64 / u64::from(e.tokens.max(1));
        let half = (usize::try_from(bytes).unwrap_or(usize::MAX) / 2).max(MIN_END);
        if let Some(c) = with_ends(&placeholder, text, half) {
            clipped.insert(run[0], c);
        }
    }
    let picked: Vec<Vec<usize>> = unseen.into_iter().filter(|run| clipped.contains_key(&run[0])).collect();
    if picked.is_empty() {
        return None;
    }
    let mut step = build(current, r, &picked, &names, None);
    for (rep, run) in step.replacements.iter_mut().zip(&picked) {
        rep.message.content = clipped.remove(&run[0]).unwrap_or_default();
    }
    recount(&mut step, current);
    Some(step)
}

/// The safety net: `None` while `used` is under the threshold; otherwise one compaction, by
/// archive (no model call), of old tool outputs first, then all old history, and when the
/// kept groups alone are still too large, of the largest contents among them, offloaded in
/// place (each call keeps its result), down to the goal. What the model has not seen yet is
/// never replaced by any of these: it is sent whole while the request fits under the
/// threshold, and clipped to its ends in the room under the goal when it does not
/// ([`clip_unseen`]). It may leave the request over the threshold only when what
/// remains cannot be compacted (the task, the memory tools' outputs, replacements).
pub fn fallback(view: &[Entry], f: &Fallback) -> Option<Compaction> {
    if f.used < f.threshold {
        return None;
    }
    let outside = f.used.saturating_sub(view.iter().map(|e| e.tokens).sum());
    let request = |target| Request {
        target,
        strategy: Strategy::Archive,
        keep_recent: f.keep_recent,
        archive_to: f.archive_to.clone(),
        archive_lines: f.archive_lines,
        never_compact: f.never_compact.clone(),
        min_free: 0,
        summary: None,
        keep: f.keep.clone(),
    };
    let mut done: Option<Compaction> = None;
    let mut current = view.to_vec();
    for step in 0..4 {
        let now = outside + current.iter().map(|e| e.tokens).sum::<u32>();
        if now <= f.goal || (step == 3 && now <= f.threshold) {
            break;
        }
        let mut r = request(if step == 1 { Target::All } else { Target::Tools });
        if step >= 2 {
            r.keep_recent = 0;
        }
        r.archive_lines += done.as_ref().map_or(0, |d| u32::try_from(d.archive.lines().count()).unwrap_or(0));
        let names = tool_names(&current);
        let made = match step {
            0 | 1 => Some(pick(&current, &r, &names)).filter(|p| !p.is_empty()).map(|picked| build(&current, &r, &picked, &names, None)),
            // The largest of what the model has seen, offloaded in place, keeping its ends.
            2 => {
                let mut picked = offloadable(&current, 0..unseen_from(&current), &r, &names);
                picked.sort_by_key(|run| std::cmp::Reverse(current[run[0]].tokens));
                let mut excess = now - f.goal;
                picked.retain(|run| {
                    let keep = excess > 0;
                    excess = excess.saturating_sub(current[run[0]].tokens);
                    keep
                });
                picked.sort();
                (!picked.is_empty()).then(|| {
                    let mut step = build(&current, &r, &picked, &names, None);
                    keep_ends(&mut step, &current, outside, f.goal);
                    step
                })
            }
            _ => clip_unseen(&current, &r, outside, f.goal),
        };
        let Some(step) = made else { continue };
        if step.tokens_after >= step.tokens_before || check(&current, &step.view, r.keep_recent, &r.keep).is_err() {
            continue;
        }
        current = step.view.clone();
        done = Some(match done {
            None => step,
            Some(mut d) => {
                d.replacements.extend(step.replacements);
                d.archive.push_str(&step.archive);
                d.messages += step.messages;
                d.view = step.view;
                d.tokens_after = step.tokens_after;
                d
            }
        });
    }
    if let Some(d) = &mut done {
        let archived_to = (!d.archive.is_empty()).then_some(f.archive_to.as_str());
        d.notice = notice(&d.replacements, d.messages, archived_to, d.tokens_before, d.tokens_after, true);
    }
    done
}
