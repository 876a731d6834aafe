//! `workmem mcp` spoken to as its client does, JSON-RPC lines on its standard input: what
//! the official Python client's run (tests/mcp/client.py, `make test-mcp`) does not time.

use crate::llm_server::{Reply, Server};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A `compact_history` summary waiting on a model that never answers holds no other tool:
/// `read_file` is answered at once (one lock over every tool made a model that never
/// answered stop all of them for 488 s).
#[test]
fn a_summary_waiting_on_the_model_holds_no_other_tool() {
    let llm = Server::start(vec![Reply::Hang]);
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("mcp-stdio-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let sessions = workmem_store::Sessions::new(&root.join("sessions"), &root);
    let template = crate::common::runtime().instance().unwrap().overview_template().unwrap();
    let session = sessions.create(Some("s"), &template).unwrap();
    for i in 0..8 {
        session.append_message(workmem_store::Message::new("user", format!("question {i}: {}", "words ".repeat(200)))).unwrap();
        session.append_message(workmem_store::Message::new("assistant", format!("answer {i}: {}", "more words ".repeat(200)))).unwrap();
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_workmem"))
        .args(["mcp", "--session", "s", "--timeout", "60", "--retries", "0"])
        .current_dir(&root)
        .env("WORKMEM_SESSIONS_DIR", root.join("sessions"))
        .env("WORKMEM_CACHE_DIR", Path::new(env!("CARGO_TARGET_TMPDIR")).join("engine-cache"))
        .env("OPENAI_BASE_URL", &llm.url)
        .env("OPENAI_API_KEY", "test-key")
        .env("WORKMEM_MODEL", "test-model")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let (lines, answers) = std::sync::mpsc::channel::<Value>();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Ok(v) = serde_json::from_str(&line) {
                let _ = lines.send(v);
            }
        }
    });
    let mut send = |v: Value| writeln!(stdin, "{v}").unwrap();
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}),
    );
    let init = answers.recv_timeout(Duration::from_secs(30)).unwrap();
    assert_eq!(init["id"], 1, "{init}");
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let call =
        |id: u32, name: &str, arguments: Value| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}});
    send(call(2, "compact_history", json!({"target": "conversation", "strategy": "summarize", "keep_recent": 1})));
    // The summary is under way once the model has its request.
    let started = Instant::now();
    while llm.requests().is_empty() {
        assert!(started.elapsed() < Duration::from_secs(30), "compact_history never asked the model");
        std::thread::sleep(Duration::from_millis(20));
    }
    let started = Instant::now();
    send(call(3, "read_file", json!({"path": "working-memory/overview.md"})));
    let answer = answers.recv_timeout(Duration::from_secs(10)).expect("read_file was answered while the summary waited");
    assert_eq!(answer["id"], 3, "the summary did not answer first: {answer}");
    assert!(answer["result"]["content"][0]["text"].as_str().unwrap().contains("# Working Memory"), "{answer}");
    assert!(started.elapsed() < Duration::from_secs(5), "read_file took {:?}", started.elapsed());
    let _ = child.kill();
    let _ = child.wait();
}
