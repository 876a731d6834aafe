//! The JSON contracts of the CLI (`parse --json` and friends), written out explicitly:
//! they are promises to users and to every runtime's conformance suite.

use crate::engine::{Diagnostic, ParseOutcome, Severity};
use serde_json::{Value, json};

pub fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

pub fn diagnostic(d: &Diagnostic) -> Value {
    json!({"severity": severity(d.severity), "line": d.line, "column": d.column, "message": d.message})
}

pub fn diagnostics(ds: &[Diagnostic]) -> Value {
    Value::Array(ds.iter().map(diagnostic).collect())
}

/// `{ok, update: {progress, learnings: {add, archive}, verbatim: {add, archive}} | null, diagnostics}`
pub fn parse_outcome(o: &ParseOutcome) -> Value {
    json!({"ok": o.update.is_some(), "update": o.update, "diagnostics": diagnostics(&o.diagnostics)})
}
