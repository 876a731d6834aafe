//! The client's view of a session's log (see `sessions`): the log less workmem's own tool
//! calls and their answers, which the client never received, as counts of its items.

use crate::history::{History, ItemMap, ItemSet, items};
use crate::own::own_tool;
use std::collections::HashSet;
use workmem_store::Message;

/// The client's view of a session's log, as counts of its items.
#[derive(Default)]
pub(crate) struct Seen {
    pub(crate) items: ItemMap<usize>,
    /// The items that are system messages amid the history: the client's to change (Claude
    /// Code rewrites its reminders from one request to the next), so a request may leave them
    /// out and still continue the session; a changed one is logged where it now appears.
    pub(crate) system: ItemSet,
    pub(crate) len: usize,
    /// The last answer the client saw, while the next one continues it (it called only
    /// workmem's tools): every other message is kept as its items alone, not as a copy (a
    /// session kept its last message, a tool result of megabytes, in memory for good).
    pub(crate) last: Option<Message>,
    /// The IDs of workmem's own calls: their answers are not the client's.
    pub(crate) own_calls: HashSet<String>,
    /// The last assistant message called only workmem's tools, so the next one continues it:
    /// the client got both as one answer.
    pub(crate) continues: bool,
    /// The client's opening, by `seq`: everything before the model's first answer.
    pub(crate) pinned: Vec<u64>,
    /// Whether the model has answered yet.
    pub(crate) answered: bool,
    /// The items of messages other than system ones: those a request must hold.
    pub(crate) client_len: usize,
    /// How many of those there were when the model's last answer began: a request that holds
    /// those and nothing of the answer resends the request that answer was for.
    pub(crate) before_answer: usize,
    /// The last [`FILED_BY`] distinct ones of those, the latest last: what the session is
    /// filed by.
    pub(crate) last_items: Vec<u64>,
    /// The last [`FILED_BY`] distinct system items: what a session of system messages only is
    /// filed by.
    pub(crate) last_system: Vec<u64>,
    /// Where the session is filed ([`Lookup`]): each key and when.
    pub(crate) filed: Vec<(u64, u64)>,
    /// Counts the messages folded in: a view whose count has not moved is the same view.
    pub(crate) generation: u64,
}

/// How many of its last items a session is filed by.
pub(crate) const FILED_BY: usize = 4;

/// Puts `k` last in `last`, which keeps [`FILED_BY`] distinct items.
pub(crate) fn file_last(last: &mut Vec<u64>, k: u64) {
    last.retain(|&l| l != k);
    last.push(k);
    if last.len() > FILED_BY {
        last.remove(0);
    }
}

impl Seen {
    pub(crate) fn add(&mut self, m: &Message) {
        let system = m.role == "system";
        for k in items(m) {
            if system {
                self.system.insert(k);
                file_last(&mut self.last_system, k);
            } else {
                self.client_len += 1;
                file_last(&mut self.last_items, k);
            }
            *self.items.entry(k).or_default() += 1;
            self.len += 1;
        }
    }

    pub(crate) fn remove(&mut self, m: &Message) {
        for k in items(m) {
            if let Some(n) = self.items.get_mut(&k) {
                *n -= 1;
                self.len -= 1;
                self.client_len -= usize::from(m.role != "system");
                if *n == 0 {
                    self.items.remove(&k);
                    self.last_items.retain(|&l| l != k);
                    self.last_system.retain(|&l| l != k);
                }
            }
        }
    }

    /// The keys the session is filed by now: none for an empty view, which no request holds;
    /// its last system items while it has nothing else (a request that continues it holds
    /// them: it may leave out system items only once the session has others).
    pub(crate) fn file_keys(&self) -> Vec<u64> {
        match self.len {
            0 => Vec::new(),
            _ if self.client_len == 0 => self.last_system.clone(),
            _ => self.last_items.clone(),
        }
    }

    /// Folds in one message as it is logged.
    pub fn push(&mut self, m: &Message) {
        self.generation += 1;
        if m.role == "tool" && m.tool_call_id.as_ref().is_some_and(|id| self.own_calls.contains(id)) {
            return;
        }
        if m.role != "assistant" {
            self.continues = false;
            self.add(m);
            self.last = None;
            self.before_answer = self.client_len;
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
            _ => Message { tool_calls: theirs.clone(), ..Message::new("assistant", m.content.clone()) },
        };
        self.add(&visible);
        self.continues = !own.is_empty() && theirs.is_empty();
        self.last = self.continues.then_some(visible);
    }

    /// Whether `history` resends the request the model's last answer was for: it holds every
    /// item the client had sent by then, nothing of the answer (which the client never got: it
    /// timed out, or the connection dropped, after the answer was logged), and nothing new but
    /// system items.
    pub fn retried_by(&self, history: &History) -> bool {
        if self.before_answer == 0 || self.before_answer == self.client_len {
            return false;
        }
        let mut used: ItemMap<usize> = ItemMap::default();
        let mut matched = 0;
        for (m, keys) in history.messages.iter().zip(&history.keys) {
            for &k in keys {
                let logged = self.items.get(&k).copied().unwrap_or(0);
                let n = used.entry(k).or_default();
                match (*n < logged, self.system.contains(&k)) {
                    (true, system) => {
                        *n += 1;
                        matched += usize::from(!system);
                    }
                    (false, _) if m.role == "system" => {}
                    (false, _) => return false,
                }
            }
        }
        matched == self.before_answer
    }

    /// When `history` (its messages' items worked out in [`History`]) holds every item of this
    /// view: how many that is, and what of `history` is new (a message with some new calls
    /// keeps only those). Clients move texts around (Claude Code puts its reminders after the
    /// tool results it adds; Codex keeps the text of a round that called only workmem's tools
    /// as a message of its own) and reword them, so a new text before the last logged call or
    /// result is the client's regrouping and is left out; a new result there is an edit, and
    /// the history does not continue this view.
    ///
    /// Its cost is the request's, whatever the view's size: a view with more items than the
    /// request cannot be held, and the view is read item by item only as the request names them.
    pub fn new_in(&self, history: &History) -> Option<(usize, Vec<Message>)> {
        if self.len == 0 || self.client_len > history.keys.iter().map(Vec::len).sum() {
            return None;
        }
        // How many of each logged item the request has matched so far.
        let mut used: ItemMap<usize> = ItemMap::default();
        let mut matched = 0;
        // Each new item as (message, item), in order: one list, since a request of another
        // session's client has nothing but new items.
        let mut fresh: Vec<(usize, usize)> = Vec::new();
        let mut last_logged_call = None;
        for (at, (m, keys)) in history.messages.iter().zip(&history.keys).enumerate() {
            for (i, &k) in keys.iter().enumerate() {
                let logged = self.items.get(&k).copied().unwrap_or(0);
                let n = if logged == 0 { None } else { Some(used.entry(k).or_default()) };
                match n {
                    Some(n) if *n < logged => {
                        *n += 1;
                        matched += usize::from(!self.system.contains(&k));
                        if m.role == "tool" || !m.tool_calls.is_empty() {
                            last_logged_call = Some(at);
                        }
                    }
                    _ => fresh.push((at, i)),
                }
            }
        }
        // Every item of the client's is held; system ones it may leave out.
        if matched != self.client_len {
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
