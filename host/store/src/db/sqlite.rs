//! The embedded default: one SQLite file, in WAL mode so readers never wait for the writer.

use super::sql::{Change, Kind, Param, Row, Sql, Value};
use super::{Error, Result};
use rusqlite::types::ValueRef;
use std::path::Path;
use std::time::{Duration, Instant};

pub struct Sqlite {
    conn: rusqlite::Connection,
    /// The data version `listen` saw, or the last one a wait saw change.
    seen: Option<i64>,
}

/// How long a writer waits for another's transaction before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// How often a follower polls for another connection's commit (SQLite cannot signal one).
const POLL: Duration = Duration::from_millis(100);

impl Sqlite {
    pub fn open(path: &Path) -> Result<Self> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| Error::Open { target: path.display().to_string(), source: source.into() })?;
        }
        let conn = rusqlite::Connection::open(path).map_err(|source| Error::Open { target: path.display().to_string(), source: source.into() })?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(db)?;
        // synchronous=FULL: an acknowledged mutation survives a power cut, not only a crash.
        conn.execute_batch("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;").map_err(db)?;
        claim(&conn, path)?;
        Ok(Sqlite { conn, seen: None })
    }

    /// WAL: readers see the last commit while a writer works. Switched on once the file is
    /// known to be workmem's and of a schema this workmem knows (it changes the file).
    ///
    /// SQLite answers a connection that switches the mode while another has the file open
    /// with "database is locked" at once, never calling the busy handler: so several
    /// processes opening a new database together retry here, within [`BUSY_TIMEOUT`].
    pub fn use_wal(&mut self) -> Result<()> {
        let deadline = Instant::now() + BUSY_TIMEOUT;
        loop {
            match self.conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0)) {
                Ok(_) => return Ok(()),
                Err(e) if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy) && Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(e) => return Err(db(e)),
            }
        }
    }

    /// Changes whenever another connection commits to the database (in this process or not).
    fn data_version(&self) -> Result<i64> {
        self.conn.query_row("PRAGMA data_version", [], |r| r.get(0)).map_err(db)
    }
}

/// workmem's mark in a SQLite file's header (`PRAGMA application_id`): "wmem".
const APPLICATION_ID: i64 = 0x776d_656d;

/// Makes sure the file at `path` is workmem's before anything writes to it: an empty
/// database (a new file), one with workmem's mark, or one an older workmem made (its schema
/// table, no mark) is marked and taken; anything else, another program's database, is
/// refused untouched.
fn claim(conn: &rusqlite::Connection, path: &Path) -> Result<()> {
    let one = |sql: &str| conn.query_row(sql, [], |r| r.get::<_, i64>(0)).map_err(db);
    let mark = one("PRAGMA application_id")?;
    if mark == APPLICATION_ID {
        return Ok(());
    }
    let tables = one("SELECT COUNT(*) FROM sqlite_master")?;
    let ours = one("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'workmem_schema'")? == 1;
    if mark != 0 || (tables > 0 && !ours) {
        return Err(Error::Open {
            target: path.display().to_string(),
            source: format!("it is another program's SQLite database ({tables} tables, application ID {mark:#x}), not workmem's; nothing was changed").into(),
        });
    }
    conn.execute_batch(&format!("PRAGMA application_id = {APPLICATION_ID}")).map_err(db)
}

fn db(e: rusqlite::Error) -> Error {
    Error::Db(e.into())
}

/// SQLite reads `?1` where PostgreSQL reads `$1`.
fn sqlite_sql(sql: &str) -> String {
    sql.replace('$', "?")
}

fn bind(params: &[Param<'_>]) -> Vec<rusqlite::types::Value> {
    params
        .iter()
        .map(|p| match p {
            Param::Null => rusqlite::types::Value::Null,
            Param::Int(v) => rusqlite::types::Value::Integer(*v),
            Param::Text(v) => rusqlite::types::Value::Text((*v).to_string()),
        })
        .collect()
}

impl Sql for Sqlite {
    fn kind(&self) -> Kind {
        Kind::Sqlite
    }

    fn listen(&mut self) -> Result<()> {
        if self.seen.is_none() {
            self.seen = Some(self.data_version()?);
        }
        Ok(())
    }

    fn wait_for_change(&mut self, timeout: Duration) -> Result<Change> {
        self.listen()?;
        let deadline = Instant::now() + timeout;
        loop {
            let version = Some(self.data_version()?);
            if version != self.seen {
                self.seen = version;
                return Ok(Change::Unknown);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(Change::None);
            }
            std::thread::sleep(left.min(POLL));
        }
    }

    fn healthy(&mut self) -> bool {
        self.conn.is_autocommit() && self.conn.query_row("SELECT 1", [], |r| r.get::<_, i64>(0)).is_ok()
    }

    fn batch(&mut self, sql: &str) -> Result<()> {
        self.conn.execute_batch(sql).map_err(db)
    }

    fn execute(&mut self, sql: &str, params: &[Param<'_>]) -> Result<u64> {
        let mut stmt = self.conn.prepare_cached(&sqlite_sql(sql)).map_err(db)?;
        Ok(stmt.execute(rusqlite::params_from_iter(bind(params))).map_err(db)? as u64)
    }

    fn query(&mut self, sql: &str, params: &[Param<'_>]) -> Result<Vec<Row>> {
        let mut stmt = self.conn.prepare_cached(&sqlite_sql(sql)).map_err(db)?;
        let columns = stmt.column_count();
        let mut rows = stmt.query(rusqlite::params_from_iter(bind(params))).map_err(db)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(db)? {
            let mut values = Vec::with_capacity(columns);
            for i in 0..columns {
                values.push(match row.get_ref(i).map_err(db)? {
                    ValueRef::Null => Value::Null,
                    ValueRef::Integer(v) => Value::Int(v),
                    ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
                    other => return Err(Error::Schema(format!("unexpected column type {:?}", other.data_type()))),
                });
            }
            out.push(values);
        }
        Ok(out)
    }
}
