//! `workmem compact`: a session's history compacted by hand (spec 003 `compact_history`); the
//! originals stay in messages.jsonl.

use crate::ctx::Ctx;
use crate::model::{LlmArgs, model};
use crate::{names, report};
use anyhow::Result;
use std::process::ExitCode;
use workmem_runtime::history::{Strategy, Target};

#[derive(clap::Args)]
pub struct Args {
    /// The session: its ID (found from any directory when it is unique) or its directory
    #[arg(long, value_name = "ID|DIR")]
    session: String,
    /// What to compact: conversation (user/assistant messages), tools (tool outputs), all
    #[arg(long, value_parser = names::named::<Target>(), default_value = "all")]
    target: Target,
    /// archive (originals to a detail file, no LLM) or summarize (asks the configured LLM)
    #[arg(long, value_parser = names::named::<Strategy>(), default_value = "archive")]
    strategy: Strategy,
    /// Recent turns (a message, or a tool call with its results) kept whole
    #[arg(long, default_value_t = workmem_agent::compact::KEEP_RECENT)]
    keep_recent: u32,
    /// Where the archive or summary goes (default working-memory/detail/history-<seq>.md)
    #[arg(long, value_name = "PATH")]
    archive_to: Option<String>,
    /// Refuse a compaction that would free fewer tokens
    #[arg(long, default_value_t = 0)]
    min_free: u32,
    /// The model (its tokenizer counts the tokens; summarize asks it; default:
    /// $WORKMEM_MODEL, else the config file's `model`, else gpt-4o-mini)
    #[arg(long)]
    model: Option<String>,
    #[command(flatten)]
    llm: LlmArgs,
}

pub fn run(ctx: &Ctx, a: Args, json: bool) -> Result<ExitCode> {
    let s = ctx.session(&a.session)?;
    let model = model(a.model)?;
    let tokenizer = workmem_llm::Tokenizer::for_model(&model);
    let args = workmem_agent::compact::Args {
        target: a.target,
        strategy: a.strategy,
        keep_recent: a.keep_recent,
        archive_to: a.archive_to,
        min_free: a.min_free,
        keep: Vec::new(),
    };
    let client = match a.strategy {
        Strategy::Summarize => Some(a.llm.client(&model)?),
        Strategy::Archive => None,
    };
    let done = workmem_agent::compact::compact(&s, &ctx.runtime, &tokenizer, client.as_ref(), &args)?;
    report::compacted(&done, json);
    Ok(ExitCode::SUCCESS)
}
