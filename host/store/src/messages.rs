//! The session log, `messages.jsonl`: one entry a line, each with its sequence number, its
//! time and its kind, appended and never rewritten. It is workmem's own schema, not a
//! provider's wire format: a host maps entries to whatever its LLM client speaks.

use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};

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
    /// Messages taken back out of the view by the application that logged them (an Agents SDK
    /// session's `pop_item` or `clear_session`); they stay in the log, where `read_history`
    /// still finds them.
    Withdrawal(Withdrawal),
}

/// Messages withdrawn from the view, by `seq`, and who withdrew them and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Withdrawal {
    pub withdraws: Vec<u64>,
    pub reason: String,
}

/// A compaction as the log records it: what replaced what, in order (see [`view`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Compaction {
    /// `conversation`, `tools` or `all`; `fallback` for the automatic fallback.
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
                self.replace(&c.replacements);
                self.last_compaction = Some(c);
            }
            Entry::Withdrawal(w) => {
                let withdrawn: HashSet<u64> = w.withdraws.into_iter().collect();
                self.entries.retain(|(seq, _)| !withdrawn.contains(seq));
            }
        }
    }

    /// Puts each replacement in place of the entries it replaces, in one pass over the view
    /// where no entry is named by two replacements (what compactions write): a pass per
    /// replacement, each asking every entry whether the replacement names it, made a compaction
    /// of a long history cost the square of its length (threat model rule 5).
    fn replace(&mut self, replacements: &[Replacement]) {
        let mut named: HashMap<u64, usize> = HashMap::new();
        let mut overlap = false;
        for (i, r) in replacements.iter().enumerate() {
            for &seq in &r.replaces {
                overlap |= named.insert(seq, i).is_some_and(|j| j != i);
            }
        }
        if overlap {
            // One replacement may then replace another's: in turn, as they are listed.
            for r in replacements {
                let replaces: HashSet<u64> = r.replaces.iter().copied().collect();
                let Some(at) = self.entries.iter().position(|(seq, _)| replaces.contains(seq)) else { continue };
                let seq = self.entries[at].0;
                self.entries.retain(|(s, _)| !replaces.contains(s));
                self.entries.insert(at.min(self.entries.len()), (seq, r.message.clone()));
            }
            return;
        }
        let mut placed = vec![false; replacements.len()];
        let entries = std::mem::take(&mut self.entries);
        self.entries.reserve(entries.len());
        for (seq, m) in entries {
            match named.get(&seq) {
                None => self.entries.push((seq, m)),
                Some(&i) if !placed[i] => {
                    placed[i] = true;
                    self.entries.push((seq, replacements[i].message.clone()));
                }
                Some(_) => {}
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
    /// On a `read_history` result: the range it read (`"12-20"`), and the byte it read from
    /// where that was not the first (`"17@65000"`, see [`read_result`]). The log keeps such a result
    /// by reference, its content a line naming the range ([`reference`]), and the view shows
    /// what [`read_back`] gives for the range from the messages logged before it, which is
    /// what the tool answered. A result that copied what it read let a range taking in earlier
    /// reads double the log with every call (7 calls of `1-199` grew it by 13 MB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reads: Option<String>,
    /// On an answer: the provider's ID for it where a client may chain a later request to it
    /// (`workmem proxy`: the Responses API's `id`, which `previous_response_id` names), so that
    /// the chained request is found in the session that logged it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<String>,
}

impl Message {
    pub fn new(role: &str, content: impl Into<String>) -> Self {
        Message { role: role.into(), content: content.into(), tool_calls: Vec::new(), tool_call_id: None, opaque: Vec::new(), reads: None, response: None }
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
            Entry::Compaction(_) | Entry::Withdrawal(_) => None,
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

/// A read of the log as [`Message::reads`] keeps it: the range, and the byte of what it reads
/// back as that the read starts at, where that is not the first.
pub fn read_spec(spec: &str, from: u32) -> String {
    match from {
        0 => spec.trim().to_string(),
        _ => format!("{}@{from}", spec.trim()),
    }
}

/// [`read_back`] as the `read_history` tool answers a read of `read` ([`read_spec`]): what the
/// view shows for a read kept by reference, to the byte. Within [`MAX_RESULT_BYTES`]: a read
/// from the first byte that gives more keeps its head and tail, and one from a later byte
/// gives the part that fits from there; each says where the part it left out starts, so that
/// every byte of the largest message can be read back.
pub fn read_result(records: &[LogRecord], read: &str, before: u64) -> Result<String, String> {
    let (spec, from) = match read.rsplit_once('@') {
        Some((spec, from)) => (spec, from.parse::<usize>().map_err(|_| format!("not a read of the log: {read:?}"))?),
        None => (read, 0),
    };
    let text = read_back(records, spec, before)?;
    let more = |at: usize| format!("read_history {{\"seq\": \"{}\", \"from\": {at}}} reads on from there", spec.trim());
    if from == 0 {
        if text.len() <= MAX_RESULT_BYTES {
            return Ok(text);
        }
        let half = (MAX_RESULT_BYTES - 256) / 2;
        let head = text.floor_char_boundary(half);
        let tail = text.ceil_char_boundary(text.len() - half);
        return Ok(format!("{}\n[… bytes {head}-{tail} of {} left out here: {} …]\n{}", &text[..head], text.len(), more(head), &text[tail..]));
    }
    if from >= text.len() {
        return Err(format!("from is {from}, but seq {} reads back as {} bytes", spec.trim(), text.len()));
    }
    let start = text.floor_char_boundary(from);
    let end = text.floor_char_boundary(start + MAX_RESULT_BYTES - 256);
    if end >= text.len() {
        return Ok(format!("[bytes {start}-{} of {}:]\n{}", text.len(), text.len(), &text[start..]));
    }
    Ok(format!("[bytes {start}-{end} of {}:]\n{}\n[… {}]", text.len(), &text[start..end], more(end)))
}

/// What the view shows for `message`, logged as record `seq`: a read kept by reference
/// ([`Message::reads`]) becomes what it read from `records`, the log up to it. Every store
/// folds a log into its view with this rule.
pub fn expand_read(message: &mut Message, records: &[LogRecord], seq: u64) {
    if let Some(spec) = message.reads.take() {
        message.content = read_result(records, &spec, seq).unwrap_or_else(|why| format!("error: {why}"));
    }
}

/// The content the log keeps for a read of `read` ([`read_spec`]) kept by reference (see
/// [`Message::reads`]).
pub fn reference(read: &str) -> String {
    let what = match read.trim().rsplit_once('@') {
        Some((spec, from)) => format!("{spec} from byte {from}"),
        None => read.trim().to_string(),
    };
    format!("(read_history {what}: kept by reference; the messages it read are in the log by their own numbers)")
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The view with `replacements` put in place as the rule says, one at a time: each takes
    /// the place and the `seq` of the first entry it replaces.
    fn replaced_in_turn(mut entries: Vec<(u64, Message)>, replacements: &[Replacement]) -> Vec<(u64, Message)> {
        for r in replacements {
            let Some(at) = entries.iter().position(|(seq, _)| r.replaces.contains(seq)) else { continue };
            let seq = entries[at].0;
            entries.retain(|(s, _)| !r.replaces.contains(s));
            entries.insert(at.min(entries.len()), (seq, r.message.clone()));
        }
        entries
    }

    fn compaction(replacements: Vec<Replacement>) -> LogRecord {
        let c = Compaction {
            target: "tools".into(),
            strategy: "archive".into(),
            replacements,
            archive: None,
            notice: String::new(),
            tokens_before: 0,
            tokens_after: 0,
            round: 0,
        };
        LogRecord { seq: u64::MAX, at: String::new(), entry: Entry::Compaction(c), usage: None }
    }

    fn view_of(n: u64) -> View {
        View { entries: (1..=n).map(|seq| (seq, Message::new("user", format!("m{seq}")))).collect(), last_compaction: None }
    }

    /// A withdrawal, as a package writes it, takes its messages out of the view (replaced ones
    /// too) and out of nothing else: the log still reads them back.
    #[test]
    fn a_withdrawal_takes_messages_out_of_the_view() {
        let mut view = view_of(5);
        view.push(compaction(vec![Replacement { replaces: vec![2, 3], message: Message::new("user", "r") }]));
        let line = r#"{"seq":7,"at":"2026-11-28T08:00:00Z","kind":"withdrawal","withdraws":[2,5],"reason":"pop_item"}"#;
        let record: LogRecord = serde_json::from_str(line).unwrap();
        view.push(record.clone());
        assert_eq!(view.entries.iter().map(|(seq, _)| *seq).collect::<Vec<_>>(), [1, 4]);
        let records = vec![LogRecord { seq: 5, at: String::new(), entry: Entry::Message(Message::new("user", "m5")), usage: None }, record];
        assert_eq!(read_back(&records, "5", u64::MAX).unwrap(), "### #5 user\nm5\n\n");
    }

    /// Folded in one pass, a compaction gives the view the rule gives, replacement by
    /// replacement: runs, scattered entries, replacements out of order, entries the view no
    /// longer holds, and replacements that replace one another's.
    #[test]
    fn replacements_land_where_the_rule_puts_them() {
        let mut state = 7u64;
        let mut next = |below: u64| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) % below
        };
        for case in 0..300 {
            let n = 1 + next(40);
            let count = next(6);
            let replacements: Vec<Replacement> = (0..count)
                .map(|k| Replacement {
                    replaces: (0..1 + next(8)).map(|_| 1 + next(n + 3)).collect(),
                    message: Message::new("system", format!("[compacted {case}.{k}]")),
                })
                .collect();
            let mut view = view_of(n);
            let expected = replaced_in_turn(view.entries.clone(), &replacements);
            view.push(compaction(replacements.clone()));
            assert_eq!(view.entries, expected, "case {case}: {replacements:?}");
        }
    }

    /// A compaction folds in time that grows with the view, not with its square: one
    /// replacement of half the view and one per entry of the rest, at 2,000 and 16,000 entries
    /// (`workmem_growth::time`; a fold per replacement took 66 times).
    #[test]
    fn a_compaction_folds_in_linear_time() {
        let prepare = |n: usize| {
            let n = n as u64;
            let mut replacements = vec![Replacement { replaces: (1..=n / 2).collect(), message: Message::new("system", "[compacted]") }];
            replacements.extend((n / 2 + 1..=n).step_by(2).map(|seq| Replacement { replaces: vec![seq], message: Message::new("system", "[offloaded]") }));
            (view_of(n), compaction(replacements), n)
        };
        workmem_growth::time("a compaction's fold", 2_000, prepare, |(mut view, record, n)| {
            view.push(record);
            assert_eq!(view.entries.len() as u64, 1 + n / 2);
        });
    }

    /// The byte a `read_history` answer says to read on from, as a model would find it.
    fn next_from(answer: &str) -> Option<usize> {
        let at = answer.rfind("\"from\": ")? + "\"from\": ".len();
        answer[at..].split('}').next()?.parse().ok()
    }

    /// The text of a part read from a later byte, and where it starts, by its own header.
    fn part(answer: &str) -> (usize, &str) {
        let (header, rest) = answer.split_once(":]\n").expect("a part says which bytes it holds");
        let start = header.trim_start_matches("[bytes ").split('-').next().unwrap().parse().unwrap();
        (start, rest.split("\n[… read_history").next().unwrap())
    }

    /// Every byte of a message far past the cap on one result is reached by following the
    /// answers: the first keeps the ends and names where the middle starts, each part names
    /// where the next one starts.
    #[test]
    fn every_byte_of_a_large_read_is_reached() {
        let big: String = (0..40_000).map(|n| format!("line {n} é\n")).collect();
        let records = vec![LogRecord { seq: 1, at: String::new(), entry: Entry::Message(Message::new("tool", big)), usage: None }];
        let whole = read_back(&records, "1", u64::MAX).unwrap();
        let first = read_result(&records, "1", u64::MAX).unwrap();
        assert!(first.len() <= MAX_RESULT_BYTES && first.starts_with(&whole[..1000]) && first.ends_with(&whole[whole.len() - 1000..]));
        let mut from = next_from(&first).unwrap();
        let mut rebuilt = whole[..from].to_string();
        let mut parts = 0;
        loop {
            let answer = read_result(&records, &read_spec("1", u32::try_from(from).unwrap()), u64::MAX).unwrap();
            assert!(answer.len() <= MAX_RESULT_BYTES, "{}", answer.len());
            let (start, text) = part(&answer);
            assert_eq!(start, from);
            rebuilt.push_str(text);
            parts += 1;
            match next_from(&answer) {
                Some(next) => from = next,
                None => break,
            }
        }
        assert!(parts >= 4, "{parts}");
        assert!(rebuilt == whole, "the parts rebuild the whole read");
        let past = read_result(&records, &read_spec("1", u32::try_from(whole.len()).unwrap()), u64::MAX).unwrap_err();
        assert!(past.contains("reads back as"), "{past}");
        assert!(reference(&read_spec(" 1 ", 70_000)).starts_with("(read_history 1 from byte 70000:"));
    }
}
