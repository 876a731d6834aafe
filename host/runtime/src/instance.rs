//! One live engine (the `engine` world). Every call crosses into the sandbox.

use crate::sandbox::{self, Ctx};
use crate::*;
use wasmtime::Store;

/// A live instance of the engine. A call that traps or runs past its deadline returns an
/// [`Error`], and the next call starts from a fresh instance.
pub struct Instance {
    runtime: Runtime,
    live: Option<(Store<Ctx>, Engine)>,
}

impl Instance {
    pub(crate) fn new(runtime: Runtime) -> Result<Self> {
        let live = Some(instantiate(&runtime)?);
        Ok(Instance { runtime, live })
    }

    fn call<T>(&mut self, f: impl FnOnce(&Engine, &mut Store<Ctx>) -> wasmtime::Result<T>) -> Result<T> {
        if self.live.is_none() {
            self.live = Some(instantiate(&self.runtime)?);
        }
        let (store, bindings) = self.live.as_mut().expect("set above");
        let result = sandbox::call(store, |s| f(bindings, s));
        if result.is_err() {
            self.live = None;
        }
        result
    }

    pub fn parse(&mut self, text: &str) -> Result<ParseOutcome> {
        self.call(|b, s| b.call_parse(s, text))
    }

    pub fn validate(&mut self, text: &str, state: &MemoryState) -> Result<ParseOutcome> {
        self.call(|b, s| b.call_validate(s, text, state))
    }

    /// Applies `updates` in order. The inner `Err` is the engine's refusal (an update that
    /// breaks an invariant), in which case none is applied.
    pub fn merge(&mut self, state: &MemoryState, updates: &[Update], now: &str) -> Result<std::result::Result<MergeOutcome, String>> {
        self.call(|b, s| b.call_merge(s, state, updates, now))
    }

    pub fn apply(&mut self, state: &MemoryState, text: &str, now: &str) -> Result<ApplyOutcome> {
        self.call(|b, s| b.call_apply(s, state, text, now))
    }

    pub fn render(&mut self, state: &MemoryState) -> Result<String> {
        self.call(|b, s| b.call_render(s, state))
    }

    pub fn update_prompt(&mut self, state: &MemoryState, task: &str) -> Result<String> {
        self.call(|b, s| b.call_update_prompt(s, state, task))
    }

    pub fn overview_template(&mut self) -> Result<String> {
        self.call(|b, s| b.call_overview_template(s))
    }

    pub fn empty_state(&mut self) -> Result<MemoryState> {
        self.call(|b, s| b.call_empty_state(s))
    }

    pub fn assemble_context(&mut self, request: &ContextRequest) -> Result<Vec<ChatMessage>> {
        self.call(|b, s| b.call_assemble_context(s, request))
    }

    pub fn context_meta(&mut self, stats: &ContextStats) -> Result<String> {
        self.call(|b, s| b.call_context_meta(s, *stats))
    }

    pub fn overview_maintained(&mut self, overview: &str) -> Result<bool> {
        self.call(|b, s| b.call_overview_maintained(s, overview))
    }
}

fn instantiate(runtime: &Runtime) -> Result<(Store<Ctx>, Engine)> {
    let mut store = runtime.store(None);
    let bindings = runtime.inner.engine_pre.instantiate(&mut store).map_err(Error::Load)?;
    Ok((store, bindings))
}
