//! The database boards, context documents and grants share: SQLite as the embedded default
//! (one file) and PostgreSQL when shared across machines, the same statements over both
//! ([`sql::Sql`]), migrated to one schema ([`schema`]).

mod error;
pub(crate) mod grants;
mod idempotency;
pub(crate) mod postgres;
mod schema;
pub(crate) mod sql;
mod sqlite;
pub mod terms;

pub use error::{Error, Result};
pub use grants::{Access, GrantInfo, GrantOptions, Granted, Grants, Scope};
pub use idempotency::{MAX_KEY, RequestKey};
pub use schema::VERSION as SCHEMA_VERSION;

/// `$WORKMEM_DB`: the database (boards, documents and grants) the CLI and the server use
/// when `--db` is not given.
pub const DB_ENV: &str = "WORKMEM_DB";
/// The name [`DB_ENV`] had when the database held boards only; still read when it is unset.
const OLD_DB_ENV: &str = "WORKMEM_BOARD_DB";

/// The embedded default: `$WORKMEM_DB`, else `~/.ai/workmem/boards.sqlite3` (its name from
/// when it held boards only, kept so that an existing database is still found).
pub fn default_db() -> crate::Result<String> {
    if let Some(db) = std::env::var_os(DB_ENV).or_else(|| std::env::var_os(OLD_DB_ENV)) {
        return Ok(db.to_string_lossy().into_owned());
    }
    let home = std::env::var_os("HOME").ok_or(crate::Error::NoHome(DB_ENV))?;
    Ok(std::path::Path::new(&home).join(".ai/workmem/boards.sqlite3").display().to_string())
}

/// A database target fit to print: a password in a URL's user info (`postgres://u:pw@h`), in
/// its query (`?password=pw`) or in a libpq `key=value` string (`password=pw`, quoted or not)
/// is replaced by `***`. Every message and answer that names a database goes through this.
pub fn redact(target: &str) -> String {
    let mut out = target.to_string();
    if let (Some(scheme), Some(at)) = (out.find("://"), out.rfind('@'))
        && at > scheme
        && let Some(colon) = out[scheme + 3..at].find(':')
    {
        out.replace_range(scheme + 3 + colon + 1..at, "***");
    }
    let mut from = 0;
    while let Some(found) = out[from..].to_ascii_lowercase().find("password=").map(|i| from + i + "password=".len()) {
        let rest = &out[found..];
        let len = if let Some(quoted) = rest.strip_prefix('\'') {
            // libpq's quoting: a backslash escapes the next character.
            let mut chars = quoted.char_indices();
            let mut end = quoted.len();
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        chars.next();
                    }
                    '\'' => {
                        end = i + 1;
                        break;
                    }
                    _ => {}
                }
            }
            1 + end
        } else {
            rest.find(|c: char| c == '&' || c.is_whitespace()).unwrap_or(rest.len())
        };
        out.replace_range(found..found + len, "***");
        from = found + 3;
    }
    out
}

/// Whether `target` reads as a libpq `key=value` connection string (`host=db user=app ...`)
/// rather than a file path: such a string is refused, never created as a SQLite file (whose
/// name would carry the password).
fn is_conninfo(target: &str) -> bool {
    target
        .split_whitespace()
        .next()
        .and_then(|word| word.split_once('='))
        .is_some_and(|(key, _)| !key.is_empty() && key.bytes().all(|b| b.is_ascii_lowercase() || b == b'_') && !key.contains('/'))
}

/// The database at `target` (a `postgres://` or `postgresql://` URL, or a SQLite file path),
/// migrated to the current schema.
pub(crate) fn connect(target: &str) -> Result<Box<dyn sql::Sql>> {
    if target.starts_with("postgres://") || target.starts_with("postgresql://") {
        let mut db = postgres::Postgres::connect(target)?;
        schema::migrate(&mut db)?;
        return Ok(Box::new(db));
    }
    if is_conninfo(target) {
        return Err(Error::Open {
            target: redact(target),
            source: "this reads as a PostgreSQL key=value string; give a postgres:// URL, or a SQLite file path".into(),
        });
    }
    // Nothing is written to a SQLite file until it is known to be workmem's (or empty) and of
    // a schema this workmem knows: WAL mode, too, is switched on only after.
    let mut db = sqlite::Sqlite::open(std::path::Path::new(target))?;
    schema::migrate(&mut db)?;
    db.use_wal()?;
    Ok(Box::new(db))
}

#[cfg(test)]
mod tests {
    /// Sixteen connections opening one new SQLite file at once all get it, migrated and in
    /// WAL mode: switching the journal mode is refused at once while another has the file
    /// open, and used to fail one of them within a few rounds.
    #[test]
    fn sixteen_open_a_new_database_together() {
        let dir = std::env::temp_dir().join(format!("workmem-open-race-{}", std::process::id()));
        for round in 0..50 {
            let path = dir.join(format!("{round}.sqlite3")).display().to_string();
            std::thread::scope(|s| {
                for _ in 0..16 {
                    s.spawn(|| {
                        let mut db = super::connect(&path).unwrap_or_else(|e| panic!("round {round}: {e}: {:?}", std::error::Error::source(&e)));
                        let mode = db.query("PRAGMA journal_mode", &[]).unwrap();
                        assert_eq!(mode, vec![vec![super::sql::Value::Text("wal".into())]]);
                    });
                }
            });
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A connection left inside a transaction is not healthy: a server that kept it for the
    /// next request would carry that transaction's locks into it.
    #[test]
    fn a_transaction_left_open_is_not_healthy() {
        let dir = std::env::temp_dir().join(format!("workmem-healthy-{}", std::process::id()));
        let mut db = super::connect(&dir.join("h.sqlite3").display().to_string()).unwrap();
        assert!(db.healthy());
        db.begin_write().unwrap();
        assert!(!db.healthy(), "a write transaction left open");
        db.batch("ROLLBACK").unwrap();
        assert!(db.healthy());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
