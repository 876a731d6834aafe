//! Where sessions and boards live: the session directory of spec 001 (memory state, logs,
//! the LLM's memory files), written so that readers never see half a file, and the
//! confinement every path an LLM names goes through; and spec 002's shared boards in SQLite
//! or PostgreSQL ([`board`]).

#[cfg(feature = "db")]
pub mod board;
pub mod confine;
#[cfg(feature = "db")]
pub mod db;
#[cfg(feature = "db")]
pub mod documents;
mod error;
pub mod fsio;
mod holder;
pub mod ids;
pub mod messages;
mod passed;
pub mod session;
mod session_name;

pub use confine::{Confined, MEMORY_DIR, MemoryFileStore, MemoryFiles, PathError};
pub use error::{Error, Result};
pub use holder::claim_from_spares;
pub use messages::{Compaction, Entry, LogRecord, Message, Replacement, ToolCall, Usage, View, Withdrawal};
pub use passed::{LastPassed, Passed};
#[cfg(feature = "db")]
pub use session::PgSessions;
pub use session::{
    Commit, Durability, KeyedUpdate, Locked, MemoryChain, MemoryCommit, Meta, Proxied, ProxyState, Session, SessionDir, SessionDirs, SessionGrants, SessionLog,
    SessionStore, Sessions, StoredSession,
};
pub use session_name::GrantName;

/// The current time as RFC 3339 UTC, second precision.
pub fn now() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}
