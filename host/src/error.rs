use crate::engine::Diagnostic;
use std::path::PathBuf;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The guest trapped: an engine bug or a resource limit. Nothing was written.
    #[error("the engine component trapped, so nothing was written: {0}")]
    Trap(String),
    #[error("could not load the engine component: {0}")]
    Load(String),
    /// The guest's `merge` returned `err`.
    #[error("{0}")]
    Rejected(String),
    /// The DSL has errors; nothing was applied.
    #[error("the update has {} error(s); nothing was applied", .0.iter().filter(|d| d.severity == "error").count())]
    InvalidDsl(Vec<Diagnostic>),
    /// The LLM's answers stayed malformed through every re-prompt; nothing was applied.
    #[error("the LLM's answer was still invalid after {attempts} attempts; nothing was applied")]
    GaveUp { attempts: u32, diagnostics: Vec<Diagnostic> },
    #[error("the LLM call failed, so nothing was applied: {0}")]
    Llm(#[from] crate::llm::LlmError),
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{}: {message}", path.display())]
    Corrupt { path: PathBuf, message: String },
    #[error("{0}")]
    Session(String),
    /// A path the LLM named that the host refused, or could not use.
    #[error(transparent)]
    Path(#[from] crate::store::PathError),
}

impl Error {
    pub fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Error {
        let path = path.into();
        move |source| Error::Io { path, source }
    }
}
