//! Tokens: granting one (`board|doc|session grant`, limited by an expiry and to reading), and
//! `workmem token list|revoke` for the grants a database holds. Only the database's owner does
//! any of this; a token itself never grants.

use crate::report;
use anyhow::{Result, bail};
use clap::{Args, Subcommand};
use serde_json::json;
use std::process::ExitCode;
use std::time::{Duration, SystemTime};
use workmem_store::db::{GrantOptions, Grants, Scope};

/// How a new token is limited.
#[derive(Args, Debug, Clone, Default)]
pub struct GrantArgs {
    /// The token stops opening anything after this long (e.g. 8h, 30days; default: never)
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    expires: Option<Duration>,
    /// The token reads and writes nothing (what the live page at /view needs)
    #[arg(long)]
    read_only: bool,
}

/// The last second RFC 3339 writes with four digits of year.
const LATEST: Duration = Duration::from_secs(253_402_300_799);

impl GrantArgs {
    fn options(&self) -> Result<GrantOptions> {
        let expires_at = match self.expires {
            None => None,
            Some(d) => match SystemTime::now().checked_add(d).filter(|t| *t <= SystemTime::UNIX_EPOCH + LATEST) {
                Some(t) => Some(humantime::format_rfc3339_seconds(t).to_string()),
                None => bail!("--expires {} is past the year 9999; give a shorter time", humantime::format_duration(d)),
            },
        };
        Ok(GrantOptions { expires_at, read_only: self.read_only })
    }
}

/// Issues a token for `scope` and prints it (with its grant's ID and limits under --json).
pub fn grant(db: &str, scope: Scope<'_>, agent: &str, limits: &GrantArgs, as_json: bool) -> Result<ExitCode> {
    let options = limits.options()?;
    let granted = Grants::open(db)?.grant(scope, agent, &options)?;
    if as_json {
        let (kind, id) = match scope {
            Scope::Board(id) => ("board", id.to_string()),
            Scope::Vault(id) => ("vault", id.to_string()),
            Scope::Session(name) => ("session", workmem_store::GrantName::parse(name).map_or_else(|| name.to_string(), |n| n.id().to_string())),
        };
        report::print_json(&json!({
            "ok": true, kind: id, "agent": agent, "token": granted.token, "id": granted.id,
            "expires_at": options.expires_at, "read_only": options.read_only,
        }));
    } else {
        println!("{}", granted.token);
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Args)]
pub struct TokenArgs {
    #[command(flatten)]
    db: crate::db::DbArg,
    #[command(subcommand)]
    command: TokenCommand,
}

#[derive(Subcommand)]
enum TokenCommand {
    /// List every grant: its ID, scope, agent, when it was made, its expiry and whether it is read-only (never the token)
    List,
    /// Revoke a grant by its ID (from `token list`, or a grant's --json): the token opens nothing from now on
    Revoke {
        /// The grant's ID: 16 hex digits
        id: String,
    },
}

pub fn run(args: TokenArgs, as_json: bool) -> Result<ExitCode> {
    let db = args.db.target()?;
    let mut grants = Grants::open(&db)?;
    match args.command {
        TokenCommand::List => {
            let all = grants.list()?;
            if as_json {
                report::print_json(&json!(all));
            } else if all.is_empty() {
                println!("no grants in {}", workmem_store::db::redact(&db));
            } else {
                for g in all {
                    let limits = [g.expires_at.map(|at| format!("expires {at}")), g.read_only.then(|| "read-only".to_string())];
                    let limits = limits.into_iter().flatten().collect::<Vec<_>>().join(", ");
                    println!("{}  {:<24} {:<16} {}  {limits}", g.id, report::one_line(&g.scope), report::one_line(&g.agent), g.created_at);
                }
            }
        }
        TokenCommand::Revoke { id } => {
            let gone = grants.revoke(&id)?;
            if gone == 0 {
                return Err(workmem_store::db::Error::NoGrant(id).into());
            }
            if as_json {
                report::print_json(&json!({"ok": true, "id": id, "revoked": gone}));
            } else {
                println!("revoked {id}");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
