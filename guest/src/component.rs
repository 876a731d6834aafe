//! The `engine` and `agent` worlds: the engine's types mapped to the WIT's, and the memory
//! and update runs kept as resources inside the instance.

// The generated glue is the canonical ABI's unsafe code; the engine's own is its allocator's
// (`heap`).
#![allow(unsafe_code)]

#[cfg(not(feature = "agent"))]
wit_bindgen::generate!({ world: "engine", path: "../wit" });

#[cfg(feature = "agent")]
wit_bindgen::generate!({ world: "agent", path: "../wit" });

#[cfg(feature = "agent")]
mod agent;
mod board;
mod document;

use crate::history;
use crate::memory::Wants;
use exports::workmem::memory::call as kx;
use exports::workmem::memory::context as cx;
use exports::workmem::memory::history as hx;
use exports::workmem::memory::memory as wit;
use std::cell::RefCell;

struct Component;

pub struct MemoryResource(RefCell<crate::Memory>);
pub struct RunResource(RefCell<crate::UpdateRun>);

fn diagnostic(d: crate::Diagnostic) -> wit::Diagnostic {
    let severity = if d.severity == crate::ERROR { wit::Severity::Error } else { wit::Severity::Warning };
    wit::Diagnostic { severity, line: d.line, column: d.column, message: d.message }
}

fn diagnostics(ds: Vec<crate::Diagnostic>) -> Vec<wit::Diagnostic> {
    ds.into_iter().map(diagnostic).collect()
}

fn progress(p: crate::Progress) -> Option<wit::Progress> {
    (!p.in_progress.is_empty() || !p.completed.is_empty() || !p.remaining.is_empty()).then_some(wit::Progress {
        completed: p.completed,
        in_progress: p.in_progress,
        remaining: p.remaining,
    })
}

fn archive_ops(ops: Vec<crate::ArchiveOp>) -> Vec<wit::ArchiveOp> {
    ops.into_iter().map(|o| wit::ArchiveOp { id: o.id, reason: o.reason }).collect()
}

fn update(u: crate::Update) -> wit::Update {
    wit::Update {
        progress: progress(u.progress),
        learnings: wit::LearningOps {
            add: u.learnings.add.into_iter().map(|a| wit::LearningAdd { reason: a.reason, text: a.text }).collect(),
            archive: archive_ops(u.learnings.archive),
        },
        verbatim: wit::VerbatimOps {
            add: u.verbatim.add.into_iter().map(|a| wit::VerbatimAdd { reason: a.reason, label: a.label, snippet: a.snippet }).collect(),
            archive: archive_ops(u.verbatim.archive),
        },
    }
}

fn from_archive_ops(ops: Vec<wit::ArchiveOp>) -> Vec<crate::ArchiveOp> {
    ops.into_iter().map(|o| crate::ArchiveOp { id: o.id, reason: o.reason }).collect()
}

fn from_update(u: wit::Update) -> crate::Update {
    let p = u.progress.unwrap_or(wit::Progress { completed: Vec::new(), in_progress: Vec::new(), remaining: Vec::new() });
    crate::Update {
        progress: crate::Progress { completed: p.completed, in_progress: p.in_progress, remaining: p.remaining },
        learnings: crate::LearningOps {
            add: u.learnings.add.into_iter().map(|a| crate::LearningAdd { reason: a.reason, text: a.text }).collect(),
            archive: from_archive_ops(u.learnings.archive),
        },
        verbatim: crate::VerbatimOps {
            add: u.verbatim.add.into_iter().map(|a| crate::VerbatimAdd { reason: a.reason, label: a.label, snippet: a.snippet }).collect(),
            archive: from_archive_ops(u.verbatim.archive),
        },
    }
}

fn parse_outcome(o: crate::ParseOutcome) -> wit::ParseOutcome {
    wit::ParseOutcome { update: o.ok.then(|| update(o.update)), diagnostics: diagnostics(o.diagnostics) }
}

fn archival(at: String, reason: String) -> Option<wit::Archival> {
    (!at.is_empty()).then_some(wit::Archival { at, reason })
}

fn applied(a: crate::Applied) -> wit::Applied {
    wit::Applied {
        seq: a.seq,
        diff: a.diff,
        added: a.added,
        archived: a.archived,
        ignored: a.ignored,
        warnings: diagnostics(a.warnings),
        log_entry: a.log_entry,
        overview: a.overview,
        state: a.state,
    }
}

fn wants(w: wit::Wants) -> Wants {
    Wants { overview: w.overview, state: w.state }
}

impl wit::Guest for Component {
    type Memory = MemoryResource;
    type UpdateRun = RunResource;

    fn parse(text: String) -> wit::ParseOutcome {
        parse_outcome(crate::parse(&text))
    }

    fn overview_template() -> String {
        crate::overview_template()
    }
}

impl wit::GuestMemory for MemoryResource {
    fn new() -> Self {
        MemoryResource(RefCell::new(crate::Memory::new()))
    }

    fn load(state: String) -> Result<wit::Memory, String> {
        crate::Memory::load(&state).map(|m| wit::Memory::new(MemoryResource(RefCell::new(m))))
    }

    fn save(&self) -> String {
        self.0.borrow().save()
    }

    fn validate(&self, text: String) -> wit::ParseOutcome {
        parse_outcome(self.0.borrow().validate(&text))
    }

    fn apply(&self, text: String, now: String, w: wit::Wants) -> Result<wit::Applied, Vec<wit::Diagnostic>> {
        self.0.borrow_mut().apply(&text, &now, wants(w)).map(applied).map_err(diagnostics)
    }

    fn merge(&self, updates: Vec<wit::Update>, now: String, w: wit::Wants) -> Result<wit::Applied, String> {
        let updates: Vec<crate::Update> = updates.into_iter().map(from_update).collect();
        self.0.borrow_mut().merge(&updates, &now, wants(w)).map(applied)
    }

    fn render(&self) -> String {
        self.0.borrow().render()
    }

    fn snapshot(&self) -> wit::Snapshot {
        let memory = self.0.borrow();
        let s = memory.state().clone();
        wit::Snapshot {
            progress: progress(s.progress),
            learnings: s
                .learnings
                .into_iter()
                .map(|l| wit::Learning { id: l.id, text: l.text, reason: l.reason, added_at: l.added_at, archived: archival(l.archived_at, l.archive_reason) })
                .collect(),
            verbatim: s
                .verbatim
                .into_iter()
                .map(|v| wit::VerbatimEntry {
                    id: v.id,
                    label: v.label,
                    snippet: v.snippet,
                    reason: v.reason,
                    added_at: v.added_at,
                    archived: archival(v.archived_at, v.archive_reason),
                })
                .collect(),
            next_learning: s.next_learning,
            next_verbatim: s.next_verbatim,
            updates: memory.updates(),
        }
    }

    fn update_prompt(&self, task: String) -> String {
        self.0.borrow().update_prompt(&task)
    }
}

impl wit::GuestUpdateRun for RunResource {
    fn new(memory: wit::MemoryBorrow<'_>, task: String, max_reprompts: u32) -> Self {
        let memory = memory.get::<MemoryResource>().0.borrow();
        RunResource(RefCell::new(crate::UpdateRun::new(&memory, &task, max_reprompts)))
    }

    fn request(&self) -> Vec<wit::Message> {
        self.0.borrow().request().iter().map(|m| wit::Message { role: m.role.clone(), content: m.content.clone() }).collect()
    }

    fn answer(&self, memory: wit::MemoryBorrow<'_>, text: String, now: String, w: wit::Wants) -> wit::UpdateStep {
        let mut memory = memory.get::<MemoryResource>().0.borrow_mut();
        match self.0.borrow_mut().answer(&mut memory, &text, &now, wants(w)) {
            crate::Step::Retry(ds) => wit::UpdateStep::Retry(diagnostics(ds)),
            crate::Step::Applied(a) => wit::UpdateStep::Applied(applied(a)),
            crate::Step::GaveUp(ds) => wit::UpdateStep::GaveUp(diagnostics(ds)),
        }
    }
}

fn chat_message(m: cx::ChatMessage) -> crate::ChatMessage {
    crate::ChatMessage {
        role: m.role,
        content: m.content,
        tool_call_id: m.tool_call_id.unwrap_or_default(),
        tool_calls: m.tool_calls.into_iter().map(|c| crate::ToolCall { id: c.id, name: c.name, arguments: c.arguments }).collect(),
    }
}

fn to_chat_message(m: crate::ChatMessage) -> cx::ChatMessage {
    cx::ChatMessage {
        role: m.role,
        content: m.content,
        tool_call_id: (!m.tool_call_id.is_empty()).then_some(m.tool_call_id),
        tool_calls: m.tool_calls.into_iter().map(|c| cx::ToolCall { id: c.id, name: c.name, arguments: c.arguments }).collect(),
    }
}

fn history_mode(m: cx::HistoryMode) -> (crate::HistoryMode, u32) {
    match m {
        cx::HistoryMode::Auto => (crate::HistoryMode::Auto, 0),
        cx::HistoryMode::All => (crate::HistoryMode::All, 0),
        cx::HistoryMode::ActiveTurn => (crate::HistoryMode::ActiveTurn, 0),
        cx::HistoryMode::LastN(n) => (crate::HistoryMode::LastN, n),
    }
}

impl cx::Guest for Component {
    fn assemble(r: cx::ContextRequest) -> Vec<cx::ChatMessage> {
        let (history_mode, last_n) = history_mode(r.history_mode);
        let request = crate::ContextRequest {
            system_prompt: r.system_prompt,
            agents_md: r.agents_md.unwrap_or_default(),
            overview: r.overview,
            history: r.history.into_iter().map(chat_message).collect(),
            active_turn: r.active_turn,
            history_mode,
            last_n,
            overview_path: r.overview_path,
            detail_path: r.detail_path,
        };
        crate::assemble_context(request).into_iter().map(to_chat_message).collect()
    }

    fn assemble_frame(r: cx::FrameRequest) -> cx::Frame {
        let (history_mode, last_n) = history_mode(r.history_mode);
        let frame = crate::assemble_frame(crate::FrameRequest {
            system_prompt: r.system_prompt,
            agents_md: r.agents_md.unwrap_or_default(),
            overview: r.overview,
            tool_results: r.tool_results,
            active_turn: r.active_turn,
            history_mode,
            last_n,
            overview_path: r.overview_path,
            detail_path: r.detail_path,
        });
        cx::Frame { leading: frame.leading.into_iter().map(to_chat_message).collect(), start: frame.start }
    }

    fn context_meta(s: cx::ContextStats) -> String {
        crate::context_meta(crate::ContextStats {
            tokens_used: s.tokens_used,
            tokens_max: s.tokens_max,
            messages_in_history: s.messages_in_history,
            working_memory_size: s.working_memory_size,
            rounds_since_update: s.rounds_since_update,
            remind_after_rounds: s.remind_after_rounds.unwrap_or(0),
            strong_reminder_tokens: s.strong_reminder_tokens.unwrap_or(0),
            compact_at: s.compact_at.unwrap_or(0),
            compaction_notice: s.compaction_notice.unwrap_or_default(),
        })
    }

    fn overview_maintained(overview: String) -> bool {
        crate::overview_maintained(&overview)
    }
}

fn entries(view: Vec<hx::Entry>) -> Vec<history::Entry> {
    view.into_iter().map(|e| history::Entry { seq: e.seq, message: chat_message(e.message), tokens: e.tokens }).collect()
}

fn to_entries(view: Vec<history::Entry>) -> Vec<hx::Entry> {
    view.into_iter().map(|e| hx::Entry { seq: e.seq, message: to_chat_message(e.message), tokens: e.tokens }).collect()
}

fn to_compaction(c: history::Compaction) -> hx::Compaction {
    hx::Compaction {
        replacements: c.replacements.into_iter().map(|r| hx::Replacement { replaces: r.replaces, message: to_chat_message(r.message) }).collect(),
        archive: c.archive,
        view: to_entries(c.view),
        messages: c.messages,
        tokens_before: c.tokens_before,
        tokens_after: c.tokens_after,
        notice: c.notice,
    }
}

impl hx::Guest for Component {
    fn compact(view: Vec<hx::Entry>, r: hx::CompactRequest) -> Result<hx::Plan, hx::CompactError> {
        let request = history::Request {
            target: match r.target {
                hx::Target::Conversation => history::Target::Conversation,
                hx::Target::Tools => history::Target::Tools,
                hx::Target::All => history::Target::All,
            },
            strategy: match r.strategy {
                hx::Strategy::Summarize => history::Strategy::Summarize,
                hx::Strategy::Archive => history::Strategy::Archive,
            },
            keep_recent: r.keep_recent,
            archive_to: r.archive_to,
            archive_lines: r.archive_lines,
            never_compact: r.never_compact,
            min_free: r.min_free,
            summary: r.summary,
            keep: r.keep,
        };
        match history::plan(&entries(view), &request) {
            Ok(history::Plan::Ask(messages)) => Ok(hx::Plan::Ask(messages.into_iter().map(to_chat_message).collect())),
            Ok(history::Plan::Done(c)) => Ok(hx::Plan::Done(to_compaction(c))),
            Err(history::Error::Nothing(why)) => Err(hx::CompactError::Nothing(why)),
            Err(history::Error::EmptySummary) => Err(hx::CompactError::EmptySummary),
            Err(history::Error::Invariant(why)) => Err(hx::CompactError::Invariant(why)),
        }
    }

    fn fallback(view: Vec<hx::Entry>, f: hx::FallbackRequest) -> Option<hx::Compaction> {
        let f = history::Fallback {
            used: f.used,
            threshold: f.threshold,
            goal: f.goal,
            keep_recent: f.keep_recent,
            archive_to: f.archive_to,
            archive_lines: f.archive_lines,
            never_compact: f.never_compact,
            keep: f.keep,
        };
        history::fallback(&entries(view), &f).map(to_compaction)
    }

    fn apply_replacements(view: Vec<hx::Entry>, replacements: Vec<hx::Replacement>) -> Vec<hx::Entry> {
        let replacements: Vec<history::Replacement> =
            replacements.into_iter().map(|r| history::Replacement { replaces: r.replaces, message: chat_message(r.message) }).collect();
        to_entries(history::apply(&entries(view), &replacements))
    }
}

fn to_fallback(f: history::Fallback) -> hx::FallbackRequest {
    hx::FallbackRequest {
        used: f.used,
        threshold: f.threshold,
        goal: f.goal,
        keep_recent: f.keep_recent,
        archive_to: f.archive_to,
        archive_lines: f.archive_lines,
        never_compact: f.never_compact,
        keep: f.keep,
    }
}

fn standing(s: kx::Standing) -> crate::call::Standing {
    crate::call::Standing { rounds: s.rounds, memory_updated_round: s.memory_updated_round, last_compaction: s.last_compaction.map(|c| (c.round, c.notice)) }
}

impl kx::Guest for Component {
    fn prepare(r: kx::CallRequest) -> Result<kx::CallStep, String> {
        let b = r.bounds;
        let request = crate::call::CallRequest {
            bounds: crate::call::Bounds {
                window: b.window,
                threshold: b.threshold,
                goal: b.goal,
                keep_recent: b.keep_recent,
                remind_after_rounds: b.remind_after_rounds.unwrap_or(0),
                max_compactions: b.max_compactions,
                archive_to: b.archive_to,
            },
            system_prompt: r.system_prompt,
            overview: r.overview,
            view_tokens: r.view_tokens,
            view_entries: r.view_entries,
            task: r.task,
            overhead: r.overhead,
            counted: r.counted,
            compactions: r.compactions,
            exhausted: r.exhausted,
            standing: standing(r.standing),
        };
        Ok(match crate::call::prepare(request)? {
            crate::call::Step::Count(ms) => kx::CallStep::Count(ms.into_iter().map(to_chat_message).collect()),
            crate::call::Step::Compact(f) => kx::CallStep::Compact(to_fallback(f)),
            crate::call::Step::Send(p) => {
                kx::CallStep::Send(kx::Prepared { leading: p.leading.into_iter().map(to_chat_message).collect(), meta: p.meta, tokens: p.tokens })
            }
        })
    }

    fn remind(s: kx::Standing) -> kx::Reminders {
        let r = crate::call::remind(&standing(s));
        kx::Reminders { rounds_since_update: r.rounds_since_update, compaction_notice: Some(r.compaction_notice).filter(|n| !n.is_empty()) }
    }

    fn decide(r: kx::DecideRequest) -> kx::Decision {
        let request = crate::call::DecideRequest {
            tokens: r.tokens,
            window: r.window,
            threshold: r.threshold.unwrap_or(0),
            goal: r.goal,
            keep_recent: r.keep_recent,
            auto_compact: r.auto_compact,
            compactions: r.compactions,
            max_compactions: r.max_compactions,
            auto_refused: r.auto_refused,
            exhausted: r.exhausted,
            keep: r.keep,
        };
        match crate::call::decide(&request) {
            crate::call::Decision::Send => kx::Decision::Send,
            crate::call::Decision::CompactTools(t) => {
                kx::Decision::CompactTools(kx::ToolsCompaction { keep_recent: t.keep_recent, min_free: t.min_free, keep: t.keep })
            }
            crate::call::Decision::Fallback(f) => kx::Decision::Fallback(to_fallback(f)),
            crate::call::Decision::OverWindow(why) => kx::Decision::OverWindow(why),
        }
    }

    fn own_tools() -> Vec<kx::ToolDefinition> {
        crate::call::own_tools().into_iter().map(|t| kx::ToolDefinition { name: t.name, description: t.description, parameters: t.parameters }).collect()
    }

    fn update_answer(applied: Option<kx::UpdateSummary>, errors: Vec<wit::Diagnostic>) -> String {
        let from = |ds: Vec<wit::Diagnostic>| -> Vec<crate::Diagnostic> {
            ds.into_iter()
                .map(|d| crate::Diagnostic {
                    severity: match d.severity {
                        wit::Severity::Error => crate::ERROR,
                        wit::Severity::Warning => crate::WARNING,
                    }
                    .to_string(),
                    line: d.line,
                    column: d.column,
                    message: d.message,
                })
                .collect()
        };
        let applied =
            applied.map(|a| crate::call::UpdateSummary { seq: a.seq, added: a.added, archived: a.archived, ignored: a.ignored, warnings: from(a.warnings) });
        crate::call::update_answer(applied.as_ref(), &from(errors))
    }

    fn read_range(seq: String) -> Result<(u64, u64), String> {
        crate::call::read_range(&seq)
    }

    fn read_answer(seq: String, found: Vec<hx::Entry>, start: u32) -> Result<String, String> {
        crate::call::read_answer(&seq, &entries(found), start)
    }
}

export!(Component);
