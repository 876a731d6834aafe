//! Compaction in a session (spec 003): the engine plans it; this module does the I/O around
//! the plan: the history view with each entry's tokens, `summarize`'s model call, the
//! archive file, and the log entry that records the compaction. All of it runs under the
//! session's lock, and a refused plan appends nothing.

use crate::context::{self, to_store};
use crate::error::{Error, Result};
use workmem_llm::{Client, Tokenizer};
use workmem_runtime::history::{self, CompactRequest, FallbackRequest, Plan, Strategy, Target};
use workmem_runtime::names::Named;
use workmem_runtime::{Capabilities, CompactFailure, DecideRequest, Decision, Instance, Runtime, llm, session_store};
use workmem_store::{Entry, Locked, Replacement, Session};

/// Spec 003 §2's default.
pub const KEEP_RECENT: u32 = 5;

/// `compact_history`'s arguments.
#[derive(Debug, Clone)]
pub struct Args {
    pub target: Target,
    pub strategy: Strategy,
    pub keep_recent: u32,
    /// Default: `working-memory/detail/history-<seq>.md`, named for the compaction's entry.
    pub archive_to: Option<String>,
    /// Refuse a compaction that frees fewer tokens (see `history.compact-request`).
    pub min_free: u32,
    /// Entries never compacted besides the current task (see `history.compact-request`).
    pub keep: Vec<u64>,
}

impl Default for Args {
    fn default() -> Self {
        Args { target: Target::All, strategy: Strategy::Archive, keep_recent: KEEP_RECENT, archive_to: None, min_free: 0, keep: Vec::new() }
    }
}

/// What a compaction did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compacted {
    /// The log entry's sequence number.
    pub seq: u64,
    /// What each replacement replaced, by sequence number.
    pub replaced: Vec<Vec<u64>>,
    /// Original messages replaced.
    pub messages: u32,
    /// The history's tokens before and after, as the tokenizer counts them.
    pub tokens_before: u32,
    pub tokens_after: u32,
    pub archive: Option<String>,
    /// What the model is told (it includes the reminder to bring overview.md up to date).
    pub notice: String,
}

/// What a summary run inside the sandbox may reach: the model, nothing else.
struct ModelOnly(Client);

impl Capabilities for ModelOnly {
    fn complete(&mut self, messages: Vec<llm::Message>) -> std::result::Result<llm::Completion, llm::LlmError> {
        crate::update::complete(&self.0, messages).map_err(|e| crate::update::told(&e))
    }

    fn load_memory(&mut self) -> std::result::Result<Option<String>, session_store::StoreError> {
        Err(session_store::StoreError::Refused("a compaction is granted no session store".into()))
    }

    fn commit_update(&mut self, _: session_store::Commit) -> std::result::Result<(), session_store::StoreError> {
        Err(session_store::StoreError::Refused("a compaction is granted no session store".into()))
    }

    fn now(&mut self) -> String {
        workmem_runtime::now()
    }
}

/// The tools whose calls and answers compaction leaves alone: short answers about the memory
/// and the board. What a read returns can be read again, so reads may be compacted; so may a
/// memory write, whose content the working memory itself carries (kept forever, 40 updates of
/// a few hundred tokens each left a 16k window nothing to compact: issue 24).
pub const NEVER_COMPACTED: [&str; 8] =
    ["list_files", crate::tool_names::COMPACT_HISTORY, "board_status", "board_decide", "board_discover", "board_artifact", "board_nudge", "context_put"];

/// The tools whose calls change the working memory (the history shows the change; see
/// `MemoryChain`).
pub const MEMORY_TOOLS: [&str; 2] = [crate::tool_names::UPDATE_MEMORY, "write_file"];

fn never_compact() -> Vec<String> {
    NEVER_COMPACTED.map(String::from).to_vec()
}

/// Where the archive text goes, and how many lines the file already has. The default name
/// is one the model may have taken first with `write_file` (a folder there, a file that is not
/// UTF-8): then the next free one, so that no write of the model's can switch compaction off.
fn archive_target(session: &Session, archive_to: Option<&str>, next_seq: u64) -> Result<(String, u32)> {
    let lines = |text: String| u32::try_from(text.lines().count()).unwrap_or(u32::MAX);
    if let Some(path) = archive_to {
        return Ok((path.to_string(), lines(existing_archive(session, path)?)));
    }
    let mut refused = None;
    for n in 0..ARCHIVE_NAMES {
        let path = match n {
            0 => format!("{}history-{next_seq}.md", context::DETAIL_PATH),
            n => format!("{}history-{next_seq}-{n}.md", context::DETAIL_PATH),
        };
        match existing_archive(session, &path) {
            Ok(text) => return Ok((path, lines(text))),
            Err(e) => refused = Some(e),
        }
    }
    Err(refused.expect("at least one name was tried"))
}

/// Names a compaction tries for its archive before it gives up.
const ARCHIVE_NAMES: u32 = 16;

/// What the archive file holds already: empty when it is not there yet. One that cannot be
/// read (not UTF-8, not a regular file, refused) is refused, never replaced: the archive is
/// appended to what is there. A path the session's files refuse is caught here too, before
/// anything is logged.
fn existing_archive(session: &Session, path: &str) -> Result<String> {
    match session.memory_files().read(path) {
        Ok(text) => Ok(text),
        Err(e) if e.is_not_found() => Ok(String::new()),
        Err(e) => Err(Error::Compact(format!("the archive could not be written, so nothing was compacted: {e}"))),
    }
}

fn compact_error(e: history::CompactError) -> Error {
    Error::Compact(match e {
        history::CompactError::Nothing(why) => why,
        history::CompactError::EmptySummary => "the summary came back empty; nothing was compacted".into(),
        history::CompactError::Invariant(why) => format!("compaction refused, it would break an invariant: {why}"),
    })
}

/// `compact_history` on the session. `summarize` asks `llm`; without one it is refused.
pub fn compact(session: &Session, runtime: &Runtime, tokenizer: &Tokenizer, llm: Option<&Client>, args: &Args) -> Result<Compacted> {
    let locked = session.lock()?;
    let mut engine = runtime.instance()?;
    let view = context::view(session, tokenizer)?;
    let (archive_to, archive_lines) = archive_target(session, args.archive_to.as_deref(), session.next_seq()?)?;
    let request = CompactRequest {
        target: args.target,
        strategy: args.strategy,
        keep_recent: args.keep_recent,
        archive_to,
        archive_lines,
        never_compact: never_compact(),
        min_free: args.min_free,
        summary: None,
        keep: args.keep.clone(),
    };
    // `summarize` runs inside the agent world, whose only grant is the model; `archive` needs
    // no model and runs in the engine.
    let compaction = match (args.strategy, llm) {
        (Strategy::Archive, _) => match engine.compact(&view, &request)?.map_err(compact_error)? {
            Plan::Done(c) => c,
            Plan::Ask(_) => return Err(Error::Compact("the engine asked for a summary for an archive; nothing was compacted".into())),
        },
        (Strategy::Summarize, None) => return Err(Error::Compact("summarize needs an LLM (OPENAI_BASE_URL); archive does not".into())),
        (Strategy::Summarize, Some(llm)) => {
            let mut agent = runtime.agent(Box::new(ModelOnly(llm.clone())))?;
            match agent.compact_history(&view, &request)? {
                Ok(c) => c,
                Err(CompactFailure::Model(why)) => return Err(Error::Compact(format!("the summary call failed, so nothing was compacted: {why}"))),
                Err(CompactFailure::Refused(e)) => return Err(compact_error(e)),
            }
        }
    };
    record(session, &locked, tokenizer, &view, compaction, &request.archive_to, (args.target.name(), args.strategy.name()))
}

/// The fallback's compaction, as the engine asked for it (`call.decide`): the archive and
/// the tools never compacted are the host's. `None` when it found nothing to compact.
fn fallback(session: &Session, runtime: &Runtime, tokenizer: &Tokenizer, request: FallbackRequest) -> Result<Option<Compacted>> {
    let locked = session.lock()?;
    let mut engine = runtime.instance()?;
    let view = context::view(session, tokenizer)?;
    let (archive_to, archive_lines) = archive_target(session, None, session.next_seq()?)?;
    let request = FallbackRequest { archive_to: archive_to.clone(), archive_lines, never_compact: never_compact(), ..request };
    match engine.fallback(&view, &request)? {
        Some(c) => Ok(Some(record(session, &locked, tokenizer, &view, c, &archive_to, ("fallback", "archive"))?)),
        None => Ok(None),
    }
}

/// Writes the archive text, then appends the compaction to the log: a crash between the two
/// leaves an archive file with text nothing points to yet, and the history as it was.
fn record(
    session: &Session,
    locked: &Locked,
    tokenizer: &Tokenizer,
    view: &[history::Entry],
    c: history::Compaction,
    archive_to: &str,
    kind: (&str, &str),
) -> Result<Compacted> {
    let (target, strategy) = kind;
    let archive = if c.archive.is_empty() {
        None
    } else {
        let files = session.memory_files();
        let mut text = existing_archive(session, archive_to)?;
        text.push_str(&c.archive);
        files.write(archive_to, &text).map_err(|e| Error::Compact(format!("the archive could not be written, so nothing was compacted: {e}")))?;
        Some(archive_to.to_string())
    };
    let tokens_before = c.tokens_before;
    // The engine estimated the new entries; the tokenizer counts them.
    let tokens_after = c.view.iter().map(|e| context::count(tokenizer, &e.message)).sum();
    let replaced: Vec<Vec<u64>> = c.replacements.iter().map(|r| r.replaces.clone()).collect();
    let meta = session.meta()?;
    let entry = workmem_store::Compaction {
        target: target.to_string(),
        strategy: strategy.to_string(),
        replacements: c.replacements.into_iter().map(|r| Replacement { replaces: r.replaces, message: to_store(r.message) }).collect(),
        archive: archive.clone(),
        notice: c.notice.clone(),
        tokens_before,
        tokens_after,
        round: meta.rounds,
    };
    let logged = session.append(locked, Entry::Compaction(entry))?;
    // A memory change the history showed is compacted away: requests carry the memory as it is.
    if memory_change_replaced(view, &replaced) {
        let memory = session.overview()?;
        session.update_meta_locked(locked, |m| m.memory_chain = Some(workmem_store::MemoryChain::at(&memory)))?;
    }
    Ok(Compacted { seq: logged.seq, replaced, messages: c.messages, tokens_before, tokens_after, archive, notice: c.notice })
}

/// Whether `replaced` takes a memory tool's call out of `view`.
fn memory_change_replaced(view: &[history::Entry], replaced: &[Vec<u64>]) -> bool {
    let gone: std::collections::HashSet<u64> = replaced.iter().flatten().copied().collect();
    view.iter().filter(|e| gone.contains(&e.seq)).any(|e| e.message.tool_calls.iter().any(|c| MEMORY_TOOLS.contains(&c.name.as_str())))
}

/// The originals of message `seq` (`"17"`) or of a range (`"12-20"`), as they were logged,
/// whatever compacted them since (see [`workmem_store::messages::originals`]).
pub fn originals(session: &Session, spec: &str) -> std::result::Result<Vec<(u64, workmem_store::Message)>, String> {
    let records = session.records().map_err(|e| e.to_string())?;
    Ok(workmem_store::messages::originals(&records, spec, u64::MAX)?.into_iter().map(|(seq, m)| (seq, m.clone())).collect())
}

/// [`originals`] as read_history shows them, whole (see [`workmem_store::messages::read_back`]).
pub fn read_history(session: &Session, spec: &str) -> std::result::Result<String, String> {
    workmem_store::messages::read_back(&session.records().map_err(|e| e.to_string())?, spec, u64::MAX)
}

/// [`read_history`] as the tool answers a read of `read` (see [`workmem_store::messages::read_result`]).
pub fn read_result(session: &Session, read: &str) -> std::result::Result<String, String> {
    workmem_store::messages::read_result(&session.records().map_err(|e| e.to_string())?, read, u64::MAX)
}

/// Compactions before one request, at most: each frees what it can, so a second one only
/// corrects the engine's estimates; past that, what is left cannot be compacted.
pub const MAX_COMPACTIONS: u32 = 3;

/// What the host does before each request of `used` tokens, the `compactions`-th compaction
/// of it made, as the engine decides (`call.decide`): in automatic mode, old tool outputs by
/// archive in batches of at least a third of the window (the compression guide's first step);
/// then the fallback. `None`: send the request as it is. The caller rebuilds the request
/// after a compaction and asks again: the engine plans with estimates, and the notice the next
/// request carries adds a few tokens. A request still over the window once nothing more may be
/// compacted is [`Error::OverWindow`], never sent (issue 48: one of 8,751 tokens went to an
/// 8,192-token window).
#[allow(clippy::too_many_arguments)]
pub fn before_request(
    session: &Session,
    runtime: &Runtime,
    engine: &mut Instance,
    tokenizer: &Tokenizer,
    used: u32,
    options: &context::Options,
    compactions: u32,
) -> Result<Option<Compacted>> {
    let mut request = DecideRequest {
        tokens: used,
        window: options.tokens_max,
        threshold: options.compact_at,
        goal: options.compact_goal,
        keep_recent: options.keep_recent,
        auto_compact: options.auto_compact,
        compactions,
        max_compactions: MAX_COMPACTIONS,
        auto_refused: false,
        exhausted: false,
        keep: options.pinned.clone(),
    };
    loop {
        match engine.decide(&request)? {
            Decision::Send => return Ok(None),
            Decision::OverWindow(_) => return Err(Error::OverWindow { tokens: used, window: options.tokens_max }),
            Decision::CompactTools(t) => {
                let args = Args { target: Target::Tools, keep_recent: t.keep_recent, min_free: t.min_free, keep: t.keep, ..Args::default() };
                match compact(session, runtime, tokenizer, None, &args) {
                    Ok(done) => return Ok(Some(done)),
                    Err(Error::Compact(_)) => request.auto_refused = true,
                    Err(e) => return Err(e),
                }
            }
            Decision::Fallback(f) => match fallback(session, runtime, tokenizer, f)? {
                Some(done) => return Ok(Some(done)),
                None => request.exhausted = true,
            },
        }
    }
}
