//! A session's working memory through the engine, and nothing else (no model, no tokenizer):
//! the one commit path (a memory is loaded from the session's store into the engine, an update
//! is applied there, and the outcome is committed through [`Session::commit`]; the CLI's
//! `apply`, the `update_memory` tool, the agent world's `commit-update` and the HTTP API's
//! updates all end here), and the JSON shapes of what it did ([`json`]).

pub mod json;

use std::path::PathBuf;
use workmem_runtime::{Applied, Diagnostic, Memory, Runtime, Severity, Wants};
use workmem_store::{Commit, Locked, Session};

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why an update was not committed; nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Engine(#[from] workmem_runtime::Error),
    #[error(transparent)]
    Store(#[from] workmem_store::Error),
    /// The database's refusal or failure (an idempotency key reused for another request, a
    /// board that is not there, ...).
    #[error(transparent)]
    Db(#[from] workmem_store::db::Error),
    /// The DSL has errors; nothing was applied.
    #[error("the update has {} error(s); nothing was applied", errors(.0))]
    InvalidDsl(Vec<Diagnostic>),
    #[error("the memory in {} could not be loaded: {why}", dir.display())]
    BadState { dir: PathBuf, why: String },
}

fn errors(ds: &[Diagnostic]) -> usize {
    ds.iter().filter(|d| d.severity == Severity::Error).count()
}

/// What a commit needs from an applied update.
pub const COMMIT: Wants = Wants { overview: true, state: true };

/// The session's memory, loaded into an engine instance of its own.
pub fn load(runtime: &Runtime, session: &Session, locked: &Locked) -> Result<Memory> {
    from_saved(runtime, session, session.load_memory(locked)?)
}

/// The memory `state` holds: `session`'s `state.json` as read, `None` before its first update.
pub fn from_saved(runtime: &Runtime, session: &Session, state: Option<String>) -> Result<Memory> {
    match state {
        Some(state) => runtime.load_memory(&state)?.map_err(|why| Error::BadState { dir: session.dir().to_path_buf(), why }),
        None => Ok(runtime.new_memory()?),
    }
}

/// The session's committed memory and its `overview.md`, read without the writer's lock
/// where writers let it ([`Session::committed_memory`]), else under it (waiting as the
/// session was opened to wait): a reader must not queue behind a writer whose model thinks.
pub fn committed(runtime: &Runtime, session: &Session) -> Result<(Memory, String)> {
    let (state, overview) = match session.committed_memory()? {
        Some(read) => read,
        None => {
            let locked = session.lock()?;
            (session.load_memory(&locked)?, session.overview()?)
        }
    };
    Ok((from_saved(runtime, session, state)?, overview))
}

/// Commits an update applied with [`COMMIT`] (counted in meta.json as part of it).
pub fn commit(session: &Session, locked: &Locked, commit: &Commit) -> Result<()> {
    Ok(session.commit(locked, commit)?)
}

/// Applies DSL text to the session's memory under its lock. Invalid DSL is
/// [`Error::InvalidDsl`], a trap an [`Error::Engine`]: both before anything is written.
pub fn apply(runtime: &Runtime, session: &Session, text: &str) -> Result<Applied> {
    apply_locked(runtime, session, &session.lock()?, text)
}

/// [`apply`] under a lock the caller holds.
pub fn apply_locked(runtime: &Runtime, session: &Session, locked: &Locked, text: &str) -> Result<Applied> {
    let mut memory = load(runtime, session, locked)?;
    let applied = memory.apply(text, &workmem_runtime::now(), COMMIT)?.map_err(Error::InvalidDsl)?;
    commit(session, locked, &to_commit(&applied))?;
    Ok(applied)
}

/// What [`apply_once`] did: applied the update now, or found it applied before by the same
/// request (its record in the update log).
pub enum Once {
    Applied(Applied),
    Before(serde_json::Value),
}

/// [`apply`] once per idempotency key: a request retried with the key of one that was applied
/// gets that update's log record back and changes nothing; the key with another request is
/// refused (`KeyReused`). The key is committed with the update, in meta.json (the latest) and
/// `requests.jsonl` (all, as long as the update log keeps their updates). Under a lock the
/// caller holds.
pub fn apply_once(runtime: &Runtime, session: &Session, locked: &Locked, text: &str, request: &workmem_store::db::RequestKey) -> Result<Once> {
    if let Some(before) = session.keyed_update(&request.key)? {
        request.same(&before.digest)?;
        let record = session.log()?.into_iter().find(|r| r["seq"] == before.seq);
        return Ok(Once::Before(
            record.ok_or_else(|| Error::BadState { dir: session.dir().to_path_buf(), why: format!("update {} is not in the update log", before.seq) })?,
        ));
    }
    let mut memory = load(runtime, session, locked)?;
    let applied = memory.apply(text, &workmem_runtime::now(), COMMIT)?.map_err(Error::InvalidDsl)?;
    let commit = Commit { request: Some((request.key.clone(), request.digest.clone())), ..to_commit(&applied) };
    self::commit(session, locked, &commit)?;
    Ok(Once::Applied(applied))
}

pub fn to_commit(applied: &Applied) -> Commit {
    Commit {
        seq: applied.seq,
        log_entry: applied.log_entry.clone(),
        state: applied.state.clone().expect("applied with COMMIT, which asks for the state"),
        overview: applied.overview.clone().expect("applied with COMMIT, which asks for the overview"),
        request: None,
    }
}
