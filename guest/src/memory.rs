//! A working memory that lives in the engine: loaded once, changed by updates, and saved in
//! the one serialized form every runtime shares (`state.json`). An applied update also
//! yields its update-log record, so every host writes the same log.

use crate::{Diagnostic, MemoryState, ParseOutcome, Update, json};
use serde::{Deserialize, Serialize};

/// The format marker `state.json` starts with.
pub const FORMAT: &str = "workmem-memory/1";

/// What an applied update returns besides what it changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Wants {
    pub overview: bool,
    pub state: bool,
}

/// An applied update (see `applied` in wit/memory.wit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    pub seq: u32,
    pub diff: String,
    pub added: Vec<String>,
    pub archived: Vec<String>,
    pub ignored: Vec<String>,
    pub warnings: Vec<Diagnostic>,
    pub log_entry: String,
    pub overview: Option<String>,
    pub state: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Memory {
    state: MemoryState,
    /// Updates applied so far: the last `seq` of the update log.
    updates: u32,
}

/// `state.json`, field for field. Written from borrowed parts so saving copies nothing.
#[derive(Serialize)]
struct SavedRef<'a> {
    format: &'a str,
    updates: u32,
    #[serde(flatten)]
    state: &'a MemoryState,
}

/// What `state.json` is read into: [`MemoryState`]'s fields beside `format` and `updates`,
/// not flattened into it, since `#[serde(flatten)]` reads the whole text into serde's
/// buffered `Content` first, and compiles every visitor of the state a second time for it.
#[derive(Deserialize)]
struct Saved {
    format: String,
    updates: u32,
    progress: crate::Progress,
    learnings: Vec<crate::Learning>,
    verbatim: Vec<crate::VerbatimEntry>,
    next_learning: u32,
    next_verbatim: u32,
}

/// A loaded memory's IDs: each `<prefix>-<n>` once, and `next` (what the next ADD gets)
/// above every one in use, so no ID is ever handed out twice.
fn check_ids<'a>(prefix: &str, ids: impl Iterator<Item = &'a str>, next: u32, field: &str) -> Result<(), String> {
    if next == 0 {
        return Err(format!("`{field}` is 0; IDs start at {prefix}-1"));
    }
    let mut seen = std::collections::BTreeSet::new();
    for id in ids {
        let n = id.strip_prefix(prefix).and_then(|r| r.strip_prefix('-')).and_then(|n| n.parse::<u32>().ok()).filter(|n| *n >= 1);
        let n = n.ok_or_else(|| format!("{id:?} is not a {prefix}-<number> ID"))?;
        if !seen.insert(n) {
            return Err(format!("{id} appears twice"));
        }
        if n >= next {
            return Err(format!("`{field}` is {next}, but {id} is already in use: the next ID must be above every ID in use"));
        }
    }
    Ok(())
}

/// One line of the update log.
#[cfg_attr(test, derive(Serialize))]
struct LogEntry<'a> {
    seq: u32,
    at: &'a str,
    added: &'a [String],
    archived: &'a [String],
    ignored: &'a [String],
    diff: &'a str,
    /// The DSL exactly as applied; absent for updates built by hand (`merge`).
    #[cfg_attr(test, serde(skip_serializing_if = "Option::is_none"))]
    input: Option<&'a str>,
    #[cfg_attr(test, serde(skip_serializing_if = "Option::is_none"))]
    updates: Option<&'a [Update]>,
}

impl LogEntry<'_> {
    /// The record as `serde_json::to_string` writes it (a test holds it to that), with its
    /// text written sixteen bytes at a time ([`json`]).
    fn to_json(&self) -> String {
        let mut out = String::with_capacity(128 + self.diff.len() + self.input.map_or(0, str::len));
        out.push_str("{\"seq\":");
        crate::ids::push_number(&mut out, self.seq.into());
        out.push_str(",\"at\":");
        json::string(&mut out, self.at);
        for (name, items) in [("added", self.added), ("archived", self.archived), ("ignored", self.ignored)] {
            out.push_str(",\"");
            out.push_str(name);
            out.push_str("\":");
            json::strings(&mut out, items);
        }
        out.push_str(",\"diff\":");
        json::string(&mut out, self.diff);
        if let Some(input) = self.input {
            out.push_str(",\"input\":");
            json::string(&mut out, input);
        }
        if let Some(updates) = self.updates {
            out.push_str(",\"updates\":");
            out.push_str(&serde_json::to_string(updates).expect("updates serialize"));
        }
        out.push('}');
        out
    }
}

impl Memory {
    pub fn new() -> Self {
        Memory::default()
    }

    pub fn load(text: &str) -> Result<Self, String> {
        let saved: Saved = serde_json::from_str(text).map_err(|e| format!("not a serialized workmem memory: {e}"))?;
        if saved.format != FORMAT {
            return Err(format!("the memory's format is {:?}; this engine reads {FORMAT:?}", saved.format));
        }
        check_ids("KL", saved.learnings.iter().map(|l| l.id.as_str()), saved.next_learning, "next_learning")?;
        check_ids("VC", saved.verbatim.iter().map(|v| v.id.as_str()), saved.next_verbatim, "next_verbatim")?;
        if saved.updates == u32::MAX {
            return Err(format!("`updates` is {}: no further update could be numbered", u32::MAX));
        }
        let Saved { progress, learnings, verbatim, next_learning, next_verbatim, updates, .. } = saved;
        Ok(Memory { state: MemoryState { progress, learnings, verbatim, next_learning, next_verbatim }, updates })
    }

    pub fn save(&self) -> String {
        let mut text = serde_json::to_string_pretty(&SavedRef { format: FORMAT, updates: self.updates, state: &self.state }).expect("a memory serializes");
        text.push('\n');
        text
    }

    pub fn state(&self) -> &MemoryState {
        &self.state
    }

    pub fn updates(&self) -> u32 {
        self.updates
    }

    pub fn validate(&self, text: &str) -> ParseOutcome {
        crate::validate(text, &self.state)
    }

    pub fn render(&self) -> String {
        crate::render(&self.state)
    }

    pub fn update_prompt(&self, task: &str) -> String {
        crate::update_prompt(&self.state, task)
    }

    /// Errors: the diagnostics, at least one an error; the memory is then unchanged.
    pub fn apply(&mut self, text: &str, now: &str, wants: Wants) -> Result<Applied, Vec<Diagnostic>> {
        let outcome = crate::apply(std::mem::take(&mut self.state), text, now);
        let m = outcome.merged;
        self.state = m.state;
        if !outcome.ok {
            return Err(outcome.diagnostics);
        }
        Ok(self.applied(m.diff, m.added, m.archived, m.ignored, outcome.diagnostics, now, Some(text), None, wants))
    }

    /// Errors: an update breaks an invariant; none is applied.
    pub fn merge(&mut self, updates: &[Update], now: &str, wants: Wants) -> Result<Applied, String> {
        let m = crate::merge(self.state.clone(), updates.to_vec(), now)?;
        self.state = m.state;
        Ok(self.applied(m.diff, m.added, m.archived, m.ignored, Vec::new(), now, None, Some(updates), wants))
    }

    #[allow(clippy::too_many_arguments)] // the parts of one log record, named where it is written
    fn applied(
        &mut self,
        diff: String,
        added: Vec<String>,
        archived: Vec<String>,
        ignored: Vec<String>,
        warnings: Vec<Diagnostic>,
        at: &str,
        input: Option<&str>,
        updates: Option<&[Update]>,
        wants: Wants,
    ) -> Applied {
        self.updates += 1;
        let seq = self.updates;
        let entry = LogEntry { seq, at, added: &added, archived: &archived, ignored: &ignored, diff: &diff, input, updates };
        let log_entry = entry.to_json();
        Applied {
            seq,
            log_entry,
            overview: wants.overview.then(|| self.render()),
            state: wants.state.then(|| self.save()),
            diff,
            added,
            archived,
            ignored,
            warnings,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::LogEntry;
    use crate::{LearningAdd, Update};

    #[test]
    fn the_log_record_is_what_serde_json_writes() {
        let mut update = Update::default();
        update.learnings.add.push(LearningAdd { reason: "it \"matters\"\n".into(), text: "tab\there".into() });
        let ids = ["KL-1".to_string(), "KL-\u{1}2".to_string()];
        let ignored = ["! VC-9 is not there\\".to_string()];
        for (input, updates) in [(Some("CURRENT_PROGRESS:\n  - \u{7f}é\r\n"), None), (None, Some(std::slice::from_ref(&update))), (None, None)] {
            for (added, archived) in [(&ids[..], &[][..]), (&[][..], &ids[..])] {
                let entry =
                    LogEntry { seq: 42, at: "2026-12-02T20:00:00Z", added, archived, ignored: &ignored, diff: "Key Learnings\n+ KL-1 \"x\"\n", input, updates };
                assert_eq!(entry.to_json(), serde_json::to_string(&entry).unwrap());
            }
        }
    }
}
