//! The JSON shapes workmem prints (`--json` today; HTTP and MCP next), written out
//! explicitly: they are promises to users and to every runtime's conformance suite.

use serde_json::{Value, json};
use workmem_runtime::names::Named;
use workmem_runtime::{Applied, ArchiveOp, Diagnostic, ParseOutcome, Update};

pub fn diagnostic(d: &Diagnostic) -> Value {
    json!({"severity": d.severity.name(), "line": d.line, "column": d.column, "message": d.message})
}

pub fn diagnostics(ds: &[Diagnostic]) -> Value {
    Value::Array(ds.iter().map(diagnostic).collect())
}

fn archive(ops: &[ArchiveOp]) -> Value {
    ops.iter().map(|o| json!({"id": o.id, "reason": o.reason})).collect()
}

/// `{progress: {completed, in_progress, remaining} | null, learnings: {add, archive}, verbatim: {add, archive}}`
pub fn update(u: &Update) -> Value {
    let progress = match &u.progress {
        Some(p) => json!({"completed": p.completed, "in_progress": p.in_progress, "remaining": p.remaining}),
        None => Value::Null,
    };
    json!({
        "progress": progress,
        "learnings": {
            "add": u.learnings.add.iter().map(|a| json!({"reason": a.reason, "text": a.text})).collect::<Value>(),
            "archive": archive(&u.learnings.archive),
        },
        "verbatim": {
            "add": u.verbatim.add.iter().map(|a| json!({"reason": a.reason, "label": a.label, "snippet": a.snippet})).collect::<Value>(),
            "archive": archive(&u.verbatim.archive),
        },
    })
}

/// `{kind: "invalid_dsl", message, diagnostics}`: the error object of an update with errors,
/// as every failure under `--json` carries one.
pub fn invalid_dsl(ds: &[Diagnostic], message: &str) -> Value {
    json!({"kind": "invalid_dsl", "message": message, "diagnostics": diagnostics(ds)})
}

/// `{ok, update: ... | null, diagnostics}`: the conformance corpus's shape.
pub fn parse_outcome(o: &ParseOutcome) -> Value {
    json!({"ok": o.update.is_some(), "update": o.update.as_ref().map(update), "diagnostics": diagnostics(&o.diagnostics)})
}

/// `{ok: true, seq, added, archived, ignored, diff, diagnostics}` (the warnings).
pub fn applied(a: &Applied) -> Value {
    json!({"ok": true, "seq": a.seq, "added": a.added, "archived": a.archived, "ignored": a.ignored, "diff": a.diff,
           "diagnostics": diagnostics(&a.warnings)})
}

/// `{ok: false, diagnostics, error}`: an update with errors, nothing applied.
pub fn rejected(ds: &[Diagnostic]) -> Value {
    let message = crate::Error::InvalidDsl(ds.to_vec()).to_string();
    json!({"ok": false, "diagnostics": diagnostics(ds), "error": invalid_dsl(ds, &message)})
}
