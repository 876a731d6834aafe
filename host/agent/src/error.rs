use workmem_runtime::{InvalidAnswers, Severity, UpdateError};

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Engine(#[from] workmem_runtime::Error),
    #[error(transparent)]
    Store(#[from] workmem_store::Error),
    #[error(transparent)]
    Board(#[from] workmem_store::board::Error),
    #[error("the LLM call failed")]
    Llm(#[from] workmem_llm::LlmError),
    /// The memory update's model call failed (the client's error, whole); nothing was applied.
    #[error("the LLM call failed, so nothing was applied")]
    UpdateModel(#[source] workmem_llm::LlmError),
    /// The commit path refused or failed: invalid DSL, a memory that does not load, ...
    /// (boxed: it holds a database's error, and every result of this crate carries the size)
    #[error(transparent)]
    Memory(Box<workmem_commit::Error>),
    /// The memory-update workflow applied nothing.
    #[error("{}", update_error(.0))]
    Update(UpdateError),
    #[error("{0:?} is not a token threshold: write a count (64000) or a percentage (50%)")]
    Threshold(String),
    /// A compaction was refused or could not run; nothing was appended.
    #[error("{0}")]
    Compact(String),
    #[error("${name} is {value:?}: it takes a number of bytes")]
    Setting { name: &'static str, value: String },
    /// `workmem-replay --requests` could not write a request.
    #[error("a replayed request could not be written")]
    Requests(#[source] std::io::Error),
    #[error("the agent stopped after {max_steps} LLM calls without an answer (the `max_steps` setting)")]
    OutOfSteps { max_steps: u32 },
    /// The request is over the model's window with everything that can be compacted
    /// compacted: it is not sent (the provider would refuse it, or cut it where it chose).
    #[error(
        "the request needs {tokens} tokens, over the model's {window}-token window, with all that can be compacted compacted: \
         what is left is the system prompt, the task, workmem's own part, the outputs of tools never compacted and the ends of \
         what the model has not seen yet. Shorten the task or the system prompt, or use a model with a larger window"
    )]
    OverWindow { tokens: u32, window: u32 },
}

impl From<workmem_commit::Error> for Error {
    fn from(e: workmem_commit::Error) -> Self {
        Error::Memory(Box::new(e))
    }
}

fn update_error(e: &UpdateError) -> String {
    match e {
        UpdateError::Model(why) => format!("the LLM call failed, so nothing was applied: {why}"),
        UpdateError::Invalid(InvalidAnswers { attempts, diagnostics }) => {
            let mut text = format!("the LLM's answer was still invalid after {attempts} attempts; nothing was applied:");
            for d in diagnostics.iter().filter(|d| d.severity == Severity::Error) {
                text.push_str(&format!("\n- line {}, column {}: {}", d.line, d.column, d.message));
            }
            text
        }
        UpdateError::Store(why) => format!("the session store failed, so nothing was applied: {why}"),
    }
}
