//! `workmem mcp`: a session's memory tools served over MCP on stdin/stdout (the agent loop's
//! tools, context documents, a board task's tools).

use crate::ctx::Ctx;
use crate::model::{LlmArgs, model};
use crate::worker::WorkerArgs;
use anyhow::{Context, Result};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
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
}

pub fn run(ctx: Ctx, Args { session, worker, vault, llm, max_request_bytes, max_in_flight }: Args) -> Result<ExitCode> {
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
    Ok(ExitCode::SUCCESS)
}
