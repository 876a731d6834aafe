//! A board as JSON for those who speak it rather than the WIT's types: an op in the form the
//! event log records it (`{"op": "add_task", ...}`), and any view by name, its records as
//! `save` writes them. The CLI, servers, LLM tools and the Go world all read and write these.

use super::{Board, BoardError, Event, Op};
use serde::Serialize;

/// What [`Board::render`] can show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum View {
    Tasks,
    Ready,
    Blocked,
    InProgress,
    NeedsReview,
    Failed,
    Stranded,
    /// Claims last renewed before the given time.
    Stale(String),
    ContextForTask(String),
    Contributions,
    Candidates,
    Decisions,
    Discoveries,
    Artifacts,
    Nudges,
}

impl View {
    /// A view by its name (`ready`, `context_for_task`, ...; `-` or `_` alike), with the
    /// argument the two that take one need.
    pub fn named(name: &str, arg: &str) -> Option<View> {
        Some(match name.replace('-', "_").as_str() {
            "tasks" => View::Tasks,
            "ready" => View::Ready,
            "blocked" => View::Blocked,
            "in_progress" => View::InProgress,
            "needs_review" => View::NeedsReview,
            "failed" => View::Failed,
            "stranded" => View::Stranded,
            "stale" => View::Stale(arg.into()),
            "context_for_task" => View::ContextForTask(arg.into()),
            "contributions" => View::Contributions,
            "candidates" => View::Candidates,
            "decisions" => View::Decisions,
            "discoveries" => View::Discoveries,
            "artifacts" => View::Artifacts,
            "nudges" => View::Nudges,
            _ => return None,
        })
    }
}

fn json(value: &impl Serialize) -> String {
    serde_json::to_string(value).expect("board records serialize")
}

impl Board {
    /// A view as JSON. Errors: `context_for_task` of an unknown task.
    pub fn render(&self, v: &View) -> Result<String, BoardError> {
        Ok(match v {
            View::Tasks => json(&self.tasks),
            View::Ready => json(&self.ready()),
            View::Blocked => json(&self.blocked()),
            View::InProgress => json(&self.in_progress()),
            View::NeedsReview => json(&self.needs_review()),
            View::Failed => json(&self.failed()),
            View::Stranded => {
                json(&self.stranded().into_iter().map(|(task, causes)| serde_json::json!({ "task": task, "causes": causes })).collect::<Vec<_>>())
            }
            View::Stale(before) => json(&self.stale(before)),
            View::ContextForTask(task) => json(&self.context_for_task(task)?),
            View::Contributions => json(&self.contributions()),
            View::Candidates => json(&self.candidates()),
            View::Decisions => json(&self.decisions),
            View::Discoveries => json(&self.discoveries),
            View::Artifacts => json(&self.artifacts),
            View::Nudges => json(&self.nudges),
        })
    }

    /// [`Board::apply`] with the op as JSON, as the event log records it.
    pub fn apply_json(&mut self, actor: &str, now: &str, op: &str) -> Result<Event, BoardError> {
        if op.len() > super::limits::MAX_OP_JSON {
            return Err(BoardError::TooLarge { field: "op".into(), limit: super::limits::MAX_OP_JSON });
        }
        let op: Op = serde_json::from_str(op).map_err(|e| BoardError::InvalidOp(e.to_string()))?;
        self.apply(actor, now, &op)
    }
}
