//! A bounded request in the parts each protocol's body is written from, and the client's
//! fields that go with them: below the protocols, which all write from these.

use serde_json::Value;

/// Why a client's request was not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Unread {
    /// The client's own mistake (not JSON, a role its API does not have): the provider would
    /// answer 400.
    #[error("{0}")]
    Invalid(String),
    /// The request is sound but holds what the session cannot keep (an image, an item kind
    /// workmem does not know): it still goes upstream as sent.
    #[error("{0}, which the session cannot keep")]
    Unkept(String),
}

impl Unread {
    /// `at` (where in the request) before the reason.
    pub fn at(self, at: impl std::fmt::Display) -> Self {
        match self {
            Unread::Invalid(why) => Unread::Invalid(format!("{at}: {why}")),
            Unread::Unkept(what) => Unread::Unkept(format!("{at}: {what}")),
        }
    }
}

impl From<String> for Unread {
    fn from(why: String) -> Self {
        Unread::Invalid(why)
    }
}

impl From<&str> for Unread {
    fn from(why: &str) -> Self {
        Unread::Invalid(why.to_string())
    }
}

/// Text content as a protocol writes it: null, a string, or a list of `noun`s ("part",
/// "block") of the `kinds` given, their texts joined with `sep`; one of another kind is what the
/// session cannot keep.
pub(crate) fn texts(content: &Value, kinds: &[&str], sep: &str, noun: &str) -> Result<String, Unread> {
    match content {
        Value::Null => Ok(String::new()),
        Value::String(s) => Ok(s.clone()),
        Value::Array(parts) => {
            let mut out = Vec::with_capacity(parts.len());
            for p in parts {
                match (p["type"].as_str(), p["text"].as_str()) {
                    (Some(kind), Some(t)) if kinds.contains(&kind) => out.push(t),
                    (kind, _) => return Err(Unread::Unkept(format!("a content {noun} of type {kind:?}"))),
                }
            }
            Ok(out.join(sep))
        }
        _ => Err(Unread::Invalid(format!("content that is neither text nor {noun}s"))),
    }
}

/// A bounded request's layout (not axum's request `Parts`): the engine's messages before the history (its
/// instructions and the memory), the history with each message's opaque parts, and the one
/// after it (`context_meta`); and what a body written on from the last one needs (see
/// `written::Units`): the history's messages by `seq`, and how many of them, from the first,
/// are the last request's unchanged.
pub(crate) struct Layout<'a> {
    pub leading: &'a [workmem_llm::Message],
    pub history: Vec<(&'a workmem_llm::Message, &'a [Value])>,
    pub tail: Option<&'a workmem_llm::Message>,
    pub seqs: Vec<u64>,
    pub reused: usize,
}

impl<'a> Layout<'a> {
    /// A bounded request's messages before its history, its history, and the one after it.
    pub fn split(built: &'a workmem_agent::context::Built) -> (&'a [workmem_llm::Message], &'a [workmem_llm::Message], Option<&'a workmem_llm::Message>) {
        let n = built.view.len().min(built.messages.len());
        let leading = built.messages.len().saturating_sub(n + 1);
        let (leading, rest) = built.messages.split_at(leading);
        let (history, tail) = rest.split_at(n.min(rest.len()));
        (leading, history, tail.first())
    }

    pub fn of(built: &'a workmem_agent::context::Built) -> Self {
        let (leading, history, tail) = Self::split(built);
        let opaque = |i: usize| built.view.get(i).and_then(|e| built.opaque.get(&e.seq)).map_or(&[][..], Vec::as_slice);
        Layout {
            leading,
            history: history.iter().enumerate().map(|(i, m)| (m, opaque(i))).collect(),
            tail,
            seqs: built.view[..history.len()].iter().map(|e| e.seq).collect(),
            // `reused` counts the leading messages too: the history's are those past them, where
            // they were all the same.
            reused: built.reused.saturating_sub(leading.len()),
        }
    }

    /// The parts of a body written whole, with nothing of the last request's.
    #[cfg(test)]
    pub fn whole(leading: &'a [workmem_llm::Message], history: Vec<(&'a workmem_llm::Message, &'a [Value])>, tail: Option<&'a workmem_llm::Message>) -> Self {
        Layout { leading, history, tail, seqs: Vec::new(), reused: 0 }
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
