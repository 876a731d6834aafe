//! `workmem doc ...`: spec 004's context documents from the command line, in the boards'
//! database (`--db`: the SQLite default or a postgres:// URL).

use anyhow::Result;
use clap::{Args, Subcommand};
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;
use workmem_runtime::Runtime;
use workmem_store::db::Scope;
use workmem_store::documents::{Config, Documents};

use crate::report::print_json;

#[derive(Args)]
pub struct DocArgs {
    #[command(flatten)]
    db: crate::db::DbArg,
    #[command(subcommand)]
    command: DocCommand,
}

#[derive(Subcommand)]
enum DocCommand {
    /// Store a new version of a memory's document
    Put {
        /// The vault
        vault: String,
        /// The memory
        memory: String,
        /// The document, or - for standard input (the default)
        file: Option<PathBuf>,
        /// Only if the latest version is still this one (0: none yet); a conflict stores nothing
        #[arg(long, value_name = "VERSION")]
        expect: Option<u64>,
        /// Who is writing, as the version records it
        #[arg(long = "as", value_name = "ACTOR", default_value = "cli")]
        actor: String,
        /// The largest document stored, in bytes
        #[arg(long, default_value_t = Config::default().max_bytes)]
        max_bytes: u64,
        /// Versions kept per memory; older ones are deleted
        #[arg(long, default_value_t = Config::default().keep_versions)]
        keep_versions: u64,
    },
    /// Print a memory's latest document (or an older version, or one section)
    Get {
        /// The vault
        vault: String,
        /// The memory
        memory: String,
        /// This version instead of the latest
        #[arg(long)]
        version: Option<u64>,
        /// Only this section's body
        #[arg(long)]
        section: Option<String>,
    },
    /// Replace one section of a memory's latest document, as a new version (refused if another put came first)
    SetSection {
        /// The vault
        vault: String,
        /// The memory
        memory: String,
        /// The section, e.g. Progress
        name: String,
        /// Its new body, or - for standard input (the default)
        file: Option<PathBuf>,
        /// Who is writing, as the version records it
        #[arg(long = "as", value_name = "ACTOR", default_value = "cli")]
        actor: String,
    },
    /// List a memory's versions, newest first
    Versions {
        /// The vault
        vault: String,
        /// The memory
        memory: String,
    },
    /// Find the memories of a vault whose latest document has every word of QUERY
    Search {
        /// The vault
        vault: String,
        /// Words to find
        query: String,
        /// At most this many memories
        #[arg(long, default_value_t = 10)]
        limit: u64,
    },
    /// Print a new document with spec 004's sections
    Template,
    /// Issue a token that lets AGENT read and write the vault's documents over HTTP (workmem serve)
    Grant {
        /// The vault
        vault: String,
        /// The agent the token acts as
        agent: String,
        #[command(flatten)]
        limits: crate::commands::token::GrantArgs,
    },
}

pub fn run(runtime: Runtime, args: DocArgs, as_json: bool) -> Result<ExitCode> {
    let open = |config: Config| -> Result<Documents> {
        let db = args.db.target()?;
        Ok(Documents::open(&db, runtime.clone(), config)?)
    };
    match args.command {
        DocCommand::Grant { vault, agent, limits } => {
            let db = args.db.target()?;
            return crate::commands::token::grant(&db, Scope::Vault(&vault), &agent, &limits, as_json);
        }
        DocCommand::Template => {
            let template = runtime.instance()?.document_template()?;
            if as_json {
                print_json(&json!({"template": template}));
            } else {
                println!("{}", template.trim_end());
            }
        }
        DocCommand::Put { vault, memory, file, expect, actor, max_bytes, keep_versions } => {
            let (_, bytes) = crate::input::read_bytes(file.as_ref())?;
            let stored = open(Config { max_bytes, keep_versions })?.put(&vault, &memory, &actor, &bytes, expect)?;
            if as_json {
                print_json(&json!({"ok": true, "version": stored}));
            } else {
                println!("{vault}/{memory} version {} at {}", stored.version, stored.creation_time);
            }
        }
        DocCommand::Get { vault, memory, version, section } => {
            let mut docs = open(Config::default())?;
            let found = match version {
                Some(n) => docs.get(&vault, &memory, n)?,
                None => docs.latest(&vault, &memory)?,
            };
            let text = match &section {
                Some(name) => runtime
                    .instance()?
                    .document_section(&found.context, name)?
                    .ok_or_else(|| anyhow::anyhow!("version {} of {vault}/{memory} has no section {name:?}", found.version))?,
                None => found.context.clone(),
            };
            if as_json {
                print_json(&json!({"ok": true, "version": found.version, "actor_id": found.actor_id, "creation_time": found.creation_time, "text": text}));
            } else {
                print!("{text}");
            }
        }
        DocCommand::SetSection { vault, memory, name, file, actor } => {
            let (_, body) = crate::input::read_input(file.as_ref())?;
            let mut docs = open(Config::default())?;
            let latest = docs.latest(&vault, &memory)?;
            let text = runtime.instance()?.replace_document_section(&latest.context, &name, &body)?;
            let stored = docs.put(&vault, &memory, &actor, text.as_bytes(), Some(latest.version))?;
            if as_json {
                print_json(&json!({"ok": true, "version": stored}));
            } else {
                println!("{vault}/{memory} version {}: section {name} replaced", stored.version);
            }
        }
        DocCommand::Versions { vault, memory } => {
            let versions = open(Config::default())?.versions(&vault, &memory)?;
            if as_json {
                print_json(&json!(versions));
            } else {
                for v in versions {
                    println!("{:>6}  {}  {}", v.version, v.creation_time, v.actor_id);
                }
            }
        }
        DocCommand::Search { vault, query, limit } => {
            let hits = open(Config::default())?.search(&vault, &query, limit)?;
            if as_json {
                print_json(&json!(hits));
            } else {
                for h in hits {
                    println!("{}", h.memory_id);
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
