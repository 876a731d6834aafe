//! The agent world: the engine with the capabilities the host grants it, and nothing else.
//! `llm` is the configured client, `store` the session directory through [`Confined`] (every
//! path checked), `clock` the wall clock. Whole workflows then run inside the sandbox.

use crate::engine::{Options, load, load_error};
use crate::error::{Error, Result};
use crate::llm::{Client, LlmError, Message};
use crate::session::Session;
use crate::store::{Confined, PathError};
use wasmtime::component::{HasSelf, Linker};
use wasmtime::{Config, Store, StoreLimits, StoreLimitsBuilder};

mod bindings {
    wasmtime::component::bindgen!({ world: "agent", path: "../wit" });
}

use bindings::workmem::memory::{clock, llm, store};
pub use bindings::MemoryUpdateReport;

/// How many times a malformed answer is sent back for correction (spec: bounded, default 2).
pub const DEFAULT_REPROMPTS: u32 = 2;

/// What one run inside the sandbox may reach.
pub struct Grants {
    llm: Client,
    files: Confined,
    limits: StoreLimits,
}

impl llm::Host for Grants {
    fn complete(&mut self, messages: Vec<llm::Message>) -> std::result::Result<llm::Completion, llm::LlmError> {
        let messages: Vec<Message> = messages.into_iter().map(|m| Message::new(&m.role, m.content)).collect();
        let usage = |u: crate::llm::Usage| llm::Usage { prompt_tokens: u.prompt_tokens, completion_tokens: u.completion_tokens };
        self.llm.complete(&messages).map(|c| llm::Completion { text: c.text, usage: c.usage.map(usage) }).map_err(|e| match e {
            LlmError::Timeout(_) => llm::LlmError::Timeout,
            LlmError::RateLimited { .. } => llm::LlmError::RateLimited,
            LlmError::Http { status, .. } => llm::LlmError::HttpStatus(status),
            LlmError::Other(message) => llm::LlmError::Other(message),
        })
    }
}

fn store_error(e: PathError) -> store::StoreError {
    match e {
        PathError::Io { kind: std::io::ErrorKind::NotFound, .. } => store::StoreError::NotFound,
        PathError::Io { .. } => store::StoreError::Other(e.to_string()),
        refused => store::StoreError::Refused(refused.to_string()),
    }
}

impl store::Host for Grants {
    fn read(&mut self, path: String) -> std::result::Result<String, store::StoreError> {
        self.files.read(&path).map_err(store_error)
    }
    fn write(&mut self, path: String, content: String) -> std::result::Result<(), store::StoreError> {
        self.files.write(&path, &content).map_err(store_error)
    }
    fn append(&mut self, path: String, content: String) -> std::result::Result<(), store::StoreError> {
        self.files.append(&path, &content).map_err(store_error)
    }
    fn list_files(&mut self, path: String) -> std::result::Result<Vec<String>, store::StoreError> {
        self.files.list(&path).map_err(store_error)
    }
}

impl clock::Host for Grants {
    fn now(&mut self) -> String {
        crate::now()
    }
}

/// The agent component, loaded and linked against the host's grants.
pub struct Sandbox {
    engine: wasmtime::Engine,
    pre: bindings::AgentPre<Grants>,
    max_memory_bytes: usize,
}

impl Sandbox {
    pub fn new(options: &Options) -> Result<Self> {
        let mut config = Config::new();
        config.wasm_component_model(true);
        let engine = wasmtime::Engine::new(&config).map_err(load_error)?;
        let (component, _) = load(&engine, crate::engine::AGENT_COMPONENT, options.cache_dir.as_deref())?;
        let mut linker = Linker::<Grants>::new(&engine);
        bindings::Agent::add_to_linker::<Grants, HasSelf<Grants>>(&mut linker, |g| g).map_err(load_error)?;
        let pre = bindings::AgentPre::new(linker.instantiate_pre(&component).map_err(load_error)?).map_err(load_error)?;
        Ok(Sandbox { engine, pre, max_memory_bytes: options.max_memory_bytes })
    }

    /// Spec 000's memory-update step, run inside the component under the session's lock.
    /// Nothing is written unless the update is applied; a trap is [`Error::Trap`].
    pub fn memory_update(&self, session: &Session, llm: Client, task: &str, max_reprompts: u32) -> Result<MemoryUpdateReport> {
        session.with_lock(|| {
            let limits = StoreLimitsBuilder::new().memory_size(self.max_memory_bytes).build();
            let mut store = Store::new(&self.engine, Grants { llm, files: Confined::new(session.dir()), limits });
            store.limiter(|g| &mut g.limits);
            let agent = self.pre.instantiate(&mut store).map_err(load_error)?;
            let report = agent
                .call_memory_update(&mut store, task, max_reprompts)
                .map_err(|e| Error::Trap(format!("{e:#}")))?
                .map_err(Error::Rejected)?;
            session.record_update()?;
            Ok(report)
        })
    }
}
