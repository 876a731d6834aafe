//! What `workmem proxy` is given.

use std::time::Duration;
use workmem_store::Sessions;

/// What the proxy does when workmem itself fails on a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnError {
    /// Send the request upstream as the client sent it, and log why.
    Passthrough,
    /// Answer with the protocol's own error shape (HTTP 502).
    Fail,
}

/// What `workmem proxy` is given.
#[derive(Debug, Clone)]
pub struct Config {
    /// The provider's base URL: each request's path goes after it (`https://api.openai.com`,
    /// `https://api.anthropic.com`; a trailing `/v1` is not doubled).
    pub upstream: String,
    /// Where the proxied sessions live (the sessions of the proxy's working directory).
    pub sessions: Sessions,
    /// The model's context window in tokens; the fallback compacts at three quarters of it.
    pub window: u32,
    /// Compact by the compression guide (spec 003's automatic mode) instead of leaving it to
    /// the model's `compact_history` calls; the fallback runs either way.
    pub auto_compact: bool,
    pub on_error: OnError,
    /// The largest request body read from a client, in bytes (`--max-body-bytes`).
    pub max_body_bytes: usize,
    /// The largest upstream answer, whole or streamed, in bytes (`--max-answer-bytes`).
    pub max_answer_bytes: usize,
    /// Upstream requests one client request may take when the model calls only workmem's
    /// tools (`--max-rounds`); past it the client gets the answer as it stands.
    pub max_rounds: u32,
    /// Deadline for one upstream request, from sending it to the last byte.
    pub timeout: Duration,
    /// Client requests handled at once (`--slots`): each holds a thread, an engine instance and,
    /// while it streams, an upstream connection.
    pub slots: usize,
    /// How long a request waits for a slot before it is refused with 503 (`--slot-wait`).
    pub slot_wait: Duration,
    /// How long a request waits for another request of its conversation to end (on this
    /// replica, or on any replica of a shared store) before it is refused with 409
    /// (`--busy-wait`).
    pub busy_wait: Duration,
    /// What the sessions keep in memory between requests, in all, in bytes
    /// (`--max-warm-bytes`; see `warm`).
    pub max_warm_bytes: usize,
    /// The most sessions kept in memory, read from disk at their caller's first request or made
    /// since (`--max-sessions`): past
    /// it the least recently used is let go of (its files stay).
    pub max_sessions: usize,
}

/// `--max-sessions`' default: [`Config::max_sessions`].
pub const MAX_SESSIONS: usize = 4096;

/// `--max-warm-bytes`'s default: [`Config::max_warm_bytes`].
pub const MAX_WARM_BYTES: usize = 256 << 20;
