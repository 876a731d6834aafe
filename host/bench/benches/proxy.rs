//! Issue 26's figures for `workmem proxy`, each measured in one run against the same loopback
//! upstream reached directly:
//!
//! 1. the latency the proxy adds to a request whose history holds 1,000 messages, and 10,000,
//!    in each protocol it speaks (Chat Completions, Anthropic Messages as Claude Code sends it,
//!    its cache mark on the last message, the Responses API as Codex CLI does): p50 and p99,
//!    each request extending the history by the answer and a message, as a client's does, and
//!    the time to the first byte of a stream, a direct and a proxied request in turn; and the
//!    CPU time the proxy spends on a request, which wanders less than latency on a shared
//!    machine (or, with `PROXY_BENCH_INSTRUCTIONS=1`, `make bench-proxy-instructions`, the
//!    instructions it runs, counted by callgrind, which do not wander at all);
//! 2. 64 client sessions at once for `PROXY_BENCH_SECONDS` (default 60; 0 leaves this out,
//!    and `PROXY_BENCH_LATENCY=0` leaves part 1 out):
//!    requests per second, p99, errors, and whether every session's log holds every message
//!    its client sent; on the directory store, then on a real PostgreSQL with one replica and
//!    with three (each client's requests round-robin over them, no stickiness), and what a
//!    session takes in each store.
//!
//! Beside the directory store's proxy, one with its sessions in that PostgreSQL database
//! (`--sessions-db`) runs in step in part 1, with what it adds over the directory store's.
//!
//! `make bench-proxy` (a release build). The upstream answers at once, so what is measured is
//! the proxy's own work: finding the session, logging what is new, building and bounding the
//! request, relaying the answer. `WORKMEM_BIN` runs another build's `workmem` instead, and
//! `WORKMEM_BIN_B` a second build's proxy beside the first, in step with it and the direct
//! client (an earlier commit's: two builds compared in one sitting, where runs one after the
//! other on a shared machine wandered apart by more than a change saves). Beside them, always,
//! a forwarder: this bench run as a gateway that does no context work (`--forward`), in a
//! process of its own built from the proxy's parts, whose added latency is what moving a body
//! through a second process costs, the floor under any proxy's.

#[path = "../../../tests/common/postgres.rs"]
mod pg;

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `--forward UPSTREAM`: the gateway a user would put in front of a model if it did no context
/// work, from the parts `workmem proxy` is made of (the same listener, runtime and upstream
/// client, the body read whole before it goes on, the answer relayed chunk by chunk from a
/// blocking thread), so that the difference between the two is workmem's own work. It prints
/// where it listens as the proxy does.
fn forward(upstream: String) {
    use axum::body::Body;
    use axum::extract::Request;
    use axum::response::Response;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        println!("{}", json!({"listening": format!("http://{}", listener.local_addr().unwrap())}));
        let config = ureq::Agent::config_builder().timeout_global(Some(Duration::from_secs(600))).http_status_as_error(false).max_redirects(0).build();
        let agent = workmem_llm::http_agent(config);
        let relay = move |request: Request| {
            let (agent, upstream) = (agent.clone(), upstream.clone());
            async move {
                let (parts, body) = request.into_parts();
                let body = axum::body::to_bytes(body, usize::MAX).await.unwrap();
                let (head, response) = tokio::sync::oneshot::channel();
                tokio::task::spawn_blocking(move || {
                    let url = format!("{upstream}{}", parts.uri.path());
                    let mut answer = agent.post(url).header("content-type", "application/json").send(&body[..]).unwrap();
                    let (tx, rx) = tokio::sync::mpsc::channel::<Result<bytes::Bytes, std::io::Error>>(16);
                    let chunks = futures_util::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|chunk| (chunk, rx)) });
                    let mut relayed = Response::new(Body::from_stream(chunks));
                    *relayed.status_mut() = answer.status();
                    if let Some(kind) = answer.headers().get("content-type") {
                        relayed.headers_mut().insert("content-type", kind.clone());
                    }
                    let _ = head.send(relayed);
                    let mut reader = answer.body_mut().as_reader();
                    let mut buf = vec![0; 64 << 10];
                    while let Ok(n @ 1..) = reader.read(&mut buf) {
                        if tx.blocking_send(Ok(bytes::Bytes::copy_from_slice(&buf[..n]))).is_err() {
                            return;
                        }
                    }
                });
                response.await.unwrap()
            }
        };
        workmem_listener::serve(listener, axum::Router::new().fallback(relay), workmem_listener::Limits::default()).await;
    });
}

/// A model that answers every request at once, over keep-alive connections.
fn upstream() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || serve(stream));
        }
    });
    url
}

fn serve(stream: TcpStream) {
    stream.set_nodelay(true).unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut out = stream;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let protocol = Protocol::of(line.split(' ').nth(1).unwrap_or("/"));
        let mut length = 0;
        loop {
            let mut header = String::new();
            reader.read_line(&mut header).unwrap();
            if header.trim().is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap();
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        let (kind, payload) = if streamed(&body) {
            let events: String = protocol.events(body.len() / 4).iter().map(|(name, data)| event(name, data)).collect();
            ("text/event-stream", events)
        } else {
            ("application/json", protocol.answer(body.len() / 4).to_string())
        };
        // One write, so that no delayed acknowledgement holds the answer back.
        let answer = format!("HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nContent-Length: {}\r\n\r\n{payload}", payload.len());
        if out.write_all(answer.as_bytes()).is_err() {
            return;
        }
    }
}

/// Whether `body` asks for a stream, found by a pass over all of it whatever it asks: a client
/// writes `stream` last and the proxy its own body's first, and a search that stopped at the
/// flag took the model 2.4 ms less on a proxied stream at 10,000 messages than on the same
/// request sent direct, which the figures counted as the proxy's.
fn streamed(body: &[u8]) -> bool {
    memchr::memmem::find_iter(body, b"\"stream\":true").count() > 0
}

fn event(name: &str, data: &Value) -> String {
    // Chat Completions ends its stream with a bare `[DONE]`.
    let data = data.as_str().map_or_else(|| data.to_string(), str::to_string);
    match name {
        "" => format!("data: {data}\n\n"),
        _ => format!("event: {name}\ndata: {data}\n\n"),
    }
}

/// The protocols the proxy speaks, each as a client sends it and as a model answers: "ok" to
/// every request, whole or streamed.
#[derive(Clone, Copy)]
enum Protocol {
    Chat,
    Messages,
    Responses,
}

impl Protocol {
    const ALL: [Protocol; 3] = [Protocol::Chat, Protocol::Messages, Protocol::Responses];

    fn of(path: &str) -> Protocol {
        match path {
            "/v1/messages" => Protocol::Messages,
            "/v1/responses" => Protocol::Responses,
            _ => Protocol::Chat,
        }
    }

    fn path(self) -> &'static str {
        match self {
            Protocol::Chat => "/v1/chat/completions",
            Protocol::Messages => "/v1/messages",
            Protocol::Responses => "/v1/responses",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Protocol::Chat => "Chat Completions",
            Protocol::Messages => "Messages",
            Protocol::Responses => "Responses",
        }
    }

    /// A text message of `role`'s: the client's own, or the model's answer as the client sends
    /// it back.
    fn text(self, role: &str, text: &str) -> Value {
        match self {
            Protocol::Chat => json!({"role": role, "content": text}),
            Protocol::Messages => json!({"role": role, "content": [{"type": "text", "text": text}]}),
            Protocol::Responses => {
                let kind = if role == "assistant" { "output_text" } else { "input_text" };
                json!({"type": "message", "role": role, "content": [{"type": kind, "text": text}]})
            }
        }
    }

    /// A tool call and its result.
    fn call(self, id: &str, path: &str, result: &str) -> [Value; 2] {
        let arguments = json!({"path": path});
        match self {
            Protocol::Chat => [
                json!({"role": "assistant", "content": null, "tool_calls": [{"id": id, "type": "function", "function": {"name": "read_file", "arguments": arguments.to_string()}}]}),
                json!({"role": "tool", "tool_call_id": id, "content": result}),
            ],
            Protocol::Messages => [
                json!({"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": "read_file", "input": arguments}]}),
                json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": result}]}),
            ],
            Protocol::Responses => [
                json!({"type": "function_call", "call_id": id, "name": "read_file", "arguments": arguments.to_string()}),
                json!({"type": "function_call_output", "call_id": id, "output": result}),
            ],
        }
    }

    /// The request: `system`, then the history.
    fn body(self, system: &str, history: &[Value], stream: bool) -> Vec<u8> {
        let parameters = json!({"type": "object", "properties": {"path": {"type": "string"}}});
        let mut chat = vec![json!({"role": "system", "content": system})];
        let body = match self {
            Protocol::Chat => {
                chat.extend_from_slice(history);
                json!({"model": "gpt-4o", "messages": chat, "tools": [{"type": "function", "function": {"name": "read_file", "parameters": parameters}}], "stream": stream})
            }
            Protocol::Messages => {
                // Claude Code marks the end of its history for the provider's cache: the mark
                // moves to the new last message with every request.
                let mut messages = history.to_vec();
                if let Some(Value::Array(blocks)) = messages.last_mut().map(|m| &mut m["content"]) {
                    blocks.last_mut().unwrap()["cache_control"] = json!({"type": "ephemeral"});
                }
                json!({"model": "claude-sonnet-4-5", "max_tokens": 1024, "system": system, "messages": messages,
                                         "tools": [{"name": "read_file", "input_schema": parameters}], "stream": stream})
            }
            Protocol::Responses => json!({"model": "gpt-5", "instructions": system, "input": history,
                                          "tools": [{"type": "function", "name": "read_file", "parameters": parameters}], "stream": stream}),
        };
        body.to_string().into_bytes()
    }

    /// The whole answer to a request of about `tokens`.
    fn answer(self, tokens: usize) -> Value {
        match self {
            Protocol::Chat => {
                json!({"id": "c", "object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
                                     "usage": {"prompt_tokens": tokens, "completion_tokens": 1, "total_tokens": tokens + 1}})
            }
            Protocol::Messages => json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [{"type": "text", "text": "ok"}],
                                         "stop_reason": "end_turn", "stop_sequence": null, "usage": {"input_tokens": tokens, "output_tokens": 1}}),
            Protocol::Responses => json!({"id": "resp_1", "object": "response", "created_at": 1_764_000_000, "status": "completed", "model": "m",
                                          "output": [{"type": "message", "id": "msg_1", "status": "completed", "role": "assistant", "content": [{"type": "output_text", "text": "ok", "annotations": []}]}],
                                          "usage": {"input_tokens": tokens, "output_tokens": 1, "total_tokens": tokens + 1}}),
        }
    }

    /// The same answer streamed: each event's name (none in Chat Completions) and data.
    fn events(self, tokens: usize) -> Vec<(&'static str, Value)> {
        let answer = self.answer(tokens);
        match self {
            Protocol::Chat => {
                let chunk = |delta: Value, finish: Value| json!({"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
                vec![("", chunk(json!({"role": "assistant", "content": "ok"}), Value::Null)), ("", chunk(json!({}), json!("stop"))), ("", json!("[DONE]"))]
            }
            Protocol::Messages => {
                let start = json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [], "stop_reason": null, "usage": {"input_tokens": tokens, "output_tokens": 1}}});
                vec![
                    ("message_start", start),
                    ("content_block_start", json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})),
                    ("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "ok"}})),
                    ("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
                    (
                        "message_delta",
                        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": {"output_tokens": 1}}),
                    ),
                    ("message_stop", json!({"type": "message_stop"})),
                ]
            }
            Protocol::Responses => {
                let item = answer["output"][0].clone();
                let part = item["content"][0].clone();
                let opening = json!({"id": "resp_1", "object": "response", "created_at": 1_764_000_000, "status": "in_progress", "model": "m", "output": []});
                let mut events = vec![
                    ("response.created", json!({"type": "response.created", "response": opening})),
                    (
                        "response.output_item.added",
                        json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "message", "id": "msg_1", "status": "in_progress", "role": "assistant", "content": []}}),
                    ),
                    (
                        "response.content_part.added",
                        json!({"type": "response.content_part.added", "item_id": "msg_1", "output_index": 0, "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}}),
                    ),
                    (
                        "response.output_text.delta",
                        json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": "ok"}),
                    ),
                    (
                        "response.output_text.done",
                        json!({"type": "response.output_text.done", "item_id": "msg_1", "output_index": 0, "content_index": 0, "text": "ok"}),
                    ),
                    (
                        "response.content_part.done",
                        json!({"type": "response.content_part.done", "item_id": "msg_1", "output_index": 0, "content_index": 0, "part": part}),
                    ),
                    ("response.output_item.done", json!({"type": "response.output_item.done", "output_index": 0, "item": item})),
                    ("response.completed", json!({"type": "response.completed", "response": answer})),
                ];
                for (n, (_, data)) in events.iter_mut().enumerate() {
                    data["sequence_number"] = json!(n);
                }
                events
            }
        }
    }
}

/// The `workmem` binary the bench starts `workmem proxy` from: $WORKMEM_BIN, else the one this
/// build's profile made beside the bench (`make bench-proxy` builds it first).
fn workmem_bin() -> std::path::PathBuf {
    if let Some(bin) = std::env::var_os("WORKMEM_BIN") {
        return bin.into();
    }
    let exe = std::env::current_exe().unwrap();
    let bin = exe.parent().and_then(Path::parent).map(|profile| profile.join("workmem")).unwrap();
    assert!(bin.exists(), "{} is not built: `cargo build --release -p workmem` first, or set WORKMEM_BIN", bin.display());
    bin
}

/// A proxy measured: its build's name in the table, the process, where it listens, its files.
struct Proxied {
    name: &'static str,
    child: std::process::Child,
    url: String,
    root: PathBuf,
}

impl Proxied {
    /// Stopped as Ctrl-C stops it: its exchanges in flight end first, each answer logged.
    fn stop(&mut self) {
        let stopped = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status().is_ok_and(|s| s.success());
        if !stopped {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

/// The forwarder's name in the table.
const FORWARDER: &str = "forwarder";

/// The name of the proxy whose sessions are in PostgreSQL.
const POSTGRES: &str = "postgres";

/// This build's proxy, the same on `database`'s sessions, `WORKMEM_BIN_B`'s where it is set,
/// each with its own sessions, and the forwarder, last.
fn proxies(root: &Path, upstream: &str, database: &str, meter: Meter) -> Vec<Proxied> {
    let b = std::env::var_os("WORKMEM_BIN_B").map(PathBuf::from);
    let workmem = |bin: PathBuf| (bin, vec!["proxy", "--listen", "127.0.0.1:0", "--upstream", upstream, "--json", "--window", "1000000"], None);
    let on_database = |bin: PathBuf| {
        let (bin, mut args, tunables) = workmem(bin);
        args.extend(["--sessions-db", database]);
        (bin, args, tunables)
    };
    // The forwarder's allocator keeps what it frees: without, glibc gave each request's body back
    // to the system and faulted it in afresh on the next (`perf` over a run of both sizes: 15%
    // of the forwarder's CPU in page faults, 4% of the proxy's, which holds its sessions'
    // bodies), and a floor is not to be raised by what the proxy does not pay.
    let kept = "glibc.malloc.trim_threshold=268435456:glibc.malloc.mmap_threshold=33554432";
    let forwarder = (std::env::current_exe().unwrap(), vec!["--forward", upstream], Some(kept));
    [Some(("", workmem(workmem_bin()))), Some((POSTGRES, on_database(workmem_bin()))), b.map(|b| ("B", workmem(b))), Some((FORWARDER, forwarder))]
        .into_iter()
        .flatten()
        .map(|(name, (bin, args, tunables))| {
            let root = root.join(if name.is_empty() { "a" } else { name });
            std::fs::create_dir_all(&root).unwrap();
            let (child, url) = proxy(&root, meter, bin, &args, tunables);
            Proxied { name, child, url, root }
        })
        .collect()
}

fn proxy(root: &Path, meter: Meter, bin: PathBuf, args: &[&str], tunables: Option<&str>) -> (std::process::Child, String) {
    let mut command = match meter {
        Meter::Cpu => Command::new(bin),
        Meter::Instructions => {
            let mut c = Command::new("valgrind");
            c.args(["--tool=callgrind", "--callgrind-out-file=callgrind.out"]).arg(bin);
            c
        }
    };
    if let Some(tunables) = tunables {
        command.env("GLIBC_TUNABLES", tunables);
    }
    let mut child =
        command.args(args).current_dir(root).env("WORKMEM_SESSIONS_DIR", root.join("sessions")).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let url = serde_json::from_str::<Value>(&line).unwrap()["listening"].as_str().unwrap().to_string();
    (child, url)
}

/// What the bench counts of the proxy's own work on a request: its CPU time (user and system,
/// in ticks of 10 ms), or, with `PROXY_BENCH_INSTRUCTIONS=1`, the instructions it runs under
/// callgrind. Those are the user-space work alone (the kernel's copying and the disk's syncs
/// are not in them) and the same on every run, where CPU time on a shared machine is not.
#[derive(Clone, Copy, PartialEq)]
enum Meter {
    Cpu,
    Instructions,
}

impl Meter {
    fn chosen() -> Meter {
        match std::env::var("PROXY_BENCH_INSTRUCTIONS") {
            Ok(v) if !v.is_empty() && v != "0" => Meter::Instructions,
            _ => Meter::Cpu,
        }
    }

    /// Counting starts for the proxy (`pid`, its files in `root`): the CPU time so far, or
    /// callgrind's counts zeroed.
    fn start(self, pid: u32) -> Option<Duration> {
        match self {
            Meter::Cpu => cpu_time(pid),
            Meter::Instructions => {
                callgrind_control("-z", pid);
                None
            }
        }
    }

    /// What `requests` requests since [`Meter::start`] cost each.
    fn per_request(self, pid: u32, root: &Path, started: Option<Duration>, requests: usize) -> String {
        let n = requests.max(1);
        match self {
            Meter::Cpu => started.zip(cpu_time(pid)).map_or("CPU unknown".into(), |(before, after)| format!("CPU {:.2} ms", ms((after - before) / n as u32))),
            Meter::Instructions => {
                // Each dump is a file of its own (callgrind.out.1, .2, …): the last dump's is the
                // only one left once the others are removed first.
                let dumps = || std::fs::read_dir(root).unwrap().flatten().map(|e| e.path()).filter(|p| p.to_string_lossy().contains("callgrind.out."));
                dumps().for_each(|p| std::fs::remove_file(p).unwrap());
                callgrind_control("-d", pid);
                let summary = dumps().find_map(|p| {
                    std::fs::read_to_string(p).ok()?.lines().find_map(|l| l.strip_prefix("summary: ").and_then(|n| n.trim().parse::<u64>().ok()))
                });
                summary.map_or("instructions unknown".into(), |i| format!("{:.2} M instructions", i as f64 / n as f64 / 1e6))
            }
        }
    }
}

/// Tells callgrind in process `pid` to zero its counts (`-z`) or dump them (`-d`); it answers
/// once done.
fn callgrind_control(what: &str, pid: u32) {
    let status =
        Command::new("callgrind_control").args([what, &pid.to_string()]).stdout(Stdio::null()).stderr(Stdio::null()).status().expect("callgrind_control runs");
    assert!(status.success(), "callgrind_control {what} {pid}");
}

/// A client's conversation: its system prompt, then `n` messages less the system prompt (user,
/// assistant with a tool call, and its result, about 200 bytes each), growing by the answer
/// and a message after each request.
struct Conversation {
    protocol: Protocol,
    tag: String,
    system: String,
    history: Vec<Value>,
}

impl Conversation {
    fn new(protocol: Protocol, tag: &str, n: usize) -> Conversation {
        let mut history = Vec::new();
        let mut i = 0;
        while history.len() + 1 < n {
            history.push(protocol.text("user", &format!("{tag} step {i}: {}", "look at the next file ".repeat(8))));
            history.extend(protocol.call(&format!("call_{tag}_{i}"), &format!("src/{i}.rs"), &format!("fn f{i}() {{ {} }}", "let x = 1; ".repeat(16))));
            i += 1;
        }
        Conversation { protocol, tag: tag.to_string(), system: format!("You are agent {tag}."), history }
    }

    fn body(&self, stream: bool) -> Vec<u8> {
        self.protocol.body(&self.system, &self.history, stream)
    }

    /// The answer ("ok"), then the client's next message.
    fn answered(&mut self, i: usize) {
        self.history.push(self.protocol.text("assistant", "ok"));
        self.history.push(self.protocol.text("user", &format!("{} next {i}", self.tag)));
    }

    /// Messages the client has sent, the system prompt included.
    fn len(&self) -> usize {
        self.history.len() + 1
    }
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder().http_status_as_error(false).build().into()
}

/// One request; its time to the first byte of the body and to the last.
fn request(agent: &ureq::Agent, url: &str, protocol: Protocol, body: Vec<u8>) -> (Duration, Duration, u16) {
    let start = Instant::now();
    let mut response = agent.post(format!("{url}{}", protocol.path())).header("content-type", "application/json").send(body).unwrap();
    let status = response.status().as_u16();
    let mut reader = response.body_mut().as_reader();
    let mut first = [0u8; 1];
    let n = reader.read(&mut first).unwrap();
    let ttfb = start.elapsed();
    let mut rest = Vec::new();
    if n > 0 {
        reader.read_to_end(&mut rest).unwrap();
    }
    (ttfb, start.elapsed(), status)
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    samples[((samples.len() as f64 - 1.0) * p).round() as usize]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// A client's loop: each request extends its history by the answer and a new message.
fn conversation(url: &str, protocol: Protocol, tag: &str, size: usize, requests: usize, stream: bool) -> Vec<(Duration, Duration)> {
    let agent = agent();
    let mut c = Conversation::new(protocol, tag, size);
    let mut out = Vec::new();
    for i in 0..requests {
        let (ttfb, total, status) = request(&agent, url, protocol, c.body(stream));
        assert_eq!(status, 200, "{} through {url}", protocol.name());
        out.push((ttfb, total));
        c.answered(i);
    }
    out
}

/// Clients' loops in step, one straight to the upstream and one through each proxy, a request
/// of each in turn, so that all meet whatever else the machine is doing at the same moments
/// (run one after the other, on a shared machine, their medians wandered apart by more than the
/// proxy adds). The times of each, and what each proxy spent on each of its requests but the
/// first (which logs the whole history), as `meter` counts it.
fn in_step(
    upstream: &str,
    proxies: &[Proxied],
    meter: Meter,
    protocol: Protocol,
    size: usize,
    requests: usize,
    stream: bool,
) -> (Vec<Vec<(Duration, Duration)>>, Vec<String>) {
    let mut urls = vec![upstream];
    urls.extend(proxies.iter().map(|p| p.url.as_str()));
    let mut tags = vec![format!("direct-{size}")];
    tags.extend(proxies.iter().map(|p| format!("proxied{}-{}-{stream}-{size}", p.name, protocol.name())));
    let agents: Vec<_> = urls.iter().map(|_| agent()).collect();
    let mut clients: Vec<_> = tags.iter().map(|tag| Conversation::new(protocol, tag, size)).collect();
    let mut out = vec![Vec::new(); urls.len()];
    let mut started = Vec::new();
    for i in 0..requests {
        for k in 0..urls.len() {
            let (ttfb, total, status) = request(&agents[k], urls[k], protocol, clients[k].body(stream));
            assert_eq!(status, 200, "{} through {}", protocol.name(), urls[k]);
            out[k].push((ttfb, total));
            clients[k].answered(i);
        }
        if i == 0 {
            started = proxies.iter().map(|p| meter.start(p.child.id())).collect();
        }
    }
    let costs = proxies.iter().zip(started).map(|(p, started)| meter.per_request(p.child.id(), &p.root, started, requests - 1)).collect();
    (out, costs)
}

/// The `p` percentile of what `proxied` took over `direct`, request by request (each pair sent
/// in step), in milliseconds: a difference per pair, so its p99 is a p99 of what was added.
fn added(direct: &[Duration], proxied: &[Duration], p: f64) -> f64 {
    let mut diffs: Vec<f64> = direct.iter().zip(proxied).map(|(d, p)| ms(*p) - ms(*d)).collect();
    diffs.sort_by(f64::total_cmp);
    diffs[((diffs.len() as f64 - 1.0) * p).round() as usize]
}

/// The CPU time process `pid` has used, user and system, all its threads, in clock ticks
/// (Linux's USER_HZ, 100 a second): fields 14 and 15 of /proc/PID/stat, counted past the
/// command's name, which may hold spaces.
fn cpu_time(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields: Vec<&str> = stat.get(stat.rfind(')')? + 2..)?.split(' ').collect();
    let ticks = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    if let Some(upstream) = std::env::args().skip_while(|a| a != "--forward").nth(1) {
        return forward(upstream);
    }
    let root = std::env::temp_dir().join(format!("workmem-bench-proxy-{}", std::process::id()));
    std::fs::create_dir_all(&root).unwrap();
    let upstream = upstream();
    let meter = Meter::chosen();
    let db = pg::Server::start().expect("the PostgreSQL store is measured beside the directory store");
    let database = db.database("bench");
    let mut proxies = proxies(&root, &upstream, &database, meter);

    // `PROXY_BENCH_LATENCY=0` leaves part 1 out (the load alone).
    let sizes: &[(usize, usize)] = if std::env::var("PROXY_BENCH_LATENCY").is_ok_and(|v| v == "0") { &[] } else { &[(1000, 200), (10_000, 40)] };
    for &(size, requests) in sizes {
        println!("Added latency, {size}-message history, {requests} requests each (the upstream answers at once):");
        for (protocol, stream) in Protocol::ALL.into_iter().flat_map(|p| [(p, false), (p, true)]) {
            // Warm both paths first: the proxy's first request logs the whole history.
            conversation(&upstream, protocol, "warm-direct", size, 2, stream);
            let (times, costs) = in_step(&upstream, &proxies, meter, protocol, size, requests, stream);
            let what = if stream { "time to first byte" } else { "whole answer" };
            // Each client's first request is left out: a proxy logs the whole history on it, and
            // the direct client's goes too, so that the pairs stay those sent in step.
            let pick = |v: &[(Duration, Duration)]| -> Vec<Duration> { v.iter().skip(1).map(|&(first, total)| if stream { first } else { total }).collect() };
            let d = pick(&times[0]);
            let (d50, d99) = (percentile(&mut d.clone(), 0.5), percentile(&mut d.clone(), 0.99));
            let forwarded = pick(times.last().unwrap());
            for (k, p) in proxies.iter().enumerate() {
                let t = pick(&times[k + 1]);
                let (p50, p99) = (percentile(&mut t.clone(), 0.5), percentile(&mut t.clone(), 0.99));
                let (who, beyond) = match p.name {
                    FORWARDER => (" (the forwarder, no context work)".to_string(), String::new()),
                    POSTGRES => (
                        " (sessions in PostgreSQL)".to_string(),
                        format!("; over the directory store's p50 {:.2} ms, p99 {:.2} ms", added(&pick(&times[1]), &t, 0.5), added(&pick(&times[1]), &t, 0.99)),
                    ),
                    name => (
                        if name.is_empty() { String::new() } else { format!(" (build {name})") },
                        format!("; over the forwarder p50 {:.2} ms", added(&forwarded, &t, 0.5)),
                    ),
                };
                println!(
                    "  {}, {}, {what}{who}: direct p50 {:.2} ms p99 {:.2} ms; proxied p50 {:.2} ms p99 {:.2} ms; added p50 {:.2} ms p99 {:.2} ms{beyond}; the proxy's {} per request",
                    protocol.name(),
                    if stream { "streamed" } else { "not streamed" },
                    ms(d50),
                    ms(d99),
                    ms(p50),
                    ms(p99),
                    added(&d, &t, 0.5),
                    added(&d, &t, 0.99),
                    costs[k],
                );
            }
        }
    }

    proxies.iter_mut().for_each(Proxied::stop);
    let seconds: u64 = std::env::var("PROXY_BENCH_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(60);
    if seconds == 0 {
        let _ = std::fs::remove_dir_all(&root);
        return;
    }
    // The load is this build's alone, on stores of its own: on the directory store, then on
    // a database with one replica and with three.
    let clients = 64;
    println!("{clients} client sessions at once for {seconds} s each (histories from 30 messages, growing):");
    let database = db.database("load");
    let start = |name: &'static str, args: &[&str]| {
        let root = root.join(name);
        std::fs::create_dir_all(&root).unwrap();
        let args: Vec<&str> =
            ["proxy", "--listen", "127.0.0.1:0", "--upstream", &upstream, "--json", "--window", "1000000"].into_iter().chain(args.iter().copied()).collect();
        let (child, url) = proxy(&root, Meter::Cpu, workmem_bin(), &args, None);
        Proxied { name, child, url, root }
    };
    let mut replicas = vec![start("load-dir", &[])];
    let dir_root = replicas[0].root.clone();
    let alone = load(&[replicas[0].url.as_str()], clients, seconds, "dir");
    // The replicas run in one working directory, as a fleet's do: a store's sessions (and the
    // secret its callers' scopes are keyed by) are that directory's.
    replicas.extend([0, 1, 2].map(|_| start("load-replicas", &["--sessions-db", &database])));
    let one = load(&[replicas[1].url.as_str()], clients, seconds, "one");
    let urls: Vec<&str> = replicas[1..].iter().map(|p| p.url.as_str()).collect();
    let three = load(&urls, clients, seconds, "three");
    replicas.iter_mut().for_each(Proxied::stop);
    let lost_dir = lost(&alone, |tag| find_log(&dir_root, tag).lines().filter(|l| l.contains("\"kind\":\"message\"")).count());
    let mut sql = postgres::Client::connect(&database, postgres::NoTls).unwrap();
    let mut logged_in_db = |tag: &str| -> usize {
        let needle = format!("%You are agent {tag}.\"%");
        let row = sql
            .query_one(
                "SELECT count(*) FROM workmem_session_record r WHERE r.record LIKE '%\"kind\":\"message\"%' AND r.sid = \
                 (SELECT sid FROM workmem_session_record WHERE seq = 1 AND record LIKE $1 LIMIT 1)",
                &[&needle],
            )
            .unwrap();
        row.get::<_, i64>(0) as usize
    };
    let lost_one = lost(&one, &mut logged_in_db);
    let lost_three = lost(&three, &mut logged_in_db);
    for (what, run, lost) in
        [("directory store, one proxy", &alone, lost_dir), ("PostgreSQL, one replica", &one, lost_one), ("PostgreSQL, three replicas", &three, lost_three)]
    {
        println!(
            "  {what}: {} requests, {:.0} per second, p99 {:.1} ms, {} errors, {lost} of {clients} sessions missing a message",
            run.requests,
            run.requests as f64 / seconds as f64,
            ms(run.p99),
            run.errors
        );
    }
    println!(
        "  three replicas serve {:.2} times one replica's requests per second (one machine: the replicas, the database and the clients share its cores)",
        three.requests as f64 / one.requests.max(1) as f64
    );
    // What a session takes: its directory's bytes, and its share of the tables' (rows, indexes
    // and what PostgreSQL keeps beside them).
    let sessions =
        std::fs::read_dir(dir_root.join("sessions")).unwrap().flatten().flat_map(|d| std::fs::read_dir(d.path()).unwrap().flatten()).collect::<Vec<_>>();
    let dir_bytes: u64 = sessions.iter().map(|s| bytes(&s.path())).sum();
    let row = sql
        .query_one(
            "SELECT (SELECT count(*) FROM workmem_session), (SELECT sum(pg_total_relation_size(c.oid))::bigint FROM pg_class c WHERE c.relname LIKE 'workmem_session%' AND c.relkind = 'r')",
            &[],
        )
        .unwrap();
    let (db_sessions, db_bytes): (i64, i64) = (row.get(0), row.get(1));
    println!(
        "  storage a session: directory {:.0} KB ({} sessions), PostgreSQL {:.0} KB ({db_sessions} sessions, tables with their indexes)",
        dir_bytes as f64 / sessions.len().max(1) as f64 / 1024.0,
        sessions.len(),
        db_bytes as f64 / db_sessions.max(1) as f64 / 1024.0
    );
    let _ = std::fs::remove_dir_all(&root);
}

/// What a load of `clients` sessions for `seconds` made: each client's tag and messages sent,
/// the requests and errors, and the p99.
struct Load {
    sent: Vec<(String, usize)>,
    requests: usize,
    errors: usize,
    p99: Duration,
}

/// `clients` client sessions at once for `seconds`, each sending its requests to `urls` in
/// turn (one proxy, or replicas behind a round-robin balancer, no stickiness).
fn load(urls: &[&str], clients: usize, seconds: u64, run: &str) -> Load {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let threads: Vec<_> = (0..clients)
        .map(|c| {
            let urls: Vec<String> = urls.iter().map(|u| u.to_string()).collect();
            let tag = format!("{run}{c}");
            std::thread::spawn(move || {
                let agent = agent();
                let mut conversation = Conversation::new(Protocol::Chat, &tag, 30);
                let (mut latencies, mut errors, mut sent) = (Vec::new(), 0, 0);
                while Instant::now() < deadline {
                    let url = &urls[(c + latencies.len()) % urls.len()];
                    let (_, total, status) = request(&agent, url, Protocol::Chat, conversation.body(false));
                    latencies.push(total);
                    if status != 200 {
                        errors += 1;
                        continue;
                    }
                    sent += 1;
                    conversation.answered(sent);
                }
                (tag, latencies, errors, conversation.len())
            })
        })
        .collect();
    let results: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let mut all: Vec<Duration> = results.iter().flat_map(|r| r.1.clone()).collect();
    let requests = all.len();
    Load { sent: results.iter().map(|r| (r.0.clone(), r.3)).collect(), requests, errors: results.iter().map(|r| r.2).sum(), p99: percentile(&mut all, 0.99) }
}

/// The sessions of `run` whose log lacks a message its client sent (`logged`: the messages the
/// session of a tag logged): the history it last sent, less the answer and message appended
/// after the last request, plus that request's answer.
fn lost(run: &Load, mut logged: impl FnMut(&str) -> usize) -> usize {
    let mut lost = 0;
    for (tag, len) in &run.sent {
        let n = logged(tag);
        if n != len - 1 {
            lost += 1;
            eprintln!("session {tag}: {n} messages logged, {} sent", len - 1);
        }
    }
    lost
}

/// The bytes of the files under `path`.
fn bytes(path: &Path) -> u64 {
    std::fs::read_dir(path)
        .map_or(0, |entries| entries.flatten().map(|e| if e.path().is_dir() { bytes(&e.path()) } else { e.metadata().map_or(0, |m| m.len()) }).sum())
}

/// The log of the session whose system prompt names `tag`.
fn find_log(root: &Path, tag: &str) -> String {
    let needle = format!("You are agent {tag}.\"");
    for dir in std::fs::read_dir(root.join("sessions")).unwrap().flatten() {
        for session in std::fs::read_dir(dir.path()).unwrap().flatten() {
            let log = std::fs::read_to_string(session.path().join("messages.jsonl")).unwrap_or_default();
            if log.lines().next().is_some_and(|l| l.contains(&needle)) {
                return log;
            }
        }
    }
    String::new()
}
