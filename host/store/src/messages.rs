//! The session log, `messages.jsonl`: one entry a line, each with its sequence number, its
//! time and its kind, appended and never rewritten. It is workmem's own schema, not a
//! provider's wire format: a host maps entries to whatever its LLM client speaks.

use serde::{Deserialize, Serialize};

/// One line of messages.jsonl.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogRecord {
    /// 1 for the first entry of the session, then one more for each.
    pub seq: u64,
    /// RFC 3339 UTC.
    pub at: String,
    #[serde(flatten)]
    pub entry: Entry,
}

/// What an entry records. (Compactions will be a second kind.)
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Entry {
    Message(Message),
}

/// A chat message as the session keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// `system`, `user`, `assistant` or `tool`.
    pub role: String,
    pub content: String,
    /// The tools an assistant message calls.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// The call a `tool` message answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl Message {
    pub fn new(role: &str, content: impl Into<String>) -> Self {
        Message { role: role.into(), content: content.into(), tool_calls: Vec::new(), tool_call_id: None }
    }
}

/// A function call the model asked for; `arguments` is its JSON text, as the model wrote it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}
