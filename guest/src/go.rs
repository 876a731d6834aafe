//! The `engine-go` world: the same engine, flat, for Gravity. Memories and update runs live
//! in the instance in tables, named by handles; a handle that names nothing traps (a host bug).

// The generated glue is the canonical ABI's unsafe code; the engine's own is its allocator's
// (`heap`).
#![allow(unsafe_code)]
// The flat world passes a handle and its options as parameters, as Gravity needs.
#![allow(clippy::too_many_arguments)]

wit_bindgen::generate!({ world: "engine-go", path: "../wit" });

use crate::history;
use crate::memory::Wants;
use std::cell::RefCell;

struct Component;

/// Values named by handles: `index + 1`, so that 0 never names anything.
struct Table<T>(Vec<Option<T>>);

impl<T> Table<T> {
    const fn new() -> Self {
        Table(Vec::new())
    }

    fn insert(&mut self, value: T) -> u32 {
        let index = match self.0.iter().position(Option::is_none) {
            Some(i) => {
                self.0[i] = Some(value);
                i
            }
            None => {
                self.0.push(Some(value));
                self.0.len() - 1
            }
        };
        u32::try_from(index + 1).expect("fewer than 2^32 live handles")
    }

    fn get(&mut self, handle: u32) -> &mut T {
        let slot = (handle as usize).checked_sub(1).and_then(|i| self.0.get_mut(i)).and_then(Option::as_mut);
        slot.unwrap_or_else(|| panic!("handle {handle} names nothing"))
    }

    fn remove(&mut self, handle: u32) -> bool {
        (handle as usize).checked_sub(1).and_then(|i| self.0.get_mut(i)).and_then(Option::take).is_some()
    }
}

thread_local! {
    static MEMORIES: RefCell<Table<crate::Memory>> = const { RefCell::new(Table::new()) };
    static RUNS: RefCell<Table<crate::UpdateRun>> = const { RefCell::new(Table::new()) };
    static BOARDS: RefCell<Table<crate::board::Board>> = const { RefCell::new(Table::new()) };
}

fn with_board<T>(handle: u32, f: impl FnOnce(&mut crate::board::Board) -> T) -> T {
    BOARDS.with_borrow_mut(|t| f(t.get(handle)))
}

/// A refusal as the flat world words it: `<kind>: <sentence>` (see `wit/go.wit`).
fn refusal(e: &crate::board::BoardError) -> String {
    format!("{}: {e}", e.rule())
}

fn with_memory<T>(handle: u32, f: impl FnOnce(&mut crate::Memory) -> T) -> T {
    MEMORIES.with_borrow_mut(|t| f(t.get(handle)))
}

fn diagnostics(ds: Vec<crate::Diagnostic>) -> Vec<Diagnostic> {
    ds.into_iter().map(|d| Diagnostic { severity: d.severity, line: d.line, column: d.column, message: d.message }).collect()
}

fn progress(p: crate::Progress) -> Progress {
    Progress { completed: p.completed, in_progress: p.in_progress, remaining: p.remaining }
}

fn archive_ops(ops: Vec<crate::ArchiveOp>) -> Vec<ArchiveOp> {
    ops.into_iter().map(|o| ArchiveOp { id: o.id, reason: o.reason }).collect()
}

fn parse_outcome(o: crate::ParseOutcome) -> ParseOutcome {
    let u = o.update;
    ParseOutcome {
        ok: o.ok,
        update: Update {
            progress: progress(u.progress),
            learnings: LearningOps {
                add: u.learnings.add.into_iter().map(|a| LearningAdd { reason: a.reason, text: a.text }).collect(),
                archive: archive_ops(u.learnings.archive),
            },
            verbatim: VerbatimOps {
                add: u.verbatim.add.into_iter().map(|a| VerbatimAdd { reason: a.reason, label: a.label, snippet: a.snippet }).collect(),
                archive: archive_ops(u.verbatim.archive),
            },
        },
        diagnostics: diagnostics(o.diagnostics),
    }
}

fn from_update(u: Update) -> crate::Update {
    let from_ops = |ops: Vec<ArchiveOp>| ops.into_iter().map(|o| crate::ArchiveOp { id: o.id, reason: o.reason }).collect();
    crate::Update {
        progress: crate::Progress { completed: u.progress.completed, in_progress: u.progress.in_progress, remaining: u.progress.remaining },
        learnings: crate::LearningOps {
            add: u.learnings.add.into_iter().map(|a| crate::LearningAdd { reason: a.reason, text: a.text }).collect(),
            archive: from_ops(u.learnings.archive),
        },
        verbatim: crate::VerbatimOps {
            add: u.verbatim.add.into_iter().map(|a| crate::VerbatimAdd { reason: a.reason, label: a.label, snippet: a.snippet }).collect(),
            archive: from_ops(u.verbatim.archive),
        },
    }
}

fn applied(a: crate::Applied) -> Applied {
    Applied {
        seq: a.seq,
        diff: a.diff,
        added: a.added,
        archived: a.archived,
        ignored: a.ignored,
        warnings: diagnostics(a.warnings),
        log_entry: a.log_entry,
        overview: a.overview.unwrap_or_default(),
        state: a.state.unwrap_or_default(),
    }
}

fn empty_applied() -> Applied {
    applied(crate::Applied {
        seq: 0,
        diff: String::new(),
        added: Vec::new(),
        archived: Vec::new(),
        ignored: Vec::new(),
        warnings: Vec::new(),
        log_entry: String::new(),
        overview: None,
        state: None,
    })
}

impl Guest for Component {
    fn document_validate(text: Vec<u32>, max_bytes: u32) -> Result<(), String> {
        let bytes: Vec<u8> = text.into_iter().map(|b| u8::try_from(b).map_err(|_| format!("{b} is not a byte"))).collect::<Result<_, _>>()?;
        crate::document::validate(&bytes, u64::from(max_bytes)).map(drop).map_err(|e| format!("{}: {e}", e.rule()))
    }

    fn document_sections(text: String) -> Vec<DocumentSection> {
        crate::document::sections(&text).into_iter().map(|s| DocumentSection { name: s.name, body: s.body, line: s.line }).collect()
    }

    fn document_get_section(text: String, name: String) -> Result<String, String> {
        crate::document::section(&text, &name).ok_or_else(|| format!("the document has no section {name:?}"))
    }

    fn document_replace_section(text: String, name: String, body: String) -> String {
        crate::document::replace_section(&text, &name, &body)
    }

    fn document_template() -> String {
        crate::document::template()
    }

    fn board_create(id: String, name: String, goal: String, constraints: Vec<String>, memory_core_refs: Vec<String>, now: String) -> Result<u32, String> {
        let board = crate::board::Board::new(&id, &name, &goal, constraints, memory_core_refs, &now).map_err(|e| refusal(&e))?;
        Ok(BOARDS.with_borrow_mut(|t| t.insert(board)))
    }

    fn board_load(state: String) -> Result<u32, String> {
        let board = crate::board::Board::load(&state)?;
        Ok(BOARDS.with_borrow_mut(|t| t.insert(board)))
    }

    fn board_drop(board: u32) -> Result<(), String> {
        if BOARDS.with_borrow_mut(|t| t.remove(board)) { Ok(()) } else { Err(format!("board handle {board} names nothing")) }
    }

    fn board_save(board: u32) -> String {
        with_board(board, |b| b.save())
    }

    fn board_revision(board: u32) -> Result<u32, String> {
        with_board(board, |b| u32::try_from(b.revision).map_err(|_| "the revision is past 2^32".to_string()))
    }

    fn board_apply(board: u32, actor: String, now: String, op: String) -> Result<BoardApplied, String> {
        let event = with_board(board, |b| b.apply_json(&actor, &now, &op)).map_err(|e| refusal(&e))?;
        Ok(BoardApplied { revision: seq32(event.revision), event: event.to_json() })
    }

    fn board_replay(board: u32, event: String) -> Result<u32, String> {
        with_board(board, |b| b.replay(&event).map(|()| seq32(b.revision))).map_err(|e| match &e {
            crate::board::ReplayError::Refused(why) => format!("{}: {e}", why.rule()),
            _ => e.to_string(),
        })
    }

    fn board_view(board: u32, name: String, arg: String) -> Result<String, String> {
        let view = crate::board::View::named(&name, &arg).ok_or_else(|| format!("no board view named {name:?}"))?;
        with_board(board, |b| b.render(&view)).map_err(|e| refusal(&e))
    }

    fn board_brief(board: u32, task: String) -> Result<String, String> {
        with_board(board, |b| b.brief(&task)).map_err(|e| refusal(&e))
    }

    fn parse(text: String) -> ParseOutcome {
        parse_outcome(crate::parse(&text))
    }

    fn overview_template() -> String {
        crate::overview_template()
    }

    fn memory_new() -> Result<u32, String> {
        Ok(MEMORIES.with_borrow_mut(|t| t.insert(crate::Memory::new())))
    }

    fn memory_load(state: String) -> Result<u32, String> {
        let memory = crate::Memory::load(&state)?;
        Ok(MEMORIES.with_borrow_mut(|t| t.insert(memory)))
    }

    fn memory_drop(memory: u32) -> Result<(), String> {
        if MEMORIES.with_borrow_mut(|t| t.remove(memory)) { Ok(()) } else { Err(format!("memory handle {memory} names nothing")) }
    }

    fn memory_save(memory: u32) -> String {
        with_memory(memory, |m| m.save())
    }

    fn memory_validate(memory: u32, text: String) -> ParseOutcome {
        parse_outcome(with_memory(memory, |m| m.validate(&text)))
    }

    fn memory_apply(memory: u32, text: String, now: String, overview: bool, state: bool) -> ApplyOutcome {
        match with_memory(memory, |m| m.apply(&text, &now, Wants { overview, state })) {
            Ok(a) => {
                let warnings = diagnostics(a.warnings.clone());
                ApplyOutcome { ok: true, applied: applied(a), diagnostics: warnings }
            }
            Err(ds) => ApplyOutcome { ok: false, applied: empty_applied(), diagnostics: diagnostics(ds) },
        }
    }

    fn memory_merge(memory: u32, updates: Vec<Update>, now: String, overview: bool, state: bool) -> Result<Applied, String> {
        let updates: Vec<crate::Update> = updates.into_iter().map(from_update).collect();
        with_memory(memory, |m| m.merge(&updates, &now, Wants { overview, state })).map(applied)
    }

    fn memory_render(memory: u32) -> String {
        with_memory(memory, |m| m.render())
    }

    fn memory_snapshot(memory: u32) -> Snapshot {
        with_memory(memory, |m| {
            let s = m.state().clone();
            Snapshot {
                progress: progress(s.progress),
                learnings: s
                    .learnings
                    .into_iter()
                    .map(|l| Learning {
                        id: l.id,
                        text: l.text,
                        reason: l.reason,
                        added_at: l.added_at,
                        archived_at: l.archived_at,
                        archive_reason: l.archive_reason,
                    })
                    .collect(),
                verbatim: s
                    .verbatim
                    .into_iter()
                    .map(|v| VerbatimEntry {
                        id: v.id,
                        label: v.label,
                        snippet: v.snippet,
                        reason: v.reason,
                        added_at: v.added_at,
                        archived_at: v.archived_at,
                        archive_reason: v.archive_reason,
                    })
                    .collect(),
                next_learning: s.next_learning,
                next_verbatim: s.next_verbatim,
                updates: m.updates(),
            }
        })
    }

    fn memory_update_prompt(memory: u32, task: String) -> String {
        with_memory(memory, |m| m.update_prompt(&task))
    }

    fn update_begin(memory: u32, task: String, max_reprompts: u32) -> Result<u32, String> {
        let run = with_memory(memory, |m| crate::UpdateRun::new(m, &task, max_reprompts));
        Ok(RUNS.with_borrow_mut(|t| t.insert(run)))
    }

    fn update_request(run: u32) -> Vec<Message> {
        RUNS.with_borrow_mut(|t| t.get(run).request().iter().map(|m| Message { role: m.role.clone(), content: m.content.clone() }).collect())
    }

    fn update_answer(run: u32, memory: u32, text: String, now: String, overview: bool, state: bool) -> UpdateStep {
        let step = RUNS.with_borrow_mut(|runs| with_memory(memory, |m| runs.get(run).answer(m, &text, &now, Wants { overview, state })));
        match step {
            crate::Step::Retry(ds) => UpdateStep { kind: "retry".into(), applied: empty_applied(), diagnostics: diagnostics(ds) },
            crate::Step::Applied(a) => UpdateStep { kind: "applied".into(), applied: applied(a), diagnostics: Vec::new() },
            crate::Step::GaveUp(ds) => UpdateStep { kind: "gave-up".into(), applied: empty_applied(), diagnostics: diagnostics(ds) },
        }
    }

    fn update_drop(run: u32) -> Result<(), String> {
        if RUNS.with_borrow_mut(|t| t.remove(run)) { Ok(()) } else { Err(format!("run handle {run} names nothing")) }
    }

    fn history_compact(view: Vec<HistoryEntry>, r: CompactRequest) -> CompactStep {
        let target = match r.target {
            0 => history::Target::Conversation,
            1 => history::Target::Tools,
            2 => history::Target::All,
            other => return refused("bad-request", format!("target {other} is none of 0 (conversation), 1 (tools), 2 (all)")),
        };
        let strategy = match r.strategy {
            0 => history::Strategy::Summarize,
            1 => history::Strategy::Archive,
            other => return refused("bad-request", format!("strategy {other} is neither 0 (summarize) nor 1 (archive)")),
        };
        let request = history::Request {
            target,
            strategy,
            keep_recent: r.keep_recent,
            archive_to: r.archive_to,
            archive_lines: r.archive_lines,
            never_compact: r.never_compact,
            min_free: r.min_free,
            summary: r.answered.then_some(r.summary),
            keep: r.keep.into_iter().map(u64::from).collect(),
        };
        match history::plan(&to_view(view), &request) {
            Ok(history::Plan::Ask(messages)) => {
                CompactStep { kind: "ask".into(), ask: messages.into_iter().map(from_chat).collect(), compaction: no_compaction(), error: String::new() }
            }
            Ok(history::Plan::Done(c)) => CompactStep { kind: "done".into(), ask: Vec::new(), compaction: from_compaction(c), error: String::new() },
            Err(e @ history::Error::Nothing(_)) => refused("nothing", e.to_string()),
            Err(e @ history::Error::EmptySummary) => refused("empty-summary", e.to_string()),
            Err(e @ history::Error::Invariant(_)) => refused("invariant", e.to_string()),
        }
    }

    fn history_fallback(view: Vec<HistoryEntry>, f: FallbackRequest) -> FallbackOutcome {
        let f = history::Fallback {
            used: f.used,
            threshold: f.threshold,
            goal: f.goal,
            keep_recent: f.keep_recent,
            archive_to: f.archive_to,
            archive_lines: f.archive_lines,
            never_compact: f.never_compact,
            keep: f.keep.into_iter().map(u64::from).collect(),
        };
        match history::fallback(&to_view(view), &f) {
            Some(c) => FallbackOutcome { compacted: true, compaction: from_compaction(c) },
            None => FallbackOutcome { compacted: false, compaction: no_compaction() },
        }
    }

    fn history_apply_replacements(view: Vec<HistoryEntry>, replacements: Vec<Replacement>) -> Vec<HistoryEntry> {
        let replacements: Vec<history::Replacement> = replacements
            .into_iter()
            .map(|r| history::Replacement { replaces: r.replaces.into_iter().map(u64::from).collect(), message: to_chat(r.message) })
            .collect();
        from_view(history::apply(&to_view(view), &replacements))
    }

    fn context_assemble(r: ContextRequest) -> Vec<ChatMessage> {
        let history_mode = match r.history_mode {
            1 => crate::HistoryMode::All,
            2 => crate::HistoryMode::ActiveTurn,
            3 => crate::HistoryMode::LastN,
            _ => crate::HistoryMode::Auto,
        };
        let request = crate::ContextRequest {
            system_prompt: r.system_prompt,
            agents_md: r.agents_md,
            overview: r.overview,
            history: r.history.into_iter().map(to_chat).collect(),
            active_turn: r.active_turn,
            history_mode,
            last_n: r.last_n,
            overview_path: r.overview_path,
            detail_path: r.detail_path,
        };
        crate::assemble_context(request).into_iter().map(from_chat).collect()
    }

    fn context_meta(s: ContextStats) -> String {
        crate::context_meta(crate::ContextStats {
            tokens_used: s.tokens_used,
            tokens_max: s.tokens_max,
            messages_in_history: s.messages_in_history,
            working_memory_size: s.working_memory_size,
            rounds_since_update: s.rounds_since_update,
            remind_after_rounds: s.remind_after_rounds,
            strong_reminder_tokens: s.strong_reminder_tokens,
            compact_at: s.compact_at,
            compaction_notice: s.compaction_notice,
        })
    }

    fn context_overview_maintained(overview: String) -> Result<bool, String> {
        Ok(crate::overview_maintained(&overview))
    }
}

fn to_chat(m: ChatMessage) -> crate::ChatMessage {
    crate::ChatMessage {
        role: m.role,
        content: m.content,
        tool_call_id: m.tool_call_id,
        tool_calls: m.tool_calls.into_iter().map(|c| crate::ToolCall { id: c.id, name: c.name, arguments: c.arguments }).collect(),
    }
}

fn from_chat(m: crate::ChatMessage) -> ChatMessage {
    ChatMessage {
        role: m.role,
        content: m.content,
        tool_call_id: m.tool_call_id,
        tool_calls: m.tool_calls.into_iter().map(|c| ToolCall { id: c.id, name: c.name, arguments: c.arguments }).collect(),
    }
}

fn to_view(view: Vec<HistoryEntry>) -> Vec<history::Entry> {
    view.into_iter().map(|e| history::Entry { seq: u64::from(e.seq), message: to_chat(e.message), tokens: e.tokens }).collect()
}

/// Sequence numbers past u32 do not reach Go (the world's limit, see go.wit).
fn seq32(seq: u64) -> u32 {
    u32::try_from(seq).unwrap_or(u32::MAX)
}

fn from_view(view: Vec<history::Entry>) -> Vec<HistoryEntry> {
    view.into_iter().map(|e| HistoryEntry { seq: seq32(e.seq), message: from_chat(e.message), tokens: e.tokens }).collect()
}

fn from_compaction(c: history::Compaction) -> Compaction {
    Compaction {
        replacements: c
            .replacements
            .into_iter()
            .map(|r| Replacement { replaces: r.replaces.into_iter().map(seq32).collect(), message: from_chat(r.message) })
            .collect(),
        archive: c.archive,
        view: from_view(c.view),
        messages: c.messages,
        tokens_before: c.tokens_before,
        tokens_after: c.tokens_after,
        notice: c.notice,
    }
}

fn no_compaction() -> Compaction {
    Compaction { replacements: Vec::new(), archive: String::new(), view: Vec::new(), messages: 0, tokens_before: 0, tokens_after: 0, notice: String::new() }
}

fn refused(kind: &str, error: String) -> CompactStep {
    CompactStep { kind: kind.into(), ask: Vec::new(), compaction: no_compaction(), error }
}

export!(Component);
