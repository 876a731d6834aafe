//! `workmem`: the command line over the host library.
//!
//! Exit status: 0 success, 1 invalid input or a failed operation, 2 usage error.

mod agent;
mod board;
mod component;
mod connections;
mod db;
mod demo;
mod doc;
mod dsl;
mod files;
mod history;
mod input;
mod model;
mod names;
mod proxy;
mod replay;
mod report;
mod request;
mod serve;
mod session;
mod token;
mod view;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use workmem_runtime::{Options, Runtime};
use workmem_store::{Session, Sessions};

#[derive(Parser)]
#[command(name = "workmem", version, about = "Structured working memory for LLM agents, run in a sandboxed Wasm component")]
struct Cli {
    /// Sessions root (default: $WORKMEM_SESSIONS_DIR, else ~/.ai/sessions)
    #[arg(long, global = true, value_name = "DIR")]
    sessions_dir: Option<PathBuf>,
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
    Session(session::SessionCommand),
    #[command(flatten)]
    Dsl(dsl::DslCommand),
    #[command(flatten)]
    Agent(agent::AgentCommand),
    #[command(flatten)]
    History(history::HistoryCommand),
    /// Read, write and list the memory files an LLM maintains (working-memory/ only)
    #[command(subcommand)]
    Memory(files::MemoryCommand),
    /// A shared task board for an orchestrator and its workers (spec 002), on SQLite or PostgreSQL
    Board(board::BoardArgs),
    /// Context documents (spec 004): one versioned text per memory, on SQLite or PostgreSQL
    Doc(doc::DocArgs),
    /// Serve context documents, boards and session memory over HTTP (bearer tokens from `grant`)
    Serve(serve::ServeArgs),
    /// Put workmem in front of an unmodified agent (Claude Code, Codex CLI, any Chat
    /// Completions client): point its API base URL here and its context stays bounded
    Proxy(proxy::ProxyArgs),
    /// List or revoke the tokens granted for boards, vaults and sessions
    Token(token::TokenArgs),
    /// Write a page that shows a person a session's memory (IDs, updates as diffs, compactions,
    /// tokens per request) and a board's task graph: one HTML file; `workmem serve` serves it live at /view
    View(view::ViewArgs),
    /// Replay recorded trajectories (JSONL, one message a line, as in tests/data/trajectories) and generated
    /// histories turn by turn under context policies: tokens, cost with caching, what each
    /// policy kept of the facts the agent needed, and the targets workmem is held to
    Replay(replay::command::ReplayArgs),
    /// Write the engine component (or the agent world's component, or the engine-go world's
    /// core module, which Gravity reads) to a file
    Component(component::ComponentArgs),
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

struct Ctx {
    runtime: Runtime,
    sessions: Sessions,
    sessions_root: PathBuf,
}

impl Ctx {
    fn new(cli: &Cli) -> Result<Self> {
        let runtime = Runtime::new(&Options::from_env().map_err(anyhow::Error::msg)?)?;
        let cwd = std::env::current_dir().context("reading the current directory")?;
        let root = match &cli.sessions_dir {
            Some(d) => d.clone(),
            None => workmem_store::session::root_dir()?,
        };
        Ok(Ctx { runtime, sessions: Sessions::new(&root, &cwd), sessions_root: root })
    }

    fn session(&self, spec: &str) -> Result<Session> {
        Ok(self.sessions.resolve(spec)?)
    }

    /// A session's memory, loaded into the engine (under its lock, briefly).
    fn memory(&self, session: &Session) -> Result<workmem_runtime::Memory> {
        let locked = session.lock()?;
        Ok(workmem_memory::load(&self.runtime, session, &locked)?)
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    let ctx = Ctx::new(&cli)?;
    let json = cli.json;
    match cli.command {
        Command::Demo => demo::run(&ctx.runtime, &ctx.sessions, json),
        Command::Session(command) => session::run(&ctx, command, json),
        Command::Dsl(command) => dsl::run(&ctx, command, json),
        Command::Agent(command) => agent::run(ctx, command, json),
        Command::History(command) => history::run(&ctx, command, json),
        Command::Memory(command) => files::run(&ctx, command, json),
        Command::Board(args) => board::run(ctx.runtime, args, json),
        Command::Doc(args) => doc::run(ctx.runtime, args, json),
        Command::Serve(args) => serve::run(ctx.runtime, ctx.sessions_root, args, json),
        Command::Proxy(args) => proxy::run(ctx.runtime, ctx.sessions, args, json),
        Command::Token(args) => token::run(args, json),
        Command::View(args) => view::run(&ctx, args, json),
        Command::Replay(args) => replay::command::command(&ctx.runtime, args, json),
        Command::Component(args) => component::run(args, json),
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
