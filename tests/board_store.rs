//! Spec 002's boards stored (workmem-store's `board`): one suite, run against SQLite and a
//! real PostgreSQL server. Compare-and-swap on the revision, the event log that rebuilds the
//! board, snapshots and compaction, restarts, migrations, leases, retention, tokens, the
//! change feed, and 16 concurrent writers that lose nothing.

use crate::common;

use common::postgres::Server;
use common::suite::{Case, SqliteFiles, Target, suite};
use std::collections::BTreeSet;
use std::time::{Duration, Instant};
use workmem_runtime::board::*;
use workmem_store::board::{Boards, Config, Error};
use workmem_store::db::{GrantOptions, Grants, Scope};

fn open(db: &str, config: Config) -> Boards {
    Boards::open(db, common::runtime(), config).unwrap_or_else(|e| panic!("open {db}: {e}"))
}

fn task(title: &str, deps: &[&str]) -> Op {
    Op::AddTask(NewTask { title: title.into(), description: String::new(), depends_on: deps.iter().map(|d| d.to_string()).collect(), needs_review: false })
}

fn set(task: &str, status: TaskStatus) -> Op {
    Op::SetStatus(StatusChange { task: task.into(), status })
}

fn new_board(boards: &mut Boards, id: &str) {
    boards.create(id, "Implement auth", "Add JWT authentication to the API", &["No breaking changes".into()], &[]).unwrap();
}

const CASES: [(&str, Case); 9] = [
    ("compare_and_swap", compare_and_swap),
    ("log_snapshots_restart", log_snapshots_restart),
    ("another_history", another_history),
    ("migrations", migrations),
    ("leases_and_retention", leases_and_retention),
    ("tokens", tokens),
    ("change_feed", change_feed),
    ("sixteen_writers", sixteen_writers),
    ("creators_race", creators_race),
];

#[test]
fn sqlite() {
    suite(&SqliteFiles::new("boards"), &CASES);
}

#[test]
fn postgres() {
    if let Some(server) = Server::start() {
        suite(&server, &CASES);
        acknowledged_writes_survive_a_crash(&server);
    }
}

/// 16 connections creating one board at once: one makes it, every other is told it exists
/// (on PostgreSQL 20 of 105 losers got the database's unique violation instead).
fn creators_race(target: &dyn Target) {
    let db = target.fresh("creators");
    drop(open(&db, Config::default()));
    let barrier = std::sync::Barrier::new(16);
    let outcomes: Vec<Result<(), String>> = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..16)
            .map(|_| {
                let (db, barrier) = (&db, &barrier);
                scope.spawn(move || {
                    let mut boards = open(db, Config::default());
                    barrier.wait();
                    match boards.create("same", "n", "g", &[], &[]) {
                        Ok(()) => Ok(()),
                        Err(Error::Exists(_)) => Err("exists".to_string()),
                        Err(e) => Err(format!("{e:?}")),
                    }
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    });
    assert_eq!(outcomes.iter().filter(|o| o.is_ok()).count(), 1, "{outcomes:?}");
    assert!(outcomes.iter().all(|o| o.as_ref().is_ok() || o.as_ref().is_err_and(|e| e == "exists")), "{outcomes:?}");
}

/// A board filled to its text limit with the tasks an attacker used (16,000-byte
/// descriptions: 4,095 of them once made a board nothing could load) refuses the next one by
/// name, and still loads from its snapshots, shows every view, rebuilds and compacts inside
/// the engine's 256 MiB; an op that only changes a status still goes through.
#[test]
fn a_full_board_still_loads() {
    let db = SqliteFiles::new("full-board").fresh("full");
    let mut boards = open(&db, Config { snapshot_every: 128, ..Config::default() });
    new_board(&mut boards, "big");
    let description = "d".repeat(16_000);
    let mut added = 0;
    let refused = loop {
        let op = Op::AddTask(NewTask { title: format!("task {added}"), description: description.clone(), depends_on: vec![], needs_review: false });
        match boards.apply("big", None, "worker", &op) {
            Ok(_) => added += 1,
            Err(e) => break e,
        }
        assert!(added < 1_000, "1,000 tasks of 16 KB were all taken");
    };
    assert!((500..=530).contains(&added), "{added} tasks of 16 KB fit in 8 MiB");
    let Error::Refused { rule, message, .. } = &refused else { panic!("{refused}") };
    assert_eq!(rule, "too-large");
    assert!(message.contains("8388608"), "the refusal names the limit: {message}");
    drop(boards);

    let mut boards = open(&db, Config::default());
    for name in View::names() {
        let view = View::named(name, Some("T-1".into())).unwrap();
        boards.view("big", &view).unwrap_or_else(|e| panic!("view {name}: {e}"));
    }
    let state = boards.state("big").unwrap();
    assert_eq!(boards.rebuild("big").unwrap(), state);
    boards.compact("big").unwrap();
    boards.apply("big", None, "worker", &set("T-1", TaskStatus::InProgress)).unwrap();
}

/// Every write acknowledged before PostgreSQL crashes (`pg_ctl stop -m immediate`, right
/// after the last acknowledgement) is there after it restarts, and the next write gets the
/// next revision: none is handed out twice. A board mutation's own commit does not wait for
/// the flush (see `append_commit`), so this fails if the durable commit behind it flushes
/// nothing.
fn acknowledged_writes_survive_a_crash(server: &Server) {
    let db = server.database("crash");
    let mut boards = open(&db, Config::default());
    let mut documents = workmem_store::documents::Documents::open(&db, common::runtime(), Default::default()).unwrap();
    let mut acked = Vec::new();
    for round in 0..3 {
        let board = format!("b{round}");
        new_board(&mut boards, &board);
        let added = boards.apply(&board, Some(0), "orchestrator", &task("Design token schema", &[])).unwrap();
        let nudge = Op::Nudge(NewNudge { target: NudgeTarget::All, message: format!("nudge {round}"), priority: Priority::High });
        let nudged = boards.apply(&board, Some(1), "orchestrator", &nudge).unwrap();
        assert_eq!((added.revision, nudged.revision), (1, 2));
        let put = documents.put("acme", &board, "dev", format!("# Facts\n- round {round}\n").as_bytes(), None).unwrap();
        acked.push((board, put.version));
        server.crash_and_restart();
        // The connections died with the server; a client opens new ones.
        boards = open(&db, Config::default());
        documents = workmem_store::documents::Documents::open(&db, common::runtime(), Default::default()).unwrap();
    }
    for (board, version) in &acked {
        assert_eq!(boards.revision(board).unwrap(), 2, "board {board} lost an acknowledged write in a crash");
        let state: serde_json::Value = serde_json::from_str(&boards.state(board).unwrap()).unwrap();
        assert_eq!(state["nudges"].as_array().map(Vec::len), Some(1), "board {board}'s acknowledged nudge is gone");
        assert_eq!(documents.latest("acme", board).unwrap().version, *version);
        let next = boards.apply(board, None, "orchestrator", &task("after the crash", &[])).unwrap();
        assert_eq!(next.revision, 3, "a revision is never handed out twice");
    }
}

/// A stale revision is a conflict carrying the current one; a refused op is the engine's
/// sentence; neither writes anything.
fn compare_and_swap(target: &dyn Target) {
    let db = target.fresh("cas");
    let mut boards = open(&db, Config::default());
    new_board(&mut boards, "auth");
    assert!(matches!(boards.create("auth", "n", "g", &[], &[]), Err(Error::Exists(id)) if id == "auth"));
    let refused = boards.create("empty", "n", " ", &[], &[]).unwrap_err();
    assert_eq!((refused.code(), refused.to_string()), ("refused", "goal is empty; it is required".to_string()));
    // An ID is a key, and PostgreSQL's NOTIFY (under 8,000 bytes) carries it with every write.
    let too_long = boards.create(&"b".repeat(257), "n", "g", &[], &[]).unwrap_err();
    assert_eq!((too_long.code(), too_long.to_string()), ("refused", "id is over the board's limit of 256".to_string()));
    let longest = "b".repeat(256);
    new_board(&mut boards, &longest);
    assert_eq!(boards.apply(&longest, None, "orchestrator", &task("at the limit", &[])).unwrap().revision, 1);

    let first = boards.apply("auth", Some(0), "orchestrator", &task("Design token schema", &[])).unwrap();
    assert_eq!(first.revision, 1);
    assert!(first.event.contains("\"op\":\"add_task\""));
    let stale = boards.apply("auth", Some(0), "dev", &task("late", &[])).unwrap_err();
    assert!(matches!(stale, Error::Conflict { expected: 0, current: 1, .. }), "{stale:?}");
    assert_eq!(stale.to_string(), "board auth is at revision 1, not 0: another writer came first; read it again and retry");
    let illegal = boards.apply("auth", None, "dev", &set("T-1", TaskStatus::Completed)).unwrap_err();
    assert_eq!((illegal.code(), illegal.to_string()), ("refused", "task T-1 cannot go from pending to completed".to_string()));
    assert_eq!(boards.revision("auth").unwrap(), 1, "neither the conflict nor the refusal wrote");
    assert_eq!(boards.events("auth", 0, 100).unwrap().len(), 1);

    // Another connection sees the write at once, and its own writes are seen here.
    let mut other = open(&db, Config::default());
    assert!(other.view("auth", &View::Ready).unwrap().contains("Design token schema"));
    other.apply("auth", Some(1), "orchestrator", &task("Token service", &["T-1"])).unwrap();
    let blocked: serde_json::Value = serde_json::from_str(&boards.view("auth", &View::Blocked).unwrap()).unwrap();
    assert_eq!(blocked[0]["id"], "T-2");
    assert!(matches!(boards.view("nope", &View::Ready), Err(Error::NoBoard(_))));
    assert!(matches!(boards.view("auth", &View::ContextForTask("T-9".into())), Err(Error::Refused { .. })));
}

/// The log rebuilds the board; snapshots bound what a load replays; compaction keeps the
/// board whole; a restarted process resumes where the last left off.
fn log_snapshots_restart(target: &dyn Target) {
    let db = target.fresh("log");
    let config = Config { snapshot_every: 4, ..Config::default() };
    let mut boards = open(&db, config.clone());
    new_board(&mut boards, "auth");
    // The first with an idempotency key, as a client retrying it would send it.
    let keyed = r#"{"op": "add_task", "title": "task 0", "description": "", "depends_on": [], "needs_review": false}"#;
    let key = workmem_store::db::RequestKey::new("add-0", &["op", keyed]).unwrap();
    assert_eq!(boards.apply_json_once("auth", None, "orchestrator", keyed, &key).unwrap().revision, 1);
    for i in 1..9 {
        boards.apply("auth", None, "orchestrator", &task(&format!("task {i}"), &[])).unwrap();
    }
    boards.apply("auth", None, "dev", &set("T-1", TaskStatus::InProgress)).unwrap();
    let state = boards.state("auth").unwrap();
    assert_eq!(boards.rebuild("auth").unwrap(), state, "the event log rebuilds the board");
    assert_eq!(boards.apply_json_once("auth", None, "orchestrator", keyed, &key).unwrap().revision, 1, "a retry gets the first event");
    assert_eq!(count(&db, "SELECT COUNT(*) FROM board_snapshots WHERE board = 'auth'"), 2, "the creation's snapshot and the newest (8) are kept, not 4");
    drop(boards);

    let mut restarted = open(&db, config);
    assert_eq!(restarted.state("auth").unwrap(), state, "a restart loads the latest snapshot and the events after it");
    assert_eq!(restarted.compact("auth").unwrap(), 8, "revisions 1-8 are in the snapshot at 8");
    assert_eq!(restarted.events("auth", 0, 100).unwrap().iter().map(|e| e.revision).collect::<Vec<_>>(), vec![9, 10]);
    assert_eq!(restarted.rebuild("auth").unwrap(), state);
    // Its event compacted away, the keyed op's retry is refused, not applied a second time.
    let late = restarted.apply_json_once("auth", None, "orchestrator", keyed, &key);
    assert!(matches!(late, Err(Error::KeyPastRetention { version: 1, .. })), "{late:?}");
    restarted.apply("auth", Some(10), "dev", &Op::Heartbeat("T-1".into())).unwrap();
    assert_eq!(open(&db, Config::default()).revision("auth").unwrap(), 11);
}

/// A board kept resident by one connection is not trusted for a history it did not see,
/// though the revision matches: after the board is archived, collected and created again
/// with its ID, and after the database is restored from a backup and written since.
fn another_history(target: &dyn Target) {
    let db = target.fresh("history");
    let mut server = open(&db, Config::default());
    new_board(&mut server, "auth");
    server.apply("auth", None, "orchestrator", &task("old task", &[])).unwrap();
    server.apply("auth", None, "orchestrator", &task("old task 2", &[])).unwrap();
    assert!(server.view("auth", &View::Ready).unwrap().contains("old task"), "resident at revision 2");

    let mut operator = open(&db, Config { retention: Duration::ZERO, ..Config::default() });
    operator.apply("auth", None, "orchestrator", &Op::Close(BoardStatus::Completed)).unwrap();
    operator.apply("auth", None, "orchestrator", &Op::Archive).unwrap();
    // Archive times are kept to the second; retention zero collects it once that second is past.
    std::thread::sleep(Duration::from_millis(1100));
    assert_eq!(operator.collect_garbage().unwrap(), vec!["auth".to_string()]);
    new_board(&mut operator, "auth");
    operator.apply("auth", None, "orchestrator", &task("new task", &[])).unwrap();
    operator.apply("auth", None, "orchestrator", &task("new task 2", &[])).unwrap();

    let ready = server.view("auth", &View::Ready).unwrap();
    assert!(ready.contains("new task") && !ready.contains("old task"), "the recreated board, not the resident one: {ready}");
    let applied = server.apply("auth", Some(2), "dev", &set("T-1", TaskStatus::InProgress)).unwrap();
    assert_eq!(applied.revision, 3, "checked against the recreated board's state");
    assert_eq!(open(&db, Config::default()).state("auth").unwrap(), server.state("auth").unwrap(), "every reader replays the log");

    // A backup at revision 3; the server goes on to 4; the backup is restored, and another
    // writer takes it to 4 differently.
    let mut raw = raw(&db);
    raw("CREATE TABLE saved AS SELECT revision, tip, updated_at FROM boards WHERE id = 'auth'");
    server.apply("auth", Some(3), "orchestrator", &task("lost in the restore", &[])).unwrap();
    raw("DELETE FROM board_events WHERE board = 'auth' AND revision > 3;
         UPDATE boards SET revision = (SELECT revision FROM saved), tip = (SELECT tip FROM saved) WHERE id = 'auth';
         DROP TABLE saved");
    open(&db, Config::default()).apply("auth", Some(3), "orchestrator", &task("after the restore", &[])).unwrap();
    let ready = server.view("auth", &View::Ready).unwrap();
    assert!(ready.contains("after the restore") && !ready.contains("lost in the restore"), "the restored history: {ready}");
}

/// A new database is migrated to the current version, one from version 1 keeps its grants, and
/// one from a newer workmem is refused.
fn migrations(target: &dyn Target) {
    let db = target.fresh("migrations");
    drop(open(&db, Config::default()));
    drop(open(&db, Config::default()));
    let mut raw = raw(&db);
    raw("INSERT INTO workmem_schema (version) VALUES (99)");
    let Err(e) = Boards::open(&db, common::runtime(), Config::default()) else { panic!("a newer schema opened") };
    assert_eq!(
        e.to_string(),
        format!("the board database is at schema version 99, newer than this workmem's {}: upgrade workmem", workmem_store::db::SCHEMA_VERSION)
    );

    // A database as version 1 left it (boards and their own grants table, as released):
    // its board tokens still open their board, and nothing else, once migrated.
    let db = target.fresh("migrations_from_1");
    self::raw(&db)("CREATE TABLE workmem_schema (version BIGINT NOT NULL);
        INSERT INTO workmem_schema (version) VALUES (1);
        CREATE TABLE boards (id TEXT PRIMARY KEY, revision BIGINT NOT NULL, status TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, archived_at TEXT);
        CREATE TABLE board_events (board TEXT NOT NULL REFERENCES boards (id) ON DELETE CASCADE, revision BIGINT NOT NULL, actor TEXT NOT NULL, at TEXT NOT NULL, event TEXT NOT NULL, PRIMARY KEY (board, revision));
        CREATE TABLE board_snapshots (board TEXT NOT NULL REFERENCES boards (id) ON DELETE CASCADE, revision BIGINT NOT NULL, state TEXT NOT NULL, PRIMARY KEY (board, revision));
        CREATE TABLE board_grants (token_sha256 TEXT NOT NULL, board TEXT NOT NULL REFERENCES boards (id) ON DELETE CASCADE, agent TEXT NOT NULL, PRIMARY KEY (token_sha256, board));
        CREATE INDEX boards_archived ON boards (archived_at);
        INSERT INTO boards VALUES ('auth', 0, 'active', '2026-11-20T10:00:00Z', '2026-11-20T10:00:00Z', NULL);
        INSERT INTO board_grants VALUES ('897c7bb7aa4d4d21dfc20e9467dc30ef916aed843220184a608b4dd00ae887d2', 'auth', 'worker-1');");
    let mut grants = Grants::open(&db).unwrap();
    assert_eq!(grants.authorize("wm_from_version_1", Scope::Board("auth")).unwrap(), "worker-1", "the version 1 grant (the SHA-256 of this token)");
    assert!(
        matches!(grants.authorize("wm_from_version_1", Scope::Vault("auth")), Err(workmem_store::db::Error::Forbidden(_))),
        "a board's token opens only the board"
    );
    assert!(grants.grant(Scope::Board("auth"), "worker-2", &GrantOptions::default()).is_ok(), "the migrated board is there to grant");
}

/// Runs SQL on the database directly, as an operator (or another program) would.
fn raw(db: &str) -> impl FnMut(&str) {
    enum Conn {
        Sqlite(rusqlite::Connection),
        Pg(Box<postgres::Client>),
    }
    let mut conn = if db.starts_with("postgres://") {
        Conn::Pg(Box::new(postgres::Client::connect(db, postgres::NoTls).unwrap()))
    } else {
        Conn::Sqlite(rusqlite::Connection::open(db).unwrap())
    };
    move |sql| match &mut conn {
        Conn::Sqlite(c) => c.execute_batch(sql).unwrap(),
        Conn::Pg(c) => c.batch_execute(sql).unwrap(),
    }
}

/// The one number `sql` selects.
fn count(db: &str, sql: &str) -> i64 {
    if db.starts_with("postgres://") {
        postgres::Client::connect(db, postgres::NoTls).unwrap().query_one(sql, &[]).unwrap().get(0)
    } else {
        rusqlite::Connection::open(db).unwrap().query_row(sql, [], |r| r.get(0)).unwrap()
    }
}

/// A dead worker's claim expires and the orchestrator reclaims it; an archived board is
/// deleted once past retention, with its grants.
fn leases_and_retention(target: &dyn Target) {
    let db = target.fresh("leases");
    // Times are kept to the second, so a claim heard at t is stale once the clock passes
    // floor(t) + lease + 1 s: with a zero lease the first check below failed whenever a second
    // boundary fell between the heartbeat and it (seen on PostgreSQL in CI).
    let lease = Duration::from_secs(2);
    let mut boards = open(&db, Config { lease, retention: Duration::ZERO, ..Config::default() });
    new_board(&mut boards, "auth");
    boards.apply("auth", None, "orchestrator", &task("a", &[])).unwrap();
    boards.apply("auth", None, "orchestrator", &task("b", &[])).unwrap();
    boards.apply("auth", None, "orchestrator", &Op::Assign(Assignment { task: "T-1".into(), agent: "dev".into() })).unwrap();
    boards.apply("auth", None, "dev", &set("T-1", TaskStatus::InProgress)).unwrap();
    new_board(&mut boards, "old");
    boards.apply("old", None, "orchestrator", &Op::Close(BoardStatus::Completed)).unwrap();
    boards.apply("old", None, "orchestrator", &Op::Archive).unwrap();
    let mut grants = Grants::open(&db).unwrap();
    let token = grants.grant(Scope::Board("old"), "dev", &GrantOptions::default()).unwrap().token;
    assert_eq!(boards.reclaim_stale("auth", "orchestrator").unwrap(), Vec::<String>::new(), "heard within the lease");
    std::thread::sleep(lease + Duration::from_secs(1));
    assert_eq!(boards.reclaim_stale("auth", "orchestrator").unwrap(), vec!["T-1"]);
    let ready: serde_json::Value = serde_json::from_str(&boards.view("auth", &View::Ready).unwrap()).unwrap();
    assert_eq!(ready.as_array().unwrap().len(), 2, "the reclaimed task is ready again");

    assert_eq!(boards.collect_garbage().unwrap(), vec!["old"]);
    assert!(matches!(grants.authorize(&token, Scope::Board("old")), Err(Error::Forbidden(_))), "the board's grants went with it");
    assert_eq!(boards.list().unwrap().iter().map(|h| h.id.as_str()).collect::<Vec<_>>(), vec!["auth"]);
    assert!(matches!(boards.revision("old"), Err(Error::NoBoard(_))));
    assert!(boards.events("old", 0, 10).is_err());
}

/// A token opens the scope it was granted for, and no other: not another board, nor a vault
/// or session of the same name.
fn tokens(target: &dyn Target) {
    let db = target.fresh("tokens");
    let mut boards = open(&db, Config::default());
    new_board(&mut boards, "auth");
    new_board(&mut boards, "billing");
    let mut grants = Grants::open(&db).unwrap();
    let granted = grants.grant(Scope::Board("auth"), "dev", &GrantOptions::default()).unwrap();
    let token = granted.token.clone();
    assert!(token.starts_with("wm_") && token.len() == 67);
    assert_eq!(grants.authorize(&token, Scope::Board("auth")).unwrap(), "dev");
    let other = grants.authorize(&token, Scope::Board("billing")).unwrap_err();
    assert!(matches!(&other, Error::Forbidden(b) if b == "board billing"), "{other:?}");
    assert_eq!(other.to_string(), "this token does not grant access to board billing");
    assert!(matches!(grants.authorize(&token, Scope::Vault("auth")), Err(Error::Forbidden(_))));
    assert!(matches!(grants.authorize(&token, Scope::Session("auth")), Err(Error::Forbidden(_))));
    assert!(matches!(grants.authorize("wm_guess", Scope::Board("auth")), Err(Error::Forbidden(_))));
    assert!(matches!(grants.grant(Scope::Board("nope"), "dev", &GrantOptions::default()), Err(Error::NoBoard(_))));
    let vault = grants.grant(Scope::Vault("acme"), "dev", &GrantOptions::default()).unwrap().token;
    assert_eq!(grants.authorize(&vault, Scope::Vault("acme")).unwrap(), "dev", "a vault is granted before its first put");
    assert!(matches!(grants.authorize(&vault, Scope::Vault("acme2")), Err(Error::Forbidden(_))));
    assert_eq!(grants.authorize_write(&token, Scope::Board("auth")).unwrap(), "dev");

    // A read-only grant reads and writes nothing; an expired one opens nothing.
    let reader = grants.grant(Scope::Board("auth"), "page", &GrantOptions { read_only: true, ..Default::default() }).unwrap();
    assert_eq!(grants.authorize(&reader.token, Scope::Board("auth")).unwrap(), "page");
    let write = grants.authorize_write(&reader.token, Scope::Board("auth")).unwrap_err();
    assert_eq!((write.code(), write.to_string()), ("forbidden", "this token may read board auth and write nothing".to_string()));
    let past = Some("2026-01-01T00:00:00Z".to_string());
    let expired = grants.grant(Scope::Board("auth"), "old", &GrantOptions { expires_at: past, ..Default::default() }).unwrap();
    let refused = grants.authorize(&expired.token, Scope::Board("auth")).unwrap_err();
    assert_eq!((refused.code(), refused.to_string()), ("forbidden", "this token's grant of board auth expired at 2026-01-01T00:00:00Z".to_string()));
    let later = Some("9999-01-01T00:00:00Z".to_string());
    let lasting = grants.grant(Scope::Board("auth"), "new", &GrantOptions { expires_at: later.clone(), ..Default::default() }).unwrap();
    assert_eq!(grants.authorize_write(&lasting.token, Scope::Board("auth")).unwrap(), "new");

    // Listed by ID (never the token), and revoked by it.
    let listed = grants.list().unwrap();
    assert_eq!(listed.len(), 5);
    let shown = listed.iter().find(|g| g.id == reader.id).unwrap();
    assert_eq!((shown.scope.as_str(), shown.agent.as_str(), shown.read_only, shown.expires_at.as_deref()), ("board:auth", "page", true, None));
    assert_eq!(listed.iter().find(|g| g.id == lasting.id).unwrap().expires_at, later);
    assert!(listed.iter().all(|g| g.id.len() == 16 && !token.contains(&g.id[..]) && !g.created_at.is_empty()));
    assert_eq!(grants.revoke(&granted.id).unwrap(), 1);
    assert!(matches!(grants.authorize(&token, Scope::Board("auth")), Err(Error::Forbidden(_))), "a revoked token opens nothing");
    assert_eq!(grants.revoke(&granted.id).unwrap(), 0);
    assert!(matches!(grants.revoke("../x"), Err(Error::InvalidId(_))));
    assert_eq!(grants.list().unwrap().len(), 4);
}

/// A follower gets the events after its revision as they are written (NOTIFY on
/// PostgreSQL, SQLite's data version polled), and a listener is woken by another
/// connection's commit, and only by one.
fn change_feed(target: &dyn Target) {
    let db = target.fresh("feed");
    let mut boards = open(&db, Config::default());
    new_board(&mut boards, "auth");
    boards.apply("auth", None, "orchestrator", &task("a", &[])).unwrap();
    assert!(boards.follow("auth", 1, Duration::from_millis(200)).unwrap().is_empty(), "nothing new: waits, then returns none");
    let writer_db = db.clone();
    let writer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        open(&writer_db, Config::default()).apply("auth", None, "dev", &set("T-1", TaskStatus::InProgress)).unwrap();
    });
    let started = Instant::now();
    let events = boards.follow("auth", 1, Duration::from_secs(20)).unwrap();
    writer.join().unwrap();
    assert_eq!(events.iter().map(|e| (e.revision, e.actor.as_str())).collect::<Vec<_>>(), vec![(2, "dev")]);
    assert!(started.elapsed() < Duration::from_secs(10), "the follower woke on the write");

    // What a server's watcher waits on: woken by another connection's commit to a board, and
    // only then, told which board.
    new_board(&mut boards, "billing");
    let mut watcher = open(&db, Config::default());
    watcher.listen().unwrap();
    let none = BTreeSet::new();
    assert_eq!(watcher.wait_for_change(Duration::from_millis(300)).unwrap(), none, "nothing was written: no wake");
    for (board, op) in [("auth", Op::Heartbeat("T-1".into())), ("billing", task("invoices", &[]))] {
        open(&db, Config::default()).apply(board, None, "dev", &op).unwrap();
        let started = Instant::now();
        assert_eq!(
            watcher.wait_for_change(Duration::from_secs(20)).unwrap(),
            BTreeSet::from([board.to_string()]),
            "the commit woke the watcher, naming its board"
        );
        assert!(started.elapsed() < Duration::from_secs(10));
        assert_eq!(watcher.wait_for_change(Duration::from_millis(300)).unwrap(), none, "one commit, one wake");
    }
    Grants::open(&db).unwrap().grant(Scope::Vault("acme"), "dev", &GrantOptions::default()).unwrap();
    assert_eq!(watcher.wait_for_change(Duration::from_millis(500)).unwrap(), none, "a write that changes no board wakes nobody");
}

/// 16 writers × 500 mutations on one board, every other one a compare-and-swap against
/// the revision the writer last saw: every acknowledged mutation is in the log and on the
/// board exactly once, every conflict was reported (and wrote nothing), and the log
/// rebuilds the board.
fn sixteen_writers(target: &dyn Target) {
    const WRITERS: usize = 16;
    const EACH: usize = 500;
    let db = target.fresh("writers");
    new_board(&mut open(&db, Config::default()), "auth");
    let started = Instant::now();
    let results: Vec<(Vec<(u64, String)>, usize)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..WRITERS)
            .map(|w| {
                let db = db.clone();
                s.spawn(move || {
                    let mut boards = open(&db, Config::default());
                    let mut seen = boards.revision("auth").unwrap();
                    let (mut acked, mut conflicts) = (Vec::new(), 0);
                    for n in 0..EACH {
                        let title = format!("w{w}-{n}");
                        loop {
                            let expected = (n % 2 == 1).then_some(seen);
                            match boards.apply("auth", expected, &format!("writer-{w}"), &task(&title, &[])) {
                                Ok(event) => {
                                    seen = event.revision;
                                    acked.push((event.revision, title.clone()));
                                    break;
                                }
                                Err(Error::Conflict { expected: e, current, .. }) => {
                                    assert!(current > e, "a conflict names a newer revision");
                                    conflicts += 1;
                                    seen = current;
                                }
                                Err(e) => panic!("writer {w}: {e}"),
                            }
                        }
                    }
                    (acked, conflicts)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let elapsed = started.elapsed();
    let mut boards = open(&db, Config::default());
    let acked: BTreeSet<(u64, String)> = results.iter().flat_map(|(a, _)| a.iter().cloned()).collect();
    let conflicts: usize = results.iter().map(|(_, c)| c).sum();
    assert_eq!(acked.len(), WRITERS * EACH);
    assert_eq!(boards.revision("auth").unwrap(), (WRITERS * EACH) as u64, "one revision per acknowledged mutation, none for a conflict");
    let events = boards.events("auth", 0, u64::MAX >> 1).unwrap();
    let logged: BTreeSet<(u64, String)> = events
        .iter()
        .map(|e| {
            let event: serde_json::Value = serde_json::from_str(&e.event).unwrap();
            (e.revision, event["op"]["title"].as_str().unwrap().to_string())
        })
        .collect();
    assert_eq!(logged, acked, "the log holds exactly the acknowledged mutations");
    let tasks: serde_json::Value = serde_json::from_str(&boards.view("auth", &View::Tasks).unwrap()).unwrap();
    let titles: BTreeSet<&str> = tasks.as_array().unwrap().iter().map(|t| t["title"].as_str().unwrap()).collect();
    assert_eq!(titles, acked.iter().map(|(_, t)| t.as_str()).collect(), "each acknowledged task is on the board once");
    // Whether the writers' compare-and-swaps met is up to the scheduler (one run saw 8
    // conflicts in 8,000); a stale one is refused whatever happened.
    let stale = boards.apply("auth", Some(1), "late", &task("stale", &[]));
    assert!(matches!(stale, Err(Error::Conflict { expected: 1, current, .. }) if current == (WRITERS * EACH) as u64), "{stale:?}");
    assert_eq!(boards.rebuild("auth").unwrap(), boards.state("auth").unwrap());
    eprintln!(
        "{} writers x {EACH}: {} mutations in {elapsed:.2?} ({:.0}/s), {conflicts} conflicts reported and retried, 0 lost",
        WRITERS,
        WRITERS * EACH,
        (WRITERS * EACH) as f64 / elapsed.as_secs_f64()
    );
}
