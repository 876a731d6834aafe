//! Bounded context (spec 003) by hand: the request the next call would send, a compaction,
//! and the history as logged or as the model sees it.

use crate::model::{LlmArgs, model};
use crate::request::ContextArgs;
use crate::{Ctx, names, report};
use anyhow::Result;
use std::process::ExitCode;
use workmem_runtime::history::{Strategy, Target};

#[derive(clap::Subcommand)]
pub enum HistoryCommand {
    /// Print the exact request the next LLM call would send: the OpenAI message array, with
    /// working memory injected and context_meta last
    Context {
        /// The session: its ID (found from any directory when it is unique) or its directory
        #[arg(long, value_name = "ID|DIR")]
        session: String,
        #[command(flatten)]
        context: ContextArgs,
    },
    /// Compact a session's history (spec 003 compact_history): old messages are replaced by
    /// placeholders, archive notes or a summary; the originals stay in messages.jsonl
    Compact {
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
    },
    /// Print messages of a session by sequence number as they were logged, whatever
    /// compacted them since (or, without --seq, the history the model now sees)
    History {
        /// The session: its ID (found from any directory when it is unique) or its directory
        #[arg(long, value_name = "ID|DIR")]
        session: String,
        /// A sequence number (17) or a range (12-20)
        #[arg(long)]
        seq: Option<String>,
    },
}

pub fn run(ctx: &Ctx, command: HistoryCommand, json: bool) -> Result<ExitCode> {
    match command {
        HistoryCommand::Context { session, context } => {
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
        }
        HistoryCommand::Compact { session, target, strategy, keep_recent, archive_to, min_free, model: name, llm } => {
            let s = ctx.session(&session)?;
            let model = model(name)?;
            let tokenizer = workmem_llm::Tokenizer::for_model(&model);
            let args = workmem_agent::compact::Args { target, strategy, keep_recent, archive_to, min_free, keep: Vec::new() };
            let client = match strategy {
                Strategy::Summarize => Some(llm.client(&model)?),
                Strategy::Archive => None,
            };
            let done = workmem_agent::compact::compact(&s, &ctx.runtime, &tokenizer, client.as_ref(), &args)?;
            report::compacted(&done, json);
        }
        HistoryCommand::History { session, seq } => {
            let s = ctx.session(&session)?;
            match seq {
                Some(spec) if json => {
                    let found = workmem_agent::compact::originals(&s, &spec).map_err(anyhow::Error::msg)?;
                    let v: Vec<_> = found.iter().map(|(seq, m)| serde_json::json!({"seq": seq, "message": m})).collect();
                    println!("{}", serde_json::to_string_pretty(&v)?);
                }
                Some(spec) => print!("{}", report::file_text(&workmem_agent::compact::read_history(&s, &spec).map_err(anyhow::Error::msg)?)),
                None => {
                    let view = s.view()?.entries;
                    if json {
                        let v: Vec<_> = view.iter().map(|(seq, m)| serde_json::json!({"seq": seq, "message": m})).collect();
                        println!("{}", serde_json::to_string_pretty(&v)?);
                    } else if view.is_empty() {
                        println!("no messages yet: `workmem agent` and `workmem proxy` log a session's messages");
                    } else {
                        for (seq, m) in &view {
                            let first = m.content.lines().next().unwrap_or_default();
                            println!("#{seq:<5} {:<9} {}", report::one_line(&m.role), report::one_line(&first.chars().take(100).collect::<String>()));
                        }
                    }
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
