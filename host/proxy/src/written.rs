//! The Chat Completions body a session sends upstream, written on from the last one it sent.

use serde_json::Value;
use workmem_agent::context::Carry;

/// The last body a session sent upstream, for the next one: most of a request is the last
/// one's messages again, and writing them out (escaping every byte of a 1,000-message history)
/// was the largest part of the proxy's work on a request.
#[derive(Default)]
pub(crate) struct Written {
    bytes: Vec<u8>,
    /// Where the messages start (after `"messages":[`), the messages (with what the next
    /// request is built on from), and where each ends.
    head: usize,
    carry: Carry,
    ends: Vec<usize>,
    /// The order its messages were written in.
    order: Order,
}

/// The order a body's messages are written in: the first `leading` (workmem's instructions and
/// memory) after the `opening` system messages that follow them (the client's own system
/// prompt), so that the client's prefix, which its provider has cached, stays first.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Order {
    pub leading: usize,
    pub opening: usize,
}

impl Order {
    /// The carried messages' indices in the order they are written.
    fn indices(self, n: usize) -> impl Iterator<Item = usize> {
        let (leading, opening) = (self.leading.min(n), (self.leading + self.opening).min(n));
        (leading..opening).chain(0..leading).chain(opening..n)
    }
}

impl Written {
    /// The body as it was sent.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The body's messages and where they came from, for the next request to be built on from;
    /// the bytes stay, for its body to be written on from.
    pub fn take_carry(&mut self) -> Carry {
        std::mem::take(&mut self.carry)
    }

    /// Keeps what the next request is built on from, for a body written whole (a protocol
    /// that does not write on from the last body).
    pub fn keep_carry(&mut self, carry: Carry) {
        self.carry = carry;
    }
}

/// The client's request with the session's view in place of its messages (`carry`'s), written
/// straight from the view (a `Value` of a long history first would cost more than the writing),
/// as serde writes the request's other fields, then `messages` (in `order`), then `tools`. The
/// first `reused` messages, which the caller knows to be those the `last` body began with, are
/// kept from it, not written again (this body is written over the last one's bytes, in place),
/// where they are also the first written (past the reordered opening); `last` becomes this body
/// (sent from there, not copied), and what it held else is given back, to be dropped once the
/// request is on its way.
pub(crate) fn chat_body(request: &Value, carry: Carry, reused: usize, order: Order, tools: &Value, last: &mut Written) -> Written {
    let json = "JSON values and chat messages always serialize";
    let mut out = Vec::with_capacity(256);
    out.push(b'{');
    crate::parts::fields_but(&mut out, request, &["messages", "tools"]);
    out.extend_from_slice(b"\"messages\":[");
    let head = out.len();
    let same_head = last.bytes.get(..last.head) == Some(&out[..]);
    let messages = carry.messages();
    // Past the reordered opening, the first `reused` are written first in both bodies.
    let kept = if same_head && last.order == order && reused > order.leading + order.opening { reused.min(last.ends.len()).min(messages.len()) } else { 0 };
    // Room for what is written anew, escapes aside, so that the body is not moved as it grows.
    let tail = last.bytes.len() - last.ends.last().copied().unwrap_or(last.head).min(last.bytes.len());
    let mut ends = Vec::with_capacity(messages.len());
    if kept > 0 {
        // The last body was sent and answered: this one is written over it, in place.
        out = std::mem::take(&mut last.bytes);
        out.truncate(last.ends[kept - 1]);
        ends.extend_from_slice(&last.ends[..kept]);
    }
    out.reserve(
        messages[kept..].iter().map(|m| m.content.len() + m.tool_calls.iter().map(|c| c.function.arguments.len() + 64).sum::<usize>() + 64).sum::<usize>()
            + tail,
    );
    for (i, at) in order.indices(messages.len()).enumerate().skip(kept) {
        if i > 0 {
            out.push(b',');
        }
        serde_json::to_writer(&mut out, &messages[at]).expect(json);
        ends.push(out.len());
    }
    out.extend_from_slice(b"],\"tools\":");
    serde_json::to_writer(&mut out, tools).expect(json);
    out.push(b'}');
    std::mem::replace(last, Written { bytes: out, head, carry, ends, order })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The body written on from the last one is the body written whole, however the history
    /// moved since: grown, edited in the middle, compacted to less, or under other fields.
    #[test]
    fn a_body_written_on_from_the_last_is_the_whole_body() {
        #[derive(serde::Serialize)]
        struct Whole<'a> {
            #[serde(flatten)]
            rest: Value,
            messages: &'a [workmem_llm::Message],
            tools: &'a Value,
        }
        let message = |i: usize| {
            let mut m = workmem_llm::Message::new(["user", "assistant", "tool"][i % 3], format!("text {i} \"quoted\"\n\u{1}"));
            if i % 3 == 1 {
                m.tool_calls.push(workmem_llm::ToolCall {
                    id: format!("c{i}"),
                    kind: "function".into(),
                    function: workmem_llm::FunctionCall { name: "bash".into(), arguments: "{}".into() },
                });
            }
            m
        };
        let mut history: Vec<_> = (0..12).map(message).collect();
        // Workmem's two leading messages, the client's system prompt after them in the view.
        history[0].role = "system".into();
        history[1] = workmem_llm::Message::new("system", "memory");
        history[2] = workmem_llm::Message::new("system", "client's prompt");
        let order = Order { leading: 2, opening: 1 };
        let mut edited = history.clone();
        edited[5].content.push('!');
        let tools = json!([{"type": "function", "function": {"name": "bash"}}]);
        let request = json!({"model": "m", "messages": [], "stream": true, "tools": []});
        let other = json!({"stream": false, "model": "m"});
        let mut last = Written::default();
        let mut before: &[workmem_llm::Message] = &[];
        for (request, messages) in [
            (&request, &history[..2]),
            (&request, &history[..3]),
            (&request, &history[..4]),
            (&request, &history[..8]),
            (&request, &history[..8]),
            (&request, &edited[..]),
            (&request, &history[..]),
            (&request, &history[2..6]),
            (&other, &history[2..9]),
            (&request, &[][..]),
            (&request, &history[..3]),
        ] {
            let whole = serde_json::to_vec(&Whole {
                rest: Value::Object(
                    request
                        .as_object()
                        .unwrap()
                        .iter()
                        .filter(|(k, _)| !matches!(k.as_str(), "messages" | "tools"))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                ),
                messages: &order.indices(messages.len()).map(|i| messages[i].clone()).collect::<Vec<_>>(),
                tools: &tools,
            })
            .unwrap();
            let reused = messages.iter().zip(before).take_while(|(a, b)| a == b).count();
            chat_body(request, Carry::from(messages.to_vec()), reused, order, &tools, &mut last);
            before = messages;
            assert_eq!(String::from_utf8(last.bytes().to_vec()).unwrap(), String::from_utf8(whole).unwrap());
        }
    }
}
