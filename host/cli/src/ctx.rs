//! What every verb works with: the engine and the sessions.

use anyhow::{Context, Result};
use std::path::Path;
use workmem_runtime::{Options, Runtime};
use workmem_store::{Session, Sessions};

/// The engine, and the sessions of the current directory.
pub struct Ctx {
    pub runtime: Runtime,
    pub sessions: Sessions,
}

impl Ctx {
    /// The engine, and the sessions under `sessions_dir` (else the default root) filed under
    /// the current directory.
    pub fn new(sessions_dir: Option<&Path>) -> Result<Self> {
        let runtime = Runtime::new(&Options::from_env().map_err(anyhow::Error::msg)?)?;
        let cwd = std::env::current_dir().context("reading the current directory")?;
        let root = match sessions_dir {
            Some(d) => d.to_path_buf(),
            None => workmem_store::session::root_dir()?,
        };
        Ok(Ctx { runtime, sessions: Sessions::new(&root, &cwd) })
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
