//! Issue 26's figures for `workmem proxy`, each measured in one run against the same loopback
//! upstream reached directly:
//!
//! 1. the latency the proxy adds to a Chat Completions request whose history holds 1,000
//!    messages (p50 and p99; each request extends the history by an answer and a message, as a
//!    client's does), and the time to the first byte of a stream;
//! 2. 64 client sessions at once for `PROXY_BENCH_SECONDS` (default 60; 0 leaves this out):
//!    requests per second, p99, errors, and whether every session's log holds every message
//!    its client sent.
//!
//! `make bench-proxy` (a release build). The upstream answers at once, so what is measured is
//! the proxy's own work: finding the session, logging what is new, building and bounding the
//! request, relaying the answer.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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
        let streamed = streamed(&body);
        let (kind, payload) = if streamed {
            let chunk = |delta: Value, finish: Value| {
                format!(
                    "data: {}\n\n",
                    json!({"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
                )
            };
            let events = [chunk(json!({"role": "assistant", "content": "ok"}), Value::Null), chunk(json!({}), json!("stop")), "data: [DONE]\n\n".into()];
            ("text/event-stream", events.concat())
        } else {
            let answer = json!({"id": "c", "object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
                                "usage": {"prompt_tokens": body.len() / 4, "completion_tokens": 1, "total_tokens": body.len() / 4 + 1}});
            ("application/json", answer.to_string())
        };
        // One write, so that no delayed acknowledgement holds the answer back.
        let answer = format!("HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nContent-Length: {}\r\n\r\n{payload}", payload.len());
        if out.write_all(answer.as_bytes()).is_err() {
            return;
        }
    }
}

fn streamed(body: &[u8]) -> bool {
    body.windows(13).any(|w| w == b"\"stream\":true")
}

fn proxy(root: &Path, upstream: &str) -> (std::process::Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_workmem"))
        .args(["proxy", "--listen", "127.0.0.1:0", "--upstream", upstream, "--json", "--window", "1000000"])
        .current_dir(root)
        .env("WORKMEM_SESSIONS_DIR", root.join("sessions"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let url = serde_json::from_str::<Value>(&line).unwrap()["listening"].as_str().unwrap().to_string();
    (child, url)
}

/// A conversation of `n` messages: a system prompt, then user, assistant with a tool call, and
/// its result, about 200 bytes each.
fn history(tag: &str, n: usize) -> Vec<Value> {
    let mut out = vec![json!({"role": "system", "content": format!("You are agent {tag}.")})];
    let mut i = 0;
    while out.len() < n {
        let id = format!("call_{tag}_{i}");
        out.push(json!({"role": "user", "content": format!("{tag} step {i}: {}", "look at the next file ".repeat(8))}));
        out.push(json!({"role": "assistant", "content": null, "tool_calls": [{"id": id, "type": "function", "function": {"name": "read_file", "arguments": format!("{{\"path\": \"src/{i}.rs\"}}")}}]}));
        out.push(json!({"role": "tool", "tool_call_id": id, "content": format!("fn f{i}() {{ {} }}", "let x = 1; ".repeat(16))}));
        i += 1;
    }
    out
}

fn body(messages: &[Value], stream: bool) -> Vec<u8> {
    let tools = json!([{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}]);
    json!({"model": "gpt-4o", "messages": messages, "tools": tools, "stream": stream}).to_string().into_bytes()
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder().http_status_as_error(false).build().into()
}

/// One request; its time to the first byte of the body and to the last.
fn request(agent: &ureq::Agent, url: &str, body: Vec<u8>) -> (Duration, Duration, u16) {
    let start = Instant::now();
    let mut response = agent.post(format!("{url}/v1/chat/completions")).header("content-type", "application/json").send(body).unwrap();
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
fn conversation(url: &str, tag: &str, size: usize, requests: usize, stream: bool) -> Vec<(Duration, Duration)> {
    let agent = agent();
    let mut messages = history(tag, size);
    let mut out = Vec::new();
    for i in 0..requests {
        let (ttfb, total, status) = request(&agent, url, body(&messages, stream));
        assert_eq!(status, 200);
        out.push((ttfb, total));
        messages.push(json!({"role": "assistant", "content": "ok"}));
        messages.push(json!({"role": "user", "content": format!("{tag} next {i}")}));
    }
    out
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let root = std::env::temp_dir().join(format!("workmem-bench-proxy-{}", std::process::id()));
    std::fs::create_dir_all(&root).unwrap();
    let upstream = upstream();
    let (mut child, url) = proxy(&root, &upstream);

    println!("Added latency, 1,000-message history, 200 requests each (the upstream answers at once):");
    for stream in [false, true] {
        // Warm both paths first: the proxy's first request logs the whole history.
        conversation(&upstream, "warm-direct", 1000, 2, stream);
        let direct = conversation(&upstream, "direct", 1000, 200, stream);
        let proxied = conversation(&url, &format!("proxied-{stream}"), 1000, 200, stream);
        let what = if stream { "time to first byte" } else { "whole answer" };
        let pick = |v: Vec<(Duration, Duration)>| -> Vec<Duration> { v.into_iter().map(|(first, total)| if stream { first } else { total }).collect() };
        let (mut d, mut p) = (pick(direct), pick(proxied.into_iter().skip(1).collect()));
        let (d50, d99, p50, p99) = (percentile(&mut d, 0.5), percentile(&mut d, 0.99), percentile(&mut p, 0.5), percentile(&mut p, 0.99));
        println!(
            "  {}, {what}: direct p50 {:.2} ms p99 {:.2} ms; proxied p50 {:.2} ms p99 {:.2} ms; added p50 {:.2} ms p99 {:.2} ms",
            if stream { "streamed" } else { "not streamed" },
            ms(d50),
            ms(d99),
            ms(p50),
            ms(p99),
            ms(p50.saturating_sub(d50)),
            ms(p99.saturating_sub(d99))
        );
    }

    let seconds: u64 = std::env::var("PROXY_BENCH_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(60);
    if seconds == 0 {
        let _ = child.kill();
        let _ = child.wait();
        let _ = std::fs::remove_dir_all(&root);
        return;
    }
    let clients = 64;
    println!("{clients} client sessions at once for {seconds} s (histories from 30 messages, growing):");
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let threads: Vec<_> = (0..clients)
        .map(|c| {
            let url = url.clone();
            std::thread::spawn(move || {
                let agent = agent();
                let tag = format!("load{c}");
                let mut messages = history(&tag, 30);
                let (mut latencies, mut errors, mut sent) = (Vec::new(), 0, 0);
                while Instant::now() < deadline {
                    let (_, total, status) = request(&agent, &url, body(&messages, false));
                    latencies.push(total);
                    if status != 200 {
                        errors += 1;
                        continue;
                    }
                    sent += 1;
                    messages.push(json!({"role": "assistant", "content": "ok"}));
                    messages.push(json!({"role": "user", "content": format!("{tag} next {sent}")}));
                }
                (tag, latencies, errors, messages.len())
            })
        })
        .collect();
    let results: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let mut all: Vec<Duration> = results.iter().flat_map(|r| r.1.clone()).collect();
    let errors: usize = results.iter().map(|r| r.2).sum();
    let total = all.len();
    let p99 = percentile(&mut all, 0.99);
    let _ = child.kill();
    let _ = child.wait();
    // Every message each client sent is in its session's log: the history it last sent, less
    // the answer and message appended after the last request, plus that request's answer.
    let mut lost = 0;
    for (tag, _, _, len) in &results {
        let log = find_log(&root, tag);
        let logged = log.lines().filter(|l| l.contains("\"kind\":\"message\"")).count();
        if logged != len - 1 {
            lost += 1;
            eprintln!("session {tag}: {logged} messages logged, {} sent", len - 1);
        }
    }
    println!(
        "  {total} requests, {:.0} per second, p99 {:.1} ms, {errors} errors, {lost} of {clients} sessions missing a message",
        total as f64 / seconds as f64,
        ms(p99)
    );
    let _ = std::fs::remove_dir_all(&root);
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
