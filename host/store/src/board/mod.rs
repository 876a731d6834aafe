//! Spec 002's shared boards, stored: SQLite as the embedded default (one file) and
//! PostgreSQL for boards shared across machines, the same code over both ([`sql::Sql`]).
//!
//! The engine decides (every op goes through the board in the engine, which applies all of
//! it or nothing) and this module does the I/O. A board is a head row (revision, status), an
//! append-only event log (one engine-written event per applied op: who, when, what), and a
//! snapshot of its state every [`Config::snapshot_every`] revisions. Every mutation runs in
//! one transaction that locks the head, checks the writer's expected revision (a stale one
//! gets [`Error::Conflict`] with the current revision, and nothing is written), applies the
//! op to the board kept resident in an engine instance, and appends the event. Snapshot plus
//! the events after it is the board, so it survives restarts and rebuilds from its log.

pub use crate::db::{Error, Result};

use crate::db::sql::{self, Change, Sql, Value, bigint, rev};
use crate::db::{RequestKey, Scope, connect, grants};
use std::collections::{BTreeSet, HashMap};
use std::time::{Duration, SystemTime};
use workmem_runtime::Runtime;
use workmem_runtime::board::{Board, BoardStatus, Op, View};

/// How boards are kept.
#[derive(Debug, Clone)]
pub struct Config {
    /// Revisions between snapshots of a board's state: loading replays at most this many events.
    pub snapshot_every: u64,
    /// How long a claim on a task holds without a heartbeat before it may be reclaimed.
    pub lease: Duration,
    /// How long an archived board is kept before [`Boards::collect_garbage`] deletes it.
    pub retention: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Config { snapshot_every: 256, lease: Duration::from_secs(15 * 60), retention: Duration::from_secs(30 * 24 * 3600) }
    }
}

/// An applied op as stored: its revision and the engine's event.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Event {
    pub revision: u64,
    pub actor: String,
    pub at: String,
    /// The engine's event record (JSON), as the log keeps it.
    pub event: String,
}

/// A board's head: what lists and garbage collection read without loading the board.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Head {
    pub id: String,
    pub revision: u64,
    pub status: String,
    pub created_at: String,
    pub updated_at: String,
    pub archived_at: Option<String>,
}

/// Boards kept resident in engine instances by one [`Boards`], at most.
pub const MAX_RESIDENT: usize = 64;

/// The boards in one database, with the ones in use kept resident in engine instances.
pub struct Boards {
    db: Box<dyn Sql>,
    runtime: Runtime,
    config: Config,
    resident: HashMap<String, Resident>,
    /// Each board's revision when [`Boards::wait_for_change`] last looked, where the backend
    /// cannot say which boards changed (SQLite): the difference is the answer.
    revisions: Option<HashMap<String, u64>>,
}

struct Resident {
    board: Board,
    revision: u64,
    /// The tip of the history this copy was built from, as of `revision`.
    tip: String,
}

/// A board's tip after `event` is appended to the history whose tip was `tip`: a digest of
/// the whole history, so two histories that reach one revision differently have different
/// tips.
fn next_tip(tip: &str, event: &str) -> String {
    use sha2::{Digest, Sha256};
    let mut hash = Sha256::new();
    hash.update(tip.as_bytes());
    hash.update(b"\n");
    hash.update(event.as_bytes());
    hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// A new board's tip: random, so a board created again with an old one's ID starts a
/// history of its own.
fn first_tip() -> Result<String> {
    let mut seed = [0u8; 16];
    getrandom::fill(&mut seed).map_err(|e| Error::Db(e.to_string().into()))?;
    Ok(seed.iter().map(|b| format!("{b:02x}")).collect())
}

fn status_name(s: BoardStatus) -> &'static str {
    match s {
        BoardStatus::Active => "active",
        BoardStatus::Completed => "completed",
        BoardStatus::Cancelled => "cancelled",
        BoardStatus::Archived => "archived",
    }
}

fn rfc3339(t: SystemTime) -> String {
    humantime::format_rfc3339_seconds(t).to_string()
}

impl Boards {
    /// Whether its database connection still answers ([`Sql::healthy`](crate::db::sql::Sql::healthy)).
    pub fn healthy(&mut self) -> bool {
        self.db.healthy()
    }

    /// Opens (creating and migrating as needed) the database at `target`: a `postgres://`
    /// or `postgresql://` URL, or a SQLite file path.
    pub fn open(target: &str, runtime: Runtime, config: Config) -> Result<Self> {
        Ok(Boards { db: connect(target)?, runtime, config, resident: HashMap::new(), revisions: None })
    }

    /// Creates an active board at revision 0. Errors: it exists, or the engine refuses a
    /// field (the ID included: `invalid-id`).
    pub fn create(&mut self, id: &str, name: &str, goal: &str, constraints: &[String], memory_core_refs: &[String]) -> Result<()> {
        let now = crate::now();
        let mut board = match self.runtime.create_board(id, name, goal, constraints, memory_core_refs, &now)? {
            Ok(board) => board,
            Err(error) => {
                let (rule, message) = (self.runtime.board_error_rule(&error)?, self.runtime.describe_board_error(&error)?);
                return Err(Error::Refused { error, rule, message });
            }
        };
        let state = board.save()?;
        let tip = first_tip()?;
        sql::write(self.db.as_mut(), |db| {
            // One statement decides: a check before the insert let two creators both pass it,
            // and the loser got the database's unique violation instead of `exists`.
            let made = db.execute(
                "INSERT INTO boards (id, revision, status, created_at, updated_at, tip) VALUES ($1, 0, 'active', $2, $2, $3) ON CONFLICT (id) DO NOTHING",
                &[id.into(), now.as_str().into(), tip.as_str().into()],
            )?;
            if made == 0 {
                return Err(Error::Exists(id.into()));
            }
            db.execute("INSERT INTO board_snapshots (board, revision, state) VALUES ($1, 0, $2)", &[id.into(), state.as_str().into()])?;
            Ok(())
        })?;
        self.resident.insert(id.into(), Resident { board, revision: 0, tip });
        Ok(())
    }

    /// Applies `op` by `actor`, now. With `expected`, only if the board is still at that
    /// revision ([`Error::Conflict`] otherwise). Returns the stored event.
    pub fn apply(&mut self, id: &str, expected: Option<u64>, actor: &str, op: &Op) -> Result<Event> {
        self.apply_input(id, expected, actor, Input::Op(op), None)
    }

    /// [`Boards::apply`] with the op in the log's JSON (`{"op": "add_task", ...}`), as an
    /// API client sends it; the engine parses it (`invalid-op` when it is not an op).
    pub fn apply_json(&mut self, id: &str, expected: Option<u64>, actor: &str, op: &str) -> Result<Event> {
        self.apply_input(id, expected, actor, Input::Json(op), None)
    }

    /// [`Boards::apply_json`] once per idempotency key: a request retried with the key of one
    /// that was applied gets that op's event back and writes nothing ([`Error::KeyReused`]
    /// when the key came with another request: the caller's digest tells).
    pub fn apply_json_once(&mut self, id: &str, expected: Option<u64>, actor: &str, op: &str, request: &RequestKey) -> Result<Event> {
        self.apply_input(id, expected, actor, Input::Json(op), Some(request))
    }

    fn apply_input(&mut self, id: &str, expected: Option<u64>, actor: &str, op: Input<'_>, request: Option<&RequestKey>) -> Result<Event> {
        let now = crate::now();
        // Not resident: no events wanted, the board loads from its latest snapshot.
        let after = self.resident.get(id).map_or(i64::MAX as u64, |r| r.revision);
        let result = match self.db.lock_head(id, after) {
            Ok(Some(head)) => match request.map(|r| applied_before(self.db.as_mut(), id, r)).transpose() {
                // Applied before: its outcome, and nothing written now.
                Ok(Some(Some(event))) => self.db.batch("ROLLBACK").map(|()| event),
                Ok(_) => self.apply_locked(id, expected, actor, op, &now, head, request),
                Err(e) => Err(e),
            },
            Ok(None) => Err(Error::NoBoard(id.into())),
            Err(e) => Err(e),
        };
        if result.is_err() {
            // Nothing was committed; the resident board may be ahead of the database (or its
            // instance lost), so the next use loads it again.
            let _ = self.db.batch("ROLLBACK");
            self.resident.remove(id);
        }
        result
    }

    /// The rest of [`Boards::apply`], with the head locked and the events the resident board
    /// lacks in hand; commits on success.
    #[allow(clippy::too_many_arguments)]
    fn apply_locked(
        &mut self,
        id: &str,
        expected: Option<u64>,
        actor: &str,
        op: Input<'_>,
        now: &str,
        head: sql::Locked,
        request: Option<&RequestKey>,
    ) -> Result<Event> {
        if let Some(expected) = expected.filter(|e| *e != head.revision) {
            return Err(Error::Conflict { board: id.into(), expected, current: head.revision });
        }
        let Boards { db, runtime, resident, config, .. } = self;
        let r = bring_up_to(db.as_mut(), runtime, resident, id, head)?;
        let applied = match op {
            Input::Op(op) => r.board.apply(actor, now, op)?,
            Input::Json(op) => r.board.apply_json(actor, now, op)?,
        };
        let applied = match applied {
            Ok(applied) => applied,
            Err(error) => return Err(refused(&mut r.board, error)?),
        };
        r.revision = applied.revision;
        r.tip = next_tip(&r.tip, &applied.event);
        let status = match op {
            Input::Op(Op::Close(_) | Op::Archive) | Input::Json(_) => Some(status_name(r.board.status()?)),
            Input::Op(_) => None,
        };
        let snapshot = if applied.revision % config.snapshot_every.max(1) == 0 { Some(r.board.save()?) } else { None };
        db.append_commit(&sql::Append {
            board: id,
            revision: applied.revision,
            actor,
            at: now,
            event: &applied.event,
            tip: &r.tip,
            request,
            status: status.map(|s| (s, (s == "archived").then_some(now))),
            snapshot: snapshot.as_deref(),
        })?;
        Ok(Event { revision: applied.revision, actor: actor.into(), at: now.into(), event: applied.event })
    }

    /// The board's head: revision, status and times.
    pub fn head(&mut self, id: &str) -> Result<Head> {
        let rows = self.db.query("SELECT id, revision, status, created_at, updated_at, archived_at FROM boards WHERE id = $1", &[id.into()])?;
        rows.into_iter().next().map(head).ok_or_else(|| Error::NoBoard(id.into()))?
    }

    /// The board's current revision.
    pub fn revision(&mut self, id: &str) -> Result<u64> {
        let rows = self.db.query("SELECT revision FROM boards WHERE id = $1", &[id.into()])?;
        rev(rows.first().and_then(|r| r.first()).ok_or_else(|| Error::NoBoard(id.into()))?)
    }

    /// Runs `f` on the board as of its latest revision; returns that revision too.
    pub fn read<T>(&mut self, id: &str, f: impl FnOnce(&mut Board) -> Result<T>) -> Result<(u64, T)> {
        let Boards { db, runtime, resident, .. } = self;
        let result = sql::read(db.as_mut(), |db| {
            let row = db.query("SELECT revision, tip FROM boards WHERE id = $1", &[id.into()])?.into_iter().next().ok_or_else(|| Error::NoBoard(id.into()))?;
            let mut row = row.into_iter();
            let (revision, tip) = (rev(&row.next().unwrap_or(Value::Null))?, row.next().unwrap_or(Value::Null).text()?);
            let after = resident.get(id).map_or(revision, |r| r.revision.min(revision));
            let events = sql::events_between(db, id, after, revision)?;
            let r = bring_up_to(db, runtime, resident, id, sql::Locked { revision, tip, events })?;
            Ok((revision, f(&mut r.board)?))
        });
        if result.is_err() {
            resident.remove(id);
        }
        result
    }

    /// A view as the engine's JSON.
    pub fn view(&mut self, id: &str, v: &View) -> Result<String> {
        let (_, json) = self.read(id, |b| match b.view(v)? {
            Ok(json) => Ok(json),
            Err(error) => Err(refused(b, error)?),
        })?;
        Ok(json)
    }

    /// Task `task`'s context as a worker's LLM reads it (markdown).
    pub fn brief(&mut self, id: &str, task: &str) -> Result<String> {
        let (_, text) = self.read(id, |b| match b.brief(task)? {
            Ok(text) => Ok(text),
            Err(error) => Err(refused(b, error)?),
        })?;
        Ok(text)
    }

    /// The board's serialized state (the engine's form).
    pub fn state(&mut self, id: &str) -> Result<String> {
        Ok(self.read(id, |b| Ok(b.save()?))?.1)
    }

    /// The events after revision `after`, oldest first, at most `limit`: the change feed.
    pub fn events(&mut self, id: &str, after: u64, limit: u64) -> Result<Vec<Event>> {
        self.revision(id)?;
        let rows = self.db.query(
            "SELECT revision, actor, at, event FROM board_events WHERE board = $1 AND revision > $2 ORDER BY revision LIMIT $3",
            &[id.into(), bigint(after), bigint(limit)],
        )?;
        rows.into_iter()
            .map(|r| {
                let mut r = r.into_iter();
                let mut next = || r.next().ok_or_else(|| Error::Schema("a short event row".into()));
                Ok(Event { revision: rev(&next()?)?, actor: next()?.text()?, at: next()?.text()?, event: next()?.text()? })
            })
            .collect()
    }

    /// The events after `after`, waiting up to `timeout` for one if there are none yet:
    /// PostgreSQL wakes on NOTIFY, SQLite polls. Only a change to this board reads again.
    pub fn follow(&mut self, id: &str, after: u64, timeout: Duration) -> Result<Vec<Event>> {
        let deadline = std::time::Instant::now() + timeout;
        self.listen()?;
        let mut changed = true;
        loop {
            if changed {
                let events = self.events(id, after, 1000)?;
                if !events.is_empty() {
                    return Ok(events);
                }
            }
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return Ok(Vec::new());
            }
            changed = self.wait_for_change(left)?.contains(id);
        }
    }

    /// Starts noticing changes to any board: one committed by another connection after
    /// this wakes [`Boards::wait_for_change`].
    pub fn listen(&mut self) -> Result<()> {
        self.db.listen()?;
        if self.revisions.is_none() {
            self.changed_revisions()?;
        }
        Ok(())
    }

    /// Waits until another connection has changed a board since [`Boards::listen`] or the
    /// last wake, or `timeout`; returns the boards that changed (none: the timeout).
    /// PostgreSQL's NOTIFY names them; SQLite, which cannot signal another connection, polls
    /// its data version every 100 ms, and on a change compares every board's revision with
    /// the last look.
    pub fn wait_for_change(&mut self, timeout: Duration) -> Result<BTreeSet<String>> {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.db.wait_for_change(left)? {
                Change::None => return Ok(BTreeSet::new()),
                Change::Boards(boards) => return Ok(boards),
                Change::Unknown => {
                    // Read after the change was seen, so what it changed is in this read.
                    let changed = self.changed_revisions()?;
                    // Not a board's change (a document's, a grant's): wait on.
                    if !changed.is_empty() || left.is_zero() {
                        return Ok(changed);
                    }
                }
            }
        }
    }

    fn changed_revisions(&mut self) -> Result<BTreeSet<String>> {
        let mut now = HashMap::new();
        for row in self.db.query("SELECT id, revision FROM boards", &[])? {
            let mut row = row.into_iter();
            let (id, revision) = (row.next().unwrap_or(Value::Null).text()?, rev(&row.next().unwrap_or(Value::Null))?);
            now.insert(id, revision);
        }
        let before = self.revisions.as_ref();
        let changed = now.iter().filter(|(id, r)| before.and_then(|b| b.get(*id)) != Some(r)).map(|(id, _)| id.clone()).collect();
        self.revisions = Some(now);
        Ok(changed)
    }

    /// Rebuilds the board from its earliest kept snapshot and every event after it, without
    /// touching the resident copy: what a restore or an audit does. Returns the state.
    pub fn rebuild(&mut self, id: &str) -> Result<String> {
        let Boards { db, runtime, .. } = self;
        sql::read(db.as_mut(), |db| {
            let rows = db.query("SELECT revision, state FROM board_snapshots WHERE board = $1 ORDER BY revision LIMIT 1", &[id.into()])?;
            let row = rows.into_iter().next().ok_or_else(|| Error::NoBoard(id.into()))?;
            let mut row = row.into_iter();
            let (from, state) = (rev(&row.next().unwrap_or(Value::Null))?, row.next().unwrap_or(Value::Null).text()?);
            let mut r = load(runtime, id, from, &state)?;
            let events = sql::events_between(db, id, from, u64::MAX)?;
            replay(id, &mut r, events)?;
            Ok(r.board.save()?)
        })
    }

    /// Returns to pending every claim on the board not renewed within the lease; the
    /// restarted orchestrator's first move. Returns the tasks reclaimed.
    pub fn reclaim_stale(&mut self, id: &str, actor: &str) -> Result<Vec<String>> {
        let stale_before = rfc3339(ago(self.config.lease));
        let (_, stale) = self.read(id, |b| Ok(b.stale(&stale_before)?))?;
        let mut reclaimed = Vec::new();
        for task in stale {
            let op = Op::Reclaim(workmem_runtime::board::Reclaim { task: task.id.clone(), stale_before: stale_before.clone() });
            match self.apply(id, None, actor, &op) {
                Ok(_) => reclaimed.push(task.id),
                // Renewed since it was read: the claim holds.
                Err(Error::Refused { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(reclaimed)
    }

    /// Compacts a long-running board's log into its latest snapshot: the events and older
    /// snapshots it covers are deleted. Returns how many events went.
    pub fn compact(&mut self, id: &str) -> Result<u64> {
        sql::write(self.db.as_mut(), |db| {
            let rows = db.query("SELECT MAX(revision) FROM board_snapshots WHERE board = $1", &[id.into()])?;
            let Some(latest) = rows.into_iter().next().and_then(|r| r.into_iter().next()).filter(|v| *v != Value::Null) else {
                return Err(Error::NoBoard(id.into()));
            };
            let latest = rev(&latest)?;
            db.execute("DELETE FROM board_snapshots WHERE board = $1 AND revision < $2", &[id.into(), bigint(latest)])?;
            // The keys of the events that go are kept (see `Error::KeyPastRetention`).
            db.execute(
                "INSERT INTO board_requests (board, request_key, request_digest, revision) \
                 SELECT board, request_key, request_digest, revision FROM board_events WHERE board = $1 AND revision <= $2 AND request_key IS NOT NULL",
                &[id.into(), bigint(latest)],
            )?;
            db.execute("DELETE FROM board_events WHERE board = $1 AND revision <= $2", &[id.into(), bigint(latest)])
        })
    }

    /// Deletes boards archived longer ago than [`Config::retention`], with their logs,
    /// snapshots and grants. Returns their IDs.
    pub fn collect_garbage(&mut self) -> Result<Vec<String>> {
        let before = rfc3339(ago(self.config.retention));
        let gone = sql::write(self.db.as_mut(), |db| {
            let rows = db.query("SELECT id FROM boards WHERE status = 'archived' AND archived_at < $1 ORDER BY id", &[before.as_str().into()])?;
            let ids = rows.into_iter().map(|r| r.into_iter().next().unwrap_or(Value::Null).text()).collect::<Result<Vec<_>>>()?;
            for id in &ids {
                db.execute("DELETE FROM boards WHERE id = $1", &[id.as_str().into()])?;
                db.execute("DELETE FROM board_requests WHERE board = $1", &[id.as_str().into()])?;
                grants::revoke_all(db, Scope::Board(id))?;
            }
            Ok(ids)
        })?;
        for id in &gone {
            self.resident.remove(id);
        }
        Ok(gone)
    }

    /// Every board's head, by ID.
    pub fn list(&mut self) -> Result<Vec<Head>> {
        let rows = self.db.query("SELECT id, revision, status, created_at, updated_at, archived_at FROM boards ORDER BY id", &[])?;
        rows.into_iter().map(head).collect()
    }
}

/// The event the request with `request`'s key wrote to board `id`, if one did; with the head
/// locked, so a retry racing its first attempt waits for it.
fn applied_before(db: &mut dyn Sql, id: &str, request: &RequestKey) -> Result<Option<Event>> {
    let rows = db.query(
        "SELECT revision, actor, at, event, request_digest FROM board_events WHERE board = $1 AND request_key = $2",
        &[id.into(), request.key.as_str().into()],
    )?;
    let Some(row) = rows.into_iter().next() else {
        // Written once and compacted since: refused, not applied again.
        let sql = "SELECT request_digest, revision FROM board_requests WHERE board = $1 AND request_key = $2";
        if let Some(row) = db.query(sql, &[id.into(), request.key.as_str().into()])?.into_iter().next() {
            let mut r = row.into_iter();
            request.same(&r.next().unwrap_or(Value::Null).text()?)?;
            return Err(Error::KeyPastRetention { key: request.key.clone(), version: rev(&r.next().unwrap_or(Value::Null))? });
        }
        return Ok(None);
    };
    let mut r = row.into_iter();
    let mut next = || r.next().unwrap_or(Value::Null);
    let event = Event { revision: rev(&next())?, actor: next().text()?, at: next().text()?, event: next().text()? };
    request.same(&next().text()?)?;
    Ok(Some(event))
}

/// An op as a caller gives it: typed, or in the log's JSON.
#[derive(Clone, Copy)]
enum Input<'a> {
    Op(&'a Op),
    Json(&'a str),
}

fn head(row: Vec<Value>) -> Result<Head> {
    let mut r = row.into_iter();
    let mut next = || r.next().unwrap_or(Value::Null);
    Ok(Head {
        id: next().text()?,
        revision: rev(&next())?,
        status: next().text()?,
        created_at: next().text()?,
        updated_at: next().text()?,
        archived_at: next().opt_text()?,
    })
}

/// The engine's refusal as an [`Error`], worded by the engine.
fn refused(board: &mut Board, error: workmem_runtime::board::BoardError) -> Result<Error> {
    let (rule, message) = (board.rule(&error)?, board.describe(&error)?);
    Ok(Error::Refused { error, rule, message })
}

/// The resident board brought to the head's revision with the head's events (those after
/// its revision), if that reproduces the head's tip: the same history. Otherwise (not
/// resident, ahead after a rollback, events that do not reach back to it, or another history
/// with the same ID: the board was deleted and created again, or the database restored) it is
/// loaded from the latest snapshot and the events after it, read in this transaction.
fn bring_up_to<'a>(db: &mut dyn Sql, runtime: &Runtime, resident: &'a mut HashMap<String, Resident>, id: &str, head: sql::Locked) -> Result<&'a mut Resident> {
    let sql::Locked { revision: current, tip, events } = head;
    let fits = |r: &Resident| {
        r.revision <= current
            && (r.revision == current || events.first().is_some_and(|(first, _)| *first == r.revision + 1))
            && events.iter().filter(|(rev, _)| *rev > r.revision).fold(r.tip.clone(), |t, (_, e)| next_tip(&t, e)) == tip
    };
    if let Some(r) = resident.get_mut(id).filter(|r| fits(r)) {
        replay(id, r, events)?;
        r.tip = tip;
        return Ok(resident.get_mut(id).expect("resident"));
    }
    let rows = db.query(
        "SELECT revision, state FROM board_snapshots WHERE board = $1 AND revision <= $2 ORDER BY revision DESC LIMIT 1",
        &[id.into(), bigint(current)],
    )?;
    let row = rows.into_iter().next().ok_or_else(|| Error::NoBoard(id.into()))?;
    let mut row = row.into_iter();
    let (from, state) = (rev(&row.next().unwrap_or(Value::Null))?, row.next().unwrap_or(Value::Null).text()?);
    resident.remove(id);
    if resident.len() >= MAX_RESIDENT {
        // Each resident board holds an engine instance: bound them, whatever a caller
        // names. The one dropped is loaded again from its snapshot when next used.
        if let Some(other) = resident.keys().next().cloned() {
            resident.remove(&other);
        }
    }
    let mut r = load(runtime, id, from, &state)?;
    replay(id, &mut r, sql::events_between(db, id, from, current)?)?;
    r.tip = tip;
    Ok(resident.entry(id.into()).insert_entry(r).into_mut())
}

fn load(runtime: &Runtime, id: &str, revision: u64, state: &str) -> Result<Resident> {
    let board = runtime.load_board(state)?.map_err(|why| Error::Log { board: id.into(), revision, why })?;
    Ok(Resident { board, revision, tip: String::new() })
}

/// Replays `events` (the ones after the resident board's revision, in order).
fn replay(id: &str, r: &mut Resident, events: Vec<(u64, String)>) -> Result<()> {
    let from = r.revision;
    for (revision, event) in events.into_iter().filter(|(rev, _)| *rev > from) {
        r.revision = r.board.replay(&event)?.map_err(|e| Error::Log { board: id.into(), revision, why: format!("{e:?}") })?;
    }
    Ok(())
}

/// The time `span` ago; before the clock's epoch (`--lease 100years`), the epoch: nothing is
/// older. Subtracting past it panicked.
fn ago(span: Duration) -> SystemTime {
    SystemTime::now().checked_sub(span).filter(|t| *t >= SystemTime::UNIX_EPOCH).unwrap_or(SystemTime::UNIX_EPOCH)
}
