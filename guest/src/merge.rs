//! Spec 000 §3 steps 4-6 and §6: validation against the stored state, the merge in the
//! spec's order, and the human-readable diff that goes into the update log.

use crate::ids::{self, Ids};
use crate::parse::{self, Parsed};
use crate::{ApplyOutcome, ArchiveOp, ERROR, Learning, MemoryState, MergeOutcome, Progress, Update, VerbatimEntry, WARNING};
use crate::{limits, scan};
use std::collections::{BTreeMap, BTreeSet};

/// What learnings and verbatim entries have in common, so archiving is written once.
trait Entry {
    /// The section heading its diff lines go under.
    const HEADING: &'static str;
    fn id(&self) -> &str;
    fn title(&self) -> &str;
    fn is_archived(&self) -> bool;
    fn archive(&mut self, reason: &str, at: &str);
}

macro_rules! entry {
    ($ty:ty, $heading:literal, $title:ident) => {
        impl Entry for $ty {
            const HEADING: &'static str = $heading;
            fn id(&self) -> &str {
                &self.id
            }
            fn title(&self) -> &str {
                &self.$title
            }
            fn is_archived(&self) -> bool {
                !self.archived_at.is_empty()
            }
            fn archive(&mut self, reason: &str, at: &str) {
                self.archive_reason = reason.to_string();
                self.archived_at = at.to_string();
            }
        }
    };
}
entry!(Learning, "Key Learnings", text);
entry!(VerbatimEntry, "Verbatim Context", label);

/// The ARCHIVEs of one update checked against the entries, in time linear in both (up to a
/// logarithm): an update of a million ARCHIVE bullets must not take minutes under the lock.
struct Archives<'a> {
    /// Entry index by ID, for updates with many ARCHIVEs (a few are found faster by a scan).
    index: Option<BTreeMap<&'a str, usize>>,
    /// IDs this update archived before.
    earlier: Ids<'a>,
}

impl<'a> Archives<'a> {
    fn new<E: Entry>(entries: &'a [E], ops: &[ArchiveOp]) -> Self {
        // Inserted one by one: collected, the map sorts its pairs first, and that sort was a
        // copy of the standard library's of its own in the component.
        let index = (ops.len() > 16).then(|| {
            let mut index = BTreeMap::new();
            for (i, e) in entries.iter().enumerate() {
                index.insert(e.id(), i);
            }
            index
        });
        Archives { index, earlier: Ids::new() }
    }

    /// The entry an ARCHIVE of `id` archives, or why it is ignored: the ID is unknown,
    /// already archived, or named twice in one update.
    fn take<E: Entry>(&mut self, entries: &[E], id: &'a str) -> Result<usize, String> {
        if !self.earlier.insert(id) {
            return Err(format!("{id} is archived twice in this update; the second ARCHIVE is ignored"));
        }
        let found = match &self.index {
            Some(index) => index.get(id).copied(),
            None => entries.iter().position(|e| scan::equal(e.id(), id)),
        };
        match found {
            None => Err(format!("{id} does not exist; its ARCHIVE is ignored")),
            Some(i) if entries[i].is_archived() => Err(format!("{id} is already archived; its ARCHIVE is ignored")),
            Some(i) => Ok(i),
        }
    }
}

/// `parse`, plus a warning for each ARCHIVE that the merge would ignore.
pub fn validate(text: &str, state: &MemoryState) -> Parsed {
    let mut parsed = parse::parse(text);
    let mut warnings = archive_warnings(&state.learnings, &parsed.update.learnings.archive, &parsed.learning_archive_at);
    warnings.extend(archive_warnings(&state.verbatim, &parsed.update.verbatim.archive, &parsed.verbatim_archive_at));
    for w in warnings {
        parsed.push(w);
    }
    if let Some(problem) = limits::too_large(state, std::slice::from_ref(&parsed.update)) {
        parsed.push(parse::diagnostic(ERROR, 1, 1, problem));
    }
    parsed
}

fn archive_warnings<E: Entry>(entries: &[E], ops: &[ArchiveOp], at: &[(u32, u32)]) -> Vec<crate::Diagnostic> {
    let mut archives = Archives::new(entries, ops);
    let mut out = Vec::new();
    for (op, &(line, column)) in ops.iter().zip(at) {
        if let Err(problem) = archives.take(entries, &op.id) {
            out.push(parse::diagnostic(WARNING, line, column, problem));
        }
    }
    out
}

/// `text.trim().is_empty()`, answered at the first byte when it is ASCII and not a space (a
/// call to `trim` per item, in a component, cost a hundred instructions each).
fn blank(text: &str) -> bool {
    !matches!(text.as_bytes().first(), Some(0x21..=0x7f)) && text.trim().is_empty()
}

/// The invariants `parse` guarantees, checked again for updates built by hand.
fn check(update: &Update) -> Vec<String> {
    let mut problems = Vec::new();
    let p = &update.progress;
    if p.in_progress.is_empty() && !(p.completed.is_empty() && p.remaining.is_empty()) {
        problems.push("Current Progress needs at least one In Progress item".to_string());
    }
    for item in p.completed.iter().chain(&p.in_progress).chain(&p.remaining) {
        if blank(item) || scan::has_newline(item) {
            problems.push(format!("progress item {item:?} must be one non-empty line"));
        }
    }
    let reasons = update.learnings.add.iter().map(|a| &a.reason).chain(update.verbatim.add.iter().map(|a| &a.reason));
    let archive_reasons = update.learnings.archive.iter().chain(&update.verbatim.archive).map(|a| &a.reason);
    if reasons.chain(archive_reasons).any(|r| blank(r)) {
        problems.push("every ADD and ARCHIVE needs a non-empty reason".to_string());
    }
    for a in &update.learnings.add {
        if blank(&a.text) || scan::has_newline(&a.text) {
            problems.push(format!("key learning {:?} must be one non-empty line", a.text));
        }
    }
    for a in &update.verbatim.add {
        if blank(&a.label) || scan::has_newline(&a.label) {
            problems.push(format!("verbatim label {:?} must be one non-empty line", a.label));
        }
        if blank(&a.snippet) {
            problems.push(format!("the snippet for {:?} is empty", a.label));
        }
    }
    for (prefix, ops) in [("KL-", &update.learnings.archive), ("VC-", &update.verbatim.archive)] {
        for op in ops.iter() {
            let well_formed = op.id.strip_prefix(prefix).is_some_and(|n| n.parse::<u32>().is_ok());
            if !well_formed {
                problems.push(format!("{:?} is not a {prefix}<n> ID", op.id));
            }
        }
    }
    problems.extend(limits::items(update));
    problems
}

/// Applies `updates` in order. Takes everything by value, as the component receives it:
/// nothing is copied.
pub fn merge(state: MemoryState, updates: Vec<Update>, now: &str) -> Result<MergeOutcome, String> {
    try_merge(state, updates, now).map_err(|(_, problem)| problem)
}

/// `merge` that hands the state back, untouched, with the refusal.
#[allow(clippy::result_large_err)] // by value on purpose: the caller gets its state back without a copy
fn try_merge(state: MemoryState, updates: Vec<Update>, now: &str) -> Result<MergeOutcome, (MemoryState, String)> {
    let mut problems: Vec<String> = updates.iter().flat_map(check).collect();
    let adds = |f: fn(&Update) -> usize| updates.iter().map(f).sum::<usize>() as u64;
    for (prefix, next, added) in [("KL", state.next_learning, adds(|u| u.learnings.add.len())), ("VC", state.next_verbatim, adds(|u| u.verbatim.add.len()))] {
        if u64::from(next) + added > u64::from(u32::MAX) {
            problems.push(format!("{added} new {prefix} ID(s) from {prefix}-{next} on would pass {prefix}-{}, the last there is", u32::MAX - 1));
        }
    }
    problems.extend(limits::too_large(&state, &updates));
    if !problems.is_empty() {
        return Err((state, format!("invalid update: {}.", problems.join("; "))));
    }
    let mut out = MergeOutcome { state, diff: String::new(), added: Vec::new(), archived: Vec::new(), ignored: Vec::new() };
    let mut diff = Diff::default();
    for update in updates {
        merge_one(&mut out, &mut diff, update, now);
    }
    for id in limits::prune(&mut out.state) {
        diff.line(
            "Dropped",
            &["- ", &id, "  (archived; past ", &limits::MAX_ARCHIVED.to_string(), " bytes of archived entries, only the update log keeps it)"],
        );
    }
    out.diff = diff.finish();
    Ok(out)
}

fn merge_one(out: &mut MergeOutcome, diff: &mut Diff, update: Update, now: &str) {
    let ignored_before = out.ignored.len();
    let next = &mut out.state;
    if !update.progress.in_progress.is_empty() {
        diff.progress(&next.progress, &update.progress);
        next.progress = update.progress;
    }

    archive(&mut next.learnings, &update.learnings.archive, now, diff, &mut out.archived, &mut out.ignored);
    for add in update.learnings.add {
        let id = ids::id("KL", next.next_learning);
        next.next_learning += 1;
        diff.line(Learning::HEADING, &["+ ", &id, " ", &add.text, "  (because ", &add.reason, ")"]);
        out.added.push(id.clone());
        next.learnings.push(Learning {
            id,
            text: add.text,
            reason: add.reason,
            added_at: now.to_string(),
            archived_at: String::new(),
            archive_reason: String::new(),
        });
    }

    archive(&mut next.verbatim, &update.verbatim.archive, now, diff, &mut out.archived, &mut out.ignored);
    for add in update.verbatim.add {
        let id = ids::id("VC", next.next_verbatim);
        next.next_verbatim += 1;
        let lines = scan::line_count(&add.snippet);
        let plural = if lines == 1 { "" } else { "s" };
        let mut count = String::new();
        ids::push_number(&mut count, lines as u64);
        diff.line(VerbatimEntry::HEADING, &["+ ", &id, " ", &add.label, "  (", &count, " line", plural, ", because ", &add.reason, ")"]);
        out.added.push(id.clone());
        next.verbatim.push(VerbatimEntry {
            id,
            label: add.label,
            snippet: add.snippet,
            reason: add.reason,
            added_at: now.to_string(),
            archived_at: String::new(),
            archive_reason: String::new(),
        });
    }
    for ignored in &out.ignored[ignored_before..] {
        diff.line("Ignored", &["! ", ignored]);
    }
}

fn archive<E: Entry>(entries: &mut [E], ops: &[ArchiveOp], now: &str, diff: &mut Diff, archived: &mut Vec<String>, ignored: &mut Vec<String>) {
    // The index borrows the IDs, so what to archive is decided first, then done.
    let mut chosen = Vec::new();
    {
        let mut archives = Archives::new(entries, ops);
        for op in ops {
            match archives.take(entries, &op.id) {
                Ok(i) => chosen.push((i, op)),
                Err(problem) => ignored.push(problem),
            }
        }
    }
    for (i, op) in chosen {
        let e = &mut entries[i];
        e.archive(&op.reason, now);
        diff.line(E::HEADING, &["- ", &op.id, " ", e.title(), "  (archived because ", &op.reason, ")"]);
        archived.push(op.id.clone());
    }
}

pub fn apply(state: MemoryState, text: &str, now: &str) -> ApplyOutcome {
    let mut parsed = validate(text, &state);
    let rejected = |state, diagnostics| ApplyOutcome {
        ok: false,
        merged: MergeOutcome { state, diff: String::new(), added: Vec::new(), archived: Vec::new(), ignored: Vec::new() },
        diagnostics,
    };
    if parsed.has_errors() {
        return rejected(state, parsed.diagnostics());
    }
    let mut diagnostics = parsed.diagnostics();
    match try_merge(state, vec![parsed.update], now) {
        Ok(merged) => ApplyOutcome { ok: true, merged, diagnostics },
        // parse enforces everything merge checks of the update itself, so this is the state
        // refusing it (its IDs have run out), or else an engine bug: either way a
        // diagnostic, not a trap.
        Err((state, problem)) => {
            diagnostics.push(parse::diagnostic(ERROR, 1, 1, problem));
            rejected(state, diagnostics)
        }
    }
}

fn lists(p: &Progress) -> [&[String]; 3] {
    [&p.completed, &p.in_progress, &p.remaining]
}

/// The log entry, written as the merge goes: sections come in a fixed order (progress,
/// learnings, verbatim, ignored), so a heading is written when the section changes.
#[derive(Default)]
struct Diff {
    out: String,
    heading: &'static str,
}

impl Diff {
    /// A line of `parts` under `heading`. Parts, not `format_args!`: formatting goes through
    /// `dyn Write` a piece at a time, several times the instructions in a component.
    fn line(&mut self, heading: &'static str, parts: &[&str]) {
        // The same constant is most often the same pointer: then no bytes are compared.
        if !std::ptr::eq(self.heading, heading) && self.heading != heading {
            self.heading = heading;
            self.out.push_str(heading);
            self.out.push('\n');
        }
        self.out.push_str("  ");
        for part in parts {
            self.out.push_str(part);
        }
        self.out.push('\n');
    }

    fn progress(&mut self, old: &Progress, new: &Progress) {
        /// The items as a set, inserted one by one as `Ids` fills its tree: collected, a set
        /// sorts its items first, with a sort of its own in the component.
        fn set(items: &[String]) -> BTreeSet<&str> {
            let mut set = BTreeSet::new();
            for item in items {
                set.insert(item.as_str());
            }
            set
        }

        let (old, new) = (lists(old), lists(new));
        let mut changed = false;
        for (name, (o, n)) in ["Completed", "In Progress", "Remaining"].into_iter().zip(old.iter().zip(&new)) {
            // Most updates rewrite their progress as it was: equal lists need no sets.
            if scan::equal_lists(o, n) {
                continue;
            }
            // Sets, so a diff of long lists stays linear (up to a logarithm).
            let (o_set, n_set) = (set(o), set(n));
            let removed = o.iter().filter(|x| !n_set.contains(x.as_str()));
            let added = n.iter().filter(|x| !o_set.contains(x.as_str()));
            if removed.clone().next().is_none() && added.clone().next().is_none() {
                continue;
            }
            changed = true;
            self.line("Current Progress", &["~ ", name]);
            for r in removed {
                self.line("Current Progress", &["    - ", r]);
            }
            for a in added {
                self.line("Current Progress", &["    + ", a]);
            }
        }
        if !changed {
            self.line("Current Progress", &["= rewritten, unchanged"]);
        }
    }

    fn finish(self) -> String {
        if self.out.is_empty() { "No changes.\n".to_string() } else { self.out }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn blank_is_trimmed_empty(text in "[ \t\n\u{b}\u{c}\r\u{a0}\u{3000}\u{85}x!~\u{7f}é]{0,4}") {
            prop_assert_eq!(super::blank(&text), text.trim().is_empty());
        }
    }
}
