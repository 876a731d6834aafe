//! Spec 000's memory-update step, run inside the agent world: the model is the configured
//! client, the store the session directory through [`Confined`] (every path checked), the
//! clock the wall clock. Nothing else is reachable from inside.

use crate::error::{Error, Result};
use workmem_llm::{Client, LlmError, Message};
use workmem_runtime::{Capabilities, MemoryUpdateReport, Runtime, llm, store};
use workmem_store::{Confined, PathError, Session};

/// How many times a malformed answer is sent back for correction (spec: bounded, default 2).
pub const DEFAULT_REPROMPTS: u32 = 2;

/// What one run inside the sandbox may reach.
struct Grants {
    llm: Client,
    files: Confined,
}

fn store_error(e: PathError) -> store::StoreError {
    match e {
        PathError::Io { kind: std::io::ErrorKind::NotFound, .. } => store::StoreError::NotFound,
        PathError::Io { .. } => store::StoreError::Other(e.to_string()),
        refused => store::StoreError::Refused(refused.to_string()),
    }
}

impl Capabilities for Grants {
    fn complete(&mut self, messages: Vec<llm::Message>) -> std::result::Result<llm::Completion, llm::LlmError> {
        let messages: Vec<Message> = messages.into_iter().map(|m| Message::new(&m.role, m.content)).collect();
        let usage = |u: workmem_llm::Usage| llm::Usage { prompt_tokens: u.prompt_tokens, completion_tokens: u.completion_tokens };
        self.llm.complete(&messages).map(|c| llm::Completion { text: c.text, usage: c.usage.map(usage) }).map_err(|e| match e {
            LlmError::Timeout(_) => llm::LlmError::Timeout,
            LlmError::RateLimited { .. } => llm::LlmError::RateLimited,
            LlmError::Http { status, .. } => llm::LlmError::HttpStatus(status),
            LlmError::Other(message) => llm::LlmError::Other(message),
        })
    }
    fn read(&mut self, path: &str) -> std::result::Result<String, store::StoreError> {
        self.files.read(path).map_err(store_error)
    }
    fn write(&mut self, path: &str, content: &str) -> std::result::Result<(), store::StoreError> {
        self.files.write(path, content).map_err(store_error)
    }
    fn append(&mut self, path: &str, content: &str) -> std::result::Result<(), store::StoreError> {
        self.files.append(path, content).map_err(store_error)
    }
    fn list_files(&mut self, path: &str) -> std::result::Result<Vec<String>, store::StoreError> {
        self.files.list(path).map_err(store_error)
    }
    fn now(&mut self) -> String {
        workmem_runtime::now()
    }
}

/// Spec 000's memory-update step for `task`, run inside the component under the session's
/// lock. Nothing is written unless the update is applied; a trap writes nothing either.
pub fn memory_update(runtime: &Runtime, session: &Session, llm: Client, task: &str, max_reprompts: u32) -> Result<MemoryUpdateReport> {
    session.with_lock(|| {
        let mut agent = runtime.agent(Box::new(Grants { llm, files: Confined::new(session.dir()) }))?;
        let outcome = agent.memory_update(task, max_reprompts).map_err(workmem_store::Error::from)?;
        let report = outcome.map_err(Error::UpdateFailed);
        if report.is_ok() {
            session.record_update()?;
        }
        Ok(report)
    })?
}
