//! Spec 004's context documents, stored: one text per (vault, memory), every put a new
//! version (context ID, actor, creation time) in `memory_contexts`, get-latest by the index
//! on recent snapshots the spec names, older versions listed and read back, old ones
//! dropped past a retention count, and the latest of each searchable by its words (see
//! `db::terms`). The engine decides what a document is (`document.validate`); a put
//! it refuses, or one based on a version that is no longer the latest, stores nothing.

pub use crate::db::{Error, Result};

use crate::db::sql::{self, Kind, Sql, Value, bigint, rev};
use crate::db::{RequestKey, connect, terms};
use std::time::{Duration, SystemTime};
use workmem_runtime::Runtime;

/// How documents are kept.
#[derive(Debug, Clone)]
pub struct Config {
    /// The largest document a put may store, in bytes.
    pub max_bytes: u64,
    /// Versions kept per memory; older ones are deleted by the put that passes the count.
    pub keep_versions: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config { max_bytes: 256 * 1024, keep_versions: 100 }
    }
}

/// One stored version.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Version {
    pub vault_id: String,
    pub memory_id: String,
    pub context_id: String,
    pub version: u64,
    pub actor_id: String,
    /// RFC 3339, UTC, microseconds; strictly increasing within a memory.
    pub creation_time: String,
    /// The text; empty in [`Documents::versions`]' listing.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub context: String,
}

/// A search hit: the latest version of a memory whose text matches.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Hit {
    pub memory_id: String,
    pub context: String,
}

/// The context documents in one database (the boards' database).
pub struct Documents {
    db: Box<dyn Sql>,
    runtime: Runtime,
    config: Config,
}

/// The column list every read selects, with the time as RFC 3339 text on both backends.
fn columns(kind: Kind) -> &'static str {
    match kind {
        Kind::Sqlite => "vault_id, memory_id, context_id, version, actor_id, creation_time, context",
        Kind::Postgres => {
            "vault_id, memory_id, context_id, version, actor_id, to_char(creation_time AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'), context"
        }
    }
}

fn version(row: Vec<Value>) -> Result<Version> {
    let mut r = row.into_iter();
    let mut next = || r.next().unwrap_or(Value::Null);
    Ok(Version {
        vault_id: next().text()?,
        memory_id: next().text()?,
        context_id: next().text()?,
        version: rev(&next())?,
        actor_id: next().text()?,
        creation_time: next().text()?,
        context: next().text()?,
    })
}

fn micros(t: SystemTime) -> String {
    humantime::format_rfc3339_micros(t).to_string()
}

impl Documents {
    /// Whether its database connection still answers ([`Sql::healthy`](crate::db::sql::Sql::healthy)).
    pub fn healthy(&mut self) -> bool {
        self.db.healthy()
    }

    pub fn open(target: &str, runtime: Runtime, config: Config) -> Result<Self> {
        Ok(Documents { db: connect(target)?, runtime, config })
    }

    /// Stores `text` (bytes as received) as the newest version of (`vault`, `memory`) by
    /// `actor`. With `expected`, only if the latest version is still that one (0: none yet);
    /// otherwise [`Error::VersionConflict`] and nothing stored. A text the engine refuses is
    /// [`Error::InvalidDocument`], naming the rule.
    pub fn put(&mut self, vault: &str, memory: &str, actor: &str, text: &[u8], expected: Option<u64>) -> Result<Version> {
        self.put_keyed(vault, memory, actor, text, expected, None)
    }

    /// [`Documents::put`] once per idempotency key: a put retried with the key of one that
    /// was stored gets that version back and stores nothing ([`Error::KeyReused`] when the
    /// key came with another request: the caller's digest tells).
    pub fn put_once(&mut self, vault: &str, memory: &str, actor: &str, text: &[u8], expected: Option<u64>, request: &RequestKey) -> Result<Version> {
        self.put_keyed(vault, memory, actor, text, expected, Some(request))
    }

    fn put_keyed(&mut self, vault: &str, memory: &str, actor: &str, text: &[u8], expected: Option<u64>, request: Option<&RequestKey>) -> Result<Version> {
        for (what, value) in [("vault", vault), ("memory", memory), ("actor", actor)] {
            crate::ids::check(what, value).map_err(Error::InvalidId)?;
        }
        let mut engine = self.runtime.instance()?;
        if let Err(e) = engine.validate_document(text, self.config.max_bytes)? {
            return Err(Error::InvalidDocument { rule: engine.document_error_rule(&e)?, message: engine.describe_document_error(&e)? });
        }
        let text = std::str::from_utf8(text).expect("the engine checked it is UTF-8");
        let keep = self.config.keep_versions.max(1);
        let kind = self.db.kind();
        sql::write(self.db.as_mut(), |db| {
            if kind == Kind::Postgres {
                // Puts to one memory queue here; the ones to others go on.
                db.query("SELECT pg_advisory_xact_lock(hashtext($1))", &[format!("{vault}\n{memory}").as_str().into()])?;
            }
            if let Some(request) = request {
                let sql = format!("SELECT {}, request_digest FROM memory_contexts WHERE vault_id = $1 AND memory_id = $2 AND request_key = $3", columns(kind));
                if let Some(mut row) = db.query(&sql, &[vault.into(), memory.into(), request.key.as_str().into()])?.into_iter().next() {
                    // Stored before: its version, and nothing stored now.
                    request.same(&row.pop().unwrap_or(Value::Null).text()?)?;
                    return version(row);
                }
                // Stored before and dropped by retention since: refused, not stored again.
                let sql = "SELECT request_digest, version FROM memory_requests WHERE vault_id = $1 AND memory_id = $2 AND request_key = $3";
                if let Some(row) = db.query(sql, &[vault.into(), memory.into(), request.key.as_str().into()])?.into_iter().next() {
                    let mut row = row.into_iter();
                    request.same(&row.next().unwrap_or(Value::Null).text()?)?;
                    return Err(Error::KeyPastRetention { key: request.key.clone(), version: rev(&row.next().unwrap_or(Value::Null))? });
                }
            }
            let latest = latest(db, vault, memory)?;
            let current = latest.as_ref().map_or(0, |v| v.version);
            if let Some(expected) = expected.filter(|e| *e != current) {
                return Err(Error::VersionConflict { vault: vault.into(), memory: memory.into(), expected, current });
            }
            // Strictly after the latest, whatever the clocks of the machines that put them.
            let mut at = SystemTime::now();
            if let Some(previous) = latest.as_ref().and_then(|v| humantime::parse_rfc3339(&v.creation_time).ok()) {
                at = at.max(previous + Duration::from_micros(1));
            }
            let new = Version {
                vault_id: vault.into(),
                memory_id: memory.into(),
                context_id: (current + 1).to_string(),
                version: current + 1,
                actor_id: actor.into(),
                creation_time: micros(at),
                context: text.into(),
            };
            let time = if kind == Kind::Postgres { "$6::text::timestamptz" } else { "$6" };
            db.execute(
                &format!(
                    "INSERT INTO memory_contexts (vault_id, memory_id, context_id, version, actor_id, creation_time, context, request_key, request_digest) \
                     VALUES ($1, $2, $3, $4, $5, {time}, $7, $8, $9)"
                ),
                &[
                    vault.into(),
                    memory.into(),
                    new.context_id.as_str().into(),
                    bigint(new.version),
                    actor.into(),
                    new.creation_time.as_str().into(),
                    text.into(),
                    request.map(|r| r.key.as_str()).into(),
                    request.map(|r| r.digest.as_str()).into(),
                ],
            )?;
            if new.version > keep {
                // The keys of the versions that go are kept (see `Error::KeyPastRetention`).
                db.execute(
                    "INSERT INTO memory_requests (vault_id, memory_id, request_key, request_digest, version) \
                     SELECT vault_id, memory_id, request_key, request_digest, version FROM memory_contexts \
                     WHERE vault_id = $1 AND memory_id = $2 AND version <= $3 AND request_key IS NOT NULL",
                    &[vault.into(), memory.into(), bigint(new.version - keep)],
                )?;
                db.execute(
                    "DELETE FROM memory_contexts WHERE vault_id = $1 AND memory_id = $2 AND version <= $3",
                    &[vault.into(), memory.into(), bigint(new.version - keep)],
                )?;
            }
            terms::index(db, vault, memory, text)?;
            Ok(new)
        })
    }

    /// The newest version: read through the recent-snapshot index.
    pub fn latest(&mut self, vault: &str, memory: &str) -> Result<Version> {
        latest(self.db.as_mut(), vault, memory)?.ok_or_else(|| Error::NoDocument { vault: vault.into(), memory: memory.into() })
    }

    /// Version `n`, while retention keeps it.
    pub fn get(&mut self, vault: &str, memory: &str, n: u64) -> Result<Version> {
        let sql = format!("SELECT {} FROM memory_contexts WHERE vault_id = $1 AND memory_id = $2 AND version = $3", columns(self.db.kind()));
        match self.db.query(&sql, &[vault.into(), memory.into(), bigint(n)])?.into_iter().next() {
            Some(row) => version(row),
            None => Err(Error::NoVersion { vault: vault.into(), memory: memory.into(), version: n }),
        }
    }

    /// The versions kept, newest first, without their text.
    pub fn versions(&mut self, vault: &str, memory: &str) -> Result<Vec<Version>> {
        let sql = format!("SELECT {} FROM memory_contexts WHERE vault_id = $1 AND memory_id = $2 ORDER BY creation_time DESC", columns(self.db.kind()));
        let rows = self.db.query(&sql, &[vault.into(), memory.into()])?;
        if rows.is_empty() {
            return Err(Error::NoDocument { vault: vault.into(), memory: memory.into() });
        }
        rows.into_iter().map(|r| version(r).map(|v| Version { context: String::new(), ..v })).collect()
    }

    /// The memories of `vault` whose latest text holds every word of `query` (words as
    /// [`terms`](crate::db::terms::terms) makes them: case and accents folded), most
    /// occurrences of them first, then by ID; at most `limit`. Only `vault`'s rows are read.
    pub fn search(&mut self, vault: &str, query: &str, limit: u64) -> Result<Vec<Hit>> {
        let words: Vec<String> = terms::terms(query).into_keys().collect();
        if words.is_empty() {
            return Ok(Vec::new());
        }
        let wanted = i64::try_from(words.len()).unwrap_or(i64::MAX);
        let words = serde_json::to_string(&words).expect("strings serialize");
        let each = match self.db.kind() {
            Kind::Sqlite => "SELECT value FROM json_each($2)",
            Kind::Postgres => "SELECT json_array_elements_text($2::text::json)",
        };
        let sql = format!(
            "SELECT memory_id FROM memory_terms WHERE vault_id = $1 AND term IN ({each}) \
             GROUP BY memory_id HAVING COUNT(*) = $3 ORDER BY SUM(count) DESC, memory_id LIMIT $4"
        );
        sql::read(self.db.as_mut(), |db| {
            let rows = db.query(&sql, &[vault.into(), words.as_str().into(), wanted.into(), bigint(limit)])?;
            let mut hits = Vec::with_capacity(rows.len());
            for row in rows {
                let memory_id = row.into_iter().next().unwrap_or(Value::Null).text()?;
                if let Some(latest) = latest(db, vault, &memory_id)? {
                    hits.push(Hit { memory_id, context: latest.context });
                }
            }
            Ok(hits)
        })
    }

    /// How the database reads the latest version (EXPLAIN): for checking it uses the index.
    pub fn explain_latest(&mut self, vault: &str, memory: &str) -> Result<String> {
        let (explain, sql) = match self.db.kind() {
            Kind::Sqlite => ("EXPLAIN QUERY PLAN ", LATEST),
            Kind::Postgres => ("EXPLAIN ", LATEST),
        };
        let rows = self.db.query(&format!("{explain}{}", sql.replace("{columns}", "version")), &[vault.into(), memory.into()])?;
        Ok(rows.into_iter().flat_map(|r| r.into_iter().filter_map(|v| v.text().ok())).collect::<Vec<_>>().join("\n"))
    }
}

/// Get-latest: the newest by creation time, as the recent-snapshot index orders them.
const LATEST: &str = "SELECT {columns} FROM memory_contexts WHERE vault_id = $1 AND memory_id = $2 ORDER BY creation_time DESC LIMIT 1";

fn latest(db: &mut dyn Sql, vault: &str, memory: &str) -> Result<Option<Version>> {
    let sql = LATEST.replace("{columns}", columns(db.kind()));
    db.query(&sql, &[vault.into(), memory.into()])?.into_iter().next().map(version).transpose()
}
