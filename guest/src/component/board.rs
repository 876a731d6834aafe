//! The `board` interface: the engine's board (`crate::board`) kept as a resource, its types
//! mapped to the WIT's.

use super::Component;
use super::exports::workmem::memory::board as wit;
use crate::board as b;
use std::cell::RefCell;

pub struct BoardResource(RefCell<b::Board>);

fn task_status(s: b::TaskStatus) -> wit::TaskStatus {
    use b::TaskStatus as S;
    match s {
        S::Pending => wit::TaskStatus::Pending,
        S::Assigned => wit::TaskStatus::Assigned,
        S::InProgress => wit::TaskStatus::InProgress,
        S::Blocked => wit::TaskStatus::Blocked,
        S::Review => wit::TaskStatus::Review,
        S::Completed => wit::TaskStatus::Completed,
        S::Failed => wit::TaskStatus::Failed,
        S::Cancelled => wit::TaskStatus::Cancelled,
    }
}

fn to_task_status(s: wit::TaskStatus) -> b::TaskStatus {
    use wit::TaskStatus as S;
    match s {
        S::Pending => b::TaskStatus::Pending,
        S::Assigned => b::TaskStatus::Assigned,
        S::InProgress => b::TaskStatus::InProgress,
        S::Blocked => b::TaskStatus::Blocked,
        S::Review => b::TaskStatus::Review,
        S::Completed => b::TaskStatus::Completed,
        S::Failed => b::TaskStatus::Failed,
        S::Cancelled => b::TaskStatus::Cancelled,
    }
}

fn review_status(s: b::ReviewStatus) -> wit::ReviewStatus {
    match s {
        b::ReviewStatus::Approved => wit::ReviewStatus::Approved,
        b::ReviewStatus::NeedsRework => wit::ReviewStatus::NeedsRework,
        b::ReviewStatus::Rejected => wit::ReviewStatus::Rejected,
    }
}

fn board_status(s: b::BoardStatus) -> wit::BoardStatus {
    match s {
        b::BoardStatus::Active => wit::BoardStatus::Active,
        b::BoardStatus::Completed => wit::BoardStatus::Completed,
        b::BoardStatus::Cancelled => wit::BoardStatus::Cancelled,
        b::BoardStatus::Archived => wit::BoardStatus::Archived,
    }
}

fn to_board_status(s: wit::BoardStatus) -> b::BoardStatus {
    match s {
        wit::BoardStatus::Active => b::BoardStatus::Active,
        wit::BoardStatus::Completed => b::BoardStatus::Completed,
        wit::BoardStatus::Cancelled => b::BoardStatus::Cancelled,
        wit::BoardStatus::Archived => b::BoardStatus::Archived,
    }
}

fn task(t: &b::Task) -> wit::Task {
    wit::Task {
        id: t.id.clone(),
        title: t.title.clone(),
        description: t.description.clone(),
        status: task_status(t.status),
        assigned_to: t.assigned_to.clone(),
        assigned_at: t.assigned_at.clone(),
        heartbeat_at: t.heartbeat_at.clone(),
        depends_on: t.depends_on.clone(),
        blocks: t.blocks.clone(),
        result: t.result.as_ref().map(|r| wit::TaskResult { summary: r.summary.clone(), next_steps: r.next_steps.clone() }),
        completed_at: t.completed_at.clone(),
        needs_review: t.needs_review,
        reviewed_by: t.reviewed_by.clone(),
        review_status: t.review_status.map(review_status),
        review_comments: t.review_comments.clone(),
    }
}

fn tasks<'a>(ts: impl IntoIterator<Item = &'a b::Task>) -> Vec<wit::Task> {
    ts.into_iter().map(task).collect()
}

fn op(o: wit::Op) -> b::Op {
    match o {
        wit::Op::AddTask(t) => b::Op::AddTask { title: t.title, description: t.description, depends_on: t.depends_on, needs_review: t.needs_review },
        wit::Op::AddDependency(d) => b::Op::AddDependency { task: d.task, on: d.on },
        wit::Op::Assign(a) => b::Op::Assign { task: a.task, agent: a.agent },
        wit::Op::Heartbeat(task) => b::Op::Heartbeat { task },
        wit::Op::Reclaim(r) => b::Op::Reclaim { task: r.task, stale_before: r.stale_before },
        wit::Op::SetStatus(s) => b::Op::SetStatus { task: s.task, status: to_task_status(s.status) },
        wit::Op::Complete(c) => b::Op::Complete { task: c.task, summary: c.summary, next_steps: c.next_steps },
        wit::Op::Review(r) => b::Op::Review {
            task: r.task,
            status: match r.status {
                wit::ReviewStatus::Approved => b::ReviewStatus::Approved,
                wit::ReviewStatus::NeedsRework => b::ReviewStatus::NeedsRework,
                wit::ReviewStatus::Rejected => b::ReviewStatus::Rejected,
            },
            comments: r.comments,
        },
        wit::Op::Decide(d) => b::Op::Decide {
            question: d.question,
            choice: d.choice,
            alternatives: d.alternatives,
            rationale: d.rationale,
            affects_tasks: d.affects_tasks,
            reversible: d.reversible,
        },
        wit::Op::Discover(d) => b::Op::Discover {
            content: d.content,
            kind: match d.kind {
                wit::DiscoveryType::Constraint => b::DiscoveryType::Constraint,
                wit::DiscoveryType::Opportunity => b::DiscoveryType::Opportunity,
                wit::DiscoveryType::Risk => b::DiscoveryType::Risk,
                wit::DiscoveryType::Insight => b::DiscoveryType::Insight,
            },
            affects_tasks: d.affects_tasks,
            promote_to_core: d.promote_to_core,
        },
        wit::Op::Artifact(a) => b::Op::Artifact {
            kind: match a.kind {
                wit::ArtifactType::File => b::ArtifactType::File,
                wit::ArtifactType::Code => b::ArtifactType::Code,
                wit::ArtifactType::Document => b::ArtifactType::Document,
                wit::ArtifactType::Config => b::ArtifactType::Config,
                wit::ArtifactType::Test => b::ArtifactType::Test,
            },
            path: a.path,
            description: a.description,
            task: a.task,
            checksum: a.checksum,
        },
        wit::Op::Nudge(n) => b::Op::Nudge {
            target: match n.target {
                wit::NudgeTarget::Agent(agent) => b::NudgeTarget::Agent(agent),
                wit::NudgeTarget::Orchestrator => b::NudgeTarget::Orchestrator,
                wit::NudgeTarget::All => b::NudgeTarget::All,
            },
            message: n.message,
            priority: match n.priority {
                wit::Priority::Low => b::Priority::Low,
                wit::Priority::Normal => b::Priority::Normal,
                wit::Priority::High => b::Priority::High,
            },
        },
        wit::Op::Approve(decision) => b::Op::Approve { decision },
        wit::Op::Close(status) => b::Op::Close { status: to_board_status(status) },
        wit::Op::Archive => b::Op::Archive,
    }
}

fn error(e: b::BoardError) -> wit::BoardError {
    match e {
        b::BoardError::UnknownTask(id) => wit::BoardError::UnknownTask(id),
        b::BoardError::UnknownDecision(id) => wit::BoardError::UnknownDecision(id),
        b::BoardError::Empty(field) => wit::BoardError::Empty(field),
        b::BoardError::IllegalTransition { task, from, to } => {
            wit::BoardError::IllegalTransition(wit::Transition { task, from: task_status(from), to: task_status(to) })
        }
        b::BoardError::Waiting { task, on } => wit::BoardError::Waiting(wit::Waiting { task, on }),
        b::BoardError::Cycle(ids) => wit::BoardError::Cycle(ids),
        b::BoardError::Closed(status) => wit::BoardError::Closed(board_status(status)),
        b::BoardError::NeedsReview(why) => wit::BoardError::NeedsReview(why),
        b::BoardError::TooLarge { field, limit } => wit::BoardError::TooLarge(wit::Limit { field, limit: limit as u64 }),
        b::BoardError::Claimed { task, by, since } => wit::BoardError::Claimed(wit::Claim { task, by, since }),
        b::BoardError::InvalidOp(why) => wit::BoardError::InvalidOp(why),
        b::BoardError::NotAnEnding(status) => wit::BoardError::NotAnEnding(board_status(status)),
        b::BoardError::InvalidId(id) => wit::BoardError::InvalidId(id),
        b::BoardError::NotClosed(status) => wit::BoardError::NotClosed(board_status(status)),
        b::BoardError::OwnReview { task, agent } => wit::BoardError::OwnReview((task, agent)),
        b::BoardError::AlreadyApproved(id) => wit::BoardError::AlreadyApproved(id),
        b::BoardError::TooLate { task, on } => wit::BoardError::TooLate(wit::Waiting { task, on: vec![on] }),
    }
}

fn view(v: wit::View) -> b::View {
    use wit::View as V;
    match v {
        V::Tasks => b::View::Tasks,
        V::Ready => b::View::Ready,
        V::Blocked => b::View::Blocked,
        V::InProgress => b::View::InProgress,
        V::NeedsReview => b::View::NeedsReview,
        V::Failed => b::View::Failed,
        V::Stranded => b::View::Stranded,
        V::Stale(before) => b::View::Stale(before),
        V::ContextForTask(task) => b::View::ContextForTask(task),
        V::Contributions => b::View::Contributions,
        V::Candidates => b::View::Candidates,
        V::Decisions => b::View::Decisions,
        V::Discoveries => b::View::Discoveries,
        V::Artifacts => b::View::Artifacts,
        V::Nudges => b::View::Nudges,
    }
}

fn to_error(e: wit::BoardError) -> b::BoardError {
    use wit::BoardError as E;
    match e {
        E::UnknownTask(id) => b::BoardError::UnknownTask(id),
        E::UnknownDecision(id) => b::BoardError::UnknownDecision(id),
        E::Empty(field) => b::BoardError::Empty(field),
        E::IllegalTransition(t) => b::BoardError::IllegalTransition { task: t.task, from: to_task_status(t.from), to: to_task_status(t.to) },
        E::Waiting(w) => b::BoardError::Waiting { task: w.task, on: w.on },
        E::Cycle(ids) => b::BoardError::Cycle(ids),
        E::Closed(status) => b::BoardError::Closed(to_board_status(status)),
        E::NeedsReview(why) => b::BoardError::NeedsReview(why),
        E::TooLarge(l) => b::BoardError::TooLarge { field: l.field, limit: usize::try_from(l.limit).unwrap_or(usize::MAX) },
        E::Claimed(c) => b::BoardError::Claimed { task: c.task, by: c.by, since: c.since },
        E::InvalidOp(why) => b::BoardError::InvalidOp(why),
        E::NotAnEnding(status) => b::BoardError::NotAnEnding(to_board_status(status)),
        E::InvalidId(id) => b::BoardError::InvalidId(id),
        E::NotClosed(status) => b::BoardError::NotClosed(to_board_status(status)),
        E::OwnReview((task, agent)) => b::BoardError::OwnReview { task, agent },
        E::AlreadyApproved(id) => b::BoardError::AlreadyApproved(id),
        E::TooLate(w) => b::BoardError::TooLate { task: w.task, on: w.on.into_iter().next().unwrap_or_default() },
    }
}

impl wit::Guest for Component {
    type Board = BoardResource;

    fn describe(error: wit::BoardError) -> String {
        to_error(error).to_string()
    }

    fn rule(error: wit::BoardError) -> String {
        to_error(error).rule().to_string()
    }
}

impl wit::GuestBoard for BoardResource {
    fn create(
        id: String,
        name: String,
        goal: String,
        constraints: Vec<String>,
        memory_core_refs: Vec<String>,
        now: String,
    ) -> Result<wit::Board, wit::BoardError> {
        let board = b::Board::new(&id, &name, &goal, constraints, memory_core_refs, &now).map_err(error)?;
        Ok(wit::Board::new(BoardResource(RefCell::new(board))))
    }

    fn load(state: String) -> Result<wit::Board, String> {
        Ok(wit::Board::new(BoardResource(RefCell::new(b::Board::load(&state)?))))
    }

    fn save(&self) -> String {
        self.0.borrow().save()
    }

    fn apply(&self, actor: String, now: String, o: wit::Op) -> Result<wit::Applied, wit::BoardError> {
        let event = self.0.borrow_mut().apply(&actor, &now, &op(o)).map_err(error)?;
        Ok(wit::Applied { revision: event.revision, event: event.to_json() })
    }

    fn apply_json(&self, actor: String, now: String, o: String) -> Result<wit::Applied, wit::BoardError> {
        let event = self.0.borrow_mut().apply_json(&actor, &now, &o).map_err(error)?;
        Ok(wit::Applied { revision: event.revision, event: event.to_json() })
    }

    fn replay(&self, event: String) -> Result<u64, wit::ReplayError> {
        let mut board = self.0.borrow_mut();
        board.replay(&event).map_err(|e| match e {
            b::ReplayError::Malformed(why) => wit::ReplayError::Malformed(why),
            b::ReplayError::OutOfOrder(expected) => wit::ReplayError::OutOfOrder(expected),
            b::ReplayError::Refused(e) => wit::ReplayError::Refused(error(e)),
        })?;
        Ok(board.revision)
    }

    fn revision(&self) -> u64 {
        self.0.borrow().revision
    }

    fn status(&self) -> wit::BoardStatus {
        board_status(self.0.borrow().status)
    }

    fn tasks(&self) -> Vec<wit::Task> {
        tasks(&self.0.borrow().tasks)
    }

    fn ready(&self) -> Vec<wit::Task> {
        tasks(self.0.borrow().ready())
    }

    fn blocked(&self) -> Vec<wit::Task> {
        tasks(self.0.borrow().blocked())
    }

    fn in_progress(&self) -> Vec<wit::Task> {
        tasks(self.0.borrow().in_progress())
    }

    fn needs_review(&self) -> Vec<wit::Task> {
        tasks(self.0.borrow().needs_review())
    }

    fn failed(&self) -> Vec<wit::Task> {
        tasks(self.0.borrow().failed())
    }

    fn stranded(&self) -> Vec<wit::Stranded> {
        self.0.borrow().stranded().into_iter().map(|(t, causes)| wit::Stranded { task: task(t), causes }).collect()
    }

    fn stale(&self, stale_before: String) -> Vec<wit::Task> {
        tasks(self.0.borrow().stale(&stale_before))
    }

    fn brief(&self, task: String) -> Result<String, wit::BoardError> {
        self.0.borrow().brief(&task).map_err(error)
    }

    fn view(&self, v: wit::View) -> Result<String, wit::BoardError> {
        self.0.borrow().render(&view(v)).map_err(error)
    }
}
