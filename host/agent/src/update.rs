//! Spec 000's memory-update step, run inside the agent world: the model is the configured
//! client, the store the session through [`workmem_memory`]'s commit path, the clock the wall
//! clock. Nothing else is reachable from inside.

use crate::error::{Error, Result};
use workmem_llm::{Client, LlmError, Message};
use workmem_runtime::error_chain;
use workmem_runtime::{Capabilities, Runtime, UpdateReport, llm, session_store};
use workmem_store::{Locked, Session};

/// How many times a malformed answer is sent back for correction (spec: bounded, default 2).
pub const DEFAULT_REPROMPTS: u32 = 2;

/// What one run inside the sandbox may reach: the model, and this one session, locked.
struct Grants {
    llm: Client,
    session: Session,
    locked: Locked,
}

/// The `llm` capability over the configured client.
pub(crate) fn complete(client: &Client, messages: Vec<llm::Message>) -> std::result::Result<llm::Completion, llm::LlmError> {
    let messages: Vec<Message> = messages.into_iter().map(|m| Message::new(&m.role, m.content)).collect();
    let usage = |u: workmem_llm::Usage| llm::Usage { prompt_tokens: u.prompt_tokens, completion_tokens: u.completion_tokens };
    client.complete(&messages).map(|c| llm::Completion { text: c.text, usage: c.usage.map(usage) }).map_err(|e| {
        let message = e.to_string();
        match e {
            LlmError::Timeout(_) => llm::LlmError::Timeout(message),
            LlmError::RateLimited { .. } => llm::LlmError::RateLimited(message),
            LlmError::Http { status, .. } => llm::LlmError::HttpStatus((status, message)),
            LlmError::TooLarge { .. } | LlmError::Other(_) => llm::LlmError::Other(message),
        }
    })
}

impl Capabilities for Grants {
    fn complete(&mut self, messages: Vec<llm::Message>) -> std::result::Result<llm::Completion, llm::LlmError> {
        complete(&self.llm, messages)
    }

    fn load_memory(&mut self) -> std::result::Result<Option<String>, session_store::StoreError> {
        self.session.load_memory(&self.locked).map_err(|e| session_store::StoreError::Other(error_chain(&e)))
    }

    fn commit_update(&mut self, c: session_store::Commit) -> std::result::Result<(), session_store::StoreError> {
        let commit = workmem_store::Commit { seq: c.seq, log_entry: c.log_entry, state: c.state, overview: c.overview, request: None };
        workmem_memory::commit(&self.session, &self.locked, &commit).map_err(|e| session_store::StoreError::Other(error_chain(&e)))
    }

    fn now(&mut self) -> String {
        workmem_runtime::now()
    }
}

/// Spec 000's memory-update step for `task`, run inside the component under the session's
/// lock. Nothing is written unless the update is applied; a trap writes nothing either.
pub fn memory_update(runtime: &Runtime, session: &Session, llm: Client, task: &str, max_reprompts: u32) -> Result<UpdateReport> {
    let locked = session.lock()?;
    let mut agent = runtime.agent(Box::new(Grants { llm, session: session.clone(), locked }))?;
    agent.memory_update(task, max_reprompts)?.map_err(Error::Update)
}
