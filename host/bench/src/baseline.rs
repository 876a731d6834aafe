//! The baselines a user would pick instead of workmem, each as a request builder over the
//! trajectory so far: observation masking (rolling or in batches), last-k truncation, and
//! masking with a fallback of its own at the same threshold as workmem's.

use crate::policy::{Policy, wire};
use workmem_llm::{Message as Wire, Tokenizer};
use workmem_store::Message;

/// Masking keeps this many recent tool outputs (the setting of arXiv 2508.21433).
pub const MASK_KEEP: usize = 5;
/// Batched masking masks this many more at once, so the request is append-only in between.
pub const MASK_BATCH: usize = 10;
/// Last-k truncation keeps this many groups besides the system prompt and the task.
pub const LAST_K: usize = 5;

pub const MASKED: &str = "[Old tool output omitted]";

/// What a baseline remembers between requests.
pub struct Baseline {
    policy: Policy,
    /// Batched masking: tool outputs before this one are masked.
    masked_upto: usize,
    /// The fallback: messages before this index are dropped (the task aside). It only
    /// moves forward, so the request stays append-only between two cuts, as workmem's does.
    cut: usize,
}

/// Where groups start: a message that is not a tool result.
fn group_starts(before: &[Message]) -> Vec<usize> {
    (0..before.len()).filter(|&k| before[k].role != "tool").collect()
}

impl Baseline {
    pub fn new(policy: Policy) -> Self {
        Baseline { policy, masked_upto: 0, cut: 0 }
    }

    /// The request before the model call that answered `before`: its system prompt, then
    /// what the policy keeps of `before`. `task` is the trajectory's first user message.
    pub fn request(&mut self, system: &str, before: &[Message], task: Option<usize>, tokenizer: &Tokenizer, net: (u32, u32)) -> Vec<Wire> {
        let outputs: Vec<usize> = (0..before.len()).filter(|&k| before[k].role == "tool").collect();
        let mask_from = match self.policy {
            Policy::Mask | Policy::MaskFallback => outputs.len().saturating_sub(MASK_KEEP),
            Policy::MaskBatched | Policy::MaskBatchedFallback => {
                if outputs.len() >= self.masked_upto + MASK_KEEP + MASK_BATCH {
                    self.masked_upto = outputs.len() - MASK_KEEP;
                }
                self.masked_upto
            }
            _ => 0,
        };
        let masked = &outputs[..mask_from];
        let shown = |k: usize| {
            let mut w = wire(&before[k]);
            if masked.binary_search(&k).is_ok() {
                w.content = MASKED.into();
            }
            w
        };
        let from = match self.policy {
            Policy::LastK => {
                let starts = group_starts(before);
                starts.len().checked_sub(LAST_K).map_or(0, |i| starts[i])
            }
            Policy::MaskFallback | Policy::MaskBatchedFallback => self.net(system, before, task, tokenizer, net, &shown),
            _ => 0,
        };
        let mut out = vec![Wire::new("system", system)];
        out.extend(task.filter(|&t| t < from).map(shown));
        out.extend((from..before.len()).map(shown));
        out
    }

    /// The fallback of a masking baseline: once the request would reach `threshold`, the
    /// oldest groups are dropped until it is at `goal` or only the last group is left.
    fn net(
        &mut self,
        system: &str,
        before: &[Message],
        task: Option<usize>,
        tokenizer: &Tokenizer,
        (threshold, goal): (u32, u32),
        shown: &dyn Fn(usize) -> Wire,
    ) -> usize {
        let size = |from: usize| {
            let fixed = tokenizer.count_message(&Wire::new("system", system)) + 3;
            let task = task.filter(|&t| t < from).map_or(0, |t| tokenizer.count_message(&shown(t)));
            fixed + task + (from..before.len()).map(|k| tokenizer.count_message(&shown(k))).sum::<u32>()
        };
        if size(self.cut) < threshold {
            return self.cut;
        }
        let starts = group_starts(before);
        let last = starts.last().copied().unwrap_or(0);
        let from = self.cut;
        for &s in starts.iter().filter(|&&s| s > from) {
            self.cut = s;
            if s >= last || size(s) <= goal {
                break;
            }
        }
        self.cut
    }
}
