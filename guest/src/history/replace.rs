//! What takes the place of compacted entries: placeholders with their handles, archive
//! transcripts, a summary's gists, the tokens each costs, and the notice that says so.

use super::*;

/// A replacement's tokens before the host counts them: two bytes a token and the message's
/// framing. Cautious, since what the engine writes (numbers, paths, punctuation) takes about
/// three bytes a token in o200k_base, so that a compaction it plans frees tokens as the
/// provider counts them: at four bytes a token, and at three, its property test found
/// compactions whose placeholders took more than they replaced.
pub(super) fn estimate(text: &str) -> u32 {
    estimate_bytes(text.len())
}

pub(super) fn estimate_bytes(len: usize) -> u32 {
    u32::try_from(len.div_ceil(2) + 4).unwrap_or(u32::MAX)
}

/// What a replacement counts as until the host counts it: `estimate`, except the ends of the
/// one message it replaces that it keeps in place (see `keep_ends`), which count at that
/// message's own rate, as the host counted it. Every reader of a compaction counts it so
/// (`build`, `keep_ends`, `apply`).
pub(super) fn replacement_tokens(original: Option<&Entry>, content: &str) -> u32 {
    let Some((o, kept)) = original.and_then(|o| Some((o, kept_ends(&o.message.content, content)?))) else { return estimate(content) };
    let len = o.message.content.len().max(1) as u64;
    let ends = u32::try_from(u64::from(o.tokens) * kept as u64 / len).unwrap_or(u32::MAX);
    ends.saturating_add(estimate_bytes(content.len() - kept))
}

pub(super) const LEFT_OUT: (&str, &str) = ("\n[… ", " bytes left out here …]\n");

/// How many bytes of `original` `content` keeps as its two ends, when it has `keep_ends`'s
/// form: a pointer, the head, a line saying how many bytes are left out, the tail.
/// The tail may hold the same words (a log of workmem's own), so each place they appear is
/// tried from the end.
pub(super) fn kept_ends(original: &str, content: &str) -> Option<usize> {
    content.rmatch_indices(LEFT_OUT.1).find_map(|(at, _)| {
        let start = content[..at].rfind(LEFT_OUT.0)?;
        let left_out: usize = content[start + LEFT_OUT.0.len()..at].parse().ok()?;
        let tail = &content[at + LEFT_OUT.1.len()..];
        let head = original.get(..original.len().checked_sub(left_out)?.checked_sub(tail.len())?)?;
        (original.ends_with(tail) && content[..start].ends_with(head)).then(|| head.len() + tail.len())
    })
}

pub(super) fn first_line(text: &str) -> String {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
    let mut short: String = line.chars().take(80).collect();
    if short.len() < line.len() {
        short.push('…');
    }
    short
}

/// `12-20`, or `12` for one: how notes and handles name the sequence numbers they cover.
pub(super) fn span(seqs: &[u64]) -> String {
    match (seqs.first(), seqs.last()) {
        (Some(a), Some(b)) if a != b => format!("{a}-{b}"),
        (Some(a), _) => a.to_string(),
        _ => String::new(),
    }
}

/// How an entry reads in the archive file and in a summary request.
pub(super) fn transcript(e: &Entry, names: &HashMap<&str, &str>, out: &mut String) {
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

/// What takes the place of one message's content. It names `read_history` alone, the one
/// tool every host that compacts offers (the proxy offers no `read_file`; issue 48).
pub(super) fn placeholder_for(view: &[Entry], i: usize, name: &str) -> String {
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

/// How a replacement says where its originals are: `read_history` of each range of at most
/// [`READ_HISTORY_MAX`] numbers from the first to the last it replaced (one that replaced an
/// earlier replacement covers that one's originals too).
pub(super) fn handles(seqs: &[u64]) -> String {
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

pub(super) fn summary_request(view: &[Entry], picked: &[Vec<usize>], names: &HashMap<&str, &str>, target: Target) -> Vec<ChatMessage> {
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
pub(super) fn gists(summary: &str) -> HashMap<u64, &str> {
    summary
        .lines()
        .filter_map(|l| {
            let (seq, text) = l.trim().trim_start_matches('-').trim().strip_prefix('#')?.split_once(':')?;
            Some((seq.trim().parse().ok()?, text.trim()))
        })
        .collect()
}

pub(super) fn build(view: &[Entry], r: &Request, picked: &[Vec<usize>], names: &HashMap<&str, &str>, summary: Option<&str>) -> Compaction {
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
pub(super) fn notice(replacements: &[Replacement], messages: u32, archived_to: Option<&str>, before: u32, after: u32, automatic: bool) -> String {
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
