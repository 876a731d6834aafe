//! Which entries a compaction takes: the view in groups (a tool call with its results), what
//! is pinned or recent, and the picks of each target within the request's bounds.

use super::*;

/// A contiguous run of the view: one message, or an assistant message and its results.
#[derive(Debug, Clone, Copy)]
pub(super) struct Group {
    pub start: usize,
    pub end: usize,
}

pub(super) fn groups(view: &[Entry]) -> Vec<Group> {
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
pub(super) fn pinned(view: &[Entry], keep: &[u64]) -> Vec<usize> {
    let task = view.iter().rposition(|e| e.message.role == "user" && !is_ours(&e.message));
    (0..view.len()).filter(|&i| Some(i) == task || keep.contains(&view[i].seq)).collect()
}

pub(super) const OFFLOADED: &str = "[offloaded ";

pub(super) const COMPACTED: &str = "[compacted ";

/// What reads as a replacement the engine wrote. Only a guess, since a tool output may begin
/// with the same words (issue 24's generated outputs do): it names the task and tells a run
/// of one apart, never what a tool output is. Whether an output gains by being offloaded
/// is its size against its placeholder's, whatever it says, so that an output that imitates a
/// placeholder cannot stay whole for good.
pub(super) fn is_ours(m: &ChatMessage) -> bool {
    m.content.starts_with(OFFLOADED) || m.content.starts_with(COMPACTED)
}

/// Where the entries the model has not seen begin: after its last answer. Each request
/// carries the view, and the model answered the last one it got, so it has seen what came
/// before its last answer; what came after (the outputs it asked for, a user's message) it
/// has not. Such an entry is never replaced whole (issue 48: the fallback offloaded the
/// newest output before the model read it in 9 of 30 steps at an 8k window); one too large
/// for the room keeps its two ends ([`clip_unseen`]).
pub(super) fn unseen_from(view: &[Entry]) -> usize {
    view.iter().rposition(|e| e.message.role == "assistant" && !is_ours(&e.message)).map_or(0, |i| i + 1)
}

/// The groups that may be compacted: all but the last `keep_recent`, the pinned ones and
/// those the model has not seen all of.
pub(super) fn candidates(view: &[Entry], keep_recent: u32, keep: &[u64]) -> Vec<Group> {
    let all = groups(view);
    let kept_from = all.len().saturating_sub(keep_recent as usize);
    let pinned = pinned(view, keep);
    let unseen = unseen_from(view);
    all[..kept_from].iter().copied().filter(|g| g.end <= unseen && !pinned.iter().any(|p| (g.start..g.end).contains(p))).collect()
}

/// Whether replacing `m` by `placeholder` makes it smaller, by its own content: an assistant
/// message's tokens count its tool calls, which stay, so a message of calls with no text once
/// became a placeholder of 200 bytes where it had none.
pub(super) fn shrinks(m: &ChatMessage, tokens: u32, placeholder: &str) -> bool {
    m.content.len() > placeholder.len() && tokens > estimate(placeholder)
}

pub(super) fn tool_names(view: &[Entry]) -> HashMap<&str, &str> {
    view.iter().flat_map(|e| e.message.tool_calls.iter()).map(|c| (c.id.as_str(), c.name.as_str())).collect()
}

/// The entries to replace, as runs of view indices each replaced by one message: adjacent
/// groups (conversation, all) or one tool output (tools).
pub(super) fn pick(view: &[Entry], r: &Request, names: &HashMap<&str, &str>) -> Vec<Vec<usize>> {
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

/// Every entry in `range` whose content the fallback may offload in place, whatever its
/// group (calls keep their results, messages their tool calls): all but the pinned ones,
/// the notes that replaced runs (their handles name the whole run; one by `seq` would name
/// its first message only), and the never-compacted tools' outputs. A tool output is one
/// message whatever it says, so its handle by `seq` is exact.
pub(super) fn offloadable(view: &[Entry], range: std::ops::Range<usize>, r: &Request, names: &HashMap<&str, &str>) -> Vec<Vec<usize>> {
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
