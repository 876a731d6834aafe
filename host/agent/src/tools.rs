//! The tools an LLM can call, each defined once: name, description, JSON schema of its
//! arguments, and handler. The OpenAI `tools` array is generated from this registry, and the
//! loop dispatches through it, so adding a tool is adding one entry.

use crate::error::Result;
use serde_json::{Map, Value, json};
use workmem_runtime::{Runtime, Severity};
use workmem_store::{MEMORY_DIR, PathError, Session};

/// What a tool handler works on.
pub struct ToolContext<'a> {
    pub session: &'a Session,
    pub runtime: &'a Runtime,
}

/// A tool's answer to the model. `ok` is false when it was refused or failed; the text then
/// says why, so the model can correct itself. Only a failure of the host itself (I/O, a
/// trap) is an `Err` and ends the loop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    pub ok: bool,
    pub text: String,
}

impl ToolOutput {
    fn refused(text: impl Into<String>) -> Self {
        ToolOutput { ok: false, text: text.into() }
    }
}

impl From<std::result::Result<String, PathError>> for ToolOutput {
    fn from(r: std::result::Result<String, PathError>) -> Self {
        match r {
            Ok(text) => ToolOutput { ok: true, text },
            Err(e) => ToolOutput::refused(format!("error: {e}")),
        }
    }
}

type Handler = fn(&mut ToolContext, &Args) -> Result<ToolOutput>;

/// One LLM-callable tool.
pub struct Tool {
    pub name: &'static str,
    pub description: &'static str,
    /// `(name, JSON schema, required)` of each argument.
    pub arguments: &'static [(&'static str, &'static str, bool)],
    handler: Handler,
}

impl Tool {
    /// The JSON schema of the tool's arguments.
    pub fn parameters(&self) -> Value {
        let mut properties = Map::new();
        for (name, schema, _) in self.arguments {
            properties.insert((*name).to_string(), serde_json::from_str(schema).expect("tool schemas are valid JSON"));
        }
        let required: Vec<&str> = self.arguments.iter().filter(|a| a.2).map(|a| a.0).collect();
        json!({"type": "object", "properties": properties, "required": required})
    }
}

const PATH: &str = r#"{"type": "string", "description": "relative to the session directory, under working-memory/"}"#;
const TEXT: &str = r#"{"type": "string"}"#;

/// Every tool, in the order they are offered.
pub const TOOLS: &[Tool] = &[
    Tool {
        name: "read_file",
        description: "Read a working-memory file, e.g. working-memory/detail/notes.md.",
        arguments: &[("path", PATH, true)],
        handler: |cx, args| Ok(cx.session.memory_files().read(args.str("path")).into()),
    },
    Tool {
        name: "write_file",
        description: "Replace a working-memory file: working-memory/overview.md (injected into every request), or files under working-memory/detail/ and working-memory/archive/ (read on demand).",
        arguments: &[("path", PATH, true), ("content", TEXT, true)],
        handler: |cx, args| {
            let (path, content) = (args.str("path"), args.str("content"));
            let written: ToolOutput = cx.session.memory_files().write(path, content).map(|()| format!("wrote {} bytes to {path}", content.len())).into();
            if written.ok {
                cx.session.update_meta(|m| m.memory_updated_round = m.rounds)?;
            }
            Ok(written)
        },
    },
    Tool {
        name: "list_files",
        description: "List the files under a working-memory folder.",
        arguments: &[("path", PATH, false)],
        handler: |cx, args| Ok(cx.session.memory_files().list(args.opt_str("path").unwrap_or(MEMORY_DIR)).map(|names| names.join("\n")).into()),
    },
    Tool {
        name: "update_memory",
        description: "Update the structured memory with the DSL (CURRENT_PROGRESS / KEY_LEARNINGS / VERBATIM_CONTEXT); it re-renders working-memory/overview.md.",
        arguments: &[("dsl", TEXT, true)],
        handler: |cx, args| match crate::apply::apply(cx.runtime, cx.session, args.str("dsl")) {
            Ok(applied) => Ok(ToolOutput { ok: true, text: format!("applied:\n{}", applied.diff) }),
            Err(crate::Error::InvalidDsl(diagnostics)) => {
                let mut text = String::from("The update was refused and the memory is unchanged:\n");
                for d in diagnostics.iter().filter(|d| d.severity == Severity::Error) {
                    text.push_str(&format!("- line {}, column {}: {}\n", d.line, d.column, d.message));
                }
                text.push_str("Call update_memory again with the corrected DSL.");
                Ok(ToolOutput::refused(text))
            }
            Err(e) => Err(e),
        },
    },
];

/// The registry as Chat Completions' `tools` array.
pub fn openai_tools() -> Value {
    TOOLS.iter().map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters()}})).collect()
}

/// Runs the tool `name` with the JSON text the model wrote as its arguments.
pub fn call(cx: &mut ToolContext, name: &str, arguments: &str) -> Result<ToolOutput> {
    let Some(tool) = TOOLS.iter().find(|t| t.name == name) else {
        return Ok(ToolOutput::refused(format!("error: there is no tool named {name:?}")));
    };
    let args = match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(map)) => Args { map },
        Ok(_) => return Ok(ToolOutput::refused(format!("error: the arguments of {name} must be a JSON object"))),
        Err(e) => return Ok(ToolOutput::refused(format!("error: the arguments are not JSON: {e}"))),
    };
    // The declared arguments are checked here, once for every tool, so handlers can rely on them.
    for (arg, _, required) in tool.arguments {
        match args.map.get(*arg) {
            Some(Value::String(_)) => {}
            None if !required => {}
            _ => return Ok(ToolOutput::refused(format!("error: {name} needs a string argument {arg:?}"))),
        }
    }
    (tool.handler)(cx, &args)
}

/// A call's arguments, checked against the tool's declaration before its handler runs.
pub struct Args {
    map: Map<String, Value>,
}

impl Args {
    /// A required argument (present: [`call`] checked it).
    fn str(&self, name: &str) -> &str {
        self.opt_str(name).unwrap_or_default()
    }

    fn opt_str(&self, name: &str) -> Option<&str> {
        self.map.get(name).and_then(Value::as_str)
    }
}
