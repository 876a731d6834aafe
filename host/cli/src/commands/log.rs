//! `workmem log`: a session's update log, with the diff of every update.

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
    Ok(ExitCode::SUCCESS)
}
