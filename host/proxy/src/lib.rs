//! `workmem proxy`: workmem in front of an agent that is not changed at all. The agent (Claude
//! Code on Anthropic Messages, Codex CLI on the Responses API, any Chat Completions client) is
//! pointed at the proxy as its API base URL;
//! each request it sends resends its whole history, and the proxy:
//!
//! 1. finds the client's session ([`sessions`]) and appends to `messages.jsonl` only what is new;
//! 2. sends upstream the session's view instead (compactions applied, the safety net run before
//!    every request, the working memory and `context_meta` in it), with workmem's own tools
//!    offered beside the client's ([`exchange`]);
//! 3. runs workmem's tools itself when the model calls them, so the client only ever sees its
//!    own tools, and relays everything else as the upstream sent it, streams chunk by chunk.
//!
//! If anything of workmem's fails, the request goes upstream as the client sent it
//! ([`OnError::Passthrough`]): the proxy never takes the agent down. Routes it does not know
//! pass through unchanged.

mod chat;
mod exchange;
mod history;
mod messages;
mod parts;
mod protocol;
mod relay;
mod responses;
mod sessions;
mod sse;
mod upstream;
mod warm;
mod written;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use exchange::Route;
use protocol::Protocol;
use std::sync::Arc;
use std::time::Duration;
use workmem_runtime::Runtime;
use workmem_store::Sessions;

pub use upstream::shown as shown_url;

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
    /// The model's context window in tokens; the safety net compacts at three quarters of it.
    pub window: u32,
    /// Compact by the compression guide (spec 003's automatic mode) instead of leaving it to
    /// the model's `compact_history` calls; the safety net runs either way.
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

/// The proxy failed to start.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("loading the proxied sessions")]
    Store(#[from] workmem_store::Error),
    #[error("the upstream URL {:?} is not an http:// or https:// URL", upstream::shown(.0))]
    Upstream(String),
    #[error("starting the engine")]
    Engine(#[from] workmem_runtime::Error),
}

/// What every request shares.
pub(crate) struct App {
    pub runtime: Runtime,
    pub config: Config,
    pub sessions: sessions::Index,
    pub upstream: upstream::Upstream,
    /// The memory a new session starts with (the engine's template).
    pub template: String,
    slots: Arc<tokio::sync::Semaphore>,
    /// Engine instances that ended their exchange, at most one a slot: each request would
    /// otherwise instantiate its own.
    engines: std::sync::Mutex<Vec<workmem_runtime::Instance>>,
    /// The histories of the last requests, which the next ones continue.
    pub recent: history::Recent,
    /// The sessions that keep something in memory between requests.
    pub warm: warm::Warm<sessions::Tracked>,
    /// The requests passed through untouched, by reason, as kept beside the sessions.
    passed: std::sync::Mutex<workmem_store::Passed>,
}

impl App {
    /// An engine instance for one exchange: one an earlier exchange gave back, or a new one.
    pub fn engine(&self) -> workmem_runtime::Result<workmem_runtime::Instance> {
        match lock(&self.engines).pop() {
            Some(engine) => Ok(engine),
            None => self.runtime.instance(),
        }
    }

    /// Counts a request passed through untouched for `reason`, on disk for `workmem view
    /// --proxy` (written while the count is held, so no count is lost to another's write).
    pub fn note_passed(&self, reason: &str, path: &str) {
        let mut passed = lock(&self.passed);
        passed.add(reason, path);
        if let Err(e) = self.config.sessions.write_passed(&passed) {
            eprintln!("workmem proxy: the count of requests passed through was not saved: {}", workmem_runtime::error_chain(&e));
        }
    }

    /// Keeps `engine` for a later exchange (an instance a call trapped in starts afresh on
    /// its next call).
    pub fn give_back(&self, engine: workmem_runtime::Instance) {
        let mut engines = lock(&self.engines);
        if engines.len() < self.config.slots {
            engines.push(engine);
        }
    }
}

/// The proxy's routes: Chat Completions, Anthropic Messages and Responses are proxied through
/// workmem, Anthropic's `count_tokens` counts what workmem would send, everything else (models,
/// embeddings, ...) passes through. The sessions this proxy kept before are loaded here.
pub fn router(runtime: Runtime, config: Config) -> Result<Router, Error> {
    if !(config.upstream.starts_with("http://") || config.upstream.starts_with("https://")) {
        return Err(Error::Upstream(config.upstream));
    }
    let sessions = sessions::Index::load(&config.sessions, config.max_sessions)?;
    let upstream = upstream::Upstream::new(&config.upstream, config.timeout);
    let template = runtime.instance()?.overview_template()?;
    let slots = Arc::new(tokio::sync::Semaphore::new(config.slots.max(1)));
    let warm = warm::Warm::new(config.max_warm_bytes);
    // A count that cannot be read is no reason to stay down: it starts again from nothing.
    let passed = std::sync::Mutex::new(config.sessions.passed().unwrap_or_else(|e| {
        eprintln!("workmem proxy: the count of requests passed through starts again: {}", workmem_runtime::error_chain(&e));
        Default::default()
    }));
    let app = Arc::new(App {
        runtime,
        config,
        sessions,
        upstream,
        template,
        slots,
        engines: std::sync::Mutex::default(),
        recent: history::Recent::default(),
        warm,
        passed,
    });
    Ok(Router::new()
        .route("/v1/chat/completions", proxied(Route::Proxied(Protocol::Chat)))
        .route("/chat/completions", proxied(Route::Proxied(Protocol::Chat)))
        .route("/v1/messages", proxied(Route::Proxied(Protocol::Messages)))
        .route("/v1/messages/count_tokens", proxied(Route::Counted(Protocol::Messages)))
        .route("/v1/responses", proxied(Route::Proxied(Protocol::Responses)))
        .fallback(|s, r| handle(s, r, Route::Passthrough))
        .with_state(app))
}

/// A route of workmem's: POST handled, any other method refused with 405 in the protocol's
/// own error shape (as the provider refuses it), naming the method it takes.
fn proxied(route: Route) -> axum::routing::MethodRouter<Arc<App>> {
    axum::routing::post(move |s, r| handle(s, r, route)).fallback(move |request: Request| async move {
        let message = format!("{} is not allowed here: this route takes POST", request.method());
        let mut refused = relay::error(405, route.shape().error_body(405, "method_not_allowed", &message));
        refused.headers_mut().insert("allow", axum::http::HeaderValue::from_static("POST"));
        refused
    })
}

async fn handle(State(app): State<Arc<App>>, request: Request, route: Route) -> Response {
    let (parts, body) = request.into_parts();
    let shape = route.shape();
    // The slot first, then the body: bodies in memory, waiting or in flight, are at most
    // --slots × --max-body-bytes, however many connections queue (threat model rule 11).
    let Ok(Ok(slot)) = tokio::time::timeout(app.config.slot_wait, app.slots.clone().acquire_owned()).await else {
        let message = format!("all {} of the proxy's slots stayed busy for {:?} (--slots, --slot-wait)", app.config.slots, app.config.slot_wait);
        let mut refused = relay::error(503, shape.error_body(503, "busy", &message));
        refused.headers_mut().insert("retry-after", axum::http::HeaderValue::from_static("1"));
        return refused;
    };
    let body = match axum::body::to_bytes(body, app.config.max_body_bytes).await {
        Ok(b) => b,
        Err(e) => {
            if let Some(timeout) = workmem_listen::BodyTimeout::behind(&e) {
                return relay::error(408, shape.error_body(408, "request_timeout", &timeout.to_string()));
            }
            let message = format!("the request body passed {} bytes, the most the proxy reads (--max-body-bytes)", app.config.max_body_bytes);
            return relay::error(413, shape.error_body(413, "request_too_large", &message));
        }
    };
    let (sink, response) = relay::channel();
    // The slot is held until the exchange ends: a stream's last byte, not its first.
    tokio::task::spawn_blocking(move || {
        exchange::run(&app, route, parts, body, sink);
        drop(slot);
    });
    match response.await {
        Ok(r) => r,
        Err(_) => relay::error(502, shape.error_body(502, "workmem_failed", "the proxy's exchange ended without an answer")),
    }
}

/// A response of `status` with a JSON body, for the few the proxy writes itself.
pub(crate) fn json_response(status: u16, body: &serde_json::Value) -> Response {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .expect("a status and a content type make a response")
}

/// A lock whose holder panicked still guards consistent data here (every change is a push).
pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
