//! The engine's own types. The component boundary maps them to each world's WIT shapes
//! (`component.rs`, `go.rs`), so the rules below are written once whatever a runtime sees.

use serde::{Deserialize, Serialize};

/// The two values of `Diagnostic::severity`.
pub const ERROR: &str = "error";
pub const WARNING: &str = "warning";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    /// [`ERROR`] or [`WARNING`].
    pub severity: String,
    pub line: u32,
    pub column: u32,
    pub message: String,
}

/// All three lists empty: "not rewritten" in an update, "nothing yet" in a state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Progress {
    pub completed: Vec<String>,
    pub in_progress: Vec<String>,
    pub remaining: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LearningAdd {
    pub reason: String,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerbatimAdd {
    pub reason: String,
    pub label: String,
    pub snippet: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArchiveOp {
    pub id: String,
    pub reason: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LearningOps {
    pub add: Vec<LearningAdd>,
    pub archive: Vec<ArchiveOp>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerbatimOps {
    pub add: Vec<VerbatimAdd>,
    pub archive: Vec<ArchiveOp>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Update {
    pub progress: Progress,
    pub learnings: LearningOps,
    pub verbatim: VerbatimOps,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseOutcome {
    pub ok: bool,
    pub update: Update,
    pub diagnostics: Vec<Diagnostic>,
}

/// `archived_at` and `archive_reason` are empty while the entry is active.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Learning {
    pub id: String,
    pub text: String,
    pub reason: String,
    pub added_at: String,
    pub archived_at: String,
    pub archive_reason: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerbatimEntry {
    pub id: String,
    pub label: String,
    pub snippet: String,
    pub reason: String,
    pub added_at: String,
    pub archived_at: String,
    pub archive_reason: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MemoryState {
    pub progress: Progress,
    pub learnings: Vec<Learning>,
    pub verbatim: Vec<VerbatimEntry>,
    pub next_learning: u32,
    pub next_verbatim: u32,
}

impl Default for MemoryState {
    fn default() -> Self {
        MemoryState { progress: Progress::default(), learnings: Vec::new(), verbatim: Vec::new(), next_learning: 1, next_verbatim: 1 }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeOutcome {
    pub state: MemoryState,
    pub diff: String,
    pub added: Vec<String>,
    pub archived: Vec<String>,
    pub ignored: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApplyOutcome {
    pub ok: bool,
    pub merged: MergeOutcome,
    pub diagnostics: Vec<Diagnostic>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// `tool_call_id` is empty unless the message answers a tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatMessage {
    pub role: String,
    pub content: String,
    pub tool_call_id: String,
    pub tool_calls: Vec<ToolCall>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HistoryMode {
    Auto,
    All,
    ActiveTurn,
    LastN,
}

/// Empty strings mean "absent".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextRequest {
    pub system_prompt: String,
    pub agents_md: String,
    pub overview: String,
    pub history: Vec<ChatMessage>,
    pub active_turn: u32,
    pub history_mode: HistoryMode,
    pub last_n: u32,
    pub overview_path: String,
    pub detail_path: String,
}

/// [`ContextRequest`] with each history message's content left out: whether it is a tool
/// result is all the request's start depends on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameRequest {
    pub system_prompt: String,
    pub agents_md: String,
    pub overview: String,
    /// 1 where the history message is a tool result, else 0 (as the WIT's `frame-request`).
    pub tool_results: Vec<u8>,
    pub active_turn: u32,
    pub history_mode: HistoryMode,
    pub last_n: u32,
    pub overview_path: String,
    pub detail_path: String,
}

/// What goes before the history in a request, and the history's index it starts from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub leading: Vec<ChatMessage>,
    pub start: u32,
}

/// Zero thresholds mean "never", an empty notice none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextStats {
    pub tokens_used: u32,
    pub tokens_max: u32,
    pub messages_in_history: u32,
    pub working_memory_size: u32,
    pub rounds_since_update: u32,
    pub remind_after_rounds: u32,
    pub strong_reminder_tokens: u32,
    pub compact_at: u32,
    pub compaction_notice: String,
}
