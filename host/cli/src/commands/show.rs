//! `workmem show`: a session's overview.md, or its structured state with `--json`.

use crate::ctx::Ctx;
use crate::report;
use anyhow::Result;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// The session: its ID (found from any directory when it is unique) or its directory
    #[arg(long, value_name = "ID|DIR")]
    session: String,
}

pub fn run(ctx: &Ctx, Args { session }: Args, json: bool) -> Result<ExitCode> {
    let s = ctx.session(&session)?;
    if json {
        print!("{}", ctx.memory(&s)?.save()?);
    } else {
        print!("{}", report::file_text(&s.overview()?));
    }
    Ok(ExitCode::SUCCESS)
}
