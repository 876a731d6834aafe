//! Chat Completions as the client writes and reads it: the request body, the messages and
//! tool calls, a completed answer and the limits it is held to.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The body of a Chat Completions request, streaming aside: what `workmem context --json`
/// prints and `workmem-replay --requests` writes are this, so they are what is sent.
pub fn chat_body(model: &str, messages: &[Message], tools: Option<&Value>) -> Value {
    let mut body = json!({"model": model, "messages": messages});
    if let Some(tools) = tools.filter(|t| t.as_array().is_some_and(|a| !a.is_empty())) {
        body["tools"] = tools.clone();
    }
    body
}

/// A chat message in OpenAI's wire shape.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    pub role: String,
    #[serde(default, deserialize_with = "null_as_empty")]
    pub content: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl Message {
    pub fn new(role: &str, content: impl Into<String>) -> Self {
        Message { role: role.into(), content: content.into(), tool_calls: Vec::new(), tool_call_id: None }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    #[serde(rename = "type", default = "function_kind")]
    pub kind: String,
    pub function: FunctionCall,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct FunctionCall {
    pub name: String,
    /// The arguments as the model wrote them: JSON text, not yet checked (empty when the
    /// provider sent none, which the tools read as no arguments).
    #[serde(default, deserialize_with = "null_as_empty")]
    pub arguments: String,
}

pub(crate) fn function_kind() -> String {
    "function".to_string()
}

pub(crate) fn null_as_empty<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(Option::<String>::deserialize(d)?.unwrap_or_default())
}

/// Token counts as the provider reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    pub total_tokens: u32,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Completion {
    pub text: String,
    /// The tools the model asked to call, in order: the first [`MAX_TOOL_CALLS`].
    pub tool_calls: Vec<ToolCall>,
    /// How many calls the answer made past [`MAX_TOOL_CALLS`]: counted, never kept, so none
    /// of them runs (the agent refuses the answer's calls to the model, naming the cap).
    pub calls_past_cap: usize,
    /// `None` when the provider did not report usage.
    pub usage: Option<Usage>,
    /// Every byte the answer carried in its text and calls (ids, names and arguments, those
    /// past the cap included), as [`Completion::from_chat`] and [`ChatStream`] count it: what
    /// the client's answer cap is held to. A completion built elsewhere (the proxy's other
    /// protocols, whose answers its own byte cap bounds) leaves it 0.
    pub bytes: usize,
}

impl Completion {
    /// A (non-streamed) `chat.completion` body's first choice; the error says what is missing.
    pub fn from_chat(v: &Value) -> Result<Completion, String> {
        let message = &v["choices"][0]["message"];
        if !message.is_object() {
            return Err("the LLM's answer has no choices[0].message".into());
        }
        let mut tool_calls: Vec<ToolCall> = match &message["tool_calls"] {
            Value::Null => Vec::new(),
            calls => serde_json::from_value(calls.clone()).map_err(|e| format!("the LLM's tool calls are malformed: {e}"))?,
        };
        let text = message["content"].as_str().unwrap_or_default().to_string();
        let mut bytes = text.len();
        for call in &tool_calls {
            check_id(&call.id)?;
            bytes += call.id.len() + call.function.name.len() + call.function.arguments.len();
        }
        let calls_past_cap = tool_calls.len().saturating_sub(MAX_TOOL_CALLS);
        tool_calls.truncate(MAX_TOOL_CALLS);
        Ok(Completion { text, tool_calls, calls_past_cap, usage: serde_json::from_value(v["usage"].clone()).ok(), bytes })
    }
}

/// The most tool calls one answer may make: far more than any real turn, few enough that
/// running and logging them stays cheap. An answer making more keeps these and counts the rest.
pub const MAX_TOOL_CALLS: usize = 128;

/// The longest tool call id taken: providers' are tens of bytes, and an id is sent back with
/// every later request that holds its call.
pub const MAX_CALL_ID_BYTES: usize = 256;

pub(crate) fn check_id(id: &str) -> Result<(), String> {
    if id.len() > MAX_CALL_ID_BYTES {
        return Err(format!("a tool call's id is {} bytes long, more than the {MAX_CALL_ID_BYTES} an id may have", id.len()));
    }
    Ok(())
}
