//! The agent world: the engine with the capabilities a host grants it, and nothing else.

use crate::capabilities::{Capabilities, bindings, clock, llm, session_store};
use crate::sandbox::{self, Ctx};
use crate::{Result, Runtime};
use bindings::exports::workmem::memory::{context as cx, history as hx, memory as m, workflows as wf};
use wasmtime::Store;

/// What a memory update run inside the sandbox did.
#[derive(Debug, Clone, PartialEq)]
pub struct UpdateReport {
    /// Model calls made, the first one included.
    pub attempts: u32,
    /// Tokens over all those calls, as far as the provider reported them.
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    pub applied: crate::Applied,
}

/// Why a memory update run inside the sandbox applied nothing.
#[derive(Debug, Clone, PartialEq)]
pub enum UpdateError {
    /// The model call failed; the provider's or client's message.
    Model(String),
    /// The answers stayed malformed through every re-prompt: the last one's problems.
    Invalid { attempts: u32, diagnostics: Vec<crate::Diagnostic> },
    /// The session store failed or refused, or holds no valid memory.
    Store(String),
}

// The agent world's bindings carry their own copy of the memory types; the runtime speaks
// the engine world's everywhere.
fn diagnostic(d: m::Diagnostic) -> crate::Diagnostic {
    let severity = match d.severity {
        m::Severity::Error => crate::Severity::Error,
        m::Severity::Warning => crate::Severity::Warning,
    };
    crate::Diagnostic { severity, line: d.line, column: d.column, message: d.message }
}

fn report(r: wf::UpdateReport) -> UpdateReport {
    let a = r.applied;
    let applied = crate::Applied {
        seq: a.seq,
        diff: a.diff,
        added: a.added,
        archived: a.archived,
        ignored: a.ignored,
        warnings: a.warnings.into_iter().map(diagnostic).collect(),
        log_entry: a.log_entry,
        overview: a.overview,
        state: a.state,
    };
    UpdateReport { attempts: r.attempts, prompt_tokens: r.prompt_tokens, completion_tokens: r.completion_tokens, applied }
}

fn error(e: wf::UpdateError) -> UpdateError {
    match e {
        wf::UpdateError::Model(why) => UpdateError::Model(why),
        wf::UpdateError::Invalid(i) => UpdateError::Invalid { attempts: i.attempts, diagnostics: i.diagnostics.into_iter().map(diagnostic).collect() },
        wf::UpdateError::Store(why) => UpdateError::Store(why),
    }
}

/// Why a compaction run inside the sandbox appended nothing.
#[derive(Debug, Clone, PartialEq)]
pub enum CompactFailure {
    /// The summary call failed; the provider's or client's message.
    Model(String),
    /// The engine refused.
    Refused(crate::history::CompactError),
}

fn to_message(m: &crate::ChatMessage) -> cx::ChatMessage {
    cx::ChatMessage {
        role: m.role.clone(),
        content: m.content.clone(),
        tool_call_id: m.tool_call_id.clone(),
        tool_calls: m.tool_calls.iter().map(|c| cx::ToolCall { id: c.id.clone(), name: c.name.clone(), arguments: c.arguments.clone() }).collect(),
    }
}

fn from_message(m: cx::ChatMessage) -> crate::ChatMessage {
    crate::ChatMessage {
        role: m.role,
        content: m.content,
        tool_call_id: m.tool_call_id,
        tool_calls: m.tool_calls.into_iter().map(|c| crate::ToolCall { id: c.id, name: c.name, arguments: c.arguments }).collect(),
    }
}

fn to_request(r: &crate::history::CompactRequest) -> hx::CompactRequest {
    use crate::history::{Strategy, Target};
    hx::CompactRequest {
        target: match r.target {
            Target::Conversation => hx::Target::Conversation,
            Target::Tools => hx::Target::Tools,
            Target::All => hx::Target::All,
        },
        strategy: match r.strategy {
            Strategy::Summarize => hx::Strategy::Summarize,
            Strategy::Archive => hx::Strategy::Archive,
        },
        keep_recent: r.keep_recent,
        archive_to: r.archive_to.clone(),
        archive_lines: r.archive_lines,
        never_compact: r.never_compact.clone(),
        min_free: r.min_free,
        summary: r.summary.clone(),
        keep: r.keep.clone(),
    }
}

fn from_compaction(c: hx::Compaction) -> crate::history::Compaction {
    use crate::history::{Entry, Replacement};
    crate::history::Compaction {
        replacements: c.replacements.into_iter().map(|r| Replacement { replaces: r.replaces, message: from_message(r.message) }).collect(),
        archive: c.archive,
        view: c.view.into_iter().map(|e| Entry { seq: e.seq, message: from_message(e.message), tokens: e.tokens }).collect(),
        messages: c.messages,
        tokens_before: c.tokens_before,
        tokens_after: c.tokens_after,
        notice: c.notice,
    }
}

fn compact_failure(e: wf::CompactFailure) -> CompactFailure {
    use crate::history::CompactError;
    match e {
        wf::CompactFailure::Model(why) => CompactFailure::Model(why),
        wf::CompactFailure::Refused(hx::CompactError::Nothing(why)) => CompactFailure::Refused(CompactError::Nothing(why)),
        wf::CompactFailure::Refused(hx::CompactError::EmptySummary) => CompactFailure::Refused(CompactError::EmptySummary),
        wf::CompactFailure::Refused(hx::CompactError::Invariant(why)) => CompactFailure::Refused(CompactError::Invariant(why)),
    }
}

impl llm::Host for Ctx {
    fn complete(&mut self, messages: Vec<llm::Message>) -> std::result::Result<llm::Completion, llm::LlmError> {
        self.import(|c| c.complete(messages))
    }
}

impl session_store::Host for Ctx {
    fn load_memory(&mut self) -> std::result::Result<Option<String>, session_store::StoreError> {
        self.import(|c| c.load_memory())
    }
    fn commit_update(&mut self, commit: session_store::Commit) -> std::result::Result<(), session_store::StoreError> {
        self.import(|c| c.commit_update(commit))
    }
}

impl clock::Host for Ctx {
    fn now(&mut self) -> String {
        self.import(|c| c.now())
    }
}

/// One instance of the agent world with its capabilities.
pub struct AgentInstance {
    store: Store<Ctx>,
    bindings: bindings::Agent,
}

impl AgentInstance {
    pub(crate) fn new(runtime: &Runtime, pre: &bindings::AgentPre<Ctx>, capabilities: Box<dyn Capabilities>) -> Result<Self> {
        let mut store = runtime.store(Some(capabilities));
        let bindings = pre.instantiate(&mut store).map_err(crate::Error::Load)?;
        Ok(AgentInstance { store, bindings })
    }

    /// Spec 000's memory update inside the sandbox (see `workflows.memory-update`). The inner
    /// `Err` is the workflow's own failure; nothing was committed then.
    pub fn memory_update(&mut self, task: &str, max_reprompts: u32) -> Result<std::result::Result<UpdateReport, UpdateError>> {
        let bindings = &self.bindings;
        let outcome = sandbox::call(&mut self.store, |s| bindings.workmem_memory_workflows().call_memory_update(s, task, max_reprompts))?;
        Ok(outcome.map(report).map_err(error))
    }

    /// `history.compact` with `summarize` answered by the granted model inside the sandbox
    /// (see `workflows.compact-history`). It touches no store.
    pub fn compact_history(
        &mut self,
        view: &[crate::history::Entry],
        request: &crate::history::CompactRequest,
    ) -> Result<std::result::Result<crate::history::Compaction, CompactFailure>> {
        let view: Vec<hx::Entry> = view.iter().map(|e| hx::Entry { seq: e.seq, message: to_message(&e.message), tokens: e.tokens }).collect();
        let request = to_request(request);
        let bindings = &self.bindings;
        let outcome = sandbox::call(&mut self.store, |s| bindings.workmem_memory_workflows().call_compact_history(s, &view, &request))?;
        Ok(outcome.map(from_compaction).map_err(compact_failure))
    }
}
