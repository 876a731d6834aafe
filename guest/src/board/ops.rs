//! The ops of a board, one method each: every check an op makes comes before its first
//! change, so a refused op leaves the board as it was ([`Board::apply`] dispatches to them and
//! counts the revision).

use super::*;

/// Who applies an op and when; `replaying` an event of the log, to which the rules made since
/// it was written are not applied.
pub(super) struct By<'a> {
    pub actor: &'a str,
    pub now: &'a str,
    pub replaying: bool,
}

impl Board {
    pub(super) fn add_task(&mut self, _: &By, title: &str, description: &str, depends_on: &[String], needs_review: bool) -> Result<(), BoardError> {
        required(title, "title")?;
        limits::room("tasks", self.tasks.len())?;
        self.known_tasks(depends_on)?;
        self.next.task += 1;
        let id = format!("T-{}", self.next.task);
        // Each dependency once, in the order given (`T-1,T-2,T-1` kept T-1 twice).
        let mut seen = std::collections::HashSet::new();
        let depends_on: Vec<String> = depends_on.iter().filter(|d| seen.insert(d.as_str())).cloned().collect();
        for dep in &depends_on {
            self.task_mut(dep).blocks.push(id.clone());
        }
        self.tasks.push(Task {
            id,
            title: title.to_string(),
            description: description.to_string(),
            status: TaskStatus::Pending,
            assigned_to: None,
            assigned_at: None,
            heartbeat_at: None,
            depends_on,
            blocks: Vec::new(),
            result: None,
            completed_at: None,
            needs_review,
            reviewed_by: None,
            review_status: None,
            review_comments: None,
        });

        Ok(())
    }

    pub(super) fn add_dependency(&mut self, who: &By, task: &str, on: &str) -> Result<(), BoardError> {
        self.task(task)?;
        self.task(on)?;
        if let Some(cycle) = graph::cycle_through(self, task, on) {
            return Err(BoardError::Cycle(cycle));
        }
        let done_with = matches!(self.task(task)?.status, TaskStatus::Review | TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled);
        if !who.replaying && done_with && self.task(on)?.status != TaskStatus::Completed {
            return Err(BoardError::TooLate { task: task.to_string(), on: on.to_string() });
        }
        if !self.task(task)?.depends_on.iter().any(|d| d == on) {
            self.task_mut(task).depends_on.push(on.to_string());
            self.task_mut(on).blocks.push(task.to_string());
        }

        Ok(())
    }

    pub(super) fn assign(&mut self, who: &By, task: &str, agent: &str) -> Result<(), BoardError> {
        required(agent, "agent")?;
        let t = self.task(task)?;
        if !matches!(t.status, TaskStatus::Pending | TaskStatus::Assigned | TaskStatus::Blocked) {
            return Err(BoardError::IllegalTransition { task: task.to_string(), from: t.status, to: TaskStatus::Assigned });
        }
        let t = self.task_mut(task);
        t.status = TaskStatus::Assigned;
        t.assigned_to = Some(agent.to_string());
        t.assigned_at = Some(who.now.into());
        t.heartbeat_at = None;

        Ok(())
    }

    pub(super) fn heartbeat(&mut self, who: &By, task: &str) -> Result<(), BoardError> {
        let (by, since) = self.claim(task)?;
        if by != who.actor {
            return Err(BoardError::Claimed { task: task.to_string(), by, since });
        }
        self.task_mut(task).heartbeat_at = Some(who.now.into());

        Ok(())
    }

    pub(super) fn reclaim(&mut self, _: &By, task: &str, stale_before: &str) -> Result<(), BoardError> {
        required(stale_before, "stale_before")?;
        let (by, since) = self.claim(task)?;
        if since.as_str() >= stale_before {
            return Err(BoardError::Claimed { task: task.to_string(), by, since });
        }
        let t = self.task_mut(task);
        t.status = TaskStatus::Pending;
        t.assigned_to = None;
        t.assigned_at = None;
        t.heartbeat_at = None;

        Ok(())
    }

    pub(super) fn set_status(&mut self, who: &By, task: &str, status: TaskStatus) -> Result<(), BoardError> {
        let t = self.task(task)?;
        if !t.status.may_become(status) {
            return Err(BoardError::IllegalTransition { task: task.to_string(), from: t.status, to: status });
        }
        if status == TaskStatus::InProgress {
            self.ready_to_start(task)?;
        }
        if status == TaskStatus::Review && !t.needs_review {
            return Err(BoardError::NeedsReview(format!("task {task} needs no review; complete it")));
        }
        if matches!(status, TaskStatus::InProgress | TaskStatus::Review | TaskStatus::Failed) && !who.replaying {
            self.worked_by(task, who.actor)?;
        }
        let t = self.task_mut(task);
        if status == TaskStatus::InProgress && t.assigned_to.is_none() {
            // Starting an unassigned task claims it.
            t.assigned_to = Some(who.actor.into());
            t.assigned_at = Some(who.now.into());
        }
        t.status = status;
        t.renew(who.actor, who.now);

        Ok(())
    }

    pub(super) fn complete(&mut self, who: &By, task: &str, summary: &str, next_steps: &[String]) -> Result<(), BoardError> {
        required(summary, "summary")?;
        let t = self.task(task)?;
        if t.status != TaskStatus::InProgress {
            return Err(BoardError::IllegalTransition { task: task.to_string(), from: t.status, to: TaskStatus::Completed });
        }
        // A dependency added after the task started still has to complete first.
        if !who.replaying {
            self.worked_by(task, who.actor)?;
            self.ready_to_start(task)?;
        }
        let to = if t.needs_review { TaskStatus::Review } else { TaskStatus::Completed };
        let t = self.task_mut(task);
        t.renew(who.actor, who.now);
        t.result = Some(TaskResult { summary: summary.to_string(), next_steps: next_steps.to_vec() });
        t.status = to;
        if to == TaskStatus::Completed {
            t.completed_at = Some(who.now.into());
        }

        Ok(())
    }

    pub(super) fn review(&mut self, who: &By, task: &str, status: ReviewStatus, comments: &str) -> Result<(), BoardError> {
        let t = self.task(task)?;
        if t.status != TaskStatus::Review {
            return Err(BoardError::NeedsReview(format!("task {task} is {}, not in review", t.status)));
        }
        if !who.replaying && t.assigned_to.as_deref() == Some(who.actor) {
            return Err(BoardError::OwnReview { task: task.to_string(), agent: who.actor.into() });
        }
        let t = self.task_mut(task);
        t.status = match status {
            ReviewStatus::Approved => TaskStatus::Completed,
            ReviewStatus::NeedsRework => TaskStatus::InProgress,
            ReviewStatus::Rejected => TaskStatus::Failed,
        };
        if t.status == TaskStatus::Completed {
            t.completed_at = Some(who.now.into());
        }
        t.reviewed_by = Some(who.actor.into());
        t.review_status = Some(status);
        t.review_comments = Some(comments.to_string());

        Ok(())
    }

    // One argument a field of `Op::Decide`, as each op's method takes its variant's fields.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn decide(
        &mut self,
        who: &By,
        question: &str,
        choice: &str,
        alternatives: &[String],
        rationale: &str,
        affects_tasks: &[String],
        reversible: bool,
    ) -> Result<(), BoardError> {
        required(question, "question")?;
        required(choice, "choice")?;
        limits::room("decisions", self.decisions.len())?;
        self.known_tasks(affects_tasks)?;
        self.next.decision += 1;
        self.decisions.push(Decision {
            id: format!("D-{}", self.next.decision),
            made_at: who.now.into(),
            made_by: who.actor.into(),
            question: question.to_string(),
            choice: choice.to_string(),
            alternatives: alternatives.to_vec(),
            rationale: rationale.to_string(),
            affects_tasks: affects_tasks.to_vec(),
            reversible,
            approved_by: None,
        });

        Ok(())
    }

    pub(super) fn discover(
        &mut self,
        who: &By,
        content: &str,
        kind: DiscoveryType,
        affects_tasks: &[String],
        promote_to_core: &Option<String>,
    ) -> Result<(), BoardError> {
        required(content, "content")?;
        limits::room("discoveries", self.discoveries.len())?;
        self.known_tasks(affects_tasks)?;
        self.next.discovery += 1;
        self.discoveries.push(Discovery {
            id: format!("F-{}", self.next.discovery),
            discovered_at: who.now.into(),
            discovered_by: who.actor.into(),
            content: content.to_string(),
            kind,
            affects_tasks: affects_tasks.to_vec(),
            promote_to_core: promote_to_core.clone(),
        });

        Ok(())
    }

    pub(super) fn artifact(&mut self, who: &By, kind: ArtifactType, path: &str, description: &str, task: &str, checksum: &str) -> Result<(), BoardError> {
        required(path, "path")?;
        required(checksum, "checksum")?;
        limits::room("artifacts", self.artifacts.len())?;
        self.task(task)?;
        let version = self.artifacts.iter().filter(|a| a.path == path).map(|a| a.version).max().unwrap_or(0) + 1;
        self.next.artifact += 1;
        self.artifacts.push(Artifact {
            id: format!("A-{}", self.next.artifact),
            created_at: who.now.into(),
            created_by: who.actor.into(),
            kind,
            path: path.to_string(),
            description: description.to_string(),
            associated_task: task.to_string(),
            version,
            checksum: checksum.to_string(),
        });

        Ok(())
    }

    pub(super) fn nudge(&mut self, who: &By, target: &NudgeTarget, message: &str, priority: Priority) -> Result<(), BoardError> {
        required(message, "message")?;
        limits::room("nudges", self.nudges.len())?;
        if let NudgeTarget::Agent(agent) = target {
            required(agent, "target agent")?;
        }
        self.next.nudge += 1;
        self.nudges.push(Nudge {
            id: format!("N-{}", self.next.nudge),
            at: who.now.into(),
            by: who.actor.into(),
            target: target.clone(),
            message: message.to_string(),
            priority,
        });

        Ok(())
    }

    pub(super) fn approve(&mut self, who: &By, decision: &str) -> Result<(), BoardError> {
        limits::room("approvals", self.approvals.len())?;
        let d = self.decisions.iter_mut().find(|d| d.id == decision).ok_or_else(|| BoardError::UnknownDecision(decision.to_string()))?;
        if !who.replaying && d.approved_by.is_some() {
            return Err(BoardError::AlreadyApproved(decision.to_string()));
        }
        d.approved_by = Some(who.actor.into());
        self.approvals.push(Approval { at: who.now.into(), by: who.actor.into(), decision: decision.to_string() });

        Ok(())
    }

    pub(super) fn close(&mut self, _: &By, status: BoardStatus) -> Result<(), BoardError> {
        if !matches!(status, BoardStatus::Completed | BoardStatus::Cancelled) {
            return Err(BoardError::NotAnEnding(status));
        }
        self.status = status;

        Ok(())
    }

    /// Who holds the claim on `task` and when they were last heard from. A task nobody holds
    /// (not assigned or in progress) has no claim to renew or reclaim.
    fn claim(&self, task: &str) -> Result<(String, String), BoardError> {
        let t = self.task(task)?;
        match (&t.assigned_to, t.status) {
            (Some(by), TaskStatus::Assigned | TaskStatus::InProgress) => Ok((by.clone(), t.last_heard().unwrap_or_default().into())),
            _ => Err(BoardError::IllegalTransition { task: task.into(), from: t.status, to: TaskStatus::Pending }),
        }
    }

    /// A worker's moves on a task (starting it, sending it to review, failing or completing
    /// it) are its assignee's, as spec 002's worker operations are: anyone else is refused
    /// ([`BoardError::Claimed`]). The orchestrator's moves (assign, reclaim, block, cancel,
    /// back to pending) stay open to every writer of the board.
    fn worked_by(&self, task: &str, actor: &str) -> Result<(), BoardError> {
        let t = self.task(task)?;
        match &t.assigned_to {
            Some(by) if by != actor => Err(BoardError::Claimed { task: task.into(), by: by.clone(), since: t.last_heard().unwrap_or_default().into() }),
            _ => Ok(()),
        }
    }

    /// A task may start once every task it depends on has completed.
    fn ready_to_start(&self, task: &str) -> Result<(), BoardError> {
        let on: Vec<String> = self.task(task)?.depends_on.iter().filter(|d| self.task(d).is_ok_and(|t| t.status != TaskStatus::Completed)).cloned().collect();
        if on.is_empty() { Ok(()) } else { Err(BoardError::Waiting { task: task.into(), on }) }
    }
}
