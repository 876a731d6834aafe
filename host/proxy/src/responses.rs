//! The OpenAI Responses API (`/v1/responses`) as far as Codex CLI uses it: messages, function
//! calls and their outputs, and reasoning (kept opaque) as input items, function tools,
//! streamed or not. Items the session cannot keep (images, custom tool calls) are refused, and
//! the request then goes upstream as it was.

use crate::sessions::own_tool;
use crate::sse::{Event, Events};
use bytes::Bytes;
use serde_json::{Value, json};
use std::collections::HashMap;
use workmem_llm::{Completion, FunctionCall, Usage};
use workmem_store::{Message, ToolCall};

fn texts(content: &Value) -> Result<String, String> {
    match content {
        Value::Null => Ok(String::new()),
        Value::String(s) => Ok(s.clone()),
        Value::Array(parts) => {
            let mut out = String::new();
            for p in parts {
                match (p["type"].as_str(), p["text"].as_str()) {
                    (Some("input_text" | "output_text" | "text"), Some(t)) => out.push_str(t),
                    (kind, _) => return Err(format!("a content part of type {kind:?}, which the session cannot keep")),
                }
            }
            Ok(out)
        }
        _ => Err("content that is neither text nor parts".into()),
    }
}

/// The client's `input` in the session's message shape; an assistant's text and the function
/// calls after it go into one assistant message, as the other protocols have them, with the
/// reasoning items before them kept as they came, opaque.
pub(crate) fn history(request: &Value) -> Result<Vec<Message>, String> {
    let input = match &request["input"] {
        Value::String(s) => return Ok(vec![Message::new("user", s.clone())]),
        Value::Array(items) => items,
        _ => return Err("the request has no input".into()),
    };
    let mut out: Vec<Message> = Vec::new();
    // Reasoning goes with the assistant message it led to.
    let mut reasoning: Vec<Value> = Vec::new();
    for (i, item) in input.iter().enumerate() {
        let at = |why: String| format!("input[{i}]: {why}");
        match item["type"].as_str().unwrap_or("message") {
            "reasoning" => reasoning.push(item.clone()),
            "message" => {
                let role = item["role"].as_str().ok_or_else(|| at("no role".into()))?;
                let opaque = if role == "assistant" { std::mem::take(&mut reasoning) } else { Vec::new() };
                out.push(Message { opaque, ..Message::new(role, texts(&item["content"]).map_err(at)?) });
            }
            "function_call" => {
                let call = ToolCall {
                    id: item["call_id"].as_str().ok_or_else(|| at("a function call without a call_id".into()))?.to_string(),
                    name: item["name"].as_str().unwrap_or_default().to_string(),
                    arguments: item["arguments"].as_str().unwrap_or_default().to_string(),
                };
                // A call goes with the assistant's text before it: one answer, as it was logged.
                match out.last_mut() {
                    Some(last) if last.role == "assistant" && reasoning.is_empty() => last.tool_calls.push(call),
                    _ => out.push(Message { tool_calls: vec![call], opaque: std::mem::take(&mut reasoning), ..Message::new("assistant", "") }),
                }
            }
            "function_call_output" => {
                let output = match &item["output"] {
                    Value::String(s) => s.clone(),
                    other => texts(other).map_err(at)?,
                };
                out.push(Message { tool_call_id: item["call_id"].as_str().map(str::to_string), ..Message::new("tool", output) });
            }
            kind => return Err(at(format!("an item of type {kind:?}, which the session cannot keep"))),
        }
    }
    if !reasoning.is_empty() {
        out.push(Message { opaque: reasoning, ..Message::new("assistant", "") });
    }
    Ok(out)
}

pub(crate) fn tool_names(request: &Value) -> Vec<String> {
    request["tools"].as_array().into_iter().flatten().filter_map(|t| t["name"].as_str().map(str::to_string)).collect()
}

pub(crate) fn tools(request: &Value, own: &[&workmem_agent::tools::Tool]) -> Value {
    let mut all: Vec<Value> = request["tools"].as_array().cloned().unwrap_or_default();
    all.extend(own.iter().map(|t| json!({"type": "function", "name": t.name, "description": t.description, "parameters": t.parameters()})));
    Value::Array(all)
}

fn message(role: &str, text: &str) -> Value {
    let kind = if role == "assistant" { "output_text" } else { "input_text" };
    json!({"type": "message", "role": role, "content": [{"type": kind, "text": text}]})
}

/// The client's request with the session's view as its input: workmem's instructions, memory
/// and context_meta as developer messages (first, and last), each assistant message's
/// reasoning before it.
pub(crate) fn upstream_body(request: &Value, parts: &crate::parts::Parts, tools: &Value) -> Value {
    let mut input: Vec<Value> = parts.leading.iter().map(|m| message("developer", &m.content)).collect();
    for (m, opaque) in &parts.history {
        match m.role.as_str() {
            "tool" => input.push(json!({"type": "function_call_output", "call_id": m.tool_call_id, "output": m.content})),
            "assistant" => {
                input.extend(opaque.iter().cloned());
                if !m.content.is_empty() {
                    input.push(message("assistant", &m.content));
                }
                for c in &m.tool_calls {
                    input.push(json!({"type": "function_call", "call_id": c.id, "name": c.function.name, "arguments": c.function.arguments}));
                }
            }
            "system" => input.push(message("developer", &m.content)),
            role => input.push(message(role, &m.content)),
        }
    }
    input.extend(parts.tail.map(|m| message("developer", &m.content)));
    let mut body = crate::parts::all_but(request, &["input", "tools"]);
    body["input"] = Value::Array(input);
    body["tools"] = tools.clone();
    body
}

fn usage(u: &Value) -> Option<Usage> {
    let prompt_tokens = u32::try_from(u["input_tokens"].as_u64()?).unwrap_or(u32::MAX);
    let completion_tokens = u32::try_from(u["output_tokens"].as_u64().unwrap_or(0)).unwrap_or(u32::MAX);
    Some(Usage { prompt_tokens, completion_tokens, total_tokens: prompt_tokens.saturating_add(completion_tokens) })
}

/// A response's output items as one answer.
fn from_output(items: &[Value], usage_of: &Value) -> Completion {
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    for item in items {
        match item["type"].as_str() {
            Some("message") => text.push_str(&texts(&item["content"]).unwrap_or_default()),
            Some("function_call") => tool_calls.push(workmem_llm::ToolCall {
                id: item["call_id"].as_str().unwrap_or_default().to_string(),
                kind: "function".into(),
                function: FunctionCall {
                    name: item["name"].as_str().unwrap_or_default().to_string(),
                    arguments: item["arguments"].as_str().unwrap_or_default().to_string(),
                },
            }),
            _ => {}
        }
    }
    Completion { text, tool_calls, usage: usage(usage_of), ..Completion::default() }
}

fn own_call(item: &Value) -> bool {
    item["type"] == "function_call" && item["name"].as_str().is_some_and(own_tool)
}

fn reasoning(items: &[Value]) -> Vec<Value> {
    items.iter().filter(|i| i["type"] == "reasoning").cloned().collect()
}

pub(crate) fn completion(reply: &Value) -> Result<(Completion, Vec<Value>), String> {
    let output = reply["output"].as_array().ok_or("the upstream's response has no output list")?;
    Ok((from_output(output, &reply["usage"]), reasoning(output)))
}

/// The answer as the client gets it: the output items of `earlier` rounds (those that called
/// only workmem's tools) ahead of its own, and workmem's calls taken out.
pub(crate) fn client_answer(mut reply: Value, earlier: &[Value]) -> Value {
    let before: Vec<Value> = earlier.iter().flat_map(|r| r["output"].as_array().cloned().unwrap_or_default()).collect();
    if let Some(output) = reply["output"].as_array_mut() {
        output.splice(0..0, before);
        output.retain(|item| !own_call(item));
    }
    reply
}

pub(crate) fn error_body(code: &str, message: &str) -> Value {
    json!({"error": {"message": message, "type": "workmem_error", "code": code}})
}

/// A Responses event stream on its way to the client: events go on as they came but for those
/// of workmem's function calls (left out, the client's items renumbered around them), a later
/// round's opening events, and `response.completed`, which waits until the proxy knows whether
/// this round is the client's answer, and then lists the items the client got, all rounds'.
/// Every event passed on is numbered again, in order.
#[derive(Default)]
pub(crate) struct Relay {
    /// This round's output items, whole, as `output_item.done` gave them.
    items: Vec<Value>,
    /// Each upstream output index's index for the client (`None`: workmem's call).
    indices: HashMap<u64, Option<u64>>,
    /// The items the client got, over all rounds.
    sent: Vec<Value>,
    /// Rounds begun: only the first one's opening events go to the client.
    round: u32,
    sequence: u64,
    held: Option<Value>,
    events: Events,
}

impl Relay {
    pub fn next_round(&mut self) {
        self.keep_sent();
        self.round += 1;
        self.items.clear();
        self.indices.clear();
        self.held = None;
    }

    fn pass(&mut self, mut data: Value) -> Bytes {
        data["sequence_number"] = json!(self.sequence);
        self.sequence += 1;
        Bytes::from(format!("event: {}\ndata: {data}\n\n", data["type"].as_str().unwrap_or_default()))
    }

    pub fn line(&mut self, line: &[u8]) -> Result<Option<Bytes>, String> {
        let mut data = match self.events.line(line)? {
            None => return Ok(None),
            Some(Event::Other(raw)) => return Ok(Some(raw)),
            Some(Event::Data(data)) => data,
        };
        let kind = data["type"].as_str().unwrap_or_default().to_string();
        match kind.as_str() {
            "response.created" | "response.in_progress" => return Ok((self.round <= 1).then(|| self.pass(data))),
            "response.completed" => {
                self.held = Some(data);
                return Ok(None);
            }
            _ => {}
        }
        let Some(index) = data["output_index"].as_u64() else { return Ok(Some(self.pass(data))) };
        if kind == "response.output_item.added" {
            let theirs = (!own_call(&data["item"])).then(|| self.sent.len() as u64 + self.indices.values().filter(|v| v.is_some()).count() as u64);
            self.indices.insert(index, theirs);
        }
        if kind == "response.output_item.done" {
            self.items.push(data["item"].clone());
        }
        match self.indices.get(&index).copied().flatten() {
            Some(theirs) => {
                data["output_index"] = json!(theirs);
                Ok(Some(self.pass(data)))
            }
            None => Ok(None),
        }
    }

    pub fn complete(&self) -> bool {
        self.held.is_some()
    }

    pub fn completion(&self) -> (Completion, Vec<Value>) {
        let usage = self.held.as_ref().map_or(Value::Null, |d| d["response"]["usage"].clone());
        (from_output(&self.items, &usage), reasoning(&self.items))
    }

    /// Keeps this round's items the client got, before the next round.
    fn keep_sent(&mut self) {
        let items: Vec<Value> = self.items.drain(..).filter(|i| !own_call(i)).collect();
        self.sent.extend(items);
    }

    pub fn end(&mut self) -> Vec<Bytes> {
        self.keep_sent();
        match self.held.take() {
            Some(mut data) => {
                data["response"]["output"] = Value::Array(self.sent.clone());
                vec![self.pass(data)]
            }
            None => Vec::new(),
        }
    }
}
