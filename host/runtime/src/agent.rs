//! The agent world: the engine with the capabilities a host grants it, and nothing else.

use crate::bindings;
use crate::capabilities::{Capabilities, clock, llm, session_store};
use crate::instance::Loaded;
use crate::sandbox::{self, Ctx};
use crate::{CompactFailure, Result, UpdateError, UpdateReport};
use wasmtime::Store;

impl llm::Host for Ctx {
    fn complete(&mut self, messages: Vec<llm::Message>) -> std::result::Result<llm::Completion, llm::LlmError> {
        self.import(|c| c.complete(messages))
    }
}

impl session_store::Host for Ctx {
    fn load_memory(&mut self) -> std::result::Result<Option<String>, session_store::StoreError> {
        self.import(|c| c.load_memory())
    }
    fn commit_update(&mut self, commit: session_store::Commit) -> std::result::Result<(), session_store::StoreError> {
        self.import(|c| c.commit_update(commit))
    }
}

impl clock::Host for Ctx {
    fn now(&mut self) -> String {
        self.import(|c| c.now())
    }
}

/// One instance of the agent world with its capabilities.
pub struct AgentInstance {
    store: Store<Ctx>,
    bindings: bindings::Agent,
}

impl AgentInstance {
    pub(crate) fn new(loaded: &Loaded, pre: &bindings::AgentPre<Ctx>, capabilities: Box<dyn Capabilities>) -> Result<Self> {
        let mut store = loaded.store(Some(capabilities));
        let bindings = crate::sandbox::ticking(&mut store, |s| pre.instantiate(s)).map_err(crate::Error::Load)?;
        Ok(AgentInstance { store, bindings })
    }

    /// Spec 000's memory update inside the sandbox (see `workflows.memory-update`). The inner
    /// `Err` is the workflow's own failure; nothing was committed then.
    pub fn memory_update(&mut self, task: &str, max_reprompts: u32) -> Result<std::result::Result<UpdateReport, UpdateError>> {
        let bindings = &self.bindings;
        sandbox::call(&mut self.store, |s| bindings.workmem_memory_workflows().call_memory_update(s, task, max_reprompts))
    }

    /// `history.compact` with `summarize` answered by the granted model inside the sandbox
    /// (see `workflows.compact-history`). It touches no store.
    pub fn compact_history(
        &mut self,
        view: &[crate::history::Entry],
        request: &crate::history::CompactRequest,
    ) -> Result<std::result::Result<crate::history::Compaction, CompactFailure>> {
        let bindings = &self.bindings;
        sandbox::call(&mut self.store, |s| bindings.workmem_memory_workflows().call_compact_history(s, view, request))
    }
}
