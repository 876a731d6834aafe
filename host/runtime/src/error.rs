use std::time::Duration;

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What can go wrong running the engine. None of these leaves anything half-written: the
/// engine has no I/O, and a host that persists its results does so only after a call succeeds.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The component could not be compiled, loaded or instantiated.
    #[error("could not load the engine component")]
    Load(#[source] wasmtime::Error),
    /// The guest trapped: an engine bug or the memory limit (`Options::max_memory_bytes`).
    #[error("the engine component trapped (an engine bug, or the memory limit `max_memory_bytes`)")]
    Trap(#[source] wasmtime::Error),
    /// A [`crate::Memory`] whose instance trapped earlier: its contents are gone with it.
    #[error("this memory's engine instance trapped earlier, so the memory is gone; load it again from its store")]
    Lost,
    /// The guest ran past its CPU deadline.
    #[error("the engine call ran past its CPU deadline of {limit:?} (the runtime's `call_deadline` setting)")]
    Deadline { limit: Duration },
}
