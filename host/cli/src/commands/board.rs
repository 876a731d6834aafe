//! `workmem board ...`: spec 002's shared boards from the command line, on the embedded
//! SQLite default or a PostgreSQL URL (`--db`). Mutations print the stored event (`--json`)
//! or a line saying what changed; views print the engine's JSON of the view, or a table.

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use serde_json::{Value, json};
use std::process::ExitCode;
use std::time::Duration;
use workmem_runtime::Runtime;
use workmem_runtime::board::*;
use workmem_store::board::{Boards, Config};
use workmem_store::db::{Grants, Scope};

use crate::names::{Choices, named};
use crate::report::print_json;
use workmem_runtime::names::{Named, VIEWS};

#[derive(Args)]
pub struct BoardArgs {
    #[command(flatten)]
    db: crate::db::DbArg,
    /// Who is acting, as the board records it (default: $WORKMEM_AGENT, else orchestrator)
    #[arg(long = "as", global = true, value_name = "AGENT")]
    actor: Option<String>,
    /// An agent token (`board grant`): the board must be one it was granted, and the act is its agent's (default: $WORKMEM_BOARD_TOKEN)
    #[arg(long, global = true, value_name = "TOKEN")]
    token: Option<String>,
    /// Apply only if the board is still at this revision (a compare-and-swap); a conflict changes nothing
    #[arg(long, global = true, value_name = "REVISION")]
    expect: Option<u64>,
    #[command(subcommand)]
    command: BoardCommand,
}

#[derive(Subcommand)]
enum BoardCommand {
    /// Create a board: a task-scoped working memory for an orchestrator and its workers
    Create {
        /// The board's ID
        board: String,
        /// Its name
        #[arg(long)]
        name: String,
        /// What the work is for
        #[arg(long)]
        goal: String,
        /// A constraint every worker must keep (repeatable)
        #[arg(long = "constraint", value_name = "TEXT")]
        constraints: Vec<String>,
        /// A memory core this board draws on (repeatable)
        #[arg(long = "core", value_name = "REF")]
        cores: Vec<String>,
    },
    /// Add tasks and dependencies
    #[command(subcommand)]
    Task(TaskCommand),
    /// Assign a task to an agent
    Assign {
        /// The board's ID
        board: String,
        /// The task, T-<n>
        task: String,
        /// The agent
        agent: String,
    },
    /// Move a task: in_progress, blocked, review, failed, cancelled, pending, assigned; completed with --summary
    Status {
        /// The board's ID
        board: String,
        /// The task, T-<n>
        task: String,
        /// The new status
        #[arg(value_parser = named::<TaskStatus>())]
        status: TaskStatus,
        /// What was done (required for completed)
        #[arg(long)]
        summary: Option<String>,
        /// A next step the result suggests (repeatable; with completed)
        #[arg(long = "next", value_name = "TEXT")]
        next_steps: Vec<String>,
    },
    /// Renew your claim on a task you hold, so it is not reclaimed
    Heartbeat {
        /// The board's ID
        board: String,
        /// The task, T-<n>
        task: String,
    },
    /// Return every claim not renewed within the lease to pending (a restarted orchestrator's first step)
    Reclaim {
        /// The board's ID
        board: String,
        /// How long a claim holds without a heartbeat
        #[arg(long, default_value = "15m", value_parser = humantime::parse_duration)]
        lease: Duration,
    },
    /// Record a decision
    Decide {
        /// The board's ID
        board: String,
        /// What was decided about
        #[arg(long)]
        question: String,
        /// What was chosen
        #[arg(long)]
        choice: String,
        /// An option not chosen (repeatable)
        #[arg(long = "alternative", value_name = "TEXT")]
        alternatives: Vec<String>,
        /// Why
        #[arg(long, default_value = "")]
        rationale: String,
        /// A task it affects (repeatable; none means all)
        #[arg(long = "affects", value_name = "TASK")]
        affects: Vec<String>,
        /// The decision cannot be undone
        #[arg(long)]
        irreversible: bool,
    },
    /// Record a discovery
    Discover {
        /// The board's ID
        board: String,
        /// What was found
        content: String,
        /// Its kind
        #[arg(long = "type", value_parser = named::<DiscoveryType>(), default_value = "insight")]
        kind: DiscoveryType,
        /// A task it affects (repeatable; none means all)
        #[arg(long = "affects", value_name = "TASK")]
        affects: Vec<String>,
        /// The memory core it should be promoted to
        #[arg(long = "core", value_name = "REF")]
        core: Option<String>,
    },
    /// Record an artifact by reference: its path and checksum, never its content
    Artifact {
        /// The board's ID
        board: String,
        /// Where it lives
        path: String,
        /// The task that made it
        #[arg(long)]
        task: String,
        /// Its kind
        #[arg(long = "type", value_parser = named::<ArtifactType>(), default_value = "file")]
        kind: ArtifactType,
        /// What it is
        #[arg(long, default_value = "")]
        description: String,
        /// Its checksum (default: sha256 of the file at PATH)
        #[arg(long)]
        checksum: Option<String>,
    },
    /// Nudge an agent, the orchestrator or everyone
    Nudge {
        /// The board's ID
        board: String,
        /// The message
        message: String,
        /// Whom it is for: an agent's name, orchestrator, or all
        #[arg(long, default_value = "all")]
        to: String,
        /// How urgent
        #[arg(long, value_parser = named::<Priority>(), default_value = "normal")]
        priority: Priority,
    },
    /// Approve a decision
    Approve {
        /// The board's ID
        board: String,
        /// The decision, D-<n>
        decision: String,
    },
    /// Review a task waiting in review
    Review {
        /// The board's ID
        board: String,
        /// The task, T-<n>
        task: String,
        /// The verdict
        #[arg(long, value_parser = named::<ReviewStatus>())]
        verdict: ReviewStatus,
        /// What the reviewer says
        #[arg(long, default_value = "")]
        comments: String,
    },
    /// Tasks ready to start: pending or assigned, every dependency completed
    Ready {
        /// The board's ID
        board: String,
    },
    /// Tasks blocked or waiting on a dependency, and those a failure strands
    Blocked {
        /// The board's ID
        board: String,
    },
    /// Any view of a board as the engine's JSON
    Show {
        /// The board's ID
        board: String,
        /// Which view
        #[arg(value_parser = shown(), default_value = "tasks")]
        view: Shown,
    },
    /// What a worker needs for its task: goal, constraints, dependencies, decisions, discoveries, artifacts, nudges
    Context {
        /// The board's ID
        board: String,
        /// The task, T-<n>
        task: String,
    },
    /// What this board learned that may belong in a memory core
    Candidates {
        /// The board's ID
        board: String,
    },
    /// End a board's work: completed or cancelled
    Close {
        /// The board's ID
        board: String,
        /// How it ended
        #[arg(value_parser = ending())]
        status: BoardStatus,
    },
    /// Archive a closed board (deleted after the retention period by `board gc`)
    Archive {
        /// The board's ID
        board: String,
    },
    /// Print the board's events as they happen, one JSON line each
    Watch {
        /// The board's ID
        board: String,
        /// Start after this revision (default: the current one)
        #[arg(long)]
        after: Option<u64>,
        /// Stop after this many events
        #[arg(long)]
        count: Option<u64>,
        /// Stop when nothing happens for this long
        #[arg(long, value_parser = humantime::parse_duration)]
        timeout: Option<Duration>,
    },
    /// List the boards in the database
    List,
    /// Issue a token that lets an agent use this board and no other
    Grant {
        /// The board's ID
        board: String,
        /// The agent the token acts as
        agent: String,
        #[command(flatten)]
        limits: crate::commands::token::GrantArgs,
    },
    /// Fold a board's event log into its latest snapshot
    Compact {
        /// The board's ID
        board: String,
    },
    /// Delete archived boards older than the retention period
    Gc {
        /// How long an archived board is kept
        #[arg(long, default_value = "30days", value_parser = humantime::parse_duration)]
        retention: Duration,
    },
}

#[derive(Subcommand)]
enum TaskCommand {
    /// Add a task
    Add {
        /// The board's ID
        board: String,
        /// The task's title
        title: String,
        /// What it involves
        #[arg(long, default_value = "")]
        description: String,
        /// A task it waits for (repeatable)
        #[arg(long = "depends-on", value_name = "TASK")]
        depends_on: Vec<String>,
        /// Completing it sends it to review
        #[arg(long)]
        review: bool,
    },
    /// Make a task wait for another (refused if it would close a cycle)
    Depend {
        /// The board's ID
        board: String,
        /// The task that waits, T-<n>
        task: String,
        /// The task it waits for, T-<n>
        #[arg(long)]
        on: String,
    },
}

/// What `board show` shows: a view that takes no argument, or the board's whole state.
#[derive(Clone)]
enum Shown {
    View(View),
    State,
}

fn shown() -> Choices<Shown> {
    let views = VIEWS.iter().filter(|(_, v)| !matches!(v, View::Stale(_) | View::ContextForTask(_)));
    Choices::new(views.map(|(name, v)| (*name, Shown::View(v.clone()))).chain([("state", Shown::State)]).collect())
}

/// How a board can end: `close` takes these two of its statuses.
fn ending() -> Choices<BoardStatus> {
    Choices::new(
        BoardStatus::CASES.iter().copied().filter(|(s, _)| matches!(s, BoardStatus::Completed | BoardStatus::Cancelled)).map(|(s, n)| (n, s)).collect(),
    )
}

/// The SHA-256 of the file at `path`, as `sha256:<hex>`, read in a stream (any size).
fn checksum(path: &str) -> Result<String> {
    use sha2::{Digest, Sha256};
    let why = || format!("reading {path} for its checksum (or give --checksum)");
    let (mut file, mut hasher, mut buf) = (std::fs::File::open(path).with_context(why)?, Sha256::new(), vec![0u8; 64 * 1024]);
    loop {
        let n = std::io::Read::read(&mut file, &mut buf).with_context(why)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(format!("sha256:{}", hasher.finalize().iter().map(|b| format!("{b:02x}")).collect::<String>()))
}

/// What a mutation does: the board and the op.
fn op(command: BoardCommand) -> Result<std::result::Result<(String, Op), BoardCommand>> {
    Ok(Ok(match command {
        BoardCommand::Task(TaskCommand::Add { board, title, description, depends_on, review }) => {
            (board, Op::AddTask(NewTask { title, description, depends_on, needs_review: review }))
        }
        BoardCommand::Task(TaskCommand::Depend { board, task, on }) => (board, Op::AddDependency(Dependency { task, on })),
        BoardCommand::Assign { board, task, agent } => (board, Op::Assign(Assignment { task, agent })),
        BoardCommand::Status { board, task, status: TaskStatus::Completed, summary, next_steps } => {
            let Some(summary) = summary else { bail!("completing a task takes --summary: what was done") };
            (board, Op::Complete(Completion { task, summary, next_steps }))
        }
        BoardCommand::Status { board, task, status, summary: None, .. } => (board, Op::SetStatus(StatusChange { task, status })),
        BoardCommand::Status { .. } => bail!("--summary and --next go with completed only"),
        BoardCommand::Heartbeat { board, task } => (board, Op::Heartbeat(task)),
        BoardCommand::Decide { board, question, choice, alternatives, rationale, affects, irreversible } => {
            (board, Op::Decide(NewDecision { question, choice, alternatives, rationale, affects_tasks: affects, reversible: !irreversible }))
        }
        BoardCommand::Discover { board, content, kind, affects, core } => {
            (board, Op::Discover(NewDiscovery { content, kind, affects_tasks: affects, promote_to_core: core }))
        }
        BoardCommand::Artifact { board, path, task, kind, description, checksum: sum } => {
            let checksum = match sum {
                Some(c) => c,
                None => checksum(&path)?,
            };
            (board, Op::Artifact(NewArtifact { kind, path, description, task, checksum }))
        }
        BoardCommand::Nudge { board, message, to, priority } => {
            let target = match to.as_str() {
                "all" => NudgeTarget::All,
                "orchestrator" => NudgeTarget::Orchestrator,
                agent => NudgeTarget::Agent(agent.into()),
            };
            (board, Op::Nudge(NewNudge { target, message, priority }))
        }
        BoardCommand::Approve { board, decision } => (board, Op::Approve(decision)),
        BoardCommand::Review { board, task, verdict, comments } => (board, Op::Review(Review { task, status: verdict, comments })),
        BoardCommand::Close { board, status } => (board, Op::Close(status)),
        BoardCommand::Archive { board } => (board, Op::Archive),
        other => return Ok(Err(other)),
    }))
}

/// The board a command names, checked against the token when there is one.
fn board_of(command: &BoardCommand) -> Option<&str> {
    use BoardCommand as C;
    Some(match command {
        C::Task(TaskCommand::Add { board, .. } | TaskCommand::Depend { board, .. }) => board,
        C::Create { board, .. }
        | C::Assign { board, .. }
        | C::Status { board, .. }
        | C::Heartbeat { board, .. }
        | C::Reclaim { board, .. }
        | C::Decide { board, .. }
        | C::Discover { board, .. }
        | C::Artifact { board, .. }
        | C::Nudge { board, .. }
        | C::Approve { board, .. }
        | C::Review { board, .. }
        | C::Ready { board }
        | C::Blocked { board }
        | C::Show { board, .. }
        | C::Context { board, .. }
        | C::Candidates { board }
        | C::Close { board, .. }
        | C::Archive { board }
        | C::Watch { board, .. }
        | C::Grant { board, .. }
        | C::Compact { board } => board,
        C::List | C::Gc { .. } => return None,
    })
}

/// Whether `command` only reads its board.
fn reads_only(command: &BoardCommand) -> bool {
    use BoardCommand as C;
    matches!(command, C::Ready { .. } | C::Blocked { .. } | C::Show { .. } | C::Context { .. } | C::Candidates { .. } | C::Watch { .. } | C::List)
}

fn tasks_table(json: &str) -> Result<()> {
    let tasks: Vec<Value> = serde_json::from_str(json)?;
    for t in &tasks {
        let task = if t["task"].is_object() { &t["task"] } else { t };
        let who = task["assigned_to"].as_str().map(|a| format!(" ({})", crate::report::one_line(a))).unwrap_or_default();
        let waits = task["depends_on"]
            .as_array()
            .filter(|d| !d.is_empty())
            .map(|d| format!(" after {}", d.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(", ")))
            .unwrap_or_default();
        println!(
            "{:<6} {:<12} {}{who}{waits}",
            task["id"].as_str().unwrap_or("?"),
            task["status"].as_str().unwrap_or("?"),
            crate::report::one_line(task["title"].as_str().unwrap_or(""))
        );
    }
    if tasks.is_empty() {
        println!("(none)");
    }
    Ok(())
}

pub fn run(runtime: Runtime, args: BoardArgs, as_json: bool) -> Result<ExitCode> {
    let db = args.db.target()?;
    let mut config = Config::default();
    match &args.command {
        BoardCommand::Reclaim { lease, .. } => config.lease = *lease,
        BoardCommand::Gc { retention } => config.retention = *retention,
        _ => {}
    }
    let mut boards = Boards::open(&db, runtime, config)?;
    let token = args.token.or_else(|| std::env::var("WORKMEM_BOARD_TOKEN").ok());
    if token.is_some() && matches!(args.command, BoardCommand::Grant { .. }) {
        // A worker's token would otherwise mint tokens acting as any agent on its board.
        return Err(workmem_store::db::Error::OwnerOnly("grant a token").into());
    }
    let actor = match (&token, board_of(&args.command)) {
        // A read-only token reads; every other command writes.
        (Some(token), Some(board)) if reads_only(&args.command) => Grants::open(&db)?.authorize(token, Scope::Board(board))?,
        (Some(token), Some(board)) => Grants::open(&db)?.authorize_write(token, Scope::Board(board))?,
        (Some(_), None) => bail!("a token is for one board; this command spans the database"),
        (None, _) => args.actor.or_else(|| std::env::var("WORKMEM_AGENT").ok()).unwrap_or_else(|| "orchestrator".into()),
    };
    let command = match op(args.command)? {
        Ok((board, op)) => {
            let event = boards.apply(&board, args.expect, &actor, &op)?;
            let record: Value = serde_json::from_str(&event.event)?;
            if as_json {
                print_json(&json!({"ok": true, "board": board, "revision": event.revision, "event": record}));
            } else {
                println!("{board} revision {}: {} by {}", event.revision, record["op"]["op"].as_str().unwrap_or("op"), actor);
            }
            return Ok(ExitCode::SUCCESS);
        }
        Err(command) => command,
    };
    let view = |boards: &mut Boards, board: &str, v: View| -> Result<String> { Ok(boards.view(board, &v)?) };
    match command {
        BoardCommand::Create { board, name, goal, constraints, cores } => {
            boards.create(&board, &name, &goal, &constraints, &cores)?;
            if as_json {
                print_json(&json!({"ok": true, "board": board, "revision": 0}));
            } else {
                println!("created board {board} in {}", workmem_store::db::redact(&db));
            }
        }
        BoardCommand::Reclaim { board, .. } => {
            let reclaimed = boards.reclaim_stale(&board, &actor)?;
            if as_json {
                print_json(&json!({"ok": true, "board": board, "reclaimed": reclaimed}));
            } else {
                println!("reclaimed {}", if reclaimed.is_empty() { "nothing".into() } else { reclaimed.join(", ") });
            }
        }
        BoardCommand::Ready { board } | BoardCommand::Show { board, view: Shown::View(View::Ready) } => {
            let json = view(&mut boards, &board, View::Ready)?;
            if as_json { println!("{json}") } else { tasks_table(&json)? }
        }
        BoardCommand::Blocked { board } => {
            let blocked = view(&mut boards, &board, View::Blocked)?;
            let stranded = view(&mut boards, &board, View::Stranded)?;
            if as_json {
                print_json(&json!({"blocked": serde_json::from_str::<Value>(&blocked)?, "stranded": serde_json::from_str::<Value>(&stranded)?}));
            } else {
                tasks_table(&blocked)?;
                for s in serde_json::from_str::<Vec<Value>>(&stranded)? {
                    println!("{} cannot complete: {} failed or was cancelled", s["task"]["id"].as_str().unwrap_or("?"), s["causes"]);
                }
            }
        }
        BoardCommand::Show { board, view: v } => {
            let json = match &v {
                Shown::State => boards.state(&board)?,
                Shown::View(v) => view(&mut boards, &board, v.clone())?,
            };
            let tasks = matches!(v, Shown::View(View::Tasks | View::Blocked | View::InProgress | View::NeedsReview | View::Failed | View::Stranded));
            if as_json || !tasks { print_json(&serde_json::from_str(&json)?) } else { tasks_table(&json)? }
        }
        BoardCommand::Context { board, task } => print_json(&serde_json::from_str(&view(&mut boards, &board, View::ContextForTask(task))?)?),
        BoardCommand::Candidates { board } => {
            let json = view(&mut boards, &board, View::Candidates)?;
            if as_json {
                println!("{json}");
            } else {
                for c in serde_json::from_str::<Vec<Value>>(&json)? {
                    println!(
                        "{:<8} {:<5} {}",
                        c["kind"].as_str().unwrap_or(""),
                        c["source"].as_str().unwrap_or(""),
                        crate::report::one_line(c["text"].as_str().unwrap_or(""))
                    );
                }
            }
        }
        BoardCommand::Watch { board, after, count, timeout } => {
            let mut after = match after {
                Some(a) => a,
                None => boards.revision(&board)?,
            };
            let mut seen = 0;
            loop {
                let events = boards.follow(&board, after, timeout.unwrap_or(Duration::from_secs(3600)))?;
                if events.is_empty() {
                    break;
                }
                for e in events {
                    let record: Value = serde_json::from_str(&e.event)?;
                    println!("{}", serde_json::to_string(&record)?);
                    after = e.revision;
                    seen += 1;
                    if count.is_some_and(|c| seen >= c) {
                        return Ok(ExitCode::SUCCESS);
                    }
                }
            }
        }
        BoardCommand::List => {
            let heads = boards.list()?;
            if as_json {
                print_json(&json!(heads));
            } else {
                for h in heads {
                    println!("{:<20} {:<10} revision {:<6} updated {}", crate::report::one_line(&h.id), h.status, h.revision, h.updated_at);
                }
            }
        }
        BoardCommand::Grant { board, agent, limits } => return crate::commands::token::grant(&db, Scope::Board(&board), &agent, &limits, as_json),
        BoardCommand::Compact { board } => {
            let gone = boards.compact(&board)?;
            if as_json {
                print_json(&json!({"ok": true, "board": board, "events_compacted": gone}));
            } else {
                println!("{gone} events folded into the latest snapshot");
            }
        }
        BoardCommand::Gc { .. } => {
            let gone = boards.collect_garbage()?;
            if as_json {
                print_json(&json!({"ok": true, "deleted": gone}));
            } else {
                println!("deleted {}", if gone.is_empty() { "nothing".into() } else { gone.join(", ") });
            }
        }
        _ => unreachable!("mutations are handled above"),
    }
    Ok(ExitCode::SUCCESS)
}
