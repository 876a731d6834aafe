//! What people and agents read off a board: spec 002's computed views, the context a worker
//! gets for its task, who did what, and the learnings worth promoting to a memory core.

use super::{Artifact, Board, Decision, Discovery, DiscoveryType, Nudge, NudgeTarget, Task, TaskStatus};
use serde::Serialize;
use std::collections::BTreeMap;

/// What a worker needs for one task (spec 002 `getContextForTask`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaskContext {
    pub goal: String,
    pub constraints: Vec<String>,
    pub task: Task,
    /// The tasks it depends on, with their results once they have them.
    pub dependencies: Vec<Task>,
    pub decisions: Vec<Decision>,
    pub discoveries: Vec<Discovery>,
    pub artifacts: Vec<Artifact>,
    /// Nudges for its agent, for everyone, and (for an unassigned task) none of another's.
    pub nudges: Vec<Nudge>,
}

/// Who did what, derived from the board.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Contribution {
    pub agent_id: String,
    pub tasks_completed: Vec<String>,
    pub decisions_made: Vec<String>,
    pub discoveries: Vec<String>,
    pub artifacts_created: Vec<String>,
    pub first_contribution: String,
    pub last_contribution: String,
}

/// Something learned on this board that may belong in a memory core.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Candidate {
    /// `decision`, `insight` or `pattern`.
    pub kind: &'static str,
    /// The decision, discovery or task it comes from.
    pub source: String,
    pub text: String,
    pub suggested_core: Option<String>,
}

impl Board {
    fn with_status(&self, status: TaskStatus) -> Vec<&Task> {
        self.tasks.iter().filter(|t| t.status == status).collect()
    }

    fn deps_done(&self, task: &Task) -> bool {
        task.depends_on.iter().all(|d| self.task(d).is_ok_and(|t| t.status == TaskStatus::Completed))
    }

    /// Pending or assigned tasks whose dependencies have all completed.
    pub fn ready(&self) -> Vec<&Task> {
        self.tasks.iter().filter(|t| matches!(t.status, TaskStatus::Pending | TaskStatus::Assigned) && self.deps_done(t)).collect()
    }

    /// Tasks marked blocked, and pending or assigned ones still waiting on a dependency (one
    /// that failed included: a partial failure shows here, not only in `failed`).
    pub fn blocked(&self) -> Vec<&Task> {
        self.tasks
            .iter()
            .filter(|t| t.status == TaskStatus::Blocked || (matches!(t.status, TaskStatus::Pending | TaskStatus::Assigned) && !self.deps_done(t)))
            .collect()
    }

    pub fn in_progress(&self) -> Vec<&Task> {
        self.with_status(TaskStatus::InProgress)
    }

    /// Tasks done and waiting for a review.
    pub fn needs_review(&self) -> Vec<&Task> {
        self.with_status(TaskStatus::Review)
    }

    pub fn failed(&self) -> Vec<&Task> {
        self.with_status(TaskStatus::Failed)
    }

    /// Claimed tasks (assigned or in progress) whose claimant was last heard from before
    /// `stale_before`: the ones a restarted orchestrator may reclaim.
    pub fn stale(&self, stale_before: &str) -> Vec<&Task> {
        self.tasks
            .iter()
            .filter(|t| matches!(t.status, TaskStatus::Assigned | TaskStatus::InProgress) && t.last_heard().is_some_and(|at| at < stale_before))
            .collect()
    }

    /// Every task that cannot complete because one it depends on, directly or not, failed or
    /// was cancelled, with the ones at fault.
    pub fn stranded(&self) -> Vec<(&Task, Vec<String>)> {
        let causes = super::graph::dead_upstream(self);
        self.tasks
            .iter()
            .zip(causes)
            .filter(|(t, causes)| !t.status.is_terminal() && t.status != TaskStatus::Failed && !causes.is_empty())
            .map(|(t, causes)| {
                let mut causes: Vec<String> = causes.into_iter().map(|i| self.tasks[i].id.clone()).collect();
                causes.sort_unstable();
                (t, causes)
            })
            .collect()
    }

    /// Spec 002's `getContextForTask`: the goal and constraints, the task and its
    /// dependencies, and the decisions, discoveries, artifacts and nudges that concern it.
    pub fn context_for_task(&self, id: &str) -> Result<TaskContext, super::BoardError> {
        let task = self.task(id)?.clone();
        let concerns = |affects: &[String]| affects.is_empty() || affects.iter().any(|a| a == id);
        let nudge_for = |n: &&Nudge| match &n.target {
            NudgeTarget::All => true,
            NudgeTarget::Orchestrator => false,
            NudgeTarget::Agent(agent) => task.assigned_to.as_deref() == Some(agent.as_str()),
        };
        Ok(TaskContext {
            goal: self.goal.clone(),
            constraints: self.constraints.clone(),
            dependencies: task.depends_on.iter().filter_map(|d| self.task(d).ok().cloned()).collect(),
            decisions: self.decisions.iter().filter(|d| concerns(&d.affects_tasks)).cloned().collect(),
            discoveries: self.discoveries.iter().filter(|d| concerns(&d.affects_tasks)).cloned().collect(),
            artifacts: self.artifacts.iter().filter(|a| a.associated_task == id || task.depends_on.contains(&a.associated_task)).cloned().collect(),
            nudges: self.nudges.iter().filter(nudge_for).cloned().collect(),
            task,
        })
    }

    /// The context of task `id` as a worker's LLM reads it (markdown): the goal and
    /// constraints, the task, what its dependencies produced, and the decisions, discoveries,
    /// artifacts and nudges that concern it, newest nudges last.
    pub fn brief(&self, id: &str) -> Result<String, super::BoardError> {
        use std::fmt::Write;
        let cx = self.context_for_task(id)?;
        let mut out = format!("Goal: {}\n", cx.goal);
        for c in &cx.constraints {
            let _ = writeln!(out, "Constraint: {c}");
        }
        let t = &cx.task;
        let _ = write!(out, "\n## Your task {}: {} ({})\n", t.id, t.title, super::name(&t.status));
        if !t.description.is_empty() {
            let _ = writeln!(out, "{}", t.description);
        }
        if t.needs_review {
            out.push_str("It goes to review when you complete it.\n");
        }
        if let Some(comments) = t.review_comments.as_deref().filter(|_| t.status == TaskStatus::InProgress) {
            let _ = writeln!(out, "Reviewer asked for rework: {comments}");
        }
        let mut section = |title: &str, lines: Vec<String>| {
            if !lines.is_empty() {
                let _ = write!(out, "\n## {title}\n");
                for line in lines {
                    let _ = writeln!(out, "- {line}");
                }
            }
        };
        section(
            "Dependencies",
            cx.dependencies
                .iter()
                .map(|d| match &d.result {
                    Some(r) => format!("{} {} ({}): {}", d.id, d.title, super::name(&d.status), r.summary),
                    None => format!("{} {} ({})", d.id, d.title, super::name(&d.status)),
                })
                .collect(),
        );
        section(
            "Decisions",
            cx.decisions
                .iter()
                .map(|d| {
                    let why = if d.rationale.is_empty() { String::new() } else { format!(", because {}", d.rationale) };
                    format!("{} {}: {}{why}{}", d.id, d.question, d.choice, if d.reversible { "" } else { " (irreversible)" })
                })
                .collect(),
        );
        section("Discoveries", cx.discoveries.iter().map(|d| format!("{} ({}): {}", d.id, super::name(&d.kind), d.content)).collect());
        section("Artifacts", cx.artifacts.iter().map(|a| format!("{} {} v{} ({}): {}", a.id, a.path, a.version, a.checksum, a.description)).collect());
        section(
            "Nudges",
            cx.nudges
                .iter()
                .map(|n| format!("{} from {}{}: {}", n.id, n.by, if n.priority == super::Priority::High { " (high priority)" } else { "" }, n.message))
                .collect(),
        );
        Ok(out)
    }

    /// Who did what, by agent (in order of their IDs): derived from the records, never kept.
    pub fn contributions(&self) -> Vec<Contribution> {
        let mut by: BTreeMap<String, Contribution> = BTreeMap::new();
        let mut note = |agent: &str, at: &str, f: &mut dyn FnMut(&mut Contribution)| {
            let c = by.entry(agent.to_string()).or_insert_with(|| Contribution {
                agent_id: agent.into(),
                first_contribution: at.into(),
                ..Contribution::default()
            });
            c.first_contribution = c.first_contribution.clone().min(at.to_string());
            c.last_contribution = c.last_contribution.clone().max(at.to_string());
            f(c);
        };
        for t in self.tasks.iter().filter(|t| t.status == TaskStatus::Completed) {
            if let (Some(agent), Some(at)) = (&t.assigned_to, &t.completed_at) {
                note(agent, at, &mut |c| c.tasks_completed.push(t.id.clone()));
            }
        }
        for d in &self.decisions {
            note(&d.made_by, &d.made_at, &mut |c| c.decisions_made.push(d.id.clone()));
        }
        for d in &self.discoveries {
            note(&d.discovered_by, &d.discovered_at, &mut |c| c.discoveries.push(d.id.clone()));
        }
        for a in &self.artifacts {
            note(&a.created_by, &a.created_at, &mut |c| c.artifacts_created.push(a.id.clone()));
        }
        by.into_values().collect()
    }

    /// Spec 002's `extractLearningCandidates`: decisions with a rationale, discoveries marked
    /// as insights, and each completed task's result (its pattern: what was done, what next).
    pub fn candidates(&self) -> Vec<Candidate> {
        let decisions = self.decisions.iter().filter(|d| !d.rationale.trim().is_empty()).map(|d| Candidate {
            kind: "decision",
            source: d.id.clone(),
            text: format!(
                "{}: {} (rather than {}), because {}",
                d.question,
                d.choice,
                if d.alternatives.is_empty() { "nothing else".into() } else { d.alternatives.join(", ") },
                d.rationale
            ),
            suggested_core: None,
        });
        let insights = self.discoveries.iter().filter(|d| d.kind == DiscoveryType::Insight).map(|d| Candidate {
            kind: "insight",
            source: d.id.clone(),
            text: d.content.clone(),
            suggested_core: d.promote_to_core.clone(),
        });
        let patterns = self.tasks.iter().filter(|t| t.status == TaskStatus::Completed).filter_map(|t| {
            let result = t.result.as_ref()?;
            Some(Candidate { kind: "pattern", source: t.id.clone(), text: format!("{}: {}", t.title, result.summary), suggested_core: None })
        });
        decisions.chain(insights).chain(patterns).collect()
    }
}
