//! The database boards, context documents and grants share: SQLite as the embedded default
//! (one file) and PostgreSQL when shared across machines, the same statements over both
//! ([`sql::Sql`]), migrated to one schema ([`schema`]).

mod error;
pub(crate) mod grants;
mod postgres;
mod schema;
pub(crate) mod sql;
mod sqlite;

pub use error::{Error, Result};
pub use grants::{Grants, Scope};
pub use postgres::redact;
pub use schema::VERSION as SCHEMA_VERSION;

/// `$WORKMEM_BOARD_DB`: the database the CLI and the server use when `--db` is not given.
pub const DB_ENV: &str = "WORKMEM_BOARD_DB";

/// The embedded default: `$WORKMEM_BOARD_DB`, else `~/.ai/workmem/boards.sqlite3`.
pub fn default_db() -> crate::Result<String> {
    if let Some(db) = std::env::var_os(DB_ENV) {
        return Ok(db.to_string_lossy().into_owned());
    }
    let home = std::env::var_os("HOME").ok_or(crate::Error::NoHome(DB_ENV))?;
    Ok(std::path::Path::new(&home).join(".ai/workmem/boards.sqlite3").display().to_string())
}

/// The database at `target` (a `postgres://` or `postgresql://` URL, or a SQLite file path),
/// migrated to the current schema.
pub(crate) fn connect(target: &str) -> Result<Box<dyn sql::Sql>> {
    let mut db: Box<dyn sql::Sql> = if target.starts_with("postgres://") || target.starts_with("postgresql://") {
        Box::new(postgres::Postgres::connect(target)?)
    } else {
        Box::new(sqlite::Sqlite::open(std::path::Path::new(target))?)
    };
    schema::migrate(db.as_mut())?;
    Ok(db)
}
