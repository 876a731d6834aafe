//! The tables of boards, context documents and grants, and their migrations, in SQL both backends
//! read where they can (a migration is one text for both, or one for each). A database records the
//! migrations applied to it; opening one applies the rest, and one made by a newer workmem
//! is refused rather than guessed at.

use super::sql::{self, Kind, Sql};
use super::{Error, Result};

/// Each entry is one version, as SQLite and as PostgreSQL read it: applied in order, once,
/// in one transaction.
const MIGRATIONS: &[[&str; 2]] = &[
    [BOARDS, BOARDS],
    [DOCUMENTS_SQLITE, DOCUMENTS_POSTGRES],
    [GRANTS, GRANTS],
    [TIPS, TIPS],
    [GRANT_LIMITS, GRANT_LIMITS],
    [REQUEST_KEYS, REQUEST_KEYS],
    [TERMS, TERMS],
    [PAST_RETENTION, PAST_RETENTION],
];

const BOARDS: &str =
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
    CREATE INDEX boards_archived ON boards (archived_at);";

// 2: spec 004's context documents, a version per put, with the index on recent snapshots the
// spec names (what get-latest reads), and the latest version of each kept for full-text search.
const DOCUMENTS_SQLITE: &str = "CREATE TABLE memory_contexts (
        vault_id TEXT NOT NULL,
        memory_id TEXT NOT NULL,
        context_id TEXT NOT NULL,
        actor_id TEXT NOT NULL,
        context TEXT NOT NULL,
        creation_time TEXT NOT NULL,
        version BIGINT NOT NULL,
        PRIMARY KEY (vault_id, memory_id, context_id)
    );
    CREATE INDEX memory_contexts_recent_idx ON memory_contexts (vault_id, memory_id, creation_time DESC);
    CREATE VIRTUAL TABLE memory_contexts_search USING fts5 (vault_id UNINDEXED, memory_id UNINDEXED, context);";

const DOCUMENTS_POSTGRES: &str = "CREATE TABLE memory_contexts (
        vault_id TEXT NOT NULL,
        memory_id TEXT NOT NULL,
        context_id TEXT NOT NULL,
        actor_id TEXT NOT NULL,
        context TEXT NOT NULL,
        creation_time TIMESTAMPTZ NOT NULL DEFAULT now(),
        version BIGINT NOT NULL,
        PRIMARY KEY (vault_id, memory_id, context_id)
    );
    CREATE INDEX memory_contexts_recent_idx ON memory_contexts (vault_id, memory_id, creation_time DESC);
    CREATE TABLE memory_contexts_search (
        vault_id TEXT NOT NULL,
        memory_id TEXT NOT NULL,
        context TEXT NOT NULL,
        PRIMARY KEY (vault_id, memory_id)
    );
    CREATE INDEX memory_contexts_search_idx ON memory_contexts_search USING GIN (to_tsvector('simple', context));";

// 3: grants for any scope (a board, a vault, a session) in one table, the board grants of
// version 1 carried over.
const GRANTS: &str = "CREATE TABLE grants (
        token_sha256 TEXT NOT NULL,
        scope TEXT NOT NULL,
        agent TEXT NOT NULL,
        PRIMARY KEY (token_sha256, scope)
    );
    INSERT INTO grants (token_sha256, scope, agent) SELECT token_sha256, 'board:' || board, agent FROM board_grants;
    DROP TABLE board_grants;";

// 4: a board's tip, which names its history: random when the board is created, and the
// digest of the tip before and the event at each append. A server keeping a board resident
// checks it, so a board deleted and created again with the same ID, or a database restored
// from a backup and written since, is never taken for the history it holds. Boards from
// before start from the empty tip.
const TIPS: &str = "ALTER TABLE boards ADD COLUMN tip TEXT NOT NULL DEFAULT ''";

// 5: what a grant is limited by (an expiry, read-only) and when it was made, so grants can be
// listed and revoked by ID (the first 16 hex digits of the token's SHA-256).
const GRANT_LIMITS: &str = "ALTER TABLE grants ADD COLUMN created_at TEXT;
    ALTER TABLE grants ADD COLUMN expires_at TEXT;
    ALTER TABLE grants ADD COLUMN read_only BIGINT NOT NULL DEFAULT 0";

// 6: idempotency keys, stored with the write they made (a board's event, a document's version)
// with a digest of the request, so a retried request gets the first outcome.
const REQUEST_KEYS: &str = "ALTER TABLE board_events ADD COLUMN request_key TEXT;
    ALTER TABLE board_events ADD COLUMN request_digest TEXT;
    CREATE UNIQUE INDEX board_events_request ON board_events (board, request_key) WHERE request_key IS NOT NULL;
    ALTER TABLE memory_contexts ADD COLUMN request_key TEXT;
    ALTER TABLE memory_contexts ADD COLUMN request_digest TEXT;
    CREATE UNIQUE INDEX memory_contexts_request ON memory_contexts (vault_id, memory_id, request_key) WHERE request_key IS NOT NULL";

// 7: search by the words workmem makes of each memory's latest text (see `terms`), the same
// on both backends and keyed by vault first, in place of FTS5's table and PostgreSQL's GIN
// index over `memory_contexts_search` (filled from it, then dropped, by `migrate`).
const TERMS: &str = "CREATE TABLE memory_terms (
        vault_id TEXT NOT NULL,
        term TEXT NOT NULL,
        memory_id TEXT NOT NULL,
        count BIGINT NOT NULL,
        PRIMARY KEY (vault_id, term, memory_id)
    );
    CREATE INDEX memory_terms_memory ON memory_terms (vault_id, memory_id)";
const TERMS_VERSION: i64 = 7;

// 8: the idempotency keys of the writes no longer kept (document versions retention dropped,
// board events a compaction folded into a snapshot), with the number each write had: a retry
// that late is refused, never applied a second time.
const PAST_RETENTION: &str = "CREATE TABLE memory_requests (
        vault_id TEXT NOT NULL,
        memory_id TEXT NOT NULL,
        request_key TEXT NOT NULL,
        request_digest TEXT NOT NULL,
        version BIGINT NOT NULL,
        PRIMARY KEY (vault_id, memory_id, request_key)
    );
    CREATE TABLE board_requests (
        board TEXT NOT NULL,
        request_key TEXT NOT NULL,
        request_digest TEXT NOT NULL,
        revision BIGINT NOT NULL,
        PRIMARY KEY (board, request_key)
    )";

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
        for (version, [sqlite, postgres]) in (found + 1..).zip(&MIGRATIONS[found as usize..]) {
            db.batch(if db.kind() == Kind::Postgres { postgres } else { sqlite })?;
            if version == TERMS_VERSION {
                let rows = db.query("SELECT vault_id, memory_id, context FROM memory_contexts_search", &[])?;
                for row in rows {
                    let mut row = row.into_iter().map(|v| v.text());
                    let mut next = || row.next().unwrap_or_else(|| Err(Error::Schema("a search row with fewer than three columns".into())));
                    let (vault, memory, context) = (next()?, next()?, next()?);
                    super::terms::index(db, &vault, &memory, &context)?;
                }
                db.batch("DROP TABLE memory_contexts_search")?;
            }
            db.execute("INSERT INTO workmem_schema (version) VALUES ($1)", &[version.into()])?;
        }
        Ok(found)
    })
}
