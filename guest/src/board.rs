//! The shared task board of spec 002: one task-scoped working memory that an orchestrator,
//! its workers and people write to. Pure, like the rest of the engine: a [`Board`] changes
//! only through [`Board::apply`], which checks an [`Op`] against the rules (legal status
//! transitions, known IDs, no dependency cycle, no empty required field) and either applies
//! all of it or nothing, returning a typed [`BoardError`]. Every applied op bumps the
//! revision, so a host can store the ops as an append-only event log, rebuild the board by
//! applying them again, and refuse a write made against a stale revision.

mod events;
mod graph;
pub mod limits;
mod op_reader;
mod ops;
mod render;
mod views;

use serde::{Deserialize, Serialize};
use std::fmt;

pub use events::{Event, ReplayError};
pub use render::View;
pub use views::{Candidate, Contribution, TaskContext};

/// What a board's serialized form says it is.
pub const FORMAT: &str = "workmem-board/1";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BoardStatus {
    Active,
    Completed,
    Cancelled,
    Archived,
}

/// Spec 002's eight task statuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    Pending,
    Assigned,
    InProgress,
    Blocked,
    Review,
    Completed,
    Failed,
    Cancelled,
}

impl TaskStatus {
    /// The moves a worker or the orchestrator may make by setting a status. Review verdicts
    /// (`review` to `completed`, back to `in_progress`, or `failed`) go through
    /// [`Op::Review`], completion with a result through [`Op::Complete`].
    fn may_become(self, to: TaskStatus) -> bool {
        use TaskStatus::*;
        matches!(
            (self, to),
            (Pending, Assigned | InProgress | Blocked | Cancelled)
                | (Assigned, Pending | InProgress | Blocked | Cancelled)
                | (InProgress, Blocked | Review | Failed | Cancelled)
                | (Blocked, Pending | Assigned | InProgress | Cancelled)
                | (Review, InProgress | Cancelled)
                | (Failed, Pending | Cancelled)
        )
    }

    pub fn is_terminal(self) -> bool {
        matches!(self, TaskStatus::Completed | TaskStatus::Cancelled)
    }
}

/// A unit variant's name as it is serialized (`in_progress`), for messages.
pub(crate) fn name(value: &impl Serialize) -> String {
    serde_json::to_value(value).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default()
}

impl fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&name(self))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReviewStatus {
    Approved,
    NeedsRework,
    Rejected,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskResult {
    pub summary: String,
    pub next_steps: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Task {
    /// `T-<n>`, never reused.
    pub id: String,
    pub title: String,
    pub description: String,
    pub status: TaskStatus,
    pub assigned_to: Option<String>,
    pub assigned_at: Option<String>,
    /// When its claimant last said it is still at work (`heartbeat`, or moving the task);
    /// a claim not renewed within the host's lease can be reclaimed.
    pub heartbeat_at: Option<String>,
    /// Tasks that must complete first; `blocks` is its mirror, kept by the board.
    pub depends_on: Vec<String>,
    pub blocks: Vec<String>,
    pub result: Option<TaskResult>,
    pub completed_at: Option<String>,
    pub needs_review: bool,
    pub reviewed_by: Option<String>,
    pub review_status: Option<ReviewStatus>,
    pub review_comments: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decision {
    /// `D-<n>`.
    pub id: String,
    pub made_at: String,
    pub made_by: String,
    pub question: String,
    pub choice: String,
    pub alternatives: Vec<String>,
    pub rationale: String,
    pub affects_tasks: Vec<String>,
    pub reversible: bool,
    /// Who approved it, once someone did.
    pub approved_by: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DiscoveryType {
    Constraint,
    Opportunity,
    Risk,
    Insight,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Discovery {
    /// `F-<n>` (a finding).
    pub id: String,
    pub discovered_at: String,
    pub discovered_by: String,
    pub content: String,
    #[serde(rename = "type")]
    pub kind: DiscoveryType,
    pub affects_tasks: Vec<String>,
    pub promote_to_core: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArtifactType {
    File,
    Code,
    Document,
    Config,
    Test,
}

/// An artifact by reference: where it lives and its checksum, never its content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Artifact {
    /// `A-<n>`.
    pub id: String,
    pub created_at: String,
    pub created_by: String,
    #[serde(rename = "type")]
    pub kind: ArtifactType,
    pub path: String,
    pub description: String,
    pub associated_task: String,
    /// 1 for the first record of a path, one more for each later one.
    pub version: u32,
    pub checksum: String,
}

/// Whom a nudge is for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NudgeTarget {
    Agent(String),
    Orchestrator,
    All,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Priority {
    Low,
    Normal,
    High,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Nudge {
    /// `N-<n>`.
    pub id: String,
    pub at: String,
    pub by: String,
    pub target: NudgeTarget,
    pub message: String,
    pub priority: Priority,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Approval {
    pub at: String,
    pub by: String,
    pub decision: String,
}

/// A board: spec 002's working memory, as of revision `revision`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Board {
    pub format: String,
    pub id: String,
    pub name: String,
    pub created_at: String,
    pub status: BoardStatus,
    pub goal: String,
    pub constraints: Vec<String>,
    pub memory_core_refs: Vec<String>,
    pub tasks: Vec<Task>,
    pub decisions: Vec<Decision>,
    pub discoveries: Vec<Discovery>,
    pub artifacts: Vec<Artifact>,
    pub nudges: Vec<Nudge>,
    pub approvals: Vec<Approval>,
    /// The number of ops applied since creation.
    pub revision: u64,
    next: Counters,
}

/// The next number of each kind of ID: they only grow, so an ID is never reused.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Counters {
    task: u32,
    decision: u32,
    discovery: u32,
    artifact: u32,
    nudge: u32,
    /// Bytes of text the board's ops have written (see [`limits::MAX_BYTES`]); a board saved
    /// before it was counted starts from 0.
    #[serde(default)]
    bytes: u64,
}

/// Everything that changes a board. `actor` and `now` come with it to [`Board::apply`]. Read
/// by hand (`op_reader.rs`), written as serde derives it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    AddTask {
        title: String,
        description: String,
        depends_on: Vec<String>,
        needs_review: bool,
    },
    /// `task` will wait for `on`. Refused when it would close a cycle.
    AddDependency {
        task: String,
        on: String,
    },
    Assign {
        task: String,
        agent: String,
    },
    /// The claimant renews its claim on an assigned or in-progress task.
    Heartbeat {
        task: String,
    },
    /// Returns a claimed task to pending when its claim was last renewed before
    /// `stale_before` (RFC 3339 UTC, compared as text: hosts give every time in one form).
    Reclaim {
        task: String,
        stale_before: String,
    },
    SetStatus {
        task: String,
        status: TaskStatus,
    },
    Complete {
        task: String,
        summary: String,
        next_steps: Vec<String>,
    },
    Review {
        task: String,
        status: ReviewStatus,
        comments: String,
    },
    Decide {
        question: String,
        choice: String,
        alternatives: Vec<String>,
        rationale: String,
        affects_tasks: Vec<String>,
        reversible: bool,
    },
    Discover {
        content: String,
        kind: DiscoveryType,
        affects_tasks: Vec<String>,
        promote_to_core: Option<String>,
    },
    Artifact {
        kind: ArtifactType,
        path: String,
        description: String,
        task: String,
        checksum: String,
    },
    Nudge {
        target: NudgeTarget,
        message: String,
        priority: Priority,
    },
    Approve {
        decision: String,
    },
    /// Ends active work: `completed` or `cancelled`.
    Close {
        status: BoardStatus,
    },
    Archive,
}

/// Why an op applied nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BoardError {
    UnknownTask(String),
    UnknownDecision(String),
    /// A required field is empty; names it.
    Empty(String),
    IllegalTransition {
        task: String,
        from: TaskStatus,
        to: TaskStatus,
    },
    /// Starting or completing a task whose dependencies have not all completed.
    Waiting {
        task: String,
        on: Vec<String>,
    },
    /// The dependency would close this cycle (its first ID repeated at the end).
    Cycle(Vec<String>),
    /// The board no longer takes this op (closed or archived).
    Closed(BoardStatus),
    /// A review of a task that is not in review, or a completion that needs one.
    NeedsReview(String),
    /// A text, a list or the board itself would pass one of [`limits`].
    TooLarge {
        field: String,
        limit: usize,
    },
    /// Someone other than the task's assignee renewed its claim or made a worker's move on
    /// it, or the claim reclaimed is not stale.
    Claimed {
        task: String,
        by: String,
        since: String,
    },
    /// An op given as JSON that is not one.
    InvalidOp(String),
    /// `close` with a status a board does not end in (only completed or cancelled).
    NotAnEnding(BoardStatus),
    /// A board's ID that would be a path or hides what it holds (see [`limits::id`]).
    InvalidId(String),
    /// `archive` of a board not yet closed.
    NotClosed(BoardStatus),
    /// A review by the agent the task is assigned to.
    OwnReview {
        task: String,
        agent: String,
    },
    /// A decision approved a second time.
    AlreadyApproved(String),
    /// A dependency on a task not completed, added to a task already done with.
    TooLate {
        task: String,
        on: String,
    },
}

impl fmt::Display for BoardError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BoardError::UnknownTask(id) => write!(f, "no task {id} on this board"),
            BoardError::UnknownDecision(id) => write!(f, "no decision {id} on this board"),
            BoardError::Empty(field) => write!(f, "{field} is empty; it is required"),
            BoardError::IllegalTransition { task, from, to } => write!(f, "task {task} cannot go from {from} to {to}"),
            BoardError::Waiting { task, on } => write!(f, "task {task} waits for {} to complete", on.join(", ")),
            BoardError::Cycle(ids) => write!(f, "that dependency would close a cycle: {}", ids.join(" -> ")),
            BoardError::Closed(status) => write!(f, "the board is {}; it takes no more changes", name(status)),
            BoardError::NeedsReview(why) => f.write_str(why),
            BoardError::TooLarge { field, limit } => write!(f, "{field} is over the board's limit of {limit}"),
            BoardError::Claimed { task, by, since } => write!(f, "task {task} is claimed by {by} (last heard from at {since})"),
            BoardError::InvalidOp(why) => write!(f, "not a board op: {why}"),
            BoardError::NotAnEnding(status) => write!(f, "a board closes as completed or cancelled, not {}", name(status)),
            BoardError::NotClosed(status) => write!(f, "a board is archived once closed (completed or cancelled); this one is {}", name(status)),
            BoardError::OwnReview { task, agent } => write!(f, "task {task} is {agent}'s: its review is someone else's"),
            BoardError::AlreadyApproved(id) => write!(f, "decision {id} is already approved"),
            BoardError::TooLate { task, on } => write!(f, "task {task} is done with; it cannot wait for {on}, which has not completed"),
            BoardError::InvalidId(id) => {
                write!(f, "the board ID {id:?} is refused: an ID is not `.` or `..` and holds no `/`, `\\`, control or invisible character")
            }
        }
    }
}

impl std::error::Error for BoardError {}

impl BoardError {
    /// The rule's name, as `board-error` in `wit/board.wit` names the case: what a runtime
    /// without variants (Go) matches on. The conformance case checks every runtime agrees.
    pub fn rule(&self) -> &'static str {
        match self {
            BoardError::UnknownTask(_) => "unknown-task",
            BoardError::UnknownDecision(_) => "unknown-decision",
            BoardError::Empty(_) => "empty",
            BoardError::IllegalTransition { .. } => "illegal-transition",
            BoardError::Waiting { .. } => "waiting",
            BoardError::Cycle(_) => "cycle",
            BoardError::Closed(_) => "closed",
            BoardError::NeedsReview(_) => "needs-review",
            BoardError::TooLarge { .. } => "too-large",
            BoardError::Claimed { .. } => "claimed",
            BoardError::InvalidOp(_) => "invalid-op",
            BoardError::NotAnEnding(_) => "not-an-ending",
            BoardError::InvalidId(_) => "invalid-id",
            BoardError::NotClosed(_) => "not-closed",
            BoardError::OwnReview { .. } => "own-review",
            BoardError::AlreadyApproved(_) => "already-approved",
            BoardError::TooLate { .. } => "too-late",
        }
    }
}

fn required(value: &str, field: &'static str) -> Result<(), BoardError> {
    if value.trim().is_empty() { Err(BoardError::Empty(field.into())) } else { Ok(()) }
}

impl Task {
    /// When its claimant was last heard from.
    pub fn last_heard(&self) -> Option<&str> {
        self.heartbeat_at.as_deref().or(self.assigned_at.as_deref())
    }

    /// Moving its own task renews the claimant's claim.
    fn renew(&mut self, actor: &str, now: &str) {
        if self.assigned_to.as_deref() == Some(actor) {
            self.heartbeat_at = Some(now.into());
        }
    }
}

impl Board {
    pub fn new(id: &str, name: &str, goal: &str, constraints: Vec<String>, memory_core_refs: Vec<String>, now: &str) -> Result<Board, BoardError> {
        required(id, "id")?;
        required(name, "name")?;
        required(goal, "goal")?;
        if id.len() > limits::MAX_ID {
            return Err(BoardError::TooLarge { field: "id".into(), limit: limits::MAX_ID });
        }
        limits::id(id)?;
        for (field, value) in [("name", name), ("goal", goal), ("now", now)] {
            limits::text(field, value)?;
        }
        limits::list("constraints", &constraints)?;
        limits::list("memory_core_refs", &memory_core_refs)?;
        Ok(Board {
            format: FORMAT.into(),
            id: id.into(),
            name: name.into(),
            created_at: now.into(),
            status: BoardStatus::Active,
            goal: goal.into(),
            constraints,
            memory_core_refs,
            tasks: Vec::new(),
            decisions: Vec::new(),
            discoveries: Vec::new(),
            artifacts: Vec::new(),
            nudges: Vec::new(),
            approvals: Vec::new(),
            revision: 0,
            next: Counters::default(),
        })
    }

    /// Where task `id` is in `tasks`: `T-<n>` is the n-th task added, and tasks are never
    /// removed, so a lookup costs the same on a board of ten tasks or ten thousand.
    fn index(&self, id: &str) -> Option<usize> {
        let n: usize = id.strip_prefix("T-")?.parse().ok()?;
        let i = n.checked_sub(1)?;
        (self.tasks.get(i)?.id == id).then_some(i)
    }

    pub fn task(&self, id: &str) -> Result<&Task, BoardError> {
        self.index(id).map(|i| &self.tasks[i]).ok_or_else(|| BoardError::UnknownTask(id.into()))
    }

    fn task_mut(&mut self, id: &str) -> &mut Task {
        let i = self.index(id).expect("checked before any change");
        &mut self.tasks[i]
    }

    fn known_tasks(&self, ids: &[String]) -> Result<(), BoardError> {
        ids.iter().try_for_each(|id| self.task(id).map(drop))
    }

    /// Applies `op` by `actor` at `now`: all of it, with the revision one higher, or nothing.
    /// Returns the event the log keeps for it.
    pub fn apply(&mut self, actor: &str, now: &str, op: &Op) -> Result<Event, BoardError> {
        self.apply_within(actor, now, op, false)
    }

    /// [`Board::apply`]; `replaying` an event of the log, which was taken when it was
    /// written, the rules made since are not applied to it (a board from before
    /// [`limits::MAX_BYTES`], or from before a review had to be someone else's, must still load).
    pub(crate) fn apply_within(&mut self, actor: &str, now: &str, op: &Op, replaying: bool) -> Result<Event, BoardError> {
        required(actor, "actor")?;
        let adds = limits::check(actor, now, op)?;
        if !replaying {
            limits::total(self.next.bytes, adds)?;
        }
        let event = self.apply_checked(actor, now, op, replaying)?;
        self.next.bytes = self.next.bytes.saturating_add(adds as u64);
        Ok(event)
    }

    fn apply_checked(&mut self, actor: &str, now: &str, op: &Op, replaying: bool) -> Result<Event, BoardError> {
        match (self.status, op) {
            (BoardStatus::Active, _) => {}
            (BoardStatus::Completed | BoardStatus::Cancelled, Op::Archive) => {}
            (status, _) => return Err(BoardError::Closed(status)),
        }
        // Every check comes before the first change: a refused op leaves the board as it was
        // (each op's method, in ops.rs, checks all it checks before it changes anything).
        let who = ops::By { actor, now, replaying };
        match op {
            Op::AddTask { title, description, depends_on, needs_review } => self.add_task(&who, title, description, depends_on, *needs_review)?,
            Op::AddDependency { task, on } => self.add_dependency(&who, task, on)?,
            Op::Assign { task, agent } => self.assign(&who, task, agent)?,
            Op::Heartbeat { task } => self.heartbeat(&who, task)?,
            Op::Reclaim { task, stale_before } => self.reclaim(&who, task, stale_before)?,
            Op::SetStatus { task, status } => self.set_status(&who, task, *status)?,
            Op::Complete { task, summary, next_steps } => self.complete(&who, task, summary, next_steps)?,
            Op::Review { task, status, comments } => self.review(&who, task, *status, comments)?,
            Op::Decide { question, choice, alternatives, rationale, affects_tasks, reversible } => {
                self.decide(&who, question, choice, alternatives, rationale, affects_tasks, *reversible)?
            }
            Op::Discover { content, kind, affects_tasks, promote_to_core } => self.discover(&who, content, *kind, affects_tasks, promote_to_core)?,
            Op::Artifact { kind, path, description, task, checksum } => self.artifact(&who, *kind, path, description, task, checksum)?,
            Op::Nudge { target, message, priority } => self.nudge(&who, target, message, *priority)?,
            Op::Approve { decision } => self.approve(&who, decision)?,
            Op::Close { status } => self.close(&who, *status)?,
            Op::Archive if !replaying && self.status == BoardStatus::Active => return Err(BoardError::NotClosed(self.status)),
            Op::Archive => self.status = BoardStatus::Archived,
        }
        self.revision += 1;
        Ok(Event { revision: self.revision, actor: actor.into(), at: now.into(), op: op.clone() })
    }
}
