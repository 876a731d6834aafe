//! `workmem board` and `workmem doc` as a user runs them: spec 002's worked example
//! (examples/board/auth.sh) end to end on SQLite and on a real PostgreSQL, spec 004's
//! documents, and the JSON a script gets, errors included.

use crate::common;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("board-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn workmem(db: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_workmem"))
        .arg("board")
        .args(args)
        // The database's old variable, from when it held boards only, still names it.
        .env("WORKMEM_BOARD_DB", db)
        .env_remove("WORKMEM_DB")
        .env_remove("WORKMEM_AGENT")
        .env_remove("WORKMEM_BOARD_TOKEN")
        .env("WORKMEM_CACHE_DIR", Path::new(env!("CARGO_TARGET_TMPDIR")).join("engine-cache"))
        .output()
        .unwrap()
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

/// Runs the example against `db`, then checks the board it leaves, as the orchestrator reads it.
fn worked_example(db: &str) {
    let out = Command::new(common::root().join("examples/board/auth.sh"))
        .env("WORKMEM", env!("CARGO_BIN_EXE_workmem"))
        .env("WORKMEM_DB", db)
        .env("WORKMEM_CACHE_DIR", Path::new(env!("CARGO_TARGET_TMPDIR")).join("engine-cache"))
        .output()
        .unwrap();
    assert!(out.status.success(), "the example failed:\n{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));

    let state = json(&workmem(db, &["show", "auth", "state", "--json"]));
    assert_eq!(state["goal"], "Build auth system for the API");
    assert_eq!(state["revision"], 16);
    let tasks = state["tasks"].as_array().unwrap();
    let t1 = &tasks[0];
    assert_eq!((t1["status"].as_str(), t1["reviewed_by"].as_str(), t1["review_status"].as_str()), (Some("completed"), Some("qa"), Some("approved")));
    assert_eq!((tasks[1]["status"].as_str(), tasks[1]["assigned_to"].as_str()), (Some("assigned"), Some("dev")));
    let decisions = state["decisions"].as_array().unwrap();
    assert_eq!(decisions[1]["choice"], "A separate tokens table");
    assert_eq!(state["nudges"][0]["target"], serde_json::json!({"agent": "dev"}));
    let artifact = &state["artifacts"][0];
    assert_eq!((artifact["associated_task"].as_str(), artifact["version"].as_u64()), (Some("T-1"), Some(1)));
    assert!(artifact["checksum"].as_str().unwrap().starts_with("sha256:"), "an artifact is kept by reference with its checksum");

    let context = json(&workmem(db, &["context", "auth", "T-2", "--json"]));
    assert_eq!(context["dependencies"][0]["result"]["summary"], "tokens table with user_id and refresh_token");
    let candidates = json(&workmem(db, &["candidates", "auth", "--json"]));
    let kinds: Vec<&str> = candidates.as_array().unwrap().iter().map(|c| c["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["decision", "decision", "insight", "pattern"]);
    let contributions = json(&workmem(db, &["show", "auth", "contributions", "--json"]));
    assert_eq!(contributions.as_array().unwrap().iter().map(|c| c["agent_id"].as_str().unwrap()).collect::<Vec<_>>(), ["dev"]);
}

#[test]
fn the_spec_002_example_runs_on_sqlite() {
    worked_example(&scratch("example").join("boards.sqlite3").display().to_string());
}

#[test]
fn the_spec_002_example_runs_on_postgres() {
    if let Some(server) = common::postgres::Server::start() {
        worked_example(&server.database("example"));
    }
}

/// What a script gets: JSON for every outcome, a stable error code, the current revision on a
/// conflict, and nothing changed by a command that failed.
#[test]
fn errors_are_json_a_script_can_act_on() {
    let db = scratch("errors").join("boards.sqlite3").display().to_string();
    let created = json(&workmem(&db, &["create", "b", "--name", "n", "--goal", "g", "--json"]));
    assert_eq!(created, serde_json::json!({"ok": true, "board": "b", "revision": 0}));
    let added = json(&workmem(&db, &["task", "add", "b", "first", "--json"]));
    assert_eq!((added["revision"].as_u64(), added["event"]["op"]["op"].as_str()), (Some(1), Some("add_task")));

    let error = |out: Output| -> Value {
        assert_eq!(out.status.code(), Some(1));
        json(&out)["error"].clone()
    };
    let conflict = error(workmem(&db, &["task", "add", "b", "second", "--expect", "0", "--json"]));
    assert_eq!((conflict["kind"].as_str(), conflict["current_revision"].as_u64()), (Some("conflict"), Some(1)));
    let cycle = error(workmem(&db, &["task", "depend", "b", "T-1", "--on", "T-1", "--json"]));
    assert_eq!(
        (cycle["kind"].as_str(), cycle["rule"].as_str(), cycle["message"].as_str()),
        (Some("refused"), Some("cycle"), Some("that dependency would close a cycle: T-1 -> T-1"))
    );
    let illegal = error(workmem(&db, &["status", "b", "T-1", "completed", "--json"]));
    assert_eq!(illegal["message"], "completing a task takes --summary: what was done");
    assert_eq!(error(workmem(&db, &["ready", "nope", "--json"]))["kind"], "no_board");
    assert_eq!(error(workmem(&db, &["create", "b", "--name", "n", "--goal", "g", "--json"]))["kind"], "exists");
    // Spans past the clock's epoch take nothing (they panicked with exit 101 and no JSON).
    for args in [&["reclaim", "b", "--lease", "100years", "--json"][..], &["gc", "--retention", "100years", "--json"]] {
        let out = workmem(&db, args);
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        json(&out);
    }

    // One rule for IDs: nothing that is a path, a control or an invisible character.
    for id in ["..", "a/b", "x\u{1b}]52;c;aGk=\u{7}", "bell\u{7}", "line\nbreak", "\u{202e}detelpmoc"] {
        let refused = error(workmem(&db, &["create", id, "--name", "n", "--goal", "g", "--json"]));
        assert_eq!((refused["kind"].as_str(), refused["rule"].as_str()), (Some("refused"), Some("invalid-id")), "{id:?}: {refused}");
    }
    assert_eq!(error(workmem(&db, &["grant", "b", "qa\u{1b}[2J", "--json"]))["kind"], "invalid_id");

    // A token acts as its agent, on its board only.
    workmem(&db, &["create", "other", "--name", "n", "--goal", "g"]);
    let token = json(&workmem(&db, &["grant", "b", "dev", "--json"]))["token"].as_str().unwrap().to_string();
    let started = json(&workmem(&db, &["status", "b", "T-1", "in_progress", "--token", &token, "--json"]));
    assert_eq!(started["event"]["actor"], "dev");
    assert_eq!(error(workmem(&db, &["ready", "other", "--token", &token, "--json"]))["kind"], "forbidden");
    assert_eq!(error(workmem(&db, &["ready", "b", "--token", "wmb_0", "--json"]))["kind"], "forbidden");
    // A read-only token that expires: it reads, writes nothing, is listed and revoked by ID.
    let reader = json(&workmem(&db, &["grant", "b", "viewer", "--read-only", "--expires", "1h", "--json"]));
    assert_eq!((reader["board"].as_str(), reader["agent"].as_str(), reader["read_only"].as_bool()), (Some("b"), Some("viewer"), Some(true)));
    assert!(reader["expires_at"].as_str().is_some_and(|at| at > "2026"), "{reader}");
    let (reader_token, reader_id) = (reader["token"].as_str().unwrap(), reader["id"].as_str().unwrap());
    assert!(workmem(&db, &["ready", "b", "--token", reader_token, "--json"]).status.success());
    let wrote = error(workmem(&db, &["nudge", "b", "hello", "--token", reader_token, "--json"]));
    assert_eq!((wrote["kind"].as_str(), wrote["message"].as_str()), (Some("forbidden"), Some("this token may read board b and write nothing")));
    let tokens = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_workmem"))
            .arg("token")
            .args(args)
            .args(["--db", &db, "--json"])
            .env("WORKMEM_CACHE_DIR", Path::new(env!("CARGO_TARGET_TMPDIR")).join("engine-cache"))
            .output()
            .unwrap()
    };
    let listed = json(&tokens(&["list"]));
    let row = listed.as_array().unwrap().iter().find(|g| g["id"] == reader_id).expect("the grant is listed").clone();
    assert_eq!((row["scope"].as_str(), row["read_only"].as_bool()), (Some("board:b"), Some(true)));
    assert!(!listed.to_string().contains(reader_token), "a listing never shows a token");
    assert_eq!(json(&tokens(&["revoke", reader_id]))["revoked"], 1);
    assert_eq!(error(workmem(&db, &["ready", "b", "--token", reader_token, "--json"]))["kind"], "forbidden");
    assert_eq!(error(tokens(&["revoke", reader_id]))["kind"], "no_grant");
    let far = error(workmem(&db, &["grant", "b", "viewer", "--expires", "100000years", "--json"]));
    assert!(far["message"].as_str().unwrap().contains("past the year 9999"), "{far}");

    // A worker's token cannot mint a token, for another agent or itself: granting is the
    // database owner's (who needs no token).
    for agent in ["qa-human", "dev"] {
        let minted = error(workmem(&db, &["grant", "b", agent, "--token", &token, "--json"]));
        assert_eq!(minted["kind"], "forbidden", "{minted}");
        assert_eq!(minted["message"], "only the database's owner can grant a token, not an agent's token");
    }

    // An artifact by reference: the CLI takes the file's SHA-256, streamed.
    let file = scratch("artifact").join("tokens.sql");
    std::fs::write(&file, "CREATE TABLE tokens ();\n".repeat(10_000)).unwrap();
    let recorded = json(&workmem(&db, &["artifact", "b", file.to_str().unwrap(), "--task", "T-1", "--json"]));
    let expected = {
        use sha2::Digest;
        sha2::Sha256::digest(std::fs::read(&file).unwrap()).iter().map(|b| format!("{b:02x}")).collect::<String>()
    };
    assert_eq!(recorded["event"]["op"]["checksum"], format!("sha256:{expected}"));
    let missing = error(workmem(&db, &["artifact", "b", "/nonexistent/x", "--task", "T-1", "--json"]));
    assert!(missing["message"].as_str().unwrap().starts_with("reading /nonexistent/x for its checksum"), "{missing}");

    let state = json(&workmem(&db, &["show", "b", "state", "--json"]));
    assert_eq!(state["revision"], 3, "only the three commands that succeeded wrote");
    let feed = workmem(&db, &["watch", "b", "--after", "0", "--count", "2"]);
    let lines: Vec<Value> = String::from_utf8_lossy(&feed.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.iter().map(|e| e["revision"].as_u64().unwrap()).collect::<Vec<_>>(), [1, 2]);
    let unreachable = error(workmem("postgres://u:secret@127.0.0.1:1/db", &["ready", "b", "--json"]));
    assert_eq!(unreachable["kind"], "open");
    assert!(!unreachable["message"].as_str().unwrap().contains("secret"), "a password never shows: {unreachable}");
}

/// `workmem doc`: a document put from standard input, a section replaced as a new version,
/// versions, search, and refusals that store nothing.
#[test]
fn documents_from_the_cli() {
    let db = scratch("doc").join("boards.sqlite3").display().to_string();
    let doc = |args: &[&str], input: &str| -> Output {
        use std::io::Write;
        let mut child = Command::new(env!("CARGO_BIN_EXE_workmem"))
            .arg("doc")
            .args(args)
            .args(["--db", &db])
            .env("WORKMEM_CACHE_DIR", Path::new(env!("CARGO_TARGET_TMPDIR")).join("engine-cache"))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
        child.wait_with_output().unwrap()
    };
    let template = String::from_utf8(doc(&["template"], "").stdout).unwrap();
    let put = json(&doc(&["put", "acme", "assistant", "--as", "agent-1", "--json"], &template));
    assert_eq!((put["version"]["version"].as_u64(), put["version"]["actor_id"].as_str()), (Some(1), Some("agent-1")));
    let set = json(&doc(&["set-section", "acme", "assistant", "progress", "--json"], "- shipped auth hotfix\n"));
    assert_eq!(set["version"]["version"], 2);
    let progress = doc(&["get", "acme", "assistant", "--section", "Progress"], "");
    assert_eq!(String::from_utf8(progress.stdout).unwrap(), "- shipped auth hotfix\n\n");
    assert_eq!(json(&doc(&["get", "acme", "assistant", "--version", "1", "--json"], ""))["text"], template.trim_end().to_string() + "\n");

    let refused = doc(&["put", "acme", "assistant", "--json"], "bell \u{7}");
    assert_eq!(refused.status.code(), Some(1));
    assert_eq!(json(&refused)["error"]["message"], "1:6: control character U+0007; only tab and newline are allowed");
    let stale = json(&doc(&["put", "acme", "assistant", "--expect", "1", "--json"], "# Facts\n- late\n"));
    assert_eq!((stale["error"]["kind"].as_str(), stale["error"]["current_version"].as_u64()), (Some("conflict"), Some(2)));
    let versions = json(&doc(&["versions", "acme", "assistant", "--json"], ""));
    assert_eq!(versions.as_array().unwrap().iter().map(|v| v["version"].as_u64().unwrap()).collect::<Vec<_>>(), [2, 1], "the refusals stored nothing");
    let hits = json(&doc(&["search", "acme", "hotfix", "--json"], ""));
    assert_eq!(hits[0]["memory_id"], "assistant");
}

/// A database file that is not workmem's is refused before a byte of it changes (no tables
/// added, no WAL), and so is one a newer workmem made; a libpq `key=value` string is not
/// taken for a file name; a password is never printed, whatever form the URL takes.
#[test]
fn other_files_and_passwords_are_left_alone() {
    let dir = scratch("foreign");
    let app = dir.join("app.db");
    {
        let conn = rusqlite::Connection::open(&app).unwrap();
        conn.execute_batch("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users (name) VALUES ('ann');").unwrap();
    }
    let before = std::fs::read(&app).unwrap();
    let refused = json(&workmem(app.to_str().unwrap(), &["list", "--json"]));
    assert_eq!(refused["error"]["kind"], "open", "{refused}");
    assert!(refused["error"]["message"].as_str().unwrap().contains("another program's SQLite database"), "{refused}");
    assert_eq!(std::fs::read(&app).unwrap(), before, "another program's database is unchanged");
    assert!(!dir.join("app.db-wal").exists(), "and not switched to WAL");

    // A database from a newer workmem, in the journal mode it chose.
    let newer = dir.join("newer.db");
    assert!(workmem(newer.to_str().unwrap(), &["list", "--json"]).status.success());
    {
        let conn = rusqlite::Connection::open(&newer).unwrap();
        conn.execute_batch("PRAGMA journal_mode = DELETE; INSERT INTO workmem_schema (version) VALUES (99);").unwrap();
    }
    let before = std::fs::read(&newer).unwrap();
    let refused = json(&workmem(newer.to_str().unwrap(), &["list", "--json"]));
    assert_eq!(refused["error"]["kind"], "newer_schema", "{refused}");
    assert_eq!(std::fs::read(&newer).unwrap(), before, "a newer workmem's database is unchanged");
    let mode: String = rusqlite::Connection::open(&newer).unwrap().query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
    assert_eq!(mode, "delete", "and not switched to WAL");

    // libpq's key=value form: refused, no file named with the password, the password unsaid.
    let conninfo = "host=127.0.0.1 user=app password=hunter2 dbname=app";
    let out = Command::new(env!("CARGO_BIN_EXE_workmem"))
        .args(["board", "--db", conninfo, "list", "--json"])
        .current_dir(&dir)
        .env("WORKMEM_CACHE_DIR", Path::new(env!("CARGO_TARGET_TMPDIR")).join("engine-cache"))
        .output()
        .unwrap();
    let refused = json(&out);
    assert_eq!(refused["error"]["kind"], "open", "{refused}");
    let everything = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(!everything.contains("hunter2"), "{everything}");
    assert!(everything.contains("password=***"), "{everything}");
    let mut names: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert!(names.iter().all(|n| !n.contains("hunter2")), "{names:?}");

    // A URL whose password is in the query, or in the user info, on an unreachable server.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    for url in [
        format!("postgres://app@127.0.0.1:{port}/app?password=hunter2&connect_timeout=2"),
        format!("postgresql://app:hunter2@127.0.0.1:{port}/app?connect_timeout=2"),
    ] {
        let out = workmem(&url, &["list", "--json"]);
        let everything = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(!out.status.success() && !everything.contains("hunter2"), "{everything}");
        assert!(everything.contains("***"), "{everything}");
    }
}
