//! What a client protocol is to the proxy: one [`Protocol`] (how a request's history, tools
//! and body are read and written, how a whole answer is read and handed to the client, what its
//! errors look like) and one [`Relay`] per stream (how a streamed answer goes on to the client
//! with workmem's own calls cut out). Each protocol is a module of its own (`chat`, `messages`,
//! `responses`); what they share is written here once. A fourth protocol is a fourth
//! implementation and a route in `lib.rs`.

use crate::history::{History, Recent};
use crate::own::own_tool;
use crate::parts::Unread;
use crate::written::Written;
use bytes::Bytes;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;
use workmem_agent::context::Built;
use workmem_agent::tools::Tool;
use workmem_llm::Completion;

/// An answer of the upstream's that the proxy cannot read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Unreadable {
    #[error("{what} is not JSON")]
    Json {
        what: &'static str,
        #[source]
        source: serde_json::Error,
    },
    #[error("{0} is not UTF-8")]
    NotUtf8(&'static str),
    /// JSON, but not of the protocol's shape.
    #[error("{0}")]
    Shape(String),
    /// An answer of more calls than [`workmem_llm::MAX_TOOL_CALLS`]: the proxy runs workmem's
    /// among them and logs them all, and its client gets every call, so an answer past the cap
    /// fails its round rather than being cut short in the log.
    #[error("the upstream's answer makes {0} tool calls, more than the {max} one answer may make", max = workmem_llm::MAX_TOOL_CALLS)]
    TooManyCalls(usize),
}

impl Unreadable {
    pub fn json(what: &'static str) -> impl FnOnce(serde_json::Error) -> Self {
        move |source| Unreadable::Json { what, source }
    }
}

/// A provider's token counts as workmem keeps them.
pub(crate) fn usage(prompt: u64, completion: u64) -> workmem_llm::Usage {
    let (prompt_tokens, completion_tokens) = (u32::try_from(prompt).unwrap_or(u32::MAX), u32::try_from(completion).unwrap_or(u32::MAX));
    workmem_llm::Usage { prompt_tokens, completion_tokens, total_tokens: prompt_tokens.saturating_add(completion_tokens) }
}

/// A body for the upstream, and what `written` held before (see [`Protocol::upstream_body`]).
pub(crate) type Upstream<'w> = (&'w [u8], Written);

/// What the model said in one round, and its opaque parts (see `workmem_store::Message::opaque`).
pub(crate) type Said = (Completion, Vec<Value>);

/// `said`, unless it makes more calls than one answer may.
fn within_cap(said: Said) -> Result<Said, Unreadable> {
    let made = said.0.tool_calls.len() + said.0.calls_past_cap;
    if made > workmem_llm::MAX_TOOL_CALLS {
        return Err(Unreadable::TooManyCalls(made));
    }
    Ok(said)
}

/// A client protocol the proxy speaks.
pub(crate) trait Protocol: Sync {
    /// The name a proxied session records.
    fn name(&self) -> &'static str;

    /// A client's request: the JSON the rest of the exchange reads (its history left out where
    /// the protocol reads that as it parses), and its history in the session's message shape.
    /// `recent` holds the histories of the last requests, which a protocol may continue from as
    /// far as a recent request of the same `caller` held it.
    fn parse(&self, body: &[u8], recent: &Recent, caller: u64) -> Result<(Value, Arc<History>), Unread>;

    /// A request workmem leaves to the client and the upstream by design, and why: its reason
    /// (for the `x-workmem` header and the count) and the message.
    fn unproxied(&self, _request: &Value) -> Option<(&'static str, String)> {
        None
    }

    /// The answer a request continues where the protocol lets a client send only what follows
    /// one (the Responses API's `previous_response_id`), taken out of the request: workmem
    /// sends the session's view in its place. An error where the link is not an ID.
    fn unchain(&self, _request: &mut Value) -> Result<Option<String>, String> {
        Ok(None)
    }

    /// The provider's ID for a whole answer, where a client may chain to it
    /// ([`Protocol::unchain`]).
    fn answer_id(&self, _reply: &Value) -> Option<String> {
        None
    }

    /// The name of one of the client's `tools`.
    fn tool_name<'t>(&self, tool: &'t Value) -> Option<&'t str> {
        tool["name"].as_str()
    }

    /// One of workmem's tools as the protocol offers it.
    fn offer(&self, tool: &Tool) -> Value;

    /// The names of the tools the client offers.
    fn tool_names(&self, request: &Value) -> Vec<String> {
        request["tools"].as_array().into_iter().flatten().filter_map(|t| self.tool_name(t).map(str::to_string)).collect()
    }

    /// The client's tools and workmem's (`own`, as [`Protocol::offer`] offers them), as the
    /// upstream request offers them.
    fn tools(&self, request: &Value, own: &[Value]) -> Value {
        let mut all: Vec<Value> = request["tools"].as_array().cloned().unwrap_or_default();
        all.extend(own.iter().cloned());
        Value::Array(all)
    }

    /// The client's own name for its session, where the protocol or the client's `headers`
    /// carry one (OpenAI's `prompt_cache_key`, where Codex CLI names its thread).
    fn client_session(&self, request: &Value, _headers: &axum::http::HeaderMap) -> Option<String> {
        request["prompt_cache_key"].as_str().filter(|k| !k.is_empty()).map(str::to_string)
    }

    /// The client's request with `built` (the session's view, bounded) in place of its
    /// history, written on from `written` (the session's last body upstream), which holds it
    /// next, with what the next request is built on from; what it held before is given back, to
    /// be dropped once the request is on its way.
    fn upstream_body<'w>(&self, request: &Value, built: &mut Built, tools: &Value, written: &'w mut Written) -> Upstream<'w>;

    /// A stream's relay to the client, for this request's rounds.
    fn relay(&self) -> Box<dyn Relay>;

    /// What the model said in a whole (not streamed) answer, as the protocol writes it.
    fn said(&self, reply: &Value) -> Result<Said, Unreadable>;

    /// [`Protocol::said`], held to the cap on calls per answer.
    fn completion(&self, reply: &Value) -> Result<Said, Unreadable> {
        self.said(reply).and_then(within_cap)
    }

    /// The answer the client gets: `reply` after the `earlier` replies of rounds that called
    /// only workmem's tools, workmem's calls taken out.
    fn client_answer(&self, reply: Value, earlier: &[Value]) -> Value;

    /// The protocol's own error shape, of the kind its API gives `status` (OpenAI's, unless
    /// the protocol has its own).
    fn error_body(&self, status: u16, code: &str, message: &str) -> Value {
        let kind = if (400..500).contains(&status) { "invalid_request_error" } else { "workmem_error" };
        serde_json::json!({"error": {"message": message, "type": kind, "code": code}})
    }
}

/// A stream on its way to the client, in the protocol's own events: each goes on as it came
/// but for workmem's own calls (left out, the client's renumbered around them, see
/// [`Renumbered`]) and the answer's end, held until the proxy knows whether the client gets
/// this round's answer or the next one's.
pub(crate) trait Relay: Send {
    /// Starts the next round's answer, which continues the one the client is getting.
    fn next_round(&mut self);

    /// One line of the upstream's stream (with its newline): what goes on to the client now.
    fn line(&mut self, line: &[u8]) -> Result<Option<Bytes>, Unreadable>;

    /// Whether the upstream ended its stream as the protocol ends one.
    fn complete(&self) -> bool;

    /// What the round said, once it ended.
    fn said(&self) -> Result<Said, Unreadable>;

    /// The provider's ID for the round's answer, once it ended ([`Protocol::answer_id`]).
    fn answer_id(&self) -> Option<String> {
        None
    }

    /// [`Relay::said`], held to the cap on calls per answer.
    fn completion(&self) -> Result<Said, Unreadable> {
        self.said().and_then(within_cap)
    }

    /// The held end of the answer, once it is the client's.
    fn end(&mut self) -> Vec<Bytes>;
}

/// The client's numbering of a streamed answer's items (calls, blocks, output items): each
/// upstream index gets the next number of the client's, or none where it is one of workmem's
/// calls; the numbers go on from round to round, the upstream's start again.
#[derive(Default)]
pub(crate) struct Renumbered {
    indices: HashMap<u64, Option<u64>>,
    given: u64,
}

impl Renumbered {
    /// The client's number for upstream index `index`, given the first time it is seen
    /// (`named`, the tool it calls where it is a call).
    pub fn first(&mut self, index: u64, named: Option<&str>) -> Option<u64> {
        *self.indices.entry(index).or_insert_with(|| {
            if named.is_some_and(own_tool) {
                return None;
            }
            self.given += 1;
            Some(self.given - 1)
        })
    }

    /// The client's number for an upstream index already seen.
    pub fn get(&self, index: u64) -> Option<u64> {
        self.indices.get(&index).copied().flatten()
    }

    /// Numbers given, over all rounds.
    pub fn given(&self) -> u64 {
        self.given
    }

    /// A new round: its upstream indices start again, the client's numbers go on.
    pub fn next_round(&mut self) {
        self.indices.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// workmem's calls get no number; the client's are numbered on across rounds.
    #[test]
    fn the_clients_items_are_numbered_around_workmems() {
        let mut n = Renumbered::default();
        assert_eq!(n.first(0, None), Some(0));
        assert_eq!(n.first(1, Some("read_history")), None);
        assert_eq!(n.first(2, Some("read_file")), Some(1));
        assert_eq!(n.first(2, None), Some(1), "an index keeps its number");
        assert_eq!((n.get(1), n.get(2), n.given()), (None, Some(1), 2));
        n.next_round();
        assert_eq!(n.first(0, Some("bash")), Some(2));
    }
}
