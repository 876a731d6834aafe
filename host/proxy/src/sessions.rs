//! Finding a client's session without its help. A client resends its whole history with each
//! request; the session a request belongs to is one whose history, as that client saw it, the
//! request holds all of (the most such, among the sessions of the client's own name for its
//! session when it gives one). A request that holds none starts a session, recorded as a branch
//! of the last one of that name: a client that edited or compacted its own history is never
//! merged into a history it did not send.
//!
//! "Holds" is by item, not by position: clients regroup what they resend (Claude Code merges
//! an assistant's successive tool uses, and their results, into one message each), so each
//! message counts as its items (each tool call by its ID, each result by its call's, each text
//! by its role and text), and a request holds a history when it holds each of its items.
//!
//! What the client saw differs from the log: the log also holds workmem's own tool calls and
//! their answers, which the client never received. [`Seen`] keeps the client's view of the log.

use crate::history::{History, ItemMap, ItemSet, items};
use crate::lock;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use workmem_llm::Tokenizer;
use workmem_store::{Entry, Message, Proxied, Session, Sessions};

/// workmem's own tools, offered to the model beside the client's and never shown to it.
pub(crate) const OWN_TOOLS: [&str; 3] = ["read_history", "update_memory", "compact_history"];

pub(crate) fn own_tool(name: &str) -> bool {
    OWN_TOOLS.contains(&name)
}

/// The client's view of a session's log, as counts of its items.
#[derive(Default)]
pub(crate) struct Seen {
    items: ItemMap<usize>,
    /// The items that are system messages amid the history: the client's to change (Claude
    /// Code rewrites its reminders from one request to the next), so a request may leave them
    /// out and still continue the session; a changed one is logged where it now appears.
    system: ItemSet,
    len: usize,
    /// The last message the client saw: the next assistant message may continue it.
    last: Option<Message>,
    /// The IDs of workmem's own calls: their answers are not the client's.
    own_calls: HashSet<String>,
    /// The last assistant message called only workmem's tools, so the next one continues it:
    /// the client got both as one answer.
    continues: bool,
    /// The client's opening, by `seq`: everything before the model's first answer.
    pinned: Vec<u64>,
    /// Whether the model has answered yet.
    answered: bool,
}

impl Seen {
    fn add(&mut self, m: &Message) {
        if m.role == "system" {
            self.system.extend(items(m));
        }
        for k in items(m) {
            *self.items.entry(k).or_default() += 1;
            self.len += 1;
        }
    }

    fn remove(&mut self, m: &Message) {
        for k in items(m) {
            if let Some(n) = self.items.get_mut(&k) {
                *n -= 1;
                self.len -= 1;
                if *n == 0 {
                    self.items.remove(&k);
                }
            }
        }
    }

    /// Folds in one message as it is logged.
    pub fn push(&mut self, m: &Message) {
        if m.role == "tool" && m.tool_call_id.as_ref().is_some_and(|id| self.own_calls.contains(id)) {
            return;
        }
        if m.role != "assistant" {
            self.continues = false;
            self.add(m);
            self.last = Some(m.clone());
            return;
        }
        let (own, theirs): (Vec<_>, Vec<_>) = m.tool_calls.iter().cloned().partition(|c| own_tool(&c.name));
        self.own_calls.extend(own.iter().map(|c| c.id.clone()));
        let visible = match self.last.take() {
            Some(mut last) if self.continues => {
                self.remove(&last);
                last.content.push_str(&m.content);
                last.tool_calls.extend(theirs.iter().cloned());
                last
            }
            _ => Message { tool_calls: theirs.clone(), ..m.clone() },
        };
        self.add(&visible);
        self.last = Some(visible);
        self.continues = !own.is_empty() && theirs.is_empty();
    }

    /// When `history` (its messages' items worked out in [`History`]) holds every item of this
    /// view: how many that is, and what of `history` is new (a message with some new calls
    /// keeps only those). Clients move texts around (Claude Code puts its reminders after the
    /// tool results it adds; Codex keeps the text of a round that called only workmem's tools
    /// as a message of its own) and reword them, so a new text before the last logged call or
    /// result is the client's regrouping and is left out; a new result there is an edit, and
    /// the history does not continue this view.
    pub fn new_in(&self, history: &History) -> Option<(usize, Vec<Message>)> {
        let mut left = self.items.clone();
        // Each new item as (message, item), in order: one list, since a request of another
        // session's client has nothing but new items.
        let mut fresh: Vec<(usize, usize)> = Vec::new();
        let mut last_logged_call = None;
        for (at, (m, keys)) in history.messages.iter().zip(&history.keys).enumerate() {
            for (i, &k) in keys.iter().enumerate() {
                match left.get_mut(&k) {
                    Some(n) if *n > 0 => {
                        *n -= 1;
                        if m.role == "tool" || !m.tool_calls.is_empty() {
                            last_logged_call = Some(at);
                        }
                    }
                    _ => fresh.push((at, i)),
                }
            }
        }
        if !left.iter().all(|(k, &n)| n == 0 || self.system.contains(k)) {
            return None;
        }
        let mut new = Vec::new();
        for run in fresh.chunk_by(|a, b| a.0 == b.0) {
            let at = run[0].0;
            let m = &history.messages[at];
            if last_logged_call.is_some_and(|last| at < last) {
                match (m.role.as_str(), m.tool_calls.is_empty()) {
                    ("tool", _) => return None,
                    (_, true) => continue,
                    _ => {}
                }
            }
            if m.role == "assistant" && !m.tool_calls.is_empty() && run.len() < m.tool_calls.len() {
                let calls = run.iter().map(|&(_, i)| m.tool_calls[i].clone()).collect();
                new.push(Message { tool_calls: calls, content: String::new(), ..m.clone() });
            } else {
                new.push(m.clone());
            }
        }
        Some((self.len, new))
    }
}

/// One session the proxy keeps.
pub(crate) struct Tracked {
    pub id: String,
    proxied: Proxied,
    /// The client's view, which every search reads: locked only for a moment, never across
    /// a request upstream.
    seen: Mutex<Seen>,
    /// Held for a whole exchange: one client request at a time per session.
    pub exchange: Mutex<Exchange>,
}

/// What one exchange at a time works with.
pub(crate) struct Exchange {
    pub session: Session,
    /// Counts texts once per session: each request repeats most of the last.
    pub tokenizer: Option<(String, Tokenizer)>,
    /// The last Chat Completions body sent upstream, which the next one mostly repeats.
    pub written: crate::written::Written,
    /// The length of the last body sent upstream, in any protocol.
    pub sent: usize,
}

impl Exchange {
    /// About what this session keeps in memory between requests, at most: the last body
    /// upstream (Chat Completions), its messages, the store's view and the texts counted are
    /// each about the size of that body.
    pub fn warm_bytes(&self) -> usize {
        self.sent.saturating_mul(4)
    }

    /// Lets go of all that (see [`crate::warm`]); the next request builds it again.
    fn cool(&mut self) {
        self.written = Default::default();
        self.tokenizer = self.tokenizer.take().map(|(model, tokenizer)| (model, tokenizer.fresh()));
        self.session.release_view();
    }
}

impl crate::warm::Cools for Tracked {
    fn cool(&self) {
        match self.exchange.try_lock() {
            Ok(mut held) => held.cool(),
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner().cool(),
            // Busy with a request: it is kept again, as just used, when the request ends.
            Err(std::sync::TryLockError::WouldBlock) => {}
        }
    }
}

impl Tracked {
    fn new(session: Session, id: String, proxied: Proxied) -> Self {
        Tracked { id, proxied, seen: Mutex::default(), exchange: Mutex::new(Exchange { session, tokenizer: None, written: Default::default(), sent: 0 }) }
    }

    /// See [`Seen::new_in`].
    pub fn new_in(&self, history: &History) -> Option<(usize, Vec<Message>)> {
        lock(&self.seen).new_in(history)
    }

    /// Logs what is new (under the exchange the caller holds) and folds it into the view.
    pub fn append(&self, exchange: &Exchange, new: Vec<Message>) -> workmem_store::Result<()> {
        for record in exchange.session.append_messages(new)? {
            if let Entry::Message(m) = &record.entry {
                self.observe(record.seq, m);
            }
        }
        Ok(())
    }

    /// Folds in one message the log holds as `seq`.
    pub fn observe(&self, seq: u64, m: &Message) {
        let mut seen = lock(&self.seen);
        if m.role == "assistant" {
            seen.answered = true;
        } else if !seen.answered {
            seen.pinned.push(seq);
        }
        seen.push(m);
    }

    /// The client's opening, by `seq`: its system prompt and its first turn (the task), all it
    /// sent before the model first answered. Compactions never replace them: an agent that
    /// lost its task would go on without it, as `workmem agent` pins its own.
    pub fn pinned(&self) -> Vec<u64> {
        lock(&self.seen).pinned.clone()
    }
}

/// Every session this proxy keeps.
pub(crate) struct Index {
    sessions: Sessions,
    tracked: Mutex<Vec<Arc<Tracked>>>,
}

/// A session found for a request, and what of the request's history is new to it.
pub(crate) struct Found {
    pub tracked: Arc<Tracked>,
    pub new: Vec<Message>,
}

impl Index {
    /// The sessions a proxy kept in `sessions` before, each with the client's view rebuilt
    /// from its log.
    pub fn load(sessions: &Sessions) -> workmem_store::Result<Self> {
        let mut tracked = Vec::new();
        for (session, meta) in sessions.list()? {
            let Some(proxied) = meta.proxied else { continue };
            // A session whose log cannot be read is left alone, not a reason to stay down: its
            // client's next request starts a session of its own.
            let records = match session.records() {
                Ok(records) => records,
                Err(e) => {
                    eprintln!("workmem proxy: session {} left out: {e}", meta.id);
                    continue;
                }
            };
            let t = Tracked::new(session, meta.id, proxied);
            for record in records {
                if let Entry::Message(m) = record.entry {
                    t.observe(record.seq, &m);
                }
            }
            tracked.push(Arc::new(t));
        }
        Ok(Index { sessions: sessions.clone(), tracked: Mutex::new(tracked) })
    }

    /// The session `history` extends, among those of the client's name `client` (or of no
    /// name), of `protocol`. A new session when none is found, made with `template` as its
    /// memory. The caller checks again once it holds the session's exchange: another request
    /// may have extended the session in between.
    pub fn find(&self, protocol: &str, client: Option<&str>, history: &History, template: &str) -> workmem_store::Result<(Found, bool)> {
        let mut all = lock(&self.tracked);
        let (best, last_of_name) = Self::best(&all, protocol, client, history);
        if let Some(found) = best {
            return Ok((found, false));
        }
        let proxied = Proxied { protocol: protocol.to_string(), client: client.map(str::to_string), branch_of: last_of_name.filter(|_| client.is_some()) };
        // The client's name is the session's ID where it makes a valid, unused one.
        let session = match client.map(|c| self.sessions.create(Some(c), template)) {
            Some(Ok(s)) => s,
            _ => self.sessions.create(None, template)?,
        };
        session.update_meta(|m| m.proxied = Some(proxied.clone()))?;
        let id = session.meta()?.id;
        let tracked = Arc::new(Tracked::new(session, id, proxied));
        all.push(tracked.clone());
        Ok((Found { tracked, new: history.messages.to_vec() }, true))
    }

    /// The session `history` extends, as [`Index::find`] finds it, or none: nothing is created.
    pub fn lookup(&self, protocol: &str, client: Option<&str>, history: &History) -> Option<Found> {
        Self::best(&lock(&self.tracked), protocol, client, history).0
    }

    /// The session of `protocol` and `client` whose view `history` holds the most of, and the
    /// last session of that name.
    fn best(all: &[Arc<Tracked>], protocol: &str, client: Option<&str>, history: &History) -> (Option<Found>, Option<String>) {
        let mut best: Option<(usize, Found)> = None;
        let mut last_of_name: Option<String> = None;
        for candidate in all {
            if candidate.proxied.protocol != protocol || candidate.proxied.client.as_deref() != client {
                continue;
            }
            last_of_name = Some(candidate.id.clone());
            if let Some((n, new)) = candidate.new_in(history).filter(|(n, _)| *n > 0)
                && best.as_ref().is_none_or(|(b, _)| n > *b)
            {
                best = Some((n, Found { tracked: candidate.clone(), new }));
            }
        }
        (best.map(|(_, found)| found), last_of_name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use workmem_store::ToolCall;

    fn call(id: &str, name: &str) -> ToolCall {
        ToolCall { id: id.into(), name: name.into(), arguments: "{}".into() }
    }

    fn said(role: &str, text: &str) -> Message {
        Message::new(role, text)
    }

    fn calls(text: &str, ids: &[&str]) -> Message {
        Message { tool_calls: ids.iter().map(|id| call(id, "bash")).collect(), ..Message::new("assistant", text) }
    }

    fn result(id: &str) -> Message {
        Message { tool_call_id: Some(id.into()), ..Message::new("tool", format!("output of {id}")) }
    }

    fn seen(log: &[Message]) -> Seen {
        let mut seen = Seen::default();
        log.iter().for_each(|m| seen.push(m));
        seen
    }

    fn new_in(seen: &Seen, history: &[Message]) -> Option<Vec<Message>> {
        seen.new_in(&History::new(history.to_vec())).map(|(_, new)| new)
    }

    /// A session told to let go while a request holds it is not waited for (the request keeps
    /// what it uses, and the session is counted again when it ends); one that is free lets go
    /// of all it kept but the length of its last body, which says what it would keep again.
    #[test]
    fn letting_go_waits_for_no_request() {
        let dir = std::env::temp_dir().join(format!("workmem-proxy-cool-{}", std::process::id()));
        let sessions = Sessions::new(&dir, &dir);
        let session = sessions.create(None, "# Memory\n").unwrap();
        let proxied = Proxied { protocol: "chat".into(), client: None, branch_of: None };
        let tracked = Arc::new(Tracked::new(session, "s".into(), proxied));
        {
            let mut exchange = lock(&tracked.exchange);
            exchange.sent = 1000;
            crate::written::chat_body(
                &serde_json::json!({"model": "m"}),
                vec![workmem_llm::Message::new("user", "go")],
                &serde_json::json!([]),
                &mut exchange.written,
            );
            let (done, waited) = std::sync::mpsc::channel();
            let other = tracked.clone();
            std::thread::spawn(move || {
                crate::warm::Cools::cool(&*other);
                done.send(()).unwrap();
            });
            waited.recv_timeout(std::time::Duration::from_secs(10)).expect("cool returned while the exchange was held");
            assert!(!exchange.written.bytes().is_empty(), "a busy session keeps its body");
        }
        crate::warm::Cools::cool(&*tracked);
        let exchange = lock(&tracked.exchange);
        assert!(exchange.written.bytes().is_empty());
        assert_eq!(exchange.warm_bytes(), 4000);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Claude Code resends two rounds as one assistant message and one user message, its
    /// reminder after the results: only the new result is new.
    #[test]
    fn a_regrouped_history_continues() {
        let log = [said("user", "go"), calls("", &["a"]), result("a"), calls("next", &["b"])];
        let history = [said("user", "go"), calls("next", &["a", "b"]), result("a"), result("b"), said("user", "<reminder>")];
        assert_eq!(new_in(&seen(&log), &history), Some(vec![result("b"), said("user", "<reminder>")]));
    }

    /// A round that called only workmem's tools is one answer for the client; Codex keeps its
    /// text as a message of its own, before the call it led to.
    #[test]
    fn workmem_rounds_are_not_the_clients() {
        let mut own = calls("Reading back. ", &[]);
        own.tool_calls.push(call("w", "read_history"));
        let log = [said("user", "go"), own, result("w"), calls("Step 2. ", &["b"])];
        let joined = [said("user", "go"), calls("Reading back. Step 2. ", &["b"]), result("b")];
        assert_eq!(new_in(&seen(&log), &joined), Some(vec![result("b")]));
        let split = [said("user", "go"), said("assistant", "Reading back. "), calls("Step 2. ", &["b"]), result("b")];
        assert_eq!(new_in(&seen(&log), &split), Some(vec![result("b")]));
    }

    /// A reworded reminder amid the history is left out; an edited result, or a logged message
    /// missing, is not this session's history.
    #[test]
    fn edits_start_a_branch() {
        let log = [said("user", "go"), said("system", "reminder 1"), calls("", &["a"]), result("a")];
        let reworded = [said("user", "go"), said("system", "reminder 2"), calls("", &["a"]), result("a"), said("user", "more")];
        assert_eq!(new_in(&seen(&log), &reworded), Some(vec![said("user", "more")]));
        let edited = [said("user", "go"), calls("", &["a"]), Message { content: "changed".into(), ..result("a") }, said("user", "more")];
        assert_eq!(new_in(&seen(&log), &edited), None);
        let dropped = [said("user", "go"), said("user", "more")];
        assert_eq!(new_in(&seen(&log), &dropped), None);
    }

    /// The same text twice is two items: a history with it once does not hold a log with it twice.
    #[test]
    fn repeated_messages_count() {
        let log = [said("user", "again"), said("assistant", "ok"), said("user", "again"), said("assistant", "ok")];
        assert_eq!(new_in(&seen(&log), &log[..2]), None);
        assert_eq!(new_in(&seen(&log[..2]), &log), Some(log[2..].to_vec()));
    }
}
