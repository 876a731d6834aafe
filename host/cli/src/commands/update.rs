//! `workmem update`: one memory update with the configured model: prompt, answer, re-prompt
//! while malformed, apply.

use crate::ctx::Ctx;
use crate::model::{LlmArgs, model};
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
    /// How many times a malformed answer is sent back for correction
    #[arg(long, default_value_t = workmem_agent::update::DEFAULT_REPROMPTS)]
    max_reprompts: u32,
    /// The model (default: $WORKMEM_MODEL, else the config file's, else gpt-4o-mini)
    #[arg(long)]
    model: Option<String>,
    #[command(flatten)]
    llm: LlmArgs,
}

pub fn run(ctx: &Ctx, Args { session, task, max_reprompts, model: name, llm }: Args, json: bool) -> Result<ExitCode> {
    let s = ctx.session(&session)?;
    let llm = llm.client(&model(name)?)?;
    let r = workmem_agent::update::memory_update(&ctx.runtime, &s, llm, &task, max_reprompts)?;
    report::updated(&r, json);
    Ok(ExitCode::SUCCESS)
}
