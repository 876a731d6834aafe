//! `workmem context`: the exact request the next model call would send (spec 003), the working
//! memory in it and `context_meta` last.

use crate::ctx::Ctx;
use crate::report;
use crate::request::ContextArgs;
use anyhow::Result;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// The session: its ID (found from any directory when it is unique) or its directory
    #[arg(long, value_name = "ID|DIR")]
    session: String,
    #[command(flatten)]
    context: ContextArgs,
}

pub fn run(ctx: &Ctx, Args { session, context }: Args, json: bool) -> Result<ExitCode> {
    let s = ctx.session(&session)?;
    let options = context.options()?;
    let tokenizer = workmem_llm::Tokenizer::for_model(&options.model);
    let built = workmem_agent::context::build(&s, &mut ctx.runtime.instance()?, &tokenizer, &options)?;
    if json {
        let body = workmem_llm::chat_body(&options.model, &built.messages, Some(&options.tools));
        println!("{}", serde_json::to_string_pretty(&body)?);
    } else {
        for m in &built.messages {
            println!("━━ {}\n{}\n", m.role, report::visible(&m.content));
        }
        eprintln!("{} messages, {} tokens ({} for {})", built.messages.len(), built.stats.tokens_used, tokenizer.encoding, options.model);
    }
    Ok(ExitCode::SUCCESS)
}
