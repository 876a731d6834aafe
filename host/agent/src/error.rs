pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Engine(#[from] workmem_runtime::Error),
    #[error(transparent)]
    Store(#[from] workmem_store::Error),
    #[error("the LLM call failed, so nothing was applied")]
    Llm(#[from] workmem_llm::LlmError),
    #[error("{0:?} is not a token threshold: write a count (64000) or a percentage (50%)")]
    Threshold(String),
    #[error("the agent stopped after {max_steps} LLM calls without an answer (the `max_steps` setting)")]
    OutOfSteps { max_steps: u32 },
    /// The memory-update workflow ended without applying anything; the text says why.
    #[error("{0}")]
    UpdateFailed(String),
}
