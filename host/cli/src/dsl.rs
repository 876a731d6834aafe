//! The memory update DSL (spec 000) by hand: parse, validate, apply, show the memory, print
//! the update prompt, read the update log.

use crate::Ctx;
use crate::input::read_input;
use crate::report;
use anyhow::Result;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Subcommand)]
pub enum DslCommand {
    /// Parse a DSL update and report what it would do
    Parse {
        /// DSL file, or - for standard input (the default)
        file: Option<PathBuf>,
    },
    /// Parse a DSL update and check it against a session's memory (unknown IDs and so on)
    Validate {
        /// DSL file, or - for standard input (the default)
        file: Option<PathBuf>,
        /// The session: its ID (found from any directory when it is unique) or its directory
        #[arg(long, value_name = "ID|DIR")]
        session: Option<String>,
    },
    /// Apply a DSL update to a session's working memory
    Apply {
        /// The session: its ID (found from any directory when it is unique) or its directory
        #[arg(long, value_name = "ID|DIR")]
        session: String,
        /// DSL file, or - for standard input (the default)
        file: Option<PathBuf>,
    },
    /// Print a session's overview.md (or its structured state with --json)
    Show {
        /// The session: its ID (found from any directory when it is unique) or its directory
        #[arg(long, value_name = "ID|DIR")]
        session: String,
    },
    /// Print the memory-update prompt for a task
    Prompt {
        /// The session: its ID (found from any directory when it is unique) or its directory
        #[arg(long, value_name = "ID|DIR")]
        session: String,
        /// What the agent is working on; the prompt asks for the memory this task needs
        #[arg(long)]
        task: String,
    },
    /// Print a session's update log, with the diff of every update
    Log {
        /// The session: its ID (found from any directory when it is unique) or its directory
        #[arg(long, value_name = "ID|DIR")]
        session: String,
    },
}

pub fn run(ctx: &Ctx, command: DslCommand, json: bool) -> Result<ExitCode> {
    match command {
        DslCommand::Parse { file } => {
            let Some((name, text)) = report::parsable(read_input(file.as_ref()), json)? else { return Ok(ExitCode::from(1)) };
            let outcome = ctx.runtime.instance()?.parse(&text)?;
            return Ok(report::parse(&name, &outcome, json));
        }
        DslCommand::Validate { file, session } => {
            let Some((name, text)) = report::parsable(read_input(file.as_ref()), json)? else { return Ok(ExitCode::from(1)) };
            let mut memory = match session {
                Some(s) => ctx.memory(&ctx.session(&s)?)?,
                None => ctx.runtime.new_memory()?,
            };
            let outcome = memory.validate(&text)?;
            return Ok(report::parse(&name, &outcome, json));
        }
        DslCommand::Apply { session, file } => {
            let s = ctx.session(&session)?;
            let (name, text) = read_input(file.as_ref())?;
            match workmem_memory::apply(&ctx.runtime, &s, &text) {
                Ok(applied) => report::applied(&name, &applied, json),
                Err(workmem_memory::Error::InvalidDsl(ds)) => {
                    report::rejected(&name, &ds, json);
                    return Ok(ExitCode::from(1));
                }
                Err(e) => return Err(e.into()),
            }
        }
        DslCommand::Show { session } => {
            let s = ctx.session(&session)?;
            if json {
                print!("{}", ctx.memory(&s)?.save()?);
            } else {
                print!("{}", report::file_text(&s.overview()?));
            }
        }
        DslCommand::Prompt { session, task } => {
            let s = ctx.session(&session)?;
            let prompt = ctx.memory(&s)?.update_prompt(&task)?;
            if json {
                report::print_json(&serde_json::json!({"prompt": prompt}));
            } else {
                print!("{prompt}");
            }
        }
        DslCommand::Log { session } => {
            let entries = ctx.session(&session)?.log()?;
            if json {
                println!("{}", serde_json::to_string_pretty(&entries)?);
            } else if entries.is_empty() {
                println!("no updates yet");
            } else {
                for e in &entries {
                    println!("== {}\n{}", report::one_line(e["at"].as_str().unwrap_or_default()), report::visible(e["diff"].as_str().unwrap_or_default()));
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
