//! Finding a client's session without its help. A client resends its whole history with each
//! request; the session a request belongs to is the one whose history, as that client saw it,
//! the request extends (the longest such, among the sessions of the client's own name for its
//! session when it gives one). A request that extends none starts a session, recorded as a
//! branch of the last one of that name: a client that edited or compacted its own history is
//! never merged into a history it did not send.
//!
//! What the client saw differs from the log: the log also holds workmem's own tool calls and
//! their answers, which the client never received. [`Seen`] keeps the client's view of the log.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, MutexGuard};
use workmem_llm::Tokenizer;
use workmem_store::{Entry, Message, Proxied, Session, Sessions};

/// workmem's own tools, offered to the model beside the client's and never shown to it.
pub(crate) const OWN_TOOLS: [&str; 3] = ["read_history", "update_memory", "compact_history"];

pub(crate) fn own_tool(name: &str) -> bool {
    OWN_TOOLS.contains(&name)
}

/// The client's view of a session's log.
#[derive(Default)]
pub(crate) struct Seen {
    messages: Vec<Message>,
    /// The IDs of workmem's own calls: their answers are not the client's.
    own_calls: HashSet<String>,
    /// The last assistant message called only workmem's tools, so the next one continues it:
    /// the client got both as one answer.
    continues: bool,
}

impl Seen {
    /// Folds in one message as it is logged.
    pub fn push(&mut self, m: &Message) {
        if m.role == "tool" && m.tool_call_id.as_ref().is_some_and(|id| self.own_calls.contains(id)) {
            return;
        }
        if m.role != "assistant" {
            self.continues = false;
            self.messages.push(m.clone());
            return;
        }
        let (own, theirs): (Vec<_>, Vec<_>) = m.tool_calls.iter().cloned().partition(|c| own_tool(&c.name));
        self.own_calls.extend(own.iter().map(|c| c.id.clone()));
        match self.messages.last_mut() {
            Some(last) if self.continues => {
                last.content.push_str(&m.content);
                last.tool_calls.extend(theirs.iter().cloned());
            }
            _ => self.messages.push(Message { tool_calls: theirs.clone(), ..m.clone() }),
        }
        self.continues = !own.is_empty() && theirs.is_empty();
    }

    /// How much of `history` this view is, if `history` extends it (or is it).
    pub fn extended_by(&self, history: &[Message]) -> Option<usize> {
        (self.messages.len() <= history.len() && history[..self.messages.len()] == self.messages[..]).then_some(self.messages.len())
    }
}

/// One session the proxy keeps, with what it needs between requests. Locked for a whole
/// exchange: one client request at a time per session.
pub(crate) struct Tracked {
    pub session: Session,
    pub id: String,
    proxied: Proxied,
    pub seen: Seen,
    /// The client's leading system messages, by `seq`: compactions never replace them.
    pub pinned: Vec<u64>,
    /// Counts texts once per session: each request repeats most of the last.
    pub tokenizer: Option<(String, Tokenizer)>,
}

impl Tracked {
    fn new(session: Session, id: String, proxied: Proxied) -> Self {
        Tracked { session, id, proxied, seen: Seen::default(), pinned: Vec::new(), tokenizer: None }
    }

    /// Logs one message and folds it into the client's view.
    pub fn append(&mut self, m: Message) -> workmem_store::Result<()> {
        let record = self.session.append_message(m.clone())?;
        self.observe(record.seq, &m);
        Ok(())
    }

    /// Folds in one message the log holds as `seq`.
    pub fn observe(&mut self, seq: u64, m: &Message) {
        if m.role == "system" && self.seen.messages.iter().all(|s| s.role == "system") {
            self.pinned.push(seq);
        }
        self.seen.push(m);
    }
}

/// Every session this proxy keeps.
pub(crate) struct Index {
    sessions: Sessions,
    tracked: Mutex<Vec<Arc<Mutex<Tracked>>>>,
}

/// A session found for a request, locked, and how much of the request's history it holds.
pub(crate) struct Found {
    pub tracked: Arc<Mutex<Tracked>>,
    pub logged: usize,
}

impl Index {
    /// The sessions a proxy kept in `sessions` before, each with the client's view rebuilt
    /// from its log.
    pub fn load(sessions: &Sessions) -> workmem_store::Result<Self> {
        let mut tracked = Vec::new();
        for (session, meta) in sessions.list()? {
            let Some(proxied) = meta.proxied else { continue };
            let mut t = Tracked::new(session, meta.id, proxied);
            for record in t.session.records()? {
                if let Entry::Message(m) = record.entry {
                    t.observe(record.seq, &m);
                }
            }
            tracked.push(Arc::new(Mutex::new(t)));
        }
        Ok(Index { sessions: sessions.clone(), tracked: Mutex::new(tracked) })
    }

    /// The session `history` extends, among those of the client's name `client` (or of no
    /// name), of `protocol`; sessions busy with another request are not candidates. A new
    /// session when none is found, made with `template` as its memory.
    pub fn find(&self, protocol: &str, client: Option<&str>, history: &[Message], template: &str) -> workmem_store::Result<(Found, bool)> {
        let mut all = lock(&self.tracked);
        let mut best: Option<(usize, &Arc<Mutex<Tracked>>)> = None;
        let mut last_of_name: Option<String> = None;
        for candidate in all.iter() {
            let Ok(t) = candidate.try_lock() else { continue };
            if t.proxied.protocol != protocol || t.proxied.client.as_deref() != client {
                continue;
            }
            last_of_name = Some(t.id.clone());
            if let Some(n) = t.seen.extended_by(history).filter(|&n| n > 0)
                && best.is_none_or(|(b, _)| n > b)
            {
                best = Some((n, candidate));
            }
        }
        if let Some((logged, tracked)) = best {
            return Ok((Found { tracked: tracked.clone(), logged }, false));
        }
        let proxied = Proxied { protocol: protocol.to_string(), client: client.map(str::to_string), branch_of: last_of_name.filter(|_| client.is_some()) };
        // The client's name is the session's ID where it makes a valid, unused one.
        let session = match client.map(|c| self.sessions.create(Some(c), template)) {
            Some(Ok(s)) => s,
            _ => self.sessions.create(None, template)?,
        };
        session.update_meta(|m| m.proxied = Some(proxied.clone()))?;
        let id = session.meta()?.id;
        let tracked = Arc::new(Mutex::new(Tracked::new(session, id, proxied)));
        all.push(tracked.clone());
        Ok((Found { tracked, logged: 0 }, true))
    }
}

/// A lock whose holder panicked still guards consistent data here (every change is a push).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
