//! Spec 000 §3 inside the sandbox: everything the memory-update step needs comes through
//! the capabilities the host granted (the model, the session's files, the time).

use crate::workmem::memory::{clock, llm, store};
use crate::{Diagnostic, ERROR, MemoryState, MemoryUpdateReport};
use std::fmt::Write;

const SYSTEM: &str = "You maintain an AI agent's working memory. Answer with the DSL block only, exactly in the \
                      format the user shows, with no other text.";

pub fn memory_update(task: &str, max_reprompts: u32) -> Result<MemoryUpdateReport, String> {
    // A new session has no state.json yet: its memory is the empty one.
    let state: MemoryState = match store::read("state.json") {
        Ok(text) => serde_json::from_str(&text).map_err(|e| format!("state.json is not a memory state: {e}"))?,
        Err(store::StoreError::NotFound) => crate::empty_state(),
        Err(e) => return Err(store_error("state.json", e)),
    };
    let message = |role: &str, content: String| llm::Message { role: role.to_string(), content };
    let mut messages = vec![message("system", SYSTEM.to_string()), message("user", crate::update_prompt(&state, task))];
    let mut tokens = (0u32, 0u32);
    for attempt in 1..=max_reprompts.saturating_add(1) {
        let completion = llm::complete(&messages).map_err(|e| format!("the LLM call failed, so nothing was applied: {}", llm_error(e)))?;
        if let Some(u) = completion.usage {
            tokens = (tokens.0.saturating_add(u.prompt_tokens), tokens.1.saturating_add(u.completion_tokens));
        }
        let answer = completion.text;
        let now = clock::now();
        let outcome = crate::apply(state.clone(), &answer, &now);
        if outcome.ok {
            let mut report = persist(outcome.merged, outcome.diagnostics, attempt, &answer, &now)?;
            (report.prompt_tokens, report.completion_tokens) = tokens;
            return Ok(report);
        }
        if attempt > max_reprompts {
            return Err(format!("the LLM's answer was still invalid after {attempt} attempts; nothing was applied:\n{}", problems(&outcome.diagnostics)));
        }
        messages.push(message("assistant", answer));
        messages.push(message("user", correction(&outcome.diagnostics)));
    }
    unreachable!("the loop returns on its last attempt")
}

fn persist(merged: crate::MergeOutcome, warnings: Vec<Diagnostic>, attempts: u32, input: &str, now: &str) -> Result<MemoryUpdateReport, String> {
    let state = serde_json::to_string_pretty(&merged.state).map_err(|e| e.to_string())? + "\n";
    store::write("state.json", &state).map_err(|e| store_error("state.json", e))?;
    store::write("working-memory/overview.md", &crate::render(&merged.state)).map_err(|e| store_error("overview.md", e))?;
    let entry = serde_json::json!({
        "at": now, "added": merged.added, "archived": merged.archived, "ignored": merged.ignored,
        "diff": merged.diff, "input": input,
    });
    store::append("updates.jsonl", &format!("{entry}\n")).map_err(|e| store_error("updates.jsonl", e))?;
    let warnings = warnings.iter().map(|d| format!("line {}, column {}: {}", d.line, d.column, d.message)).collect();
    Ok(MemoryUpdateReport {
        attempts,
        prompt_tokens: 0,
        completion_tokens: 0,
        diff: merged.diff,
        added: merged.added,
        archived: merged.archived,
        ignored: merged.ignored,
        warnings,
    })
}

/// The re-prompt: every problem with its position, then the request to answer again.
fn correction(diagnostics: &[Diagnostic]) -> String {
    format!("Your answer could not be applied:\n{}Answer again with the complete, corrected DSL block and nothing else.", problems(diagnostics))
}

fn problems(diagnostics: &[Diagnostic]) -> String {
    let mut s = String::new();
    for d in diagnostics.iter().filter(|d| d.severity == ERROR) {
        let _ = writeln!(s, "- line {}, column {}: {}", d.line, d.column, d.message);
    }
    s
}

fn llm_error(e: llm::LlmError) -> String {
    match e {
        llm::LlmError::Timeout => "the LLM did not answer within the host's deadline".into(),
        llm::LlmError::RateLimited => "the LLM provider is rate limiting requests (HTTP 429)".into(),
        llm::LlmError::HttpStatus(status) => format!("the LLM provider answered HTTP {status}"),
        llm::LlmError::Other(message) => message,
    }
}

fn store_error(path: &str, e: store::StoreError) -> String {
    match e {
        store::StoreError::NotFound => format!("{path} does not exist"),
        store::StoreError::Refused(why) | store::StoreError::Other(why) => format!("{path}: {why}"),
    }
}
