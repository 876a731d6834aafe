//! Anthropic Messages (`/v1/messages`) as the proxy reads and writes it. The client's `system`
//! goes upstream as it came, workmem's instructions and memory after it; the history is
//! rendered from the session's view, with tool results first in their user message as the API
//! asks, and `context_meta` last in the last user message, so that everything before it is a
//! prefix the next request repeats (cache breakpoints go on the system and on the history's end).

use crate::history::{History, Reader, Recent};
use crate::own::own_tool;
use crate::parts::{Layout, Unread, fields_but, json, string, texts};
use crate::protocol::{Protocol, Relay, Renumbered, Said, Unreadable, Upstream, usage};
use crate::sse::{Event, Events};
use crate::written::{Units, Written};
use bytes::Bytes;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::Arc;
use workmem_agent::context::Built;
use workmem_agent::tools::Tool;
use workmem_llm::{Completion, FunctionCall, Usage};
use workmem_store::{Message, ToolCall};

/// Anthropic Messages.
pub(crate) struct Messages;

impl Protocol for Messages {
    fn name(&self) -> &'static str {
        "messages"
    }

    fn parse(&self, body: &[u8], recent: &Recent, caller: u64) -> Result<(Value, Arc<History>), Unread> {
        let (rest, history) = recent.read::<MessagesHistory>(body, caller)?;
        Ok((Value::Object(rest), history))
    }

    /// Claude Code's conversation: its session (the `x-claude-code-session-id` header, else
    /// `metadata.user_id`, JSON with a `session_id` or ending in `_session_<id>` in its older
    /// form) and, for a subagent, which one (`x-claude-code-agent-id`, sent beside its
    /// parent's session ID): `<session>/<agent>`, a conversation of its own.
    fn client_session(&self, request: &Value, headers: &axum::http::HeaderMap) -> Option<String> {
        let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).filter(|s| !s.is_empty());
        let session = header("x-claude-code-session-id").map(str::to_string).or_else(|| {
            let user = request["metadata"]["user_id"].as_str()?;
            if let Ok(Value::Object(o)) = serde_json::from_str::<Value>(user) {
                return o.get("session_id").and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string);
            }
            user.rsplit_once("_session_").map(|(_, id)| id.to_string()).filter(|s| !s.is_empty())
        })?;
        Some(match header("x-claude-code-agent-id") {
            Some(agent) => format!("{session}/{agent}"),
            None => session,
        })
    }

    fn offer(&self, tool: &Tool) -> Value {
        json!({"name": tool.name, "description": tool.description, "input_schema": tool.parameters()})
    }

    /// Written on from `written`, the session's last body upstream (see [`upstream_body`]).
    fn upstream_body<'w>(&self, request: &Value, built: &mut Built, tools: &Value, written: &'w mut Written) -> Upstream<'w> {
        let body = upstream_body(request, &Layout::of(built), tools, written);
        let retired = written.replace(body, built.carry());
        (written.bytes(), retired)
    }

    fn relay(&self) -> Box<dyn Relay> {
        Box::<MessagesRelay>::default()
    }

    fn said(&self, reply: &Value) -> Result<Said, Unreadable> {
        let content = reply["content"].as_array().ok_or_else(|| Unreadable::Shape("the upstream's message has no content list".into()))?;
        let mut text = String::new();
        let mut tool_calls = Vec::new();
        let mut opaque = Vec::new();
        for b in content {
            match b["type"].as_str() {
                Some("text") => text.push_str(b["text"].as_str().unwrap_or_default()),
                Some("tool_use") => tool_calls.push(call(b["id"].as_str().unwrap_or_default(), b["name"].as_str().unwrap_or_default(), &b["input"])),
                _ if thinking(b) => opaque.push(b.clone()),
                _ => {}
            }
        }
        Ok((Completion { text, tool_calls, usage: usage_of(&reply["usage"]), ..Completion::default() }, opaque))
    }

    /// The text of `earlier` rounds ahead of the answer's content, and workmem's tool uses
    /// taken out.
    fn client_answer(&self, mut reply: Value, earlier: &[Value]) -> Value {
        let before: String =
            earlier.iter().flat_map(|r| r["content"].as_array().cloned().unwrap_or_default()).filter_map(|b| b["text"].as_str().map(str::to_string)).collect();
        if let Some(content) = reply["content"].as_array_mut() {
            content.retain(|b| !(b["type"] == "tool_use" && b["name"].as_str().is_some_and(own_tool)));
            if !before.is_empty() {
                content.insert(0, json!({"type": "text", "text": before}));
            }
            if reply["stop_reason"] == "tool_use" && !reply["content"].as_array().is_some_and(|c| c.iter().any(|b| b["type"] == "tool_use")) {
                reply["stop_reason"] = json!("end_turn");
            }
        }
        reply
    }

    /// Anthropic's error object, of the type its API gives the status.
    fn error_body(&self, status: u16, code: &str, message: &str) -> Value {
        let kind = match status {
            408 | 504 => "timeout_error",
            413 => "request_too_large",
            429 => "rate_limit_error",
            503 | 529 => "overloaded_error",
            400..500 => "invalid_request_error",
            _ => "api_error",
        };
        json!({"type": "error", "error": {"type": kind, "message": message, "code": code}})
    }
}

/// The most cache breakpoints the API takes in one request.
const MAX_BREAKPOINTS: usize = 4;

/// The input of a tool use as the session keeps its arguments: JSON text, in one spelling
/// whether it came whole or streamed in pieces.
fn arguments(input: &Value) -> String {
    input.to_string()
}

/// One message as the client wrote it, its content read block by block (see [`history`]).
#[derive(Deserialize)]
struct Wire<'a> {
    #[serde(default)]
    role: Value,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
}

/// A block's fields the session reads; a thinking block is kept whole, as it came.
#[derive(Deserialize)]
struct WireBlock {
    #[serde(rename = "type", default)]
    kind: Value,
    #[serde(default)]
    text: Value,
    #[serde(default)]
    id: Value,
    #[serde(default)]
    name: Value,
    #[serde(default)]
    input: Value,
    #[serde(default)]
    tool_use_id: Value,
    #[serde(default)]
    content: Value,
}

/// How Anthropic Messages reads its history: in the session's message shape (the client's
/// `system` stays out: it goes upstream as it came), each message on its own, its content
/// block by block; an assistant's thinking blocks are kept as they came, opaque. Images and
/// documents are refused, and the request then goes upstream as it was. A `Value` of the whole
/// history first, and a copy of its blocks, took more than half of what the proxy added to a
/// 1,000-message request.
#[derive(Default)]
struct MessagesHistory;

impl Reader for MessagesHistory {
    const FIELD: &'static str = "messages";

    fn item(&mut self, i: usize, raw: &str, out: &mut Vec<Message>) -> Result<(), Unread> {
        let at = |why: String| Unread::Invalid(format!("messages[{i}]: {why}"));
        let m: Wire = serde_json::from_str(raw).map_err(|e| at(format!("not a message: {e}")))?;
        let role = m.role.as_str().ok_or_else(|| at("no role".into()))?;
        // What the API itself refuses. Claude Code sends its reminders as system messages
        // amid the history, which the API takes beside the `system` field.
        if !matches!(role, "user" | "assistant" | "system") {
            return Err(at(format!("the role {role:?} is not one of the Messages API's (user, assistant, system)")));
        }
        let content = m.content.map_or("null", RawValue::get);
        // Content is a string, or a list of blocks.
        let (mut text, blocks): (Vec<String>, Vec<&RawValue>) = match content.as_bytes().first() {
            Some(b'"') => (vec![serde_json::from_str(content).map_err(|e| at(e.to_string()))?], Vec::new()),
            Some(b'[') => (Vec::new(), serde_json::from_str(content).map_err(|e| at(e.to_string()))?),
            _ => return Err(at("content that is neither text nor blocks".into())),
        };
        let mut calls = Vec::new();
        let mut opaque = Vec::new();
        for raw in blocks {
            let b: WireBlock = serde_json::from_str(raw.get()).map_err(|e| at(format!("a block that is not an object: {e}")))?;
            match b.kind.as_str() {
                Some("text") => text.push(b.text.as_str().unwrap_or_default().to_string()),
                Some("thinking" | "redacted_thinking") if role == "assistant" => opaque.push(serde_json::from_str(raw.get()).map_err(|e| at(e.to_string()))?),
                Some("tool_use") if role == "assistant" => calls.push(ToolCall {
                    id: b.id.as_str().ok_or_else(|| at("a tool use without an id".into()))?.to_string(),
                    name: b.name.as_str().ok_or_else(|| at("a tool use without a name".into()))?.to_string(),
                    arguments: arguments(&b.input),
                }),
                Some("tool_result") if role == "user" => out.push(Message {
                    tool_call_id: Some(b.tool_use_id.as_str().ok_or_else(|| at("a tool result without a tool_use_id".into()))?.to_string()),
                    ..Message::new("tool", texts(&b.content, &["text"], "\n\n", "block").map_err(|e| e.at(format_args!("messages[{i}]")))?)
                }),
                kind => return Err(Unread::Unkept(format!("messages[{i}]: a {role} block of type {kind:?}"))),
            }
        }
        let joined = if role == "assistant" { text.concat() } else { text.join("\n\n") };
        if role == "assistant" || !joined.is_empty() {
            out.push(Message { tool_calls: calls, opaque, ..Message::new(role, joined) });
        }
        Ok(())
    }
}

fn breakpoints(v: &Value) -> usize {
    match v {
        Value::Object(o) => usize::from(o.contains_key("cache_control")) + o.values().map(breakpoints).sum::<usize>(),
        Value::Array(a) => a.iter().map(breakpoints).sum(),
        _ => 0,
    }
}

fn text_block(text: &str) -> Value {
    json!({"type": "text", "text": nonempty(text)})
}

/// The API refuses an empty text block.
fn nonempty(text: &str) -> &str {
    if text.is_empty() { "[empty]" } else { text }
}

/// A block of the rendered history, written as the API has it ([`Block::write`]).
enum Block<'a> {
    Text(&'a str),
    Result {
        id: Option<&'a str>,
        text: &'a str,
    },
    Use {
        id: &'a str,
        name: &'a str,
        input: Value,
    },
    /// Thinking, as the client sent it.
    Opaque(&'a Value),
}

/// One message of the rendered history.
struct Rendered<'a> {
    role: &'static str,
    blocks: Vec<Block<'a>>,
}

impl Block<'_> {
    /// The block as JSON, with a cache breakpoint where `cache`.
    fn write(&self, out: &mut Vec<u8>, cache: bool) {
        match self {
            Block::Text(text) => {
                out.extend_from_slice(br#"{"type":"text","text":"#);
                string(out, nonempty(text));
            }
            Block::Result { id, text } => {
                out.extend_from_slice(br#"{"type":"tool_result","tool_use_id":"#);
                json(out, id);
                out.extend_from_slice(br#","content":"#);
                string(out, nonempty(text));
            }
            Block::Use { id, name, input } => {
                out.extend_from_slice(br#"{"type":"tool_use","id":"#);
                string(out, id);
                out.extend_from_slice(br#","name":"#);
                string(out, name);
                out.extend_from_slice(br#","input":"#);
                json(out, input);
            }
            Block::Opaque(block) => {
                match block.as_object().filter(|_| cache) {
                    Some(fields) => {
                        let mut fields = fields.clone();
                        fields.insert("cache_control".into(), json!({"type": "ephemeral"}));
                        json(out, &fields);
                    }
                    None => json(out, block),
                }
                return;
            }
        }
        if cache {
            out.extend_from_slice(br#","cache_control":{"type":"ephemeral"}"#);
        }
        out.push(b'}');
    }
}

/// One message of the view as Anthropic blocks (its thinking first), and the role it goes under.
fn blocks<'a>(m: &'a workmem_llm::Message, opaque: &'a [Value]) -> (&'static str, Vec<Block<'a>>) {
    match m.role.as_str() {
        "tool" => ("user", vec![Block::Result { id: m.tool_call_id.as_deref(), text: &m.content }]),
        "assistant" => {
            let mut out: Vec<Block> = opaque.iter().map(Block::Opaque).collect();
            if !m.content.is_empty() || (m.tool_calls.is_empty() && opaque.is_empty()) {
                out.push(Block::Text(&m.content));
            }
            for c in &m.tool_calls {
                let input: Value = serde_json::from_str(&c.function.arguments).unwrap_or_else(|_| json!({}));
                out.push(Block::Use { id: &c.id, name: &c.function.name, input });
            }
            ("assistant", out)
        }
        "system" => ("system", vec![Block::Text(&m.content)]),
        _ => ("user", vec![Block::Text(&m.content)]),
    }
}

/// The client's request with the session's view in place of its messages: workmem's
/// instructions and memory after the client's `system`, the history, and `context_meta` in the
/// last user message. Written straight from the view (a `Value` of a 1,000-message history,
/// written out and dropped, took about half of what the proxy added to such a request), and on
/// from `last`, the session's last body: only the messages past those it shares are rendered.
fn upstream_body(request: &Value, parts: &Layout, tools: &Value, last: &mut Written) -> Written {
    let (head, history, tail) = (parts.leading, &parts.history, parts.tail);
    let mut system: Vec<Value> = match &request["system"] {
        Value::String(s) if !s.is_empty() => vec![json!({"type": "text", "text": s})],
        Value::Array(b) => b.clone(),
        _ => Vec::new(),
    };
    system.extend(head.iter().map(|m| text_block(&m.content)));
    let mut room = MAX_BREAKPOINTS.saturating_sub(system.iter().map(breakpoints).sum::<usize>() + breakpoints(&request["tools"]));
    if room > 0 && !head.is_empty() {
        system.last_mut().expect("workmem's system blocks").as_object_mut().expect("a block").insert("cache_control".into(), json!({"type": "ephemeral"}));
        room -= 1;
    }
    let mut prefix = Vec::with_capacity(4096);
    prefix.push(b'{');
    fields_but(&mut prefix, request, &["messages", "system", "tools"]);
    prefix.extend_from_slice(br#""system":"#);
    json(&mut prefix, &system);
    prefix.extend_from_slice(br#","messages":["#);
    let (mut units, from) = Units::on(prefix, parts, last);

    // Each message rendered with the view message it begins at.
    let mut rendered: Vec<(usize, Rendered)> = Vec::new();
    for (i, (m, opaque)) in history.iter().enumerate().skip(from) {
        let (role, mut content) = blocks(m, opaque);
        match rendered.last_mut() {
            Some((_, prev)) if prev.role == role && role != "system" => prev.blocks.append(&mut content),
            _ => rendered.push((i, Rendered { role, blocks: content })),
        }
    }
    // Tool results come first in a user message.
    for (_, m) in rendered.iter_mut().filter(|(_, m)| m.role == "user") {
        m.blocks.sort_by_key(|b| !matches!(b, Block::Result { .. }));
    }
    // The breakpoint on the history's end: its last block, before `context_meta`.
    let cached = (room > 0).then(|| rendered.len().checked_sub(1).map(|m| (m, rendered[m].1.blocks.len() - 1))).flatten();
    let mut after = None;
    if let Some(meta) = tail {
        match rendered.last_mut() {
            Some((_, last)) if last.role == "user" => last.blocks.push(Block::Text(&meta.content)),
            _ => after = Some(Rendered { role: "user", blocks: vec![Block::Text(&meta.content)] }),
        }
    }
    for (i, (first, m)) in rendered.iter().enumerate() {
        m.write(&mut units.out, cached.filter(|(at, _)| *at == i).map(|(_, block)| block));
        units.end(*first);
    }
    if let Some(m) = after {
        m.write(&mut units.out, None);
    }
    units.finish(parts, tools)
}

impl Rendered<'_> {
    /// The message as JSON, and a comma after it; a cache breakpoint on block `cached`.
    fn write(&self, out: &mut Vec<u8>, cached: Option<usize>) {
        out.extend_from_slice(br#"{"role":"#);
        string(out, self.role);
        out.extend_from_slice(br#","content":["#);
        for (j, b) in self.blocks.iter().enumerate() {
            if j > 0 {
                out.push(b',');
            }
            b.write(out, cached == Some(j));
        }
        out.extend_from_slice(b"]},");
    }
}

/// Anthropic's usage: what was read from and written to its cache counts as input.
fn usage_of(u: &Value) -> Option<Usage> {
    let input = u["input_tokens"].as_u64()? + u["cache_read_input_tokens"].as_u64().unwrap_or(0) + u["cache_creation_input_tokens"].as_u64().unwrap_or(0);
    Some(usage(input, u["output_tokens"].as_u64().unwrap_or(0)))
}

fn call(id: &str, name: &str, input: &Value) -> workmem_llm::ToolCall {
    workmem_llm::ToolCall { id: id.to_string(), kind: "function".into(), function: FunctionCall { name: name.to_string(), arguments: arguments(input) } }
}

fn thinking(block: &Value) -> bool {
    matches!(block["type"].as_str(), Some("thinking" | "redacted_thinking"))
}

/// An event as the Messages API names it: by its data's type.
fn event(data: &Value) -> Bytes {
    Bytes::from(format!("event: {}\ndata: {data}\n\n", data["type"].as_str().unwrap_or_default()))
}

/// A Messages event stream on its way to the client: events go on as they came but for the
/// blocks of workmem's tool uses (left out, the client's blocks renumbered around them), a later
/// round's `message_start` (the client is getting one message), and the message's end
/// (`message_delta`, `message_stop`), which waits until the proxy knows whether this round's
/// answer is the client's.
#[derive(Default)]
struct MessagesRelay {
    text: String,
    calls: Vec<(String, String, String)>,
    usage: Map<String, Value>,
    /// The client's numbers for the upstream's block indices.
    blocks: Renumbered,
    /// The call a tool use block builds, by upstream block index.
    call_at: HashMap<u64, usize>,
    /// The round's thinking blocks as they build up, by upstream block index.
    thinking: Vec<(u64, Value)>,
    /// The client's tool uses, over all rounds.
    sent_calls: u64,
    started: bool,
    held: Vec<Value>,
    done: bool,
    events: Events,
}

impl Relay for MessagesRelay {
    fn next_round(&mut self) {
        self.text.clear();
        self.calls.clear();
        self.usage.clear();
        self.blocks.next_round();
        self.call_at.clear();
        self.thinking.clear();
        self.held.clear();
        self.done = false;
    }

    /// Events are passed on whole, once their blank line arrives.
    fn line(&mut self, line: &[u8]) -> Result<Option<Bytes>, Unreadable> {
        let mut data = match self.events.line(line)? {
            None => return Ok(None),
            Some(Event::Other(raw)) => return Ok(Some(raw)),
            Some(Event::Data(data)) => data,
        };
        let index = data["index"].as_u64().unwrap_or(0);
        match data["type"].as_str() {
            Some("message_start") => {
                if let Some(u) = data["message"]["usage"].as_object() {
                    self.usage.extend(u.clone());
                }
                if std::mem::replace(&mut self.started, true) {
                    return Ok(None);
                }
            }
            Some("content_block_start") => {
                let block = &data["content_block"];
                let called = (block["type"] == "tool_use").then(|| block["name"].as_str().unwrap_or_default());
                if called.is_some() {
                    self.calls.push((block["id"].as_str().unwrap_or_default().into(), called.unwrap_or_default().into(), String::new()));
                    self.call_at.insert(index, self.calls.len() - 1);
                }
                if let Some(t) = block["text"].as_str() {
                    self.text.push_str(t);
                }
                if thinking(block) {
                    self.thinking.push((index, block.clone()));
                }
                if self.blocks.first(index, called).is_some() && called.is_some() {
                    self.sent_calls += 1;
                }
            }
            Some("content_block_delta") => {
                let delta = &data["delta"];
                if let Some(t) = delta["text"].as_str() {
                    self.text.push_str(t);
                }
                if let (Some(piece), Some(call)) = (delta["partial_json"].as_str(), self.call_at.get(&index)) {
                    self.calls[*call].2.push_str(piece);
                }
                // A thinking block's text and signature arrive as deltas of their own.
                if let Some((_, block)) = self.thinking.iter_mut().find(|(i, _)| *i == index) {
                    for field in ["thinking", "signature"] {
                        if let Some(piece) = delta[field].as_str() {
                            let so_far = block[field].as_str().unwrap_or_default().to_string();
                            block[field] = json!(so_far + piece);
                        }
                    }
                }
            }
            Some("content_block_stop") => {}
            Some("message_delta") => {
                if let Some(u) = data["usage"].as_object() {
                    self.usage.extend(u.clone());
                }
                self.held.push(data);
                return Ok(None);
            }
            Some("message_stop") => {
                self.done = true;
                return Ok(None);
            }
            _ => return Ok(Some(event(&data))),
        }
        if data["type"].as_str().is_some_and(|t| t.starts_with("content_block")) {
            match self.blocks.get(index) {
                Some(theirs) => data["index"] = json!(theirs),
                None => return Ok(None),
            }
        }
        Ok(Some(event(&data)))
    }

    fn complete(&self) -> bool {
        self.done
    }

    /// What the round said, once it ended, and its thinking blocks.
    fn said(&self) -> Result<Said, Unreadable> {
        let tool_calls = self
            .calls
            .iter()
            .map(|(id, name, json)| {
                let input: Value = if json.trim().is_empty() { json!({}) } else { serde_json::from_str(json).unwrap_or(Value::String(json.clone())) };
                call(id, name, &input)
            })
            .collect();
        let opaque = self.thinking.iter().map(|(_, b)| b.clone()).collect();
        Ok((Completion { text: self.text.clone(), tool_calls, usage: usage_of(&Value::Object(self.usage.clone())), ..Completion::default() }, opaque))
    }

    /// The held end of the message: a stop reason of `tool_use` with none of the client's tool
    /// uses in it becomes `end_turn`.
    fn end(&mut self) -> Vec<Bytes> {
        let mut out = Vec::new();
        for mut data in self.held.drain(..) {
            if self.sent_calls == 0 && data["delta"]["stop_reason"] == "tool_use" {
                data["delta"]["stop_reason"] = json!("end_turn");
            }
            out.push(event(&data));
        }
        if self.done {
            out.push(event(&json!({"type": "message_stop"})));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(messages: Value) -> Result<Vec<Message>, String> {
        crate::history::read_both::<MessagesHistory>(messages)
    }

    /// A conversation as Claude Code sends it, each request read on from the last: the same
    /// history as a whole read gives, though each request moves its cache mark to its last
    /// message (the message that held it before differs, and is read again).
    #[test]
    fn a_conversation_is_read_on_from_request_to_request() {
        let mut history: Vec<Value> = Vec::new();
        let mut bodies = Vec::new();
        for i in 0..6 {
            let user = if i % 2 == 0 {
                json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("t{i}"), "content": "out"}, {"type": "text", "text": format!("go {i}")}]})
            } else {
                json!({"role": "user", "content": format!("next {i}")})
            };
            history.push(user);
            let mut sent = history.clone();
            for m in &mut sent {
                if let Some(blocks) = m["content"].as_array_mut() {
                    blocks.iter_mut().for_each(|b| _ = b.as_object_mut().unwrap().remove("cache_control"));
                }
            }
            if let Some(blocks) = sent.last_mut().unwrap()["content"].as_array_mut() {
                blocks.last_mut().unwrap()["cache_control"] = json!({"type": "ephemeral"});
            }
            bodies.push(json!({"model": "claude", "messages": sent, "system": "s", "stream": true}).to_string().into_bytes());
            history.push(json!({"role": "assistant", "content": [{"type": "thinking", "thinking": "t", "signature": "x"}, {"type": "text", "text": "ok"},
                                                                 {"type": "tool_use", "id": format!("t{}", i + 1), "name": "bash", "input": {"cmd": "ls"}}]}));
        }
        let read = crate::history::read_on::<MessagesHistory>(&bodies);
        assert_eq!(read.last().unwrap().messages.len(), 6 + 5 + 3);
    }

    /// Each message read on its own gives what the protocol means: text joined, tool uses as
    /// calls with their input as JSON text, thinking kept whole and opaque, tool results as
    /// tool messages before the text that followed them.
    #[test]
    fn a_history_is_read_message_by_message() {
        let thinking = json!({"type": "thinking", "thinking": "Look at a.", "signature": "sig"});
        let got = read(json!([
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [thinking, {"type": "text", "text": "Reading "}, {"type": "text", "text": "a."},
                                               {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "a"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "x"}, {"type": "text", "text": "y"}]},
                                          {"type": "text", "text": "and then?"}]},
            {"role": "assistant", "content": []},
        ]))
        .unwrap();
        let shape: Vec<(&str, &str, Option<&str>)> = got.iter().map(|m| (m.role.as_str(), m.content.as_str(), m.tool_call_id.as_deref())).collect();
        assert_eq!(
            shape,
            [("user", "hi", None), ("assistant", "Reading a.", None), ("tool", "x\n\ny", Some("t1")), ("user", "and then?", None), ("assistant", "", None)]
        );
        assert_eq!(got[1].tool_calls, [ToolCall { id: "t1".into(), name: "read_file".into(), arguments: r#"{"path":"a"}"#.into() }]);
        assert_eq!(got[1].opaque, [thinking]);
    }

    #[test]
    fn what_the_session_cannot_keep_is_refused_naming_the_message() {
        let image = json!([{"role": "user", "content": "hi"}, {"role": "user", "content": [{"type": "image", "source": {}}]}]);
        assert_eq!(read(image).unwrap_err(), r#"messages[1]: a user block of type Some("image"), which the session cannot keep"#);
        assert_eq!(read(json!([{"content": "hi"}])).unwrap_err(), "messages[0]: no role");
        assert_eq!(read(json!([{"role": "user", "content": 7}])).unwrap_err(), "messages[0]: content that is neither text nor blocks");
        assert_eq!(read(json!([{"role": "user"}])).unwrap_err(), "messages[0]: content that is neither text nor blocks");
        let result_elsewhere = json!([{"role": "assistant", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}]}]);
        assert_eq!(read(result_elsewhere).unwrap_err(), r#"messages[0]: a assistant block of type Some("tool_result"), which the session cannot keep"#);
    }
    fn call(id: &str, arguments: &str) -> workmem_llm::ToolCall {
        workmem_llm::ToolCall { id: id.into(), kind: "function".into(), function: FunctionCall { name: "read_file".into(), arguments: arguments.into() } }
    }

    /// The body upstream, written straight from the view, is the one a `Value` of it wrote
    /// before (checked on 80 combinations of these parts when the writer replaced it): the
    /// client's fields, its system and workmem's with a breakpoint, thinking kept first, tool
    /// results first in their user message, `[empty]` for empty text, the history's last block
    /// marked for the cache (a thinking block too), and `context_meta` after it.
    #[test]
    fn the_body_upstream_is_written_from_the_view() {
        use workmem_llm::Message as M;
        let thinking = [json!({"type": "thinking", "thinking": "hm", "signature": "s"})];
        let mut reading = M::new("assistant", "Reading");
        reading.tool_calls = vec![call("t1", r#"{"path": "a"}"#), call("t2", "not json")];
        let mut read = M::new("tool", "file a \"quoted\" \n line");
        read.tool_call_id = Some("t1".into());
        let mut empty = M::new("tool", "");
        empty.tool_call_id = Some("t2".into());
        let (orphan, thought, notice, hi, nothing) =
            (M::new("tool", "orphan"), M::new("assistant", ""), M::new("system", "a notice"), M::new("user", "hi ü"), M::new("user", ""));
        let (guide, meta) = ([M::new("system", "guide")], M::new("system", "<context_meta>{}</context_meta>"));
        let none: Vec<Value> = Vec::new();
        let request = json!({"model": "m", "max_tokens": 5, "messages": [1], "system": "Be brief.", "stream": true, "tools": [{"name": "x"}], "metadata": {"user_id": "u"}});
        let long = vec![
            (&hi, &none[..]),
            (&reading, &thinking[..]),
            (&read, &none[..]),
            (&empty, &none[..]),
            (&nothing, &none[..]),
            (&notice, &none[..]),
            (&hi, &none[..]),
            (&thought, &thinking[..]),
            (&orphan, &none[..]),
            (&hi, &none[..]),
        ];
        let parts = crate::parts::Layout::whole(&guide, long, Some(&meta));
        assert_eq!(
            String::from_utf8(upstream_body(&request, &parts, &json!([]), &mut Written::default()).bytes().to_vec()).unwrap(),
            r#"{"model":"m","max_tokens":5,"stream":true,"metadata":{"user_id":"u"},"system":[{"type":"text","text":"Be brief."},{"type":"text","text":"guide","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":[{"type":"text","text":"hi ü"}]},{"role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":"s"},{"type":"text","text":"Reading"},{"type":"tool_use","id":"t1","name":"read_file","input":{"path":"a"}},{"type":"tool_use","id":"t2","name":"read_file","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"file a \"quoted\" \n line"},{"type":"tool_result","tool_use_id":"t2","content":"[empty]"},{"type":"text","text":"[empty]"}]},{"role":"system","content":[{"type":"text","text":"a notice"}]},{"role":"user","content":[{"type":"text","text":"hi ü"}]},{"role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":"s"}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":null,"content":"orphan"},{"type":"text","text":"hi ü","cache_control":{"type":"ephemeral"}},{"type":"text","text":"<context_meta>{}</context_meta>"}]}],"tools":[]}"#
        );
        let short = vec![(&hi, &none[..]), (&reading, &thinking[..]), (&read, &none[..]), (&empty, &none[..]), (&thought, &thinking[..])];
        let parts = crate::parts::Layout::whole(&guide, short, None);
        assert_eq!(
            String::from_utf8(upstream_body(&request, &parts, &json!([]), &mut Written::default()).bytes().to_vec()).unwrap(),
            r#"{"model":"m","max_tokens":5,"stream":true,"metadata":{"user_id":"u"},"system":[{"type":"text","text":"Be brief."},{"type":"text","text":"guide","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":[{"type":"text","text":"hi ü"}]},{"role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":"s"},{"type":"text","text":"Reading"},{"type":"tool_use","id":"t1","name":"read_file","input":{"path":"a"}},{"type":"tool_use","id":"t2","name":"read_file","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"file a \"quoted\" \n line"},{"type":"tool_result","tool_use_id":"t2","content":"[empty]"}]},{"role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":"s","cache_control":{"type":"ephemeral"}}]}],"tools":[]}"#
        );
    }

    #[test]
    fn a_body_written_on_from_the_last_is_the_whole_body() {
        crate::written::a_body_written_on_is_the_whole_body(upstream_body);
    }

    /// Claude Code's conversation is its session and, for a subagent, its agent: a subagent,
    /// which sends its parent's session ID, is a conversation of its own, not a branch of its
    /// parent's; without the headers, the session ID in the metadata (both of its forms).
    #[test]
    fn a_subagent_is_a_conversation_of_its_own() {
        let mut headers = axum::http::HeaderMap::new();
        let metadata = json!({"metadata": {"user_id": "{\"device_id\":\"d\",\"session_id\":\"s-1\"}"}});
        assert_eq!(Messages.client_session(&metadata, &headers).as_deref(), Some("s-1"));
        assert_eq!(Messages.client_session(&json!({"metadata": {"user_id": "user_x_session_s-2"}}), &headers).as_deref(), Some("s-2"));
        headers.insert("x-claude-code-session-id", "s-3".parse().unwrap());
        assert_eq!(Messages.client_session(&metadata, &headers).as_deref(), Some("s-3"));
        headers.insert("x-claude-code-agent-id", "agent-7".parse().unwrap());
        assert_eq!(Messages.client_session(&metadata, &headers).as_deref(), Some("s-3/agent-7"));
        assert_eq!(Messages.client_session(&json!({}), &axum::http::HeaderMap::new()), None);
    }
}
