//! PostgreSQL, for boards shared across machines: row locks serialize the writers of one
//! board, and NOTIFY tells followers a board changed.

use super::sql::{Append, Change, Kind, Locked, Param, Row, Sql, Value};
use super::{Error, Result};
use postgres::types::{ToSql, Type};
use postgres::{Client, NoTls, SimpleQueryMessage, Statement};
use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

pub struct Postgres {
    client: Connection,
    prepared: HashMap<String, Statement>,
    listening: bool,
    mutation_prepared: bool,
}

/// A client that closes on a thread of its own. `postgres` closes a connection by blocking
/// on a runtime of its own, which tokio forbids on a thread that runs tokio: an async host
/// (the HTTP or MCP server) dropping its stores there panicked in the destructor and aborted.
pub(crate) struct Connection(Option<Client>);

impl std::ops::Deref for Connection {
    type Target = Client;
    fn deref(&self) -> &Client {
        self.0.as_ref().expect("a connection is open until dropped")
    }
}

impl std::ops::DerefMut for Connection {
    fn deref_mut(&mut self) -> &mut Client {
        self.0.as_mut().expect("a connection is open until dropped")
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        if let Some(client) = self.0.take() {
            let _ = std::thread::spawn(move || drop(client)).join();
        }
    }
}

/// A connection to `url`, as every store's: bounded waits (connect, keepalives, each
/// statement), acknowledged meaning flushed.
pub(crate) fn open(url: &str) -> Result<Connection> {
    let open = |source: postgres::Error| Error::Open { target: super::redact(url), source: source.into() };
    let mut config: postgres::Config = url.parse().map_err(open)?;
    // An unreachable server is an error in seconds, not after the system's TCP timeout;
    // the URL's own `connect_timeout` wins.
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    // A server that vanished without closing the connection (a host gone, a network cut)
    // is found in about 25 s rather than the system's two hours: no call waits on it for
    // good while holding a slot or a lock.
    config.keepalives(true).keepalives_idle(KEEPALIVE_IDLE).keepalives_interval(Duration::from_secs(5)).keepalives_retries(3);
    config.tcp_user_timeout(Duration::from_secs(30));
    let mut client = config.connect(NoTls).map_err(open)?;
    // Acknowledged means flushed, whatever the server's or the role's default; and no
    // statement (a lock waited for included) runs past STATEMENT_TIMEOUT.
    client
        .batch_execute(&format!("SET standard_conforming_strings = on; SET synchronous_commit = on; SET statement_timeout = {}", STATEMENT_TIMEOUT.as_millis()))
        .map_err(db)?;
    Ok(Connection(Some(client)))
}

/// How long a connection may take unless the URL says (`connect_timeout`).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The longest one statement runs, or waits for a lock, before the server cancels it.
const STATEMENT_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a connection is quiet before the client checks that the server is still there.
const KEEPALIVE_IDLE: Duration = Duration::from_secs(10);

/// Where board writers NOTIFY (payload: `<board> <revision>`).
pub const CHANNEL: &str = "workmem_boards";

static NULL: Option<&str> = None;

/// A durable commit that flushes the WAL written before it (see [`Sql::append_commit`]).
const FLUSH: &str = "BEGIN; SELECT pg_logical_emit_message(true, 'workmem', 'flush'); COMMIT";

impl Postgres {
    pub fn connect(url: &str) -> Result<Self> {
        Ok(Postgres { client: open(url)?, prepared: HashMap::new(), listening: false, mutation_prepared: false })
    }

    /// The statements of a mutation, prepared on the server once per connection, so a
    /// mutation's round trips carry no planning (after the schema exists: on first use).
    fn prepare_mutation(&mut self) -> Result<()> {
        if !self.mutation_prepared {
            self.client
                .batch_execute(&format!(
                    "PREPARE workmem_head(text) AS SELECT revision, tip FROM boards WHERE id = $1 FOR UPDATE; \
                     PREPARE workmem_events(text, bigint) AS SELECT revision, event FROM board_events WHERE board = $1 AND revision > $2 ORDER BY revision; \
                     PREPARE workmem_append(text, bigint, text, text, text, text, text, text, text) AS \
                       WITH e AS (INSERT INTO board_events (board, revision, actor, at, event, request_key, request_digest) VALUES ($1, $2, $3, $4, $5, $8, $9)), \
                       h AS (UPDATE boards SET revision = $2, updated_at = $4, tip = $7 WHERE id = $1) \
                       SELECT pg_notify('{CHANNEL}', $6)"
                ))
                .map_err(db)?;
            self.mutation_prepared = true;
        }
        Ok(())
    }

    fn statement(&mut self, sql: &str) -> Result<Statement> {
        if let Some(s) = self.prepared.get(sql) {
            return Ok(s.clone());
        }
        let s = self.client.prepare(sql).map_err(db)?;
        self.prepared.insert(sql.to_string(), s.clone());
        Ok(s)
    }
}

/// `value` as a SQL string literal. With `standard_conforming_strings` on (set at connect,
/// and PostgreSQL's default) a quote doubled is the only escape; NUL cannot be stored at all.
fn literal(value: &str) -> Result<String> {
    if value.contains('\0') {
        return Err(Error::Schema("text with a NUL character cannot be stored in PostgreSQL".into()));
    }
    Ok(format!("'{}'", value.replace('\'', "''")))
}

fn db(e: postgres::Error) -> Error {
    Error::Db(e.into())
}

fn bind<'a>(params: &'a [Param<'a>]) -> Vec<&'a (dyn ToSql + Sync)> {
    params
        .iter()
        .map(|p| match p {
            Param::Null => &NULL as &(dyn ToSql + Sync),
            Param::Int(v) => v as &(dyn ToSql + Sync),
            Param::Text(v) => v as &(dyn ToSql + Sync),
        })
        .collect()
}

impl Sql for Postgres {
    fn kind(&self) -> Kind {
        Kind::Postgres
    }

    fn healthy(&mut self) -> bool {
        // Outside a transaction each statement is one, so its start is the transaction's: a
        // transaction left open started before this statement (and one aborted refuses it).
        let rows = self.client.simple_query("SELECT (now() = statement_timestamp())::int").map(|messages| {
            messages.into_iter().find_map(|m| match m {
                SimpleQueryMessage::Row(row) => row.get(0).map(str::to_string),
                _ => None,
            })
        });
        matches!(rows.as_ref().map(Option::as_deref), Ok(Some("1")))
    }

    fn batch(&mut self, sql: &str) -> Result<()> {
        self.client.batch_execute(sql).map_err(db)
    }

    fn listen(&mut self) -> Result<()> {
        if !self.listening {
            self.client.batch_execute(&format!("LISTEN {CHANNEL}")).map_err(db)?;
            self.listening = true;
        }
        Ok(())
    }

    fn wait_for_change(&mut self, timeout: std::time::Duration) -> Result<Change> {
        use postgres::fallible_iterator::FallibleIterator;
        self.listen()?;
        let mut notifications = self.client.notifications();
        let Some(first) = notifications.timeout_iter(timeout).next().map_err(db)? else {
            return Ok(Change::None);
        };
        // One wake for a burst of commits: those already queued join this one.
        let mut boards = BTreeSet::new();
        let mut next = Some(first);
        while let Some(n) = next {
            // The payload is `<board> <revision>`, and a board's ID may hold spaces.
            boards.insert(n.payload().rsplit_once(' ').map_or(n.payload(), |(board, _)| board).to_string());
            next = notifications.iter().next().map_err(db)?;
        }
        Ok(Change::Boards(boards))
    }

    // A mutation holds its board's row lock from `lock_head` to the commit, and every round
    // trip in between is time no other writer of that board can use: so each half is one
    // simple-protocol round trip (values as quoted literals) instead of three or four.
    fn lock_head(&mut self, board: &str, after: u64) -> Result<Option<Locked>> {
        self.prepare_mutation()?;
        let b = literal(board)?;
        let messages = self.client.simple_query(&format!("BEGIN; EXECUTE workmem_head({b}); EXECUTE workmem_events({b}, {after})")).map_err(db)?;
        // The rows of the three statements, told apart by the completion that ends each.
        let (mut statement, mut head, mut events) = (0, None, Vec::new());
        for m in messages {
            let row = match m {
                SimpleQueryMessage::Row(row) => row,
                SimpleQueryMessage::CommandComplete(_) => {
                    statement += 1;
                    continue;
                }
                _ => continue,
            };
            let number = |i: usize| row.get(i).and_then(|v| v.parse::<u64>().ok()).ok_or_else(|| Error::Schema("a revision that is not a number".into()));
            match statement {
                1 => head = Some((number(0)?, row.get(1).unwrap_or_default().to_string())),
                2 => events.push((number(0)?, row.get(1).unwrap_or_default().to_string())),
                _ => return Err(Error::Schema("a row from a statement that returns none".into())),
            }
        }
        // Events written after the lock was granted cannot exist; any before it were read.
        Ok(head.map(|(revision, tip)| Locked { revision, tip, events: events.into_iter().filter(|(r, _)| *r <= revision).collect() }))
    }

    fn append_commit(&mut self, a: &Append<'_>) -> Result<()> {
        let (b, r, at) = (literal(a.board)?, a.revision, literal(a.at)?);
        let status = match a.status {
            Some((status, archived_at)) => format!(", status = {}, archived_at = {}", literal(status)?, archived_at.map_or(Ok("NULL".into()), literal)?),
            None => String::new(),
        };
        let snapshot = match a.snapshot {
            // Older snapshots go as in the SQLite store (see `sql::append_commit`).
            Some(state) => format!(
                ", s AS (INSERT INTO board_snapshots (board, revision, state) VALUES ({b}, {r}, {})), \
                 d AS (DELETE FROM board_snapshots WHERE board = {b} AND revision > 0 AND revision < {r})",
                literal(state)?
            ),
            None => String::new(),
        };
        let (actor, event, tip, payload) = (literal(a.actor)?, literal(a.event)?, literal(a.tip)?, literal(&format!("{} {r}", a.board))?);
        let (key, digest) = match a.request {
            Some(request) => (literal(&request.key)?, literal(&request.digest)?),
            None => ("NULL".to_string(), "NULL".to_string()),
        };
        // The common case (no status change, no snapshot) runs a statement planned once.
        let write = if status.is_empty() && snapshot.is_empty() {
            format!("EXECUTE workmem_append({b}, {r}, {actor}, {at}, {event}, {payload}, {tip}, {key}, {digest})")
        } else {
            format!(
                "WITH e AS (INSERT INTO board_events (board, revision, actor, at, event, request_key, request_digest) VALUES ({b}, {r}, {actor}, {at}, {event}, {key}, {digest})), \
                 h AS (UPDATE boards SET revision = {r}, updated_at = {at}, tip = {tip}{status} WHERE id = {b}){snapshot} \
                 SELECT pg_notify('{CHANNEL}', {payload})"
            )
        };
        // The head's lock is released at commit; waiting for the WAL flush while holding it
        // would keep every other writer of the board waiting too. So the commit does not wait
        // (`synchronous_commit = off`), and the mutation is acknowledged only after a second,
        // synchronous commit behind it has been flushed, which flushes this one first:
        // durable when acknowledged, with the flushes of concurrent writers grouped. That
        // second transaction must write WAL of its own, or PostgreSQL commits it without a
        // flush too (a bare `SELECT txid_current()` did, and lost acknowledged writes to a
        // crash): a transactional logical message is the smallest record that any role may
        // write, at any `wal_level`. Both go in one round trip: the statements of a simple
        // query run in order, the first COMMIT releasing the lock before the flush, and the
        // answer comes once the last has run.
        self.client.simple_query(&format!("SET LOCAL synchronous_commit = off; {write}; COMMIT; {FLUSH}")).map_err(db)?;
        Ok(())
    }

    fn execute(&mut self, sql: &str, params: &[Param<'_>]) -> Result<u64> {
        let stmt = self.statement(sql)?;
        self.client.execute(&stmt, &bind(params)).map_err(db)
    }

    fn query(&mut self, sql: &str, params: &[Param<'_>]) -> Result<Vec<Row>> {
        let stmt = self.statement(sql)?;
        let rows = self.client.query(&stmt, &bind(params)).map_err(db)?;
        rows.iter()
            .map(|row| {
                (0..row.len())
                    .map(|i| {
                        let ty = row.columns()[i].type_();
                        Ok(if *ty == Type::INT8 {
                            row.get::<_, Option<i64>>(i).map_or(Value::Null, Value::Int)
                        } else if *ty == Type::INT4 {
                            row.get::<_, Option<i32>>(i).map_or(Value::Null, |v| Value::Int(v.into()))
                        } else if *ty == Type::TEXT || *ty == Type::VARCHAR {
                            row.get::<_, Option<String>>(i).map_or(Value::Null, Value::Text)
                        } else if *ty == Type::VOID {
                            Value::Null
                        } else {
                            return Err(Error::Schema(format!("unexpected column type {ty}")));
                        })
                    })
                    .collect()
            })
            .collect()
    }
}
