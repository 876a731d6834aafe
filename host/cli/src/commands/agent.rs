//! `workmem agent`: one turn of the configured model with the memory tools, optionally as a
//! worker on a board task; prints what it does and its answer.

use crate::ctx::Ctx;
use crate::model::LlmArgs;
use crate::report;
use crate::request::ContextArgs;
use crate::worker::WorkerArgs;
use anyhow::Result;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// The session: its ID (found from any directory when it is unique) or its directory
    #[arg(long, value_name = "ID|DIR")]
    session: String,
    /// What to do
    task: String,
    #[command(flatten)]
    context: ContextArgs,
    /// LLM calls the turn may make
    #[arg(long, default_value_t = 20)]
    max_steps: u32,
    #[command(flatten)]
    llm: LlmArgs,
    #[command(flatten)]
    board: WorkerArgs,
}

pub fn run(ctx: &Ctx, Args { session, task, context, max_steps, llm, board }: Args, json: bool) -> Result<ExitCode> {
    let s = ctx.session(&session)?;
    let options = workmem_agent::turn::Options { context: context.options()?, max_steps };
    let llm = llm.client(&options.context.model)?;
    let mut worker = board.worker(&ctx.runtime)?;
    // Under --json, what the turn did, printed once it ends: `{ok, answer, tools, compactions}`.
    let (mut answer, mut tools, mut compactions) = (String::new(), Vec::new(), Vec::new());
    workmem_agent::turn::turn_on(&s, &ctx.runtime, &llm, &options, worker.as_mut(), &task, &mut |event| match event {
        workmem_agent::turn::Event::Tool { name, arguments, ok, result } => {
            let mark = if *ok { "→" } else { "✗" };
            let first = result.lines().next().unwrap_or_default();
            eprintln!("{mark} {}({}): {}", report::one_line(name), report::one_line(arguments), report::one_line(first));
            tools.push(serde_json::json!({"name": name, "arguments": arguments, "ok": ok, "result": result}));
        }
        workmem_agent::turn::Event::Answer(text) if json => answer.push_str(text),
        workmem_agent::turn::Event::Answer(text) => println!("{}", report::visible(text)),
        workmem_agent::turn::Event::Compacted(done) => {
            eprintln!("⇣ {}", done.notice);
            compactions
                .push(serde_json::json!({"seq": done.seq, "messages": done.messages, "tokens_before": done.tokens_before, "tokens_after": done.tokens_after}));
        }
    })?;
    if json {
        report::print_json(&serde_json::json!({"ok": true, "answer": answer, "tools": tools, "compactions": compactions}));
    }
    Ok(ExitCode::SUCCESS)
}
