//! `workmem`: the command line over the host library.
//!
//! Exit status: 0 success, 1 invalid input or a failed operation, 2 usage error.

mod board;
mod chart;
mod db;
mod demo;
mod doc;
mod names;

mod replay;
mod report;
mod serve;
mod token;
mod view;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;
use workmem_runtime::history::{Strategy, Target};
use workmem_runtime::{Options, Runtime};
use workmem_store::db::Scope;
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
    Session(SessionCommand),
    /// A shared task board for an orchestrator and its workers (spec 002), on SQLite or PostgreSQL
    Board(board::BoardArgs),
    /// Context documents (spec 004): one versioned text per memory, on SQLite or PostgreSQL
    Doc(doc::DocArgs),
    /// Serve context documents, boards and session memory over HTTP (bearer tokens from `grant`)
    Serve(serve::ServeArgs),
    /// List or revoke the tokens granted for boards, vaults and sessions
    Token(token::TokenArgs),
    /// Write a page that shows a person a session's memory (IDs, updates as diffs, compactions,
    /// tokens per request) and a board's task graph: one HTML file; `workmem serve` serves it live at /view
    View(view::ViewArgs),
    /// Serve a session's memory tools over MCP on stdin/stdout (the agent loop's tools, context documents, a board task's tools)
    Mcp {
        /// The session: its ID (found from any directory when it is unique) or its directory
        #[arg(long, value_name = "ID|DIR")]
        session: String,
        #[command(flatten)]
        worker: WorkerArgs,
        /// Offer the context document tools (context_get, context_put) on this vault and no
        /// other, acting as --agent-name (default: $WORKMEM_AGENT, else mcp); without it they are not offered
        #[arg(long, value_name = "VAULT")]
        vault: Option<String>,
    },
    /// Parse a DSL update and report what it would do
    Parse {
        /// DSL file, or - for standard input (the default)
        file: Option<PathBuf>,
    },
    /// Parse a DSL update and check it against a session's memory (unknown IDs and so on)
    Validate {
        /// DSL file, or - for standard input (the default)
        file: Option<PathBuf>,
        /// The session: its ID (found from any directory when it is unique) or its directory
        #[arg(long, value_name = "ID|DIR")]
        session: Option<String>,
    },
    /// Apply a DSL update to a session's working memory
    Apply {
        /// The session: its ID (found from any directory when it is unique) or its directory
        #[arg(long, value_name = "ID|DIR")]
        session: String,
        /// DSL file, or - for standard input (the default)
        file: Option<PathBuf>,
    },
    /// Print a session's overview.md (or its structured state with --json)
    Show {
        /// The session: its ID (found from any directory when it is unique) or its directory
        #[arg(long, value_name = "ID|DIR")]
        session: String,
    },
    /// Print the memory-update prompt for a task
    Prompt {
        /// The session: its ID (found from any directory when it is unique) or its directory
        #[arg(long, value_name = "ID|DIR")]
        session: String,
        /// What the agent is working on; the prompt asks for the memory this task needs
        #[arg(long)]
        task: String,
    },
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
        /// The model (its tokenizer counts the tokens; summarize asks it)
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
    /// Replay recorded trajectories (the JSONL of shared/data/trajectories) and generated
    /// histories turn by turn under context policies: tokens, cost with caching, what each
    /// policy kept of the facts the agent needed, and the targets workmem is held to
    Replay {
        /// Trajectory files (.jsonl), or directories of them
        files: Vec<PathBuf>,
        /// One policy, or all of them: full, mask (all but the last 5 tool outputs masked),
        /// mask+net (with a safety net), mask-batched, mask-batched+net, last-k (the task and
        /// the last 5 groups), safety-net (workmem's alone), workmem (the compression guide and
        /// the safety net)
        #[arg(long, value_enum, default_value_t = ReplayPolicy::All)]
        policy: ReplayPolicy,
        /// Generated histories of a shape too (repeat it, or all): parallel, large-outputs,
        /// user-in-loop, tiny-steps, instructions
        #[arg(long, value_enum)]
        shape: Vec<ReplayShape>,
        /// Generated histories of each shape
        #[arg(long, default_value_t = 4)]
        seeds: u64,
        /// The context window, in tokens (every policy gets the same)
        #[arg(long, default_value_t = 16_000)]
        window: u32,
        /// Draw tokens per request of the longest trajectories to this PNG file
        #[arg(long, value_name = "FILE")]
        png: Option<PathBuf>,
        /// Write every request of every policy as it would be sent, one JSON body a line, to
        /// DIR/<history>.<policy>.jsonl
        #[arg(long, value_name = "DIR")]
        requests: Option<PathBuf>,
        /// Keep the sessions the workmem policies replay into under DIR/<history>.<policy>/
        /// (by default they are removed)
        #[arg(long, value_name = "DIR")]
        sessions: Option<PathBuf>,
    },
    /// Read, write and list the memory files an LLM maintains (working-memory/ only)
    #[command(subcommand)]
    Memory(MemoryCommand),
    /// Print a session's update log, with the diff of every update
    Log {
        /// The session: its ID (found from any directory when it is unique) or its directory
        #[arg(long, value_name = "ID|DIR")]
        session: String,
    },
    /// Write the engine component (or the agent world's component, or the engine-go world's
    /// core module, which Gravity reads) to a file
    Component {
        /// The file to write
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        /// The engine-go world's core module (what Gravity reads), not a component
        #[arg(long, conflicts_with = "agent")]
        go: bool,
        /// The agent world's component: the engine plus the llm, session-store and clock imports
        #[arg(long)]
        agent: bool,
    },
}

/// How the LLM is called; where and with which key come from the environment or config file.
#[derive(clap::Args)]
struct LlmArgs {
    /// Seconds one LLM call may take
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<f64>,
    /// Further attempts at an LLM call after a 429, 5xx, timeout or broken stream
    #[arg(long)]
    retries: Option<u32>,
    /// Ask for whole answers instead of streams
    #[arg(long)]
    no_stream: bool,
}

impl LlmArgs {
    fn client(&self, model: &str) -> Result<workmem_llm::Client> {
        let mut config = workmem_llm::Config::load()?;
        config.model = model.to_string();
        config.stream = !self.no_stream;
        if let Some(secs) = self.timeout {
            config.timeout = std::time::Duration::try_from_secs_f64(secs).context("--timeout takes a number of seconds")?;
        }
        config.max_retries = self.retries.unwrap_or(config.max_retries);
        Ok(workmem_llm::Client::new(config))
    }
}

/// How requests are assembled (spec 001 US-2, US-3, US-8; spec 003 §2.3).
#[derive(clap::Args)]
struct ContextArgs {
    /// The model (its tokenizer counts the tokens); default $WORKMEM_MODEL, else gpt-4o-mini
    #[arg(long)]
    model: Option<String>,
    /// Which history goes in: auto (all until overview.md is maintained, then the active
    /// turn), all, active-turn, or last-n
    #[arg(long, value_enum, default_value_t = History::Auto)]
    history: History,
    /// With --history last-n: how many messages
    #[arg(long, default_value_t = 10)]
    last_n: u32,
    /// The model's context window, in tokens
    #[arg(long, default_value_t = 128_000)]
    tokens_max: u32,
    /// Rounds without a memory update before the reminder insists (0: never)
    #[arg(long, default_value_t = workmem_agent::context::REMIND_AFTER_ROUNDS)]
    remind_after: u32,
    /// From here the reminder asks to archive: a percentage (50%) or a token count
    #[arg(long, default_value = "50%")]
    strong_reminder: String,
    /// The agent's system prompt, from a file
    #[arg(long, value_name = "FILE")]
    system: Option<PathBuf>,
    /// The safety net: before a request would reach this, the history is compacted; a
    /// percentage of --tokens-max (75%), a token count, or off
    #[arg(long, default_value = "75%")]
    compact_at: String,
    /// What the safety net compacts down to (a percentage or a token count): well under
    /// --compact-at, so the request then grows append-only, and cached, for a while
    #[arg(long, default_value = "50%")]
    compact_goal: String,
    /// Recent turns compaction keeps whole
    #[arg(long, default_value_t = workmem_agent::compact::KEEP_RECENT)]
    keep_recent: u32,
    /// Compact by the compression guide (tools from 20%, conversation from 40%, all from
    /// 60%) instead of leaving it to the model: spec 003's automatic mode
    #[arg(long)]
    auto_compact: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ReplayPolicy {
    Full,
    Mask,
    #[value(name = "mask+net")]
    MaskNet,
    MaskBatched,
    #[value(name = "mask-batched+net")]
    MaskBatchedNet,
    LastK,
    SafetyNet,
    Workmem,
    All,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ReplayShape {
    Parallel,
    LargeOutputs,
    UserInLoop,
    TinySteps,
    Instructions,
    All,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum History {
    Auto,
    All,
    ActiveTurn,
    LastN,
}

impl ContextArgs {
    fn options(&self) -> Result<workmem_agent::context::Options> {
        use workmem_runtime::HistoryMode;
        let model = match &self.model {
            Some(m) => m.clone(),
            None => workmem_llm::Config::load()?.model,
        };
        let mut o = workmem_agent::context::Options::new(&model, workmem_agent::tools::openai_tools(false));
        o.history = match self.history {
            History::Auto => HistoryMode::Auto,
            History::All => HistoryMode::All,
            History::ActiveTurn => HistoryMode::ActiveTurn,
            History::LastN => HistoryMode::LastN(self.last_n),
        };
        o = o.with_window(self.tokens_max);
        o.compact_at = match self.compact_at.trim() {
            "off" => None,
            spec => Some(workmem_agent::context::threshold(spec, self.tokens_max)?),
        };
        o.compact_goal = workmem_agent::context::threshold(&self.compact_goal, self.tokens_max)?;
        o.keep_recent = self.keep_recent;
        o.auto_compact = self.auto_compact;
        o.remind_after_rounds = Some(self.remind_after).filter(|&n| n > 0);
        o.strong_reminder_tokens = Some(workmem_agent::context::threshold(&self.strong_reminder, self.tokens_max)?).filter(|&n| n > 0);
        if let Some(path) = &self.system {
            o.system_prompt = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        }
        Ok(o)
    }
}

/// A worker on a shared board (spec 002).
#[derive(clap::Args)]
struct WorkerArgs {
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

#[derive(Subcommand)]
enum MemoryCommand {
    /// Print a memory file, e.g. working-memory/overview.md
    Read {
        /// The session: its ID (found from any directory when it is unique) or its directory
        #[arg(long, value_name = "ID|DIR")]
        session: String,
        /// The file, beneath the session directory (working-memory/ only)
        path: String,
    },
    /// Replace a memory file with FILE (or standard input), e.g. working-memory/detail/notes.md
    Write {
        /// The session: its ID (found from any directory when it is unique) or its directory
        #[arg(long, value_name = "ID|DIR")]
        session: String,
        /// The file, beneath the session directory (working-memory/ only)
        path: String,
        /// The new content, or - for standard input (the default)
        file: Option<PathBuf>,
    },
    /// List the memory files under a folder (default working-memory)
    List {
        /// The session: its ID (found from any directory when it is unique) or its directory
        #[arg(long, value_name = "ID|DIR")]
        session: String,
        /// The folder, beneath the session directory (working-memory/ only)
        #[arg(default_value = workmem_store::MEMORY_DIR)]
        path: String,
    },
}

#[derive(Subcommand)]
enum SessionCommand {
    /// Create a session for the current directory
    New {
        /// The session's ID (letters, digits, -, _ and .); default: the time and a random suffix
        #[arg(long)]
        id: Option<String>,
    },
    /// List the sessions of the current directory (of every directory with --all)
    List {
        /// Every directory's sessions
        #[arg(long)]
        all: bool,
    },
    /// Show a session's metadata and files
    Show {
        /// The session: its ID (found from any directory when it is unique) or its directory
        session: String,
    },
    /// Issue a token that lets AGENT read and update this session's memory over HTTP (workmem serve)
    Grant {
        /// The session's ID
        session: String,
        /// The agent the token acts as
        agent: String,
        #[command(flatten)]
        db: db::DbArg,
        #[command(flatten)]
        limits: token::GrantArgs,
    },
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
        Ok(workmem_agent::apply::load(&self.runtime, session, &locked)?)
    }
}

fn model(name: Option<String>) -> Result<String> {
    Ok(match name {
        Some(m) => m,
        None => workmem_llm::Config::load()?.model,
    })
}

fn run(cli: Cli) -> Result<ExitCode> {
    let ctx = Ctx::new(&cli)?;
    let json = cli.json;
    match cli.command {
        Command::Board(args) => board::run(ctx.runtime, args, json),
        Command::Token(args) => token::run(args, json),
        Command::Doc(args) => doc::run(ctx.runtime, args, json),
        Command::Serve(args) => serve::run(ctx.runtime, ctx.sessions_root, args, json),
        Command::View(args) => view::run(&ctx, args, json),
        Command::Mcp { session, worker, vault } => {
            let session = ctx.session(&session)?;
            let documents = match vault {
                Some(vault) => {
                    let db = worker.db.target()?;
                    let actor = worker.agent_name.clone().or_else(|| std::env::var("WORKMEM_AGENT").ok()).unwrap_or_else(|| "mcp".into());
                    let documents = workmem_store::documents::Documents::open(&db, ctx.runtime.clone(), Default::default())?;
                    Some(workmem_agent::tools::DocumentAccess { documents, vault, actor })
                }
                None => None,
            };
            // compact_history's summaries use the model configured as for `workmem update`.
            let config = workmem_llm::Config::load()?;
            let tokenizer = workmem_llm::Tokenizer::for_model(&config.model);
            let llm = Some(workmem_llm::Client::new(config));
            let workspace = workmem_mcp::Workspace { worker: worker.worker(&ctx.runtime)?, session, tokenizer, runtime: ctx.runtime, llm, documents };
            let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the MCP server's runtime")?;
            rt.block_on(workmem_mcp::Server::new(workspace).serve_stdio()).map_err(|e| anyhow::anyhow!("the MCP server failed: {e}"))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Demo => demo::run(&ctx.runtime, &ctx.sessions),
        Command::Session(SessionCommand::New { id }) => {
            let template = ctx.runtime.instance()?.overview_template()?;
            let s = ctx.sessions.create(id.as_deref(), &template)?;
            let meta = s.meta()?;
            if json {
                println!("{}", serde_json::json!({"id": meta.id, "dir": s.dir()}));
            } else {
                println!("created session {} at {}", meta.id, s.dir().display());
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Session(SessionCommand::List { all }) => {
            let list = if all { ctx.sessions.all()? } else { ctx.sessions.list()? };
            if json {
                let v: Vec<_> = list.iter().map(|(s, m)| serde_json::json!({"meta": m, "dir": s.dir()})).collect();
                println!("{}", serde_json::to_string_pretty(&v)?);
            } else if list.is_empty() {
                println!("no sessions under {}", ctx.sessions.dir().display());
            } else {
                for (s, m) in &list {
                    println!("{:<24} {:<22} {:>3} updates  {}", m.id, m.created_at, m.updates, s.dir().display());
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Session(SessionCommand::Show { session }) => {
            let s = ctx.session(&session)?;
            let snapshot = ctx.memory(&s)?.snapshot()?;
            report::session(&s, &snapshot, json)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Session(SessionCommand::Grant { session, agent, db, limits }) => {
            // The grant names this session's directory and identity, not only its ID.
            let name = workmem_store::GrantName::of(&ctx.sessions.find(&session)?)?;
            let db = db.target()?;
            token::grant(&db, Scope::Session(&name.to_string()), &agent, &limits, json)
        }
        Command::Parse { file } => {
            let (name, text) = read_input(file.as_ref())?;
            let outcome = ctx.runtime.instance()?.parse(&text)?;
            Ok(report::parse(&name, &outcome, json))
        }
        Command::Validate { file, session } => {
            let (name, text) = read_input(file.as_ref())?;
            let mut memory = match session {
                Some(s) => ctx.memory(&ctx.session(&s)?)?,
                None => ctx.runtime.new_memory()?,
            };
            let outcome = memory.validate(&text)?;
            Ok(report::parse(&name, &outcome, json))
        }
        Command::Apply { session, file } => {
            let s = ctx.session(&session)?;
            let (name, text) = read_input(file.as_ref())?;
            match workmem_agent::apply::apply(&ctx.runtime, &s, &text) {
                Ok(applied) => {
                    report::applied(&name, &applied, json);
                    Ok(ExitCode::SUCCESS)
                }
                Err(workmem_agent::Error::InvalidDsl(ds)) => {
                    report::rejected(&name, &ds, json);
                    Ok(ExitCode::from(1))
                }
                Err(e) => Err(e.into()),
            }
        }
        Command::Show { session } => {
            let s = ctx.session(&session)?;
            if json {
                print!("{}", ctx.memory(&s)?.save()?);
            } else {
                print!("{}", report::file_text(&s.overview()?));
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Prompt { session, task } => {
            let s = ctx.session(&session)?;
            let prompt = ctx.memory(&s)?.update_prompt(&task)?;
            if json {
                report::print_json(&serde_json::json!({"prompt": prompt}));
            } else {
                print!("{prompt}");
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Update { session, task, max_reprompts, model: name, llm } => {
            let s = ctx.session(&session)?;
            let llm = llm.client(&model(name)?)?;
            let r = workmem_agent::update::memory_update(&ctx.runtime, &s, llm, &task, max_reprompts)?;
            report::updated(&r, json);
            Ok(ExitCode::SUCCESS)
        }
        Command::Agent { session, task, context, max_steps, llm, board } => {
            let s = ctx.session(&session)?;
            let options = workmem_agent::turn::Options { context: context.options()?, max_steps };
            let llm = llm.client(&options.context.model)?;
            let mut worker = board.worker(&ctx.runtime)?;
            workmem_agent::turn::turn_on(&s, &ctx.runtime, &llm, &options, worker.as_mut(), &task, &mut |event| match event {
                workmem_agent::turn::Event::Tool { name, arguments, ok, result } => {
                    let mark = if *ok { "→" } else { "✗" };
                    let first = result.lines().next().unwrap_or_default();
                    eprintln!("{mark} {}({}): {}", report::one_line(name), report::one_line(arguments), report::one_line(first));
                }
                workmem_agent::turn::Event::Answer(text) => println!("{}", report::visible(text)),
                workmem_agent::turn::Event::Compacted(done) => eprintln!("⇣ {}", done.notice),
            })?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Context { session, context } => {
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
        Command::Compact { session, target, strategy, keep_recent, archive_to, min_free, model: name, llm } => {
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
            Ok(ExitCode::SUCCESS)
        }
        Command::History { session, seq } => {
            let s = ctx.session(&session)?;
            match seq {
                Some(spec) if json => {
                    let found = workmem_agent::compact::originals(&s, &spec).map_err(anyhow::Error::msg)?;
                    let v: Vec<_> = found.iter().map(|(seq, m)| serde_json::json!({"seq": seq, "message": m})).collect();
                    println!("{}", serde_json::to_string_pretty(&v)?);
                }
                Some(spec) if json => {
                    let found = workmem_agent::compact::originals(&s, &spec).map_err(anyhow::Error::msg)?;
                    let v: Vec<_> = found.iter().map(|(seq, m)| serde_json::json!({"seq": seq, "message": m})).collect();
                    report::print_json(&serde_json::json!(v));
                }
                Some(spec) => print!("{}", report::file_text(&workmem_agent::compact::read_history(&s, &spec).map_err(anyhow::Error::msg)?)),
                None => {
                    let view = s.view()?.entries;
                    if json {
                        let v: Vec<_> = view.iter().map(|(seq, m)| serde_json::json!({"seq": seq, "message": m})).collect();
                        println!("{}", serde_json::to_string_pretty(&v)?);
                    } else {
                        for (seq, m) in &view {
                            let first = m.content.lines().next().unwrap_or_default();
                            println!("#{seq:<5} {:<9} {}", report::one_line(&m.role), report::one_line(&first.chars().take(100).collect::<String>()));
                        }
                    }
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Replay { files, policy, shape, seeds, window, png, requests, sessions } => {
            use clap::ValueEnum;
            use replay::{Policy, shapes::Shape};
            let policies: Vec<Policy> = match policy {
                ReplayPolicy::All => Policy::ALL.to_vec(),
                p => replay::command::policy(p.to_possible_value().expect("no policy is skipped").get_name()).into_iter().collect(),
            };
            let shapes: Vec<Shape> = if shape.contains(&ReplayShape::All) {
                Shape::ALL.to_vec()
            } else {
                shape.iter().filter_map(|s| Shape::named(s.to_possible_value()?.get_name())).collect()
            };
            let args = replay::command::Args {
                files: &files,
                shapes: &shapes,
                seeds,
                policies: &policies,
                window,
                png: png.as_deref(),
                requests: requests.as_deref(),
                sessions: sessions.as_deref(),
                json,
            };
            replay::command::run(&ctx.runtime, &args)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Memory(MemoryCommand::Read { session, path }) => {
            let content = ctx.session(&session)?.memory_files().read(&path)?;
            if json {
                report::print_json(&serde_json::json!({"path": path, "content": content}));
            } else {
                print!("{}", report::file_text(&content));
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Memory(MemoryCommand::Write { session, path, file }) => {
            let files = ctx.session(&session)?.memory_files();
            let (_, text) = read_input(file.as_ref())?;
            files.write(&path, &text)?;
            if json {
                report::print_json(&serde_json::json!({"ok": true, "path": path, "bytes": text.len()}));
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Memory(MemoryCommand::List { session, path }) => {
            let names = ctx.session(&session)?.memory_files().list(&path)?;
            if json {
                report::print_json(&serde_json::json!(names));
            } else {
                for name in names {
                    println!("{}", report::one_line(&name));
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Log { session } => {
            let entries = ctx.session(&session)?.log()?;
            if json {
                println!("{}", serde_json::to_string_pretty(&entries)?);
            } else if entries.is_empty() {
                println!("no updates yet");
            } else {
                for e in &entries {
                    println!("== {}\n{}", report::one_line(e["at"].as_str().unwrap_or_default()), report::visible(e["diff"].as_str().unwrap_or_default()));
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Component { out, go, agent } => {
            let bytes = match (go, agent) {
                (true, _) => workmem_runtime::GO_CORE_MODULE,
                (_, true) => workmem_runtime::AGENT_COMPONENT,
                _ => workmem_runtime::COMPONENT,
            };
            workmem_store::fsio::write_atomic(&out, bytes).with_context(|| format!("writing {}", out.display()))?;
            if json {
                report::print_json(&serde_json::json!({"ok": true, "out": out, "bytes": bytes.len()}));
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Input that is not UTF-8: where its first bad byte is, as a diagnostic.
#[derive(Debug)]
pub struct NotUtf8 {
    pub name: String,
    pub diagnostic: workmem_runtime::Diagnostic,
}

impl std::fmt::Display for NotUtf8 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}: {}", self.name, self.diagnostic.line, self.diagnostic.column, self.diagnostic.message)
    }
}

impl std::error::Error for NotUtf8 {}

fn utf8(name: String, bytes: Vec<u8>) -> Result<(String, String)> {
    match String::from_utf8(bytes) {
        Ok(text) => Ok((name, text)),
        Err(e) => {
            let bytes = e.as_bytes();
            let at = e.utf8_error().valid_up_to();
            let line_start = bytes[..at].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
            // The prefix of the line up to the bad byte is valid UTF-8, so it counts in characters.
            let column = String::from_utf8_lossy(&bytes[line_start..at]).chars().count() + 1;
            let message = if bytes.starts_with(&[0xff, 0xfe]) || bytes.starts_with(&[0xfe, 0xff]) {
                "the input is UTF-16 (it starts with a UTF-16 byte order mark); save it as UTF-8".to_string()
            } else {
                format!("the input is not valid UTF-8 (byte 0x{:02x}); save it as UTF-8", bytes[at])
            };
            let diagnostic = workmem_runtime::Diagnostic {
                severity: workmem_runtime::Severity::Error,
                line: u32::try_from(line).unwrap_or(u32::MAX),
                column: u32::try_from(column).unwrap_or(u32::MAX),
                message,
            };
            Err(NotUtf8 { name, diagnostic }.into())
        }
    }
}

/// Input past the size cap.
#[derive(Debug)]
pub struct TooLarge {
    pub name: String,
    pub cap: u64,
}

impl std::fmt::Display for TooLarge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} is larger than {} bytes, the most an input may be (${MAX_INPUT_ENV} raises it)", self.name, self.cap)
    }
}

impl std::error::Error for TooLarge {}

/// Overrides [`DEFAULT_MAX_INPUT_BYTES`].
const MAX_INPUT_ENV: &str = "WORKMEM_MAX_INPUT_BYTES";
/// 16 MiB: a thousand times a large update.
const DEFAULT_MAX_INPUT_BYTES: u64 = 16 << 20;

/// The input text and the name diagnostics should call it by. Input past the cap is
/// refused before it is all read.
fn read_input(file: Option<&PathBuf>) -> Result<(String, String)> {
    let (name, bytes) = read_bytes(file)?;
    utf8(name, bytes)
}

/// [`read_input`]'s bytes, before any check of their encoding.
fn read_bytes(file: Option<&PathBuf>) -> Result<(String, Vec<u8>)> {
    let cap = match std::env::var(MAX_INPUT_ENV) {
        Ok(v) => v.parse::<u64>().map_err(|_| anyhow::anyhow!("${MAX_INPUT_ENV} is {v:?}: it takes a number of bytes"))?,
        Err(_) => DEFAULT_MAX_INPUT_BYTES,
    };
    let (name, source): (String, Box<dyn Read>) = match file {
        Some(p) if p.as_os_str() != "-" => (p.display().to_string(), Box::new(std::fs::File::open(p).with_context(|| format!("reading {}", p.display()))?)),
        _ => ("<stdin>".to_string(), Box::new(std::io::stdin())),
    };
    let mut bytes = Vec::new();
    source.take(cap + 1).read_to_end(&mut bytes).with_context(|| format!("reading {name}"))?;
    if bytes.len() as u64 > cap {
        return Err(TooLarge { name, cap }.into());
    }
    Ok((name, bytes))
}
