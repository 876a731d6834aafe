//! `workmem validate`: a DSL update checked against a session's memory (unknown IDs and so on).

use crate::ctx::Ctx;
use crate::input::read_input;
use crate::report;
use anyhow::Result;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// DSL file, or - for standard input (the default)
    file: Option<PathBuf>,
    /// The session: its ID (found from any directory when it is unique) or its directory
    #[arg(long, value_name = "ID|DIR")]
    session: Option<String>,
}

pub fn run(ctx: &Ctx, Args { file, session }: Args, json: bool) -> Result<ExitCode> {
    let Some((name, text)) = report::parsable(read_input(file.as_ref()), json)? else { return Ok(ExitCode::from(1)) };
    let mut memory = match session {
        Some(s) => ctx.memory(&ctx.session(&s)?)?,
        None => ctx.runtime.new_memory()?,
    };
    let outcome = memory.validate(&text)?;
    Ok(report::parse(&name, &outcome, json))
}
