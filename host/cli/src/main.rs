//! `workmem`: the command line over the host library.
//!
//! Exit status: 0 success, 1 invalid input or a failed operation, 2 usage error.

mod commands;
mod connections;
mod ctx;
mod db;
mod input;
mod model;
mod names;
mod report;
mod request;
mod worker;

use anyhow::Result;
use clap::{Parser, Subcommand};
use ctx::Ctx;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "workmem", version, about = "Structured working memory for LLM agents, run in a sandboxed Wasm component")]
struct Cli {
    /// Sessions root (default: $WORKMEM_SESSIONS_DIR, else ~/.ai/sessions)
    #[arg(long, global = true, value_name = "DIR")]
    sessions_dir: Option<PathBuf>,
    /// Keep sessions in this PostgreSQL database instead of directories
    /// (postgres://user:password@host/db; default: $WORKMEM_SESSIONS_DB): every process
    /// given the same database shares its sessions
    #[arg(long, global = true, value_name = "POSTGRES_URL", conflicts_with = "sessions_dir")]
    sessions_db: Option<String>,
    /// Print JSON (errors included, as {"ok": false, "error": {...}})
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Create a session, apply sample LLM responses to it, and show what happens
    Demo,
    /// Create, list and inspect sessions
    #[command(subcommand)]
    Session(commands::session::SessionCommand),
    /// Parse a DSL update and report what it would do
    Parse(commands::parse::Args),
    /// Parse a DSL update and check it against a session's memory (unknown IDs and so on)
    Validate(commands::validate::Args),
    /// Apply a DSL update to a session's working memory
    Apply(commands::apply::Args),
    /// Print a session's overview.md (or its structured state with --json)
    Show(commands::show::Args),
    /// Print the memory-update prompt for a task
    Prompt(commands::prompt::Args),
    /// Print a session's update log, with the diff of every update
    Log(commands::log::Args),
    /// Run one memory update with the configured LLM (OPENAI_BASE_URL, OPENAI_API_KEY,
    /// WORKMEM_MODEL): prompt, answer, re-prompt while malformed, apply
    Update(commands::update::Args),
    /// Talk to the configured LLM for one turn, with the memory tools: it reads and writes
    /// its working memory as it works; prints what it does and its answer
    Agent(commands::agent::Args),
    /// Serve a session's memory tools over MCP on stdin/stdout (the agent loop's tools, context documents, a board task's tools)
    Mcp(commands::mcp::Args),
    /// Print the exact request the next LLM call would send: the OpenAI message array, with
    /// working memory injected and context_meta last
    Context(commands::context::Args),
    /// Compact a session's history (spec 003 compact_history): old messages are replaced by
    /// placeholders, archive notes or a summary; the originals stay in messages.jsonl
    Compact(commands::compact::Args),
    /// Print messages of a session by sequence number as they were logged, whatever
    /// compacted them since (or, without --seq, the history the model now sees)
    History(commands::history::Args),
    /// Read, write and list the memory files an LLM maintains (working-memory/ only)
    #[command(subcommand)]
    Memory(commands::memory::Command),
    /// A shared task board for an orchestrator and its workers (spec 002), on SQLite or PostgreSQL
    Board(commands::board::BoardArgs),
    /// Context documents (spec 004): one versioned text per memory, on SQLite or PostgreSQL
    Doc(commands::doc::DocArgs),
    /// Serve context documents, boards and session memory over HTTP (bearer tokens from `grant`)
    Serve(commands::serve::ServeArgs),
    /// Put workmem in front of an unmodified agent (Claude Code, Codex CLI, any Chat
    /// Completions client): point its API base URL here and its context stays bounded
    Proxy(commands::proxy::ProxyArgs),
    /// List or revoke the tokens granted for boards, vaults and sessions
    Token(commands::token::TokenArgs),
    /// Write a page that shows a person a session's memory (IDs, updates as diffs, compactions,
    /// tokens per request) and a board's task graph: one HTML file; `workmem serve` serves it live at /view
    View(commands::view::ViewArgs),
    /// Write the engine component (or the agent world's component, or the engine-go world's
    /// core module, which Gravity reads) to a file
    Component(commands::component::ComponentArgs),
}

fn main() -> ExitCode {
    die_on_closed_pipe();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return report::usage(e),
    };
    let as_json = cli.json;
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            report::error(&e, as_json);
            ExitCode::from(1)
        }
    }
}

/// `workmem log | head`: when the reader goes away, end quietly as Unix tools do (SIGPIPE),
/// instead of Rust's default of ignoring the signal and panicking at the next print.
#[allow(unsafe_code)] // one libc call, before any thread exists
fn die_on_closed_pipe() {
    // SAFETY: setting a signal's disposition to its default at startup, single-threaded.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    let ctx = Ctx::new(cli.sessions_dir.as_deref(), cli.sessions_db.as_deref())?;
    let json = cli.json;
    match cli.command {
        Command::Demo => commands::demo::run(&ctx.runtime, &ctx.sessions, json),
        Command::Session(command) => commands::session::run(&ctx, command, json),
        Command::Parse(args) => commands::parse::run(&ctx, args, json),
        Command::Validate(args) => commands::validate::run(&ctx, args, json),
        Command::Apply(args) => commands::apply::run(&ctx, args, json),
        Command::Show(args) => commands::show::run(&ctx, args, json),
        Command::Prompt(args) => commands::prompt::run(&ctx, args, json),
        Command::Log(args) => commands::log::run(&ctx, args, json),
        Command::Update(args) => commands::update::run(&ctx, args, json),
        Command::Agent(args) => commands::agent::run(&ctx, args, json),
        Command::Mcp(args) => commands::mcp::run(ctx, args),
        Command::Context(args) => commands::context::run(&ctx, args, json),
        Command::Compact(args) => commands::compact::run(&ctx, args, json),
        Command::History(args) => commands::history::run(&ctx, args, json),
        Command::Memory(command) => commands::memory::run(&ctx, command, json),
        Command::Board(args) => commands::board::run(ctx.runtime, args, json),
        Command::Doc(args) => commands::doc::run(ctx.runtime, args, json),
        Command::Serve(args) => commands::serve::run(ctx.runtime, ctx.sessions, args, json),
        Command::Proxy(args) => commands::proxy::run(ctx.runtime, ctx.sessions, args, json),
        Command::Token(args) => commands::token::run(args, json),
        Command::View(args) => commands::view::run(&ctx, args, json),
        Command::Component(args) => commands::component::run(args, json),
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Every option and argument of every verb says what it is in `--help`.
    #[test]
    fn every_option_has_help_text() {
        fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for arg in cmd.get_arguments().filter(|a| !matches!(a.get_id().as_str(), "help" | "version")) {
                if arg.get_help().is_none() {
                    missing.push(format!("{path} {}", arg.get_id()));
                }
            }
            for sub in cmd.get_subcommands() {
                walk(sub, &format!("{path} {}", sub.get_name()), missing);
            }
        }
        let mut missing = Vec::new();
        walk(&super::Cli::command(), "workmem", &mut missing);
        assert!(missing.is_empty(), "options without help text: {missing:#?}");
    }
}
