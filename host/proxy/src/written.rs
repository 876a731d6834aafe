//! The body a session sends upstream, written on from the last one it sent: Chat Completions'
//! message by message ([`chat_body`]), the other protocols' unit by unit ([`Units`]).

use crate::parts::Layout;
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
    /// Where a body is written in [`Units`]: the view message each unit begins with, and the
    /// view's messages (by `seq`) that the history was written from.
    firsts: Vec<usize>,
    seqs: Vec<u64>,
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

    /// `next` in place of this body, with what the next request is built on from; this body
    /// given back, to be dropped once the request is on its way.
    pub fn replace(&mut self, mut next: Written, carry: Carry) -> Written {
        next.carry = carry;
        std::mem::replace(self, next)
    }
}

/// A body's history written unit by unit (an Anthropic message, of the view's messages of one
/// role in a row; the Responses API's items of one view message), each unit followed by a
/// comma, on from the last body: the last body's units that end before a view message both
/// bodies begin with unchanged are kept, not written again (in place, where the bodies begin
/// with the same bytes: copying them was about half of writing such a body). A unit begins
/// at the same message in both bodies where that message and the one before it are the same in
/// both, and is then the same bytes; the last unit, where the cache mark and `context_meta` go,
/// is never kept, since no unit follows it.
pub(crate) struct Units {
    /// The body so far.
    pub out: Vec<u8>,
    head: usize,
    ends: Vec<usize>,
    firsts: Vec<usize>,
}

impl Units {
    /// The body begun with `prefix` (all before its history's first unit) and the units of
    /// `last` it shares with `parts`' view; the view message to write on from. `last`'s bytes
    /// are taken where they begin with `prefix`, the sent body being given back after this one
    /// is written.
    pub fn on(mut prefix: Vec<u8>, parts: &Layout, last: &mut Written) -> (Units, usize) {
        let same = if last.order.leading == parts.leading.len() { parts.reused.min(parts.seqs.len()).min(last.seqs.len()) } else { 0 };
        // The seqs say the opaque parts (kept by seq) are the same too.
        let same = parts.seqs[..same].iter().zip(&last.seqs).take_while(|(a, b)| a == b).count();
        let kept = last.firsts.partition_point(|&f| f < same).saturating_sub(1);
        let from = if kept > 0 { last.firsts[kept] } else { 0 };
        // Room for the history written anew too, escapes aside, so that the body is not moved as
        // it grows.
        let room = parts.history.get(from..).unwrap_or_default().iter().map(|(m, _)| m.content.len() + 96).sum::<usize>() + 4096;
        let mut ends = std::mem::take(&mut last.ends);
        let mut firsts = std::mem::take(&mut last.firsts);
        ends.truncate(kept);
        firsts.truncate(kept);
        let copied = if kept > 0 { last.head..ends[kept - 1] } else { last.head..last.head };
        if kept > 0 && last.bytes.get(..last.head) == Some(&prefix[..]) {
            let mut out = std::mem::take(&mut last.bytes);
            out.truncate(copied.end);
            out.reserve(room);
            return (Units { out, head: last.head, ends, firsts }, from);
        }
        prefix.reserve(copied.len() + room);
        let head = prefix.len();
        prefix.extend_from_slice(&last.bytes[copied.clone()]);
        for end in &mut ends {
            *end = *end - copied.start + head;
        }
        (Units { out: prefix, head, ends, firsts }, from)
    }

    /// Ends the unit written since the last one ended, of the view's messages from `first`.
    pub fn end(&mut self, first: usize) {
        self.ends.push(self.out.len());
        self.firsts.push(first);
    }

    /// The body ended: its list closed (the comma after its last item taken back) and `tools`
    /// after it; as the next body is written on from (see [`Written::replace`]).
    pub fn finish(self, parts: &Layout, tools: &Value) -> Written {
        let Units { mut out, head, ends, firsts } = self;
        if out.last() == Some(&b',') {
            out.pop();
        }
        out.extend_from_slice(br#"],"tools":"#);
        crate::parts::json(&mut out, tools);
        out.push(b'}');
        let order = Order { leading: parts.leading.len(), opening: 0 };
        Written { bytes: out, head, carry: Carry::default(), ends, order, firsts, seqs: parts.seqs.clone() }
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
    std::mem::replace(last, Written { bytes: out, head, carry, ends, order, firsts: Vec::new(), seqs: Vec::new() })
}

/// For a protocol written in [`Units`]: its body written on from the last one is the body
/// written whole, however the history moved since: grown, the same, a message of the same text
/// from another entry of the view (its opaque parts another's), workmem's leading messages
/// more, other client fields, compacted to a later start, emptied, `context_meta` left out.
#[cfg(test)]
pub(crate) fn a_body_written_on_is_the_whole_body(write: fn(&Value, &Layout, &Value, &mut Written) -> Written) {
    use serde_json::json;
    use workmem_llm::{FunctionCall, Message, ToolCall};
    // The view's entry `seq` holds the message of `seq % 20`: two entries may hold the same.
    let message = |seq: u64| {
        let at = seq % 20;
        let role = ["user", "assistant", "tool", "tool", "user", "assistant", "assistant", "tool", "system", "user"][at as usize % 10];
        let mut m = Message::new(role, if at % 7 == 3 { String::new() } else { format!("text {at} \"quoted\"\n\u{1}") });
        if role == "assistant" && at % 3 != 2 {
            let call = |n: u64| ToolCall {
                id: format!("c{at}.{n}"),
                kind: "function".into(),
                function: FunctionCall { name: "bash".into(), arguments: format!("{{\"n\": {n}}}") },
            };
            m.tool_calls = (0..1 + at % 2).map(call).collect();
        }
        if role == "tool" {
            m.tool_call_id = Some(format!("c{at}"));
        }
        m
    };
    let opaque = |seq: u64| if seq % 2 == 1 { vec![json!({"type": "thinking", "thinking": format!("t{seq}"), "signature": "s"})] } else { Vec::new() };
    let (one, two) = ([Message::new("system", "guide")], [Message::new("system", "guide"), Message::new("system", "memory")]);
    let meta = Message::new("user", "<context_meta>{}</context_meta>");
    let request = json!({"model": "m", "messages": [], "input": [], "system": "s", "stream": true, "tools": []});
    let other = json!({"stream": false, "model": "m"});
    let tools = json!([{"name": "bash"}]);
    let range = |from: u64, to: u64| (from..to).collect::<Vec<u64>>();
    let cases: Vec<(&Value, &[Message], Vec<u64>, bool)> = vec![
        (&request, &one, range(0, 3), true),
        (&request, &one, range(0, 5), true),
        (&request, &one, range(0, 9), true),
        (&request, &one, range(0, 9), true),
        (&request, &one, range(0, 13), true),
        // Entry 25 holds entry 5's message, an assistant's, with other thinking.
        (&request, &one, [range(0, 5), vec![25], range(6, 13)].concat(), true),
        (&request, &one, range(0, 14), true),
        (&request, &two, range(0, 15), true),
        (&other, &two, range(0, 17), true),
        // On from a body whose units were copied under other fields, to fewer units than it kept.
        (&other, &two, [range(0, 5), vec![25], range(6, 18)].concat(), true),
        (&request, &two, range(3, 11), true),
        (&request, &two, vec![], true),
        (&request, &two, range(0, 4), false),
        (&request, &two, range(0, 19), true),
        (&request, &two, range(0, 19), false),
    ];
    let mut last = Written::default();
    let mut before: Vec<Message> = Vec::new();
    for (request, leading, seqs, with_meta) in cases {
        let messages: Vec<Message> = seqs.iter().map(|&s| message(s)).collect();
        let opaques: Vec<Vec<Value>> = seqs.iter().map(|&s| opaque(s)).collect();
        let history: Vec<_> = messages.iter().zip(&opaques).map(|(m, o)| (m, &o[..])).collect();
        // As the build counts them: by the messages alone (their entries' seqs may differ).
        let reused = messages.iter().zip(&before).take_while(|(a, b)| a == b).count();
        let tail = with_meta.then_some(&meta);
        let whole = write(request, &Layout::whole(leading, history.clone(), tail), &tools, &mut Written::default());
        let on = write(request, &Layout { leading, history, tail, seqs: seqs.clone(), reused }, &tools, &mut last);
        assert_eq!(String::from_utf8_lossy(on.bytes()), String::from_utf8_lossy(whole.bytes()), "the history of entries {seqs:?}");
        last = on;
        before = messages;
    }
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
