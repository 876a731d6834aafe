//! A loopback server that speaks the OpenAI Chat Completions protocol over real HTTP/1.1:
//! JSON answers, server-sent event streams (chunked), error statuses with retry headers,
//! connections that never answer and streams cut mid-way, replayed from a script in order.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Clone)]
pub enum Reply {
    /// A status, extra headers and a JSON body.
    Json { status: u16, headers: Vec<(&'static str, String)>, body: String },
    /// A 200 event stream of these `data:` payloads, ended by `[DONE]` when `done`; else the
    /// connection is dropped mid-stream.
    Stream { events: Vec<String>, done: bool },
    /// Reads the request and never answers.
    Hang,
    /// The reply, once the server has waited this long (a model slow to answer; the server
    /// reads no other request meanwhile).
    Late(Duration, Box<Reply>),
    /// A 200 event stream whose first line never ends: `data: xxxx...` until the client
    /// hangs up (or a gigabyte has gone).
    Endless,
}

impl Reply {
    /// A complete (non-streamed) chat completion with usage.
    pub fn answer(text: &str) -> Reply {
        let body = json!({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 1_763_800_000, "model": "test-model",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
        });
        Reply::Json { status: 200, headers: vec![], body: body.to_string() }
    }

    /// An answer without usage, so that token counts are the client's alone.
    pub fn say(text: &str) -> Reply {
        Reply::message(json!({"role": "assistant", "content": text}))
    }

    /// The model calling tools: `(name, arguments)`, in order.
    pub fn call(calls: &[(&str, Value)]) -> Reply {
        Reply::message(json!({"role": "assistant", "content": null, "tool_calls": tool_calls(calls)}))
    }

    fn message(message: Value) -> Reply {
        let finish = if message["tool_calls"].is_array() { "tool_calls" } else { "stop" };
        let body = json!({"id": "chatcmpl-1", "object": "chat.completion", "created": 1_763_800_000, "model": "test-model",
                          "choices": [{"index": 0, "message": message, "finish_reason": finish}]});
        Reply::Json { status: 200, headers: vec![], body: body.to_string() }
    }

    /// Tool calls as a stream: each call named in one delta, its arguments in pieces after.
    pub fn call_streamed(calls: &[(&str, Value)]) -> Reply {
        let chunk = |delta: Value| {
            json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": null}]}).to_string()
        };
        let mut events = Vec::new();
        for (index, call) in tool_calls(calls).iter().enumerate() {
            let head = json!({"index": index, "id": call["id"], "type": "function", "function": {"name": call["function"]["name"], "arguments": ""}});
            events.push(chunk(json!({"role": "assistant", "tool_calls": [head]})));
            let args: Vec<char> = call["function"]["arguments"].as_str().unwrap().chars().collect();
            for piece in args.chunks(7) {
                let part = json!({"index": index, "function": {"arguments": piece.iter().collect::<String>()}});
                events.push(chunk(json!({"tool_calls": [part]})));
            }
        }
        Reply::Stream { events, done: true }
    }

    /// The same answer as a stream: a role delta, the text in small pieces, the finish
    /// reason, then the usage chunk (as `stream_options.include_usage` asks).
    pub fn streamed(text: &str) -> Reply {
        Reply::Stream { events: stream_events(text), done: true }
    }

    /// A stream that breaks off halfway.
    pub fn cut(text: &str) -> Reply {
        let mut events = stream_events(text);
        events.truncate(events.len() / 2);
        Reply::Stream { events, done: false }
    }

    /// The prompt tokens this reply reports, if it reports usage.
    /// The messages an agent logs for this reply: the assistant's, and one result per tool
    /// call; none for a failure.
    pub fn logged(&self) -> usize {
        match self {
            Reply::Json { status: 200, body, .. } => {
                let v: Value = serde_json::from_str(body).unwrap();
                1 + v["choices"][0]["message"]["tool_calls"].as_array().map_or(0, Vec::len)
            }
            Reply::Stream { events, done: true } => {
                let named = events
                    .iter()
                    .filter_map(|e| serde_json::from_str::<Value>(e).ok())
                    .filter(|v| v["choices"][0]["delta"]["tool_calls"][0]["id"].is_string())
                    .count();
                1 + named
            }
            _ => 0,
        }
    }

    pub fn prompt_tokens(&self) -> Option<i64> {
        let usage = |text: &str| serde_json::from_str::<Value>(text).ok()?["usage"]["prompt_tokens"].as_i64();
        match self {
            Reply::Json { status: 200, body, .. } => usage(body),
            Reply::Stream { events, done: true } => events.iter().find_map(|e| usage(e)),
            _ => None,
        }
    }

    pub fn status(status: u16, headers: Vec<(&'static str, String)>) -> Reply {
        let body = json!({"error": {"message": format!("scripted {status}"), "type": "test"}});
        Reply::Json { status, headers, body: body.to_string() }
    }
}

fn tool_calls(calls: &[(&str, Value)]) -> Vec<Value> {
    calls
        .iter()
        .enumerate()
        .map(|(i, (name, args))| json!({"id": format!("call_{i}"), "type": "function", "function": {"name": name, "arguments": args.to_string()}}))
        .collect()
}

fn stream_events(text: &str) -> Vec<String> {
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1_763_800_000, "model": "test-model",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        .to_string()
    };
    let mut events = vec![chunk(json!({"role": "assistant", "content": ""}), Value::Null)];
    let chars: Vec<char> = text.chars().collect();
    for piece in chars.chunks(16) {
        events.push(chunk(json!({"content": piece.iter().collect::<String>()}), Value::Null));
    }
    events.push(chunk(json!({}), json!("stop")));
    events.push(
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [],
               "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}})
        .to_string(),
    );
    events
}

/// A request as the server received it.
#[derive(Debug, Clone)]
pub struct Request {
    pub at: Instant,
    pub path: String,
    pub authorization: Option<String>,
    pub body: Value,
}

pub struct Server {
    /// The base URL to give the client, ending in `/v1`.
    pub url: String,
    requests: Arc<Mutex<Vec<Request>>>,
}

impl Server {
    pub fn start(script: Vec<Reply>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("loopback port");
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let log = requests.clone();
        std::thread::spawn(move || {
            let mut held = Vec::new(); // hung connections stay open until the process ends
            let mut script = script.into_iter();
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let Some(request) = read_request(&mut stream) else { continue };
                log.lock().unwrap().push(request);
                match script.next() {
                    Some(Reply::Hang) => held.push(stream),
                    Some(reply) => respond(stream, reply),
                    None => respond(stream, Reply::status(500, vec![])),
                }
            }
        });
        Server { url, requests }
    }

    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }
}

fn read_request(stream: &mut TcpStream) -> Option<Request> {
    let at = Instant::now();
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line).ok()?;
    let path = request_line.split_whitespace().nth(1)?.to_string();
    let (mut length, mut authorization) = (0, None);
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).ok()?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':')?;
        match name.to_ascii_lowercase().as_str() {
            "content-length" => length = value.trim().parse().ok()?,
            "authorization" => authorization = Some(value.trim().to_string()),
            _ => {}
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Request { at, path, authorization, body: serde_json::from_slice(&body).unwrap_or(Value::Null) })
}

fn respond(mut stream: TcpStream, reply: Reply) {
    let _ = match reply {
        Reply::Late(pause, reply) => {
            std::thread::sleep(pause);
            return respond(stream, *reply);
        }
        Reply::Json { status, headers, body } => {
            let extra: String = headers.iter().map(|(k, v)| format!("{k}: {v}\r\n")).collect();
            write!(
                stream,
                "HTTP/1.1 {status} Scripted\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n{extra}\r\n{body}",
                body.len()
            )
        }
        Reply::Stream { events, done } => (|| {
            write!(stream, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n")?;
            let mut events: Vec<String> = events.into_iter().map(|e| format!("data: {e}\n\n")).collect();
            if done {
                events.push("data: [DONE]\n\n".into());
            }
            for event in events {
                write!(stream, "{:x}\r\n{event}\r\n", event.len())?;
                stream.flush()?;
                std::thread::sleep(Duration::from_millis(2));
            }
            if done {
                write!(stream, "0\r\n\r\n")?;
            }
            stream.flush()
        })(),
        Reply::Endless => (|| {
            write!(stream, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n")?;
            let piece = format!("data: {}", "x".repeat(64 << 10));
            for _ in 0..(1 << 30) / piece.len() {
                write!(stream, "{:x}\r\n{piece}\r\n", piece.len())?;
            }
            stream.flush()
        })(),
        Reply::Hang => unreachable!("held, not answered"),
    };
}
