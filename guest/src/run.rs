//! Spec 000 §3 as steps: the run says what to ask the model, the host asks with whatever
//! client it has and hands the answer back, and the run decides what comes next. Hosts with
//! async clients drive it directly; the agent world drives it with its imports.

use crate::memory::{Applied, Memory, Wants};
use crate::{Diagnostic, ERROR};
use std::fmt::Write;

const SYSTEM: &str = "You maintain an AI agent's working memory. Answer with the DSL block only, exactly in the \
                      format the user shows, with no other text.";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub role: String,
    pub content: String,
}

fn message(role: &str, content: String) -> Message {
    Message { role: role.to_string(), content }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// The answer was malformed; the correction is in the conversation: ask again.
    Retry(Vec<Diagnostic>),
    Applied(Applied),
    /// Still malformed after every re-prompt (or the run had ended): nothing applied.
    GaveUp(Vec<Diagnostic>),
}

#[derive(Debug, Clone)]
pub struct UpdateRun {
    messages: Vec<Message>,
    attempts: u32,
    max_reprompts: u32,
    done: bool,
}

impl UpdateRun {
    pub fn new(memory: &Memory, task: &str, max_reprompts: u32) -> Self {
        let messages = vec![message("system", SYSTEM.to_string()), message("user", memory.update_prompt(task))];
        UpdateRun { messages, attempts: 0, max_reprompts, done: false }
    }

    pub fn request(&self) -> &[Message] {
        &self.messages
    }

    /// Answers handed back so far.
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    pub fn answer(&mut self, memory: &mut Memory, text: &str, now: &str, wants: Wants) -> Step {
        if self.done {
            return Step::GaveUp(Vec::new());
        }
        self.attempts += 1;
        match memory.apply(text, now, wants) {
            Ok(applied) => {
                self.done = true;
                Step::Applied(applied)
            }
            Err(diagnostics) if self.attempts > self.max_reprompts => {
                self.done = true;
                Step::GaveUp(diagnostics)
            }
            Err(diagnostics) => {
                self.messages.push(message("assistant", echo(text)));
                self.messages.push(message("user", correction(&diagnostics)));
                Step::Retry(diagnostics)
            }
        }
    }
}

/// What a re-prompt repeats of a malformed answer: enough for the model to see what it
/// wrote, never a junk answer's megabytes on every attempt.
pub const MAX_ECHO_BYTES: usize = 64 << 10;

fn echo(text: &str) -> String {
    if text.len() <= MAX_ECHO_BYTES {
        return text.to_string();
    }
    let end = text.floor_char_boundary(MAX_ECHO_BYTES);
    format!("{}\n[... the other {} bytes of this answer are left out]", &text[..end], text.len() - end)
}

/// The re-prompt: every problem with its position, then the request to answer again.
fn correction(diagnostics: &[Diagnostic]) -> String {
    format!("Your answer could not be applied:\n{}Answer again with the complete, corrected DSL block and nothing else.", problems(diagnostics))
}

/// `- line L, column C: message` for each error.
pub fn problems(diagnostics: &[Diagnostic]) -> String {
    let mut s = String::new();
    for d in diagnostics.iter().filter(|d| d.severity == ERROR) {
        let _ = writeln!(s, "- line {}, column {}: {}", d.line, d.column, d.message);
    }
    s
}
