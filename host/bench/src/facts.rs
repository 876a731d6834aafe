//! Needed facts: a measure of what a context policy keeps, defined from the trajectory alone
//! and blind to the policy (issue 24).
//!
//! A fact is an identifier the recorded agent's action at step *t* uses (its text and its
//! tool calls' arguments) that first appeared in an earlier tool output: not in the system
//! prompt, the task or the agent's own earlier words. An identifier is a word of path
//! characters that reads as a name rather than as prose: a path (`a/b`), a file name
//! (`models.py`), a snake_case or dotted name, a CamelCase name (`ValueError`), or a number
//! of three digits or more (a line, a count, a version). A request keeps the fact when the
//! identifier appears anywhere in it (messages, placeholders, summaries, the memory).
//!
//! Line recall is stricter: the whole line of the output in which the identifier first
//! appeared is in the request, as it was. A placeholder or a memory that names the identifier
//! keeps the fact, not the line (a path, not what the output said of it).
//!
//! Its limits: there is no model here, so this stands in for quality and is not a solve
//! rate. An identifier counts as kept when it is visible, whatever the sentence around it
//! said; an action that needed a fact it did not name is not seen; words shorter than four
//! characters are not facts.

use std::collections::HashMap;
use workmem_store::Message;

/// One fact an action needs, the tool output (its index in the history) it came from, and
/// the line of that output it first appeared in (trimmed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Need {
    pub text: String,
    pub source: usize,
    pub line: String,
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-')
}

fn reads_as_name(w: &str) -> bool {
    if w.len() < 4 {
        return false;
    }
    let digits = w.chars().filter(char::is_ascii_digit).count();
    if w.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return digits >= 3;
    }
    if !w.chars().any(|c| c.is_ascii_alphabetic()) {
        return false;
    }
    let camel = w.as_bytes().windows(2).any(|p| p[0].is_ascii_lowercase() && p[1].is_ascii_uppercase());
    let dotted = w.split('.').filter(|p| !p.is_empty()).count() >= 2;
    w.contains('/') || w.contains('_') || dotted || camel
}

/// The identifiers of a text, each once, in order.
pub fn identifiers(text: &str) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for word in text.split(|c: char| !is_word_char(c)) {
        let w = word.trim_matches(|c: char| matches!(c, '.' | '-' | '/'));
        if reads_as_name(w) && !out.contains(&w) {
            out.push(w);
        }
    }
    out
}

fn action_text(m: &Message) -> String {
    let mut text = m.content.clone();
    for c in &m.tool_calls {
        text.push('\n');
        text.push_str(&c.arguments);
    }
    text
}

/// For each message of `history` (the trajectory without its system prompt), the facts it
/// needs: empty but for assistant messages. `system` and the task never hold facts.
pub fn needed(system: &str, history: &[Message]) -> Vec<Vec<Need>> {
    // Where each identifier first appeared: a tool output (its index and line), or elsewhere
    // (None).
    let mut first: HashMap<String, Option<(usize, String)>> = HashMap::new();
    for w in identifiers(system) {
        first.insert(w.to_string(), None);
    }
    let mut out = Vec::with_capacity(history.len());
    for (k, m) in history.iter().enumerate() {
        let text = action_text(m);
        let mut needs = Vec::new();
        for w in identifiers(&text) {
            if m.role == "assistant"
                && let Some(Some((source, line))) = first.get(w)
            {
                needs.push(Need { text: w.to_string(), source: *source, line: line.clone() });
            }
            first.entry(w.to_string()).or_insert_with(|| {
                let line = || m.content.lines().find(|l| l.contains(w)).unwrap_or_default().trim().to_string();
                (m.role == "tool").then(|| (k, line()))
            });
        }
        out.push(needs);
    }
    out
}

/// The text of a request as a fact is looked for in it.
pub fn visible_text<'a>(messages: impl IntoIterator<Item = &'a workmem_llm::Message>) -> String {
    let mut text = String::new();
    for m in messages {
        text.push_str(&m.content);
        text.push('\n');
        for c in &m.tool_calls {
            text.push_str(&c.function.arguments);
            text.push('\n');
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_not_prose() {
        let ids = identifiers("Open django/db/models.py: ValueError in get_prep_value at line 1234, not in the word because. v1.2");
        assert_eq!(ids, ["django/db/models.py", "ValueError", "get_prep_value", "1234", "v1.2"]);
    }

    #[test]
    fn a_fact_first_seen_in_a_tool_output() {
        let call = |id: &str| workmem_store::ToolCall { id: id.into(), name: "bash".into(), arguments: "{}".into() };
        let history = vec![
            Message::new("user", "fix parse_header in http/util.py"),
            Message { tool_calls: vec![call("a")], ..Message::new("assistant", "grep for parse_header") },
            Message { tool_call_id: Some("a".into()), ..Message::new("tool", "http/util.py:12 calls split_header_words") },
            Message { tool_calls: vec![call("b")], ..Message::new("assistant", "look at split_header_words and parse_header") },
        ];
        let needs = needed("", &history);
        let line = "http/util.py:12 calls split_header_words".to_string();
        assert_eq!(needs[3], [Need { text: "split_header_words".into(), source: 2, line }], "the task's words are not facts");
        assert!(needs[1].is_empty() && needs[2].is_empty());
    }
}
