//! Issue 11's board benchmark: mutation throughput with 1 and 16 writers on SQLite and a real
//! PostgreSQL, against the plain SQL a user would write by hand for the same mutation (one
//! UPDATE with a revision check, per task row), and the latency of `ready` on a board of
//! 10,000 tasks. Every figure and ratio comes from this one run.
//!
//! The mutation is a claimant's heartbeat on its task: workmem checks it in the engine (the
//! task exists, is claimed, by this writer), appends the event and bumps the board's
//! revision in one transaction; the baseline bumps the task row's revision.

#[path = "../../../tests/common/postgres.rs"]
mod pg;

use std::time::{Duration, Instant};
use workmem_runtime::board::{Assignment, NewTask, Op, View};
use workmem_runtime::{Options, Runtime};
use workmem_store::board::{Boards, Config, Error};

const WRITERS: usize = 16;
const MUTATIONS: usize = 4000;

fn runtime() -> Runtime {
    Runtime::new(&Options { cache_dir: Some(std::env::temp_dir().join("workmem-bench-cache")), ..Options::default() }).unwrap()
}

fn agent(w: usize) -> String {
    format!("writer-{w}")
}

/// Which board and task writer `w` heartbeats: its own task on one shared board, or, with
/// `per_writer`, the task of a board of its own.
fn target(w: usize, per_writer: bool) -> (String, String) {
    if per_writer { (format!("bench-{w}"), "T-1".into()) } else { ("bench".into(), format!("T-{}", w + 1)) }
}

/// The boards and tasks `target` names, each task claimed by its writer.
fn setup(db: &str, per_writer: bool) {
    let mut boards = Boards::open(db, runtime(), Config::default()).unwrap();
    for w in 0..WRITERS {
        let (board, task) = target(w, per_writer);
        if w == 0 || per_writer {
            boards.create(&board, "bench", "measure", &[], &[]).unwrap();
        }
        let new_task = NewTask { title: format!("task {w}"), description: String::new(), depends_on: vec![], needs_review: false };
        boards.apply(&board, None, "orchestrator", &Op::AddTask(new_task)).unwrap();
        boards.apply(&board, None, "orchestrator", &Op::Assign(Assignment { task, agent: agent(w) })).unwrap();
    }
}

/// Mutations per second with `writers` threads, each with its own connection, each
/// heartbeating its own task `MUTATIONS / writers` times: with `cas`, a compare-and-swap on
/// the revision it last saw (retrying conflicts, which are counted); without, checked by the
/// engine under the board's lock (what a worker moving its own task needs).
fn workmem(db: &str, writers: usize, cas: bool, per_writer: bool) -> (f64, usize) {
    let each = MUTATIONS / writers;
    let mut boards: Vec<Boards> = (0..writers).map(|_| Boards::open(db, runtime(), Config::default()).unwrap()).collect();
    let names: std::collections::BTreeSet<String> = (0..writers).map(|w| target(w, per_writer).0).collect();
    let revisions = |b: &mut Boards| names.iter().map(|name| b.revision(name).unwrap()).sum::<u64>();
    let before = revisions(&mut boards[0]);
    let started = Instant::now();
    let conflicts: usize = std::thread::scope(|s| {
        let handles: Vec<_> = boards
            .iter_mut()
            .enumerate()
            .map(|(w, b)| {
                s.spawn(move || {
                    let (board, task) = target(w, per_writer);
                    let mut seen = b.revision(&board).unwrap();
                    let mut conflicts = 0;
                    let op = Op::Heartbeat(task);
                    for _ in 0..each {
                        loop {
                            match b.apply(&board, cas.then_some(seen), &agent(w), &op) {
                                Ok(e) => {
                                    seen = e.revision;
                                    break;
                                }
                                Err(Error::Conflict { current, .. }) => {
                                    seen = current;
                                    conflicts += 1;
                                }
                                Err(e) => panic!("{e}"),
                            }
                        }
                    }
                    conflicts
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    let rate = (each * writers) as f64 / started.elapsed().as_secs_f64();
    // None lost: every acknowledged mutation is a revision, and an event in the log.
    let mut check = Boards::open(db, runtime(), Config::default()).unwrap();
    assert_eq!(revisions(&mut check), before + (each * writers) as u64, "acknowledged mutations missing from the boards");
    for name in &names {
        assert_eq!(check.events(name, 0, u64::MAX >> 1).unwrap().len() as u64, check.revision(name).unwrap(), "{name}: a revision without its event");
    }
    (rate, conflicts)
}

/// The same with hand-written SQL: `UPDATE tasks SET heartbeat_at = ?, revision = revision
/// + 1 WHERE id = ? AND revision = ?`, one statement per mutation, as autocommit.
fn baseline(db: &str, writers: usize) -> f64 {
    let each = MUTATIONS / writers;
    let ddl = "CREATE TABLE tasks (id TEXT PRIMARY KEY, revision BIGINT NOT NULL, heartbeat_at TEXT)";
    let update = "UPDATE tasks SET heartbeat_at = $1, revision = revision + 1 WHERE id = $2 AND revision = $3";
    let started;
    if db.starts_with("postgres://") {
        let mut c = postgres::Client::connect(db, postgres::NoTls).unwrap();
        c.batch_execute(ddl).unwrap();
        for w in 0..WRITERS {
            c.execute("INSERT INTO tasks VALUES ($1, 0, NULL)", &[&format!("T-{w}")]).unwrap();
        }
        let mut clients: Vec<_> = (0..writers).map(|_| postgres::Client::connect(db, postgres::NoTls).unwrap()).collect();
        started = Instant::now();
        std::thread::scope(|s| {
            for (w, c) in clients.iter_mut().enumerate() {
                s.spawn(move || {
                    let stmt = c.prepare(update).unwrap();
                    let id = format!("T-{w}");
                    for revision in 0..each as i64 {
                        assert_eq!(c.execute(&stmt, &[&workmem_store::now(), &id, &revision]).unwrap(), 1);
                    }
                });
            }
        });
    } else {
        let open = || {
            let c = rusqlite::Connection::open(db).unwrap();
            c.busy_timeout(Duration::from_secs(30)).unwrap();
            c.execute_batch("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;").unwrap();
            c
        };
        let c = open();
        c.execute_batch(ddl).unwrap();
        for w in 0..WRITERS {
            c.execute("INSERT INTO tasks VALUES (?1, 0, NULL)", [format!("T-{w}")]).unwrap();
        }
        let conns: Vec<_> = (0..writers).map(|_| open()).collect();
        started = Instant::now();
        std::thread::scope(|s| {
            for (w, c) in conns.into_iter().enumerate() {
                s.spawn(move || {
                    let mut stmt = c.prepare(&update.replace('$', "?")).unwrap();
                    let id = format!("T-{w}");
                    for revision in 0..each as i64 {
                        assert_eq!(stmt.execute(rusqlite::params![workmem_store::now(), id, revision]).unwrap(), 1);
                    }
                });
            }
        });
    }
    MUTATIONS as f64 / started.elapsed().as_secs_f64()
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// `ready` on a board of 10,000 tasks (half done, so half are ready and half wait on
/// them): p50 and p99 over 200 reads, through the store (a head check and the view as JSON).
fn ready(db: &str) -> (Duration, Duration, usize) {
    let mut boards = Boards::open(db, runtime(), Config { snapshot_every: 100_000, ..Config::default() }).unwrap();
    boards.create("big", "big", "measure ready", &[], &[]).unwrap();
    for i in 0..10_000 {
        let depends_on = if i % 2 == 1 { vec![format!("T-{i}")] } else { vec![] };
        boards
            .apply(
                "big",
                None,
                "orchestrator",
                &Op::AddTask(NewTask { title: format!("task {i}"), description: String::new(), depends_on, needs_review: false }),
            )
            .unwrap();
    }
    let mut times = Vec::new();
    let mut count = 0;
    for _ in 0..200 {
        let started = Instant::now();
        let json = boards.view("big", &View::Ready).unwrap();
        times.push(started.elapsed());
        count = serde_json::from_str::<serde_json::Value>(&json).unwrap().as_array().unwrap().len();
    }
    times.sort();
    (percentile(&times, 0.5), percentile(&times, 0.99), count)
}

fn main() {
    let dir = std::env::temp_dir().join(format!("workmem-board-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let server = pg::Server::start();
    let mut n = 0;
    let mut fresh = |kind: &str| -> String {
        n += 1;
        match kind {
            "sqlite" => dir.join(format!("b{n}.sqlite3")).display().to_string(),
            _ => server.as_ref().unwrap().database(&format!("b{n}")),
        }
    };
    println!("board mutations: {MUTATIONS} heartbeats; hand-written = one UPDATE with a revision check per task row");
    println!(
        "{:<9} {:>7} {:<8} {:<14} {:>11} {:>10} {:>16} {:>8}",
        "backend", "writers", "boards", "revision", "workmem /s", "conflicts", "hand-written /s", "ratio"
    );
    let kinds: &[&str] = if server.is_some() { &["sqlite", "postgres"] } else { &["sqlite"] };
    for kind in kinds {
        for (writers, cas, per_writer) in [(1, true, false), (WRITERS, false, false), (WRITERS, true, false), (WRITERS, true, true)] {
            let db = fresh(kind);
            setup(&db, per_writer);
            let (ours, conflicts) = workmem(&db, writers, cas, per_writer);
            let theirs = baseline(&fresh(kind), writers);
            let how = if cas { "compare-swap" } else { "engine-checked" };
            let boards = if per_writer { "one each" } else { "one" };
            println!("{kind:<9} {writers:>7} {boards:<8} {how:<14} {ours:>11.0} {conflicts:>10} {theirs:>16.0} {:>7.2}x", theirs / ours);
        }
    }
    for kind in kinds {
        let (p50, p99, count) = ready(&fresh(kind));
        println!("ready on 10,000 tasks ({kind}): {count} ready, p50 {p50:.2?}, p99 {p99:.2?}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}
