//! `workmem parse`: a DSL update read, and what it would do reported.

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
}

pub fn run(ctx: &Ctx, Args { file }: Args, json: bool) -> Result<ExitCode> {
    let Some((name, text)) = report::parsable(read_input(file.as_ref()), json)? else { return Ok(ExitCode::from(1)) };
    let outcome = ctx.runtime.instance()?.parse(&text)?;
    Ok(report::parse(&name, &outcome, json))
}
