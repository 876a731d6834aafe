//! The board tables and their migrations, in SQL both backends read. A database records the
//! migrations applied to it; opening one applies the rest, and one made by a newer workmem
//! is refused rather than guessed at.

use super::sql::{self, Kind, Sql};
use super::{Error, Result};

/// Each entry is one version: applied in order, once, in one transaction.
const MIGRATIONS: &[&str] = &[
    // 1: boards (the head: revision and status), their append-only event logs, snapshots
    // of their state every so many revisions, and the agent tokens granted to each.
    "CREATE TABLE boards (
        id TEXT PRIMARY KEY,
        revision BIGINT NOT NULL,
        status TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        archived_at TEXT
    );
    CREATE TABLE board_events (
        board TEXT NOT NULL REFERENCES boards (id) ON DELETE CASCADE,
        revision BIGINT NOT NULL,
        actor TEXT NOT NULL,
        at TEXT NOT NULL,
        event TEXT NOT NULL,
        PRIMARY KEY (board, revision)
    );
    CREATE TABLE board_snapshots (
        board TEXT NOT NULL REFERENCES boards (id) ON DELETE CASCADE,
        revision BIGINT NOT NULL,
        state TEXT NOT NULL,
        PRIMARY KEY (board, revision)
    );
    CREATE TABLE board_grants (
        token_sha256 TEXT NOT NULL,
        board TEXT NOT NULL REFERENCES boards (id) ON DELETE CASCADE,
        agent TEXT NOT NULL,
        PRIMARY KEY (token_sha256, board)
    );
    CREATE INDEX boards_archived ON boards (archived_at);",
];

/// The schema version this workmem writes.
pub const VERSION: i64 = MIGRATIONS.len() as i64;

/// Brings the database to [`VERSION`]; returns the version it was at.
pub fn migrate(db: &mut dyn Sql) -> Result<i64> {
    sql::write(db, |db| {
        if db.kind() == Kind::Postgres {
            // Two workers opening a new database at once: one migrates, the other waits.
            db.query("SELECT pg_advisory_xact_lock(7305000001)", &[])?;
        }
        db.batch("CREATE TABLE IF NOT EXISTS workmem_schema (version BIGINT NOT NULL)")?;
        let found = match db.query("SELECT MAX(version) FROM workmem_schema", &[])?.pop().and_then(|r| r.into_iter().next()) {
            Some(sql::Value::Int(v)) => v,
            _ => 0,
        };
        if found > VERSION {
            return Err(Error::NewerSchema { found, known: VERSION });
        }
        for (version, migration) in (found + 1..).zip(&MIGRATIONS[found as usize..]) {
            db.batch(migration)?;
            db.execute("INSERT INTO workmem_schema (version) VALUES ($1)", &[version.into()])?;
        }
        Ok(found)
    })
}
