//! The client protocols the proxy speaks, each in its own module; this is where an exchange
//! asks the one at hand.

use crate::chat;
use serde_json::Value;
use workmem_agent::tools::Tool;
use workmem_llm::Completion;
use workmem_store::Message;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Protocol {
    /// OpenAI Chat Completions.
    Chat,
}

impl Protocol {
    /// The name a proxied session records.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Chat => "chat",
        }
    }

    pub fn history(self, request: &Value) -> Result<Vec<Message>, String> {
        match self {
            Protocol::Chat => chat::history(request),
        }
    }

    pub fn tool_names(self, request: &Value) -> Vec<String> {
        match self {
            Protocol::Chat => chat::tool_names(request),
        }
    }

    /// The client's own name for its session, where the protocol carries one.
    pub fn client_session(self, _request: &Value) -> Option<String> {
        match self {
            Protocol::Chat => None,
        }
    }

    pub fn tools(self, request: &Value, own: &[&Tool]) -> Value {
        match self {
            Protocol::Chat => chat::tools(request, own),
        }
    }

    pub fn upstream_body(self, request: &Value, messages: &[workmem_llm::Message], tools: &Value) -> Value {
        match self {
            Protocol::Chat => chat::upstream_body(request, messages, tools),
        }
    }

    pub fn completion(self, reply: &Value) -> Result<Completion, String> {
        match self {
            Protocol::Chat => chat::completion(reply),
        }
    }

    pub fn client_answer(self, reply: Value, before: &str) -> Value {
        match self {
            Protocol::Chat => chat::client_answer(reply, before),
        }
    }

    /// The protocol's own error shape.
    pub fn error_body(self, code: &str, message: &str) -> Value {
        match self {
            Protocol::Chat => chat::error_body(code, message),
        }
    }
}
