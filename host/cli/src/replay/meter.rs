//! What a policy's requests cost, counted one way for every policy: each request as it
//! would be sent (tool definitions included), the window it must fit, prompt caching, and
//! the recoveries a missing fact would take.

use super::Run;
use super::facts::{Need, visible_text};
use std::io::Write;
use workmem_agent::{Error, Result};
use workmem_llm::{Message as Wire, Tokenizer};

/// Prompt caching's prices, in units of one uncached input token: a cached prefix at 0.1,
/// the rest at 1.25 (a cache write).
pub const CACHED: f64 = 0.1;
pub const UNCACHED: f64 = 1.25;

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
        Meter { tokenizer, window, previous: Vec::new(), requests, run: Run::default() }
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
        self.run.cost += f64::from(cached) * CACHED + f64::from(tokens - cached) * UNCACHED;
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
            if text.contains(&need.text) {
                self.run.kept += 1;
            } else if !sources.contains(&need.source) {
                sources.push(need.source);
            }
        }
        for source in sources {
            let output = recover(source)?;
            self.run.recoveries += 1;
            self.run.recovery_cost += f64::from(sent.tokens) * CACHED + f64::from(output) * UNCACHED;
        }
        Ok(())
    }
}
