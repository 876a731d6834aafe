//! Spec 000's memory-update step, run inside the agent world: the model is the configured
//! client, the store the session through [`workmem_commit`]'s commit path, the clock the wall
//! clock. Nothing else is reachable from inside.

use crate::error::{Error, Result};
use std::sync::{Arc, Mutex};
use workmem_llm::{Client, LlmError, Message};
use workmem_runtime::error_chain;
use workmem_runtime::{Capabilities, Runtime, UpdateError, UpdateReport, llm, session_store};
use workmem_store::{Locked, Session};

/// How many times a malformed answer is sent back for correction (spec: bounded, default 2).
pub const DEFAULT_REPROMPTS: u32 = 2;

/// What one run inside the sandbox may reach: the model, and this one session, locked.
struct Grants {
    llm: Client,
    session: Session,
    locked: Locked,
    /// The last model call's failure as the client had it (status, provider code, URL): the
    /// engine gets a sentence, the host's caller the whole error.
    failed: Arc<Mutex<Option<LlmError>>>,
}

/// The `llm` capability over the configured client, failing with the client's own error.
pub(crate) fn complete(client: &Client, messages: Vec<llm::Message>) -> std::result::Result<llm::Completion, LlmError> {
    let messages: Vec<Message> = messages.into_iter().map(|m| Message::new(&m.role, m.content)).collect();
    let usage = |u: workmem_llm::Usage| llm::Usage { prompt_tokens: u.prompt_tokens, completion_tokens: u.completion_tokens };
    client.complete(&messages).map(|c| llm::Completion { text: c.text, usage: c.usage.map(usage) })
}

/// A failed call as the engine is told it. The engine puts its own words before what it gets
/// (`the provider answered HTTP 401: ...`), so it gets the provider's alone.
pub(crate) fn told(e: &LlmError) -> llm::LlmError {
    match e {
        LlmError::Timeout(_) => llm::LlmError::Timeout(e.to_string()),
        LlmError::Provider(r) => {
            let said = match &r.code {
                Some(code) => format!("{} ({code}, {})", r.message, r.url),
                None => format!("{} ({})", r.message, r.url),
            };
            if r.rate_limited() { llm::LlmError::RateLimited(said) } else { llm::LlmError::HttpStatus((r.status, said)) }
        }
        LlmError::TooLarge { .. } | LlmError::Other(_) => llm::LlmError::Other(e.to_string()),
    }
}

impl Capabilities for Grants {
    fn complete(&mut self, messages: Vec<llm::Message>) -> std::result::Result<llm::Completion, llm::LlmError> {
        complete(&self.llm, messages).map_err(|e| {
            let engine_told = told(&e);
            *self.failed.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(e);
            engine_told
        })
    }

    fn load_memory(&mut self) -> std::result::Result<Option<String>, session_store::StoreError> {
        self.session.load_memory(&self.locked).map_err(|e| session_store::StoreError::Other(error_chain(&e)))
    }

    fn commit_update(&mut self, c: session_store::Commit) -> std::result::Result<(), session_store::StoreError> {
        let commit = workmem_store::Commit { seq: c.seq, log_entry: c.log_entry, state: c.state, overview: c.overview, request: None };
        workmem_commit::commit(&self.session, &self.locked, &commit).map_err(|e| session_store::StoreError::Other(error_chain(&e)))
    }

    fn now(&mut self) -> String {
        workmem_runtime::now()
    }
}

/// Spec 000's memory-update step for `task`, run inside the component under the session's
/// lock. Nothing is written unless the update is applied; a trap writes nothing either.
pub fn memory_update(runtime: &Runtime, session: &Session, llm: Client, task: &str, max_reprompts: u32) -> Result<UpdateReport> {
    let locked = session.lock()?;
    let failed = Arc::new(Mutex::new(None));
    let mut agent = runtime.agent(Box::new(Grants { llm, session: session.clone(), locked, failed: failed.clone() }))?;
    match agent.memory_update(task, max_reprompts)? {
        Ok(report) => Ok(report),
        // The model call's own error, whole, rather than the engine's sentence about it.
        Err(UpdateError::Model(_)) if let Some(e) = failed.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take() => Err(Error::UpdateModel(e)),
        Err(e) => Err(Error::Update(e)),
    }
}
