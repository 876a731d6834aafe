use std::path::PathBuf;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    /// A session file that does not hold what it should.
    #[error("{} is not a valid session file", path.display())]
    Corrupt { path: PathBuf, source: serde_json::Error },
    #[error("no workmem session at {} (meta.json is missing)", dir.display())]
    NotASession { dir: PathBuf },
    #[error("session {id} already exists at {}", dir.display())]
    Exists { id: String, dir: PathBuf },
    #[error("{0:?} is not a valid session ID: use letters, digits, '-', '_' and '.', not starting with '.'")]
    BadId(String),
    #[error("neither ${0} nor $HOME is set, so there is no sessions directory")]
    NoHome(&'static str),
}

impl Error {
    pub fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Error {
        let path = path.into();
        move |source| Error::Io { path, source }
    }
}
