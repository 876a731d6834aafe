//! `workmem view`: the page for people (workmem-page) written to a file.

use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
#[command(group(clap::ArgGroup::new("what").required(true).multiple(true).args(["session", "board", "proxy"])))]
pub struct ViewArgs {
    /// The session: its ID (found from any directory when it is unique) or its directory
    #[arg(long, value_name = "ID|DIR")]
    session: Option<String>,
    /// What `workmem proxy` run in this directory passed through untouched, by reason, and
    /// the sessions it keeps
    #[arg(long)]
    proxy: bool,
    /// A board whose task graph the page draws
    #[arg(long, value_name = "BOARD")]
    board: Option<String>,
    #[command(flatten)]
    db: crate::db::DbArg,
    /// The HTML file to write (default: the session's ID, else the board's, with .html, here)
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

/// `id` as a plain file name: letters, digits, `-`, `_` and `.` kept, anything else `_`, and
/// no leading `.`.
fn file_name(id: &str) -> String {
    let name: String = id.chars().map(|c| if c.is_alphanumeric() || matches!(c, '-' | '_' | '.') { c } else { '_' }).collect();
    let name = name.trim_start_matches('.');
    if name.is_empty() { "workmem".into() } else { name.into() }
}

pub fn run(ctx: &crate::ctx::Ctx, args: ViewArgs, as_json: bool) -> Result<ExitCode> {
    let mut sections = String::new();
    let mut title = Vec::new();
    let mut name = None;
    if let Some(spec) = &args.session {
        let session = ctx.session(spec)?;
        sections.push_str(&workmem_page::session(&ctx.runtime, &session)?);
        let id = session.meta()?.id;
        title.push(format!("session {id}"));
        name = Some(id);
    }
    let mut passed = None;
    if args.proxy {
        let counts = ctx.sessions.proxy_state()?.passed()?;
        sections.push_str(&workmem_page::proxy(&ctx.sessions, counts.clone())?);
        title.push("proxy".to_string());
        name.get_or_insert_with(|| "proxy".to_string());
        passed = Some(counts);
    }
    if let Some(board) = &args.board {
        let db = args.db.target()?;
        let mut boards = workmem_store::board::Boards::open(&db, ctx.runtime.clone(), Default::default())?;
        sections.push_str(&workmem_page::board(&mut boards, board)?);
        title.push(format!("board {board}"));
        name.get_or_insert_with(|| board.clone());
    }
    let out = match args.out {
        Some(out) => out,
        // Named after an ID, which a board made before IDs were checked may hold anything in:
        // only a plain file name here, never a path.
        None => PathBuf::from(format!("{}.html", file_name(&name.unwrap_or_default()))),
    };
    let page = workmem_page::document(&title.join(", "), &sections, &workmem_store::now());
    workmem_store::fsio::write_atomic(&out, page.as_bytes()).with_context(|| format!("writing {}", out.display()))?;
    if as_json {
        let mut report = serde_json::json!({"ok": true, "out": out, "bytes": page.len()});
        // The counts for a script, as the page shows them.
        if let Some(passed) = passed {
            report["passed"] = serde_json::to_value(passed)?;
        }
        crate::report::print_json(&report);
    } else {
        println!("{}", out.display());
    }
    Ok(ExitCode::SUCCESS)
}
