//! Read back for real: every handle a replacement gives the model is followed, as the model
//! would follow it, and must give back what it replaced. `read_history` with the handle's
//! numbers must return each original's bytes; the archive lines a replacement cites must
//! hold the text it replaced (an earlier replacement, when it compacted one again).

use std::collections::HashMap;
use workmem_agent::Result;
use workmem_store::{Entry, Message, Session};

/// Replaced messages checked, and how many of them read back whole through every handle.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadBack {
    pub checked: u32,
    pub ok: u32,
}

/// The numbers of each `read_history {"seq": "…"}` in a replacement, as the model would copy them.
fn history_handles(text: &str) -> Vec<&str> {
    const HANDLE: &str = "read_history {\"seq\": \"";
    text.match_indices(HANDLE).filter_map(|(at, _)| text[at + HANDLE.len()..].split('"').next()).collect()
}

/// `(path, first line, last line)` of the last `archived to PATH (lines A-B)` or `read_file
/// PATH (lines A-B)`: a placeholder quotes its output's first line before its own handle, and
/// that line may hold the same words (issue 24's generated outputs imitate a compaction note).
fn archive_handle(text: &str) -> Option<(&str, usize, usize)> {
    let after = |word: &str| text.rfind(word).map(|i| i + word.len());
    let at = after("archived to ").max(after("read_file "))?;
    let rest = &text[at..];
    let (path, rest) = rest.split_once(" (lines ")?;
    let (range, _) = rest.split_once(')')?;
    let (a, b) = range.split_once('-')?;
    Some((path, a.parse().ok()?, b.parse().ok()?))
}

fn holds(text: &str, m: &Message) -> bool {
    text.contains(m.content.trim_end()) && m.tool_calls.iter().all(|c| text.contains(&c.arguments))
}

pub fn check(session: &Session) -> Result<ReadBack> {
    let mut out = ReadBack::default();
    let mut originals: HashMap<u64, Message> = HashMap::new();
    // What the view showed at each seq when a compaction replaced it.
    let mut shown: HashMap<u64, Message> = HashMap::new();
    for record in session.records()? {
        match record.entry {
            Entry::Message(m) => {
                originals.insert(record.seq, m.clone());
                shown.insert(record.seq, m);
            }
            Entry::Compaction(c) => {
                for r in c.replacements {
                    // The handles are on the first line; what follows may be the original's own
                    // text (an offloaded message keeps its ends), which is not followed.
                    let handle = r.message.content.lines().next().unwrap_or_default();
                    let reads: Vec<_> = history_handles(handle).into_iter().map(|spec| workmem_agent::compact::read_history(session, spec)).collect();
                    let read: Option<String> = (!reads.is_empty()).then(|| reads.iter().flatten().cloned().collect());
                    let failed = reads.iter().any(std::result::Result::is_err);
                    let archived = archive_handle(handle).map(|(path, a, b)| {
                        // The file's own bytes, line endings and all.
                        let text = session.memory_files().read(path).unwrap_or_default();
                        text.split_inclusive('\n').skip(a.saturating_sub(1)).take((b + 1).saturating_sub(a)).collect::<String>()
                    });
                    for seq in &r.replaces {
                        out.checked += 1;
                        let by_history = !failed && matches!((&read, originals.get(seq)), (Some(text), Some(m)) if holds(text, m));
                        let by_archive = match (&archived, shown.get(seq)) {
                            (Some(text), Some(m)) => holds(text, m),
                            (None, _) => true,
                            _ => false,
                        };
                        out.ok += u32::from(by_history && by_archive);
                    }
                    if let Some(&first) = r.replaces.first() {
                        shown.insert(first, r.message);
                    }
                }
            }
            // The replay's agents withdraw nothing; what was withdrawn has nothing to read back.
            Entry::Withdrawal(_) => {}
        }
    }
    Ok(out)
}
