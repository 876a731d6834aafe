//! OpenAI Chat Completions (`/v1/chat/completions`) as the proxy reads and writes it.

use crate::sessions::own_tool;
use bytes::Bytes;
use serde_json::{Value, json};
use std::collections::HashMap;
use workmem_llm::{ChatStream, Completion};
use workmem_store::{Message, ToolCall};

/// The client's history in the session's message shape. Content the session cannot carry
/// (an image, audio) is refused, and the request then goes upstream as it was.
pub(crate) fn history(request: &Value) -> Result<Vec<Message>, String> {
    let messages = request["messages"].as_array().ok_or("the request has no messages array")?;
    messages.iter().enumerate().map(|(i, m)| message(m).map_err(|why| format!("messages[{i}]: {why}"))).collect()
}

fn message(m: &Value) -> Result<Message, String> {
    let role = m["role"].as_str().ok_or("no role")?;
    let content = match &m["content"] {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Array(parts) => {
            let mut text = String::new();
            for part in parts {
                match (part["type"].as_str(), part["text"].as_str()) {
                    (Some("text"), Some(t)) => text.push_str(t),
                    (kind, _) => return Err(format!("a content part of type {kind:?}, which the session cannot keep")),
                }
            }
            text
        }
        _ => return Err("content that is neither text nor parts".into()),
    };
    let tool_calls = m["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            Ok(ToolCall {
                id: c["id"].as_str().ok_or("a tool call without an id")?.to_string(),
                name: c["function"]["name"].as_str().ok_or("a tool call without a name")?.to_string(),
                arguments: c["function"]["arguments"].as_str().unwrap_or_default().to_string(),
            })
        })
        .collect::<Result<_, String>>()?;
    Ok(Message { tool_calls, tool_call_id: m["tool_call_id"].as_str().map(str::to_string), ..Message::new(role, content) })
}

/// The names of the tools the client offers.
pub(crate) fn tool_names(request: &Value) -> Vec<String> {
    request["tools"].as_array().into_iter().flatten().filter_map(|t| t["function"]["name"].as_str().map(str::to_string)).collect()
}

/// The client's tools and workmem's, as the upstream request offers them.
pub(crate) fn tools(request: &Value, own: &[&workmem_agent::tools::Tool]) -> Value {
    let mut all: Vec<Value> = request["tools"].as_array().cloned().unwrap_or_default();
    all.extend(own.iter().map(|t| t.openai()));
    Value::Array(all)
}

/// The client's request with the session's view in place of its messages.
#[derive(serde::Serialize)]
struct Body<'a> {
    #[serde(flatten)]
    rest: Value,
    messages: &'a [workmem_llm::Message],
    tools: &'a Value,
}

/// The client's request with the session's view in place of its messages, written straight
/// from the view (a `Value` of a long history first would cost more than the writing).
pub(crate) fn upstream_body(request: &Value, messages: &[workmem_llm::Message], tools: &Value) -> Vec<u8> {
    let body = Body { rest: crate::protocol::all_but(request, &["messages", "tools"]), messages, tools };
    serde_json::to_vec(&body).expect("JSON values and chat messages always serialize")
}

/// The answer as the client gets it: the text of `earlier` rounds (those that called only
/// workmem's tools) ahead of its text, and workmem's calls taken out.
pub(crate) fn client_answer(mut reply: Value, earlier: &[Value]) -> Value {
    let before: String = earlier.iter().filter_map(|r| r["choices"][0]["message"]["content"].as_str()).collect();
    let choice = &mut reply["choices"][0];
    if !before.is_empty() {
        let text = choice["message"]["content"].as_str().unwrap_or_default();
        choice["message"]["content"] = json!(format!("{before}{text}"));
    }
    if let Some(calls) = choice["message"]["tool_calls"].as_array_mut() {
        calls.retain(|c| !c["function"]["name"].as_str().is_some_and(own_tool));
        if calls.is_empty() {
            choice["message"].as_object_mut().map(|m| m.remove("tool_calls"));
            if choice["finish_reason"] == "tool_calls" {
                choice["finish_reason"] = json!("stop");
            }
        }
    }
    reply
}

pub(crate) fn completion(reply: &Value) -> Result<Completion, String> {
    Completion::from_chat(reply)
}

pub(crate) fn error_body(code: &str, message: &str) -> Value {
    json!({"error": {"message": message, "type": "workmem_error", "code": code}})
}

/// A Chat Completions event stream on its way to the client: every line goes on as it came but
/// for workmem's tool calls, which are left out (the client's calls renumbered around them),
/// and the answer's end (its finish reason, usage and `[DONE]`), which waits until the proxy
/// knows whether the client gets this answer or the next round's.
#[derive(Default)]
pub(crate) struct Relay {
    pub stream: ChatStream,
    /// Each upstream call index's index for the client, `None` for workmem's own calls.
    indices: HashMap<u64, Option<u64>>,
    sent_calls: u64,
    held: Vec<Value>,
    done: bool,
}

impl Relay {
    /// Starts the next round's answer, which continues the one the client is getting.
    pub fn next_round(&mut self) {
        *self = Relay::default();
    }

    /// One line of the stream (with its newline): what goes on to the client now.
    pub fn line(&mut self, line: &[u8]) -> Result<Option<Bytes>, String> {
        let text = std::str::from_utf8(line).map_err(|_| "a stream line is not UTF-8")?;
        let Some(data) = text.strip_prefix("data:").map(str::trim) else { return Ok(Some(Bytes::copy_from_slice(line))) };
        if data == "[DONE]" {
            self.done = true;
            return Ok(None);
        }
        let mut chunk: Value = serde_json::from_str(data).map_err(|e| format!("a stream event is not JSON: {e}"))?;
        self.stream.push(&chunk)?;
        let choices = chunk["choices"].as_array().map_or(0, Vec::len);
        if choices == 0 || !chunk["choices"][0]["finish_reason"].is_null() {
            self.held.push(chunk);
            return Ok(None);
        }
        let delta = &mut chunk["choices"][0]["delta"];
        let Some(parts) = delta["tool_calls"].as_array_mut() else { return Ok(Some(Bytes::copy_from_slice(line))) };
        let mut kept = Vec::new();
        for mut part in parts.drain(..) {
            let index = part["index"].as_u64().unwrap_or(0);
            let theirs = *self.indices.entry(index).or_insert_with(|| {
                if part["function"]["name"].as_str().is_some_and(own_tool) {
                    None
                } else {
                    self.sent_calls += 1;
                    Some(self.sent_calls - 1)
                }
            });
            if let Some(i) = theirs {
                part["index"] = json!(i);
                kept.push(part);
            }
        }
        if kept.is_empty() {
            delta.as_object_mut().map(|d| d.remove("tool_calls"));
            let other = delta.as_object().is_some_and(|d| d.iter().any(|(k, v)| k != "role" && !v.is_null()));
            if !other {
                return Ok(None);
            }
        } else {
            delta["tool_calls"] = Value::Array(kept);
        }
        Ok(Some(Bytes::from(format!("data: {chunk}\n"))))
    }

    /// Whether the upstream ended its stream with `[DONE]`.
    pub fn complete(&self) -> bool {
        self.done
    }

    /// The held end of the answer, for the client: a finish reason of `tool_calls` with none
    /// of the client's calls in it becomes `stop`.
    pub fn end(&mut self) -> Vec<Bytes> {
        let mut out = Vec::new();
        for mut chunk in self.held.drain(..) {
            if self.sent_calls == 0 && chunk["choices"][0]["finish_reason"] == "tool_calls" {
                chunk["choices"][0]["finish_reason"] = json!("stop");
            }
            if let Some(parts) = chunk["choices"][0]["delta"]["tool_calls"].as_array_mut() {
                let theirs = |p: &Value| self.indices.get(&p["index"].as_u64().unwrap_or(0)).copied().flatten();
                *parts = parts
                    .drain(..)
                    .filter_map(|mut p| {
                        theirs(&p).map(|i| {
                            p["index"] = json!(i);
                            p
                        })
                    })
                    .collect();
            }
            out.push(Bytes::from(format!("data: {chunk}\n\n")));
        }
        if self.done {
            out.push(Bytes::from_static(b"data: [DONE]\n\n"));
        }
        out
    }
}
