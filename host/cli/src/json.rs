//! The JSON contracts of the CLI (`parse --json` and friends), written out explicitly:
//! they are promises to users and to every runtime's conformance suite.

use serde_json::{Value, json};
use workmem_runtime::{Diagnostic, ParseOutcome, Update};

pub fn diagnostic(d: &Diagnostic) -> Value {
    json!({"severity": d.severity, "line": d.line, "column": d.column, "message": d.message})
}

pub fn diagnostics(ds: &[Diagnostic]) -> Value {
    Value::Array(ds.iter().map(diagnostic).collect())
}

/// `{progress: {completed, in_progress, remaining} | null, learnings: {add, archive}, verbatim: {add, archive}}`:
/// the engine's empty progress ("not rewritten") is `null` here.
pub fn update(u: &Update) -> Value {
    let mut v = serde_json::to_value(u).expect("an update serializes");
    if u.progress.in_progress.is_empty() {
        v["progress"] = Value::Null;
    }
    v
}

/// `{ok, update: ... | null, diagnostics}`
pub fn parse_outcome(o: &ParseOutcome) -> Value {
    let update = if o.ok { update(&o.update) } else { Value::Null };
    json!({"ok": o.ok, "update": update, "diagnostics": diagnostics(&o.diagnostics)})
}
