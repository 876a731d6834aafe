//! What every request of a proxy shares: its configuration, sessions, upstream, engine
//! instances and slots.

use crate::config::Config;
use crate::locks::lock;
use crate::{history, sessions, upstream, warm};
use std::sync::Arc;
use workmem_runtime::Runtime;

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
    /// workmem's own tools as each protocol offers them, by its name ([`App::own_offered`]).
    offered: std::sync::Mutex<std::collections::HashMap<&'static str, Arc<[serde_json::Value]>>>,
}

impl App {
    /// The proxy's shared state, the sessions it kept before loaded.
    pub fn new(runtime: Runtime, config: Config) -> Result<Self, Error> {
        if !(config.upstream.starts_with("http://") || config.upstream.starts_with("https://")) {
            return Err(Error::Upstream(config.upstream));
        }
        let sessions = sessions::Index::load(&config.sessions, config.max_sessions)?;
        let upstream = upstream::Upstream::new(&config.upstream, config.timeout);
        let template = runtime.instance()?.overview_template()?;
        let slots = Arc::new(tokio::sync::Semaphore::new(config.slots.max(1)));
        let warm = warm::Warm::new(config.max_warm_bytes);
        // A count that cannot be read is no reason to stay down: it starts again from nothing.
        let passed = std::sync::Mutex::new(config.sessions.proxy_state().and_then(|p| p.passed()).unwrap_or_else(|e| {
            eprintln!("workmem proxy: the count of requests passed through starts again: {}", workmem_runtime::error_chain(&e));
            Default::default()
        }));
        Ok(App {
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
            offered: Default::default(),
        })
    }

    /// A slot for one request, waited for at most `--slot-wait`; held until dropped.
    pub async fn slot(&self) -> Option<tokio::sync::OwnedSemaphorePermit> {
        tokio::time::timeout(self.config.slot_wait, self.slots.clone().acquire_owned()).await.ok()?.ok()
    }

    /// An engine instance for one exchange: one an earlier exchange gave back, or a new one.
    pub fn engine(&self) -> workmem_runtime::Result<workmem_runtime::Instance> {
        match lock(&self.engines).pop() {
            Some(engine) => Ok(engine),
            None => self.runtime.instance(),
        }
    }

    /// Counts a request passed through untouched for `reason`, on disk for `workmem view
    /// --proxy` (written while the count is held, so no count is lost to another's write).
    /// workmem's own tools as `protocol` offers them, written once: every request offers them
    /// beside the client's, and writing them (their schemas parsed) was a tenth of the proxy's
    /// instructions on a 1,000-message request.
    pub fn own_offered(&self, protocol: &dyn crate::protocol::Protocol) -> Arc<[serde_json::Value]> {
        let own = || workmem_agent::tools::own(self.config.auto_compact).map(|t| protocol.offer(t)).collect();
        lock(&self.offered).entry(protocol.name()).or_insert_with(own).clone()
    }

    pub fn note_passed(&self, reason: &str, path: &str) {
        let mut passed = lock(&self.passed);
        passed.add(reason, path);
        if let Err(e) = self.config.sessions.proxy_state().and_then(|p| p.write_passed(&passed)) {
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
