//! A bounded request in the parts each protocol's body is written from, and the client's
//! fields that go with them: below the protocols, which all write from these.

use serde_json::Value;

/// A bounded request's messages in their parts: the engine's before the history (its
/// instructions and the memory), the history with each message's opaque parts, and the one
/// after it (`context_meta`).
pub(crate) struct Parts<'a> {
    pub leading: &'a [workmem_llm::Message],
    pub history: Vec<(&'a workmem_llm::Message, &'a [Value])>,
    pub tail: Option<&'a workmem_llm::Message>,
}

impl<'a> Parts<'a> {
    pub fn of(built: &'a workmem_agent::context::Built) -> Self {
        let n = built.view.len().min(built.messages.len());
        let leading = built.messages.len().saturating_sub(n + 1);
        let (leading, rest) = built.messages.split_at(leading);
        let (history, tail) = rest.split_at(n.min(rest.len()));
        let opaque = |i: usize| built.view.get(i).and_then(|e| built.opaque.get(&e.seq)).map_or(&[][..], Vec::as_slice);
        Parts { leading, history: history.iter().enumerate().map(|(i, m)| (m, opaque(i))).collect(), tail: tail.first() }
    }
}

/// The client's request without the fields at `keys` (those the proxy writes anew: the history
/// above all, which is not copied only to be replaced).
pub(crate) fn all_but(request: &Value, keys: &[&str]) -> Value {
    match request.as_object() {
        Some(fields) => Value::Object(fields.iter().filter(|(k, _)| !keys.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect()),
        None => Value::Null,
    }
}
