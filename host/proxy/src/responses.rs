//! The OpenAI Responses API (`/v1/responses`) as far as Codex CLI uses it: messages, function
//! calls and their outputs, and reasoning (kept opaque) as input items, function tools,
//! streamed or not. Items the session cannot keep (images, custom tool calls) are refused, and
//! the request then goes upstream as it was. A request chained by `previous_response_id` to
//! an answer a session logged is that session's; a conversation the provider keeps
//! (`conversation`) goes as sent, every turn of it.

use crate::history::{History, Reader, Recent};
use crate::own::own_tool;
use crate::parts::{Layout, Unread, fields_but, json, string};
use crate::protocol::{Protocol, Relay, Renumbered, Said, Unreadable, Upstream, usage};
use crate::sse::{Event, Events};
use crate::written::{Units, Written};
use bytes::Bytes;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use std::sync::Arc;
use workmem_agent::context::Built;
use workmem_agent::tools::Tool;
use workmem_llm::{Completion, FunctionCall, Usage};
use workmem_store::{Message, ToolCall};

/// The OpenAI Responses API.
pub(crate) struct Responses;

impl Protocol for Responses {
    fn name(&self) -> &'static str {
        "responses"
    }

    fn parse(&self, body: &[u8], recent: &Recent, caller: u64) -> Result<(Value, Arc<History>), Unread> {
        let (rest, history) = recent.read::<InputHistory>(body, caller)?;
        Ok((Value::Object(rest), history))
    }

    /// A request in a conversation the provider keeps (`conversation`), from its first turn
    /// on: the provider adds each turn to it, so workmem's would be added too; the whole
    /// conversation goes as sent, nothing injected.
    fn unproxied(&self, request: &Value) -> Option<(&'static str, String)> {
        (!request["conversation"].is_null()).then(|| {
            let why = "the request is part of a conversation the provider stores (conversation): its history is not the client's to send";
            ("conversation", why.to_string())
        })
    }

    /// `previous_response_id`: the session that logged that response sends its view instead,
    /// so a chain is bounded and keeps its memory as a resent history does.
    fn unchain(&self, request: &mut Value) -> Result<Option<String>, String> {
        match request.as_object_mut().and_then(|r| r.remove("previous_response_id")) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(id)) => Ok(Some(id)),
            Some(_) => Err("previous_response_id is not a string".into()),
        }
    }

    fn answer_id(&self, reply: &Value) -> Option<String> {
        reply["id"].as_str().map(str::to_string)
    }

    fn offer(&self, tool: &Tool) -> Value {
        json!({"type": "function", "name": tool.name, "description": tool.description, "parameters": tool.parameters()})
    }

    /// Written on from `written`, the session's last body upstream (see [`upstream_body`]).
    fn upstream_body<'w>(&self, request: &Value, built: &mut Built, tools: &Value, written: &'w mut Written) -> Upstream<'w> {
        let body = upstream_body(request, &Layout::of(built), tools, written);
        let retired = written.replace(body, built.carry());
        (written.bytes(), retired)
    }

    fn relay(&self) -> Box<dyn Relay> {
        Box::<ResponsesRelay>::default()
    }

    fn said(&self, reply: &Value) -> Result<Said, Unreadable> {
        let output = reply["output"].as_array().ok_or_else(|| Unreadable::Shape("the upstream's response has no output list".into()))?;
        Ok((from_output(output, &reply["usage"]), reasoning(output)))
    }

    /// The output items of `earlier` rounds ahead of the answer's own, and workmem's calls
    /// taken out.
    fn client_answer(&self, mut reply: Value, earlier: &[Value]) -> Value {
        let before: Vec<Value> = earlier.iter().flat_map(|r| r["output"].as_array().cloned().unwrap_or_default()).collect();
        if let Some(output) = reply["output"].as_array_mut() {
            output.splice(0..0, before);
            output.retain(|item| !own_call(item));
        }
        reply
    }
}

/// Text content: a string, or input, output or plain text parts.
fn texts(content: &Value) -> Result<String, Unread> {
    crate::parts::texts(content, &["input_text", "output_text", "text"], "", "part")
}

/// One input item as the client wrote it: the fields the session reads (a reasoning item is
/// kept whole, as it came).
#[derive(Deserialize)]
struct Item {
    #[serde(rename = "type", default)]
    kind: Value,
    #[serde(default)]
    role: Value,
    #[serde(default)]
    content: Value,
    #[serde(default)]
    call_id: Value,
    #[serde(default)]
    name: Value,
    #[serde(default)]
    arguments: Value,
    #[serde(default)]
    output: Value,
}

/// How the Responses API reads its `input`: in the session's message shape, an assistant's
/// text and the function calls after it in one assistant message, as the other protocols have
/// them, with the reasoning items before them kept as they came, opaque. Each item is read on
/// its own from what the client wrote, not through a `Value` of the whole history; the
/// reasoning read is held until the message it led to.
#[derive(Default)]
struct InputHistory {
    reasoning: Vec<Value>,
}

impl Reader for InputHistory {
    const FIELD: &'static str = "input";

    fn item(&mut self, i: usize, raw: &str, out: &mut Vec<Message>) -> Result<(), Unread> {
        let at = |why: String| Unread::Invalid(format!("input[{i}]: {why}"));
        let within = |e: Unread| e.at(format_args!("input[{i}]"));
        let item: Item = serde_json::from_str(raw).map_err(|e| at(format!("not an item: {e}")))?;
        match item.kind.as_str().unwrap_or("message") {
            "reasoning" => self.reasoning.push(serde_json::from_str(raw).map_err(|e| at(e.to_string()))?),
            "message" => {
                let role = item.role.as_str().ok_or_else(|| at("no role".into()))?;
                if !matches!(role, "user" | "assistant" | "system" | "developer") {
                    return Err(at(format!("the role {role:?} is not one of a message's (user, assistant, system, developer)")));
                }
                let opaque = if role == "assistant" { std::mem::take(&mut self.reasoning) } else { Vec::new() };
                out.push(Message { opaque, ..Message::new(role, texts(&item.content).map_err(within)?) });
            }
            "function_call" => {
                let call = ToolCall {
                    id: item.call_id.as_str().ok_or_else(|| at("a function call without a call_id".into()))?.to_string(),
                    name: item.name.as_str().unwrap_or_default().to_string(),
                    arguments: item.arguments.as_str().unwrap_or_default().to_string(),
                };
                // A call goes with the assistant's text before it: one answer, as it was logged.
                match out.last_mut() {
                    Some(last) if last.role == "assistant" && self.reasoning.is_empty() => last.tool_calls.push(call),
                    _ => out.push(Message { tool_calls: vec![call], opaque: std::mem::take(&mut self.reasoning), ..Message::new("assistant", "") }),
                }
            }
            "function_call_output" => {
                let output = match item.output {
                    Value::String(s) => s,
                    other => texts(&other).map_err(within)?,
                };
                out.push(Message { tool_call_id: item.call_id.as_str().map(str::to_string), ..Message::new("tool", output) });
            }
            kind => return Err(Unread::Unkept(format!("input[{i}]: an item of type {kind:?}"))),
        }
        Ok(())
    }

    /// Settled where no reasoning waits for its message and the last message is no assistant's,
    /// whose function calls could follow.
    fn settled(&self, out: &[Message]) -> bool {
        self.reasoning.is_empty() && out.last().is_none_or(|m| m.role != "assistant")
    }

    fn end(self, out: &mut Vec<Message>) {
        if !self.reasoning.is_empty() {
            out.push(Message { opaque: self.reasoning, ..Message::new("assistant", "") });
        }
    }

    /// `input` may be one text: the user's message.
    fn not_a_list(input: Option<&RawValue>) -> Result<Vec<Message>, Unread> {
        match input.map(RawValue::get) {
            Some(text) if text.starts_with('"') => {
                Ok(vec![Message::new("user", serde_json::from_str::<String>(text).map_err(|e| Unread::Invalid(e.to_string()))?)])
            }
            _ => Err("the request has no input".into()),
        }
    }
}

/// A message item of one text part.
fn message(out: &mut Vec<u8>, role: &str, text: &str) {
    let kind = if role == "assistant" { "output_text" } else { "input_text" };
    out.extend_from_slice(br#"{"type":"message","role":"#);
    string(out, role);
    out.extend_from_slice(br#","content":[{"type":"#);
    string(out, kind);
    out.extend_from_slice(br#","text":"#);
    string(out, text);
    out.extend_from_slice(b"}]}");
}

/// The client's request with the session's view as its input: workmem's instructions, memory
/// and context_meta as developer messages (first, and last), each assistant message's
/// reasoning before it. Written straight from the view, not through a `Value` of it, and on
/// from `last`, the session's last body: only the messages past those it shares are written.
fn upstream_body(request: &Value, parts: &Layout, tools: &Value, last: &mut Written) -> Written {
    let mut prefix = Vec::with_capacity(4096);
    prefix.push(b'{');
    fields_but(&mut prefix, request, &["input", "tools"]);
    prefix.extend_from_slice(br#""input":["#);
    // Each item is followed by a comma, the last one's taken back at the end (`Units::finish`).
    for m in parts.leading {
        message(&mut prefix, "developer", &m.content);
        prefix.push(b',');
    }
    let (mut units, from) = Units::on(prefix, parts, last);
    for (i, (m, opaque)) in parts.history.iter().enumerate().skip(from) {
        items(&mut units.out, m, opaque);
        units.end(i);
    }
    if let Some(m) = parts.tail {
        message(&mut units.out, "developer", &m.content);
        units.out.push(b',');
    }
    units.finish(parts, tools)
}

/// The items of one view message, each followed by a comma: none for an assistant message of
/// no text, calls or reasoning.
fn items(out: &mut Vec<u8>, m: &workmem_llm::Message, opaque: &[Value]) {
    match m.role.as_str() {
        "tool" => {
            out.extend_from_slice(br#"{"type":"function_call_output","call_id":"#);
            json(out, &m.tool_call_id);
            out.extend_from_slice(br#","output":"#);
            string(out, &m.content);
            out.extend_from_slice(b"},");
        }
        "assistant" => {
            for item in opaque {
                json(out, item);
                out.push(b',');
            }
            if !m.content.is_empty() {
                message(out, "assistant", &m.content);
                out.push(b',');
            }
            for c in &m.tool_calls {
                out.extend_from_slice(br#"{"type":"function_call","call_id":"#);
                string(out, &c.id);
                out.extend_from_slice(br#","name":"#);
                string(out, &c.function.name);
                out.extend_from_slice(br#","arguments":"#);
                string(out, &c.function.arguments);
                out.extend_from_slice(b"},");
            }
        }
        "system" => {
            message(out, "developer", &m.content);
            out.push(b',');
        }
        role => {
            message(out, role, &m.content);
            out.push(b',');
        }
    }
}

fn usage_of(u: &Value) -> Option<Usage> {
    Some(usage(u["input_tokens"].as_u64()?, u["output_tokens"].as_u64().unwrap_or(0)))
}

/// A response's output items as one answer.
fn from_output(items: &[Value], usage: &Value) -> Completion {
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    for item in items {
        match item["type"].as_str() {
            Some("message") => text.push_str(&texts(&item["content"]).unwrap_or_default()),
            Some("function_call") => tool_calls.push(workmem_llm::ToolCall {
                id: item["call_id"].as_str().unwrap_or_default().to_string(),
                kind: "function".into(),
                function: FunctionCall {
                    name: item["name"].as_str().unwrap_or_default().to_string(),
                    arguments: item["arguments"].as_str().unwrap_or_default().to_string(),
                },
            }),
            _ => {}
        }
    }
    Completion { text, tool_calls, usage: usage_of(usage), ..Completion::default() }
}

fn own_call(item: &Value) -> bool {
    item["type"] == "function_call" && item["name"].as_str().is_some_and(own_tool)
}

fn reasoning(items: &[Value]) -> Vec<Value> {
    items.iter().filter(|i| i["type"] == "reasoning").cloned().collect()
}

/// A Responses event stream on its way to the client: events go on as they came but for those
/// of workmem's function calls (left out, the client's items renumbered around them), a later
/// round's opening events, and `response.completed`, which waits until the proxy knows whether
/// this round is the client's answer, and then lists the items the client got, all rounds'.
/// Every event passed on is numbered again, in order.
#[derive(Default)]
struct ResponsesRelay {
    /// This round's output items, whole, as `output_item.done` gave them.
    items: Vec<Value>,
    /// The client's numbers for the upstream's output indices.
    outputs: Renumbered,
    /// The items the client got, over all rounds.
    sent: Vec<Value>,
    /// Rounds begun: only the first one's opening events go to the client.
    round: u32,
    sequence: u64,
    held: Option<Value>,
    events: Events,
}

impl ResponsesRelay {
    fn pass(&mut self, mut data: Value) -> Bytes {
        data["sequence_number"] = json!(self.sequence);
        self.sequence += 1;
        Bytes::from(format!("event: {}\ndata: {data}\n\n", data["type"].as_str().unwrap_or_default()))
    }

    /// Keeps this round's items the client got, before the next round.
    fn keep_sent(&mut self) {
        let items: Vec<Value> = self.items.drain(..).filter(|i| !own_call(i)).collect();
        self.sent.extend(items);
    }
}

impl Relay for ResponsesRelay {
    fn next_round(&mut self) {
        self.keep_sent();
        self.round += 1;
        self.outputs.next_round();
        self.held = None;
    }

    fn line(&mut self, line: &[u8]) -> Result<Option<Bytes>, Unreadable> {
        let mut data = match self.events.line(line)? {
            None => return Ok(None),
            Some(Event::Other(raw)) => return Ok(Some(raw)),
            Some(Event::Data(data)) => data,
        };
        let kind = data["type"].as_str().unwrap_or_default().to_string();
        match kind.as_str() {
            "response.created" | "response.in_progress" => return Ok((self.round <= 1).then(|| self.pass(data))),
            "response.completed" => {
                self.held = Some(data);
                return Ok(None);
            }
            _ => {}
        }
        let Some(index) = data["output_index"].as_u64() else { return Ok(Some(self.pass(data))) };
        if kind == "response.output_item.added" {
            let item = &data["item"];
            self.outputs.first(index, (item["type"] == "function_call").then(|| item["name"].as_str().unwrap_or_default()));
        }
        if kind == "response.output_item.done" {
            self.items.push(data["item"].clone());
        }
        match self.outputs.get(index) {
            Some(theirs) => {
                data["output_index"] = json!(theirs);
                Ok(Some(self.pass(data)))
            }
            None => Ok(None),
        }
    }

    fn complete(&self) -> bool {
        self.held.is_some()
    }

    fn said(&self) -> Result<Said, Unreadable> {
        let usage = self.held.as_ref().map_or(Value::Null, |d| d["response"]["usage"].clone());
        Ok((from_output(&self.items, &usage), reasoning(&self.items)))
    }

    fn answer_id(&self) -> Option<String> {
        self.held.as_ref().and_then(|d| d["response"]["id"].as_str()).map(str::to_string)
    }

    /// The held `response.completed`, listing the items the client got, all rounds'.
    fn end(&mut self) -> Vec<Bytes> {
        self.keep_sent();
        match self.held.take() {
            Some(mut data) => {
                data["response"]["output"] = Value::Array(self.sent.clone());
                vec![self.pass(data)]
            }
            None => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use workmem_llm::Message as M;

    fn read(input: Value) -> Result<Vec<Message>, String> {
        crate::history::read_both::<InputHistory>(input)
    }

    /// A conversation as Codex CLI sends it, each request read on from the last: the same
    /// history as a whole read gives, where a request ends on reasoning, on an assistant's text
    /// that calls may follow, or on a call's output.
    #[test]
    fn a_conversation_is_read_on_from_request_to_request() {
        let text = |role: &str, t: &str| json!({"type": "message", "role": role, "content": [{"type": if role == "user" { "input_text" } else { "output_text" }, "text": t}]});
        let reasoning = |n: usize| json!({"type": "reasoning", "id": format!("rs_{n}"), "summary": [], "encrypted_content": "e"});
        let call = |n: usize| json!({"type": "function_call", "call_id": format!("c{n}"), "name": "exec", "arguments": "{}"});
        let output = |n: usize| json!({"type": "function_call_output", "call_id": format!("c{n}"), "output": "done"});
        let steps = [
            vec![text("user", "hi")],
            vec![reasoning(1)],
            vec![text("assistant", "I will"), call(1), output(1)],
            vec![reasoning(2), call(2), call(3)],
            vec![output(2), output(3), text("assistant", "both ran")],
            vec![call(4), output(4), text("user", "thanks")],
        ];
        let mut input = Vec::new();
        let bodies: Vec<Vec<u8>> = steps
            .into_iter()
            .map(|step| {
                input.extend(step);
                json!({"model": "gpt-5", "instructions": "s", "input": input, "stream": true}).to_string().into_bytes()
            })
            .collect();
        let read = crate::history::read_on::<InputHistory>(&bodies);
        let last = &read.last().unwrap().messages;
        assert_eq!(last.iter().map(|m| m.tool_calls.len()).collect::<Vec<_>>(), [0, 1, 0, 2, 0, 0, 1, 0, 0]);
    }

    /// Each item read on its own gives what the protocol means: reasoning kept whole with the
    /// answer it led to, calls with the text before them, outputs as tool messages.
    #[test]
    fn an_input_is_read_item_by_item() {
        let reasoning = json!({"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "enc"});
        let got = read(json!([
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
            reasoning,
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "I will"}]},
            {"type": "function_call", "call_id": "c1", "name": "exec", "arguments": "{\"cmd\":\"ls\"}"},
            {"type": "function_call_output", "call_id": "c1", "output": [{"type": "input_text", "text": "a"}]},
            {"role": "user", "content": "typeless"},
        ]))
        .unwrap();
        let shape: Vec<(&str, &str, Option<&str>, usize)> =
            got.iter().map(|m| (m.role.as_str(), m.content.as_str(), m.tool_call_id.as_deref(), m.tool_calls.len())).collect();
        assert_eq!(shape, [("user", "hi", None, 0), ("assistant", "I will", None, 1), ("tool", "a", Some("c1"), 0), ("user", "typeless", None, 0)]);
        assert_eq!(got[1].opaque, [reasoning]);
        assert_eq!(read(json!("just text")).unwrap()[0].content, "just text");
        assert_eq!(read(json!([{"type": "image", "url": "x"}])).unwrap_err(), r#"input[0]: an item of type "image", which the session cannot keep"#);
        assert_eq!(read(json!(7)).unwrap_err(), "the request has no input");
        assert_eq!(InputHistory::not_a_list(None).unwrap_err().to_string(), "the request has no input");
    }

    /// The body upstream, written straight from the view, is the one a `Value` of it wrote
    /// before (checked on 36 combinations of these parts when the writer replaced it).
    #[test]
    fn the_body_upstream_is_written_from_the_view() {
        let call = workmem_llm::ToolCall {
            id: "c1".into(),
            kind: "function".into(),
            function: FunctionCall { name: "exec".into(), arguments: "{\"cmd\": \"ls\"}".into() },
        };
        let mut running = M::new("assistant", "Running");
        running.tool_calls = vec![call.clone()];
        let mut again = M::new("assistant", "");
        again.tool_calls = vec![call];
        let mut out = M::new("tool", "out \"q\"\n");
        out.tool_call_id = Some("c1".into());
        let (orphan, hi, notice, dev, thought) =
            (M::new("tool", "orphan"), M::new("user", "hi ü"), M::new("system", "notice"), M::new("developer", "dev"), M::new("assistant", ""));
        let (guide, meta) = ([M::new("system", "guide")], M::new("system", "<context_meta>{}</context_meta>"));
        let reasoning = [json!({"type": "reasoning", "id": "rs", "encrypted_content": "e"})];
        let none: Vec<Value> = Vec::new();
        let history = vec![
            (&hi, &none[..]),
            (&running, &reasoning[..]),
            (&out, &none[..]),
            (&again, &none[..]),
            (&orphan, &none[..]),
            (&notice, &none[..]),
            (&dev, &none[..]),
            (&thought, &reasoning[..]),
            (&thought, &none[..]),
        ];
        let request = json!({"model": "gpt-5", "input": "x", "instructions": "Be brief.", "stream": true, "tools": [{"type": "function", "name": "exec"}], "prompt_cache_key": "k"});
        let parts = crate::parts::Layout::whole(&guide, history, Some(&meta));
        assert_eq!(
            String::from_utf8(upstream_body(&request, &parts, &json!([{"type": "function", "name": "exec"}]), &mut Written::default()).bytes().to_vec())
                .unwrap(),
            r#"{"model":"gpt-5","instructions":"Be brief.","stream":true,"prompt_cache_key":"k","input":[{"type":"message","role":"developer","content":[{"type":"input_text","text":"guide"}]},{"type":"message","role":"user","content":[{"type":"input_text","text":"hi ü"}]},{"type":"reasoning","id":"rs","encrypted_content":"e"},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Running"}]},{"type":"function_call","call_id":"c1","name":"exec","arguments":"{\"cmd\": \"ls\"}"},{"type":"function_call_output","call_id":"c1","output":"out \"q\"\n"},{"type":"function_call","call_id":"c1","name":"exec","arguments":"{\"cmd\": \"ls\"}"},{"type":"function_call_output","call_id":null,"output":"orphan"},{"type":"message","role":"developer","content":[{"type":"input_text","text":"notice"}]},{"type":"message","role":"developer","content":[{"type":"input_text","text":"dev"}]},{"type":"reasoning","id":"rs","encrypted_content":"e"},{"type":"message","role":"developer","content":[{"type":"input_text","text":"<context_meta>{}</context_meta>"}]}],"tools":[{"type":"function","name":"exec"}]}"#
        );
        let parts = crate::parts::Layout::whole(&[], Vec::new(), None);
        assert_eq!(
            String::from_utf8(upstream_body(&json!([1]), &parts, &json!([]), &mut Written::default()).bytes().to_vec()).unwrap(),
            r#"{"input":[],"tools":[]}"#
        );
    }

    #[test]
    fn a_body_written_on_from_the_last_is_the_whole_body() {
        crate::written::a_body_written_on_is_the_whole_body(upstream_body);
    }
}
