//! What `workmem serve` is given, and what every handler shares.

use crate::error::ApiError;
use crate::{changes, slots};
use std::sync::Arc;
use workmem_runtime::Runtime;
use workmem_store::documents::Config as DocumentConfig;

/// What `workmem serve` is given.
#[derive(Debug, Clone)]
pub struct Config {
    /// The database: a SQLite file or a postgres:// URL.
    pub db: String,
    /// Where sessions live: a session grant's name is opened there, whatever directory the
    /// server runs in.
    pub sessions: workmem_store::Sessions,
    /// Requests served at once; each holds a database connection per store and an engine
    /// instance while it runs.
    pub slots: usize,
    /// The largest request body read, in bytes (`--max-body-bytes`).
    pub max_body_bytes: usize,
    /// How context documents are kept (their size cap and retention).
    pub documents: DocumentConfig,
}

/// What every handler shares.
pub(crate) struct App {
    pub slots: Arc<slots::Slots>,
    /// The change feed's wake-ups, per board (see `changes`).
    pub changes: Arc<changes::Changes>,
    pub max_body_bytes: usize,
}

impl App {
    /// Opens the database (migrating it) and the slots over it.
    pub fn new(runtime: Runtime, config: &Config) -> Result<Self, ApiError> {
        let slots = slots::Slots::new(&config.db, runtime.clone(), config.documents.clone(), config.sessions.clone(), config.slots)?;
        let changes = changes::Changes::watch(&config.db, runtime)?;
        Ok(App { slots: Arc::new(slots), changes, max_body_bytes: config.max_body_bytes })
    }
}

pub(crate) type State = axum::extract::State<Arc<App>>;
