//! What the CLI prints: human text by default, the documented JSON with --json.

use anyhow::Result;
use serde_json::json;
use std::process::ExitCode;
use workmem_commit::json;
use workmem_runtime::names::Named;
use workmem_runtime::{Applied, Diagnostic, InvalidAnswers, ParseOutcome, Snapshot, UpdateError, UpdateReport};
use workmem_store::Session;

/// `text` as a terminal may show it: a control character (ESC, BEL, ... which a terminal
/// obeys: an OSC 52 writes the clipboard, a CSI moves the cursor) and an invisible or
/// reordering one is written as `\u{..}`; newlines and tabs stay. For every line that carries
/// a model's or a stranger's text.
pub fn visible(text: &str) -> std::borrow::Cow<'_, str> {
    let shown = |c: char| c == '\n' || c == '\t' || !workmem_store::ids::is_hidden(c);
    if text.chars().all(shown) {
        return text.into();
    }
    text.chars().map(|c| if shown(c) { c.to_string() } else { format!("\\u{{{:x}}}", u32::from(c)) }).collect::<String>().into()
}

/// A file's text as stdout takes it: [`visible`] on a terminal, the bytes as they are when
/// piped (`memory read ... > notes.md` copies the file).
pub fn file_text(text: &str) -> std::borrow::Cow<'_, str> {
    use std::io::IsTerminal;
    if std::io::stdout().is_terminal() { visible(text) } else { text.into() }
}

/// [`visible`] on one line: newlines and tabs escaped too.
pub fn one_line(text: &str) -> String {
    visible(text).replace('\n', "\\n").replace('\t', "\\t")
}

pub fn print_json(v: &serde_json::Value) {
    println!("{}", serde_json::to_string_pretty(v).expect("JSON values print"));
}

/// `file:line:column: severity: message`, one per line on stderr, as compilers do.
pub fn diagnostics(name: &str, ds: &[Diagnostic]) {
    for d in ds {
        eprintln!("{}", diagnostic(name, d));
    }
}

pub fn diagnostic(name: &str, d: &Diagnostic) -> String {
    format!("{name}:{}:{}: {}: {}", d.line, d.column, d.severity.name(), d.message)
}

/// The corpus's shape, and the error object every failure under `--json` carries when there
/// is no update.
fn parse_json(outcome: &ParseOutcome) -> serde_json::Value {
    let mut v = json::parse_outcome(outcome);
    if outcome.update.is_none() {
        let errors = outcome.diagnostics.iter().filter(|d| d.severity == workmem_runtime::Severity::Error).count();
        v["error"] = json::invalid_dsl(&outcome.diagnostics, &format!("the update has {errors} error(s)"));
    }
    v
}

pub fn parse(name: &str, outcome: &ParseOutcome, as_json: bool) -> ExitCode {
    if as_json {
        print_json(&parse_json(outcome));
    } else {
        diagnostics(name, &outcome.diagnostics);
        if let Some(u) = &outcome.update {
            let progress = match &u.progress {
                None => "unchanged".to_string(),
                Some(p) => format!("rewritten ({} completed, {} in progress, {} remaining)", p.completed.len(), p.in_progress.len(), p.remaining.len()),
            };
            println!("ok: {name}");
            println!("  Current Progress: {progress}");
            println!("  Key Learnings:    {} to add, {} to archive", u.learnings.add.len(), u.learnings.archive.len());
            println!("  Verbatim Context: {} to add, {} to archive", u.verbatim.add.len(), u.verbatim.archive.len());
        }
    }
    if outcome.update.is_some() { ExitCode::SUCCESS } else { ExitCode::from(1) }
}

/// The input of a verb that reports a parse (`parse`, `validate`): input that is not UTF-8
/// is reported in the parse's own shape (`None`, having printed it), the bad byte as its
/// diagnostic; other failures stay errors.
pub fn parsable(input: Result<(String, String)>, as_json: bool) -> Result<Option<(String, String)>> {
    let e = match input {
        Ok(read) => return Ok(Some(read)),
        Err(e) => e,
    };
    let Some(bad) = e.downcast_ref::<crate::input::NotUtf8>() else { return Err(e) };
    eprintln!("{bad}");
    if as_json {
        let outcome = ParseOutcome { update: None, diagnostics: vec![bad.diagnostic.clone()] };
        let mut v = parse_json(&outcome);
        v["error"]["kind"] = "invalid_input".into();
        v["error"]["message"] = bad.to_string().into();
        print_json(&v);
    }
    Ok(None)
}

pub fn applied(name: &str, a: &Applied, as_json: bool) {
    if as_json {
        print_json(&json::applied(a));
    } else {
        diagnostics(name, &a.warnings);
        print!("{}", a.diff);
    }
}

/// An update with errors: nothing was applied.
pub fn rejected(name: &str, ds: &[Diagnostic], as_json: bool) {
    if as_json {
        print_json(&json::rejected(ds));
    }
    diagnostics(name, ds);
}

pub fn updated(r: &UpdateReport, as_json: bool) {
    for w in &r.applied.warnings {
        eprintln!("{}", diagnostic("<llm>", w));
    }
    if as_json {
        let mut v = json::applied(&r.applied);
        v["attempts"] = r.attempts.into();
        v["prompt_tokens"] = r.prompt_tokens.into();
        v["completion_tokens"] = r.completion_tokens.into();
        print_json(&v);
    } else {
        eprintln!("applied after {} LLM call(s)", r.attempts);
        print!("{}", r.applied.diff);
    }
}

/// The error and its causes as one line, down to the engine's own sentence: what lies under
/// that is wasmtime's trap and wasm backtrace, which tell a user nothing (`--json` keeps the
/// same line).
fn sentence(e: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if parts.last() != Some(&text) {
            parts.push(text);
        }
        let engine = cause.downcast_ref::<workmem_runtime::Error>().is_some()
            || matches!(cause.downcast_ref::<workmem_agent::Error>(), Some(workmem_agent::Error::Engine(_)));
        if engine {
            break;
        }
    }
    parts.join(": ")
}

/// A command line clap refused: its own message, and under `--json` (anywhere in the
/// arguments) the same as a JSON error, so a script always gets JSON. Help and version go
/// out as clap prints them.
pub fn usage(e: clap::Error) -> std::process::ExitCode {
    use clap::error::ErrorKind;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand)
        || !std::env::args().any(|a| a == "--json")
    {
        e.exit();
    }
    let message = e.render().to_string();
    // The sentence clap writes before its usage block, on one line.
    let first = message.lines().take_while(|l| !l.trim().is_empty()).map(str::trim).collect::<Vec<_>>().join(" ");
    let first = first.trim_start_matches("error: ").to_string();
    eprint!("{message}");
    print_json(&json!({"ok": false, "error": {"kind": "usage", "message": first}}));
    std::process::ExitCode::from(2)
}

/// A failed command, on stderr (and as `{"ok": false, "error": {kind, message, ...}}` on
/// stdout under --json), so a script can tell what went wrong.
pub fn error(e: &anyhow::Error, as_json: bool) {
    use workmem_agent::Error as A;
    use workmem_commit::Error as M;
    // The commit path's errors, whether they came straight from it or through the agent.
    let memory = e.downcast_ref::<M>().or(match e.downcast_ref::<A>() {
        Some(A::Memory(m)) => Some(m.as_ref()),
        _ => None,
    });
    let (kind, diagnostics) = match (memory, e.downcast_ref::<A>()) {
        (Some(M::InvalidDsl(ds)), _) => ("invalid_dsl", Some(ds)),
        (Some(M::Store(_) | M::BadState { .. }), _) => ("store", None),
        (Some(M::Engine(_)), _) => ("engine", None),
        (Some(M::Db(b)), _) => (b.code(), None),
        (None, Some(A::Update(UpdateError::Invalid(InvalidAnswers { diagnostics, .. })))) => ("invalid_answer", Some(diagnostics)),
        (None, Some(A::Update(UpdateError::Model(_)) | A::Llm(_) | A::UpdateModel(_))) => ("model", None),
        (None, Some(A::Update(UpdateError::Store(_)) | A::Store(_))) => ("store", None),
        (None, Some(A::Engine(_))) => ("engine", None),
        (None, Some(A::Board(b))) => (b.code(), None),
        (None, Some(A::Threshold(_) | A::OutOfSteps { .. })) => ("agent", None),
        (None, Some(A::Setting { .. })) => ("config", None),
        (None, Some(A::Compact(_))) => ("compaction_refused", None),
        (None, Some(A::OverWindow { .. })) => ("over_window", None),
        (None, Some(A::Requests(_) | A::Memory(_))) => ("failed", None),
        (None, None)
            if e.downcast_ref::<crate::input::NotUtf8>().is_some()
                || e.downcast_ref::<crate::input::TooLarge>().is_some()
                || e.downcast_ref::<crate::input::Unreadable>().is_some() =>
        {
            ("invalid_input", None)
        }
        (None, None) if let Some(b) = e.downcast_ref::<workmem_store::db::Error>() => (b.code(), None),
        (None, None) if e.downcast_ref::<workmem_store::Error>().is_some() => ("store", None),
        (None, None) if e.downcast_ref::<workmem_store::PathError>().is_some() => ("refused", None),
        (None, None) if e.downcast_ref::<workmem_runtime::Error>().is_some() => ("engine", None),
        (None, None) if e.downcast_ref::<workmem_llm::ConfigError>().is_some() => ("config", None),
        (None, None) => ("failed", None),
    };
    let message = sentence(e);
    if let Some(M::InvalidDsl(ds)) = memory {
        self::diagnostics("<input>", ds);
    }
    // The message may carry a stranger's words (a provider's error, a model's): shown, not obeyed.
    eprintln!("workmem: error: {}", visible(&message));
    if as_json {
        let mut error = json!({"kind": kind, "message": message});
        if let Some(ds) = diagnostics {
            error["diagnostics"] = json::diagnostics(ds);
        }
        match e.downcast_ref() {
            Some(workmem_store::db::Error::Conflict { current, .. }) => error["current_revision"] = (*current).into(),
            Some(workmem_store::db::Error::VersionConflict { current, .. }) => error["current_version"] = (*current).into(),
            Some(workmem_store::db::Error::Refused { rule, .. } | workmem_store::db::Error::InvalidDocument { rule, .. }) => {
                error["rule"] = rule.as_str().into()
            }
            _ => {}
        }
        if let Some(workmem_llm::LlmError::Provider(r)) = e.chain().find_map(|c| c.downcast_ref::<workmem_llm::LlmError>()) {
            error["status"] = r.status.into();
            error["provider_code"] = r.code.clone().into();
            error["provider_message"] = r.message.clone().into();
            error["url"] = r.url.clone().into();
        }
        if let Some(bad) = e.downcast_ref::<crate::input::NotUtf8>() {
            error["diagnostics"] = json::diagnostics(std::slice::from_ref(&bad.diagnostic));
        }
        print_json(&json!({"ok": false, "error": error}));
    }
}

pub fn session(s: &Session, snapshot: &Snapshot, as_json: bool) -> Result<()> {
    let meta = s.meta()?;
    let archived_kl = snapshot.learnings.iter().filter(|l| l.archived.is_some()).count();
    let archived_vc = snapshot.verbatim.iter().filter(|v| v.archived.is_some()).count();
    let (active_kl, active_vc) = (snapshot.learnings.len() - archived_kl, snapshot.verbatim.len() - archived_vc);
    if as_json {
        print_json(&json!({
            "meta": meta,
            "dir": s.dir(),
            "overview": s.overview_path(),
            "learnings": {"active": active_kl, "archived": archived_kl},
            "verbatim": {"active": active_vc, "archived": archived_vc},
        }));
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

pub fn compacted(c: &workmem_agent::compact::Compacted, as_json: bool) {
    if as_json {
        print_json(&json!({
            "ok": true,
            "seq": c.seq,
            "replaced": c.replaced,
            "messages": c.messages,
            "tokens_before": c.tokens_before,
            "tokens_after": c.tokens_after,
            "archive": c.archive,
            "notice": c.notice,
        }));
    } else {
        println!("{}", c.notice);
    }
}
