//! One trajectory replayed under one policy (see the crate's documentation).

use crate::meter::MODEL;
use crate::policy::{Policy, Run, violations, wire};
use crate::standin::StandIn;
use crate::{baseline, facts, meter, proxied, readback};
use anyhow::Result;
use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::Path;
use std::time::Instant;
use workmem_agent::compact;
use workmem_agent::context::{self, Options};
use workmem_agent::tools::{self, ToolContext};
use workmem_llm::Tokenizer;
use workmem_runtime::{HistoryMode, Runtime};
use workmem_store::{Durability, Message, Sessions, ToolCall, Usage};

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
        answered_with.tool_calls.push(ToolCall { id: id.clone(), name: workmem_agent::tools::UPDATE_MEMORY.into(), arguments: arguments.clone() });
        session.append_reply(answered_with.clone(), Usage { sent: sent.tokens, prompt_tokens: None, completion_tokens: None }, Durability::Synced)?;
        let mut cx = ToolContext { session: &session, runtime, tokenizer, llm: None, board: None, documents: None };
        let out = tools::call(&mut cx, tools::UPDATE_MEMORY, &arguments)?;
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
