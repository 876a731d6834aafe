//! The tools an LLM can call, each defined once: name, description, JSON schema of its
//! arguments, and handler. The OpenAI `tools` array is generated from this registry, and the
//! loop dispatches through it, so adding a tool is adding one entry.

use crate::error::Result;
use serde_json::{Map, Value, json};
use workmem_llm::{Client, Tokenizer};
use workmem_runtime::history::{Strategy, Target};
use workmem_runtime::{Runtime, Severity};
use workmem_store::{MEMORY_DIR, PathError, Session};

/// What a tool handler works on.
pub struct ToolContext<'a> {
    pub session: &'a Session,
    pub runtime: &'a Runtime,
    pub tokenizer: &'a Tokenizer,
    /// For `compact_history`'s summarize strategy; without it only archive works.
    pub llm: Option<&'a Client>,
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
    /// Whether compaction leaves this tool's outputs alone: short answers about the memory
    /// itself. What a read returns can be read again, so reads may be compacted.
    pub never_compact: bool,
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
const TARGET: &str = r#"{"type": "string", "enum": ["conversation", "tools", "all"], "description": "conversation: user/assistant messages; tools: tool outputs (often large, lose value over time); all: both"}"#;
const STRATEGY: &str = r#"{"type": "string", "enum": ["summarize", "archive"], "description": "summarize creates a summary, archive moves the originals to a detail file (default)"}"#;
const KEEP_RECENT: &str = r#"{"type": "integer", "minimum": 0, "description": "recent turns kept whole (default 5)"}"#;
const ARCHIVE_TO: &str = r#"{"type": "string", "description": "where the archive or summary goes (default: an auto-named file under working-memory/detail/)"}"#;
const SEQ: &str = r#"{"type": "string", "description": "a message's sequence number, e.g. \"17\", or a range, e.g. \"12-20\""}"#;

/// Every tool, in the order they are offered.
pub const TOOLS: &[Tool] = &[
    Tool {
        name: "read_file",
        description: "Read a working-memory file, e.g. working-memory/detail/notes.md.",
        arguments: &[("path", PATH, true)],
        never_compact: false,
        handler: |cx, args| Ok(cx.session.memory_files().read(args.str("path")).into()),
    },
    Tool {
        name: "write_file",
        description: "Replace a working-memory file: working-memory/overview.md (injected into every request), or files under working-memory/detail/ and working-memory/archive/ (read on demand).",
        arguments: &[("path", PATH, true), ("content", TEXT, true)],
        never_compact: true,
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
        never_compact: true,
        handler: |cx, args| Ok(cx.session.memory_files().list(args.opt_str("path").unwrap_or(MEMORY_DIR)).map(|names| names.join("\n")).into()),
    },
    Tool {
        name: "update_memory",
        description: "Update the structured memory with the DSL (CURRENT_PROGRESS / KEY_LEARNINGS / VERBATIM_CONTEXT); it re-renders working-memory/overview.md.",
        arguments: &[("dsl", TEXT, true)],
        never_compact: true,
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
    Tool {
        name: "compact_history",
        description: "Compact conversation history and tool outputs to manage context (spec: see the Compression Strategy Guide). \
Nothing is lost: every compacted message can be read back with read_history. Use when context_meta shows tokens > 20% (tools), \
> 40% (conversation, archive) or > 60% (all). Always preserved: the recent turns, the current task. Returns what was compacted \
and the token status; update working-memory/overview.md afterwards.",
        arguments: &[("target", TARGET, true), ("strategy", STRATEGY, false), ("keep_recent", KEEP_RECENT, false), ("archive_to", ARCHIVE_TO, false)],
        never_compact: true,
        handler: |cx, args| {
            let target = match args.str("target") {
                "conversation" => Target::Conversation,
                "tools" => Target::Tools,
                _ => Target::All,
            };
            let strategy = if args.opt_str("strategy") == Some("summarize") { Strategy::Summarize } else { Strategy::Archive };
            let keep_recent = args.opt_u32("keep_recent").unwrap_or(crate::compact::KEEP_RECENT);
            let request = crate::compact::Args {
                target,
                strategy,
                keep_recent,
                archive_to: args.opt_str("archive_to").map(str::to_string),
                min_free: 0,
                keep: Vec::new(),
            };
            match crate::compact::compact(cx.session, cx.runtime, cx.tokenizer, cx.llm, &request) {
                Ok(done) => Ok(ToolOutput { ok: true, text: done.notice }),
                Err(crate::Error::Compact(why)) => Ok(ToolOutput::refused(format!("error: {why}"))),
                Err(e) => Err(e),
            }
        },
    },
    Tool {
        name: "read_history",
        description: "Read back messages of this session by sequence number, as they were before any compaction (compacted messages say their numbers).",
        arguments: &[("seq", SEQ, true)],
        never_compact: false,
        handler: |cx, args| {
            Ok(match crate::compact::read_history(cx.session, args.str("seq")) {
                Ok(text) => ToolOutput { ok: true, text },
                Err(why) => ToolOutput::refused(format!("error: {why}")),
            })
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
    // A call without arguments (some models send none for a tool that needs none) is `{}`.
    let arguments = if arguments.trim().is_empty() { "{}" } else { arguments };
    let args = match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(map)) => Args { map },
        Ok(_) => return Ok(ToolOutput::refused(format!("error: the arguments of {name} must be a JSON object"))),
        Err(e) => return Ok(ToolOutput::refused(format!("error: the arguments are not JSON: {e}"))),
    };
    // The declared arguments are checked here, once for every tool, so handlers can rely on them.
    for (arg, schema, required) in tool.arguments {
        let schema: Value = serde_json::from_str(schema).expect("tool schemas are valid JSON");
        let allowed = schema.get("enum").and_then(Value::as_array);
        match (args.map.get(*arg), schema["type"].as_str()) {
            (None, _) if !required => {}
            (Some(Value::String(v)), Some("string")) if allowed.is_none_or(|a| a.iter().any(|x| x == v)) => {}
            (Some(Value::String(_)), Some("string")) => {
                return Ok(ToolOutput::refused(format!("error: {name}'s {arg:?} must be one of {}", schema["enum"])));
            }
            (Some(v), Some("integer")) if v.as_u64().is_some_and(|n| n <= u64::from(u32::MAX)) => {}
            (_, kind) => {
                return Ok(ToolOutput::refused(format!(
                    "error: {name} needs a{} argument {arg:?}",
                    if kind == Some("integer") { " non-negative integer" } else { " string" }
                )));
            }
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

    fn opt_u32(&self, name: &str) -> Option<u32> {
        self.map.get(name).and_then(Value::as_u64).and_then(|n| u32::try_from(n).ok())
    }
}
