//! A working memory kept inside the engine (the `memory` resource), with its own instance.

use crate::instance::Resident;
use crate::*;
use wasmtime::component::ResourceAny;

/// A memory living in an engine instance of its own (see [`Error::Lost`] for a trap).
pub struct Memory(Resident);

/// A memory-update run (spec 000 §3 as steps) over one [`Memory`].
pub struct UpdateRun {
    handle: ResourceAny,
}

impl Memory {
    pub(crate) fn new(mut instance: Instance) -> Result<Self> {
        let handle = instance.call(|b, s| b.workmem_memory_memory().memory().call_constructor(s))?;
        Ok(Memory(Resident::new(instance, handle)))
    }

    pub(crate) fn load(instance: Instance, state: &str) -> Result<std::result::Result<Self, String>> {
        Ok(Resident::make(instance, |b, s| b.workmem_memory_memory().memory().call_load(s, state))?.map(Memory))
    }

    fn call<T>(&mut self, f: impl FnOnce(&crate::instance::Engine, &mut wasmtime::Store<sandbox::Ctx>, ResourceAny) -> wasmtime::Result<T>) -> Result<T> {
        self.0.call(f)
    }

    /// `state.json`: the engine's serialized form, the same bytes from every runtime.
    pub fn save(&mut self) -> Result<String> {
        self.call(|b, s, m| b.workmem_memory_memory().memory().call_save(s, m))
    }

    pub fn validate(&mut self, text: &str) -> Result<ParseOutcome> {
        self.call(|b, s, m| b.workmem_memory_memory().memory().call_validate(s, m, text))
    }

    /// The inner `Err` holds the diagnostics of an update with errors; nothing was applied.
    pub fn apply(&mut self, text: &str, now: &str, wants: Wants) -> Result<std::result::Result<Applied, Vec<Diagnostic>>> {
        self.call(|b, s, m| b.workmem_memory_memory().memory().call_apply(s, m, text, now, wants))
    }

    /// The inner `Err` says which update broke which invariant; none was applied.
    pub fn merge(&mut self, updates: &[Update], now: &str, wants: Wants) -> Result<std::result::Result<Applied, String>> {
        self.call(|b, s, m| b.workmem_memory_memory().memory().call_merge(s, m, updates, now, wants))
    }

    pub fn render(&mut self) -> Result<String> {
        self.call(|b, s, m| b.workmem_memory_memory().memory().call_render(s, m))
    }

    pub fn snapshot(&mut self) -> Result<Snapshot> {
        self.call(|b, s, m| b.workmem_memory_memory().memory().call_snapshot(s, m))
    }

    pub fn update_prompt(&mut self, task: &str) -> Result<String> {
        self.call(|b, s, m| b.workmem_memory_memory().memory().call_update_prompt(s, m, task))
    }

    /// Starts a memory-update run for `task`.
    pub fn update_run(&mut self, task: &str, max_reprompts: u32) -> Result<UpdateRun> {
        let handle = self.call(|b, s, m| b.workmem_memory_memory().update_run().call_constructor(s, m, task, max_reprompts))?;
        Ok(UpdateRun { handle })
    }

    /// The conversation `run` wants sent to the model now.
    pub fn request(&mut self, run: &UpdateRun) -> Result<Vec<Message>> {
        self.call(|b, s, _| b.workmem_memory_memory().update_run().call_request(s, run.handle))
    }

    /// Hands the model's answer to `run`; an applied answer changes this memory.
    pub fn answer(&mut self, run: &UpdateRun, text: &str, now: &str, wants: Wants) -> Result<UpdateStep> {
        self.call(|b, s, m| b.workmem_memory_memory().update_run().call_answer(s, run.handle, m, text, now, wants))
    }
}
