//! A minimal agent loop: each step assembles the request (working memory injected,
//! context_meta last), asks the LLM with the memory tools, runs the tools it calls, and
//! records every message in messages.jsonl, until the model answers without a tool call.
//! The LLM keeps its memory either as free-form files (`write_file`) or through the DSL
//! (`update_memory`); both are checked by the host before anything is written.

use crate::board::Worker;
use crate::error::{Error, Result};
use crate::tools::{self, ToolContext};
use crate::{compact, context};
use workmem_llm::{Client, Completion, Tokenizer};
use workmem_runtime::{Instance, Runtime};
use workmem_store::{Durability, Message, Session, ToolCall, Usage};

#[derive(Debug, Clone)]
pub struct Options {
    pub context: context::Options,
    /// LLM calls one turn may make before it is stopped.
    pub max_steps: u32,
}

/// What a turn did, as it happens.
#[derive(Debug, Clone)]
pub enum Event {
    /// The host compacted the history before a request (the fallback, or automatic mode).
    Compacted(crate::compact::Compacted),
    /// A tool ran; `ok` is false when it was refused or failed (the model is told why).
    Tool { name: String, arguments: String, ok: bool, result: String },
    /// The model's answer, which ends the turn.
    Answer(String),
}

/// One user turn. Returns the model's answer.
pub fn turn(session: &Session, runtime: &Runtime, llm: &Client, options: &Options, task: &str, on_event: &mut dyn FnMut(&Event)) -> Result<String> {
    turn_on(session, runtime, llm, options, None, task, on_event)
}

/// Whether the session's last turn is `task`, ended by a failure before the model answered
/// it: the same task run again continues that turn rather than logging it twice (three
/// failed attempts once left three copies of the task in the history).
fn unfinished(session: &Session, task: &str) -> Result<bool> {
    let view = session.view()?;
    let Some(at) = view.entries.iter().rposition(|(_, m)| m.role == "user") else { return Ok(false) };
    let answered = view.entries[at + 1..].iter().any(|(_, m)| m.role == "assistant" && m.tool_calls.is_empty());
    Ok(view.entries[at].1.content == task && !answered)
}

/// One user turn of a worker on a shared board: every request carries its task's brief (after
/// the history), each step renews its claim, and the `board_*` tools are offered.
pub fn turn_on(
    session: &Session,
    runtime: &Runtime,
    llm: &Client,
    options: &Options,
    mut board: Option<&mut Worker>,
    task: &str,
    on_event: &mut dyn FnMut(&Event),
) -> Result<String> {
    let mut engine = runtime.instance()?;
    let tokenizer = Tokenizer::for_model(&options.context.model);
    let mut context_options = options.context.clone();
    if board.is_some() {
        context_options.tools = tools::openai_tools(true, context_options.auto_compact);
    }
    let offered = &context_options.tools;
    if !unfinished(session, task)? {
        session.append_message(Message::new("user", task))?;
    }
    for _ in 0..options.max_steps {
        let brief = match board.as_deref_mut() {
            Some(worker) => {
                worker.heartbeat()?;
                Some(worker.brief()?)
            }
            None => None,
        };
        let built = bounded(session, runtime, &mut engine, &tokenizer, &context_options, brief, context::Carry::default(), &mut |done| {
            on_event(&Event::Compacted(done))
        })?;
        let reply = llm.complete_with_tools(&built.messages, Some(offered))?;
        let calls = record_reply(session, &built, &reply, Vec::new(), None, Durability::Synced)?;
        count_round(session, &built, reply.usage)?;
        if calls.is_empty() {
            on_event(&Event::Answer(reply.text.clone()));
            return Ok(reply.text);
        }
        if reply.calls_past_cap > 0 {
            refuse_all(session, &calls, calls.len() + reply.calls_past_cap, on_event)?;
            continue;
        }
        let mut cx = ToolContext { session, runtime, tokenizer: &tokenizer, llm: Some(llm), board: board.as_deref_mut(), documents: None };
        for call in calls {
            let out = run_tool(&mut cx, &call)?;
            on_event(&Event::Tool { name: call.name, arguments: call.arguments, ok: out.ok, result: out.text });
        }
    }
    Err(Error::OutOfSteps { max_steps: options.max_steps })
}

/// Answers each of `calls` with a refusal naming the cap on calls per answer, which an answer
/// that made `made` calls passed: none of them runs (the calls past the cap were never kept,
/// and running the first ones alone would act on a plan cut off at a place the model did
/// not choose), and the model is asked again.
fn refuse_all(session: &Session, calls: &[ToolCall], made: usize, on_event: &mut dyn FnMut(&Event)) -> Result<()> {
    let why = format!(
        "not run: this answer made {made} tool calls, more than the {} one answer may make (workmem's cap on tool calls per answer), so none of them ran; make at most {} in one answer",
        workmem_llm::MAX_TOOL_CALLS,
        workmem_llm::MAX_TOOL_CALLS
    );
    for call in calls {
        session.append_message(Message { tool_call_id: Some(call.id.clone()), ..Message::new("tool", why.clone()) })?;
        on_event(&Event::Tool { name: call.name.clone(), arguments: call.arguments.clone(), ok: false, result: why.clone() });
    }
    Ok(())
}

/// The request for the session as it stands, bounded: built (on from the last request's
/// `carry` where there is one, see [`context::build_on`]), then compacted and built again
/// while the engine decides so (`call.decide`: automatic mode, then the fallback; see
/// [`compact::before_request`]). Checked before every request, not once a turn: a tool loop is
/// one long turn. A request still over the window is [`Error::OverWindow`], never sent.
#[allow(clippy::too_many_arguments)]
pub fn bounded(
    session: &Session,
    runtime: &Runtime,
    engine: &mut Instance,
    tokenizer: &Tokenizer,
    options: &context::Options,
    tail: Option<String>,
    carry: context::Carry,
    on_compacted: &mut dyn FnMut(compact::Compacted),
) -> Result<context::Built> {
    let mut built = match tail {
        None => context::build_on(session, engine, tokenizer, options, carry)?,
        Some(_) => context::build_with(session, engine, tokenizer, options, tail.clone())?,
    };
    let mut compactions = 0;
    while let Some(done) = compact::before_request(session, runtime, engine, tokenizer, built.tokens, options, compactions)? {
        on_compacted(done);
        compactions += 1;
        built = context::build_with(session, engine, tokenizer, options, tail.clone())?;
    }
    Ok(built)
}

/// Logs the model's reply to `built`, with its `opaque` parts (see
/// `workmem_store::Message::opaque`) and the provider's ID for it where a client may chain to
/// it (`response`), and what the request cost, synced or not (a proxy,
/// whose client holds the reply, syncs it once the client has it). Returns the tool calls the
/// reply asks for. The round is counted apart ([`count_round`]): a proxy answers its client
/// in between.
pub fn record_reply(
    session: &Session,
    built: &context::Built,
    reply: &Completion,
    opaque: Vec<serde_json::Value>,
    response: Option<String>,
    durability: Durability,
) -> Result<Vec<ToolCall>> {
    let calls: Vec<ToolCall> =
        reply.tool_calls.iter().map(|c| ToolCall { id: c.id.clone(), name: c.function.name.clone(), arguments: c.function.arguments.clone() }).collect();
    let usage = Usage { sent: built.counted, prompt_tokens: reply.usage.map(|u| u.prompt_tokens), completion_tokens: reply.usage.map(|u| u.completion_tokens) };
    let message = Message { tool_calls: calls.clone(), opaque, response, ..Message::new("assistant", reply.text.clone()) };
    session.append_reply(message, usage, durability)?;
    Ok(calls)
}

/// Counts the round that sent `built` and got `usage` back, in meta.json: the provider's
/// count corrects the next request's estimate. What it writes steers later requests (the
/// reminders, the estimate) and is not the model's answer: a crash before it leaves the
/// answer logged and the count one round behind.
pub fn count_round(session: &Session, built: &context::Built, usage: Option<workmem_llm::Usage>) -> Result<()> {
    let sent = i64::from(built.counted);
    session.update_meta(|m| {
        m.rounds += 1;
        if let Some(usage) = usage {
            // A provider's count far above the request's own (4,000,000,000 for a 2,000-token
            // request) is a bad number, not a correction: it would make every later request
            // look over the window. Taken up to twice the request's own count. A count below
            // ours is not taken at all: an upstream that reports 10 for every request would
            // switch the fallback off (threat model rule 6), and ours is the one the net
            // was built to hold.
            m.token_correction = (i64::from(usage.prompt_tokens) - sent).clamp(0, sent.max(1024));
        }
    })?;
    Ok(())
}

/// Runs one tool call and logs its answer after the call (a read of the log by reference:
/// the view shows what it read). A refusal is an answer (the model is told why); only a
/// failure of the host is an error.
pub fn run_tool(cx: &mut ToolContext, call: &ToolCall) -> Result<tools::ToolOutput> {
    let out = tools::call(cx, &call.name, &call.arguments)?;
    let logged = match &out.reads {
        Some(spec) => Message { reads: Some(spec.clone()), ..Message::new("tool", workmem_store::messages::reference(spec)) },
        None => Message::new("tool", out.text.clone()),
    };
    cx.session.append_message(Message { tool_call_id: Some(call.id.clone()), ..logged })?;
    Ok(out)
}
