//! The context policies a replay compares, and what a run of one measures.

use std::collections::HashSet;
use workmem_agent::context;
use workmem_llm::Message as Wire;
use workmem_store::Message;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// Every message, every time.
    Full,
    /// Observation masking: tool outputs but the last 5 replaced by a short placeholder
    /// (the baseline of arXiv 2508.21433), rolling.
    Mask,
    /// The same, with a fallback at the same threshold as workmem's (oldest groups dropped).
    MaskFallback,
    /// Masking done in batches of 10, so the request is append-only in between.
    MaskBatched,
    MaskBatchedFallback,
    /// The system prompt, the task and the last 5 groups.
    LastK,
    /// workmem with its fallback alone (75% of the window), as `workmem agent` runs by
    /// default; the model keeps its memory (the stand-in).
    Fallback,
    /// workmem: the compression guide of spec 003 followed by the host (automatic mode),
    /// plus the fallback; the model keeps its memory (the stand-in).
    Workmem,
    /// The same through `workmem proxy --auto-compact`, the agent a Chat Completions client
    /// that sends its whole history every time ([`proxied`]).
    Proxy,
}

impl Policy {
    pub const ALL: [Policy; 9] = [
        Policy::Full,
        Policy::Mask,
        Policy::MaskFallback,
        Policy::MaskBatched,
        Policy::MaskBatchedFallback,
        Policy::LastK,
        Policy::Fallback,
        Policy::Workmem,
        Policy::Proxy,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Policy::Full => "full",
            Policy::Mask => "mask",
            Policy::MaskFallback => "mask+fallback",
            Policy::MaskBatched => "mask-batched",
            Policy::MaskBatchedFallback => "mask-batched+fallback",
            Policy::LastK => "last-k",
            Policy::Fallback => "fallback",
            Policy::Workmem => "workmem",
            Policy::Proxy => "proxy",
        }
    }

    /// Whether it runs workmem's host (a session, its log and tools).
    pub fn is_workmem(self) -> bool {
        matches!(self, Policy::Fallback | Policy::Workmem | Policy::Proxy)
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

/// A logged message as a request carries it.
pub(crate) fn wire(m: &Message) -> Wire {
    context::to_wire(m)
}

/// Pairs broken in `request`: a tool result without its call before it, or a call without
/// the result it was given (`answered`); and a request without the trajectory's task. Written
/// apart from the engine's own check, which planned the request.
pub(crate) fn violations(request: &[Wire], answered: &HashSet<String>, history: &[Message]) -> u32 {
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
