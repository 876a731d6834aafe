//! Builds the request an agent sends on each turn: the engine assembles it (prefix-stable
//! order, history policy, context_meta text); the host supplies what needs I/O: the
//! session's files, AGENTS.md, and exact token counts from the model's tokenizer.

use crate::error::{Error, Result};
use workmem_llm::{self as llm, Message, Tokenizer};
use workmem_runtime::{ChatMessage, CompactionMark, ContextStats, FrameRequest, HistoryMode, Instance, Standing, ToolCall, history};
use workmem_store::Session;

/// Rounds without a memory update before the reminder insists. Each insistence costs an
/// update, whose call and answer stay in the history: on the 40 trajectories, 10 kept the
/// cost with caching 3% under 5's for the same needed-fact recall (issue 24).
pub const REMIND_AFTER_ROUNDS: u32 = 10;

/// How a request is built; the defaults follow the specs but where issue 24's figures said
/// otherwise.
#[derive(Debug, Clone)]
pub struct Options {
    pub model: String,
    pub system_prompt: String,
    pub history: HistoryMode,
    pub tokens_max: u32,
    /// Rounds without a memory update before the reminder insists (spec: configurable).
    pub remind_after_rounds: Option<u32>,
    /// Tokens used from which the reminder asks to archive (US-8: above 50%).
    pub strong_reminder_tokens: Option<u32>,
    /// The fallback (spec 003 §3): before any request would reach this many tokens, the
    /// history is compacted; `None` turns it off.
    pub compact_at: Option<u32>,
    /// What the fallback compacts down to: well under `compact_at`, so that the request
    /// then grows append-only (cached) for a while before the next compaction.
    pub compact_goal: u32,
    /// Groups the fallback keeps whole (it offloads their largest tool outputs only when
    /// they alone cross the threshold).
    pub keep_recent: u32,
    /// Spec 003 T034's switch back to automatic mode: the host compacts by the compression
    /// guide (tools at 20%, conversation at 40%, all at 60%) instead of leaving it to the model.
    pub auto_compact: bool,
    /// The tools each request offers (counted: the provider renders them into the prompt).
    pub tools: serde_json::Value,
    /// Entries the host's compactions never replace besides the current task, by `seq`.
    pub pinned: Vec<u64>,
    /// Whether the project's AGENTS.md goes into each request (a client behind `workmem
    /// proxy` sends its own instructions).
    pub agents_md: bool,
    /// Whether the model has workmem's file tools (`write_file`), so that the guide may point
    /// it at the folder for details: not where workmem adds only its own tools ([`crate::tools::own`]).
    pub memory_files: bool,
}

impl Options {
    /// The defaults for `model`, offering `tools` (what `workmem_agent::tools::openai_tools`
    /// gives, or `Value::Null` for none).
    pub fn new(model: &str, tools: serde_json::Value) -> Self {
        let tokens_max = 128_000;
        Options {
            model: model.to_string(),
            system_prompt: "You are a capable software agent. Work in small steps and use your tools.".to_string(),
            history: HistoryMode::Auto,
            tokens_max,
            remind_after_rounds: Some(REMIND_AFTER_ROUNDS),
            strong_reminder_tokens: Some(tokens_max / 2),
            compact_at: Some(tokens_max / 4 * 3),
            compact_goal: tokens_max / 2,
            keep_recent: 5,
            auto_compact: false,
            tools,
            pinned: Vec::new(),
            agents_md: true,
            memory_files: true,
        }
    }

    /// Sets the window, and the thresholds that follow it by default.
    pub fn with_window(mut self, tokens_max: u32) -> Self {
        self.tokens_max = tokens_max;
        self.strong_reminder_tokens = Some(tokens_max / 2);
        self.compact_at = Some(tokens_max / 4 * 3);
        self.compact_goal = tokens_max / 2;
        self
    }
}

/// A threshold as a percentage of `tokens_max` (`"50%"`) or an absolute count (`"64000"`):
/// percentages alone do not serve a 1M-token window.
pub fn threshold(spec: &str, tokens_max: u32) -> Result<u32> {
    let bad = || Error::Threshold(spec.to_string());
    match spec.trim().strip_suffix('%') {
        Some(p) => {
            let p: f64 = p.trim().parse().map_err(|_| bad())?;
            if !(0.0..=100.0).contains(&p) {
                return Err(bad());
            }
            Ok((f64::from(tokens_max) * p / 100.0).round() as u32)
        }
        None => spec.trim().parse().map_err(|_| bad()),
    }
}

/// The request, ready to send, the figures its context_meta reports, and the history view
/// it was built from (each entry with its tokens).
#[derive(Debug, Clone)]
pub struct Built {
    pub messages: Vec<Message>,
    /// The whole request's tokens, context_meta and tool definitions included (what the
    /// fallback compares with its threshold; `stats.tokens_used` cannot count the block
    /// that reports it).
    pub tokens: u32,
    /// The whole request as the tokenizer counts it, without the provider's correction:
    /// what the provider's next report of its usage is held to.
    pub counted: u32,
    pub stats: ContextStats,
    /// The view the request was built from, each entry's `seq` and tokens; its messages are in
    /// `messages`, as far as the request carries them.
    pub view: Vec<Viewed>,
    /// The opaque parts of the view's messages that have them, by `seq` (see
    /// `workmem_store::Message::opaque`).
    pub opaque: std::collections::HashMap<u64, Vec<serde_json::Value>>,
    /// How many of `messages`, from the first, are those of the request this one was built on
    /// from ([`Carry`]), unchanged: a body written on from that request's need not compare them.
    pub reused: usize,
    /// Whether it was built on from the last request ([`build_on`]) rather than whole.
    pub built_on: bool,
    /// Where the request came from, for one built on from it: none where it cannot be.
    source: Option<Source>,
}

/// What a request leaves for the next one of its session: its messages, given back once its
/// body is written, and where they came from. The next request is built on from them where the
/// view only gained entries since ([`Session::view_after`]): only what it gained is read,
/// counted and converted, where a request built whole copies, counts and converts the whole
/// view (most of the work `workmem proxy` adds to a long history's request).
#[derive(Debug, Default)]
pub struct Carry {
    messages: Vec<Message>,
    source: Option<Source>,
}

impl Carry {
    /// The messages, as the request carried them.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }
}

/// Messages that no build can go on from: a request written whole.
impl From<Vec<Message>> for Carry {
    fn from(messages: Vec<Message>) -> Self {
        Carry { messages, source: None }
    }
}

#[derive(Debug, Clone)]
struct Source {
    /// The log record the view ended at.
    seq: u64,
    view: Vec<Viewed>,
    /// Per entry, 1 where it is a tool result, else 0; and the last user message's place (what
    /// the engine's frame is drawn from).
    tool_results: Vec<u8>,
    active_turn: usize,
    /// The view's size as the history window counts it (see [`crate::window`]).
    bytes: usize,
    /// Where the history starts in the view, and the messages before it.
    start: usize,
    leading: usize,
    opaque: std::collections::HashMap<u64, Vec<serde_json::Value>>,
}

/// An entry of the view a request was built from, without its message: the request carries
/// that, where it carries it, and a copy of each for the view too was a tenth of the work of a
/// request behind `workmem proxy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Viewed {
    pub seq: u64,
    pub tokens: u32,
}

impl Built {
    /// This request as it would be with `pending` logged after its view, numbered from
    /// `next_seq`: what a request that brings them would send, before its fallback, for a
    /// count that must log nothing (`workmem proxy`'s `count_tokens`). Its context_meta stays
    /// as built, a few digits off.
    pub fn with_pending(mut self, pending: Vec<workmem_store::Message>, next_seq: u64, tokenizer: &Tokenizer) -> Self {
        let meta = self.messages.pop();
        for (seq, mut m) in (next_seq..).zip(pending) {
            let opaque = std::mem::take(&mut m.opaque);
            if !opaque.is_empty() {
                self.opaque.insert(seq, opaque);
            }
            let message = to_engine(m);
            let tokens = count(tokenizer, &message);
            self.tokens = self.tokens.saturating_add(tokens);
            self.counted = self.counted.saturating_add(tokens);
            self.messages.push(from_engine(message));
            self.view.push(Viewed { seq, tokens });
        }
        self.messages.extend(meta);
        // Not a request built from the view: none is built on from it.
        self.source = None;
        self
    }

    /// The request's messages and where they came from, for the next request to be built on
    /// from ([`build_on`]): `messages`, `view` and `opaque` are taken, once the body is written
    /// from them (a copy of each on every request would grow with the history).
    pub fn carry(&mut self) -> Carry {
        let (view, opaque) = (std::mem::take(&mut self.view), std::mem::take(&mut self.opaque));
        let source = self.source.take().map(|s| Source { view, opaque, ..s });
        Carry { messages: std::mem::take(&mut self.messages), source }
    }
}

pub(crate) fn to_engine(m: workmem_store::Message) -> ChatMessage {
    ChatMessage {
        role: m.role,
        content: m.content,
        tool_call_id: m.tool_call_id,
        tool_calls: m.tool_calls.into_iter().map(|c| ToolCall { id: c.id, name: c.name, arguments: c.arguments }).collect(),
    }
}

pub(crate) fn to_store(m: ChatMessage) -> workmem_store::Message {
    workmem_store::Message {
        role: m.role,
        content: m.content,
        tool_call_id: m.tool_call_id,
        tool_calls: m.tool_calls.into_iter().map(|c| workmem_store::ToolCall { id: c.id, name: c.name, arguments: c.arguments }).collect(),
        opaque: Vec::new(),
        reads: None,
        response: None,
    }
}

/// A logged message as a request carries it.
pub fn to_wire(m: &workmem_store::Message) -> Message {
    from_logged(m.clone())
}

/// A logged message's tokens, as [`count`] counts it once it crosses into the engine.
fn count_logged(tokenizer: &Tokenizer, m: &workmem_store::Message) -> u32 {
    // The parts `count` reads, in the same order.
    tokenizer.count_parts(&m.role, &m.content, m.tool_calls.iter().map(|c| (c.name.as_str(), c.arguments.as_str())))
}

/// A logged message as a request carries it, without a stop in the engine's shape on the way.
fn from_logged(m: workmem_store::Message) -> Message {
    wire(m.role, m.content, m.tool_call_id, m.tool_calls.into_iter().map(|c| (c.id, c.name, c.arguments)))
}

/// A request's message from its parts, each tool call as `(id, name, arguments)`: what
/// [`from_logged`] and [`from_engine`] both make.
fn wire(role: String, content: String, tool_call_id: Option<String>, calls: impl Iterator<Item = (String, String, String)>) -> Message {
    Message {
        role,
        content,
        tool_call_id,
        tool_calls: calls.map(|(id, name, arguments)| llm::ToolCall { id, kind: "function".into(), function: llm::FunctionCall { name, arguments } }).collect(),
    }
}

/// An engine message's tokens, as `tokenizer` counts it in a request.
pub(crate) fn count(tokenizer: &Tokenizer, m: &ChatMessage) -> u32 {
    tokenizer.count_parts(&m.role, &m.content, m.tool_calls.iter().map(|c| (c.name.as_str(), c.arguments.as_str())))
}

pub(crate) fn from_engine(m: ChatMessage) -> Message {
    wire(m.role, m.content, m.tool_call_id, m.tool_calls.into_iter().map(|c| (c.id, c.name, c.arguments)))
}

pub const OVERVIEW_PATH: &str = "working-memory/overview.md";
pub const DETAIL_PATH: &str = "working-memory/detail/";

/// The session's history view as far as it crosses into the engine (see [`crate::window`]),
/// each entry with its tokens as `tokenizer` counts them.
pub fn view(session: &Session, tokenizer: &Tokenizer) -> Result<Vec<history::Entry>> {
    Ok(counted(crate::window::window(session.view()?.entries, crate::window::max_bytes()?), tokenizer))
}

fn counted(entries: Vec<(u64, workmem_store::Message)>, tokenizer: &Tokenizer) -> Vec<history::Entry> {
    entries
        .into_iter()
        .map(|(seq, m)| {
            let message = to_engine(m);
            let tokens = count(tokenizer, &message);
            history::Entry { seq, message, tokens }
        })
        .collect()
}

pub fn build(session: &Session, engine: &mut Instance, tokenizer: &Tokenizer, options: &Options) -> Result<Built> {
    build_with(session, engine, tokenizer, options, None)
}

/// [`build`], with a block that goes after the history and before context_meta: what changes
/// between requests of one turn without the history changing (a worker's board brief), so
/// the cached prefix stays as it was.
pub fn build_with(session: &Session, engine: &mut Instance, tokenizer: &Tokenizer, options: &Options, tail: Option<String>) -> Result<Built> {
    let (kept, seq) = session.view_to()?;
    let last_compaction = kept.last_compaction;
    let whole = kept.entries.len();
    let mut entries = crate::window::window(kept.entries, crate::window::max_bytes()?);
    let opaque = entries.iter_mut().filter(|(_, m)| !m.opaque.is_empty()).map(|(seq, m)| (*seq, std::mem::take(&mut m.opaque))).collect();
    // The view goes straight into the request: the engine needs only where its results are.
    let view: Vec<Viewed> = entries.iter().map(|(seq, m)| Viewed { seq: *seq, tokens: count_logged(tokenizer, m) }).collect();
    let source = Source {
        seq,
        view: Vec::new(),
        tool_results: entries.iter().map(|(_, m)| u8::from(m.role == "tool")).collect(),
        active_turn: entries.iter().rposition(|(_, m)| m.role == "user").unwrap_or(0),
        bytes: entries.iter().map(|(_, m)| crate::window::size(m)).sum(),
        start: 0,
        leading: 0,
        opaque: Default::default(),
    };
    let meta = session.meta()?;
    let (frame, memory_size) = frame(session, engine, options, &meta, &source)?;
    let start = (frame.start as usize).min(view.len());
    let mut messages: Vec<Message> = frame.leading.into_iter().map(from_engine).collect();
    let leading = messages.len();
    messages.extend(entries.into_iter().skip(start).map(|(_, m)| from_logged(m)));
    // A request built on from this one starts from the same view: not one the window cut, nor
    // one with a block after the history.
    let source = (whole == view.len() && tail.is_none()).then_some(Source { start, leading, ..source });
    let parts = Finish { messages, leading, view, start, opaque, tail, last_compaction, meta, memory_size, reused: 0, built_on: false, source };
    finish(engine, tokenizer, options, parts)
}

/// The request for the session as it stands, built on from the last one (`carry`) where the
/// view only gained entries since and the frame before the history starts it where it did;
/// else built whole ([`build`]). Either way the same request.
pub fn build_on(session: &Session, engine: &mut Instance, tokenizer: &Tokenizer, options: &Options, carry: Carry) -> Result<Built> {
    let (mut messages, mut source) = match carry {
        Carry { messages, source: Some(source) } => (messages, source),
        Carry { messages, source: None } => return whole(session, engine, tokenizer, options, &messages),
    };
    let whole = |engine: &mut Instance, last: &[Message]| whole(session, engine, tokenizer, options, last);
    let Some((gained, seq)) = session.view_after(source.seq)? else { return whole(engine, &messages) };
    let max = crate::window::max_bytes()?;
    let sizes: Vec<usize> = gained.entries.iter().map(|(_, m)| crate::window::size(m)).collect();
    // What the window would cut or clip is left to a whole build.
    if sizes.iter().any(|&n| n > max / 4) || source.bytes + sizes.iter().sum::<usize>() > max || messages.is_empty() {
        return whole(engine, &messages);
    }
    source.seq = seq;
    source.bytes += sizes.iter().sum::<usize>();
    let mut view = std::mem::take(&mut source.view);
    let mut opaque = std::mem::take(&mut source.opaque);
    let mut added = Vec::with_capacity(gained.entries.len());
    for (seq, mut m) in gained.entries {
        if !m.opaque.is_empty() {
            opaque.insert(seq, std::mem::take(&mut m.opaque));
        }
        source.tool_results.push(u8::from(m.role == "tool"));
        if m.role == "user" {
            source.active_turn = view.len();
        }
        view.push(Viewed { seq, tokens: count_logged(tokenizer, &m) });
        added.push(from_logged(m));
    }
    let meta = session.meta()?;
    let (frame, memory_size) = frame(session, engine, options, &meta, &source)?;
    if (frame.start as usize).min(view.len()) != source.start {
        return whole(engine, &messages);
    }
    let leading: Vec<Message> = frame.leading.into_iter().map(from_engine).collect();
    // The last request's context_meta goes; its history stays, and its leading messages where
    // the frame drew the same.
    messages.pop();
    let same = messages.iter().zip(&leading).take_while(|(a, b)| a == b).count();
    let reused = if same == source.leading && same == leading.len() {
        messages.len()
    } else {
        messages.splice(..source.leading, leading.iter().cloned());
        same
    };
    source.leading = leading.len();
    messages.extend(added);
    let (start, n) = (source.start, source.leading);
    let parts = Finish {
        messages,
        leading: n,
        view,
        start,
        opaque,
        tail: None,
        last_compaction: gained.last_compaction,
        meta,
        memory_size,
        reused,
        built_on: true,
        source: Some(source),
    };
    finish(engine, tokenizer, options, parts)
}

/// The request built whole, and how many of its messages, from the first, are `last`'s: it
/// still begins as the last request did as far as their messages agree.
fn whole(session: &Session, engine: &mut Instance, tokenizer: &Tokenizer, options: &Options, last: &[Message]) -> Result<Built> {
    let mut built = build(session, engine, tokenizer, options)?;
    built.reused = built.messages.iter().zip(last).take_while(|(a, b)| a == b).count();
    Ok(built)
}

/// The engine's frame for a view drawn as `source` says: what goes before the history, and
/// where the history starts; and the working memory's size.
fn frame(session: &Session, engine: &mut Instance, options: &Options, meta: &workmem_store::Meta, source: &Source) -> Result<(workmem_runtime::Frame, usize)> {
    let live = session.overview()?;
    // The memory's changes are in the history only where the whole history is sent.
    let chain = meta.memory_chain.as_ref().filter(|_| options.history == HistoryMode::All);
    let overview = within_share(workmem_store::MemoryChain::shown(chain, &live), options.tokens_max);
    let agents_md = if options.agents_md { agents_md(std::path::Path::new(&meta.cwd))? } else { None };
    // The engine decides what goes before the history and where the history starts; the
    // history itself (a thousand messages behind `workmem proxy`) is not sent across and
    // back on every request, nor counted again.
    let request = FrameRequest {
        system_prompt: options.system_prompt.clone(),
        agents_md,
        overview,
        tool_results: source.tool_results.clone(),
        active_turn: u32::try_from(source.active_turn).unwrap_or(u32::MAX),
        history_mode: options.history,
        overview_path: OVERVIEW_PATH.to_string(),
        detail_path: if options.memory_files { DETAIL_PATH.to_string() } else { String::new() },
    };
    Ok((engine.assemble_frame(&request)?, live.len()))
}

/// A request's messages so far (those before the history, then the history from `start` of
/// `view`), and what its context_meta is drawn from.
struct Finish {
    messages: Vec<Message>,
    leading: usize,
    view: Vec<Viewed>,
    start: usize,
    opaque: std::collections::HashMap<u64, Vec<serde_json::Value>>,
    tail: Option<String>,
    last_compaction: Option<workmem_store::Compaction>,
    meta: workmem_store::Meta,
    memory_size: usize,
    reused: usize,
    built_on: bool,
    source: Option<Source>,
}

/// The request, counted, with the block after the history and context_meta last.
fn finish(engine: &mut Instance, tokenizer: &Tokenizer, options: &Options, parts: Finish) -> Result<Built> {
    let Finish { mut messages, leading, view, start, opaque, tail, last_compaction, meta, memory_size, reused, built_on, source } = parts;
    let tail = tail.map(|text| Message::new("system", text));
    // Counted locally as `count_chat` counts (each message, and 3 that prime the reply), the
    // history's messages as the view counted them; then moved by what the provider last
    // reported for a request of ours.
    let local = messages[..leading].iter().chain(&tail).map(|m| tokenizer.count_message(m)).sum::<u32>()
        + view[start..].iter().map(|e| e.tokens).sum::<u32>()
        + 3
        + tokenizer.count_tools(&options.tools);
    messages.extend(tail);
    let counted = i64::from(local) + meta.token_correction;
    let reminders = engine.remind(&Standing {
        rounds: meta.rounds,
        memory_updated_round: meta.memory_updated_round,
        last_compaction: last_compaction.map(|c| CompactionMark { round: c.round, notice: c.notice }),
    })?;
    let stats = ContextStats {
        tokens_used: u32::try_from(counted.max(0)).unwrap_or(u32::MAX),
        tokens_max: options.tokens_max,
        messages_in_history: u32::try_from(view.len()).unwrap_or(u32::MAX),
        working_memory_size: u32::try_from(memory_size).unwrap_or(u32::MAX),
        rounds_since_update: reminders.rounds_since_update,
        remind_after_rounds: options.remind_after_rounds,
        strong_reminder_tokens: options.strong_reminder_tokens,
        compact_at: options.compact_at,
        compaction_notice: reminders.compaction_notice,
    };
    let meta_block = Message::new("system", engine.context_meta(&stats)?);
    let meta_tokens = tokenizer.count_message(&meta_block);
    let tokens = stats.tokens_used.saturating_add(meta_tokens);
    messages.push(meta_block);
    Ok(Built { messages, tokens, counted: local + meta_tokens, stats, view, opaque, reused, built_on, source })
}

/// The most of the working memory that goes into a request, in bytes: the engine keeps what a
/// memory shows within 64 KiB, but `overview.md` is also a file the model writes whole.
pub const OVERVIEW_MAX: usize = 96 * 1024;

/// `overview` as a request carries it: whole, or its head within its share of the window (a
/// quarter of it, at about four bytes a token, and at most [`OVERVIEW_MAX`]) and a line that
/// says what was left out (an 8.6 MB memory once made a request of 1.4 million tokens).
fn within_share(overview: &str, tokens_max: u32) -> String {
    let share = (tokens_max as usize).min(OVERVIEW_MAX);
    if overview.len() <= share {
        return overview.to_string();
    }
    let head = &overview[..overview.floor_char_boundary(share)];
    let head = head.rfind('\n').map_or(head, |end| &head[..=end]);
    format!(
        "{head}\n[{OVERVIEW_PATH} is {} bytes; only its first {} fit this request's share of the window: archive entries or shorten the file]\n",
        overview.len(),
        head.len()
    )
}

/// The most of a project's AGENTS.md that goes into every request.
pub const AGENTS_MD_MAX: u64 = 64 * 1024;

/// The project's AGENTS.md, read as a memory file is: beneath the project directory, not
/// through a symlink or a hard link (which could put any file of the user's into a request to
/// the provider), only a regular file (a FIFO would hang the read) and at most
/// [`AGENTS_MD_MAX`] bytes. None when there is none; a refusal is an error naming the rule.
fn agents_md(project: &std::path::Path) -> Result<Option<String>> {
    match workmem_store::confine::Confined::untrusted(project).read_at_most("AGENTS.md", AGENTS_MD_MAX) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(source) => Err(workmem_store::Error::Project { dir: project.to_path_buf(), source }.into()),
    }
}
