//! Standard input and output as the server reads and writes them, between the client and
//! rmcp: rmcp drops a line it cannot read (one past its 16 MiB cap, one that is not JSON, a
//! lone surrogate, a byte that is not UTF-8) without a word, so the client waited forever for
//! that request's answer; and it takes every request at once (40 requests of 15 MiB took the
//! server to 474 MiB). Here each line is read within [`Limits::max_request_bytes`]; one that
//! cannot go on gets its JSON-RPC error (with its `id` where one can be read), and at most
//! [`Limits::max_in_flight`] requests are with rmcp at a time.

use serde_json::{Value, json};
use std::sync::Arc;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{Semaphore, mpsc};

/// What the stdio framing bounds.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The longest line (one JSON-RPC message) read, in bytes.
    pub max_request_bytes: usize,
    /// Requests handed to the server and not yet answered.
    pub max_in_flight: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_request_bytes: 4 << 20, max_in_flight: 16 }
    }
}

/// Connects `input` and `output` (the process's standard streams) to the ends rmcp serves
/// on, returned as (what rmcp reads, what rmcp writes); the framing runs in tasks of its own
/// until `input` ends.
pub fn frame(
    input: impl AsyncRead + Unpin + Send + 'static,
    output: impl AsyncWrite + Unpin + Send + 'static,
    limits: Limits,
) -> (tokio::io::DuplexStream, tokio::io::DuplexStream) {
    let (mut to_server, server_reads) = tokio::io::duplex(64 << 10);
    let (server_writes, from_server) = tokio::io::duplex(64 << 10);
    let (lines, mut outgoing) = mpsc::channel::<String>(64);
    let in_flight = Arc::new(Semaphore::new(limits.max_in_flight.max(1)));

    // Client to server: each line checked, a request waiting for a place in flight.
    let (errors, slots) = (lines.clone(), in_flight.clone());
    tokio::spawn(async move {
        let mut input = BufReader::new(input);
        loop {
            let line = match read_line(&mut input, limits.max_request_bytes).await {
                Ok(Some(line)) => line,
                Ok(None) | Err(_) => break,
            };
            let message = match line {
                Line::TooLong(head) => {
                    let why = format!("the message is over {} bytes, the most this server reads (--max-request-bytes)", limits.max_request_bytes);
                    let _ = errors.send(error(id_in(&head), -32600, &why)).await;
                    continue;
                }
                Line::Whole(bytes) => bytes,
            };
            if message.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let parsed =
                std::str::from_utf8(&message).map_err(|e| e.to_string()).and_then(|text| serde_json::from_str::<Value>(text).map_err(|e| e.to_string()));
            let value = match parsed {
                Ok(value) => value,
                Err(why) => {
                    let _ = errors.send(error(id_in(&message), -32700, &format!("the message is not JSON in UTF-8: {why}"))).await;
                    continue;
                }
            };
            if is_request(&value) {
                match slots.acquire().await {
                    Ok(permit) => permit.forget(),
                    Err(_) => break,
                }
            }
            if to_server.write_all(&message).await.is_err() || to_server.write_all(b"\n").await.is_err() {
                break;
            }
        }
        // The client is gone: rmcp sees the end of its input and stops.
        let _ = to_server.shutdown().await;
    });

    // Server to client: each answer gives its request's place back.
    tokio::spawn(async move {
        let mut from_server = BufReader::new(from_server).lines();
        while let Ok(Some(line)) = from_server.next_line().await {
            if serde_json::from_str::<Value>(&line).is_ok_and(|v| is_answer(&v)) {
                in_flight.add_permits(1);
            }
            if lines.send(line).await.is_err() {
                break;
            }
        }
    });
    tokio::spawn(async move {
        let mut output = output;
        while let Some(line) = outgoing.recv().await {
            if output.write_all(line.as_bytes()).await.is_err() || output.write_all(b"\n").await.is_err() || output.flush().await.is_err() {
                break;
            }
        }
    });
    (server_reads, server_writes)
}

enum Line {
    Whole(Vec<u8>),
    /// Past the cap: its first bytes (where an `id` may be read), the rest skipped.
    TooLong(Vec<u8>),
}

/// The next line without its newline, read in pieces so that one past `max` costs no more
/// than `max` bytes of memory; `None` at the end of the input.
async fn read_line(input: &mut (impl tokio::io::AsyncBufRead + Unpin), max: usize) -> std::io::Result<Option<Line>> {
    /// What is kept of a line past the cap: where its `id` would be.
    const HEAD: usize = 4096;
    let mut line = Vec::new();
    let mut over = false;
    let whole = |line, over| if over { Line::TooLong(line) } else { Line::Whole(line) };
    loop {
        let buf = input.fill_buf().await?;
        if buf.is_empty() {
            return Ok((!line.is_empty() || over).then(|| whole(line, over)));
        }
        let newline = buf.iter().position(|&b| b == b'\n');
        let piece = &buf[..newline.unwrap_or(buf.len())];
        if !over && line.len() + piece.len() > max {
            over = true;
            line.truncate(HEAD);
            line.extend_from_slice(&piece[..HEAD.saturating_sub(line.len()).min(piece.len())]);
        } else if !over {
            line.extend_from_slice(piece);
        }
        let used = newline.map_or(buf.len(), |i| i + 1);
        input.consume(used);
        if newline.is_some() {
            return Ok(Some(whole(line, over)));
        }
    }
}

/// A request: a method and an `id` (a notification has no `id`; an answer has no method).
fn is_request(v: &Value) -> bool {
    v.get("method").is_some() && v.get("id").is_some_and(|id| !id.is_null())
}

fn is_answer(v: &Value) -> bool {
    v.get("method").is_none() && v.get("id").is_some() && (v.get("result").is_some() || v.get("error").is_some())
}

/// The `id` of a message that could not be read whole, where its first bytes show one (a
/// number, or a string without escapes); else null, as JSON-RPC asks.
fn id_in(bytes: &[u8]) -> Value {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(4096)]);
    let Some(at) = text.find("\"id\"") else { return Value::Null };
    let rest = text[at + 4..].trim_start();
    let Some(rest) = rest.strip_prefix(':') else { return Value::Null };
    let rest = rest.trim_start();
    if let Some(s) = rest.strip_prefix('"') {
        return s.find(['"', '\\']).filter(|&end| s.as_bytes()[end] == b'"').map_or(Value::Null, |end| Value::String(s[..end].to_string()));
    }
    let number: String = rest.chars().take_while(|c| c.is_ascii_digit() || *c == '-').collect();
    number.parse::<i64>().map_or(Value::Null, Value::from)
}

fn error(id: Value, code: i64, message: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_read_from_the_head_of_a_broken_message() {
        assert_eq!(id_in(br#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"x":"#), json!(42));
        assert_eq!(id_in(br#"{"id": "a-7", "method""#), json!("a-7"));
        assert_eq!(id_in(br#"{"id": "a\"7"}"#), Value::Null);
        assert_eq!(id_in(b"\xff\xfe"), Value::Null);
    }
}
