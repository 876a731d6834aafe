//! Bounded context (issue 8) through the CLI: `compact` for every target and strategy, an
//! append-only log with every original readable back, refusals and failed summaries that
//! change nothing, the notice on the next request, `workmem agent` kept under its window by
//! the fallback against the loopback LLM server, and `workmem-replay` on a real trajectory.

use crate::common;
use crate::llm_server;

use common::Workspace;
use llm_server::{Reply, Server};
use serde_json::{Value, json};
use workmem_store::{Entry, LogRecord, Message, Session, ToolCall};

/// A task, then `rounds` steps each calling `bash` with a 3 KB output, and a closing remark.
fn tool_loop(ws: &Workspace, rounds: usize) {
    let s = Session::open(&ws.session).unwrap();
    s.append_message(Message::new("user", "Fix the flaky test in tests/test_io.py")).unwrap();
    for r in 0..rounds {
        let id = format!("call-{r}");
        let call = ToolCall { id: id.clone(), name: "bash".into(), arguments: format!("{{\"command\": \"cat part{r}.txt\"}}") };
        s.append_message(Message { tool_calls: vec![call], ..Message::new("assistant", format!("Step {r}: reading part {r}.")) }).unwrap();
        let output = format!("part {r} begins\n{}", format!("line of part {r}\n").repeat(200));
        s.append_message(Message { tool_call_id: Some(id), ..Message::new("tool", output) }).unwrap();
        s.append_message(Message::new("assistant", format!("Part {r} holds nothing relevant; {}", "notes ".repeat(200)))).unwrap();
    }
}

fn records(ws: &Workspace) -> Vec<LogRecord> {
    Session::open(&ws.session).unwrap().records().unwrap()
}

fn json_of(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

/// Tool calls and results in `messages` (a request's) all paired, in order.
fn paired(messages: &[Value]) -> bool {
    let mut open: Vec<String> = Vec::new();
    for m in messages {
        if let Some(id) = m["tool_call_id"].as_str() {
            let Some(p) = open.iter().position(|o| o == id) else { return false };
            open.remove(p);
        } else {
            if !open.is_empty() {
                return false;
            }
            open = m["tool_calls"].as_array().map(|c| c.iter().map(|c| c["id"].as_str().unwrap().to_string()).collect()).unwrap_or_default();
        }
    }
    true
}

fn request(ws: &Workspace) -> Vec<Value> {
    let out = ws.cmd(None, &["--json", "context", "--session", "s", "--history", "all", "--model", "gpt-4o"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    json_of(&out)["messages"].as_array().unwrap().clone()
}

#[test]
fn tools_archive_offloads_old_outputs_and_every_original_reads_back() {
    let ws = Workspace::new("compact-tools");
    let dsl = "KEY_LEARNINGS:\n  ADD:\n    - because it decides the fix: the test reads a shared temp file\nVERBATIM_CONTEXT:\n  ADD:\n    - because it is the failure: error => FileNotFoundError: /tmp/x\n";
    let out = ws.cmd(None, &["apply", "--session", "s", "-"]).stdin_file(dsl);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    tool_loop(&ws, 8);
    let log_before = std::fs::read(ws.session.join("messages.jsonl")).unwrap();
    let out = ws.cmd(None, &["--json", "compact", "--session", "s", "--target", "tools", "--keep-recent", "3", "--model", "gpt-4o"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let done = json_of(&out);
    assert_eq!(done["ok"], true);
    assert!(done["tokens_after"].as_u64().unwrap() * 2 < done["tokens_before"].as_u64().unwrap(), "{done}");
    let archive = done["archive"].as_str().unwrap();
    assert!(archive.starts_with("working-memory/detail/history-"), "{archive}");
    assert!(done["notice"].as_str().unwrap().contains("Bring working-memory/overview.md up to date"));

    // Append-only: the old log is a prefix of the new, which has one more entry.
    let log_after = std::fs::read(ws.session.join("messages.jsonl")).unwrap();
    assert_eq!(&log_after[..log_before.len()], &log_before[..]);
    let all = records(&ws);
    let Entry::Compaction(c) = &all.last().unwrap().entry else { panic!("the compaction is the last entry") };
    assert_eq!(c.target, "tools");
    // Step r is seqs 2+3r (call), 3+3r (output), 4+3r (remark). The last 3 groups are step 6's
    // remark, step 7's call with its output, and step 7's remark: the outputs of steps 0..=6
    // are replaced, one placeholder each.
    let replaced: Vec<u64> = done["replaced"].as_array().unwrap().iter().flat_map(|r| r.as_array().unwrap().iter().map(|s| s.as_u64().unwrap())).collect();
    assert_eq!(replaced, (0..7).map(|r| 3 + 3 * r).collect::<Vec<u64>>());
    for seq in &replaced {
        let out = ws.cmd(None, &["--json", "history", "--session", "s", "--seq", &seq.to_string()]).output().unwrap();
        let back = json_of(&out);
        let Entry::Message(original) = &all[(*seq - 1) as usize].entry else { panic!() };
        assert_eq!(back[0]["message"], serde_json::to_value(original).unwrap(), "seq {seq} reads back as logged");
        let file = std::fs::read_to_string(ws.session.join(archive)).unwrap();
        assert!(file.contains(&original.content), "the archive file holds #{seq}");
    }

    // The request now carries placeholders, stays paired, and says a compaction happened.
    let messages = request(&ws);
    assert!(paired(&messages));
    let placeholders: Vec<&Value> = messages.iter().filter(|m| m["content"].as_str().unwrap().starts_with("[offloaded output of bash")).collect();
    assert_eq!(placeholders.len(), replaced.len());
    let meta = messages.last().unwrap()["content"].as_str().unwrap();
    assert!(meta.contains("History was compacted") && meta.contains("\"auto_compact_at\":96000"), "{meta}");
    // The task, overview.md and every active Key Learning and Verbatim Context item are still sent.
    let text: String = messages.iter().map(|m| m["content"].as_str().unwrap()).collect();
    let overview = std::fs::read_to_string(ws.session.join("working-memory/overview.md")).unwrap();
    assert!(text.contains(overview.trim_end()) && text.contains("Fix the flaky test in tests/test_io.py"));
    assert!(text.contains("KL-1") && text.contains("the test reads a shared temp file") && text.contains("VC-1") && text.contains("FileNotFoundError: /tmp/x"));
}

#[test]
fn every_target_and_strategy() {
    let cases =
        [("conversation", "archive"), ("tools", "archive"), ("all", "archive"), ("conversation", "summarize"), ("tools", "summarize"), ("all", "summarize")];
    for (target, strategy) in cases {
        let ws = Workspace::new(&format!("compact-{target}-{strategy}"));
        tool_loop(&ws, 6);
        let server = Server::start(vec![Reply::say("#3: part 0 is noise\nGoal: fix the flaky test (#1); parts 0-3 read, nothing found (#2-#13).")]);
        let before = request(&ws);
        let out = ws
            .cmd(Some(&server.url), &["--json", "compact", "--session", "s", "--target", target, "--strategy", strategy, "--keep-recent", "2", "--no-stream"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{target}/{strategy}: {}", String::from_utf8_lossy(&out.stderr));
        let done = json_of(&out);
        let after = request(&ws);
        assert!(paired(&after), "{target}/{strategy}");
        assert!(after.len() <= before.len() && done["tokens_after"].as_u64() < done["tokens_before"].as_u64(), "{target}/{strategy}: {done}");
        // The task and the last two groups are kept as they were.
        assert!(after.iter().any(|m| m["content"] == "Fix the flaky test in tests/test_io.py"));
        let n = after.len();
        assert_eq!(after[n - 3..n - 1], before[before.len() - 3..before.len() - 1], "{target}/{strategy}");
        let asked = server.requests().len();
        assert_eq!(asked, usize::from(strategy == "summarize"), "{target}/{strategy}: only summarize asks the model");
        if strategy == "summarize" {
            let prompt = server.requests()[0].body["messages"][1]["content"].as_str().unwrap().to_string();
            assert!(prompt.contains(if target == "conversation" { "### #4 assistant" } else { "### #3 tool bash" }), "{prompt}");
            let text: String = after.iter().map(|m| m["content"].as_str().unwrap_or_default()).collect();
            assert!(text.contains(if target == "tools" { "Gist: part 0 is noise" } else { "parts 0-3 read, nothing found" }), "{target}: {text}");
        }
    }
}

#[test]
fn refusals_and_failed_summaries_change_nothing() {
    let ws = Workspace::new("compact-refused");
    tool_loop(&ws, 3);
    let unchanged = ws.files();
    // Nothing outside the recent groups.
    let out = ws.cmd(None, &["--json", "compact", "--session", "s", "--target", "tools", "--keep-recent", "50"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let error = json_of(&out)["error"].clone();
    assert_eq!(error["kind"], "compaction_refused");
    assert!(error["message"].as_str().unwrap().contains("nothing to compact"), "{error}");
    // Too little to free.
    let out = ws.cmd(None, &["--json", "compact", "--session", "s", "--target", "tools", "--keep-recent", "1", "--min-free", "1000000"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(json_of(&out)["error"]["message"].as_str().unwrap().contains("min_free"));
    // The model fails, then answers with nothing.
    let server = Server::start(vec![Reply::status(500, vec![]), Reply::say("  ")]);
    for expected in ["HTTP 500", "the summary came back empty"] {
        let out = ws
            .cmd(Some(&server.url), &["--json", "compact", "--session", "s", "--strategy", "summarize", "--keep-recent", "1", "--no-stream", "--retries", "0"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        assert!(String::from_utf8_lossy(&out.stderr).contains(expected), "{}", String::from_utf8_lossy(&out.stderr));
    }
    // An archive path outside working-memory/ is refused before anything is logged.
    let out = ws.cmd(None, &["--json", "compact", "--session", "s", "--keep-recent", "1", "--archive-to", "../escape.md"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(json_of(&out)["error"]["message"].as_str().unwrap().contains("the archive could not be written"), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(!ws.session.join("escape.md").exists() && !ws.session.parent().unwrap().join("escape.md").exists());
    assert_eq!(ws.files(), unchanged, "a refused or failed compaction wrote nothing");
    // An archive file that is there but cannot be read as text is refused, not replaced.
    let notes = ws.session.join("working-memory/detail/notes.bin");
    std::fs::create_dir_all(notes.parent().unwrap()).unwrap();
    std::fs::write(&notes, b"\xff\xfe a user's own notes").unwrap();
    let out = ws.cmd(None, &["--json", "compact", "--session", "s", "--keep-recent", "1", "--archive-to", "working-memory/detail/notes.bin"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(json_of(&out)["error"]["message"].as_str().unwrap().contains("not UTF-8"), "{}", String::from_utf8_lossy(&out.stdout));
    assert_eq!(std::fs::read(&notes).unwrap(), b"\xff\xfe a user's own notes", "the file is as it was");
    std::fs::remove_file(&notes).unwrap();
    assert_eq!(ws.files(), unchanged, "nothing else was written");
    // A bad seq is a clear error.
    let out = ws.cmd(None, &["--json", "history", "--session", "s", "--seq", "x"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(json_of(&out)["error"]["message"].as_str().unwrap().contains("a number or a range"));
}

/// An agent whose every step reads a 6 KB file stays under a 6,000-token window: the
/// fallback compacts before the request that would cross 75% of it, never after.
#[test]
fn the_agent_stays_under_its_window() {
    let ws = Workspace::new("compact-agent");
    let big = format!("{}\n", "a line of a long detail file, of which the agent needs one fact\n".repeat(100));
    let out = ws.cmd(None, &["memory", "write", "--session", "s", "working-memory/detail/big.md", "-"]).stdin_file(&big);
    assert!(out.status.success());
    let steps = 30;
    let mut script: Vec<Reply> = (0..steps).map(|_| Reply::call(&[("read_file", json!({"path": "working-memory/detail/big.md"}))])).collect();
    script.push(Reply::say("Found it."));
    let server = Server::start(script);
    let window = 6000;
    let out = ws
        .cmd(
            Some(&server.url),
            &[
                "agent",
                "--session",
                "s",
                "Find the fact",
                "--no-stream",
                "--retries",
                "0",
                "--model",
                "gpt-4o",
                "--tokens-max",
                &window.to_string(),
                "--max-steps",
                "40",
            ],
        )
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("⇣ History was compacted automatically"), "{stderr}");
    let requests = server.requests();
    assert_eq!(requests.len(), steps + 1);
    let tokenizer = workmem_llm::Tokenizer::for_model("gpt-4o");
    let mut notices = 0;
    for r in &requests {
        let messages: Vec<workmem_llm::Message> = serde_json::from_value(r.body["messages"].clone()).unwrap();
        let tokens = tokenizer.count_chat(&messages) + tokenizer.count_tools(&r.body["tools"]);
        assert!(tokens < window * 3 / 4, "a request of {tokens} tokens crossed the fallback");
        assert!(paired(r.body["messages"].as_array().unwrap()));
        notices += usize::from(messages.last().unwrap().content.contains("History was compacted"));
    }
    let compactions = records(&ws).iter().filter(|r| matches!(r.entry, Entry::Compaction(_))).count();
    assert!(compactions >= 2, "{compactions}");
    assert_eq!(notices, compactions, "the request right after each compaction, and only it, says so");
}

#[test]
fn replay_a_real_trajectory() {
    let ws = Workspace::new("replay");
    let file = common::root().join("tests/data/trajectories/minisweagent-gemini3pro-django__django-14672.jsonl");
    let png = ws.root.join("tokens.png");
    let requests = ws.root.join("requests");
    let args = ["--json", file.to_str().unwrap(), "--window", "8000", "--png", png.to_str().unwrap(), "--requests", requests.to_str().unwrap()];
    let out = ws.replay(&args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v = json_of(&out);
    let group = &v["groups"][0];
    let by = |name: &str| group["policies"].as_array().unwrap().iter().find(|p| p["policy"] == name).unwrap().clone();
    let (full, workmem) = (by("full"), by("workmem"));
    assert!(full["unsendable"].as_u64().unwrap() > 0, "the trajectory must outgrow the window for this test to mean anything");
    assert!(workmem["peak"].as_u64().unwrap() <= 8000 && workmem["unsendable"] == 0, "{workmem}");
    assert_eq!(workmem["violations"], 0);
    assert!(workmem["compactions"].as_u64().unwrap() > 0 && workmem["memory_updates"].as_u64().unwrap() > 0, "{workmem}");
    assert!(workmem["read_back"].as_u64().unwrap() > 0);
    assert_eq!(workmem["read_back_ok"], workmem["read_back"], "every handle gives back what it replaced");
    assert!(workmem["needed"].as_u64().unwrap() > 0 && workmem["kept"].as_u64() <= workmem["needed"].as_u64());
    assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG\r\n\x1a\n"));
    // Every request as it would be sent: workmem's offer its own two tools (the host compacts,
    // so no compact_history; the trajectory's agent brings its own), the baselines' none.
    let lines = |policy: &str| -> Vec<Value> {
        let text = std::fs::read_to_string(requests.join(format!("minisweagent-gemini3pro-django__django-14672.{policy}.jsonl"))).unwrap();
        text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    };
    let sent = lines("workmem");
    assert_eq!(sent.len() as u64, workmem["requests"].as_u64().unwrap());
    let names = |b: &Value| -> Vec<String> {
        b["tools"].as_array().into_iter().flatten().map(|t| t["function"]["name"].as_str().unwrap_or_default().to_string()).collect()
    };
    assert!(sent.iter().all(|b| names(b) == ["read_history", "update_memory"]), "{:?}", names(&sent[0]));
    assert!(lines("mask").iter().all(|b| b.get("tools").is_none()));
    // The same through `workmem proxy`, the agent a Chat Completions client that resends its
    // whole history: what reached the scripted model is bounded and paired as workmem's own,
    // costs what it costs, and offers the model the same tools of workmem's own (the replay's
    // proxy runs with --auto-compact).
    let proxy = by("proxy");
    assert!(proxy["peak"].as_u64().unwrap() <= 6000 && proxy["unsendable"] == 0, "{proxy}");
    assert_eq!(proxy["violations"], 0, "{proxy}");
    assert!(proxy["compactions"].as_u64().unwrap() > 0 && proxy["memory_updates"].as_u64().unwrap() > 0, "{proxy}");
    assert!(proxy["read_back"].as_u64().unwrap() > 0 && proxy["read_back_ok"] == proxy["read_back"], "{proxy}");
    let ratio = proxy["effective_cost"].as_f64().unwrap() / workmem["effective_cost"].as_f64().unwrap();
    assert!((0.9..1.1).contains(&ratio), "the proxy costs {ratio:.2}x workmem's own loop");
    assert!(lines("proxy").iter().all(|b| names(b) == ["read_history", "update_memory"]));
    // One policy and one file: tokens per request.
    let out = ws.replay(&["--json", file.to_str().unwrap(), "--policy", "mask"]).output().unwrap();
    let one = json_of(&out);
    assert_eq!(one["policy"], "mask");
    assert_eq!(one["tokens"].as_array().unwrap().len(), 33, "one request per assistant message");
}

/// The replay builds its requests with the code `workmem agent` and `workmem context` use: its
/// last request is what `workmem context` gives for the session it leaves, byte for byte.
#[test]
fn a_replayed_request_is_what_context_builds() {
    let ws = Workspace::new("replay-context");
    let trajectory = std::fs::read_to_string(common::root().join("tests/data/trajectories/minisweagent-gemini3pro-django__django-14672.jsonl")).unwrap();
    let lines: Vec<&str> = trajectory.lines().collect();
    let system: Value = serde_json::from_str(lines[0]).unwrap();
    std::fs::write(ws.root.join("system.txt"), system["content"].as_str().unwrap()).unwrap();
    // Cut after each assistant message from the end until the last request asks for no memory
    // update (the stand-in's update would change the session after it).
    let mut compared = 0;
    for cut in (20..lines.len()).rev().filter(|&k| lines[k - 1].contains("\"role\": \"assistant\"")) {
        let file = ws.root.join(format!("cut-{cut}.jsonl"));
        std::fs::write(&file, lines[..cut].join("\n")).unwrap();
        let (requests, sessions) = (ws.root.join(format!("requests-{cut}")), ws.root.join(format!("sessions-{cut}")));
        let args = [
            file.to_str().unwrap(),
            "--policy",
            "workmem",
            "--window",
            "8000",
            "--requests",
            requests.to_str().unwrap(),
            "--sessions",
            sessions.to_str().unwrap(),
        ];
        assert!(ws.replay(&args).output().unwrap().status.success());
        let sent = std::fs::read_to_string(requests.join(format!("cut-{cut}.workmem.jsonl"))).unwrap();
        let last: Value = serde_json::from_str(sent.lines().last().unwrap()).unwrap();
        let meta = last["messages"].as_array().unwrap().last().unwrap()["content"].as_str().unwrap().to_string();
        if meta.contains("History was compacted") || meta.contains("You have not updated") || meta.contains("Archive finished work") {
            continue;
        }
        let session = common::find_file(&sessions, "meta.json").unwrap().parent().unwrap().to_path_buf();
        let system = ws.root.join("system.txt");
        let args = [
            "--json",
            "context",
            "--session",
            session.to_str().unwrap(),
            "--model",
            "gpt-4o",
            "--tokens-max",
            "8000",
            "--history",
            "all",
            "--system",
            system.to_str().unwrap(),
            // As the replay's workmem policy: the host compacts, and workmem adds its own tools.
            "--auto-compact",
            "--own-tools",
        ];
        let out = ws.cmd(None, &args).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(serde_json::to_string(&json_of(&out)).unwrap(), sent.lines().last().unwrap());
        compared += 1;
        if compared == 2 {
            break;
        }
    }
    assert_eq!(compared, 2);
}

/// Generated histories of every shape go through every policy, each request counted.
#[test]
fn replay_generated_shapes() {
    let ws = Workspace::new("replay-shapes");
    let out = ws.replay(&["--json", "--shape", "all", "--seeds", "1"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v = json_of(&out);
    let groups = v["groups"].as_array().unwrap();
    let names: Vec<&str> = groups.iter().map(|g| g["group"].as_str().unwrap()).collect();
    assert_eq!(names.len(), 15, "five shapes, three kinds of facts each: {names:?}");
    assert_eq!(names[..3], ["parallel", "parallel, spread facts", "parallel, no facts"]);
    assert!(groups.iter().filter(|g| g["group"].as_str().unwrap().ends_with("no facts")).all(|g| g["policies"][0]["recall"].is_null()), "n/a, not 100%");
    for g in groups {
        let workmem = g["policies"].as_array().unwrap().iter().find(|p| p["policy"] == "workmem").unwrap();
        assert_eq!(workmem["violations"], 0, "{}", g["group"]);
        assert_eq!(workmem["unsendable"], 0, "{}", g["group"]);
        assert_eq!(workmem["read_back_ok"], workmem["read_back"], "{}", g["group"]);
        assert_eq!(workmem["updates_refused"], 0, "{}: the stand-in's updates are valid DSL", g["group"]);
        assert!(g["targets"].as_array().unwrap().iter().all(|t| t["ok"].is_boolean() && t["detail"].is_string()));
    }
    let out = ws.replay(&["--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(json_of(&out)["error"]["message"].as_str().unwrap().contains("nothing to replay"));
    let help = String::from_utf8(ws.replay(&["--help"]).output().unwrap().stdout).unwrap();
    assert!(!help.contains("shared/data") && help.contains("tests/data/trajectories"), "{help}");
}

trait StdinFile {
    fn stdin_file(&mut self, text: &str) -> std::process::Output;
}

impl StdinFile for std::process::Command {
    fn stdin_file(&mut self, text: &str) -> std::process::Output {
        use std::io::Write;
        let mut child = self.stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap();
        child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
        child.wait_with_output().unwrap()
    }
}

/// A folder the model made at the archive's default name (`write_file` can make one) does not
/// switch compaction off: the archive goes to the next free name.
#[test]
fn a_taken_archive_name_is_passed_over() {
    let ws = Workspace::new("compact-taken-name");
    tool_loop(&ws, 8);
    let next = records(&ws).last().unwrap().seq + 1;
    for taken in [format!("history-{next}.md"), format!("history-{next}-1.md")] {
        std::fs::create_dir_all(ws.session.join("working-memory/detail").join(taken).join("inside")).unwrap();
    }
    let out = ws.cmd(None, &["--json", "compact", "--session", "s", "--target", "tools", "--keep-recent", "3", "--model", "gpt-4o"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let archive = json_of(&out)["archive"].as_str().unwrap().to_string();
    assert_eq!(archive, format!("working-memory/detail/history-{next}-2.md"));
    assert!(std::fs::metadata(ws.session.join(&archive)).unwrap().is_file());
}

/// A log whose last record carries the largest sequence number there is (written by hand) is
/// an error that says so, never a panic on overflow.
#[test]
fn the_largest_sequence_number_is_an_error_not_a_panic() {
    let ws = Workspace::new("compact-max-seq");
    let record = json!({"seq": u64::MAX, "at": "2026-11-25T10:00:00Z", "kind": "message", "role": "user", "content": "the task"});
    std::fs::write(ws.session.join("messages.jsonl"), format!("{record}\n")).unwrap();
    for args in [vec!["--json", "compact", "--session", "s"], vec!["--json", "context", "--session", "s"]] {
        let out = ws.cmd(None, &args).output().unwrap();
        assert_ne!(out.status.code(), Some(101), "{args:?} panicked: {}", String::from_utf8_lossy(&out.stderr));
    }
    let out = ws.cmd(None, &["--json", "compact", "--session", "s", "--keep-recent", "0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("its last record's seq is 18446744073709551615, after which there is no number"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
