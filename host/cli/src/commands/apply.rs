//! `workmem apply`: a DSL update applied to a session's working memory and committed.

use crate::ctx::Ctx;
use crate::input::read_input;
use crate::report;
use anyhow::Result;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// The session: its ID (found from any directory when it is unique) or its directory
    #[arg(long, value_name = "ID|DIR")]
    session: String,
    /// DSL file, or - for standard input (the default)
    file: Option<PathBuf>,
}

pub fn run(ctx: &Ctx, Args { session, file }: Args, json: bool) -> Result<ExitCode> {
    let s = ctx.session(&session)?;
    let (name, text) = read_input(file.as_ref())?;
    match workmem_commit::apply(&ctx.runtime, &s, &text) {
        Ok(applied) => report::applied(&name, &applied, json),
        Err(workmem_commit::Error::InvalidDsl(ds)) => {
            report::rejected(&name, &ds, json);
            return Ok(ExitCode::from(1));
        }
        Err(e) => return Err(e.into()),
    }
    Ok(ExitCode::SUCCESS)
}
