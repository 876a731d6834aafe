//! The session log, `messages.jsonl`: one entry a line, each with its sequence number, its
//! time and its kind, appended and never rewritten. It is workmem's own schema, not a
//! provider's wire format: a host maps entries to whatever its LLM client speaks.

use serde::{Deserialize, Serialize};

/// One line of messages.jsonl.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogRecord {
    /// 1 for the first entry of the session, then one more for each.
    pub seq: u64,
    /// RFC 3339 UTC.
    pub at: String,
    #[serde(flatten)]
    pub entry: Entry,
    /// On a model's reply: the tokens of the request that got it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

/// The tokens of one LLM request: what we counted as sent, and what the provider reported
/// (when it did). A session's requests, one per reply, are what its context cost over time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub sent: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_tokens: Option<u32>,
}

impl Usage {
    /// The request's size: the provider's count when it gave one, else ours.
    pub fn prompt(&self) -> u32 {
        self.prompt_tokens.unwrap_or(self.sent)
    }
}

/// What an entry records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Entry {
    Message(Message),
    /// Entries of the view replaced by others (spec 003 §2); the originals stay in the log.
    Compaction(Compaction),
}

/// A compaction as the log records it: what replaced what, in order (see [`view`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Compaction {
    /// `conversation`, `tools` or `all`; `fallback` for the automatic safety net.
    pub target: String,
    /// `summarize` or `archive`.
    pub strategy: String,
    pub replacements: Vec<Replacement>,
    /// The file under the session directory the archive text was appended to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archive: Option<String>,
    /// What the model is told on its next request.
    pub notice: String,
    pub tokens_before: u32,
    pub tokens_after: u32,
    /// The session's LLM round when it happened (the next request is told).
    pub round: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Replacement {
    /// Sequence numbers of the view entries replaced.
    pub replaces: Vec<u64>,
    pub message: Message,
}

/// The history the model sees, derived from the log: every message in order, with each
/// compaction's replacements put in place of what they replace. Each replacement takes the
/// position and the `seq` of the first entry it replaces (the engine's `history.apply-replacements`
/// applies the same rule, and `tests/session_store.rs` holds the two together).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct View {
    pub entries: Vec<(u64, Message)>,
    /// The last compaction folded in (the next request tells the model of it).
    pub last_compaction: Option<Compaction>,
}

impl View {
    /// Folds one more log record in.
    pub fn push(&mut self, record: LogRecord) {
        match record.entry {
            Entry::Message(m) => self.entries.push((record.seq, m)),
            Entry::Compaction(c) => {
                for r in &c.replacements {
                    let Some(at) = self.entries.iter().position(|(seq, _)| r.replaces.contains(seq)) else { continue };
                    let seq = self.entries[at].0;
                    self.entries.retain(|(s, _)| !r.replaces.contains(s));
                    self.entries.insert(at.min(self.entries.len()), (seq, r.message.clone()));
                }
                self.last_compaction = Some(c);
            }
        }
    }
}
/// A chat message as the session keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// `system`, `user`, `assistant` or `tool`.
    pub role: String,
    pub content: String,
    /// The tools an assistant message calls.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// The call a `tool` message answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// Parts of the message in its client protocol's own shape that the session keeps but never
    /// reads (`workmem proxy`: Anthropic thinking blocks, Responses reasoning items, whose
    /// signatures the provider checks): sent back as they came, never counted or compacted
    /// apart from the message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub opaque: Vec<serde_json::Value>,
    /// On a `read_history` result: the range it read (`"12-20"`). The log keeps such a result
    /// by reference, its content a line naming the range ([`reference`]), and the view shows
    /// what [`read_back`] gives for the range from the messages logged before it, which is
    /// what the tool answered. A result that copied what it read let a range taking in earlier
    /// reads double the log with every call (7 calls of `1-199` grew it by 13 MB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reads: Option<String>,
}

impl Message {
    pub fn new(role: &str, content: impl Into<String>) -> Self {
        Message { role: role.into(), content: content.into(), tool_calls: Vec::new(), tool_call_id: None, opaque: Vec::new(), reads: None }
    }
}

/// The most one tool result carries: a whole file may hold 1 MiB and a read of the log a
/// whole session, and every result goes into every request until it is compacted.
pub const MAX_RESULT_BYTES: usize = 64 << 10;

/// `text` as a tool result carries it: whole, or its head and tail with a line between them
/// saying how much was left out and `rest` (where the rest is), within [`MAX_RESULT_BYTES`]
/// in all, so that a result capped once is not capped again.
pub fn capped(text: String, rest: &str) -> String {
    if text.len() <= MAX_RESULT_BYTES {
        return text;
    }
    let half = (MAX_RESULT_BYTES - 2 * rest.len() - 256) / 2;
    let (head, tail) = (text.floor_char_boundary(half), text.ceil_char_boundary(text.len() - half));
    format!("{}\n[… {} bytes of this result left out here: {rest} …]\n{}", &text[..head], tail - head, &text[tail..])
}

/// The most messages one read of the log takes.
pub const MAX_READ: u64 = 200;

/// The messages of `records` logged with seq `spec` (`"17"`) or in a range of them (`"12-20"`,
/// at most [`MAX_READ`]) and before `before`, as they were logged, whatever compacted them
/// since. The error says what was wrong with `spec`.
pub fn originals<'a>(records: &'a [LogRecord], spec: &str, before: u64) -> Result<Vec<(u64, &'a Message)>, String> {
    let (from, to) = match spec.trim().split_once('-') {
        Some((a, b)) => (a.trim().parse::<u64>(), b.trim().parse::<u64>()),
        None => (spec.trim().parse::<u64>(), spec.trim().parse::<u64>()),
    };
    let (Ok(from), Ok(to)) = (from, to) else {
        return Err(format!("seq must be a number or a range like 12-20, not {spec:?}"));
    };
    if to < from || to - from >= MAX_READ {
        return Err(format!("a range reads at most {MAX_READ} messages at once"));
    }
    let found: Vec<_> = records
        .iter()
        .filter(|r| (from..=to).contains(&r.seq) && r.seq < before)
        .filter_map(|r| match &r.entry {
            Entry::Message(m) => Some((r.seq, m)),
            Entry::Compaction(_) => None,
        })
        .collect();
    if found.is_empty() {
        return Err(format!("no message with seq {spec} in this session"));
    }
    Ok(found)
}

/// [`originals`] as `read_history` shows them, whole. A message in the range that is itself a
/// read kept by reference shows its [`reference`] line, not what it read again: those
/// messages are in the log to be read by their own numbers.
pub fn read_back(records: &[LogRecord], spec: &str, before: u64) -> Result<String, String> {
    let mut out = String::new();
    for (seq, m) in originals(records, spec, before)? {
        out.push_str(&format!("### #{seq} {}\n", m.role));
        for c in &m.tool_calls {
            out.push_str(&format!("→ {}({})\n", c.name, c.arguments));
        }
        out.push_str(&m.content);
        out.push_str("\n\n");
    }
    Ok(out)
}

/// [`read_back`] as the `read_history` tool answers it, capped: what the view shows for a read
/// kept by reference, to the byte.
pub fn read_result(records: &[LogRecord], spec: &str, before: u64) -> Result<String, String> {
    Ok(capped(read_back(records, spec, before)?, "read fewer numbers at a time for the rest"))
}

/// The content the log keeps for a read of `spec` kept by reference (see [`Message::reads`]).
pub fn reference(spec: &str) -> String {
    format!("(read_history {}: kept by reference; the messages it read are in the log by their own numbers)", spec.trim())
}

/// A function call the model asked for; `arguments` is its JSON text, as the model wrote it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// Reads a trajectory: an agent run as one message a line, in the log's message shape
/// (`tests/data/trajectories/`). Text-action sources repeat the command of the assistant's text in a
/// derived tool call; its arguments are dropped so they are not counted twice.
pub fn read_trajectory(path: &std::path::Path) -> std::io::Result<Vec<Message>> {
    let text = std::fs::read_to_string(path)?;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let mut m: Message =
            serde_json::from_str(line).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{}:{}: {e}", path.display(), n + 1)))?;
        for c in &mut m.tool_calls {
            let command = serde_json::from_str::<serde_json::Value>(&c.arguments).ok().and_then(|v| v["command"].as_str().map(str::to_string));
            if command.is_some_and(|cmd| !cmd.is_empty() && m.content.contains(cmd.trim())) {
                c.arguments = "{}".into();
            }
        }
        out.push(m);
    }
    Ok(out)
}
