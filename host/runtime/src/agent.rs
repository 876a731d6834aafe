//! The agent world: the engine with the capabilities a host grants it, and nothing else.

use crate::sandbox::{self, Ctx};
use crate::{Result, Runtime};
use wasmtime::Store;

pub(crate) mod bindings {
    wasmtime::component::bindgen!({ world: "agent", path: "../../wit" });
}

pub use bindings::MemoryUpdateReport;
pub use bindings::workmem::memory::{clock, llm, store};

/// Everything the agent world can reach: the model, the session's files, the time. The host
/// decides what each one really is; the guest has no other way out.
pub trait Capabilities: Send {
    fn complete(&mut self, messages: Vec<llm::Message>) -> std::result::Result<llm::Completion, llm::LlmError>;
    fn read(&mut self, path: &str) -> std::result::Result<String, store::StoreError>;
    fn write(&mut self, path: &str, content: &str) -> std::result::Result<(), store::StoreError>;
    fn append(&mut self, path: &str, content: &str) -> std::result::Result<(), store::StoreError>;
    fn list_files(&mut self, path: &str) -> std::result::Result<Vec<String>, store::StoreError>;
    fn now(&mut self) -> String;
}

impl llm::Host for Ctx {
    fn complete(&mut self, messages: Vec<llm::Message>) -> std::result::Result<llm::Completion, llm::LlmError> {
        self.import(|c| c.complete(messages))
    }
}

impl store::Host for Ctx {
    fn read(&mut self, path: String) -> std::result::Result<String, store::StoreError> {
        self.import(|c| c.read(&path))
    }
    fn write(&mut self, path: String, content: String) -> std::result::Result<(), store::StoreError> {
        self.import(|c| c.write(&path, &content))
    }
    fn append(&mut self, path: String, content: String) -> std::result::Result<(), store::StoreError> {
        self.import(|c| c.append(&path, &content))
    }
    fn list_files(&mut self, path: String) -> std::result::Result<Vec<String>, store::StoreError> {
        self.import(|c| c.list_files(&path))
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
    pub(crate) fn new(runtime: &Runtime, pre: &bindings::AgentPre<Ctx>, capabilities: Box<dyn Capabilities>) -> Result<Self> {
        let mut store = runtime.store(Some(capabilities));
        let bindings = pre.instantiate(&mut store).map_err(crate::Error::Load)?;
        Ok(AgentInstance { store, bindings })
    }

    /// Spec 000's memory-update step inside the sandbox. The inner `Err` is the workflow's
    /// own failure (the model failed, or never gave a valid answer); nothing was written then.
    pub fn memory_update(&mut self, task: &str, max_reprompts: u32) -> Result<std::result::Result<MemoryUpdateReport, String>> {
        let bindings = &self.bindings;
        sandbox::call(&mut self.store, |s| bindings.call_memory_update(s, task, max_reprompts))
    }
}
