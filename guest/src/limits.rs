//! How big a working memory may get (spec 000 leaves sizes open). Without bounds one 8.6 MB
//! learning made the next request 1.4 million tokens, and 27 updates of 10,000 learnings a
//! state no update could load. Each bound is checked where an update is validated, so
//! `validate` and `apply` agree, and a memory already past one can always be brought back
//! under: an update that does not make it show more is taken.

use crate::ids::Ids;
use crate::{Learning, MemoryState, Progress, Update, VerbatimEntry};

/// Bytes of one line of the memory: a key learning, a verbatim label, a reason, a progress item.
pub const MAX_LINE: usize = 2 * 1024;
/// Bytes of one verbatim snippet.
pub const MAX_SNIPPET: usize = 16 * 1024;
/// Bytes the memory shows: its progress and its entries not archived, what `render` puts in
/// front of every request (about 16k tokens).
pub const MAX_SHOWN: usize = 64 * 1024;
/// Bytes of archived entries the state keeps; past it the oldest are dropped from the state
/// (the update log keeps every update as it was written).
pub const MAX_ARCHIVED: usize = 1 << 20;

/// `what` (a learning, a label, a reason, a progress item) within [`MAX_LINE`].
pub fn line(what: &str, text: &str) -> Result<(), String> {
    within(what, text, MAX_LINE)
}

pub fn snippet(text: &str) -> Result<(), String> {
    within("a verbatim snippet", text, MAX_SNIPPET)
}

fn within(what: &str, text: &str, max: usize) -> Result<(), String> {
    if text.len() > max { Err(format!("{what} is {} bytes, more than the {max} a memory takes", text.len())) } else { Ok(()) }
}

/// Every line and snippet of `update` within its bound.
pub fn items(update: &Update) -> Vec<String> {
    let p = &update.progress;
    let progress = p.completed.iter().chain(&p.in_progress).chain(&p.remaining).map(|i| line("a progress item", i));
    let learnings = update.learnings.add.iter().flat_map(|a| [line("a key learning", &a.text), line("a reason", &a.reason)]);
    let verbatim = update.verbatim.add.iter().flat_map(|a| [line("a verbatim label", &a.label), line("a reason", &a.reason), snippet(&a.snippet)]);
    let archives = update.learnings.archive.iter().chain(&update.verbatim.archive).map(|a| line("a reason", &a.reason));
    progress.chain(learnings).chain(verbatim).chain(archives).filter_map(Result::err).collect()
}

fn progress_bytes(p: &Progress) -> usize {
    p.completed.iter().chain(&p.in_progress).chain(&p.remaining).map(String::len).sum()
}

fn learning_bytes(l: &Learning) -> usize {
    l.text.len() + l.reason.len()
}

fn verbatim_bytes(v: &VerbatimEntry) -> usize {
    v.label.len() + v.snippet.len() + v.reason.len()
}

/// Bytes the memory shows (see [`MAX_SHOWN`]).
pub fn shown(state: &MemoryState) -> usize {
    let learnings = state.learnings.iter().filter(|l| l.archived_at.is_empty()).map(learning_bytes);
    let verbatim = state.verbatim.iter().filter(|v| v.archived_at.is_empty()).map(verbatim_bytes);
    progress_bytes(&state.progress) + learnings.sum::<usize>() + verbatim.sum::<usize>()
}

/// Why `updates` may not be merged into `state`: the memory would show more than
/// [`MAX_SHOWN`], and more than it shows now. Entries an update both adds and archives are
/// counted as shown, so the estimate errs on the side of refusing.
pub fn too_large(state: &MemoryState, updates: &[Update]) -> Option<String> {
    let mut grown = 0i128;
    let mut progress = progress_bytes(&state.progress);
    for u in updates {
        if !u.progress.in_progress.is_empty() {
            let next = progress_bytes(&u.progress);
            grown += next as i128 - progress as i128;
            progress = next;
        }
        grown += u.learnings.add.iter().map(|a| a.text.len() + a.reason.len()).sum::<usize>() as i128;
        grown += u.verbatim.add.iter().map(|a| a.label.len() + a.snippet.len() + a.reason.len()).sum::<usize>() as i128;
    }
    // Updates that add nothing (that only archive, say) can only make the memory show less:
    // the state, which every apply would otherwise read whole, need not be read.
    if grown <= 0 {
        return None;
    }
    let mut archived = Ids::new();
    for a in updates.iter().flat_map(|u| u.learnings.archive.iter().chain(&u.verbatim.archive)) {
        archived.insert(&a.id);
    }
    let before = shown(state);
    let freed = state.learnings.iter().filter(|l| l.archived_at.is_empty() && archived.contains(l.id.as_str())).map(learning_bytes).sum::<usize>()
        + state.verbatim.iter().filter(|v| v.archived_at.is_empty() && archived.contains(v.id.as_str())).map(verbatim_bytes).sum::<usize>();
    let after = usize::try_from(before as i128 + grown).unwrap_or(0).saturating_sub(freed);
    (after > MAX_SHOWN && after > before).then(|| {
        format!(
            "after this update the memory would show {after} bytes (progress and entries not archived), more than the {MAX_SHOWN} it may; \
             it shows {before} now: ARCHIVE entries, or add shorter ones"
        )
    })
}

/// Drops the oldest archived entries while those kept pass [`MAX_ARCHIVED`]; returns the IDs
/// dropped.
pub fn prune(state: &mut MemoryState) -> Vec<String> {
    let archived = |state: &MemoryState| {
        state.learnings.iter().filter(|l| !l.archived_at.is_empty()).map(learning_bytes).sum::<usize>()
            + state.verbatim.iter().filter(|v| !v.archived_at.is_empty()).map(verbatim_bytes).sum::<usize>()
    };
    let mut over = archived(state).saturating_sub(MAX_ARCHIVED);
    let mut dropped = Vec::new();
    if over == 0 {
        return dropped;
    }
    // Oldest first within each kind (entries keep the order they were added in), learnings
    // before verbatim entries.
    let mut keep = |archived: bool, id: &str, bytes: usize| {
        if over > 0 && archived {
            over = over.saturating_sub(bytes);
            dropped.push(id.to_string());
            false
        } else {
            true
        }
    };
    state.learnings.retain(|l| keep(!l.archived_at.is_empty(), &l.id, learning_bytes(l)));
    state.verbatim.retain(|v| keep(!v.archived_at.is_empty(), &v.id, verbatim_bytes(v)));
    dropped
}
