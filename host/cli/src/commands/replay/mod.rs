//! Replays a recorded agent trajectory turn by turn under a context policy, and measures
//! what each request would have cost and what it kept (issue 24's benchmark, and
//! `workmem replay`).
//!
//! A trajectory is the JSONL of `tests/data/trajectories/SOURCES.md`: one message a line,
//! each assistant message one model call. The request of a call is what the policy makes of
//! everything before it. The workmem policies run the real thing: a session on disk, the
//! log, the engine's compaction, the request builder `workmem agent` and `workmem context`
//! use (tool definitions, the guide, the working memory, context_meta), and a stand-in for
//! the model's side of the memory protocol ([`standin`]). Every policy gets the same window;
//! a request over it is unsendable.

mod baseline;
mod chart;
pub mod command;
pub mod facts;
mod meter;
mod proxied;
mod readback;
pub mod shapes;
mod standin;

use anyhow::Result;
pub use meter::MODEL;
use standin::StandIn;
use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::Path;
use std::time::Instant;
use workmem_agent::compact;
use workmem_agent::context::{self, Options};
use workmem_agent::tools::{self, ToolContext};
use workmem_llm::{Message as Wire, Tokenizer};
use workmem_runtime::{HistoryMode, Runtime};
use workmem_store::{Message, Sessions, ToolCall, Usage};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// Every message, every time.
    Full,
    /// Observation masking: tool outputs but the last 5 replaced by a short placeholder
    /// (the baseline of arXiv 2508.21433), rolling.
    Mask,
    /// The same, with a safety net at the same threshold as workmem's (oldest groups dropped).
    MaskNet,
    /// Masking done in batches of 10, so the request is append-only in between.
    MaskBatched,
    MaskBatchedNet,
    /// The system prompt, the task and the last 5 groups.
    LastK,
    /// workmem with its safety net alone (75% of the window), as `workmem agent` runs by
    /// default; the model keeps its memory (the stand-in).
    SafetyNet,
    /// workmem: the compression guide of spec 003 followed by the host (automatic mode),
    /// plus the safety net; the model keeps its memory (the stand-in).
    Workmem,
    /// The same through `workmem proxy --auto-compact`, the agent a Chat Completions client
    /// that sends its whole history every time ([`proxied`]).
    Proxy,
}

impl Policy {
    pub const ALL: [Policy; 9] = [
        Policy::Full,
        Policy::Mask,
        Policy::MaskNet,
        Policy::MaskBatched,
        Policy::MaskBatchedNet,
        Policy::LastK,
        Policy::SafetyNet,
        Policy::Workmem,
        Policy::Proxy,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Policy::Full => "full",
            Policy::Mask => "mask",
            Policy::MaskNet => "mask+net",
            Policy::MaskBatched => "mask-batched",
            Policy::MaskBatchedNet => "mask-batched+net",
            Policy::LastK => "last-k",
            Policy::SafetyNet => "safety-net",
            Policy::Workmem => "workmem",
            Policy::Proxy => "proxy",
        }
    }

    /// Whether it runs workmem's host (a session, its log and tools).
    pub fn is_workmem(self) -> bool {
        matches!(self, Policy::SafetyNet | Policy::Workmem | Policy::Proxy)
    }
}

/// One trajectory under one policy.
#[derive(Debug, Clone, Default)]
pub struct Run {
    /// Tokens of every request, memory updates included, sendable or not.
    pub tokens: Vec<u32>,
    /// Requests over the window.
    pub unsendable: u32,
    /// Tokens of the sendable requests.
    pub total: u64,
    /// The sendable requests' cost with prompt caching, at each of [`meter::PRICES`].
    pub cost: [f64; 2],
    pub compactions: u32,
    /// Milliseconds each compaction took (planning, archive, log).
    pub compaction_ms: Vec<f64>,
    /// Requests with a tool call separated from its result, or without the task.
    pub violations: u32,
    /// The stand-in's memory updates (each one more request), and those refused.
    pub memory_updates: u32,
    pub updates_refused: u32,
    /// Needed facts, those whose identifier the request showed, and those whose whole line
    /// (of the output it first appeared in) it showed.
    pub needed: u32,
    pub kept: u32,
    pub kept_lines: u32,
    /// Recoveries of missing facts (`read_history` calls in the workmem policies), and their
    /// cost at each price point.
    pub recoveries: u32,
    pub recovery_cost: [f64; 2],
    /// The memory updates' cost were each a request of its own (a real model may spend one),
    /// at each price point: the request it rode along with, again, its prefix cached.
    pub update_cost: [f64; 2],
    /// Tool outputs whose first sendable request did not carry them whole (the model got a
    /// placeholder, or nothing, for what it asked for), and those of them no larger than a
    /// quarter of the window.
    pub unseen: u32,
    pub unseen_fit: u32,
    /// Replaced messages followed through their handles, and those that read back whole.
    pub read_back: u32,
    pub read_back_ok: u32,
}

impl Run {
    /// The cost with caching and the recoveries the missing facts take, at price point `at`
    /// ([`meter::PRICES`]), with each memory update a request of its own where `own_updates`.
    pub fn effective(&self, at: usize, own_updates: bool) -> f64 {
        self.cost[at] + self.recovery_cost[at] + if own_updates { self.update_cost[at] } else { 0.0 }
    }
}

fn wire(m: &Message) -> Wire {
    context::to_wire(m)
}

/// Replays `messages` under `policy` with a window of `window` tokens; with `requests`,
/// every request is written there as it would be sent (one JSON body a line).
pub fn replay<'a>(
    messages: &[Message],
    policy: Policy,
    window: u32,
    runtime: &Runtime,
    tokenizer: &'a Tokenizer,
    scratch: &Path,
    requests: Option<&'a mut dyn Write>,
) -> Result<Run> {
    let (system, history) = match messages.first() {
        Some(m) if m.role == "system" => (m.content.as_str(), &messages[1..]),
        _ => ("", messages),
    };
    if policy == Policy::Proxy {
        return proxied::replay(system, history, window, runtime, tokenizer, scratch, requests);
    }
    let needs = facts::needed(system, history);
    let mut meter = meter::Meter::new(tokenizer, window, requests);
    let task = history.iter().position(|m| m.role == "user");
    let mut answered: HashSet<String> = history.iter().filter_map(|m| m.tool_call_id.clone()).collect();
    let options = Options::new(MODEL, serde_json::Value::Null).with_window(window);
    let net = (options.compact_at.unwrap_or(u32::MAX), options.compact_goal);
    if !policy.is_workmem() {
        let mut base = baseline::Baseline::new(policy);
        for (i, _) in history.iter().enumerate().filter(|(_, m)| m.role == "assistant") {
            let request = base.request(system, &history[..i], task, tokenizer, net);
            meter.run.violations += violations(&request, &answered, history);
            let sent = meter.send(&request, None)?;
            meter.outputs(&history[..i], &request, sent);
            meter.facts(&needs[i], &request, sent, |source| Ok(tokenizer.count_message(&wire(&history[source]))))?;
        }
        return Ok(meter.run);
    }

    let sessions = Sessions::new(scratch, scratch);
    let session = sessions.create(None, &runtime.instance()?.overview_template()?)?;
    let mut options = options;
    options.system_prompt = system.to_string();
    options.history = HistoryMode::All;
    options.auto_compact = policy == Policy::Workmem;
    // The trajectory's agent brings its own tools (which no policy is charged for): workmem
    // adds its own, as `workmem proxy` does, and no file tools.
    options.tools = tools::openai_own(options.auto_compact);
    options.memory_files = false;
    let mut engine = runtime.instance()?;
    let mut stand_in = StandIn::default();
    let mut logged = 0;
    let mut sent_any = false;
    // Trajectory positions to log sequence numbers (compactions take numbers too).
    let mut seq_of: HashMap<usize, u64> = HashMap::new();
    for (i, answer) in history.iter().enumerate().filter(|(_, m)| m.role == "assistant") {
        for (k, m) in history.iter().enumerate().take(i).skip(logged) {
            let record = session.append_message(m.clone())?;
            seq_of.insert(k, record.seq);
            // The trajectory's task is its first user message; later ones are the
            // environment's feedback.
            if Some(k) == task {
                options.pinned = vec![record.seq];
            }
            // Its own answers it saw as it wrote them (below).
            if m.role != "assistant" {
                stand_in.saw(m);
            }
        }
        logged = i;
        if sent_any {
            // The last request was answered: one more round, as `workmem agent` counts them.
            session.update_meta(|m| m.rounds += 1)?;
        }
        sent_any = true;
        let mut built = context::build(&session, &mut engine, tokenizer, &options)?;
        let mut compactions = 0;
        loop {
            let started = Instant::now();
            // A request over the window is measured as sent: the policies are held to it alike.
            let done = match compact::before_request(&session, runtime, &mut engine, tokenizer, built.tokens, &options, compactions) {
                Err(workmem_agent::Error::OverWindow { .. }) => None,
                done => done?,
            };
            let Some(_) = done else { break };
            meter.run.compaction_ms.push(started.elapsed().as_secs_f64() * 1000.0);
            meter.run.compactions += 1;
            compactions += 1;
            built = context::build(&session, &mut engine, tokenizer, &options)?;
        }
        meter.run.violations += violations(&built.messages, &answered, history);
        let sent = meter.send(&built.messages, Some(&options.tools))?;
        meter.outputs(&history[..i], &built.messages, sent);
        meter.facts(&needs[i], &built.messages, sent, |source| {
            let seq = seq_of.get(&source).copied().unwrap_or(0);
            let text = compact::read_history(&session, &seq.to_string()).map_err(workmem_agent::Error::Compact)?;
            Ok(tokenizer.count(&text))
        })?;
        let context_meta = built.messages.last().map_or("", |m| m.content.as_str());
        stand_in.saw(answer);
        if !stand_in.asked(context_meta) {
            continue;
        }
        // The model answers with its next step and, as a parallel call beside it, the update the
        // prompt asked for: no request of its own, but its call and answer stay in the history.
        let arguments = serde_json::json!({"dsl": stand_in.update(&session.overview()?)}).to_string();
        let id = format!("call_workmem_update_{}", meter.run.memory_updates + 1);
        let mut answered_with = answer.clone();
        answered_with.tool_calls.push(ToolCall { id: id.clone(), name: "update_memory".into(), arguments: arguments.clone() });
        session.append_reply(answered_with.clone(), Usage { sent: sent.tokens, prompt_tokens: None, completion_tokens: None })?;
        let mut cx = ToolContext { session: &session, runtime, tokenizer, llm: None, board: None, documents: None };
        let out = tools::call(&mut cx, "update_memory", &arguments)?;
        meter.run.memory_updates += 1;
        meter.update(sent);
        meter.run.updates_refused += u32::from(!out.ok);
        session.append_message(Message { tool_call_id: Some(id.clone()), ..Message::new("tool", out.text) })?;
        answered.insert(id);
        logged = i + 1;
    }
    let read = readback::check(&session)?;
    meter.run.read_back = read.checked;
    meter.run.read_back_ok = read.ok;
    Ok(meter.run)
}

/// Pairs broken in `request`: a tool result without its call before it, or a call without
/// the result it was given (`answered`); and a request without the trajectory's task. Written
/// apart from the engine's own check, which planned the request.
fn violations(request: &[Wire], answered: &HashSet<String>, history: &[Message]) -> u32 {
    let mut called: HashSet<&str> = HashSet::new();
    let mut results: HashSet<&str> = HashSet::new();
    let mut bad = 0;
    for m in request {
        called.extend(m.tool_calls.iter().map(|c| c.id.as_str()));
        if let Some(id) = m.tool_call_id.as_deref() {
            results.insert(id);
            bad += u32::from(!called.contains(id));
        }
    }
    // A call made by the last message of the request has its result still to come.
    let last_calls: HashSet<&str> = request.last().map(|m| m.tool_calls.iter().map(|c| c.id.as_str()).collect()).unwrap_or_default();
    bad += u32::try_from(called.iter().filter(|id| answered.contains(**id) && !results.contains(*id) && !last_calls.contains(*id)).count()).unwrap_or(u32::MAX);
    let task = history.iter().find(|m| m.role == "user").map(|m| m.content.as_str());
    bad + u32::from(task.is_some_and(|t| !request.iter().any(|m| m.content == t)))
}
