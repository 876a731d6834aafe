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
//!
//! A request is not held against every session of its name: anyone who reaches the proxy can
//! start sessions, and a search through all of them made each request cost as much as all of
//! them together (threat model rule 5). A request that holds a view holds its last items, so
//! each session is filed by those ([`Lookup`]), and only sessions filed under the request's own
//! items are tried, at most [`CANDIDATES`], those filed under its rarest items first: many
//! sessions may end alike (an answer of "ok"), but seldom in all of their last few items.

use crate::history::{self, History, ItemMap, ItemSet, items};
use crate::lock;
use std::collections::{BTreeSet, HashSet};
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
    /// The items of messages other than system ones: those a request must hold.
    client_len: usize,
    /// The last [`FILED_BY`] distinct ones of those, the latest last: what the session is
    /// filed by.
    last_items: Vec<u64>,
    /// Where the session is filed ([`Lookup`]): each key and when.
    filed: Vec<(u64, u64)>,
    /// Counts the messages folded in: a view whose count has not moved is the same view.
    generation: u64,
}

/// What a session whose view holds system messages only is filed by: any request may hold it.
const ONLY_SYSTEM: u64 = 0;

/// How many of its last items a session is filed by.
const FILED_BY: usize = 4;

impl Seen {
    fn add(&mut self, m: &Message) {
        let system = m.role == "system";
        for k in items(m) {
            if system {
                self.system.insert(k);
            } else {
                self.client_len += 1;
                self.last_items.retain(|&l| l != k);
                self.last_items.push(k);
                if self.last_items.len() > FILED_BY {
                    self.last_items.remove(0);
                }
            }
            *self.items.entry(k).or_default() += 1;
            self.len += 1;
        }
    }

    fn remove(&mut self, m: &Message) {
        for k in items(m) {
            if let Some(n) = self.items.get_mut(&k) {
                *n -= 1;
                self.len -= 1;
                self.client_len -= usize::from(m.role != "system");
                if *n == 0 {
                    self.items.remove(&k);
                    self.last_items.retain(|&l| l != k);
                }
            }
        }
    }

    /// The keys the session is filed by now: none for an empty view, which no request holds.
    fn file_keys(&self) -> Vec<u64> {
        match self.len {
            0 => Vec::new(),
            _ if self.client_len == 0 => vec![ONLY_SYSTEM],
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

/// The most sessions one request is tried against.
const CANDIDATES: usize = 16;

/// Where the sessions are filed for the search: per scope ([`history::scope`]), each session
/// under the keys its view gives ([`Seen::file_keys`]), the most recently filed last.
#[derive(Default)]
pub(crate) struct Lookup {
    /// Counts filings, so that each has its place in time.
    clock: u64,
    scopes: ItemMap<Scope>,
}

#[derive(Default)]
struct Scope {
    /// The sessions filed under each key: (when filed, the session's place in [`Index`]).
    filed: ItemMap<BTreeSet<(u64, usize)>>,
    /// The session of this scope that was made last, which a new one branches from.
    last_made: Option<String>,
}

impl Lookup {
    /// Files the session at `slot` of `scope` under `keys`, out of where it was (`was`): where
    /// it now is.
    fn file(&mut self, scope: u64, slot: usize, was: &[(u64, u64)], keys: &[u64]) -> Vec<(u64, u64)> {
        let shelf = &mut self.scopes.entry(scope).or_default().filed;
        for (old, when) in was {
            if let Some(set) = shelf.get_mut(old) {
                set.remove(&(*when, slot));
                if set.is_empty() {
                    shelf.remove(old);
                }
            }
        }
        self.clock += 1;
        let when = self.clock;
        for &key in keys {
            shelf.entry(key).or_default().insert((when, slot));
        }
        keys.iter().map(|&key| (key, when)).collect()
    }

    /// The sessions of `scope` a request with `history` might extend: those filed under its
    /// items, at most [`CANDIDATES`], those under its rarest items first (the last of them
    /// first where as rare), each item's most recently filed first; and the session made last
    /// in the scope.
    fn candidates(&self, scope: u64, history: &History) -> (Vec<usize>, Option<String>) {
        let Some(scope) = self.scopes.get(&scope) else { return (Vec::new(), None) };
        let keys = history.keys.iter().rev().flat_map(|k| k.iter().rev()).chain([&ONLY_SYSTEM]);
        let mut shelves: Vec<(usize, usize, u64)> =
            keys.enumerate().filter_map(|(from_end, &k)| scope.filed.get(&k).map(|set| (set.len(), from_end, k))).collect();
        shelves.sort_unstable();
        // An item the request repeats is tried once, where it comes last.
        let mut tried = ItemSet::default();
        let shelves = shelves.into_iter().filter(|&(_, _, k)| tried.insert(k)).filter_map(|(_, _, k)| scope.filed.get(&k));
        let mut slots = Vec::new();
        for set in shelves {
            for &(_, slot) in set.iter().rev() {
                if !slots.contains(&slot) {
                    slots.push(slot);
                }
                if slots.len() == CANDIDATES {
                    return (slots, scope.last_made.clone());
                }
            }
        }
        (slots, scope.last_made.clone())
    }
}

/// One session the proxy keeps.
pub(crate) struct Tracked {
    pub id: String,
    proxied: Proxied,
    /// Its place in the index, and where the index files it.
    slot: usize,
    lookup: Arc<Mutex<Lookup>>,
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
    /// The last request sent upstream, which the next one is built on from (Chat Completions:
    /// its body too, which the next one mostly repeats).
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
    fn new(session: Session, id: String, proxied: Proxied, slot: usize, lookup: Arc<Mutex<Lookup>>) -> Self {
        lock(&lookup).scopes.entry(history::scope(&proxied.protocol, proxied.client.as_deref())).or_default().last_made = Some(id.clone());
        let exchange = Mutex::new(Exchange { session, tokenizer: None, written: Default::default(), sent: 0 });
        Tracked { id, proxied, slot, lookup, seen: Mutex::default(), exchange }
    }

    /// See [`Seen::new_in`].
    pub fn new_in(&self, history: &History) -> Option<(usize, Vec<Message>)> {
        lock(&self.seen).new_in(history)
    }

    /// Whether the view is still the one `found` was found in: then what is new in the request
    /// is still what it found.
    pub fn unchanged_since(&self, found: &Found) -> bool {
        lock(&self.seen).generation == found.generation
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
        let keys = seen.file_keys();
        if !keys.iter().eq(seen.filed.iter().map(|(k, _)| k)) {
            let scope = history::scope(&self.proxied.protocol, self.proxied.client.as_deref());
            seen.filed = lock(&self.lookup).file(scope, self.slot, &seen.filed, &keys);
        }
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
    /// Each by its slot; locked before the lookup, never while a view is.
    tracked: Mutex<Vec<Arc<Tracked>>>,
    lookup: Arc<Mutex<Lookup>>,
}

/// A session found for a request, and what of the request's history is new to it.
pub(crate) struct Found {
    pub tracked: Arc<Tracked>,
    pub new: Vec<Message>,
    /// The view's generation it was found in.
    generation: u64,
}

impl Index {
    /// The sessions a proxy kept in `sessions` before, each with the client's view rebuilt
    /// from its log.
    pub fn load(sessions: &Sessions) -> workmem_store::Result<Self> {
        let mut tracked = Vec::new();
        let lookup = Arc::default();
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
            let t = Tracked::new(session, meta.id, proxied, tracked.len(), Arc::clone(&lookup));
            for record in records {
                if let Entry::Message(m) = record.entry {
                    t.observe(record.seq, &m);
                }
            }
            tracked.push(Arc::new(t));
        }
        Ok(Index { sessions: sessions.clone(), tracked: Mutex::new(tracked), lookup })
    }

    /// The session `history` extends, among those of the client's name `client` (or of no
    /// name), of `protocol`. A new session when none is found, made with `template` as its
    /// memory. The caller checks again once it holds the session's exchange: another request
    /// may have extended the session in between.
    pub fn find(&self, protocol: &str, client: Option<&str>, history: &History, template: &str) -> workmem_store::Result<(Found, bool)> {
        let mut all = lock(&self.tracked);
        let (best, last_of_name) = self.best(&all, protocol, client, history);
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
        let tracked = Arc::new(Tracked::new(session, id, proxied, all.len(), Arc::clone(&self.lookup)));
        all.push(tracked.clone());
        Ok((Found { tracked, new: history.messages.to_vec(), generation: 0 }, true))
    }

    /// The session `history` extends, as [`Index::find`] finds it, or none: nothing is created.
    pub fn lookup(&self, protocol: &str, client: Option<&str>, history: &History) -> Option<Found> {
        self.best(&lock(&self.tracked), protocol, client, history).0
    }

    /// The session of `protocol` and `client` whose view `history` holds the most of, among the
    /// candidates ([`Lookup::candidates`]), and the last session of that name.
    fn best(&self, all: &[Arc<Tracked>], protocol: &str, client: Option<&str>, history: &History) -> (Option<Found>, Option<String>) {
        let (slots, last_of_name) = lock(&self.lookup).candidates(history::scope(protocol, client), history);
        let mut best: Option<(usize, Found)> = None;
        for candidate in slots.into_iter().filter_map(|slot| all.get(slot)) {
            // Scopes are told apart by a hash: the names are compared too.
            if candidate.proxied.protocol != protocol || candidate.proxied.client.as_deref() != client {
                continue;
            }
            let seen = lock(&candidate.seen);
            if let Some((n, new)) = seen.new_in(history)
                && best.as_ref().is_none_or(|(b, _)| n > *b)
            {
                best = Some((n, Found { tracked: candidate.clone(), new, generation: seen.generation }));
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
        let tracked = Arc::new(Tracked::new(session, "s".into(), proxied, 0, Arc::default()));
        {
            let mut exchange = lock(&tracked.exchange);
            exchange.sent = 1000;
            crate::written::chat_body(
                &serde_json::json!({"model": "m"}),
                vec![workmem_llm::Message::new("user", "go")].into(),
                0,
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

    /// A scratch index, and the sessions made in it for each history in turn.
    fn index_of(name: &str, histories: &[Vec<Message>]) -> (Index, std::path::PathBuf, Vec<String>) {
        let dir = std::env::temp_dir().join(format!("workmem-proxy-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let index = Index::load(&Sessions::new(&dir, &dir)).unwrap();
        let mut made = Vec::new();
        for h in histories {
            let (found, created) = index.find("chat", None, &History::new(h.clone()), "# Memory\n").unwrap();
            assert!(created, "{h:?} extends none of the sessions before it");
            found.tracked.append(&lock(&found.tracked.exchange), found.new).unwrap();
            made.push(found.tracked.id.clone());
        }
        (index, dir, made)
    }

    /// However many sessions a client's scope holds, a request is tried against at most
    /// [`CANDIDATES`] of them (threat model rule 5), n sessions or 4n: whether they all end as
    /// the request does, or each ends with one of its messages. The oldest of the sessions that
    /// end alike is found still (one of its last items is its own), and of those the request
    /// holds alike, the most recent.
    #[test]
    fn a_request_is_tried_against_a_bounded_number_of_sessions() {
        let tried = |n: usize, same_end: bool| {
            let opening = |i: usize| match same_end {
                true => vec![said("user", "go"), said("assistant", &format!("try {i}")), said("user", "same")],
                false => vec![said("user", &format!("go {i}"))],
            };
            let (index, dir, made) = index_of(&format!("tried-{n}-{same_end}"), &(0..n).map(opening).collect::<Vec<_>>());
            let (mut next, extended) = match same_end {
                true => (opening(0), &made[0]),
                false => ((0..n).flat_map(opening).collect(), &made[n - 1]),
            };
            next.push(said("assistant", "more"));
            let history = History::new(next);
            let tried = lock(&index.lookup).candidates(history::scope("chat", None), &history).0.len();
            let found = index.lookup("chat", None, &history).expect("a session is found");
            assert_eq!((&found.tracked.id, found.new.last()), (extended, Some(&said("assistant", "more"))));
            let _ = std::fs::remove_dir_all(&dir);
            tried
        };
        for same_end in [true, false] {
            assert_eq!((tried(CANDIDATES, same_end), tried(4 * CANDIDATES, same_end)), (CANDIDATES, CANDIDATES));
        }
    }

    /// A session that holds system messages only is held by any request of its scope, which
    /// continues it, as it did before sessions were filed by their last item.
    #[test]
    fn a_session_of_system_messages_only_is_found() {
        let (index, dir, made) = index_of("system-only", &[vec![said("system", "rules")]]);
        let found = index.lookup("chat", None, &History::new(vec![said("system", "rules"), said("user", "hi")])).expect("found");
        assert_eq!((found.tracked.id.as_str(), found.new), (made[0].as_str(), vec![said("user", "hi")]));
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
