//! `workmem mcp` spoken to as its client does, JSON-RPC lines on its standard input: what
//! the official Python client's run (tests/mcp/client.py, `make test-mcp`) does not time.

use crate::llm_server::{Reply, Server};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `workmem mcp` on a session with some history, `args` added, with the model at `llm`.
struct Mcp {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    answers: std::sync::mpsc::Receiver<Value>,
}

impl Mcp {
    fn start(name: &str, llm: &str, args: &[&str]) -> Mcp {
        let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("mcp-stdio-{name}-{}", std::process::id()));
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
            .args(["mcp", "--session", "s"])
            .args(args)
            .current_dir(&root)
            .env("WORKMEM_SESSIONS_DIR", root.join("sessions"))
            .env("WORKMEM_CACHE_DIR", Path::new(env!("CARGO_TARGET_TMPDIR")).join("engine-cache"))
            .env("OPENAI_BASE_URL", llm)
            .env("OPENAI_API_KEY", "test-key")
            .env("WORKMEM_MODEL", "test-model")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
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
        let mut mcp = Mcp { child, stdin, answers };
        mcp.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}));
        let init = mcp.answer();
        assert_eq!(init["id"], 1, "{init}");
        mcp.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        mcp
    }

    fn send(&mut self, v: Value) {
        self.send_bytes(v.to_string().as_bytes());
    }

    fn send_bytes(&mut self, line: &[u8]) {
        self.stdin.write_all(line).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    fn answer(&self) -> Value {
        self.answers.recv_timeout(Duration::from_secs(30)).expect("an answer within 30 s")
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn call(id: u32, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}})
}

/// A `compact_history` summary waiting on a model that never answers holds no other tool:
/// `read_file` is answered at once (one lock over every tool made a model that never
/// answered stop all of them for 488 s).
#[test]
fn a_summary_waiting_on_the_model_holds_no_other_tool() {
    let llm = Server::start(vec![Reply::Hang]);
    let mut mcp = Mcp::start("summary", &llm.url, &["--timeout", "60", "--retries", "0"]);
    mcp.send(call(2, "compact_history", json!({"target": "conversation", "strategy": "summarize", "keep_recent": 1})));
    // The summary is under way once the model has its request.
    let started = Instant::now();
    while llm.requests().is_empty() {
        assert!(started.elapsed() < Duration::from_secs(30), "compact_history never asked the model");
        std::thread::sleep(Duration::from_millis(20));
    }
    let started = Instant::now();
    mcp.send(call(3, "read_file", json!({"path": "working-memory/overview.md"})));
    let answer = mcp.answers.recv_timeout(Duration::from_secs(10)).expect("read_file was answered while the summary waited");
    assert_eq!(answer["id"], 3, "the summary did not answer first: {answer}");
    assert!(answer["result"]["content"][0]["text"].as_str().unwrap().contains("# Working Memory"), "{answer}");
    assert!(started.elapsed() < Duration::from_secs(5), "read_file took {:?}", started.elapsed());
}

/// Every request gets an answer: one past `--max-request-bytes`, one with a byte that is not
/// UTF-8 and one with a lone surrogate each get a JSON-RPC error carrying their id (rmcp
/// dropped them without a word, and the client waited forever), and the server goes on.
#[test]
fn every_request_is_answered() {
    let llm = Server::start(vec![]);
    // The cap stays under rmcp's own 16 MiB, past which a message would go unanswered again.
    for refused in [&["--max-request-bytes", "16777217"][..], &["--max-request-bytes", "0"], &["--max-in-flight", "0"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_workmem")).args(["mcp", "--session", "s"]).args(refused).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{refused:?} is refused as usage: {}", String::from_utf8_lossy(&out.stderr));
    }
    let mut mcp = Mcp::start("answers", &llm.url, &["--max-request-bytes", "65536"]);
    mcp.send(call(7, "write_file", json!({"path": "working-memory/big.md", "content": "x".repeat(100_000)})));
    let big = mcp.answer();
    assert_eq!((big["id"].clone(), big["error"]["code"].clone()), (json!(7), json!(-32600)), "{big}");
    assert!(big["error"]["message"].as_str().unwrap().contains("--max-request-bytes"), "{big}");
    let mut bytes = br#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a"#.to_vec();
    bytes.extend_from_slice(b"\xff\"}}}");
    mcp.send_bytes(&bytes);
    let invalid = mcp.answer();
    assert_eq!((invalid["id"].clone(), invalid["error"]["code"].clone()), (json!(8), json!(-32700)), "{invalid}");
    mcp.send_bytes(br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"\ud800"}}}"#);
    let surrogate = mcp.answer();
    assert_eq!(surrogate["id"], 9, "{surrogate}");
    assert!(surrogate["error"].is_object(), "{surrogate}");
    mcp.send(call(10, "read_file", json!({"path": "working-memory/overview.md"})));
    let fine = mcp.answer();
    assert_eq!(fine["id"], 10, "{fine}");
    assert!(fine["result"]["content"][0]["text"].as_str().unwrap().contains("# Working Memory"), "{fine}");
}

/// `--max-in-flight` bounds the requests being served: with one, a `read_file` sent while a
/// summary waits on the model is not read until the summary is answered (40 requests of
/// 15 MiB were all taken at once).
#[test]
fn requests_in_flight_are_bounded() {
    let llm = Server::start(vec![Reply::Hang]);
    let mut mcp = Mcp::start("in-flight", &llm.url, &["--max-in-flight", "1", "--timeout", "3", "--retries", "0"]);
    mcp.send(call(2, "compact_history", json!({"target": "conversation", "strategy": "summarize", "keep_recent": 1})));
    mcp.send(call(3, "read_file", json!({"path": "working-memory/overview.md"})));
    let first = mcp.answer();
    assert_eq!(first["id"], 2, "the summary, cut off at --timeout, is answered before the read is let in: {first}");
    assert_eq!(mcp.answer()["id"], 3);
}
