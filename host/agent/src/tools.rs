//! The tools an LLM can call, each defined once: name, description, JSON schema of its
//! arguments, and handler. The OpenAI `tools` array is generated from this registry, and the
//! loop dispatches through it, so adding a tool is adding one entry.

use crate::error::Result;
use serde_json::{Map, Value, json};
use workmem_llm::{Client, Tokenizer};
use workmem_runtime::Runtime;
use workmem_runtime::board::{
    ArtifactType, Completion, DiscoveryType, NewArtifact, NewDecision, NewDiscovery, NewNudge, NudgeTarget, Op, Priority, StatusChange, TaskStatus,
};
use workmem_runtime::history::{Strategy, Target};
use workmem_runtime::names::Named;
use workmem_store::{MEMORY_DIR, PathError, Session};

/// What a tool handler works on.
pub struct ToolContext<'a> {
    pub session: &'a Session,
    pub runtime: &'a Runtime,
    pub tokenizer: &'a Tokenizer,
    /// For `compact_history`'s summarize strategy; without it only archive works.
    pub llm: Option<&'a Client>,
    /// The board and task of a worker; the `board_*` tools need it.
    pub board: Option<&'a mut crate::board::Worker>,
    /// Context documents and who writes them; the `context_*` tools need them.
    pub documents: Option<&'a mut DocumentAccess>,
}

/// Spec 004's context documents as the `context_*` tools reach them: one vault, named by
/// whoever started the host, never by the model (whose text may be a stranger's).
pub struct DocumentAccess {
    pub documents: workmem_store::documents::Documents,
    /// The only vault the tools open.
    pub vault: String,
    /// The actor each put records.
    pub actor: String,
}

/// A tool's answer to the model. `ok` is false when it was refused or failed; the text then
/// says why, so the model can correct itself. Only a failure of the host itself (I/O, a
/// trap) is an `Err` and ends the loop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    pub ok: bool,
    pub text: String,
    /// For a read of the log: the range read, so that the log keeps the result by reference
    /// (see `workmem_store::Message::reads`).
    pub reads: Option<String>,
}

impl ToolOutput {
    fn answer(text: impl Into<String>) -> Self {
        ToolOutput { ok: true, text: text.into(), reads: None }
    }

    fn refused(text: impl Into<String>) -> Self {
        ToolOutput { ok: false, text: text.into(), reads: None }
    }
}

impl From<std::result::Result<String, PathError>> for ToolOutput {
    fn from(r: std::result::Result<String, PathError>) -> Self {
        match r {
            Ok(text) => ToolOutput::answer(text),
            Err(e) => ToolOutput::refused(format!("error: {e}")),
        }
    }
}

/// What a tool works on beyond the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    /// The session alone: offered everywhere.
    Session,
    /// The session's message history, which only a host that logs one (`workmem agent`,
    /// `workmem proxy`, the adapters) gives it.
    History,
    /// A worker's board and task ([`ToolContext::board`]).
    Board,
    /// Context documents ([`ToolContext::documents`]): offered by the MCP server.
    Documents,
}

type Handler = fn(&mut ToolContext, &Args) -> Result<ToolOutput>;

/// One LLM-callable tool.
pub struct Tool {
    pub name: &'static str,
    pub description: &'static str,
    /// `(name, JSON schema, required)` of each argument.
    pub arguments: &'static [(&'static str, &'static str, bool)],
    /// What must be there for it to be offered.
    pub needs: Needs,
    handler: Handler,
}

impl Tool {
    /// The tool as Chat Completions' `tools` array offers it.
    pub fn openai(&self) -> Value {
        json!({"type": "function", "function": {"name": self.name, "description": self.description, "parameters": self.parameters()}})
    }

    /// The tool named `name`.
    pub fn named(name: &str) -> Option<&'static Tool> {
        TOOLS.iter().find(|t| t.name == name)
    }

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
const STATUS: &str = r#"{"type": "string", "enum": ["in_progress", "blocked", "failed", "completed"], "description": "completed needs a summary; a task that needs review goes to review"}"#;
const EXPECT: &str = r#"{"type": "integer", "minimum": 0, "description": "the version your text is based on (0: the memory has none yet)"}"#;
const LIST: &str = r#"{"type": "array", "items": {"type": "string"}}"#;
const DISCOVERY: &str = r#"{"type": "string", "enum": ["constraint", "opportunity", "risk", "insight"]}"#;
const ARTIFACT: &str = r#"{"type": "string", "enum": ["file", "code", "document", "config", "test"]}"#;
const TO: &str = r#"{"type": "string", "description": "orchestrator (the default), all, or an agent's name"}"#;
const BOOL: &str = r#"{"type": "boolean"}"#;
const SEQ: &str = r#"{"type": "string", "description": "a message's sequence number, e.g. \"17\", or a range, e.g. \"12-20\""}"#;
const FROM: &str = r#"{"type": "integer", "minimum": 0, "description": "the byte to read on from, as an answer over 64 KiB names it (default 0)"}"#;

/// A memory tool changed the memory from `before` to `after` (what it wrote, not what the file
/// holds by the time this runs, which another writer may have changed since): the history
/// shows that change (the call and its answer), so requests may keep the copy in their prefix
/// (see `MemoryChain`).
fn shown_in_history(session: &Session, before: &str, after: &str) -> Result<()> {
    session.update_meta(|m| m.memory_chain = Some(workmem_store::MemoryChain::extended(m.memory_chain.as_ref(), before, after)))?;
    Ok(())
}

/// Every tool, in the order they are offered.
pub const TOOLS: &[Tool] = &[
    Tool {
        name: "read_file",
        description: "Read a working-memory file, e.g. working-memory/detail/notes.md.",
        arguments: &[("path", PATH, true)],
        needs: Needs::Session,
        handler: |cx, args| Ok(cx.session.memory_files().read(args.str("path")).into()),
    },
    Tool {
        name: "write_file",
        description: "Replace a working-memory file: working-memory/overview.md (injected into every request), or files under working-memory/detail/ and working-memory/archive/ (read on demand).",
        arguments: &[("path", PATH, true), ("content", TEXT, true)],
        needs: Needs::Session,
        handler: |cx, args| {
            let (path, content) = (args.str("path"), args.str("content"));
            let before = cx.session.overview()?;
            let written: ToolOutput = cx.session.memory_files().write(path, content).map(|()| format!("wrote {} bytes to {path}", content.len())).into();
            if written.ok {
                cx.session.update_meta(|m| m.memory_updated_round = m.rounds)?;
                // Another spelling of the overview's path leaves the chain short of the file,
                // and requests then carry the memory as it is.
                let overview = path.trim_start_matches("./") == crate::context::OVERVIEW_PATH;
                shown_in_history(cx.session, &before, if overview { content } else { &before })?;
            }
            Ok(written)
        },
    },
    Tool {
        name: "list_files",
        description: "List the files under a working-memory folder.",
        arguments: &[("path", PATH, false)],
        needs: Needs::Session,
        handler: |cx, args| Ok(cx.session.memory_files().list(args.opt_str("path").unwrap_or(MEMORY_DIR)).map(|names| names.join("\n")).into()),
    },
    Tool {
        name: UPDATE_MEMORY,
        description: "Update the structured memory with the DSL (CURRENT_PROGRESS / KEY_LEARNINGS / VERBATIM_CONTEXT); it re-renders working-memory/overview.md.",
        arguments: &[("dsl", TEXT, true)],
        needs: Needs::Session,
        handler: |cx, args| match (cx.session.overview()?, workmem_commit::apply(cx.runtime, cx.session, args.str("dsl"))) {
            (before, Ok(applied)) => {
                shown_in_history(cx.session, &before, applied.overview.as_deref().unwrap_or(&before))?;
                let summary = workmem_runtime::UpdateSummary {
                    seq: applied.seq,
                    added: applied.added,
                    archived: applied.archived,
                    ignored: applied.ignored,
                    warnings: applied.warnings,
                };
                Ok(ToolOutput::answer(cx.runtime.instance()?.update_answer(Some(&summary), &[])?))
            }
            (_, Err(workmem_commit::Error::InvalidDsl(diagnostics))) => Ok(ToolOutput::refused(cx.runtime.instance()?.update_answer(None, &diagnostics)?)),
            (_, Err(e)) => Err(e.into()),
        },
    },
    Tool {
        name: COMPACT_HISTORY,
        description: "Compact conversation history and tool outputs to manage context. \
Nothing is lost: every compacted message can be read back with read_history. Use when context_meta shows tokens > 20% (tools), \
> 40% (conversation, archive) or > 60% (all). Always preserved: the recent turns, the current task. Returns what was compacted \
and the token status; update working-memory/overview.md afterwards.",
        arguments: &[("target", TARGET, true), ("strategy", STRATEGY, false), ("keep_recent", KEEP_RECENT, false), ("archive_to", ARCHIVE_TO, false)],
        needs: Needs::History,
        handler: |cx, args| {
            let target = Target::named(args.str("target")).unwrap_or(Target::All);
            let strategy = args.opt_str("strategy").and_then(Strategy::named).unwrap_or(Strategy::Archive);
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
                Ok(done) => Ok(ToolOutput::answer(done.notice)),
                Err(crate::Error::Compact(why)) => Ok(ToolOutput::refused(format!("error: {why}"))),
                Err(e) => Err(e),
            }
        },
    },
    Tool {
        name: READ_HISTORY,
        description: "Read back messages of this session by sequence number, as they were before any compaction (compacted messages say their numbers).",
        arguments: &[("seq", SEQ, true), ("from", FROM, false)],
        needs: Needs::History,
        handler: |cx, args| {
            let read = workmem_store::messages::read_spec(args.str("seq"), args.opt_u32("from").unwrap_or(0));
            Ok(match crate::compact::read_result(cx.session, &read) {
                Ok(text) => ToolOutput { reads: Some(read), ..ToolOutput::answer(text) },
                Err(why) => ToolOutput::refused(format!("error: {why}")),
            })
        },
    },
    Tool {
        name: "board_context",
        description: "Read your task's context on the shared board again: goal, constraints, dependencies and their results, decisions, discoveries, artifacts and the nudges for you (every request carries it too).",
        arguments: &[],
        needs: Needs::Board,
        handler: |cx, _| {
            let worker = cx.board.as_deref_mut().expect("checked by call");
            Ok(ToolOutput::answer(worker.brief()?))
        },
    },
    Tool {
        name: "board_status",
        description: "Move your task on the shared board: in_progress when you start, blocked or failed when you cannot go on, completed with a summary when done.",
        arguments: &[("status", STATUS, true), ("summary", TEXT, false), ("next_steps", LIST, false)],
        needs: Needs::Board,
        handler: |cx, args| {
            on_board(cx, |w| {
                let task = w.task.clone();
                Ok(match TaskStatus::named(args.str("status")).unwrap_or(TaskStatus::Failed) {
                    TaskStatus::Completed => {
                        let summary = args.opt_str("summary").ok_or("completing your task needs a summary of what was done")?;
                        Op::Complete(Completion { task, summary: summary.into(), next_steps: args.strings("next_steps") })
                    }
                    status => Op::SetStatus(StatusChange { task, status }),
                })
            })
        },
    },
    Tool {
        name: "board_decide",
        description: "Record a decision on the shared board, with the alternatives you weighed and why, so other agents build on it.",
        arguments: &[("question", TEXT, true), ("choice", TEXT, true), ("rationale", TEXT, true), ("alternatives", LIST, false), ("irreversible", BOOL, false)],
        needs: Needs::Board,
        handler: |cx, args| {
            on_board(cx, |w| {
                Ok(Op::Decide(NewDecision {
                    question: args.str("question").into(),
                    choice: args.str("choice").into(),
                    alternatives: args.strings("alternatives"),
                    rationale: args.str("rationale").into(),
                    affects_tasks: vec![w.task.clone()],
                    reversible: !args.opt_bool("irreversible").unwrap_or(false),
                }))
            })
        },
    },
    Tool {
        name: "board_discover",
        description: "Record something you found that other agents should know: a constraint, an opportunity, a risk, or an insight worth keeping in a memory core.",
        arguments: &[("content", TEXT, true), ("type", DISCOVERY, true), ("promote_to_core", TEXT, false)],
        needs: Needs::Board,
        handler: |cx, args| {
            on_board(cx, |w| {
                let kind = DiscoveryType::named(args.str("type")).unwrap_or(DiscoveryType::Insight);
                Ok(Op::Discover(NewDiscovery {
                    content: args.str("content").into(),
                    kind,
                    affects_tasks: vec![w.task.clone()],
                    promote_to_core: args.opt_str("promote_to_core").map(String::from),
                }))
            })
        },
    },
    Tool {
        name: "board_artifact",
        description: "Record an artifact your task produced, by reference: its path and checksum (sha256:<hex>), never its content.",
        arguments: &[("path", TEXT, true), ("checksum", TEXT, true), ("type", ARTIFACT, true), ("description", TEXT, false)],
        needs: Needs::Board,
        handler: |cx, args| {
            on_board(cx, |w| {
                let kind = ArtifactType::named(args.str("type")).unwrap_or(ArtifactType::File);
                Ok(Op::Artifact(NewArtifact {
                    kind,
                    path: args.str("path").into(),
                    description: args.opt_str("description").unwrap_or_default().into(),
                    task: w.task.clone(),
                    checksum: args.str("checksum").into(),
                }))
            })
        },
    },
    Tool {
        name: "board_nudge",
        description: "Send a message on the shared board: to the orchestrator (say what you need), to everyone, or to another agent.",
        arguments: &[("message", TEXT, true), ("to", TO, false)],
        needs: Needs::Board,
        handler: |cx, args| {
            on_board(cx, |_| {
                let target = match args.opt_str("to").unwrap_or("orchestrator") {
                    "orchestrator" => NudgeTarget::Orchestrator,
                    "all" => NudgeTarget::All,
                    agent => NudgeTarget::Agent(agent.into()),
                };
                Ok(Op::Nudge(NewNudge { target, message: args.str("message").into(), priority: Priority::Normal }))
            })
        },
    },
    Tool {
        name: "context_get",
        description: "Read the latest context document of a memory in this agent's vault (spec 004), or one section of it (Description, Active Context, Progress, Patterns, Preferences, Facts, Timeline, Decisions). Answers with the version, then the text.",
        arguments: &[("memory", TEXT, true), ("section", TEXT, false)],
        needs: Needs::Documents,
        handler: |cx, args| {
            let access = cx.documents.as_deref_mut().expect("checked by call");
            let latest = match access.documents.latest(&access.vault, args.str("memory")) {
                Ok(v) => v,
                // The host's failure is not the model's to read (nor to correct): as context_put.
                Err(e) if e.code() == "database" || e.code() == "engine" => return Err(e.into()),
                Err(e) => return Ok(ToolOutput::refused(format!("error: {e}"))),
            };
            let text = match args.opt_str("section") {
                None => latest.context,
                Some(name) => match cx.runtime.instance()?.document_section(&latest.context, name)? {
                    Some(body) => body,
                    None => return Ok(ToolOutput::refused(format!("error: version {} has no section {name:?}", latest.version))),
                },
            };
            Ok(ToolOutput::answer(format!("version {}\n{text}", latest.version)))
        },
    },
    Tool {
        name: "context_put",
        description: "Store a new version of a memory's context document in this agent's vault (spec 004). Pass expect (the version you read, 0 for none) to be refused if someone else wrote in between.",
        arguments: &[("memory", TEXT, true), ("text", TEXT, true), ("expect", EXPECT, false)],
        needs: Needs::Documents,
        handler: |cx, args| {
            let access = cx.documents.as_deref_mut().expect("checked by call");
            let stored =
                access.documents.put(&access.vault, args.str("memory"), &access.actor, args.str("text").as_bytes(), args.opt_u32("expect").map(u64::from));
            Ok(match stored {
                Ok(v) => ToolOutput::answer(format!("stored version {}", v.version)),
                Err(e) if e.code() == "database" || e.code() == "engine" => return Err(e.into()),
                Err(e) => ToolOutput::refused(format!("error: {e}")),
            })
        },
    },
];

/// The registry as Chat Completions' `tools` array: the `board_*` tools only for a worker on
/// a board, `compact_history` only where the model compacts (see [`own`]).
pub fn openai_tools(worker: bool, auto_compact: bool) -> Value {
    offered(true, worker, false).filter(|t| needed(t, auto_compact)).map(Tool::openai).collect()
}

pub use crate::tool_names::{COMPACT_HISTORY, READ_HISTORY, UPDATE_MEMORY};

/// The names of workmem's own tools: those it adds beside the tools of an agent that brings
/// its own (behind `workmem proxy`, in the replay). A client's tool of one of these names is
/// refused, as the answers of these are workmem's.
pub const OWN: [&str; 3] = [READ_HISTORY, UPDATE_MEMORY, COMPACT_HISTORY];

/// workmem's own tools that a request offers: the memory, reading back what a compaction
/// replaced, and `compact_history` where the model compacts. With `auto_compact` the host
/// compacts by itself, and the tool's 280 tokens were on every request for nothing (issue 48).
pub fn own(auto_compact: bool) -> impl Iterator<Item = &'static Tool> {
    OWN.iter().filter_map(|n| Tool::named(n)).filter(move |t| needed(t, auto_compact))
}

/// [`own`] as Chat Completions' `tools` array.
pub fn openai_own(auto_compact: bool) -> Value {
    own(auto_compact).map(Tool::openai).collect()
}

/// Whether a mode needs `tool`: all but `compact_history` where the host compacts by itself.
fn needed(tool: &Tool, auto_compact: bool) -> bool {
    !(auto_compact && tool.name == COMPACT_HISTORY)
}

/// The tools offered where there is a board (`board`) and context documents (`documents`).
pub fn offered(history: bool, board: bool, documents: bool) -> impl Iterator<Item = &'static Tool> {
    TOOLS.iter().filter(move |t| match t.needs {
        Needs::Session => true,
        Needs::History => history,
        Needs::Board => board,
        Needs::Documents => documents,
    })
}

/// A worker's op through the board, or a refusal when there is no board.
fn on_board(cx: &mut ToolContext, op: impl FnOnce(&crate::board::Worker) -> std::result::Result<Op, String>) -> Result<ToolOutput> {
    let Some(worker) = cx.board.as_deref_mut() else {
        return Ok(ToolOutput::refused("error: this agent works on no board"));
    };
    let op = match op(worker) {
        Ok(op) => op,
        Err(why) => return Ok(ToolOutput::refused(format!("error: {why}"))),
    };
    // The engine's refusal goes back to the model to correct.
    match worker.boards.apply(&worker.board, None, &worker.agent, &op) {
        Ok(event) => Ok(ToolOutput::answer(format!("recorded (board revision {})", event.revision))),
        Err(e @ workmem_store::board::Error::Refused { .. }) => Ok(ToolOutput::refused(format!("error: {e}"))),
        Err(e) => Err(e.into()),
    }
}

/// Runs the tool `name` with the JSON text the model wrote as its arguments.
pub fn call(cx: &mut ToolContext, name: &str, arguments: &str) -> Result<ToolOutput> {
    let Some(tool) = Tool::named(name) else {
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
            (Some(Value::Bool(_)), Some("boolean")) => {}
            (Some(Value::Array(items)), Some("array")) if items.iter().all(Value::is_string) => {}
            (_, kind) => {
                let what = match kind {
                    Some("integer") => " non-negative integer",
                    Some("boolean") => " boolean",
                    Some("array") => "n array of strings as",
                    _ => " string",
                };
                return Ok(ToolOutput::refused(format!("error: {name} needs a{what} argument {arg:?}")));
            }
        }
    }
    if tool.needs == Needs::Board && cx.board.is_none() {
        return Ok(ToolOutput::refused(format!("error: {name} is for a worker on a board, and this agent works on none")));
    }
    if tool.needs == Needs::Documents && cx.documents.is_none() {
        return Ok(ToolOutput::refused(format!("error: {name} needs context documents, and this agent has none")));
    }
    let mut output = (tool.handler)(cx, &args)?;
    output.text = capped(name, output.text);
    Ok(output)
}

pub use workmem_store::messages::MAX_RESULT_BYTES;

/// `text` as a result carries it (see [`workmem_store::messages::capped`]), saying where the
/// rest is for the tools that know.
fn capped(name: &str, text: String) -> String {
    let rest = match name {
        "read_file" => "the file holds the rest; keep files this size in parts",
        _ => "a tool result keeps its head and tail",
    };
    workmem_store::messages::capped(text, rest)
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

    fn strings(&self, name: &str) -> Vec<String> {
        self.map.get(name).and_then(Value::as_array).map(|a| a.iter().filter_map(Value::as_str).map(String::from).collect()).unwrap_or_default()
    }

    fn opt_bool(&self, name: &str) -> Option<bool> {
        self.map.get(name).and_then(Value::as_bool)
    }

    fn opt_u32(&self, name: &str) -> Option<u32> {
        self.map.get(name).and_then(Value::as_u64).and_then(|n| u32::try_from(n).ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(schema: &str) -> Vec<String> {
        let schema: Value = serde_json::from_str(schema).unwrap();
        schema["enum"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect()
    }

    fn names<T: Named>() -> Vec<String> {
        T::names().map(|n| n.replace('-', "_")).collect()
    }

    /// The tools compaction treats apart are tools.
    #[test]
    fn compaction_names_tools_that_exist() {
        for name in crate::compact::NEVER_COMPACTED.iter().chain(&crate::compact::MEMORY_TOOLS) {
            assert!(TOOLS.iter().any(|t| t.name == *name), "{name} is a tool");
        }
    }

    /// The tools' argument lists are the engine's names (in the snake_case the board's JSON
    /// uses), so every value a model may send maps to the case it names.
    #[test]
    fn tool_enums_are_the_name_tables() {
        assert_eq!(listed(TARGET), names::<Target>());
        assert_eq!(listed(STRATEGY), names::<Strategy>());
        assert_eq!(listed(DISCOVERY), names::<DiscoveryType>());
        assert_eq!(listed(ARTIFACT), names::<ArtifactType>());
        for status in listed(STATUS) {
            assert!(TaskStatus::named(&status).is_some(), "{status} is a task status");
        }
    }
}
