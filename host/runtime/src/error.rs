use std::time::Duration;

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What can go wrong running the engine. None of these leaves anything half-written: the
/// engine has no I/O, and a host that persists its results does so only after a call succeeds.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The component could not be compiled, loaded or instantiated.
    #[error("could not load the engine component")]
    Load(#[source] wasmtime::Error),
    /// The guest trapped for a reason other than a limit: an engine bug.
    #[error("the engine stopped on an internal error (a bug in workmem; please report it with the input that caused it)")]
    Trap(#[source] wasmtime::Error),
    /// The guest needed more memory than [`crate::Options::max_memory_bytes`].
    #[error("the engine needed more than its {limit} bytes of memory (the runtime's `max_memory_bytes`; ${} raises it for the CLI)", crate::MAX_MEMORY_ENV)]
    MemoryLimit { limit: usize, source: wasmtime::Error },
    /// Growing the guest's memory failed though the limit allowed it: past what a 32-bit
    /// memory can address (4 GiB), or the host had no memory to give.
    #[error(
        "the engine needed more memory than it could get ({why}); a 32-bit engine holds at most 4 GiB, and its limit is {limit} bytes (${})",
        crate::MAX_MEMORY_ENV
    )]
    OutOfMemory { why: String, limit: usize, source: wasmtime::Error },
    /// A [`crate::Memory`] whose instance trapped earlier: its contents are gone with it.
    #[error("this memory's engine instance trapped earlier, so the memory is gone; load it again from its store")]
    Lost,
    /// The call was stopped because its result was no longer wanted (`cancellable`).
    #[error("the engine call was stopped: its result was no longer wanted")]
    Cancelled,
    /// The guest ran past its CPU deadline.
    #[error("the engine call ran past its CPU deadline of {limit:?} (the runtime's `call_deadline`; ${} raises it for the CLI)", crate::DEADLINE_ENV)]
    Deadline { limit: Duration },
}

/// An error and its sources as one line (`a: b: c`): what a tool result or an API error
/// carries, where there is no terminal to print the chain to.
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(&format!(": {s}"));
        source = s.source();
    }
    text
}
