//! `workmem agent` for a 20-turn scripted session against the loopback LLM server: memory
//! kept through the DSL and through file writes, history stripped once the overview is
//! maintained, context_meta right on every request, a stable prefix, and failures that keep
//! what completed before them and nothing of the step that failed.

use crate::common;
use crate::llm_server;

use common::Workspace;
use llm_server::{Reply, Server};
use serde_json::{Value, json};
use workmem_llm::Message;
use workmem_store::{Entry, LogRecord};

const DSL: &str = "CURRENT_PROGRESS:\n  In Progress:\n    - Fixing the parser\nKEY_LEARNINGS:\n  ADD:\n    - because it matters: the bug is in parse.rs\n";
const BAD_DSL: &str = "KEY_LEARNINGS:\n  ADD:\n    - no reason given\n";
const FREEFORM: &str = "# Working Memory\n\n## Current task\nShip the parser fix\n\n## Key decisions\n- Keep the old API\n";

/// One turn: what the model says (in order) and whether the client streams.
struct Turn {
    replies: Vec<Reply>,
    stream: bool,
}

fn plain(replies: Vec<Reply>) -> Turn {
    Turn { replies, stream: false }
}

fn script() -> Vec<Turn> {
    let mut turns = vec![
        // 1: a detail note through a file write; the overview is still the template.
        plain(vec![Reply::call(&[("write_file", json!({"path": "working-memory/detail/notes.md", "content": "parse.rs line 40"}))]), Reply::say("Noted.")]),
        // 2: a plain answer.
        plain(vec![Reply::say("Looking at the parser.")]),
        // 3: memory through the DSL: the overview is now maintained.
        plain(vec![Reply::call(&[("update_memory", json!({"dsl": DSL}))]), Reply::say("Memory updated.")]),
        // 4: a streamed tool call and answer.
        Turn {
            replies: vec![Reply::call_streamed(&[("read_file", json!({"path": "working-memory/detail/notes.md"}))]), Reply::streamed("Read my notes.")],
            stream: true,
        },
        // 5: malformed DSL: refused, memory unchanged.
        plain(vec![Reply::call(&[("update_memory", json!({"dsl": BAD_DSL}))]), Reply::say("I will fix that later.")]),
        // 6: a path out of the session: refused.
        plain(vec![Reply::call(&[("write_file", json!({"path": "../escape.md", "content": "x"}))]), Reply::say("Refused, fine.")]),
        // 7: the provider fails: the turn fails, memory unchanged.
        plain(vec![Reply::status(500, vec![])]),
        // 8: a free-form overview written by the model itself.
        plain(vec![Reply::call(&[("write_file", json!({"path": "working-memory/overview.md", "content": FREEFORM}))]), Reply::say("Rewrote my overview.")]),
    ];
    for n in 9..=20 {
        turns.push(plain(vec![Reply::say(&format!("Step {n} done."))]));
    }
    turns
}

fn context_meta(request: &Value) -> Value {
    let messages = request["messages"].as_array().unwrap();
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "system", "context_meta must be the last message");
    let text = last["content"].as_str().unwrap();
    assert!(text.starts_with("<context_meta>\n{") && text.ends_with("\n</context_meta>"), "{text}");
    let body = &text["<context_meta>\n".len()..text.len() - "</context_meta>".len()];
    let (figures, said) = body.split_once('\n').unwrap();
    let mut meta: Value = serde_json::from_str(figures).unwrap();
    meta["reminder"] = json!(said.trim_end());
    meta
}

#[test]
fn a_twenty_turn_session() {
    let ws = Workspace::new("agent");
    let turns = script();
    let server = Server::start(turns.iter().flat_map(|t| t.replies.clone()).collect());
    let mut requests_before = Vec::new(); // index of each turn's first request
    let mut snapshots = Vec::new(); // the session's files after each turn
    for (i, turn) in turns.iter().enumerate() {
        let n = i + 1;
        requests_before.push(server.requests().len());
        let before = ws.files();
        let task = format!("task {n}");
        let mut args = vec!["agent", "--session", "s", task.as_str(), "--timeout", "2", "--retries", "0", "--model", "gpt-4o", "--remind-after", "5"];
        if !turn.stream {
            args.push("--no-stream");
        }
        let out = ws.cmd(Some(&server.url), &args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        match n {
            7 => {
                assert_eq!(out.status.code(), Some(1), "turn 7: {stderr}");
                assert!(stderr.contains("HTTP 500"), "{stderr}");
                let memory =
                    |files: &[(std::path::PathBuf, Vec<u8>)]| files.iter().filter(|(p, _)| !p.ends_with("messages.jsonl")).cloned().collect::<Vec<_>>();
                assert_eq!(memory(&ws.files()), memory(&before), "a failed turn changed the memory");
            }
            _ => assert!(out.status.success(), "turn {n}: {stderr}"),
        }
        snapshots.push(ws.files());
    }
    let requests: Vec<Value> = server.requests().into_iter().map(|r| r.body).collect();
    let memory_file = |name: &str| std::fs::read_to_string(ws.session.join(name)).unwrap();

    // Memory through file writes and through the DSL.
    assert_eq!(memory_file("working-memory/detail/notes.md"), "parse.rs line 40");
    assert_eq!(ws.learnings()[0]["text"], "the bug is in parse.rs");
    assert_eq!(memory_file("working-memory/overview.md"), FREEFORM);
    // Turn 5's malformed DSL and turn 6's escape changed nothing but the conversation.
    let state_after = |turn: usize| snapshots[turn - 1].iter().find(|(p, _)| p.ends_with("state.json")).unwrap().1.clone();
    assert_eq!(state_after(5), state_after(4));
    assert!(!ws.root.join("sessions").join("escape.md").exists() && !ws.session.parent().unwrap().join("escape.md").exists());
    let records: Vec<LogRecord> =
        std::fs::read_to_string(ws.session.join("messages.jsonl")).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let seqs: Vec<u64> = records.iter().map(|r| r.seq).collect();
    assert_eq!(seqs, (1..=records.len() as u64).collect::<Vec<_>>(), "messages.jsonl numbers its entries 1, 2, 3, ...");
    let stored: Vec<_> = records
        .into_iter()
        .filter_map(|r| match r.entry {
            Entry::Message(m) => Some(m),
            Entry::Compaction(_) | Entry::Withdrawal(_) => None,
        })
        .collect();
    let tool_results: Vec<&str> = stored.iter().filter(|m| m.role == "tool").map(|m| m.content.as_str()).collect();
    assert!(tool_results.iter().any(|r| r.contains("line 3, column 7") && r.contains("memory is unchanged")), "{tool_results:?}");
    assert!(tool_results.iter().any(|r| r.contains("\"../escape.md\" is refused")), "{tool_results:?}");
    assert!(tool_results.contains(&"parse.rs line 40"), "the streamed read_file call ran");
    assert_eq!(stored.iter().filter(|m| m.role == "user").count(), 20, "messages.jsonl keeps every message");

    // History: injected while the overview is the template, stripped once it is maintained.
    let users = |r: &Value| -> Vec<String> {
        r["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "user").map(|m| m["content"].as_str().unwrap().to_string()).collect()
    };
    assert_eq!(users(&requests[requests_before[1]]), ["task 1", "task 2"]);
    assert_eq!(users(&requests[requests_before[2]]), ["task 1", "task 2", "task 3"]);
    for turn in 4..=20 {
        assert_eq!(users(&requests[requests_before[turn - 1]]), [format!("task {turn}")], "turn {turn}");
    }

    // context_meta on every request: exact token counts (from the BPE directly, tool calls and
    // the `tools` array included), moved by what the provider last reported (only the streamed
    // answers carry usage); the history's length from the script; every figure and reminder.
    let reported: Vec<Option<i64>> = turns.iter().flat_map(|t| t.replies.iter().map(Reply::prompt_tokens)).collect();
    let mut in_history = Vec::new(); // messages logged before each request, from the script alone
    let mut logged = 0;
    for turn in &turns {
        logged += 1; // the task
        for reply in &turn.replies {
            in_history.push(logged);
            logged += reply.logged();
        }
    }
    let mut correction = 0i64;
    let mut with_reminder = Vec::new();
    for (k, request) in requests.iter().enumerate() {
        let meta = context_meta(request);
        let messages: Vec<Message> = serde_json::from_value(request["messages"].clone()).unwrap();
        assert!(request["tools"].as_array().is_some_and(|t| t.len() >= 5), "request {k} offers the tools");
        let expected = (i64::from(common::oracle_tokens(&messages[..messages.len() - 1], &request["tools"])) + correction).max(0) as u32;
        assert_eq!(meta["tokens_used"], expected, "request {k}");
        if let Some(prompt_tokens) = reported[k] {
            // A count below ours is not taken: an upstream cannot switch the fallback off.
            correction = (prompt_tokens - i64::from(common::oracle_tokens(&messages, &request["tools"]))).max(0);
        }
        assert_eq!(meta["tokens_percent"], u64::from(expected) * 100 / 128_000);
        let mut keys: Vec<&str> = meta.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort_unstable();
        // The other figures only with something to act on (a reminder here; issue 48).
        if meta["reminder"] == "" {
            assert_eq!(keys, ["reminder", "tokens_percent", "tokens_used"], "request {k}: a quiet context_meta says how full, no more");
            continue;
        }
        with_reminder.push(k);
        assert_eq!(meta["tokens_max"], 128_000);
        assert_eq!(meta["messages_in_history"], in_history[k], "request {k}");
        // The fallback's threshold: 75% of the window by default.
        assert_eq!(meta["auto_compact_at"], 96_000);
        let every = ["auto_compact_at", "messages_in_history", "reminder", "tokens_max", "tokens_percent", "tokens_used", "working_memory_size"];
        assert_eq!(keys, every, "request {k}: a context_meta field this test does not check");
        let overview = messages.iter().find(|m| m.content.starts_with("<working_memory")).unwrap();
        let inner = overview.content.split_once('\n').unwrap().1.trim_end_matches("\n</working_memory>");
        // Every overview in this session ends with one newline, which the injection drops.
        assert_eq!(meta["working_memory_size"], inner.len() + 1, "request {k}");
    }
    assert!(with_reminder.len() >= 3, "the figures that go with a reminder are checked: {with_reminder:?}");
    // The reminder insists once 5 rounds pass without a memory update: before turn 8 (7 rounds
    // since turn 3's DSL update), then again 5 rounds after turn 8 rewrote the overview.
    let reminder = |turn: usize| context_meta(&requests[requests_before[turn - 1]])["reminder"].as_str().unwrap().to_string();
    assert!(reminder(8).contains("not updated working-memory/overview.md for 7 rounds"), "{}", reminder(8));
    for turn in 9..=12 {
        assert_eq!(reminder(turn), "", "turn {turn}: nothing to act on, nothing said");
    }
    assert!(reminder(13).contains("not updated working-memory/overview.md for 5 rounds"), "{}", reminder(13));

    // The prefix (the model, the tools offered, and every message before the history) is
    // byte-identical across every pair of requests between memory changes, and differs when
    // the memory does.
    let prefix = |r: &Value| -> String {
        let messages = r["messages"].as_array().unwrap();
        let end = messages.iter().position(|m| m["role"] != "system").unwrap();
        serde_json::to_string(&(&r["model"], &r["tools"], &messages[..end])).unwrap()
    };
    let memory_in = |r: &Value| -> String {
        let messages = r["messages"].as_array().unwrap();
        // None while the memory is the template (not sent).
        messages.iter().find(|m| m["content"].as_str().unwrap_or("").starts_with("<working_memory")).map_or(String::new(), |m| m["content"].to_string())
    };
    let mut stretches = 0;
    for (i, a) in requests.iter().enumerate() {
        for b in &requests[i + 1..] {
            if memory_in(a) == memory_in(b) {
                assert_eq!(prefix(a), prefix(b), "the prefix moved while the memory did not");
            } else {
                assert_ne!(prefix(a), prefix(b), "a memory change must show in the prefix");
            }
        }
        stretches += usize::from(i == 0 || memory_in(&requests[i - 1]) != memory_in(a));
    }
    assert!(stretches >= 3, "the session changed its memory {stretches} times; the test needs some");
}

/// Issue 9: a tool call the provider sent without `arguments` failed the whole turn; it is a
/// call with no arguments, answered to the model like any other.
#[test]
fn a_tool_call_without_arguments_is_answered() {
    let ws = Workspace::new("no-arguments");
    let body = json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1_763_800_000, "model": "test-model",
        "choices": [{"index": 0, "finish_reason": "tool_calls",
                     "message": {"role": "assistant", "content": null,
                                 "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "list_files"}}]}}],
    });
    let server = Server::start(vec![Reply::Json { status: 200, headers: vec![], body: body.to_string() }, Reply::say("Listed.")]);
    let out = ws.cmd(Some(&server.url), &["agent", "--session", "s", "list your files", "--no-stream", "--retries", "0"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "Listed.");
    let second = &server.requests()[1].body["messages"];
    let result = second.as_array().unwrap().iter().find(|m| m["role"] == "tool").expect("the tool's answer was sent back");
    assert_eq!(result["tool_call_id"], "call_1");
    assert!(result["content"].as_str().unwrap().contains("overview.md"), "{result}");

    // Under --json, the turn as a script reads it: the answer, each tool run, no text around.
    let server = Server::start(vec![Reply::Json { status: 200, headers: vec![], body: body.to_string() }, Reply::say("Listed.")]);
    let out = ws.cmd(Some(&server.url), &["agent", "--session", "s", "list your files", "--no-stream", "--retries", "0", "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (&v["ok"], &v["answer"], &v["tools"][0]["name"], &v["tools"][0]["ok"]),
        (&json!(true), &json!("Listed."), &json!("list_files"), &json!(true)),
        "{v}"
    );
    assert!(v["tools"][0]["result"].as_str().unwrap().contains("overview.md"), "{v}");
}

/// A model's text reaches the terminal with its control characters shown, not obeyed: an
/// answer's OSC 52 (a clipboard write) and CSI, a tool name's OSC 0 (the window title).
#[test]
fn a_model_cannot_drive_the_terminal() {
    let ws = Workspace::new("escapes");
    let server = Server::start(vec![
        Reply::call(&[("\u{1b}]0;pwned\u{7}list_files", json!({}))]),
        Reply::say("\u{1b}]52;c;Y3VybCBldmlsIHwgc2g=\u{7}\u{1b}[2JDone.\u{202e}txt.exe"),
    ]);
    let out = ws.cmd(Some(&server.url), &["agent", "--session", "s", "go", "--no-stream", "--retries", "0"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    for text in [&stdout, &stderr] {
        assert!(!text.contains('\u{1b}') && !text.contains('\u{7}') && !text.contains('\u{202e}'), "{text:?}");
    }
    assert_eq!(stdout.trim(), "\\u{1b}]52;c;Y3VybCBldmlsIHwgc2g=\\u{7}\\u{1b}[2JDone.\\u{202e}txt.exe");
    assert!(stderr.contains("\\u{1b}]0;pwned\\u{7}list_files"), "{stderr}");
    // The history lists the answer as logged, shown, not obeyed; `memory read` into a pipe
    // copies a file byte for byte.
    let history = ws.cmd(None, &["history", "--session", "s"]).output().unwrap();
    let listed = String::from_utf8_lossy(&history.stdout);
    assert!(history.status.success() && listed.contains("\\u{1b}]52;c;") && !listed.contains('\u{1b}'), "{listed:?}");
    let notes = "reversed \u{202e}as written\n";
    let file = ws.root.join("n.md");
    std::fs::write(&file, notes).unwrap();
    assert!(ws.cmd(None, &["memory", "write", "--session", "s", "working-memory/detail/n.md", file.to_str().unwrap()]).output().unwrap().status.success());
    let read = ws.cmd(None, &["memory", "read", "--session", "s", "working-memory/detail/n.md"]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&read.stdout), notes);
}

/// A worker on a shared board (spec 002 §4): each request carries its task's brief, nudges
/// for it included, after the history (so the prefix stays cached) and before context_meta;
/// the board tools are offered and move the task; a refused op goes back to the model.
#[test]
fn a_worker_on_a_board_gets_its_brief_and_board_tools() {
    let ws = Workspace::new("worker");
    let db = ws.root.join("boards.sqlite3").display().to_string();
    let board = |args: &[&str]| {
        let mut all = vec!["board", "--db", db.as_str()];
        all.extend_from_slice(args);
        let out = ws.cmd(None, &all).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    board(&["create", "auth", "--name", "Auth", "--goal", "Build auth system for the API", "--constraint", "No breaking changes"]);
    board(&["task", "add", "auth", "Design token schema"]);
    board(&["assign", "auth", "T-1", "dev"]);
    board(&["--as", "human", "nudge", "auth", "Don't modify user table, use separate token table", "--to", "dev", "--priority", "high"]);
    board(&["--as", "human", "nudge", "auth", "For QA only", "--to", "qa"]);

    let server = Server::start(vec![
        Reply::call(&[("board_status", json!({"status": "in_progress"}))]),
        Reply::call(&[("board_status", json!({"status": "completed"}))]),
        Reply::call(&[
            ("board_discover", json!({"content": "User table has no refresh_token column", "type": "constraint"})),
            ("board_status", json!({"status": "completed", "summary": "tokens table", "next_steps": ["token service"]})),
        ]),
        Reply::say("Done: a separate tokens table."),
    ]);
    let args = ["agent", "--session", "s", "Design the token schema", "--no-stream", "--retries", "0", "--board", "auth", "--board-task", "T-1"];
    let out = ws.cmd(Some(&server.url), &args).args(["--db", &db, "--agent-name", "dev"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    let requests: Vec<Value> = server.requests().into_iter().map(|r| r.body).collect();
    assert_eq!(requests.len(), 4);
    let names: Vec<&str> = requests[0]["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"board_status") && names.contains(&"update_memory"), "{names:?}");
    for (i, request) in requests.iter().enumerate() {
        let messages = request["messages"].as_array().unwrap();
        let brief = messages[messages.len() - 2]["content"].as_str().unwrap();
        assert!(brief.starts_with("<task_board board=\"auth\" agent=\"dev\">\nGoal: Build auth system for the API\n"), "request {i}: {brief}");
        assert!(brief.contains("Don't modify user table") && !brief.contains("For QA only"), "request {i}: the nudges for dev only");
        let status = ["(assigned)", "(in_progress)", "(in_progress)", "(completed)"][i];
        assert!(brief.contains(status), "request {i}: {brief}");
        assert!(messages[messages.len() - 1]["content"].as_str().unwrap().starts_with("<context_meta>"));
    }
    // Everything before the brief is the previous request's messages, unchanged: the prefix stays cached.
    let (first, second) = (requests[0]["messages"].as_array().unwrap(), requests[1]["messages"].as_array().unwrap());
    assert_eq!(first[..first.len() - 2], second[..first.len() - 2]);

    let tool_results: Vec<String> = std::fs::read_to_string(ws.session.join("messages.jsonl"))
        .unwrap()
        .lines()
        .filter_map(|l| match serde_json::from_str::<LogRecord>(l).unwrap().entry {
            Entry::Message(m) if m.role == "tool" => Some(m.content),
            _ => None,
        })
        .collect();
    assert!(tool_results[1].starts_with("error: completing your task needs a summary"), "{tool_results:?}");
    let state: Value = serde_json::from_str(&board(&["show", "auth", "state", "--json"])).unwrap();
    let t1 = &state["tasks"][0];
    assert_eq!((t1["status"].as_str(), t1["assigned_to"].as_str(), t1["result"]["summary"].as_str()), (Some("completed"), Some("dev"), Some("tokens table")));
    assert_eq!(state["discoveries"][0]["discovered_by"], "dev");
    assert!(t1["heartbeat_at"].is_string(), "the loop renewed the claim while it worked");
}

/// A provider's prompt count far off the request's own size is not taken as a correction:
/// the next request is not made to look 4,000,000,000 tokens long.
#[test]
fn a_wild_usage_count_is_bounded() {
    let ws = Workspace::new("wild-usage");
    let body = json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1_763_800_000, "model": "test-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Done."}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 4_000_000_000_u64, "completion_tokens": 2, "total_tokens": 4_000_000_002_u64},
    });
    let server = Server::start(vec![Reply::Json { status: 200, headers: vec![], body: body.to_string() }]);
    let out = ws.cmd(Some(&server.url), &["agent", "--session", "s", "hello", "--no-stream", "--retries", "0"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let meta: Value = serde_json::from_str(&std::fs::read_to_string(ws.session.join("meta.json")).unwrap()).unwrap();
    let correction = meta["token_correction"].as_i64().unwrap();
    assert!((1..=100_000).contains(&correction), "a correction of {correction}");
    let out = ws.cmd(None, &["context", "--session", "s", "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Every tool result is capped, and a read of the log is kept in it by reference: two reads of
/// a 300 KB message each give the model its head and tail (what the view shows, and what the
/// next request carries) and the byte its middle starts at, and grow the log by a line naming
/// the range, not by a copy (7 reads of `1-199` once grew it by 13 MB); a read from a later
/// byte gives the part from there; a read whose range takes in an earlier read shows that
/// read's reference line, not what it read again.
#[test]
fn tool_results_are_capped() {
    let ws = Workspace::new("capped-results");
    let session = workmem_store::Session::open(&ws.session).unwrap();
    let big = format!("HEAD {} TAIL", "0123456789abcdef\n".repeat(18_000));
    session.append_message(workmem_store::Message::new("user", big.clone())).unwrap();
    let read = |seq: &str| Reply::call(&[("read_history", json!({"seq": seq}))]);
    // The big message, the task, two reads of it, and a read of everything after it (the first
    // two reads among it). At a 200k window the fallback compacts only once the model has
    // seen the reads (what it has not seen is never compacted), and it takes the big message.
    // Then a byte that is not a non-negative 32-bit number, each refused by name.
    let bad_from = Reply::call(&[("read_history", json!({"seq": "1", "from": -1})), ("read_history", json!({"seq": "1", "from": 5_000_000_000u64}))]);
    let server = Server::start(vec![
        read("1"),
        read("1"),
        read("2-7"),
        Reply::call(&[("read_history", json!({"seq": "1", "from": 70_000}))]),
        bad_from,
        Reply::say("Read."),
    ]);
    let args = ["agent", "--session", "s", "read it back", "--no-stream", "--retries", "0", "--tokens-max", "200000"];
    let out = ws.cmd(Some(&server.url), &args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // What the turn's messages added to the log (a compaction keeps the big message's ends).
    let log = std::fs::read_to_string(ws.session.join("messages.jsonl")).unwrap();
    let grown: usize = log.lines().skip(1).filter(|l| l.contains("\"kind\":\"message\"")).map(str::len).sum();
    assert!(grown < 4_000, "the turn's messages took {grown} bytes of the log");
    let logged: Vec<(u64, workmem_store::Message)> = session
        .records()
        .unwrap()
        .into_iter()
        .filter_map(|r| match r.entry {
            Entry::Message(m) if m.role == "tool" => Some((r.seq, m)),
            _ => None,
        })
        .collect();
    let reads: Vec<Option<&str>> = logged.iter().map(|(_, m)| m.reads.as_deref()).collect();
    assert_eq!(reads, [Some("1"), Some("1"), Some("2-7"), Some("1@70000"), None, None]);
    for (_, refused) in &logged[4..] {
        assert_eq!(refused.content, "error: read_history needs a non-negative integer argument \"from\"");
    }
    let compacted: Vec<Vec<u64>> = session
        .records()
        .unwrap()
        .into_iter()
        .filter_map(|r| match r.entry {
            Entry::Compaction(c) => Some(c.replacements.into_iter().map(|r| r.replaces).collect::<Vec<_>>()),
            _ => None,
        })
        .flatten()
        .collect();
    assert_eq!(compacted, [vec![1]], "the big message, once seen, and nothing else");
    let view = session.view().unwrap();
    let shown = |seq: u64| view.entries.iter().find(|(s, _)| *s == seq).unwrap().1.content.clone();
    let (first, second, third) = (logged[0].0, logged[1].0, logged[2].0);
    for seq in [first, second] {
        let r = shown(seq);
        assert!(r.len() <= workmem_agent::tools::MAX_RESULT_BYTES, "{}", r.len());
        assert!(
            r.contains("### #1 user\nHEAD") && r.trim_end().ends_with("TAIL") && r.contains("left out here: read_history {\"seq\": \"1\", \"from\": "),
            "{}",
            &r[..200]
        );
    }
    // A read from a later byte gives the part of the message from there.
    let whole = workmem_agent::compact::read_history(&session, "1").unwrap();
    let part = shown(logged[3].0);
    assert!(
        part.starts_with("[bytes 70000-") && part.contains(&whole[70_000..71_000]) && part.len() <= workmem_agent::tools::MAX_RESULT_BYTES,
        "{}",
        &part[..200]
    );
    let nested = shown(third);
    assert!(nested.contains(&format!("### #{first} tool\n(read_history 1: kept by reference")) && !nested.contains("HEAD"), "{nested}");
    // The model was sent what the view shows.
    let third = &server.requests()[3].body["messages"];
    let sent: Vec<&str> = third.as_array().unwrap().iter().filter(|m| m["role"] == "tool").map(|m| m["content"].as_str().unwrap()).collect();
    assert_eq!(sent, [shown(first), shown(second), nested]);
}

/// What a failed turn keeps, as docs/cli.md says: the steps it completed (a memory update the
/// model made is committed when its tool call runs), and nothing of the step that failed; the
/// same task run again continues that turn, the task logged once (three failed attempts once
/// logged it three times).
#[test]
fn a_failed_turn_keeps_its_completed_steps_and_is_continued() {
    let ws = Workspace::new("failed-turn");
    let failure = Reply::Json { status: 500, headers: vec![], body: json!({"error": {"message": "upstream down"}}).to_string() };
    let server =
        Server::start(vec![Reply::call(&[("update_memory", json!({"dsl": DSL}))]), failure.clone(), failure, Reply::answer("Done: the parser is fixed.")]);
    let run = || ws.cmd(Some(&server.url), &["agent", "--session", "s", "fix the parser", "--no-stream", "--timeout", "2", "--retries", "0"]).output().unwrap();
    let first = run();
    assert_eq!(first.status.code(), Some(1), "{}", String::from_utf8_lossy(&first.stderr));
    assert_eq!(ws.learnings()[0]["text"], "the bug is in parse.rs", "the update the model made before the failure is committed");
    let before = ws.files();
    let second = run();
    assert_eq!(second.status.code(), Some(1));
    let unchanged = |files: &[(std::path::PathBuf, Vec<u8>)]| {
        files.iter().filter(|(p, _)| !p.ends_with("messages.jsonl") && !p.ends_with("meta.json") && !p.ends_with("view.json")).cloned().collect::<Vec<_>>()
    };
    assert_eq!(unchanged(&ws.files()), unchanged(&before), "a turn that failed at once changed the memory");
    let third = run();
    assert!(third.status.success(), "{}", String::from_utf8_lossy(&third.stderr));
    let log = std::fs::read_to_string(ws.session.join("messages.jsonl")).unwrap();
    let tasks = log
        .lines()
        .filter_map(|l| serde_json::from_str::<LogRecord>(l).ok())
        .filter(|r| matches!(&r.entry, Entry::Message(m) if m.role == "user" && m.content == "fix the parser"))
        .count();
    assert_eq!(tasks, 1, "the task is logged once across three attempts");
    let last = server.requests().last().unwrap().body.clone();
    let users = last["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "user" && m["content"] == "fix the parser").count();
    assert_eq!(users, 1, "the model sees the task once");
}

/// An answer past the cap on tool calls per answer is refused to the model by name, not run
/// in part and not failed: 200 streamed `write_file` calls write nothing, the 128 the answer
/// keeps are each answered with the cap, and the model's next answer ends the turn (such an
/// answer failed the whole turn, and 6,500 calls once ran for 195 s).
#[test]
fn an_answer_past_the_cap_on_calls_is_refused_to_the_model() {
    let ws = Workspace::new("too-many-calls");
    let calls: Vec<(String, Value)> =
        (0..200).map(|i| ("write_file".to_string(), json!({"path": format!("working-memory/detail/n{i}.md"), "content": "x"}))).collect();
    let calls: Vec<(&str, Value)> = calls.iter().map(|(n, a)| (n.as_str(), a.clone())).collect();
    let server = Server::start(vec![Reply::call_streamed(&calls), Reply::streamed("Fewer, then.")]);
    let out = ws.cmd(Some(&server.url), &["agent", "--session", "s", "write notes", "--retries", "0", "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["answer"], "Fewer, then.", "{v}");
    let tools = v["tools"].as_array().unwrap();
    assert_eq!(tools.len(), workmem_llm::MAX_TOOL_CALLS);
    assert!(tools.iter().all(|t| t["ok"] == false && t["result"].as_str().unwrap().contains("made 200 tool calls, more than the 128")), "{}", tools[0]);
    assert!(common::find_file(&ws.session, "n0.md").is_none(), "no call of the answer ran");
    let second = &server.requests()[1].body["messages"];
    let results = second.as_array().unwrap().iter().filter(|m| m["role"] == "tool").count();
    assert_eq!(results, workmem_llm::MAX_TOOL_CALLS, "every call the history keeps is answered");
}

/// A request still over the window with everything that can be compacted compacted (here the
/// task alone is) is never sent: the turn fails with `over_window`, saying why (issue 48: a
/// request of 8,751 tokens went to an 8,192-token window).
#[test]
fn a_request_over_the_window_is_not_sent() {
    let ws = Workspace::new("over-window");
    let server = Server::start(vec![Reply::say("never asked")]);
    let task = format!("Summarize this: {}", "the quick brown fox jumps over the lazy dog ".repeat(1200));
    let out =
        ws.cmd(Some(&server.url), &["--json", "agent", "--session", "s", &task, "--no-stream", "--retries", "0", "--tokens-max", "4096"]).output().unwrap();
    assert!(!out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["error"]["kind"], "over_window", "{v}");
    assert!(v["error"]["message"].as_str().unwrap().contains("4096-token window"), "{v}");
    assert!(server.requests().is_empty(), "nothing went to the model");
}
