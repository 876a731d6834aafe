//! The second session store: sessions in PostgreSQL, shared by every process and machine that
//! opens the same database (issue 74: replicas behind a load balancer).
//!
//! ```text
//! workmem_session         one row a session: its working directory, ID, meta.json, state.json
//! workmem_session_record  the message log, (session, seq), one record's JSON each, numbered from 1
//! workmem_session_update  the update log, (session, seq)
//! workmem_session_key     the idempotency keys of keyed updates, (session, key)
//! workmem_session_file    the memory files (working-memory/...), (session, name)
//! workmem_proxy_state     what a proxy keeps beside a working directory's sessions, (folder, name)
//! ```
//!
//! What the seam asks of a store, here: a record is acknowledged once its transaction has
//! committed (the connection commits synchronously, see `db::postgres::open`), so
//! [`Durability`] makes no difference; a commit is one transaction (the update's record, its
//! key, the state, the overview and meta), wholly visible or not at all, and a crash leaves
//! nothing to finish; the lock is a PostgreSQL advisory lock held on a connection of its own,
//! which excludes every other writer on any machine, is released when its holder's connection
//! ends (a killed process included), and is waited for within a bound.

use super::store::{Durability, MemoryCommit, ProxyState, SessionGrants, SessionLog, SessionStore, StoredSession};
use super::{Commit, FRESH_ID_DRAWS, KeyedUpdate, Locked, Meta, Proxied, Session, checked_id, encode_cwd, new_id, random_uid};
use crate::GrantName;
use crate::confine::{MemoryFileStore, PathError, memory_name};
use crate::db::postgres::{Connection, open};
use crate::error::{Error, Result};
use crate::messages::{self, Entry, LogRecord, Usage, View};
use crate::passed::Passed;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What a session's name starts with where messages show it (a store without directories
/// gives a path-shaped name of its own).
const SCHEME: &str = "postgres:";

/// The longest a lock is waited for unless the handle says (as the directory store's).
const LOCK_WAIT: Duration = Duration::from_secs(60);

/// The classes of workmem's advisory locks on a session (the first key of each; 7766001 is
/// the schema's): a writer's, held for one write, and an exchange's, held for a whole request
/// of the session's conversation (`hold_exchange`), so that a writer never waits on a request.
const WRITES: i32 = 7766002;
const EXCHANGES: i32 = 7766003;

/// The advisory lock every session's making holds to its commit (one key, the database's).
const MAKING: i32 = 7766004;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS workmem_session (
    sid BIGSERIAL PRIMARY KEY,
    cwd TEXT NOT NULL,
    folder TEXT NOT NULL,
    id TEXT NOT NULL,
    meta TEXT NOT NULL,
    state TEXT,
    UNIQUE (cwd, id)
);
CREATE INDEX IF NOT EXISTS workmem_session_by_folder ON workmem_session (folder, id);
CREATE TABLE IF NOT EXISTS workmem_proxy_state (
    folder TEXT NOT NULL,
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (folder, name)
);
CREATE TABLE IF NOT EXISTS workmem_session_record (
    sid BIGINT NOT NULL REFERENCES workmem_session ON DELETE CASCADE,
    seq BIGINT NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (sid, seq)
);
CREATE TABLE IF NOT EXISTS workmem_session_update (
    sid BIGINT NOT NULL REFERENCES workmem_session ON DELETE CASCADE,
    seq BIGINT NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (sid, seq)
);
CREATE TABLE IF NOT EXISTS workmem_session_key (
    sid BIGINT NOT NULL REFERENCES workmem_session ON DELETE CASCADE,
    key TEXT NOT NULL,
    digest TEXT NOT NULL,
    seq BIGINT NOT NULL,
    PRIMARY KEY (sid, key)
);
CREATE TABLE IF NOT EXISTS workmem_session_file (
    sid BIGINT NOT NULL REFERENCES workmem_session ON DELETE CASCADE,
    name TEXT NOT NULL,
    content TEXT NOT NULL,
    PRIMARY KEY (sid, name)
);";

/// One database, shared by the handles of a process: a connection for everything but locks,
/// used one statement or transaction at a time, and when it was last used.
struct Db {
    url: String,
    /// The URL as errors show it, without a password.
    target: String,
    conn: Mutex<(Connection, Instant)>,
    /// Connections that held a lock and let go of it, and since when, for the next locks:
    /// opening one for every write added its setup to every append.
    spare: Mutex<Vec<(Connection, Instant)>>,
}

/// The most spare lock connections a process keeps; past it, a lock's connection is closed
/// when the lock is let go of. (The connections open at once are bounded by the locks held at
/// once: a write's in each request in flight, and an exchange's in each of the proxy's slots.)
const SPARE_LOCKS: usize = 8;

/// How long a connection may sit unused before its next call asks first whether it still works
/// (one round trip; a server restarted since is only found out by the next call, which it
/// fails), and how long that question may take. A restart takes well under a second, so the
/// gap is short: calls in a row skip the question, a request after a pause asks it once.
const IDLE_CHECK: Duration = Duration::from_millis(100);
const CHECK_WAIT: Duration = Duration::from_secs(2);

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db").field("target", &self.target).finish()
    }
}

impl Db {
    fn err(&self) -> impl Fn(postgres::Error) -> Error + '_ {
        |source| Error::Database { target: self.target.clone(), source: Box::new(source) }
    }

    fn connect(url: &str) -> Result<Connection> {
        open(url).map_err(|e| Error::Database {
            target: crate::db::redact(url),
            source: match e {
                crate::db::Error::Open { source, .. } => source,
                other => Box::new(other),
            },
        })
    }

    /// `f` on the shared connection. One the server closed (restarted, crashed, or the
    /// connection cut) is opened again first, so that service resumes by itself once the
    /// server is back; one idle for [`IDLE_CHECK`] is asked first whether it still works.
    /// While the server is away each call fails within the connection's deadlines, and a call
    /// that failed is not tried again (whether it committed is unknown).
    fn with<T>(&self, f: impl FnOnce(&mut postgres::Client) -> std::result::Result<T, postgres::Error>) -> Result<T> {
        let mut held = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        let (conn, used) = &mut *held;
        if conn.is_closed() || (used.elapsed() >= IDLE_CHECK && conn.is_valid(CHECK_WAIT).is_err()) {
            *conn = Db::connect(&self.url)?;
        }
        let out = f(conn).map_err(self.err());
        *used = Instant::now();
        out
    }

    /// A connection to hold a lock on: a spare one another lock let go of, else a new one.
    fn lock_connection(&self) -> Result<Connection> {
        let spare = self.spare.lock().unwrap_or_else(|p| p.into_inner()).pop();
        if let Some((mut conn, at)) = spare
            // One unused for a while is asked first, as the shared one is (a restart since).
            && !conn.is_closed()
            && (at.elapsed() < IDLE_CHECK || conn.is_valid(CHECK_WAIT).is_ok())
        {
            return Ok(conn);
        }
        Db::connect(&self.url)
    }
}

/// A lock held on a connection of its own ([`Db::lock_connection`]): let go of when dropped,
/// its connection kept for the next lock where there is room ([`SPARE_LOCKS`]), else closed,
/// which ends the lock with its session as well.
struct Held {
    db: Arc<Db>,
    conn: Mutex<Option<Connection>>,
    class: i32,
    key: i32,
}

impl Drop for Held {
    fn drop(&mut self) {
        let Some(mut conn) = self.conn.get_mut().unwrap_or_else(|p| p.into_inner()).take() else { return };
        let unlocked = conn.query_one("SELECT pg_advisory_unlock($1::int4, $2::int4)", &[&self.class, &self.key]).is_ok_and(|r| r.get::<_, bool>(0));
        let mut spare = self.db.spare.lock().unwrap_or_else(|p| p.into_inner());
        if unlocked && spare.len() < SPARE_LOCKS {
            spare.push((conn, Instant::now()));
        }
    }
}

/// The sessions of one working directory in a PostgreSQL database.
#[derive(Debug, Clone)]
pub struct PgSessions {
    db: Arc<Db>,
    cwd: PathBuf,
    /// `postgres:/<folder>`, the folder [`encode_cwd`]'s.
    name: PathBuf,
}

impl PgSessions {
    /// The sessions of working directory `cwd` in the database at `url`, its tables made if
    /// they are not there yet.
    pub fn connect(url: &str, cwd: &Path) -> Result<Self> {
        let db = Db { url: url.to_string(), target: crate::db::redact(url), conn: Mutex::new((Db::connect(url)?, Instant::now())), spare: Mutex::default() };
        // Two processes making the tables at once would collide in the catalog: one at a time.
        db.with(|c| c.batch_execute(&format!("BEGIN; SELECT pg_advisory_xact_lock(7766001); {SCHEMA} COMMIT;")))?;
        Ok(PgSessions { db: Arc::new(db), cwd: cwd.to_path_buf(), name: PathBuf::from(format!("{SCHEME}/{}", encode_cwd(cwd))) })
    }

    fn folder(&self) -> String {
        encode_cwd(&self.cwd)
    }

    fn session(&self, sid: i64, folder: &str, id: &str) -> PgSession {
        PgSession { db: self.db.clone(), sid, name: PathBuf::from(format!("{SCHEME}/{folder}/{id}")), wait: LOCK_WAIT, kept: Arc::default() }
    }

    /// A new session, `proxied`'s where given, in one transaction. Sessions are made one at a
    /// time in the database (a transaction-long advisory lock taken before the row number is
    /// drawn), so they are committed in the order of their row numbers: a process that read up
    /// to one has seen every one before it ([`SessionStore::made_after`]). Made at once by
    /// several, a later number could commit first, and the one before it was never taken in.
    fn made(&self, id: Option<&str>, overview: &str, proxied: Option<&Proxied>) -> Result<Session> {
        let given = id.map(checked_id).transpose()?;
        let cwd = self.cwd.display().to_string();
        for _ in 0..FRESH_ID_DRAWS {
            let id = given.map_or_else(new_id, str::to_string);
            let mut meta = Meta::new(id.clone(), &self.cwd, overview)?;
            meta.proxied = proxied.cloned();
            let meta = serde_json::to_string(&meta).expect("meta serializes");
            let made = self.db.with(|c| {
                let mut t = c.transaction()?;
                t.execute("SELECT pg_advisory_xact_lock($1::int4)", &[&MAKING])?;
                let row = t.query_opt(
                    "INSERT INTO workmem_session (cwd, folder, id, meta) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING sid",
                    &[&cwd, &self.folder(), &id, &meta],
                )?;
                if let Some(row) = &row {
                    let sid: i64 = row.get(0);
                    t.execute("INSERT INTO workmem_session_file (sid, name, content) VALUES ($1, $2, $3)", &[&sid, &super::dirs::OVERVIEW, &overview])?;
                }
                t.commit()?;
                Ok(row.map(|r| r.get::<_, i64>(0)))
            })?;
            match made {
                Some(sid) => return Ok(Session::new(Arc::new(self.session(sid, &self.folder(), &id)))),
                None if given.is_some() => return Err(Error::Exists { dir: self.name.join(&id), id }),
                None => continue,
            }
        }
        Err(Error::Exists { id: "(a fresh ID)".into(), dir: self.name.clone() })
    }

    /// The sessions the query's rows name (sid, cwd, id, meta), oldest first.
    fn listed(&self, sql: &str, params: &[&(dyn postgres::types::ToSql + Sync)]) -> Result<Vec<(Session, Meta)>> {
        let rows = self.db.with(|c| c.query(sql, params))?;
        rows.into_iter()
            .map(|row| {
                let (sid, cwd, id, meta): (i64, String, String, String) = (row.get(0), row.get(1), row.get(2), row.get(3));
                let session = self.session(sid, &encode_cwd(Path::new(&cwd)), &id);
                let meta = serde_json::from_str(&meta).map_err(|source| Error::Corrupt { path: session.name.join("meta.json"), source })?;
                Ok((Session::new(Arc::new(session)), meta))
            })
            .collect()
    }
}

impl SessionStore for PgSessions {
    fn dir(&self) -> &Path {
        &self.name
    }

    fn create(&self, id: Option<&str>, overview: &str) -> Result<Session> {
        self.made(id, overview, None)
    }

    fn create_proxied(&self, id: Option<&str>, overview: &str, proxied: &Proxied) -> Result<Session> {
        self.made(id, overview, Some(proxied))
    }

    fn list(&self) -> Result<Vec<(Session, Meta)>> {
        self.listed("SELECT sid, cwd, id, meta FROM workmem_session WHERE cwd = $1 ORDER BY sid", &[&self.cwd.display().to_string()])
    }

    fn shared(&self) -> bool {
        true
    }

    /// By the sessions' row numbers, which only grow and are committed in order (`made`).
    fn made_after(&self, cursor: u64) -> Result<(Vec<(Session, Meta)>, u64)> {
        let cwd = self.cwd.display().to_string();
        let after = i64::try_from(cursor).unwrap_or(i64::MAX);
        let last: Option<i64> = self.db.with(|c| c.query_one("SELECT max(sid) FROM workmem_session WHERE cwd = $1", &[&cwd]))?.get(0);
        let Some(last) = last.filter(|&l| l > after) else { return Ok((Vec::new(), cursor)) };
        let made =
            self.listed("SELECT sid, cwd, id, meta FROM workmem_session WHERE cwd = $1 AND sid > $2 AND sid <= $3 ORDER BY sid", &[&cwd, &after, &last])?;
        Ok((made, last as u64))
    }

    fn all(&self) -> Result<Vec<(Session, Meta)>> {
        self.listed("SELECT sid, cwd, id, meta FROM workmem_session ORDER BY sid", &[])
    }

    fn find(&self, id: &str) -> Result<Session> {
        let mine = self.listed("SELECT sid, cwd, id, meta FROM workmem_session WHERE cwd = $1 AND id = $2", &[&self.cwd.display().to_string(), &id])?;
        if let Some((session, _)) = mine.into_iter().next() {
            return Ok(session);
        }
        let mut any = self.listed("SELECT sid, cwd, id, meta FROM workmem_session WHERE id = $1 ORDER BY sid", &[&id])?;
        match any.len() {
            0 => Err(Error::NoSuchSession { id: id.to_string(), cwd: self.cwd.clone() }),
            1 => Ok(any.remove(0).0),
            _ => Err(Error::Ambiguous { id: id.to_string(), dirs: any.iter().map(|(s, _)| s.dir().to_path_buf()).collect() }),
        }
    }

    /// `postgres:/<folder>/<id>` (a session's [`StoredSession::dir`]), else an ID.
    fn resolve(&self, spec: &str) -> Result<Session> {
        let Some(rest) = spec.strip_prefix(SCHEME).map(|r| r.trim_start_matches('/')) else { return self.find(spec) };
        let found = self.all()?.into_iter().find(|(s, _)| s.dir().strip_prefix(SCHEME).is_ok_and(|p| p.to_string_lossy().trim_start_matches('/') == rest));
        found.map(|(s, _)| s).ok_or_else(|| Error::NotASession { dir: PathBuf::from(spec), why: "no session of the database has that name".into() })
    }
}

/// A grant names a session by its working directory's folder, its ID and its uid, as it names
/// a session directory.
impl SessionGrants for PgSessions {
    fn grant_name(&self, session: &Session) -> Result<GrantName> {
        GrantName::of(session)
    }

    fn open_granted(&self, name: &GrantName) -> Result<Session> {
        let found = self.listed("SELECT sid, cwd, id, meta FROM workmem_session WHERE folder = $1 AND id = $2", &[&name.folder(), &name.id()])?;
        let dir = PathBuf::from(format!("{SCHEME}/{}/{}", name.folder(), name.id()));
        let (session, _) =
            found.into_iter().next().ok_or_else(|| Error::NotASession { dir: dir.clone(), why: "no session of the database has that name".into() })?;
        if GrantName::of(&session)? != *name {
            return Err(Error::NotASession { dir, why: "it is a newer session with the granted one's ID".into() });
        }
        Ok(session)
    }
}

/// The proxy's secret and counts are rows beside the working directory's sessions, shared by
/// every replica on the database (one secret: a caller's sessions are its own on each).
impl ProxyState for PgSessions {
    fn secret(&self, name: &str) -> Result<String> {
        let drawn = format!("{}{}", random_uid()?, random_uid()?);
        let folder = self.folder();
        // Another replica may draw one at the same moment: the one kept is the one.
        self.db.with(|c| {
            c.execute("INSERT INTO workmem_proxy_state (folder, name, value) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING", &[&folder, &name, &drawn])?;
            c.query_one("SELECT value FROM workmem_proxy_state WHERE folder = $1 AND name = $2", &[&folder, &name]).map(|r| r.get(0))
        })
    }

    fn passed(&self) -> Result<Passed> {
        let folder = self.folder();
        let row = self.db.with(|c| c.query_opt("SELECT value FROM workmem_proxy_state WHERE folder = $1 AND name = $2", &[&folder, &PASSED]))?;
        let path = self.name.join(PASSED);
        row.map_or(Ok(Passed::default()), |r| serde_json::from_str(r.get::<_, &str>(0)).map_err(|source| Error::Corrupt { path, source }))
    }

    fn write_passed(&self, passed: &Passed) -> Result<()> {
        let value = serde_json::to_string(passed).expect("counts serialize");
        let sql = "INSERT INTO workmem_proxy_state (folder, name, value) VALUES ($1, $2, $3) ON CONFLICT (folder, name) DO UPDATE SET value = EXCLUDED.value";
        self.db.with(|c| c.execute(sql, &[&self.folder(), &PASSED, &value])).map(drop)
    }
}

/// The name the pass-through counts are kept under.
const PASSED: &str = "proxy-passed.json";

/// One session in the database.
#[derive(Debug, Clone)]
struct PgSession {
    db: Arc<Db>,
    sid: i64,
    name: PathBuf,
    wait: Duration,
    /// The view folded as far as this handle (and its clones) got, so that the next read
    /// takes only the rows logged since.
    kept: Arc<Mutex<Option<Kept>>>,
}

/// A folded view: through record `seq`, and the last record that rewrote it rather than add to
/// it (a compaction), or where it was first folded: what a view built on from an earlier one
/// must not come before ([`SessionLog::view_after`]).
#[derive(Debug, Clone, Default)]
struct Kept {
    seq: u64,
    view: View,
    rewritten: u64,
}

impl PgSession {
    /// The view folded up to the log's last row, from the one this handle keeps (taken out
    /// meanwhile; the caller puts it back): the rows after it, folded in. A row that reads an
    /// earlier one back by reference needs the whole log, read then.
    fn folded(&self) -> Result<Kept> {
        let held = self.kept.lock().unwrap_or_else(|p| p.into_inner()).take();
        let unheld = held.is_none();
        let mut kept = held.unwrap_or_default();
        let after = i64::try_from(kept.seq).unwrap_or(i64::MAX);
        let rows = self.db.with(|c| c.query("SELECT record FROM workmem_session_record WHERE sid = $1 AND seq > $2 ORDER BY seq", &[&self.sid, &after]))?;
        let mut all: Option<Vec<LogRecord>> = None;
        for row in &rows {
            let mut record: LogRecord = serde_json::from_str(row.get::<_, &str>(0)).map_err(self.corrupt("messages.jsonl"))?;
            if matches!(record.entry, Entry::Compaction(_)) {
                kept.rewritten = record.seq;
            }
            if let Entry::Message(m) = &mut record.entry
                && m.reads.is_some()
            {
                let records = match &mut all {
                    Some(records) => records,
                    None => all.insert(self.records()?),
                };
                messages::expand_read(m, records, record.seq);
            }
            kept.seq = record.seq;
            kept.view.push(record);
        }
        // A view not held since is not known to have only gained ([`SessionLog::view_after`]).
        if unheld {
            kept.rewritten = kept.seq;
        }
        Ok(kept)
    }

    /// An advisory lock of `class` on a connection of its own, tried until it is free or `wait`
    /// is over. Keyed by the class and the session's row number (past 2^31 rows, two sessions
    /// may share a key: they then wait on each other, never write at once).
    fn advisory(&self, class: i32, wait: Duration, holder: &str) -> Result<Locked> {
        let mut conn = self.db.lock_connection()?;
        let key = self.sid as i32;
        let started = Instant::now();
        let mut pause = Duration::from_millis(2);
        loop {
            let taken: bool = conn.query_one("SELECT pg_try_advisory_lock($1::int4, $2::int4)", &[&class, &key]).map_err(self.db.err())?.get(0);
            if taken {
                // Held by the connection that took it: a lock outlives no connection.
                return Ok(Locked::holding(Held { db: Arc::clone(&self.db), conn: Mutex::new(Some(conn)), class, key }));
            }
            if started.elapsed() >= wait {
                return Err(Error::Busy { dir: self.name.clone(), waited: started.elapsed(), holder: holder.to_string() });
            }
            std::thread::sleep(pause.min(wait.saturating_sub(started.elapsed())));
            pause = (pause * 2).min(Duration::from_millis(50));
        }
    }

    fn corrupt(&self, what: &str) -> impl Fn(serde_json::Error) -> Error + '_ {
        let path = self.name.join(what);
        move |source| Error::Corrupt { path: path.clone(), source }
    }

    fn file(&self, name: &str) -> Result<Option<String>> {
        let row = self.db.with(|c| c.query_opt("SELECT content FROM workmem_session_file WHERE sid = $1 AND name = $2", &[&self.sid, &name]))?;
        Ok(row.map(|r| r.get(0)))
    }
}

impl SessionLog for PgSession {
    fn records(&self) -> Result<Vec<LogRecord>> {
        let rows = self.db.with(|c| c.query("SELECT record FROM workmem_session_record WHERE sid = $1 ORDER BY seq", &[&self.sid]))?;
        rows.iter().map(|r| serde_json::from_str(r.get::<_, &str>(0)).map_err(self.corrupt("messages.jsonl"))).collect()
    }

    /// Folded on from the view this handle keeps: only the rows logged since are read.
    fn view_to(&self) -> Result<(View, u64)> {
        let kept = self.folded()?;
        let view = (kept.view.clone(), kept.seq);
        *self.kept.lock().unwrap_or_else(|p| p.into_inner()) = Some(kept);
        Ok(view)
    }

    fn view_after(&self, seq: u64) -> Result<Option<(View, u64)>> {
        let kept = self.folded()?;
        let gained = (kept.rewritten <= seq && seq <= kept.seq).then(|| {
            let from = kept.view.entries.partition_point(|(s, _)| *s <= seq);
            (View { entries: kept.view.entries[from..].to_vec(), last_compaction: kept.view.last_compaction.clone() }, kept.seq)
        });
        *self.kept.lock().unwrap_or_else(|p| p.into_inner()) = Some(kept);
        Ok(gained)
    }

    fn release_view(&self) {
        *self.kept.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    fn next_seq(&self) -> Result<u64> {
        let last: Option<i64> = self.db.with(|c| c.query_one("SELECT max(seq) FROM workmem_session_record WHERE sid = $1", &[&self.sid]))?.get(0);
        Ok(last.map_or(1, |s| s as u64 + 1))
    }

    /// One transaction, numbered on from the log's last record: committed is durable, so
    /// `Deferred` is `Synced` here.
    fn append_all(&self, _: &Locked, entries: Vec<(Entry, Option<Usage>)>, _: Durability) -> Result<Vec<LogRecord>> {
        if entries.is_empty() {
            return Ok(Vec::new());
        }
        let at = crate::now();
        self.db.with(|c| {
            let mut t = c.transaction()?;
            let last: Option<i64> = t.query_one("SELECT max(seq) FROM workmem_session_record WHERE sid = $1", &[&self.sid])?.get(0);
            let mut seq = last.unwrap_or(0);
            let mut records = Vec::with_capacity(entries.len());
            for (entry, usage) in entries {
                seq += 1;
                let record = LogRecord { seq: seq as u64, at: at.clone(), entry, usage };
                let line = serde_json::to_string(&record).expect("a log record serializes");
                t.execute("INSERT INTO workmem_session_record (sid, seq, record) VALUES ($1, $2, $3)", &[&self.sid, &seq, &line])?;
                records.push(record);
            }
            t.commit()?;
            Ok(records)
        })
    }

    fn sync_log(&self) -> Result<()> {
        Ok(())
    }
}

impl MemoryCommit for PgSession {
    fn load_memory(&self, _: &Locked) -> Result<Option<String>> {
        match self.committed_memory()? {
            Some((None, _)) | None => {
                let updates = self.meta()?.updates;
                if updates > 0 {
                    return Err(Error::MissingState { dir: self.name.clone(), updates: u32::try_from(updates).unwrap_or(u32::MAX) });
                }
                Ok(None)
            }
            Some((state, _)) => Ok(state),
        }
    }

    /// One statement: the state and the overview one commit left.
    fn committed_memory(&self) -> Result<Option<(Option<String>, String)>> {
        let row = self.db.with(|c| {
            c.query_opt(
                "SELECT s.state, f.content FROM workmem_session s LEFT JOIN workmem_session_file f ON f.sid = s.sid AND f.name = $2 WHERE s.sid = $1",
                &[&self.sid, &super::dirs::OVERVIEW],
            )
        })?;
        Ok(row.map(|r| (r.get(0), r.get::<_, Option<String>>(1).unwrap_or_default())))
    }

    fn log(&self) -> Result<Vec<serde_json::Value>> {
        let rows = self.db.with(|c| c.query("SELECT record FROM workmem_session_update WHERE sid = $1 ORDER BY seq", &[&self.sid]))?;
        rows.iter().map(|r| serde_json::from_str(r.get::<_, &str>(0)).map_err(self.corrupt("updates.jsonl"))).collect()
    }

    fn keyed_update(&self, key: &str) -> Result<Option<KeyedUpdate>> {
        let row = self.db.with(|c| c.query_opt("SELECT digest, seq FROM workmem_session_key WHERE sid = $1 AND key = $2", &[&self.sid, &key]))?;
        Ok(row.map(|r| KeyedUpdate { key: key.to_string(), digest: r.get(0), seq: r.get::<_, i64>(1) as u32 }))
    }

    /// One transaction: the update's record (each record, for a commit that takes another
    /// session's memory), its key, the state, the overview and meta's count.
    fn commit(&self, _: &Locked, commit: &Commit) -> Result<()> {
        let mut meta = self.meta()?;
        meta.count(commit);
        let meta = serde_json::to_string(&meta).expect("meta serializes");
        let mut lines = Vec::new();
        for line in commit.log_entry.lines() {
            let record: serde_json::Value = serde_json::from_str(line).map_err(self.corrupt("updates.jsonl"))?;
            lines.push((record["seq"].as_i64().unwrap_or(i64::from(commit.seq)), line.to_string()));
        }
        self.db.with(|c| {
            let mut t = c.transaction()?;
            for (seq, line) in &lines {
                t.execute("INSERT INTO workmem_session_update (sid, seq, record) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING", &[&self.sid, seq, line])?;
            }
            if let Some((key, digest)) = &commit.request {
                t.execute(
                    "INSERT INTO workmem_session_key (sid, key, digest, seq) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
                    &[&self.sid, key, digest, &i64::from(commit.seq)],
                )?;
            }
            t.execute("UPDATE workmem_session SET state = $2, meta = $3 WHERE sid = $1", &[&self.sid, &commit.state, &meta])?;
            t.execute(
                "INSERT INTO workmem_session_file (sid, name, content) VALUES ($1, $2, $3) ON CONFLICT (sid, name) DO UPDATE SET content = EXCLUDED.content",
                &[&self.sid, &super::dirs::OVERVIEW, &commit.overview],
            )?;
            t.commit()
        })
    }
}

impl StoredSession for PgSession {
    fn dir(&self) -> &Path {
        &self.name
    }

    fn meta(&self) -> Result<Meta> {
        let row = self.db.with(|c| c.query_opt("SELECT meta FROM workmem_session WHERE sid = $1", &[&self.sid]))?;
        let row = row.ok_or_else(|| Error::NotASession { dir: self.name.clone(), why: "it was removed".into() })?;
        serde_json::from_str(row.get::<_, &str>(0)).map_err(self.corrupt("meta.json"))
    }

    fn write_meta(&self, _: &Locked, meta: &Meta) -> Result<()> {
        let meta = serde_json::to_string(meta).expect("meta serializes");
        self.db.with(|c| c.execute("UPDATE workmem_session SET meta = $2 WHERE sid = $1", &[&self.sid, &meta])).map(drop)
    }

    fn overview(&self) -> Result<String> {
        Ok(self.file(super::dirs::OVERVIEW)?.unwrap_or_default())
    }

    fn lock(&self) -> Result<Locked> {
        self.advisory(WRITES, self.wait, "another connection to the database holds it (a PostgreSQL advisory lock)")
    }

    fn hold_exchange(&self, wait: Duration) -> Result<Option<Locked>> {
        self.advisory(EXCHANGES, wait, "another request of its conversation holds it, on this replica or another (a PostgreSQL advisory lock)").map(Some)
    }

    fn waiting_at_most(&self, wait: Duration) -> Arc<dyn StoredSession> {
        Arc::new(PgSession { wait, ..self.clone() })
    }

    fn memory_files(&self) -> Box<dyn MemoryFileStore> {
        Box::new(PgFiles(self.clone()))
    }

    fn remove(&self) -> Result<()> {
        self.db.with(|c| c.execute("DELETE FROM workmem_session WHERE sid = $1", &[&self.sid])).map(drop)
    }
}

/// A session's memory files, by name, under the rule every store keeps ([`memory_name`]).
struct PgFiles(PgSession);

impl PgFiles {
    fn failed(name: &str, e: Error) -> PathError {
        let mut message = e.to_string();
        let mut source = std::error::Error::source(&e);
        while let Some(s) = source {
            message.push_str(&format!(": {s}"));
            source = s.source();
        }
        PathError::Io { name: name.into(), kind: std::io::ErrorKind::Other, message }
    }
}

impl MemoryFileStore for PgFiles {
    fn read(&self, name: &str) -> std::result::Result<String, PathError> {
        memory_name(name)?;
        let missing = || PathError::Io { name: name.into(), kind: std::io::ErrorKind::NotFound, message: "no such file".into() };
        self.0.file(name).map_err(|e| Self::failed(name, e))?.ok_or_else(missing)
    }

    fn write(&self, name: &str, content: &str) -> std::result::Result<(), PathError> {
        memory_name(name)?;
        let sql = "INSERT INTO workmem_session_file (sid, name, content) VALUES ($1, $2, $3) ON CONFLICT (sid, name) DO UPDATE SET content = EXCLUDED.content";
        self.0.db.with(|c| c.execute(sql, &[&self.0.sid, &name, &content])).map(drop).map_err(|e| Self::failed(name, e))
    }

    fn list(&self, name: &str) -> std::result::Result<Vec<String>, PathError> {
        memory_name(name)?;
        let under = format!("{}/", name.trim_end_matches('/'));
        let rows = self
            .0
            .db
            .with(|c| c.query("SELECT name FROM workmem_session_file WHERE sid = $1 AND starts_with(name, $2) ORDER BY name", &[&self.0.sid, &under]))
            .map_err(|e| Self::failed(name, e))?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }
}
