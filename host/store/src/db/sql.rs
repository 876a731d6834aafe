//! The little SQL both backends speak: statements written once with `$1`-style parameters,
//! values that are integers or text, and a transaction around a closure. SQLite and
//! PostgreSQL differ only where this says so ([`Sql::kind`]).

use super::{Error, Result};
use std::collections::BTreeSet;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Sqlite,
    Postgres,
}

/// What a wait for a board change saw.
#[derive(Debug, PartialEq, Eq)]
pub enum Change {
    /// Nothing before the timeout.
    None,
    /// These boards changed (PostgreSQL's notifications name them).
    Boards(BTreeSet<String>),
    /// Something in the database changed, and the backend cannot say what (SQLite's data
    /// version): the caller finds out.
    Unknown,
}

#[derive(Debug, Clone, Copy)]
pub enum Param<'a> {
    Null,
    Int(i64),
    Text(&'a str),
}

impl<'a> From<Option<&'a str>> for Param<'a> {
    fn from(v: Option<&'a str>) -> Self {
        v.map_or(Param::Null, Param::Text)
    }
}

impl From<i64> for Param<'_> {
    fn from(v: i64) -> Self {
        Param::Int(v)
    }
}

impl<'a> From<&'a str> for Param<'a> {
    fn from(v: &'a str) -> Self {
        Param::Text(v)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Null,
    Int(i64),
    Text(String),
}

impl Value {
    pub fn int(&self) -> Result<i64> {
        match self {
            Value::Int(v) => Ok(*v),
            other => Err(Error::Schema(format!("expected an integer, found {other:?}"))),
        }
    }

    pub fn text(self) -> Result<String> {
        match self {
            Value::Text(v) => Ok(v),
            other => Err(Error::Schema(format!("expected text, found {other:?}"))),
        }
    }

    pub fn opt_text(self) -> Result<Option<String>> {
        match self {
            Value::Null => Ok(None),
            other => other.text().map(Some),
        }
    }
}

pub type Row = Vec<Value>;

/// A connection to a board database. Statements are prepared once per connection.
pub trait Sql: Send {
    fn kind(&self) -> Kind;
    fn batch(&mut self, sql: &str) -> Result<()>;
    fn execute(&mut self, sql: &str, params: &[Param<'_>]) -> Result<u64>;
    fn query(&mut self, sql: &str, params: &[Param<'_>]) -> Result<Vec<Row>>;

    /// Starts a transaction that writes: on SQLite it takes the write lock at once, so two
    /// writers queue instead of failing at commit.
    fn begin_write(&mut self) -> Result<()> {
        self.batch(match self.kind() {
            Kind::Sqlite => "BEGIN IMMEDIATE",
            Kind::Postgres => "BEGIN",
        })
    }

    /// Starts noticing board changes: one committed by another connection after this wakes
    /// [`Sql::wait_for_change`]. Idempotent.
    fn listen(&mut self) -> Result<()>;

    /// Waits until another connection has changed a board since `listen` or the last wake,
    /// or `timeout`; says which, where the backend can tell.
    fn wait_for_change(&mut self, timeout: std::time::Duration) -> Result<Change>;

    /// Starts a mutation: a write transaction with the board's head locked. Returns its
    /// revision, its tip and the events after `after` (what the resident board lacks), or
    /// `None` when there is no such board. The transaction stays open either way.
    fn lock_head(&mut self, board: &str, after: u64) -> Result<Option<Locked>> {
        self.begin_write()?;
        let for_update = self.for_update();
        let head = self.query(&format!("SELECT revision, tip FROM boards WHERE id = $1{for_update}"), &[board.into()])?;
        let Some(row) = head.into_iter().next() else { return Ok(None) };
        let mut row = row.into_iter();
        let revision = rev(&row.next().unwrap_or(Value::Null))?;
        let tip = row.next().unwrap_or(Value::Null).text()?;
        let events = if revision > after { events_between(self, board, after, revision)? } else { Vec::new() };
        Ok(Some(Locked { revision, tip, events }))
    }

    /// Ends a mutation: appends its event, advances the head, writes a snapshot when one is
    /// due, notifies followers where the database can, and commits.
    fn append_commit(&mut self, a: &Append<'_>) -> Result<()> {
        let revision = bigint(a.revision);
        self.execute(
            "INSERT INTO board_events (board, revision, actor, at, event, request_key, request_digest) VALUES ($1, $2, $3, $4, $5, $6, $7)",
            &[
                a.board.into(),
                revision,
                a.actor.into(),
                a.at.into(),
                a.event.into(),
                a.request.map(|r| r.key.as_str()).into(),
                a.request.map(|r| r.digest.as_str()).into(),
            ],
        )?;
        match a.status {
            Some((status, archived_at)) => self.execute(
                "UPDATE boards SET revision = $2, updated_at = $3, tip = $6, status = $4, archived_at = $5 WHERE id = $1",
                &[a.board.into(), revision, a.at.into(), status.into(), archived_at.into(), a.tip.into()],
            )?,
            None => self
                .execute("UPDATE boards SET revision = $2, updated_at = $3, tip = $4 WHERE id = $1", &[a.board.into(), revision, a.at.into(), a.tip.into()])?,
        };
        if let Some(state) = a.snapshot {
            self.execute("INSERT INTO board_snapshots (board, revision, state) VALUES ($1, $2, $3)", &[a.board.into(), revision, state.into()])?;
            // Only the creation's snapshot (where a rebuild starts) and the newest (where a
            // load starts) are ever read: keeping every one grew storage with the square of
            // the board (40,000 tasks: 868 MB of snapshots beside 6.3 MB of events).
            self.execute("DELETE FROM board_snapshots WHERE board = $1 AND revision > 0 AND revision < $2", &[a.board.into(), revision])?;
        }
        self.batch("COMMIT")
    }

    /// Whether the connection still answers and is in no transaction: after a statement of
    /// one request failed, the handle is kept for the next only if so (a transaction left
    /// open would hold its locks into the next request).
    fn healthy(&mut self) -> bool;

    /// `FOR UPDATE` where the database has it: PostgreSQL locks the row read; SQLite's write
    /// transaction already holds the database.
    fn for_update(&self) -> &'static str {
        match self.kind() {
            Kind::Sqlite => "",
            Kind::Postgres => " FOR UPDATE",
        }
    }
}

/// A locked head: the board's revision and tip, and the events the caller lacks,
/// `(revision, event)`.
pub struct Locked {
    pub revision: u64,
    pub tip: String,
    pub events: Vec<(u64, String)>,
}

/// One applied op, to be stored.
pub struct Append<'a> {
    pub board: &'a str,
    pub revision: u64,
    pub actor: &'a str,
    pub at: &'a str,
    pub event: &'a str,
    /// The board's tip after this event (see `board::next_tip`).
    pub tip: &'a str,
    /// The request's idempotency key, stored with the event.
    pub request: Option<&'a super::RequestKey>,
    /// The board's new status and archive time, when the op changed its status.
    pub status: Option<(&'a str, Option<&'a str>)>,
    /// The board's state, when a snapshot is due at this revision.
    pub snapshot: Option<&'a str>,
}

/// A revision or count as SQL's BIGINT; past its range (a limit of "all"), its maximum.
pub fn bigint(v: u64) -> Param<'static> {
    Param::Int(i64::try_from(v).unwrap_or(i64::MAX))
}

pub fn rev(v: &Value) -> Result<u64> {
    u64::try_from(v.int()?).map_err(|_| Error::Schema("a negative revision".into()))
}

/// The events with revisions in `(after, until]`, oldest first.
pub fn events_between(db: &mut (impl Sql + ?Sized), board: &str, after: u64, until: u64) -> Result<Vec<(u64, String)>> {
    let rows = db.query(
        "SELECT revision, event FROM board_events WHERE board = $1 AND revision > $2 AND revision <= $3 ORDER BY revision",
        &[board.into(), bigint(after), bigint(until)],
    )?;
    rows.into_iter()
        .map(|row| {
            let mut row = row.into_iter();
            Ok((rev(&row.next().unwrap_or(Value::Null))?, row.next().unwrap_or(Value::Null).text()?))
        })
        .collect()
}

/// Runs `f` in a write transaction: committed when it returns `Ok`, rolled back otherwise.
pub fn write<T>(db: &mut dyn Sql, f: impl FnOnce(&mut dyn Sql) -> Result<T>) -> Result<T> {
    db.begin_write()?;
    finish(db, f)
}

/// Runs `f` in a read transaction: one consistent view of the database.
pub fn read<T>(db: &mut dyn Sql, f: impl FnOnce(&mut dyn Sql) -> Result<T>) -> Result<T> {
    db.batch(match db.kind() {
        Kind::Sqlite => "BEGIN",
        Kind::Postgres => "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
    })?;
    finish(db, f)
}

fn finish<T>(db: &mut dyn Sql, f: impl FnOnce(&mut dyn Sql) -> Result<T>) -> Result<T> {
    match f(db) {
        Ok(value) => {
            db.batch("COMMIT")?;
            Ok(value)
        }
        Err(e) => {
            // The error that stopped the transaction is the one to report.
            let _ = db.batch("ROLLBACK");
            Err(e)
        }
    }
}
