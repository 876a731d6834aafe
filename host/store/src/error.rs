use std::path::PathBuf;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    /// A session file that does not hold what it should.
    #[error("{} is not a valid session file", path.display())]
    Corrupt { path: PathBuf, source: serde_json::Error },
    #[error("session {}", dir.display())]
    File { dir: PathBuf, source: crate::PathError },
    /// A file of the project's (AGENTS.md) that is refused.
    #[error("project {}", dir.display())]
    Project { dir: PathBuf, source: crate::PathError },
    #[error("no workmem session at {}: {why}", dir.display())]
    NotASession { dir: PathBuf, why: String },
    #[error("no session {id} here ({}) or under any other directory: `workmem session list --all` lists every directory's sessions, `workmem session new --id {id}` makes one", cwd.display())]
    NoSuchSession { id: String, cwd: PathBuf },
    #[error("session {} has {updates} committed update(s) but no state.json: restore it from a backup (the update log, updates.jsonl, records every update)", dir.display())]
    MissingState { dir: PathBuf, updates: u32 },
    #[error("session ID {id} is in {} directories ({}): name the session by its directory", dirs.len(), dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(", "))]
    Ambiguous { id: String, dirs: Vec<PathBuf> },
    #[error("session {id} already exists at {}", dir.display())]
    Exists { id: String, dir: PathBuf },
    #[error("{0:?} is not a valid session ID: use letters, digits, '-', '_' and '.', not starting with '.'")]
    BadId(String),
    /// The session's lock stayed taken (see `Session::waiting_at_most`).
    #[error("session {} is busy: waited {} ms for its lock, which {holder}", dir.display(), waited.as_millis())]
    Busy { dir: PathBuf, waited: std::time::Duration, holder: String },
    #[error("neither ${0} nor $HOME is set, so there is no sessions directory")]
    NoHome(&'static str),
    /// The sessions' database failed (or could not be reached): `target` names it without a
    /// password.
    #[error("the session store at {target}")]
    Database { target: String, source: Box<dyn std::error::Error + Send + Sync> },
    /// What is kept beside the sessions for one surface, asked of a store made without it.
    #[error("this session store keeps no {0}")]
    NotKept(&'static str),
}

impl Error {
    pub fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Error {
        let path = path.into();
        move |source| Error::Io { path, source }
    }
}
