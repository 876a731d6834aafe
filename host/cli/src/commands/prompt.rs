//! `workmem prompt`: the memory-update prompt for a task.

use crate::ctx::Ctx;
use crate::report;
use anyhow::Result;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// The session: its ID (found from any directory when it is unique) or its directory
    #[arg(long, value_name = "ID|DIR")]
    session: String,
    /// What the agent is working on; the prompt asks for the memory this task needs
    #[arg(long)]
    task: String,
}

pub fn run(ctx: &Ctx, Args { session, task }: Args, json: bool) -> Result<ExitCode> {
    let s = ctx.session(&session)?;
    let prompt = ctx.memory(&s)?.update_prompt(&task)?;
    if json {
        report::print_json(&serde_json::json!({"prompt": prompt}));
    } else {
        print!("{prompt}");
    }
    Ok(ExitCode::SUCCESS)
}
