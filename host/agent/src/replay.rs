//! Replays a recorded agent trajectory turn by turn under a context policy, and measures
//! what each request would have cost (issue 8's benchmark, and `workmem replay`).
//!
//! A trajectory is the JSONL of `shared/data/trajectories/SOURCES.md`: one message a line,
//! each assistant message one model call. The request of a call is what the policy makes of
//! everything before it. The workmem policies run the real thing: a session on disk, the
//! log, the engine's compaction, the request builder.

use crate::compact::{self, Compacted};
use crate::context::{self, Options};
use crate::error::Result;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::Instant;
use workmem_llm::{Message as Wire, Tokenizer};
use workmem_runtime::{HistoryMode, Runtime};
use workmem_store::{Message, Sessions};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// Every message, every time.
    Full,
    /// workmem with the safety net only (75% of the window).
    Fallback,
    /// Observation masking: tool outputs but the last 5 replaced by a short placeholder
    /// (the baseline of arXiv 2508.21433).
    Mask,
    /// The same masking done in batches of 10, so the request is append-only in between.
    MaskBatched,
    /// workmem: the compression guide of spec 003 played by a deterministic stand-in for the
    /// model (automatic mode), plus the safety net.
    Workmem,
}

impl Policy {
    pub const ALL: [Policy; 5] = [Policy::Full, Policy::Fallback, Policy::Mask, Policy::MaskBatched, Policy::Workmem];

    pub fn name(self) -> &'static str {
        match self {
            Policy::Full => "full",
            Policy::Fallback => "fallback",
            Policy::Mask => "mask",
            Policy::MaskBatched => "mask-batched",
            Policy::Workmem => "workmem",
        }
    }
}

/// Prompt caching's prices, in units of one uncached input token: a cached prefix at 0.1,
/// the rest at 1.25 (a cache write).
pub const CACHED: f64 = 0.1;
pub const UNCACHED: f64 = 1.25;

/// Masking keeps this many recent tool outputs (the baseline's setting).
const MASK_KEEP: usize = 5;
const MASK_BATCH: usize = 10;

/// One trajectory under one policy.
#[derive(Debug, Clone, Default)]
pub struct Run {
    /// Request tokens of each model call.
    pub tokens: Vec<u32>,
    /// The requests' cost with prompt caching.
    pub cost: f64,
    pub compactions: u32,
    /// Milliseconds each compaction took (planning, archive, log).
    pub compaction_ms: Vec<f64>,
    /// Requests with a tool call separated from its result, or without the task.
    pub violations: u32,
    /// Messages compacted, and how many of them read back equal to the original.
    pub compacted: u32,
    pub recovered: u32,
}

/// Reads a trajectory. Text-action sources repeat the command of the assistant's text in a
/// derived tool call; its arguments are dropped so they are not counted twice.
pub fn load(path: &Path) -> std::io::Result<Vec<Message>> {
    let text = std::fs::read_to_string(path)?;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let mut m: Message =
            serde_json::from_str(line).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{}:{}: {e}", path.display(), n + 1)))?;
        for c in &mut m.tool_calls {
            let command = serde_json::from_str::<serde_json::Value>(&c.arguments).ok().and_then(|v| v["command"].as_str().map(str::to_string));
            if command.is_some_and(|cmd| !cmd.is_empty() && m.content.contains(cmd.trim())) {
                c.arguments = "{}".into();
            }
        }
        out.push(m);
    }
    Ok(out)
}

fn wire(m: &Message) -> Wire {
    context::from_engine(context::to_engine(m))
}

/// The longest prefix of `request` that `previous` (the last request and its answer)
/// shares, in tokens, at message granularity.
fn cached_prefix(previous: &[(Wire, u32)], request: &[(Wire, u32)]) -> u32 {
    previous.iter().zip(request).take_while(|(a, b)| a.0 == b.0).map(|(a, _)| a.1).sum()
}

/// Replays `messages` under `policy` with a window of `window` tokens.
pub fn replay(messages: &[Message], policy: Policy, window: u32, runtime: &Runtime, tokenizer: &Tokenizer, scratch: &Path) -> Result<Run> {
    let (system, history) = match messages.first() {
        Some(m) if m.role == "system" => (m.content.clone(), &messages[1..]),
        _ => (String::new(), messages),
    };
    let mut run = Run::default();
    let mut previous: Vec<(Wire, u32)> = Vec::new();
    let session = match policy {
        Policy::Fallback | Policy::Workmem => {
            let sessions = Sessions::new(scratch, scratch);
            let template = runtime.instance()?.overview_template()?;
            Some(sessions.create(None, &template)?)
        }
        _ => None,
    };
    let mut options = Options::new("gpt-4o").with_window(window);
    options.system_prompt = system.clone();
    options.history = HistoryMode::All;
    options.tools = serde_json::Value::Null;
    options.auto_compact = policy == Policy::Workmem;
    let mut engine = runtime.instance()?;
    let mut logged = 0;
    let mut masked_upto = 0;
    let task = history.iter().position(|m| m.role == "user");
    let mut seen = HashSet::new();
    // Log sequence numbers to trajectory positions (compactions take numbers too).
    let mut index: HashMap<u64, usize> = HashMap::new();
    for (i, answer) in history.iter().enumerate().filter(|(_, m)| m.role == "assistant") {
        let request: Vec<Wire> = match &session {
            Some(s) => {
                for (k, m) in history.iter().enumerate().take(i).skip(logged) {
                    let record = s.append_message(m.clone())?;
                    index.insert(record.seq, k);
                    // The trajectory's task is its first user message; later ones are the
                    // environment's feedback.
                    if Some(k) == task {
                        options.pinned = vec![record.seq];
                    }
                }
                logged = i;
                let mut built = context::build(s, &mut engine, tokenizer, &options)?;
                for _ in 0..crate::turn::MAX_COMPACTIONS {
                    let started = Instant::now();
                    let Some(done) = compact::before_request(s, runtime, tokenizer, built.tokens, &options)? else { break };
                    run.compaction_ms.push(started.elapsed().as_secs_f64() * 1000.0);
                    run.compactions += 1;
                    count_recovered(s, &done, history, &index, &mut seen, &mut run)?;
                    built = context::build(s, &mut engine, tokenizer, &options)?;
                }
                built.messages
            }
            None => {
                let before = &history[..i];
                let outputs: Vec<usize> = (0..before.len()).filter(|&k| before[k].role == "tool").collect();
                let mask_from = match policy {
                    Policy::Mask => outputs.len().saturating_sub(MASK_KEEP),
                    Policy::MaskBatched => {
                        if outputs.len() >= masked_upto + MASK_KEEP + MASK_BATCH {
                            masked_upto = outputs.len() - MASK_KEEP;
                        }
                        masked_upto
                    }
                    _ => 0,
                };
                let masked: HashSet<usize> = outputs[..mask_from].iter().copied().collect();
                let mut out = vec![Wire::new("system", system.clone())];
                out.extend(before.iter().enumerate().map(|(k, m)| {
                    let mut w = wire(m);
                    if masked.contains(&k) {
                        w.content = "[Old tool output omitted]".into();
                    }
                    w
                }));
                out
            }
        };
        run.violations += violations(&request, history);
        let counted: Vec<(Wire, u32)> = request.into_iter().map(|m| (tokenizer.count_message(&m), m)).map(|(n, m)| (m, n)).collect();
        let total: u32 = counted.iter().map(|c| c.1).sum::<u32>() + 3;
        let cached = cached_prefix(&previous, &counted);
        run.cost += f64::from(cached) * CACHED + f64::from(total - cached) * UNCACHED;
        run.tokens.push(total);
        previous = counted;
        let a = wire(answer);
        let n = tokenizer.count_message(&a);
        previous.push((a, n));
    }
    Ok(run)
}

/// Every compacted original read back from the log and compared with the trajectory (an
/// original compacted twice, as part of a replacement replaced again, counts once).
fn count_recovered(
    session: &workmem_store::Session,
    done: &Compacted,
    history: &[Message],
    index: &HashMap<u64, usize>,
    seen: &mut HashSet<u64>,
    run: &mut Run,
) -> Result<()> {
    for &seq in done.replaced.iter().flatten() {
        if !seen.insert(seq) {
            continue;
        }
        run.compacted += 1;
        let original = session.original(seq)?;
        let expected = index.get(&seq).and_then(|&k| history.get(k));
        if original.is_some() && original.as_ref() == expected {
            run.recovered += 1;
        }
    }
    Ok(())
}

/// Pairs the trajectory had and the request broke: a tool result without its call before
/// it, or a call without the result the trajectory gave it; and a request without the task.
fn violations(request: &[Wire], history: &[Message]) -> u32 {
    let answered: HashSet<&str> = history.iter().filter_map(|m| m.tool_call_id.as_deref()).collect();
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
    bad += u32::try_from(called.iter().filter(|id| answered.contains(*id) && !results.contains(*id) && !last_calls.contains(*id)).count()).unwrap_or(u32::MAX);
    let task = history.iter().find(|m| m.role == "user").map(|m| m.content.as_str());
    bad + u32::from(task.is_some_and(|t| !request.iter().any(|m| m.content == t)))
}
