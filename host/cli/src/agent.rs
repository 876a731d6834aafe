//! The model at work on a session: one memory update (`update`), one agent turn with the
//! memory tools (`agent`), and the same tools served over MCP (`mcp`), each optionally as a
//! worker on a board task.

use crate::model::{LlmArgs, model};
use crate::request::ContextArgs;
use crate::{Ctx, db, report};
use anyhow::{Context, Result};
use std::process::ExitCode;
use workmem_runtime::Runtime;

#[derive(clap::Subcommand)]
pub enum AgentCommand {
    /// Run one memory update with the configured LLM (OPENAI_BASE_URL, OPENAI_API_KEY,
    /// WORKMEM_MODEL): prompt, answer, re-prompt while malformed, apply
    Update {
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
    },
    /// Talk to the configured LLM for one turn, with the memory tools: it reads and writes
    /// its working memory as it works; prints what it does and its answer
    Agent {
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
    },
    /// Serve a session's memory tools over MCP on stdin/stdout (the agent loop's tools, context documents, a board task's tools)
    Mcp {
        /// The session: its ID (found from any directory when it is unique, and made in the
        /// current one when no directory has it) or its directory
        #[arg(long, value_name = "ID|DIR")]
        session: String,
        #[command(flatten)]
        worker: WorkerArgs,
        /// Offer the context document tools (context_get, context_put) on this vault and no
        /// other, acting as --agent-name (default: $WORKMEM_AGENT, else mcp); without it they are not offered
        #[arg(long, value_name = "VAULT")]
        vault: Option<String>,
        /// How compact_history's summaries call the model
        #[command(flatten)]
        llm: LlmArgs,
        /// The longest message read from the client, in bytes, up to 16 MiB (past it rmcp would
        /// drop a message unanswered); a longer one gets a JSON-RPC error with its id
        #[arg(long, default_value_t = workmem_mcp::stdio::Limits::default().max_request_bytes as u64, value_parser = clap::value_parser!(u64).range(1024..=16 << 20))]
        max_request_bytes: u64,
        /// Requests being served at once (1 to 1024); more wait to be read
        #[arg(long, default_value_t = workmem_mcp::stdio::Limits::default().max_in_flight as u64, value_parser = clap::value_parser!(u64).range(1..=1024))]
        max_in_flight: u64,
    },
}

/// A worker on a shared board (spec 002).
#[derive(clap::Args)]
pub struct WorkerArgs {
    /// Work on a task of this board: its context and nudges ride on every request, the board tools are offered
    #[arg(long, value_name = "BOARD", requires = "board_task")]
    board: Option<String>,
    /// The board's task this agent works on, T-<n>
    #[arg(long, value_name = "TASK", requires = "board")]
    board_task: Option<String>,
    #[command(flatten)]
    db: db::DbArg,
    /// Who this agent is on the board (default: $WORKMEM_AGENT, else worker)
    #[arg(long, value_name = "AGENT")]
    agent_name: Option<String>,
}

impl WorkerArgs {
    fn worker(self, runtime: &Runtime) -> Result<Option<workmem_agent::board::Worker>> {
        let (Some(board), Some(task)) = (self.board, self.board_task) else { return Ok(None) };
        let db = self.db.target()?;
        let boards = workmem_store::board::Boards::open(&db, runtime.clone(), Default::default())?;
        let agent = self.agent_name.or_else(|| std::env::var("WORKMEM_AGENT").ok()).unwrap_or_else(|| "worker".into());
        Ok(Some(workmem_agent::board::Worker { boards, board, task, agent }))
    }
}

pub fn run(ctx: Ctx, command: AgentCommand, json: bool) -> Result<ExitCode> {
    match command {
        AgentCommand::Update { session, task, max_reprompts, model: name, llm } => {
            let s = ctx.session(&session)?;
            let llm = llm.client(&model(name)?)?;
            let r = workmem_agent::update::memory_update(&ctx.runtime, &s, llm, &task, max_reprompts)?;
            report::updated(&r, json);
        }
        AgentCommand::Agent { session, task, context, max_steps, llm, board } => {
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
                    compactions.push(
                        serde_json::json!({"seq": done.seq, "messages": done.messages, "tokens_before": done.tokens_before, "tokens_after": done.tokens_after}),
                    );
                }
            })?;
            if json {
                report::print_json(&serde_json::json!({"ok": true, "answer": answer, "tools": tools, "compactions": compactions}));
            }
        }
        AgentCommand::Mcp { session, worker, vault, llm, max_request_bytes, max_in_flight } => {
            let session = match ctx.session(&session) {
                // A host application starts the server from any directory: the session a
                // configuration names is made there on first use, and found by ID after.
                Err(e) if matches!(e.downcast_ref(), Some(workmem_store::Error::NoSuchSession { .. })) => {
                    let made = ctx.sessions.create(Some(&session), &ctx.runtime.instance()?.overview_template()?)?;
                    eprintln!("workmem mcp: made session {session} at {}", made.dir().display());
                    made
                }
                found => found?,
            };
            let documents = match vault {
                Some(vault) => {
                    let db = worker.db.target()?;
                    let actor = worker.agent_name.clone().or_else(|| std::env::var("WORKMEM_AGENT").ok()).unwrap_or_else(|| "mcp".into());
                    let documents = workmem_store::documents::Documents::open(&db, ctx.runtime.clone(), Default::default())?;
                    Some(workmem_agent::tools::DocumentAccess { documents, vault, actor })
                }
                None => None,
            };
            // compact_history's summaries use the model configured as for `workmem update`,
            // within --timeout and --retries; a summary waiting on it holds no other tool.
            let model = model(None)?;
            let tokenizer = workmem_llm::Tokenizer::for_model(&model);
            let llm = Some(llm.client(&model)?);
            let workspace = workmem_mcp::Workspace { worker: worker.worker(&ctx.runtime)?, session, tokenizer, runtime: ctx.runtime, llm, documents };
            let server = workmem_mcp::Server::new(workspace)?;
            let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the MCP server's runtime")?;
            // Both within usize: the parsers bound them.
            let limits = workmem_mcp::stdio::Limits { max_request_bytes: max_request_bytes as usize, max_in_flight: max_in_flight as usize };
            rt.block_on(server.serve_stdio(limits)).map_err(|e| anyhow::anyhow!("the MCP server failed: {e}"))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
