//! The one commit path: a memory is loaded from the session's store into the engine, an
//! update is applied there, and the outcome is committed through [`Session::commit`]. The
//! CLI's `apply`, the `update_memory` tool and the agent world's `commit-update` all end here.

use crate::error::{Error, Result};
use workmem_runtime::{Applied, Memory, Runtime, Wants};
use workmem_store::{Commit, Locked, Session};

/// What a commit needs from an applied update.
pub const COMMIT: Wants = Wants { overview: true, state: true };

/// The session's memory, loaded into an engine instance of its own.
pub fn load(runtime: &Runtime, session: &Session, locked: &Locked) -> Result<Memory> {
    match session.load_memory(locked)? {
        Some(state) => runtime.load_memory(&state)?.map_err(|why| Error::BadState { dir: session.dir().to_path_buf(), why }),
        None => Ok(runtime.new_memory()?),
    }
}

/// Commits an update applied with [`COMMIT`] (counted in meta.json as part of it).
pub fn commit(session: &Session, locked: &Locked, commit: &Commit) -> Result<()> {
    Ok(session.commit(locked, commit)?)
}

/// Applies DSL text to the session's memory under its lock. Invalid DSL is
/// [`Error::InvalidDsl`], a trap an [`Error::Engine`]: both before anything is written.
pub fn apply(runtime: &Runtime, session: &Session, text: &str) -> Result<Applied> {
    let locked = session.lock()?;
    let mut memory = load(runtime, session, &locked)?;
    let applied = memory.apply(text, &workmem_runtime::now(), COMMIT)?.map_err(Error::InvalidDsl)?;
    commit(session, &locked, &to_commit(&applied))?;
    Ok(applied)
}

pub fn to_commit(applied: &Applied) -> Commit {
    Commit {
        seq: applied.seq,
        log_entry: applied.log_entry.clone(),
        state: applied.state.clone().expect("applied with COMMIT, which asks for the state"),
        overview: applied.overview.clone().expect("applied with COMMIT, which asks for the overview"),
    }
}
