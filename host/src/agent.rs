//! A minimal agent loop: each step assembles the request (working memory injected,
//! context_meta last), asks the LLM with the memory tools, runs the tools it calls, and
//! records every message in messages.jsonl, until the model answers without a tool call.
//! The LLM keeps its memory either as free-form files (`write_file`) or through the DSL
//! (`update_memory`); both are checked by the host before anything is written.

use crate::context::{self, Tokenizer};
use crate::engine::Instance;
use crate::error::{Error, Result};
use crate::llm::{Client, Message, ToolCall};
use crate::session::Session;
use crate::store::MEMORY_DIR;
use serde_json::{Value, json};

/// The tools offered on every request (Chat Completions `tools`).
pub fn tools() -> Value {
    let function = |name: &str, description: &str, parameters: Value| {
        json!({"type": "function", "function": {"name": name, "description": description, "parameters": parameters}})
    };
    let path = json!({"type": "string", "description": "relative to the session directory, under working-memory/"});
    json!([
        function("read_file", "Read a working-memory file, e.g. working-memory/detail/notes.md.",
            json!({"type": "object", "properties": {"path": path}, "required": ["path"]})),
        function("write_file", "Replace a working-memory file: working-memory/overview.md (injected into every request), or files under working-memory/detail/ and working-memory/archive/ (read on demand).",
            json!({"type": "object", "properties": {"path": path, "content": {"type": "string"}}, "required": ["path", "content"]})),
        function("list_files", "List the files under a working-memory folder.",
            json!({"type": "object", "properties": {"path": path}})),
        function("update_memory", "Update the structured memory with the DSL (CURRENT_PROGRESS / KEY_LEARNINGS / VERBATIM_CONTEXT); it re-renders working-memory/overview.md.",
            json!({"type": "object", "properties": {"dsl": {"type": "string"}}, "required": ["dsl"]})),
    ])
}

#[derive(Debug, Clone)]
pub struct Options {
    pub context: context::Options,
    /// LLM calls one turn may make before it is stopped.
    pub max_steps: u32,
}

/// What a turn did, as it happens.
#[derive(Debug, Clone)]
pub enum Event {
    /// A tool ran; `ok` is false when it was refused or failed (the model is told why).
    Tool { name: String, arguments: String, ok: bool, result: String },
    /// The model's answer, which ends the turn.
    Answer(String),
}

/// One user turn. Returns the model's answer.
pub fn turn(
    session: &Session,
    engine: &mut Instance,
    llm: &Client,
    options: &Options,
    task: &str,
    on_event: &mut dyn FnMut(&Event),
) -> Result<String> {
    let tokenizer = Tokenizer::for_model(&options.context.model);
    let tools = tools();
    session.append_message(&Message::new("user", task))?;
    for _ in 0..options.max_steps {
        let built = context::build(session, engine, &tokenizer, &options.context)?;
        let reply = llm.complete_with_tools(&built.messages, Some(&tools))?;
        let sent = i64::from(tokenizer.count_chat(&built.messages));
        session.update_meta(|m| {
            m.rounds += 1;
            // Our count of what we sent, against the provider's: the difference corrects the next.
            if let Some(usage) = reply.usage {
                m.token_correction = i64::from(usage.prompt_tokens) - sent;
            }
        })?;
        session.append_message(&Message { tool_calls: reply.tool_calls.clone(), ..Message::new("assistant", reply.text.clone()) })?;
        if reply.tool_calls.is_empty() {
            on_event(&Event::Answer(reply.text.clone()));
            return Ok(reply.text);
        }
        for call in &reply.tool_calls {
            let (ok, result) = run_tool(session, engine, call)?;
            on_event(&Event::Tool { name: call.function.name.clone(), arguments: call.function.arguments.clone(), ok, result: result.clone() });
            session.append_message(&Message { tool_call_id: Some(call.id.clone()), ..Message::new("tool", result) })?;
        }
    }
    Err(Error::Session(format!("the agent stopped after {} LLM calls without an answer", options.max_steps)))
}

/// Runs one tool call. Refusals and bad arguments are answers to the model, not errors of
/// the loop; only a failure of the host itself (I/O, a trap) ends the turn.
fn run_tool(session: &Session, engine: &mut Instance, call: &ToolCall) -> Result<(bool, String)> {
    let args: Value = match serde_json::from_str(&call.function.arguments) {
        Ok(v) => v,
        Err(e) => return Ok((false, format!("error: the arguments are not JSON: {e}"))),
    };
    let arg = |name: &str| args[name].as_str();
    let files = session.memory_files();
    let done = |r: std::result::Result<String, crate::store::PathError>| match r {
        Ok(text) => (true, text),
        Err(e) => (false, format!("error: {e}")),
    };
    Ok(match (call.function.name.as_str(), arg("path"), arg("content"), arg("dsl")) {
        ("read_file", Some(path), _, _) => done(files.read(path)),
        ("list_files", path, _, _) => done(files.list(path.unwrap_or(MEMORY_DIR)).map(|names| names.join("\n"))),
        ("write_file", Some(path), Some(content), _) => {
            let written = done(files.write(path, content).map(|()| format!("wrote {} bytes to {path}", content.len())));
            if written.0 {
                session.update_meta(|m| m.memory_updated_round = m.rounds)?;
            }
            written
        }
        ("update_memory", _, _, Some(dsl)) => match session.apply(engine, dsl) {
            Ok(report) => (true, format!("applied:\n{}", report.diff)),
            Err(Error::InvalidDsl(diagnostics)) => {
                let mut text = String::from("The update was refused and the memory is unchanged:\n");
                for d in diagnostics.iter().filter(|d| d.severity == "error") {
                    text.push_str(&format!("- line {}, column {}: {}\n", d.line, d.column, d.message));
                }
                text.push_str("Call update_memory again with the corrected DSL.");
                (false, text)
            }
            Err(e) => return Err(e),
        },
        (name @ ("read_file" | "write_file" | "update_memory"), ..) => {
            (false, format!("error: missing or non-string arguments for {name}"))
        }
        (name, ..) => (false, format!("error: there is no tool named {name:?}")),
    })
}
