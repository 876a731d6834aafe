//! What the agent world imports: the capabilities a host grants it (the model, the session's
//! storage, the clock). The sandbox holds them; `agent` runs the world with them.

pub use crate::bindings::workmem::memory::{clock, llm, session_store};

/// Everything the agent world can reach: the model, the session's storage, the time. The
/// host decides what each one really is; the guest has no other way out.
pub trait Capabilities: Send {
    fn complete(&mut self, messages: Vec<llm::Message>) -> std::result::Result<llm::Completion, llm::LlmError>;
    fn load_memory(&mut self) -> std::result::Result<Option<String>, session_store::StoreError>;
    fn commit_update(&mut self, commit: session_store::Commit) -> std::result::Result<(), session_store::StoreError>;
    fn now(&mut self) -> String;
}
