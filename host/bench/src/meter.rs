//! What a policy's requests cost, counted one way for every policy: each request as it
//! would be sent (tool definitions included), the window it must fit, prompt caching, and
//! the recoveries a missing fact would take.

use crate::Run;
use crate::facts::{Need, visible_text};
use std::io::Write;
use workmem_agent::{Error, Result};
use workmem_llm::{Message as Wire, Tokenizer};

/// Prompt caching's prices, in units of one uncached input token, (cached prefix, the rest):
/// Anthropic's (a cached read at 0.1, a cache write at 1.25) and OpenAI's (a cached read at
/// half price, no charge for writing). Every cost is counted at both: which policy costs less
/// can turn on the price of the cache.
pub const PRICES: [(f64, f64); 2] = [(0.1, 1.25), (0.5, 1.0)];

/// `tokens` of which `cached` were a cached prefix, at each of [`PRICES`].
fn priced(cached: u32, tokens: u32) -> [f64; 2] {
    PRICES.map(|(c, u)| f64::from(cached) * c + f64::from(tokens.saturating_sub(cached)) * u)
}

fn add(to: &mut [f64; 2], more: [f64; 2]) {
    to[0] += more[0];
    to[1] += more[1];
}

/// The model whose tokenizer counts, and whose name the written requests carry.
pub const MODEL: &str = "gpt-4o";

pub struct Meter<'a> {
    tokenizer: &'a Tokenizer,
    window: u32,
    /// The last request as the provider renders it (tool definitions, then messages): what
    /// the next request can find cached. A provider caches the prompts it processed, not the
    /// answers it wrote, so the answer is not part of it (issue 8's figures counted it, which
    /// favoured the policies that put nothing after the history).
    previous: Vec<(Wire, u32)>,
    requests: Option<&'a mut dyn Write>,
    /// Tool outputs (by call ID) whose first sendable request has been counted.
    judged: std::collections::HashSet<String>,
    pub run: Run,
}

/// One request, sent or not.
#[derive(Debug, Clone, Copy)]
pub struct Sent {
    pub tokens: u32,
    pub sendable: bool,
}

impl<'a> Meter<'a> {
    pub fn new(tokenizer: &'a Tokenizer, window: u32, requests: Option<&'a mut dyn Write>) -> Self {
        Meter { tokenizer, window, previous: Vec::new(), requests, judged: Default::default(), run: Run::default() }
    }

    /// A request of `messages` offering `tools`. One over the window is unsendable: it is
    /// counted as such, not as tokens, and caches nothing.
    pub fn send(&mut self, messages: &[Wire], tools: Option<&serde_json::Value>) -> Result<Sent> {
        if let Some(out) = self.requests.as_deref_mut() {
            let mut line = serde_json::to_vec(&workmem_llm::chat_body(MODEL, messages, tools)).map_err(|e| Error::Requests(e.into()))?;
            line.push(b'\n');
            out.write_all(&line).map_err(Error::Requests)?;
        }
        let tools_tokens = tools.map_or(0, |t| self.tokenizer.count_tools(t));
        let mut rendered: Vec<(Wire, u32)> = Vec::with_capacity(messages.len() + 1);
        if tools_tokens > 0 {
            rendered.push((Wire::new("tools", tools.map(ToString::to_string).unwrap_or_default()), tools_tokens));
        }
        rendered.extend(messages.iter().map(|m| (m.clone(), self.tokenizer.count_message(m))));
        let tokens = rendered.iter().map(|r| r.1).sum::<u32>() + 3;
        self.run.tokens.push(tokens);
        if tokens > self.window {
            self.run.unsendable += 1;
            self.previous.clear();
            return Ok(Sent { tokens, sendable: false });
        }
        let cached: u32 = self.previous.iter().zip(&rendered).take_while(|(a, b)| a.0 == b.0).map(|(a, _)| a.1).sum();
        add(&mut self.run.cost, priced(cached, tokens));
        self.run.total += u64::from(tokens);
        self.previous = rendered;
        Ok(Sent { tokens, sendable: true })
    }

    /// The facts the recorded action after `request` needs: each one visible in it is kept;
    /// each tool output a missing one came from costs a recovery (one more request: this
    /// one, cached, and the output's tokens, which `recover` gives: a `read_history` where the
    /// policy offers one, the output again where it does not).
    pub fn facts(&mut self, needs: &[Need], request: &[Wire], sent: Sent, mut recover: impl FnMut(usize) -> Result<u32>) -> Result<()> {
        if needs.is_empty() {
            return Ok(());
        }
        self.run.needed += u32::try_from(needs.len()).unwrap_or(u32::MAX);
        if !sent.sendable {
            return Ok(());
        }
        let text = visible_text(request);
        let mut sources: Vec<usize> = Vec::new();
        for need in needs {
            self.run.kept_lines += u32::from(!need.line.is_empty() && text.contains(&need.line));
            if text.contains(&need.text) {
                self.run.kept += 1;
            } else if !sources.contains(&need.source) {
                sources.push(need.source);
            }
        }
        for source in sources {
            let output = recover(source)?;
            self.run.recoveries += 1;
            add(&mut self.run.recovery_cost, priced(sent.tokens, sent.tokens + output));
        }
        Ok(())
    }

    /// A request the policy would not send (over the window however compacted): unsendable,
    /// and its needed facts kept by none of it.
    pub fn unsent(&mut self, needs: &[Need]) {
        self.run.unsendable += 1;
        self.run.needed += u32::try_from(needs.len()).unwrap_or(u32::MAX);
        self.previous.clear();
    }

    /// A memory update that rode along with `sent`, priced as a request of its own: the same
    /// request again, all of it cached.
    pub fn update(&mut self, sent: Sent) {
        if sent.sendable {
            add(&mut self.run.update_cost, priced(sent.tokens, sent.tokens));
        }
    }

    /// The tool outputs of `history` (the trajectory's, as recorded) that no request before
    /// `request` was sent: each counts as unseen unless `request` carries it whole. Judged at
    /// the first sendable request after it.
    pub fn outputs(&mut self, history: &[workmem_store::Message], request: &[Wire], sent: Sent) {
        if !sent.sendable {
            return;
        }
        let carried: std::collections::HashMap<&str, &str> = request.iter().filter_map(|m| Some((m.tool_call_id.as_deref()?, m.content.as_str()))).collect();
        for m in history.iter().filter(|m| m.role == "tool") {
            let Some(id) = m.tool_call_id.as_deref() else { continue };
            if self.judged.contains(id) {
                continue;
            }
            self.judged.insert(id.to_string());
            if carried.get(id) == Some(&m.content.as_str()) {
                continue;
            }
            self.run.unseen += 1;
            self.run.unseen_fit += u32::from(self.tokenizer.count(&m.content) <= self.window / 4);
        }
    }
}
