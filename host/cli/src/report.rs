//! What the CLI prints: human text by default, the documented JSON with --json.

use crate::json;
use anyhow::Result;
use std::process::ExitCode;
use workmem_runtime::{Diagnostic, ParseOutcome};
use workmem_store::{Report, Session};

/// `file:line:column: severity: message`, one per line on stderr, as compilers do.
pub fn diagnostics(name: &str, ds: &[Diagnostic]) {
    for d in ds {
        eprintln!("{}", diagnostic(name, d));
    }
}

pub fn diagnostic(name: &str, d: &Diagnostic) -> String {
    format!("{name}:{}:{}: {}: {}", d.line, d.column, d.severity, d.message)
}

pub fn parse(name: &str, outcome: &ParseOutcome, as_json: bool) -> ExitCode {
    if as_json {
        println!("{}", serde_json::to_string_pretty(&json::parse_outcome(outcome)).expect("serializes"));
    } else {
        diagnostics(name, &outcome.diagnostics);
        if outcome.ok {
            let u = &outcome.update;
            let p = &u.progress;
            let progress = if p.in_progress.is_empty() {
                "unchanged".to_string()
            } else {
                format!("rewritten ({} completed, {} in progress, {} remaining)", p.completed.len(), p.in_progress.len(), p.remaining.len())
            };
            println!("ok: {name}");
            println!("  Current Progress: {progress}");
            println!("  Key Learnings:    {} to add, {} to archive", u.learnings.add.len(), u.learnings.archive.len());
            println!("  Verbatim Context: {} to add, {} to archive", u.verbatim.add.len(), u.verbatim.archive.len());
        }
    }
    if outcome.ok { ExitCode::SUCCESS } else { ExitCode::from(1) }
}

pub fn applied(name: &str, r: &Report, as_json: bool) {
    if as_json {
        let v = serde_json::json!({
            "ok": true,
            "added": r.entry.added,
            "archived": r.entry.archived,
            "ignored": r.entry.ignored,
            "diff": r.diff,
            "diagnostics": json::diagnostics(&r.warnings),
        });
        println!("{}", serde_json::to_string_pretty(&v).expect("serializes"));
    } else {
        diagnostics(name, &r.warnings);
        print!("{}", r.diff);
    }
}

pub fn session(s: &Session, as_json: bool) -> Result<()> {
    let meta = s.meta()?;
    let state = s.state()?;
    let archived_kl = state.learnings.iter().filter(|l| !l.archived_at.is_empty()).count();
    let archived_vc = state.verbatim.iter().filter(|v| !v.archived_at.is_empty()).count();
    let (active_kl, active_vc) = (state.learnings.len() - archived_kl, state.verbatim.len() - archived_vc);
    if as_json {
        let v = serde_json::json!({
            "meta": meta,
            "dir": s.dir(),
            "overview": s.overview_path(),
            "learnings": {"active": active_kl, "archived": archived_kl},
            "verbatim": {"active": active_vc, "archived": archived_vc},
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!("session   {}", meta.id);
        println!("dir       {}", s.dir().display());
        println!("cwd       {}", meta.cwd);
        println!("created   {}", meta.created_at);
        println!("updated   {} ({} updates)", meta.updated_at, meta.updates);
        println!("learnings {active_kl} active, {archived_kl} archived");
        println!("verbatim  {active_vc} active, {archived_vc} archived");
        println!("overview  {}", s.overview_path().display());
    }
    Ok(())
}
