//! A bounded request in the parts each protocol's body is written from, and the client's
//! fields that go with them: below the protocols, which all write from these.

use serde_json::Value;

/// How a request's reading ends where it holds what the session cannot keep (an image, an item
/// kind workmem does not know): the client's request is sound, so it still goes upstream as
/// sent ([`is_unkept`]); any other error is the client's own mistake.
const UNKEPT: &str = ", which the session cannot keep";

/// The error for `what`, which the session cannot keep.
pub(crate) fn unkept(what: impl std::fmt::Display) -> String {
    format!("{what}{UNKEPT}")
}

/// Whether a request was refused only for holding what the session cannot keep.
pub(crate) fn is_unkept(error: &str) -> bool {
    error.ends_with(UNKEPT)
}

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

const JSON: &str = "JSON values and strings always serialize";

/// `s` as a JSON string.
pub(crate) fn string(out: &mut Vec<u8>, s: &str) {
    serde_json::to_writer(&mut *out, s).expect(JSON);
}

/// `value` as JSON.
pub(crate) fn json(out: &mut Vec<u8>, value: &impl serde::Serialize) {
    serde_json::to_writer(&mut *out, value).expect(JSON);
}

/// The client's fields but those at `keys` (the ones the proxy writes anew: the history above
/// all, which is not copied only to be replaced), each as `"key":value,`, in the client's order.
pub(crate) fn fields_but(out: &mut Vec<u8>, request: &Value, keys: &[&str]) {
    for (key, value) in request.as_object().into_iter().flatten().filter(|(k, _)| !keys.contains(&k.as_str())) {
        string(out, key);
        out.push(b':');
        json(out, value);
        out.push(b',');
    }
}
