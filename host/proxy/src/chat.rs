//! OpenAI Chat Completions (`/v1/chat/completions`) as the proxy reads and writes it.

use crate::history::{History, Recent};
use crate::sessions::own_tool;
use bytes::Bytes;
use serde::Deserialize;
use serde::de::{self, Deserializer, Error as _, SeqAccess, Visitor};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use workmem_llm::{ChatStream, Completion};
use workmem_store::{Message, ToolCall};

/// A request read with its history in the session's shape, each message converted on its own
/// (a `Value` of a 1,000-message history first took longer than all the rest of the proxy's
/// work) unless a recent request of the client's already held it ([`Recent`]): the rest of the
/// request as JSON, without `messages`. Content the session cannot carry (an image, audio) is
/// refused, and the request then goes upstream as it was. `caller` says who sent it
/// ([`crate::history::caller`]).
pub(crate) fn parse(body: &[u8], recent: &Recent, caller: u64) -> Result<(Value, Arc<History>), String> {
    let (rest, history) = recent.chat(body, caller, |at, raw| {
        let wire = serde_json::from_str::<Wire>(raw).map_err(|e| {
            // serde's message ends with where it stopped: the kept-content rule reads the end.
            let e = e.to_string();
            match e.rsplit_once(" at line ") {
                Some((why, _)) if crate::parts::is_unkept(why) => format!("messages[{at}]: {why}"),
                _ => format!("the request is not a chat request: messages[{at}]: {e}"),
            }
        })?;
        if !ROLES.contains(&wire.role.as_str()) {
            return Err(format!("messages[{at}]: the role {:?} is not one of Chat Completions' ({})", wire.role, ROLES.join(", ")));
        }
        Ok(Message::from(wire))
    })?;
    Ok((Value::Object(rest), history))
}

/// The roles a Chat Completions message may have.
const ROLES: [&str; 6] = ["system", "developer", "user", "assistant", "tool", "function"];

/// One message as Chat Completions writes it; what the session does not keep is skipped.
#[derive(Deserialize)]
struct Wire {
    role: String,
    #[serde(default)]
    content: Content,
    #[serde(default)]
    tool_calls: Option<Vec<WireCall>>,
    #[serde(default)]
    tool_call_id: Option<String>,
}

#[derive(Deserialize)]
struct WireCall {
    id: String,
    function: WireFunction,
}

#[derive(Deserialize)]
struct WireFunction {
    name: String,
    #[serde(default)]
    arguments: Option<String>,
}

impl From<Wire> for Message {
    fn from(m: Wire) -> Self {
        let tool_calls = m
            .tool_calls
            .into_iter()
            .flatten()
            .map(|c| ToolCall { id: c.id, name: c.function.name, arguments: c.function.arguments.unwrap_or_default() })
            .collect();
        Message { tool_calls, tool_call_id: m.tool_call_id, ..Message::new(&m.role, m.content.0) }
    }
}

/// A message's content: null, a string, or text parts, joined.
#[derive(Default)]
struct Content(String);

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Text;
        impl<'de> Visitor<'de> for Text {
            type Value = Content;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("content that is text or text parts")
            }
            fn visit_unit<E: de::Error>(self) -> Result<Content, E> {
                Ok(Content::default())
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Content, E> {
                Ok(Content(s.to_string()))
            }
            fn visit_string<E: de::Error>(self, s: String) -> Result<Content, E> {
                Ok(Content(s))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Content, A::Error> {
                let mut text = String::new();
                while let Some(part) = seq.next_element::<Part>()? {
                    match (part.kind.as_deref(), part.text) {
                        (Some("text"), Some(t)) => text.push_str(&t),
                        (kind, _) => return Err(A::Error::custom(crate::parts::unkept(format!("a content part of type {kind:?}")))),
                    }
                }
                Ok(Content(text))
            }
        }
        d.deserialize_any(Text)
    }
}

#[derive(Deserialize)]
struct Part {
    #[serde(rename = "type")]
    kind: Option<String>,
    text: Option<String>,
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

pub(crate) fn error_body(status: u16, code: &str, message: &str) -> Value {
    let kind = if (400..500).contains(&status) { "invalid_request_error" } else { "workmem_error" };
    json!({"error": {"message": message, "type": kind, "code": code}})
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The history comes out in the session's shape as it is parsed, the rest of the request
    /// as JSON without it; what the session cannot keep is refused, naming the message.
    #[test]
    fn a_request_is_read_with_its_history_converted() {
        let body = json!({
            "model": "gpt-4o",
            "stream": true,
            "messages": [
                {"role": "system", "content": [{"type": "text", "text": "Be "}, {"type": "text", "text": "brief."}]},
                {"role": "user", "content": "go", "name": "someone"},
                {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{\"cmd\":\"ls\"}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "a\nb"},
            ],
            "tools": [{"type": "function", "function": {"name": "bash"}}],
        });
        let parse = |body: &[u8]| parse(body, &Recent::default(), 0).map(|(rest, h)| (rest, h.messages.clone()));
        let (rest, history) = parse(body.to_string().as_bytes()).unwrap();
        assert_eq!(rest, json!({"model": "gpt-4o", "stream": true, "tools": [{"type": "function", "function": {"name": "bash"}}]}));
        let call = ToolCall { id: "c1".into(), name: "bash".into(), arguments: "{\"cmd\":\"ls\"}".into() };
        assert_eq!(
            history,
            vec![
                Message::new("system", "Be brief."),
                Message::new("user", "go"),
                Message { tool_calls: vec![call], ..Message::new("assistant", "") },
                Message { tool_call_id: Some("c1".into()), ..Message::new("tool", "a\nb") },
            ]
        );
        let image = json!({"messages": [{"role": "user", "content": "hi"}, {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]});
        let why = parse(image.to_string().as_bytes()).unwrap_err();
        assert!(why.contains("messages[1]: a content part of type Some(\"image_url\"), which the session cannot keep"), "{why}");
        assert!(parse(br#"{"model": "gpt-4o"}"#).unwrap_err().contains("no messages array"));
        assert!(parse(br#"{"messages": [{"content": "no role"}]}"#).unwrap_err().contains("messages[0]: missing field `role`"));
        assert!(crate::parts::is_unkept(&why), "content it cannot keep is not the client's mistake: {why}");
        let wizard = parse(br#"{"messages": [{"role": "wizard", "content": "hi"}]}"#).unwrap_err();
        assert!(wizard.starts_with("messages[0]: the role \"wizard\" is not one") && !crate::parts::is_unkept(&wizard), "{wizard}");
        assert!(parse(b"[1]").unwrap_err().contains("not a chat request"));
    }
}
