//! What every verb works with: the engine and the sessions.

use anyhow::{Context, Result};
use std::path::Path;
use workmem_runtime::{Options, Runtime};
use workmem_store::{Session, Sessions};

/// Names the PostgreSQL database sessions are kept in where `--sessions-db` is not given.
const SESSIONS_DB_ENV: &str = "WORKMEM_SESSIONS_DB";

/// The engine, and the sessions of the current directory.
pub struct Ctx {
    pub runtime: Runtime,
    pub sessions: Sessions,
}

impl Ctx {
    /// The engine, and the sessions filed under the current directory: in the PostgreSQL
    /// database `sessions_db` (else `$WORKMEM_SESSIONS_DB`) where one is named, else under
    /// `sessions_dir` (else the default root).
    pub fn new(sessions_dir: Option<&Path>, sessions_db: Option<&str>) -> Result<Self> {
        let runtime = Runtime::new(&Options::from_env().map_err(anyhow::Error::msg)?)?;
        let cwd = std::env::current_dir().context("reading the current directory")?;
        let from_env = std::env::var(SESSIONS_DB_ENV).ok().filter(|v| !v.is_empty() && sessions_dir.is_none());
        let sessions = match sessions_db.map(str::to_string).or(from_env) {
            Some(url) => Sessions::postgres(&url, &cwd).with_context(|| format!("opening the sessions' database (--sessions-db, ${SESSIONS_DB_ENV})"))?,
            None => {
                let root = match sessions_dir {
                    Some(d) => d.to_path_buf(),
                    None => workmem_store::session::root_dir()?,
                };
                Sessions::new(&root, &cwd)
            }
        };
        Ok(Ctx { runtime, sessions })
    }

    pub fn session(&self, spec: &str) -> Result<Session> {
        Ok(self.sessions.resolve(spec)?)
    }

    /// A session's memory, loaded into the engine (under its lock, briefly).
    pub fn memory(&self, session: &Session) -> Result<workmem_runtime::Memory> {
        let locked = session.lock()?;
        Ok(workmem_commit::load(&self.runtime, session, &locked)?)
    }
}
