//! `workmem session`: create, list, show a session, and grant a token for it.

use crate::commands::token;
use crate::ctx::Ctx;
use crate::{db, report};
use anyhow::Result;
use std::process::ExitCode;
use workmem_store::db::Scope;

#[derive(clap::Subcommand)]
pub enum SessionCommand {
    /// Create a session for the current directory
    New {
        /// The session's ID (letters, digits, -, _ and .); default: the time and a random suffix
        #[arg(long)]
        id: Option<String>,
    },
    /// List the sessions of the current directory (of every directory with --all)
    List {
        /// Every directory's sessions
        #[arg(long)]
        all: bool,
    },
    /// Show a session's metadata and files
    Show {
        /// The session: its ID (found from any directory when it is unique) or its directory
        session: String,
    },
    /// Issue a token that lets AGENT read and update this session's memory over HTTP (workmem serve)
    Grant {
        /// The session's ID
        session: String,
        /// The agent the token acts as
        agent: String,
        #[command(flatten)]
        db: db::DbArg,
        #[command(flatten)]
        limits: token::GrantArgs,
    },
}

pub fn run(ctx: &Ctx, command: SessionCommand, json: bool) -> Result<ExitCode> {
    match command {
        SessionCommand::New { id } => {
            let template = ctx.runtime.instance()?.overview_template()?;
            let s = ctx.sessions.create(id.as_deref(), &template)?;
            let meta = s.meta()?;
            if json {
                println!("{}", serde_json::json!({"id": meta.id, "dir": s.dir()}));
            } else {
                println!("created session {} at {}", meta.id, s.dir().display());
            }
        }
        SessionCommand::List { all } => {
            let list = if all { ctx.sessions.all()? } else { ctx.sessions.list()? };
            if list.is_empty() && !all {
                let elsewhere = ctx.sessions.all()?.len();
                if elsewhere > 0 {
                    eprintln!("none for this directory; {elsewhere} under other directories: `workmem session list --all` lists them");
                }
            }
            if json {
                let v: Vec<_> = list.iter().map(|(s, m)| serde_json::json!({"meta": m, "dir": s.dir()})).collect();
                println!("{}", serde_json::to_string_pretty(&v)?);
            } else if list.is_empty() {
                println!("no sessions under {}", ctx.sessions.dir().display());
            } else {
                for (s, m) in &list {
                    println!("{:<24} {:<22} {:>3} updates  {}", m.id, m.created_at, m.updates, s.dir().display());
                }
            }
        }
        SessionCommand::Show { session } => {
            let s = ctx.session(&session)?;
            let snapshot = ctx.memory(&s)?.snapshot()?;
            report::session(&s, &snapshot, json)?;
        }
        SessionCommand::Grant { session, agent, db, limits } => {
            // The grant names this session's directory and identity, not only its ID.
            let name = ctx.sessions.grants()?.grant_name(&ctx.sessions.find(&session)?)?;
            return token::grant(&db.target()?, Scope::Session(&name.to_string()), &agent, &limits, json);
        }
    }
    Ok(ExitCode::SUCCESS)
}
