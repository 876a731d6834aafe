//! A shared task board kept inside the engine (the `board` resource), with its own instance.

use crate::instance::Resident;
use crate::*;
use wasmtime::component::ResourceAny;

pub use crate::bindings::exports::workmem::memory::board::{
    Applied, ArtifactType, Assignment, BoardError, BoardStatus, Claim, Completion, Dependency, DiscoveryType, Limit, NewArtifact, NewDecision, NewDiscovery,
    NewNudge, NewTask, NudgeTarget, Op, Priority, Reclaim, ReplayError, Review, ReviewStatus, StatusChange, Stranded, Task, TaskResult, TaskStatus, Transition,
    View, Waiting,
};

/// A board living in an engine instance of its own (see [`Error::Lost`] for a trap).
pub struct Board(Resident);

impl Board {
    pub(crate) fn create(
        instance: Instance,
        id: &str,
        name: &str,
        goal: &str,
        constraints: &[String],
        memory_core_refs: &[String],
        now: &str,
    ) -> Result<std::result::Result<Self, BoardError>> {
        Ok(Resident::make(instance, |b, s| b.workmem_memory_board().board().call_create(s, id, name, goal, constraints, memory_core_refs, now))?.map(Board))
    }

    pub(crate) fn load(instance: Instance, state: &str) -> Result<std::result::Result<Self, String>> {
        Ok(Resident::make(instance, |b, s| b.workmem_memory_board().board().call_load(s, state))?.map(Board))
    }

    fn call<T>(&mut self, f: impl FnOnce(&crate::instance::Engine, &mut wasmtime::Store<sandbox::Ctx>, ResourceAny) -> wasmtime::Result<T>) -> Result<T> {
        self.0.call(f)
    }

    /// The serialized board, the same bytes from every runtime.
    pub fn save(&mut self) -> Result<String> {
        self.call(|b, s, h| b.workmem_memory_board().board().call_save(s, h))
    }

    /// Applies `op` by `actor` at `now`; the inner `Ok` is the new revision and the event to
    /// log, the inner `Err` why nothing was applied.
    pub fn apply(&mut self, actor: &str, now: &str, op: &Op) -> Result<std::result::Result<Applied, BoardError>> {
        self.call(|b, s, h| b.workmem_memory_board().board().call_apply(s, h, actor, now, op))
    }

    /// [`Board::apply`] with the op as JSON, in the form the event log records it.
    pub fn apply_json(&mut self, actor: &str, now: &str, op: &str) -> Result<std::result::Result<Applied, BoardError>> {
        self.call(|b, s, h| b.workmem_memory_board().board().call_apply_json(s, h, actor, now, op))
    }

    /// Applies the board's next event from its log; the inner `Ok` is the new revision.
    pub fn replay(&mut self, event: &str) -> Result<std::result::Result<u64, ReplayError>> {
        self.call(|b, s, h| b.workmem_memory_board().board().call_replay(s, h, event))
    }

    /// The engine's sentence for `error`.
    pub fn describe(&mut self, error: &BoardError) -> Result<String> {
        self.call(|b, s, _| b.workmem_memory_board().call_describe(s, error))
    }

    /// The rule `error` broke, as `board-error` names its case.
    pub fn rule(&mut self, error: &BoardError) -> Result<String> {
        self.call(|b, s, _| b.workmem_memory_board().call_rule(s, error))
    }

    pub fn revision(&mut self) -> Result<u64> {
        self.call(|b, s, h| b.workmem_memory_board().board().call_revision(s, h))
    }

    pub fn status(&mut self) -> Result<BoardStatus> {
        self.call(|b, s, h| b.workmem_memory_board().board().call_status(s, h))
    }

    pub fn tasks(&mut self) -> Result<Vec<Task>> {
        self.call(|b, s, h| b.workmem_memory_board().board().call_tasks(s, h))
    }

    pub fn ready(&mut self) -> Result<Vec<Task>> {
        self.call(|b, s, h| b.workmem_memory_board().board().call_ready(s, h))
    }

    pub fn blocked(&mut self) -> Result<Vec<Task>> {
        self.call(|b, s, h| b.workmem_memory_board().board().call_blocked(s, h))
    }

    pub fn in_progress(&mut self) -> Result<Vec<Task>> {
        self.call(|b, s, h| b.workmem_memory_board().board().call_in_progress(s, h))
    }

    pub fn needs_review(&mut self) -> Result<Vec<Task>> {
        self.call(|b, s, h| b.workmem_memory_board().board().call_needs_review(s, h))
    }

    pub fn failed(&mut self) -> Result<Vec<Task>> {
        self.call(|b, s, h| b.workmem_memory_board().board().call_failed(s, h))
    }

    pub fn stranded(&mut self) -> Result<Vec<Stranded>> {
        self.call(|b, s, h| b.workmem_memory_board().board().call_stranded(s, h))
    }

    pub fn stale(&mut self, stale_before: &str) -> Result<Vec<Task>> {
        self.call(|b, s, h| b.workmem_memory_board().board().call_stale(s, h, stale_before))
    }

    /// Task `task`'s context as a worker's LLM reads it (markdown).
    pub fn brief(&mut self, task: &str) -> Result<std::result::Result<String, BoardError>> {
        self.call(|b, s, h| b.workmem_memory_board().board().call_brief(s, h, task))
    }

    /// A view as JSON, in the engine's serialized form.
    pub fn view(&mut self, v: &View) -> Result<std::result::Result<String, BoardError>> {
        self.call(|b, s, h| b.workmem_memory_board().board().call_view(s, h, v))
    }
}
