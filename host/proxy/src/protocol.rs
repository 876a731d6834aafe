//! The client protocols the proxy speaks, each in its own module; this is where an exchange
//! asks the one at hand.

use crate::history::{History, Recent};
use crate::parts::Parts;
use crate::written::Written;
use crate::{chat, messages, responses};
use bytes::Bytes;
use serde_json::Value;
use std::borrow::Cow;
use std::sync::Arc;
use workmem_agent::tools::Tool;
use workmem_llm::Completion;

/// An answer of at most [`workmem_llm::MAX_TOOL_CALLS`] calls, in any protocol: the proxy runs
/// workmem's among them and logs them all, and its client gets every call, so an answer past
/// the cap fails its round rather than being cut short in the log.
fn within_cap((answer, opaque): (Completion, Vec<Value>)) -> Result<(Completion, Vec<Value>), String> {
    let made = answer.tool_calls.len() + answer.calls_past_cap;
    if made > workmem_llm::MAX_TOOL_CALLS {
        return Err(format!("the upstream's answer makes {made} tool calls, more than the {} one answer may make", workmem_llm::MAX_TOOL_CALLS));
    }
    Ok((answer, opaque))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Protocol {
    /// OpenAI Chat Completions.
    Chat,
    /// Anthropic Messages.
    Messages,
    /// OpenAI Responses.
    Responses,
}

impl Protocol {
    /// The name a proxied session records.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Chat => "chat",
            Protocol::Messages => "messages",
            Protocol::Responses => "responses",
        }
    }

    /// A client's request: the JSON the rest of the exchange reads (its history left out where
    /// the protocol reads that as it parses), and its history in the session's message shape
    /// (Chat Completions' taken from `recent` as far as a recent request of the same `caller`
    /// held it).
    pub fn parse(self, body: &[u8], recent: &Recent, caller: u64) -> Result<(Value, Arc<History>), String> {
        if self == Protocol::Chat {
            return chat::parse(body, recent, caller);
        }
        let key = if self == Protocol::Messages { "messages" } else { "input" };
        let (rest, raw) = crate::history::fields_and_raw(body, key).map_err(|e| format!("the request is not JSON: {e}"))?;
        let history = match self {
            Protocol::Messages => messages::history(raw)?,
            _ => responses::history(raw)?,
        };
        Ok((Value::Object(rest), Arc::new(History::new(history))))
    }

    pub fn tool_names(self, request: &Value) -> Vec<String> {
        match self {
            Protocol::Chat => chat::tool_names(request),
            Protocol::Messages => messages::tool_names(request),
            Protocol::Responses => responses::tool_names(request),
        }
    }

    /// The client's own name for its session, where the protocol carries one.
    pub fn client_session(self, request: &Value) -> Option<String> {
        match self {
            // Codex CLI names its thread here.
            Protocol::Chat | Protocol::Responses => request["prompt_cache_key"].as_str().filter(|k| !k.is_empty()).map(str::to_string),
            Protocol::Messages => messages::client_session(request),
        }
    }

    pub fn tools(self, request: &Value, own: &[&Tool]) -> Value {
        match self {
            Protocol::Chat => chat::tools(request, own),
            Protocol::Messages => messages::tools(request, own),
            Protocol::Responses => responses::tools(request, own),
        }
    }

    /// The client's request with `built` (the session's view, bounded) in place of its history.
    /// Chat Completions writes on from `written`, the session's last body upstream, takes
    /// `built`'s messages for the next and is sent from there; what `written` held before is
    /// given back, to be dropped once the request is on its way. The other protocols write
    /// their bodies whole, and keep `built`'s messages in `written` for the next request to be
    /// built on from.
    pub fn upstream_body<'w>(
        self,
        request: &Value,
        built: &mut workmem_agent::context::Built,
        tools: &Value,
        written: &'w mut Written,
    ) -> (Cow<'w, [u8]>, Option<Written>) {
        match self {
            Protocol::Chat => {
                // workmem's instructions and memory after the client's system prompt (docs/proxy.md).
                let parts = Parts::of(built);
                let opening = parts.history.iter().take_while(|(m, _)| m.role == "system").count();
                let order = crate::written::Order { leading: parts.leading.len(), opening };
                let retired = crate::written::chat_body(request, built.carry(), built.reused, order, tools, written);
                (Cow::Borrowed(written.bytes()), Some(retired))
            }
            // Written whole; the next request is still built on from this one.
            Protocol::Messages => {
                let body = messages::upstream_body(request, &Parts::of(built), tools);
                written.keep_carry(built.carry());
                (Cow::Owned(body), None)
            }
            Protocol::Responses => {
                let body = responses::upstream_body(request, &Parts::of(built), tools);
                written.keep_carry(built.carry());
                (Cow::Owned(body), None)
            }
        }
    }

    pub fn relay(self) -> Relay {
        match self {
            Protocol::Chat => Relay::Chat(chat::Relay::default()),
            Protocol::Messages => Relay::Messages(messages::Relay::default()),
            Protocol::Responses => Relay::Responses(responses::Relay::default()),
        }
    }

    /// What the model said in a whole (not streamed) answer, and its opaque parts (see
    /// `workmem_store::Message::opaque`).
    pub fn completion(self, reply: &Value) -> Result<(Completion, Vec<Value>), String> {
        match self {
            Protocol::Chat => chat::completion(reply).map(|c| (c, Vec::new())),
            Protocol::Messages => messages::completion(reply),
            Protocol::Responses => responses::completion(reply),
        }
        .and_then(within_cap)
    }

    /// The answer the client gets: `reply` after the `earlier` replies of rounds that called
    /// only workmem's tools.
    pub fn client_answer(self, reply: Value, earlier: &[Value]) -> Value {
        match self {
            Protocol::Chat => chat::client_answer(reply, earlier),
            Protocol::Messages => messages::client_answer(reply, earlier),
            Protocol::Responses => responses::client_answer(reply, earlier),
        }
    }

    /// The protocol's own error shape, of the kind its API gives `status`.
    pub fn error_body(self, status: u16, code: &str, message: &str) -> Value {
        match self {
            Protocol::Chat => chat::error_body(status, code, message),
            Protocol::Messages => messages::error_body(status, code, message),
            Protocol::Responses => responses::error_body(status, code, message),
        }
    }
}

/// A stream on its way to the client, in the protocol's own events.
pub(crate) enum Relay {
    Chat(chat::Relay),
    Messages(messages::Relay),
    Responses(responses::Relay),
}

impl Relay {
    /// Starts the next round's answer, which continues the one the client is getting.
    pub fn next_round(&mut self) {
        match self {
            Relay::Chat(r) => r.next_round(),
            Relay::Messages(r) => r.next_round(),
            Relay::Responses(r) => r.next_round(),
        }
    }

    /// One line of the upstream's stream: what goes on to the client now.
    pub fn line(&mut self, line: &[u8]) -> Result<Option<Bytes>, String> {
        match self {
            Relay::Chat(r) => r.line(line),
            Relay::Messages(r) => r.line(line),
            Relay::Responses(r) => r.line(line),
        }
    }

    /// Whether the upstream ended its stream as the protocol ends one.
    pub fn complete(&self) -> bool {
        match self {
            Relay::Chat(r) => r.complete(),
            Relay::Messages(r) => r.complete(),
            Relay::Responses(r) => r.complete(),
        }
    }

    /// What the round said, and its opaque parts.
    pub fn completion(&self) -> Result<(Completion, Vec<Value>), String> {
        match self {
            Relay::Chat(r) => r.stream.clone().finish().map(|c| (c, Vec::new())),
            Relay::Messages(r) => Ok(r.completion()),
            Relay::Responses(r) => Ok(r.completion()),
        }
        .and_then(within_cap)
    }

    /// The held end of the answer, once it is the client's.
    pub fn end(&mut self) -> Vec<Bytes> {
        match self {
            Relay::Chat(r) => r.end(),
            Relay::Messages(r) => r.end(),
            Relay::Responses(r) => r.end(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Every protocol's answer is held to the cap on calls per answer: an Anthropic answer of
    /// 129 `tool_use` blocks ran and logged every one (only Chat Completions had a cap).
    #[test]
    fn calls_per_answer_are_capped_in_every_protocol() {
        let blocks =
            |n: usize| -> Vec<Value> { (0..n).map(|i| json!({"type": "tool_use", "id": format!("toolu_{i}"), "name": "read_file", "input": {}})).collect() };
        let anthropic = |n| json!({"type": "message", "role": "assistant", "content": blocks(n), "stop_reason": "tool_use"});
        assert_eq!(Protocol::Messages.completion(&anthropic(128)).unwrap().0.tool_calls.len(), 128);
        assert!(Protocol::Messages.completion(&anthropic(129)).unwrap_err().contains("129 tool calls, more than the 128"));
        let calls: Vec<Value> = (0..129).map(|i| json!({"id": format!("c{i}"), "type": "function", "function": {"name": "f", "arguments": "{}"}})).collect();
        let chat = json!({"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": calls}}]});
        assert!(Protocol::Chat.completion(&chat).unwrap_err().contains("129 tool calls"));
        let items: Vec<Value> = (0..129).map(|i| json!({"type": "function_call", "call_id": format!("c{i}"), "name": "f", "arguments": "{}"})).collect();
        assert!(Protocol::Responses.completion(&json!({"output": items})).unwrap_err().contains("129 tool calls"));
    }
}
