//! OpenAI Chat Completions (`/v1/chat/completions`) as the proxy reads and writes it.

use crate::history::{History, Reader, Recent};
use crate::own::own_tool;
use crate::parts::{Layout, Unread};
use crate::protocol::{Protocol, Relay, Renumbered, Said, Unreadable, Upstream};
use crate::written::Written;
use bytes::Bytes;
use serde::Deserialize;
use serde::de::{self, Deserializer, Error as _, SeqAccess, Visitor};
use serde_json::{Value, json};
use std::fmt;
use std::sync::Arc;
use workmem_agent::context::Built;
use workmem_agent::tools::Tool;
use workmem_llm::{ChatStream, Completion};
use workmem_store::{Message, ToolCall};

/// OpenAI Chat Completions.
pub(crate) struct Chat;

/// What a content part the session cannot keep says, inside serde's error (which only
/// carries text): its reason then ends with it.
const UNKEPT: &str = "which the session cannot keep";

impl Protocol for Chat {
    fn name(&self) -> &'static str {
        "chat"
    }

    /// The history read with each message converted on its own, from where a recent request
    /// of the client's left off ([`Recent`]); the rest of the request as JSON, without
    /// `messages`. Content the session cannot carry (an image, audio) is refused.
    fn parse(&self, body: &[u8], recent: &Recent, caller: u64) -> Result<(Value, Arc<History>), Unread> {
        let (rest, history) = recent.read::<ChatHistory>(body, caller)?;
        Ok((Value::Object(rest), history))
    }

    fn tool_name<'t>(&self, tool: &'t Value) -> Option<&'t str> {
        tool["function"]["name"].as_str()
    }

    fn offer(&self, tool: &Tool) -> Value {
        tool.openai()
    }

    /// Written on from `written`, the session's last body upstream, with workmem's
    /// instructions and memory after the client's system prompt (docs/proxy.md); `built`'s
    /// messages are kept there for the next request, and sent from there.
    fn upstream_body<'w>(&self, request: &Value, built: &mut Built, tools: &Value, written: &'w mut Written) -> Upstream<'w> {
        // The body is written from the carried messages: only where the history begins, and
        // how many system messages open it, are read here (a whole layout is a pass over it).
        let (leading, history, _) = Layout::split(built);
        let opening = history.iter().take_while(|m| m.role == "system").count();
        let order = crate::written::Order { leading: leading.len(), opening };
        let retired = crate::written::chat_body(request, built.carry(), built.reused, order, tools, written);
        (written.bytes(), retired)
    }

    fn relay(&self) -> Box<dyn Relay> {
        Box::<ChatRelay>::default()
    }

    fn said(&self, reply: &Value) -> Result<Said, Unreadable> {
        Completion::from_chat(reply).map(|c| (c, Vec::new())).map_err(Unreadable::Shape)
    }

    /// The text of `earlier` rounds ahead of the answer's text, and workmem's calls taken out.
    fn client_answer(&self, mut reply: Value, earlier: &[Value]) -> Value {
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
                        (kind, _) => return Err(A::Error::custom(format!("a content part of type {kind:?}, {UNKEPT}"))),
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

/// A Chat Completions event stream on its way to the client: every line goes on as it came but
/// for workmem's tool calls, which are left out (the client's calls renumbered around them),
/// and the answer's end (its finish reason, usage and `[DONE]`), which waits until the proxy
/// knows whether the client gets this answer or the next round's.
#[derive(Default)]
struct ChatRelay {
    stream: ChatStream,
    /// The client's numbers for the upstream's call indices.
    calls: Renumbered,
    held: Vec<Value>,
    done: bool,
}

impl Relay for ChatRelay {
    fn next_round(&mut self) {
        self.stream = ChatStream::default();
        self.calls.next_round();
        self.held.clear();
        self.done = false;
    }

    fn line(&mut self, line: &[u8]) -> Result<Option<Bytes>, Unreadable> {
        let text = std::str::from_utf8(line).map_err(|_| Unreadable::NotUtf8("a stream line"))?;
        let Some(data) = text.strip_prefix("data:").map(str::trim) else { return Ok(Some(Bytes::copy_from_slice(line))) };
        if data == "[DONE]" {
            self.done = true;
            return Ok(None);
        }
        let mut chunk: Value = serde_json::from_str(data).map_err(Unreadable::json("a stream event"))?;
        self.stream.push(&chunk).map_err(Unreadable::Shape)?;
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
            // A call's first part names it; its later parts (arguments) do not.
            if let Some(i) = self.calls.first(index, part["function"]["name"].as_str()) {
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
    fn complete(&self) -> bool {
        self.done
    }

    fn said(&self) -> Result<Said, Unreadable> {
        self.stream.clone().finish().map(|c| (c, Vec::new())).map_err(Unreadable::Shape)
    }

    /// The held end of the answer: a finish reason of `tool_calls` with none of the client's
    /// calls in it becomes `stop`.
    fn end(&mut self) -> Vec<Bytes> {
        let mut out = Vec::new();
        for mut chunk in self.held.drain(..) {
            if self.calls.given() == 0 && chunk["choices"][0]["finish_reason"] == "tool_calls" {
                chunk["choices"][0]["finish_reason"] = json!("stop");
            }
            if let Some(parts) = chunk["choices"][0]["delta"]["tool_calls"].as_array_mut() {
                *parts = parts
                    .drain(..)
                    .filter_map(|mut p| {
                        self.calls.get(p["index"].as_u64().unwrap_or(0)).map(|i| {
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

/// How Chat Completions reads its history: each message on its own.
#[derive(Default)]
struct ChatHistory;

impl Reader for ChatHistory {
    const FIELD: &'static str = "messages";

    fn item(&mut self, at: usize, raw: &str, out: &mut Vec<Message>) -> Result<(), Unread> {
        let wire = serde_json::from_str::<Wire>(raw).map_err(|e| {
            // serde's message ends with where it stopped: the kept-content rule reads before it.
            let e = e.to_string();
            match e.rsplit_once(" at line ") {
                Some((why, _)) if why.ends_with(UNKEPT) => Unread::Unkept(format!("messages[{at}]: {}", why.trim_end_matches(UNKEPT).trim_end_matches(", "))),
                _ => Unread::Invalid(format!("the request is not a chat request: messages[{at}]: {e}")),
            }
        })?;
        if !ROLES.contains(&wire.role.as_str()) {
            return Err(Unread::Invalid(format!("messages[{at}]: the role {:?} is not one of Chat Completions' ({})", wire.role, ROLES.join(", "))));
        }
        out.push(Message::from(wire));
        Ok(())
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
        let parse = |body: &[u8]| Chat.parse(body, &Recent::default(), 0).map(|(rest, h)| (rest, h.messages.clone()));
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
        assert_eq!(why.to_string(), "messages[1]: a content part of type Some(\"image_url\"), which the session cannot keep");
        assert!(matches!(why, Unread::Unkept(_)), "content it cannot keep is not the client's mistake: {why}");
        assert!(parse(br#"{"model": "gpt-4o"}"#).unwrap_err().to_string().contains("no messages array"));
        assert!(parse(br#"{"messages": [{"content": "no role"}]}"#).unwrap_err().to_string().contains("messages[0]: missing field `role`"));
        let wizard = parse(br#"{"messages": [{"role": "wizard", "content": "hi"}]}"#).unwrap_err();
        assert!(wizard.to_string().starts_with("messages[0]: the role \"wizard\" is not one") && matches!(wizard, Unread::Invalid(_)), "{wizard}");
        assert!(parse(b"[1]").unwrap_err().to_string().contains("not a JSON object"));
    }
}
