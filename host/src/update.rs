//! The memory-update step of spec 000 §3 against a real LLM: build the unified prompt from
//! the session's memory, ask, parse and validate the answer, re-prompt with the diagnostics
//! while it is malformed (a bounded number of times), then apply, persist and log. On any
//! failure the stored memory is unchanged and the error says why.

use crate::engine::{Diagnostic, Instance};
use crate::error::{Error, Result};
use crate::llm::{Client, Message, Usage};
use crate::session::{Report, Session};

/// How many times a malformed answer is sent back for correction (spec: bounded, default 2).
pub const DEFAULT_REPROMPTS: u32 = 2;

const SYSTEM: &str = "You maintain an AI agent's working memory. Answer with the DSL block only, exactly in \
                      the format the user shows, with no other text.";

/// What an update did.
#[derive(Debug)]
pub struct Updated {
    pub report: Report,
    /// LLM calls made, the first one included.
    pub attempts: u32,
    /// Provider-reported usage, summed over the attempts that reported it.
    pub usage: Option<Usage>,
}

pub fn run(session: &Session, engine: &mut Instance, llm: &Client, task: &str, max_reprompts: u32) -> Result<Updated> {
    let state = session.state()?;
    let mut messages = vec![Message::new("system", SYSTEM), Message::new("user", engine.update_prompt(&state, task)?)];
    let mut usage: Option<Usage> = None;
    for attempt in 1..=max_reprompts + 1 {
        let answer = llm.complete(&messages)?;
        if let Some(u) = answer.usage {
            let total = usage.get_or_insert_with(Usage::default);
            total.prompt_tokens += u.prompt_tokens;
            total.completion_tokens += u.completion_tokens;
            total.total_tokens += u.total_tokens;
        }
        let checked = engine.validate(&answer.text, &state)?;
        if checked.ok {
            // apply validates again under the session's lock, against the state as it is then.
            let report = session.apply(engine, &answer.text)?;
            return Ok(Updated { report, attempts: attempt, usage });
        }
        if attempt > max_reprompts {
            return Err(Error::GaveUp { attempts: attempt, diagnostics: checked.diagnostics });
        }
        messages.push(Message::new("assistant", answer.text));
        messages.push(Message::new("user", correction(&checked.diagnostics)));
    }
    unreachable!("the loop returns on its last attempt")
}

/// The re-prompt: every problem with its position, then the request to answer again.
pub fn correction(diagnostics: &[Diagnostic]) -> String {
    let mut s = String::from("Your answer could not be applied:\n");
    for d in diagnostics.iter().filter(|d| d.severity == "error") {
        s.push_str(&format!("- line {}, column {}: {}\n", d.line, d.column, d.message));
    }
    s.push_str("Answer again with the complete, corrected DSL block and nothing else.");
    s
}
