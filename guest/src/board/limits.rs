//! How big a board and what is written to it may get. Every op is checked before it
//! changes anything, so a board past a limit is refused by name and stays as it was; a host
//! that stores boards can rely on these bounds (spec 002 left size limits open).

use super::{BoardError, NudgeTarget, Op};

/// Bytes in any one text field (a title, a rationale, a message).
pub const MAX_TEXT: usize = 16 * 1024;
/// Bytes of a board's ID: a key every store indexes and PostgreSQL's NOTIFY carries (whose
/// payload must stay under 8,000 bytes), as a document's IDs are.
pub const MAX_ID: usize = 256;
/// Entries in any one list field (dependencies, alternatives, affected tasks).
pub const MAX_LIST: usize = 256;
/// Bytes of an op given as JSON: room for every field at its limit, and no more.
pub const MAX_OP_JSON: usize = 1 << 20;
/// Records of each kind on one board (tasks, decisions, discoveries, artifacts, nudges).
pub const MAX_RECORDS: usize = 100_000;
/// Bytes of text a board's ops may write in all, every field counted as it arrives: what
/// the engine's 256 MiB must hold loaded, rendered and saved, with room to spare (4,095 tasks
/// of 16 KB each were taken, after which nothing could load the board).
pub const MAX_BYTES: u64 = 8 << 20;

/// A board's ID names it in URLs, file names, terminals and pages: it may not be a path or
/// hide what it holds. The same rule as the host stores' for their IDs; the shared list
/// `tests/data/ids.json` holds both to it.
pub(super) fn id(id: &str) -> Result<(), BoardError> {
    let hidden = |c: char| {
        c.is_control()
            || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{2069}' | '\u{feff}' | '\u{e0000}'..='\u{e007f}')
    };
    if id == "." || id == ".." || id.chars().any(|c| hidden(c) || c == '/' || c == '\\') { Err(BoardError::InvalidId(id.into())) } else { Ok(()) }
}

/// The field's bytes, within [`MAX_TEXT`].
pub(super) fn text(field: &'static str, value: &str) -> Result<usize, BoardError> {
    if value.len() > MAX_TEXT { Err(BoardError::TooLarge { field: field.into(), limit: MAX_TEXT }) } else { Ok(value.len()) }
}

/// The list's bytes, within [`MAX_LIST`] entries of [`MAX_TEXT`].
pub(super) fn list(field: &'static str, values: &[String]) -> Result<usize, BoardError> {
    if values.len() > MAX_LIST {
        return Err(BoardError::TooLarge { field: field.into(), limit: MAX_LIST });
    }
    values.iter().map(|v| text(field, v)).sum()
}

/// Refuses an op that would take the board's text past [`MAX_BYTES`]; one that adds none
/// is taken on a board already past it.
pub(super) fn total(held: u64, adds: usize) -> Result<(), BoardError> {
    if adds > 0 && held.saturating_add(adds as u64) > MAX_BYTES {
        Err(BoardError::TooLarge { field: "the text it holds, in bytes,".into(), limit: MAX_BYTES as usize })
    } else {
        Ok(())
    }
}

/// Refuses a record of a kind the board already holds `MAX_RECORDS` of.
pub(super) fn room(field: &'static str, held: usize) -> Result<(), BoardError> {
    if held >= MAX_RECORDS { Err(BoardError::TooLarge { field: field.into(), limit: MAX_RECORDS }) } else { Ok(()) }
}

/// Every text and list an op carries, within bounds: the bytes it adds to the board.
pub(super) fn check(actor: &str, now: &str, op: &Op) -> Result<usize, BoardError> {
    let carried = match op {
        Op::AddTask { title, description, depends_on, .. } => text("title", title)? + text("description", description)? + list("depends_on", depends_on)?,
        Op::AddDependency { task, on } => text("task", task)? + text("on", on)?,
        Op::Assign { task, agent } => text("task", task)? + text("agent", agent)?,
        Op::SetStatus { task, .. } | Op::Heartbeat { task } => text("task", task)?,
        Op::Reclaim { task, stale_before } => text("task", task)? + text("stale_before", stale_before)?,
        Op::Complete { task, summary, next_steps } => text("task", task)? + text("summary", summary)? + list("next_steps", next_steps)?,
        Op::Review { task, comments, .. } => text("task", task)? + text("comments", comments)?,
        Op::Decide { question, choice, alternatives, rationale, affects_tasks, .. } => {
            text("question", question)?
                + text("choice", choice)?
                + text("rationale", rationale)?
                + list("alternatives", alternatives)?
                + list("affects_tasks", affects_tasks)?
        }
        Op::Discover { content, affects_tasks, promote_to_core, .. } => {
            text("content", content)? + text("promote_to_core", promote_to_core.as_deref().unwrap_or_default())? + list("affects_tasks", affects_tasks)?
        }
        Op::Artifact { path, description, task, checksum, .. } => {
            text("path", path)? + text("description", description)? + text("task", task)? + text("checksum", checksum)?
        }
        Op::Nudge { target, message, .. } => {
            let agent = match target {
                NudgeTarget::Agent(agent) => text("target agent", agent)?,
                _ => 0,
            };
            agent + text("message", message)?
        }
        Op::Approve { decision } => text("decision", decision)?,
        Op::Close { .. } | Op::Archive => 0,
    };
    let stamp = text("actor", actor)? + text("now", now)?;
    // What only replaces a field (a status, an assignee, a heartbeat) leaves the board no
    // larger: counting it would fill a board that merely lives long.
    let replaces = matches!(op, Op::Assign { .. } | Op::SetStatus { .. } | Op::Heartbeat { .. } | Op::Reclaim { .. } | Op::Close { .. } | Op::Archive);
    Ok(if replaces { 0 } else { stamp + carried })
}
