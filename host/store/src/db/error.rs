use workmem_runtime::board::BoardError;

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong with a board or a context document (they share a database);
/// [`Error::code`] is the stable name a script matches on.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("could not open the board database {target}")]
    Open { target: String, source: Box<dyn std::error::Error + Send + Sync> },
    #[error("the board database failed")]
    Db(#[source] Box<dyn std::error::Error + Send + Sync>),
    #[error("the board database holds something this workmem does not expect: {0}")]
    Schema(String),
    #[error("the board database is at schema version {found}, newer than this workmem's {known}: upgrade workmem")]
    NewerSchema { found: i64, known: i64 },
    #[error("no board {0}")]
    NoBoard(String),
    #[error("board {0} already exists")]
    Exists(String),
    /// A write made against a revision that is no longer the board's: nothing was written.
    #[error("board {board} is at revision {current}, not {expected}: another writer came first; read it again and retry")]
    Conflict { board: String, expected: u64, current: u64 },
    /// The engine refused the op: the rule it broke, as `board-error` names its case, and
    /// the engine's sentence.
    #[error("{message}")]
    Refused { error: BoardError, rule: String, message: String },
    #[error("board {board}'s event log does not replay at revision {revision}: {why}")]
    Log { board: String, revision: u64, why: String },
    /// The token was not granted this scope (named as "board B" or "vault V").
    #[error("this token does not grant access to {0}")]
    Forbidden(String),
    /// An Idempotency-Key that is not one.
    #[error("{0}")]
    BadKey(String),
    /// An Idempotency-Key already used for another request: nothing was written.
    #[error("the Idempotency-Key {0:?} was already used for another request; use a new key for a new request")]
    KeyReused(String),
    /// A retry whose first write is no longer kept (a document's retention, a board's
    /// compaction): it is not applied again.
    #[error(
        "the write the Idempotency-Key {key:?} made (number {version}) is no longer kept (a document's --keep-versions, a board's compaction); it is not applied again"
    )]
    KeyPastRetention { key: String, version: u64 },
    #[error("no grant with ID {0} (`workmem token list` shows them)")]
    NoGrant(String),
    #[error("this token's grant of {scope} expired at {at}")]
    Expired { scope: String, at: String },
    #[error("this token may read {0} and write nothing")]
    ReadOnly(String),
    /// Only whoever opens the database itself (no token) may do this.
    #[error("only the database's owner can {0}, not an agent's token")]
    OwnerOnly(&'static str),
    /// An ID that breaks the one rule of IDs ([`crate::ids::check`]); the sentence says which.
    #[error("{0}")]
    InvalidId(String),
    #[error("no context document for memory {memory} in vault {vault}")]
    NoDocument { vault: String, memory: String },
    #[error("no version {version} of memory {memory} in vault {vault} (it may be past retention)")]
    NoVersion { vault: String, memory: String, version: u64 },
    /// A put based on a version that is no longer the latest: nothing was stored.
    #[error("memory {memory} in vault {vault} is at version {current}, not {expected}: another put came first; get it again and retry")]
    VersionConflict { vault: String, memory: String, expected: u64, current: u64 },
    /// The engine refused the text as a context document: the rule it broke, as
    /// `document-error` names its case, and the engine's sentence for it.
    #[error("{message}")]
    InvalidDocument { rule: String, message: String },
    #[error(transparent)]
    Engine(#[from] workmem_runtime::Error),
}

impl Error {
    pub fn code(&self) -> &'static str {
        match self {
            Error::Open { .. } => "open",
            Error::Db(_) => "database",
            Error::Schema(_) => "schema",
            Error::NewerSchema { .. } => "newer_schema",
            Error::NoBoard(_) => "no_board",
            Error::NoGrant(_) => "no_grant",
            Error::BadKey(_) => "bad_request",
            Error::KeyReused(_) => "idempotency_key_reused",
            Error::KeyPastRetention { .. } => "idempotency_key_expired",
            Error::Exists(_) => "exists",
            Error::Conflict { .. } => "conflict",
            Error::Refused { .. } => "refused",
            Error::Log { .. } => "log",
            Error::Forbidden(_) | Error::OwnerOnly(_) | Error::Expired { .. } | Error::ReadOnly(_) => "forbidden",
            Error::NoDocument { .. } => "no_document",
            Error::NoVersion { .. } => "no_version",
            Error::VersionConflict { .. } => "conflict",
            Error::InvalidDocument { .. } => "invalid_document",
            Error::InvalidId(_) => "invalid_id",
            Error::Engine(_) => "engine",
        }
    }
}
