//! `workmem memory`: the memory files an LLM maintains, read, written and listed beneath the
//! session's `working-memory/` only.

use crate::ctx::Ctx;
use crate::input::read_input;
use crate::report;
use anyhow::Result;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Subcommand)]
pub enum Command {
    /// Print a memory file, e.g. working-memory/overview.md
    Read {
        /// The session: its ID (found from any directory when it is unique) or its directory
        #[arg(long, value_name = "ID|DIR")]
        session: String,
        /// The file, beneath the session directory (working-memory/ only)
        path: String,
    },
    /// Replace a memory file with FILE (or standard input), e.g. working-memory/detail/notes.md
    Write {
        /// The session: its ID (found from any directory when it is unique) or its directory
        #[arg(long, value_name = "ID|DIR")]
        session: String,
        /// The file, beneath the session directory (working-memory/ only)
        path: String,
        /// The new content, or - for standard input (the default)
        file: Option<PathBuf>,
    },
    /// List the memory files under a folder (default working-memory)
    List {
        /// The session: its ID (found from any directory when it is unique) or its directory
        #[arg(long, value_name = "ID|DIR")]
        session: String,
        /// The folder, beneath the session directory (working-memory/ only)
        #[arg(default_value = workmem_store::MEMORY_DIR)]
        path: String,
    },
}

pub fn run(ctx: &Ctx, command: Command, json: bool) -> Result<ExitCode> {
    match command {
        Command::Read { session, path } => {
            let content = ctx.session(&session)?.memory_files().read(&path)?;
            if json {
                report::print_json(&serde_json::json!({"path": path, "content": content}));
            } else {
                print!("{}", report::file_text(&content));
            }
        }
        Command::Write { session, path, file } => {
            let files = ctx.session(&session)?.memory_files();
            let (_, text) = read_input(file.as_ref())?;
            files.write(&path, &text)?;
            if json {
                report::print_json(&serde_json::json!({"ok": true, "path": path, "bytes": text.len()}));
            }
        }
        Command::List { session, path } => {
            let names = ctx.session(&session)?.memory_files().list(&path)?;
            if json {
                report::print_json(&serde_json::json!(names));
            } else {
                for name in names {
                    println!("{}", report::one_line(&name));
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
