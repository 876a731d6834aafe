//! Spec 000 §3 steps 4-6 and §6: validation against the stored state, the merge in the
//! spec's order, and the human-readable diff that goes into the update log.

use crate::parse::{self, Parsed};
use crate::{ApplyOutcome, ArchiveOp, ERROR, Learning, MemoryState, MergeOutcome, Progress, Update, VerbatimEntry, WARNING};

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

/// Why an ARCHIVE of `id` is ignored, if it is: the ID is unknown, already archived, or
/// named twice in one update (`earlier` holds the IDs this update archived before).
fn archive_problem<E: Entry>(entries: &[E], id: &str, earlier: &[&str]) -> Option<String> {
    if earlier.contains(&id) {
        return Some(format!("{id} is archived twice in this update; the second ARCHIVE is ignored"));
    }
    match entries.iter().find(|e| e.id() == id) {
        None => Some(format!("{id} does not exist; its ARCHIVE is ignored")),
        Some(e) if e.is_archived() => Some(format!("{id} is already archived; its ARCHIVE is ignored")),
        Some(_) => None,
    }
}

/// `parse`, plus a warning for each ARCHIVE that the merge would ignore.
pub fn validate(text: &str, state: &MemoryState) -> Parsed {
    let mut parsed = parse::parse(text);
    let mut warnings = archive_warnings(&state.learnings, &parsed.update.learnings.archive, &parsed.learning_archive_at);
    warnings.extend(archive_warnings(&state.verbatim, &parsed.update.verbatim.archive, &parsed.verbatim_archive_at));
    parsed.diagnostics.extend(warnings);
    parsed.sort();
    parsed
}

fn archive_warnings<E: Entry>(entries: &[E], ops: &[ArchiveOp], at: &[(u32, u32)]) -> Vec<crate::Diagnostic> {
    let mut earlier: Vec<&str> = Vec::new();
    let mut out = Vec::new();
    for (op, &(line, column)) in ops.iter().zip(at) {
        if let Some(problem) = archive_problem(entries, &op.id, &earlier) {
            out.push(parse::diagnostic(WARNING, line, column, problem));
        }
        earlier.push(&op.id);
    }
    out
}

/// The invariants `parse` guarantees, checked again for updates built by hand.
fn check(update: &Update) -> Vec<String> {
    let mut problems = Vec::new();
    let p = &update.progress;
    if p.in_progress.is_empty() && !(p.completed.is_empty() && p.remaining.is_empty()) {
        problems.push("Current Progress needs at least one In Progress item".to_string());
    }
    for item in p.completed.iter().chain(&p.in_progress).chain(&p.remaining) {
        if item.trim().is_empty() || item.contains('\n') {
            problems.push(format!("progress item {item:?} must be one non-empty line"));
        }
    }
    let reasons = update.learnings.add.iter().map(|a| &a.reason).chain(update.verbatim.add.iter().map(|a| &a.reason));
    let archive_reasons = update.learnings.archive.iter().chain(&update.verbatim.archive).map(|a| &a.reason);
    if reasons.chain(archive_reasons).any(|r| r.trim().is_empty()) {
        problems.push("every ADD and ARCHIVE needs a non-empty reason".to_string());
    }
    for a in &update.learnings.add {
        if a.text.trim().is_empty() || a.text.contains('\n') {
            problems.push(format!("key learning {:?} must be one non-empty line", a.text));
        }
    }
    for a in &update.verbatim.add {
        if a.label.trim().is_empty() || a.label.contains('\n') {
            problems.push(format!("verbatim label {:?} must be one non-empty line", a.label));
        }
        if a.snippet.trim().is_empty() {
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
    let problems: Vec<String> = updates.iter().flat_map(check).collect();
    if !problems.is_empty() {
        return Err((state, format!("invalid update: {}.", problems.join("; "))));
    }
    let mut out = MergeOutcome { state, diff: String::new(), added: Vec::new(), archived: Vec::new(), ignored: Vec::new() };
    let mut diff = Diff::default();
    for update in updates {
        merge_one(&mut out, &mut diff, update, now);
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
        let id = format!("KL-{}", next.next_learning);
        next.next_learning = next.next_learning.saturating_add(1);
        diff.line(Learning::HEADING, format_args!("+ {id} {}  (because {})", add.text, add.reason));
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
        let id = format!("VC-{}", next.next_verbatim);
        next.next_verbatim = next.next_verbatim.saturating_add(1);
        let lines = add.snippet.lines().count();
        let plural = if lines == 1 { "" } else { "s" };
        diff.line(VerbatimEntry::HEADING, format_args!("+ {id} {}  ({lines} line{plural}, because {})", add.label, add.reason));
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
        diff.line("Ignored", format_args!("! {ignored}"));
    }
}

fn archive<E: Entry>(entries: &mut [E], ops: &[ArchiveOp], now: &str, diff: &mut Diff, archived: &mut Vec<String>, ignored: &mut Vec<String>) {
    let mut earlier: Vec<&str> = Vec::new();
    for op in ops {
        if let Some(problem) = archive_problem(entries, &op.id, &earlier) {
            ignored.push(problem);
        } else if let Some(e) = entries.iter_mut().find(|e| e.id() == op.id) {
            e.archive(&op.reason, now);
            diff.line(E::HEADING, format_args!("- {} {}  (archived because {})", op.id, e.title(), op.reason));
            archived.push(op.id.clone());
        }
        earlier.push(&op.id);
    }
}

pub fn apply(state: MemoryState, text: &str, now: &str) -> ApplyOutcome {
    let parsed = validate(text, &state);
    let rejected = |state, diagnostics| ApplyOutcome {
        ok: false,
        merged: MergeOutcome { state, diff: String::new(), added: Vec::new(), archived: Vec::new(), ignored: Vec::new() },
        diagnostics,
    };
    if parsed.has_errors() {
        return rejected(state, parsed.diagnostics);
    }
    let mut diagnostics = parsed.diagnostics;
    match try_merge(state, vec![parsed.update], now) {
        Ok(merged) => ApplyOutcome { ok: true, merged, diagnostics },
        // parse enforces everything merge checks; reaching this is an engine bug, reported
        // as a diagnostic rather than a trap.
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
    fn line(&mut self, heading: &'static str, line: std::fmt::Arguments) {
        use std::fmt::Write;
        if self.heading != heading {
            self.heading = heading;
            self.out.push_str(heading);
            self.out.push('\n');
        }
        let _ = writeln!(self.out, "  {line}");
    }

    fn progress(&mut self, old: &Progress, new: &Progress) {
        let (old, new) = (lists(old), lists(new));
        let mut changed = false;
        for (name, (o, n)) in ["Completed", "In Progress", "Remaining"].into_iter().zip(old.iter().zip(&new)) {
            let removed = o.iter().filter(|x| !n.contains(x));
            let added = n.iter().filter(|x| !o.contains(x));
            if removed.clone().next().is_none() && added.clone().next().is_none() {
                continue;
            }
            changed = true;
            self.line("Current Progress", format_args!("~ {name}"));
            for r in removed {
                self.line("Current Progress", format_args!("    - {r}"));
            }
            for a in added {
                self.line("Current Progress", format_args!("    + {a}"));
            }
        }
        if !changed {
            self.line("Current Progress", format_args!("= rewritten, unchanged"));
        }
    }

    fn finish(self) -> String {
        if self.out.is_empty() { "No changes.\n".to_string() } else { self.out }
    }
}
