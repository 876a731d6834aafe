//! The workmem engine component in wasmtime: what an embedder depends on, and nothing else.
//!
//! One [`Runtime`] per process: it loads each world once, compiled when this crate was built
//! (no compiler runs in the process), is cheap to clone and can be shared across threads. An
//! [`Instance`] is one live engine, made in microseconds from an `InstancePre`. Every call into
//! the guest runs under a memory limit and a CPU deadline; a guest that traps or runs past its
//! deadline is reported as an [`Error`], and the next call starts from a fresh instance.
//!
//! A [`Memory`] lives inside its own instance: it is loaded once, and an update carries the
//! DSL in and the outcome out, never the whole memory both ways.
//!
//! ```no_run
//! use workmem_runtime::{Options, Runtime, Wants};
//! let runtime = Runtime::new(&Options::default())?;
//! let mut memory = runtime.new_memory()?;
//! let text = "CURRENT_PROGRESS:\n  In Progress:\n    - Reading the code\n";
//! let applied = memory.apply(text, &workmem_runtime::now(), Wants { overview: true, state: true })?;
//! assert!(applied.is_ok());
//! # Ok::<(), workmem_runtime::Error>(())
//! ```

#[cfg(feature = "agent")]
mod agent;
mod bindings;
pub mod board;
#[cfg(feature = "compiler")]
mod cache;
#[cfg(feature = "agent")]
mod capabilities;
pub mod document;
mod embedded;
mod engine_config;
mod error;
mod instance;
mod memory;
pub mod names;
mod options;
mod precompiled;
mod runtime;
mod sandbox;

#[cfg(feature = "agent")]
pub use agent::AgentInstance;
/// Compaction's types (the `history` interface).
pub use bindings::exports::workmem::memory::call::{CompactionMark, DecideRequest, Decision, Reminders, Standing, ToolsCompaction, UpdateSummary};
pub use bindings::exports::workmem::memory::context::{ChatMessage, ContextRequest, ContextStats, Frame, FrameRequest, HistoryMode, ToolCall};
pub use bindings::exports::workmem::memory::history;
pub use bindings::exports::workmem::memory::memory::{
    Applied, Archival, ArchiveOp, Diagnostic, Learning, LearningAdd, LearningOps, Message, ParseOutcome, Progress, Severity, Snapshot, Update, UpdateStep,
    VerbatimAdd, VerbatimEntry, VerbatimOps, Wants,
};
#[cfg(feature = "agent")]
pub use bindings::exports::workmem::memory::workflows::{CompactFailure, InvalidAnswers, UpdateError, UpdateReport};
#[cfg(feature = "agent")]
pub use capabilities::{Capabilities, clock, llm, session_store};
pub use embedded::Embedded;
pub use error::{Error, Result, error_chain};
pub use instance::Instance;
pub use memory::{Memory, UpdateRun};
pub use sandbox::cancellable;

pub use options::{DEADLINE_ENV, MAX_MEMORY_ENV, Options, default_cache_dir};
pub use runtime::Runtime;

/// The engine component this runtime was built with.
pub static COMPONENT: Embedded = Embedded::new(include_bytes!(concat!(env!("OUT_DIR"), "/workmem-engine.wasm.deflate")));
/// The agent world's component: the engine plus the `llm`, `store` and `clock` imports.
#[cfg(feature = "agent")]
pub static AGENT_COMPONENT: Embedded = Embedded::new(include_bytes!(concat!(env!("OUT_DIR"), "/workmem-agent.wasm.deflate")));
/// The two worlds wasmtime runs here, compiled by the build script (`precompiled`).
static ENGINE_ARTIFACT: precompiled::Precompiled = precompiled::Precompiled::new(include_bytes!(concat!(env!("OUT_DIR"), "/workmem-engine.cwasm.lz4")));
#[cfg(feature = "agent")]
static AGENT_ARTIFACT: precompiled::Precompiled = precompiled::Precompiled::new(include_bytes!(concat!(env!("OUT_DIR"), "/workmem-agent.cwasm.lz4")));
/// The `engine-go` world's core module, with the WIT in a custom section (what Gravity reads).
#[cfg(feature = "go-core")]
pub static GO_CORE_MODULE: Embedded = Embedded::new(include_bytes!(concat!(env!("OUT_DIR"), "/workmem-engine-go-core.wasm.deflate")));

/// The current time as RFC 3339 UTC, second precision: what the engine stores as timestamps.
pub fn now() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}
